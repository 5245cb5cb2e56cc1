"""An SDK bot that logs every hook and request to stderr (tests/test_protocol.py)."""

import sys
from typing import Any

from protocol import Bot, Request, run


class Hooks(Bot):
    name = "hooks"
    version = "3"
    author = "tests"

    def choose(self, request: Request) -> int:
        print("request", request.id, request.observation, request.legal, request.events,
              request.time, file=sys.stderr)
        return len(request.legal) - 1

    def on_match_start(self, message: dict[str, Any]) -> None:
        print("match_start", message["game"], file=sys.stderr)

    def on_game_start(self, message: dict[str, Any]) -> None:
        print("game_start", message["seat"], file=sys.stderr)

    def on_game_end(self, message: dict[str, Any]) -> None:
        print("game_end", message["scores"], file=sys.stderr)


if __name__ == "__main__":
    run(Hooks())
