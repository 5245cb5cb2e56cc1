"""@NAME@: a Five Arena bot.  It plays a random legal move; your strategy goes in
:meth:`MyBot.choose`.  The SDK is the ``protocol`` folder beside this file (a copy
of Five Arena's), so the bot needs only Python 3.11 and ``msgpack``."""

from __future__ import annotations

import random
from typing import Any

from protocol import Bot, Request, run


class MyBot(Bot):
    name = "@NAME@"
    version = "1"
    author = ""

    def __init__(self) -> None:
        self.rng = random.Random()

    def choose(self, request: Request) -> int:
        """The index into ``request.legal`` of the action to play."""
        return self.strategy(
            # What your seat may see now: the envelope (game, seat, players, to_move,
            # phase, hand, hand_sizes) and the game's fields (docs/rules/<game>.md).
            request.observation,
            # The legal actions: strings in the game's action grammar, never empty.
            request.legal,
            # The time: move_ms is free for this move; bank_ms more (for the rest of
            # this game) may be borrowed before the move is a timeout.
            request.time.get("move_ms", 1000),
            request.time.get("bank_ms", 0),
        )

    def strategy(self, observation: dict[str, Any], legal: list[str], move_ms: int,
                 bank_ms: int) -> int:
        # Your strategy goes here.  Logs go to stderr: print() does (the SDK points
        # stdout at stderr), and the arena keeps the last 4 KiB of each game.
        return self.rng.randrange(len(legal))

    def on_game_end(self, message: dict[str, Any]) -> None:
        """Scores, places and the reveal of a finished game (request.events holds
        what happened since your previous move)."""


if __name__ == "__main__":
    run(MyBot())
