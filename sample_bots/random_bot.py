"""Plays a uniformly random legal action in any game (uses only the SDK)."""

from __future__ import annotations

import os
import random

from protocol import run

TYPE_CHECKING = False  # not typing's: a bot need not import typing to start
if TYPE_CHECKING:
    from typing import Any

_rng = random.Random(int(os.environ.get("RANDOM_BOT_SEED", "0")) or None)


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    return _rng.randrange(len(legal))


if __name__ == "__main__":
    run(choose, name="random", version="1", author="Five Arena")
