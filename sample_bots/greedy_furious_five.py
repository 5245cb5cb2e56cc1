"""The greedy Furious Five bot (uses only the SDK).

Policy, in order:

1. ``call`` whenever it is legal.
2. Otherwise drop the legal combination with the highest point total (the
   first one listed among equals); with ``multi_drop`` it keeps dropping while
   further drops are offered.
3. Then draw: take the lowest-valued card offered from the live drop if it is
   worth at most :data:`TAKE_AT_MOST` points (a deck card is worth 7 on
   average), else draw from the deck.
"""

from __future__ import annotations

from typing import Any

from sample_bots.strength import run_weakened

#: Take a table card worth at most this many points, else draw from the deck.
TAKE_AT_MOST = 6
_POINTS = {rank: value for value, rank in enumerate("A23456789TJQK", start=1)}


def card_points(card: str) -> int:
    """Points of a card name such as ``"Th"``: A=1 .. 10, J=11, Q=12, K=13."""
    return _POINTS[card[0]]


def _best_drop(legal: list[str]) -> int | None:
    best: int | None = None
    best_points = -1
    for index, action in enumerate(legal):
        if action.startswith("drop "):
            points = sum(card_points(card) for card in action.split()[1:])
            if points > best_points:
                best, best_points = index, points
    return best


def _best_take(legal: list[str]) -> int | None:
    best: int | None = None
    best_points = TAKE_AT_MOST + 1
    for index, action in enumerate(legal):
        if action.startswith("draw ") and action != "draw deck":
            points = card_points(action[5:])
            if points < best_points:
                best, best_points = index, points
    return best


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    """Index of the greedy action in ``legal``."""
    if "call" in legal:
        return legal.index("call")
    for pick in (_best_drop(legal), _best_take(legal)):
        if pick is not None:
            return pick
    return legal.index("draw deck") if "draw deck" in legal else 0


if __name__ == "__main__":
    run_weakened(choose, name="greedy-furious-five", version="1", author="Five Arena")
