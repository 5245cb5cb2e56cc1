"""Plays a uniformly random legal action in any game (uses only the SDK)."""

from __future__ import annotations

import os
import random
from typing import Any

from protocol import run

_rng = random.Random(int(os.environ.get("RANDOM_BOT_SEED", "0")) or None)


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    return _rng.randrange(len(legal))


if __name__ == "__main__":
    run(choose, name="random", version="1", author="Five Arena")
