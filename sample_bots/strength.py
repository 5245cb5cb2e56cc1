"""The strength knob of the heuristic sample bots: ``--strength P --seed S``.

At strength ``P`` (0 to 1) a bot plays its heuristic's choice with probability
``P`` and a uniformly random legal action otherwise, so ``1`` is the heuristic
itself and ``0`` the random bot.  The coin and the random action come from one
``random.Random(S)`` per process (``--seed``, default 0), so a match replays
exactly.  Mixing a policy with random play weakens it step by step, so bots of
strengths 0, 0.25, ..., 1 of one game finish in that order in expectation: the
ladder simulation's "bots of known strength".

Plain ``sys.argv`` parsing, not argparse: a bot's start-up is part of its time.
"""

from __future__ import annotations

import random
import sys

from protocol import run

TYPE_CHECKING = False  # not typing's: a bot need not import typing to start
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    Choose = Callable[[dict[str, Any], list[str]], int]

USAGE = "usage: [--strength P (0..1, default 1)] [--seed S (integer, default 0)]"


def weaken(choose: Choose, strength: float, seed: int = 0) -> Choose:
    """``choose`` played with probability ``strength``, a uniformly random
    legal action otherwise; reproducible from ``seed``.  At strength 1 it is
    ``choose`` itself (no coin is drawn)."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength {strength} is not between 0 and 1")
    if strength == 1.0:
        return choose
    rng = random.Random(seed)

    def weakened(observation: dict[str, Any], legal: list[str]) -> int:
        # The coin is drawn every move, whatever the legal list, so the
        # random stream does not depend on the heuristic's answers.
        if rng.random() < strength:
            return choose(observation, legal)
        return rng.randrange(len(legal))

    return weakened


def parse(argv: Sequence[str]) -> tuple[float, int]:
    """``(strength, seed)`` from ``--strength P`` / ``--seed S`` (also ``=``
    forms); SystemExit with the usage on anything else."""
    values = {"--strength": "1", "--seed": "0"}
    args = list(argv)
    while args:
        flag, _, value = args.pop(0).partition("=")
        if flag not in values or (not value and not args):
            sys.exit(f"{USAGE}\nunexpected argument {flag!r}")
        values[flag] = value or args.pop(0)
    try:
        strength, seed = float(values["--strength"]), int(values["--seed"])
    except ValueError as error:
        sys.exit(f"{USAGE}\n{error}")
    if not 0.0 <= strength <= 1.0:
        sys.exit(f"{USAGE}\nstrength {strength} is not between 0 and 1")
    return strength, seed


def run_weakened(choose: Choose, *, name: str, version: str, author: str) -> None:
    """Run a heuristic bot with the strength knob read from the command line."""
    strength, seed = parse(sys.argv[1:])
    if strength < 1.0:
        name = f"{name}@{strength:g}"
    run(weaken(choose, strength, seed), name=name, version=version, author=author)
