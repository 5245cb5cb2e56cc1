"""The lab's policy for five-or-less (docs/lab.md): a linear softmax over
per-action features.

An action's score is ``weights . phi(s, a)``, its probability the softmax of
the legal actions' scores.  ``phi`` is computed from what a bot is sent (the
protocol's observation dict and the legal action strings), so the trainer and
the bot compute the very same numbers.  Standard library and numpy only: the
trained bot carries this file.  No feature depends on the table size, so
weights learned at one size play at any.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: A card's points by its rank character (A = 1, ..., T = 10, J = 11, Q = 12, K = 13).
POINTS = {rank: value for value, rank in enumerate("A23456789TJQK", start=1)}

#: The features' names, in column order (docs/lab.md explains each).  ``pass``
#: is the all-zero row: the other actions' scores are relative to it.
NAMES = (
    "call",                # ends the hand
    "call x hand points",  # ... holding this many points (/15)
    "call x precall",      # ... in the pre-call window (before the first turn)
    "call x fewest cards", # ... when the opponent holding fewest cards has that many (/5)
    "drop points",         # points disposed of (/13)
    "drop cards",          # cards disposed of (/5)
    "drop kept points",    # points left in the hand after the drop (/25)
    "draw stack",          # the stack's unknown top card
    "draw points",         # points of the disposal's card taken (/13)
    "draw pairs",          # cards of the hand of that card's rank (/3)
    "draw callable",       # the hand after the draw could call next turn
)
SIZE = len(NAMES)


def points(cards: Sequence[str]) -> int:
    """The points of a list of card names (``"Th"`` is worth 10)."""
    return sum(POINTS[card[0]] for card in cards)


def features(observation: Mapping[str, Any], legal: Sequence[str]) -> np.ndarray:
    """One row of :data:`SIZE` features per legal action, in ``legal``'s order."""
    hand: Sequence[str] = observation.get("hand") or ()
    held = points(hand)
    precall = observation.get("phase") == "precall"
    seat = observation.get("seat")
    others = [size for s, (size, active) in enumerate(
        zip(observation["hand_sizes"], observation["active"], strict=True))
        if active and s != seat]
    fewest = min(others, default=5)
    call_max = int(observation.get("call_max", 5))
    ranks = [card[0] for card in hand]
    rows = np.zeros((len(legal), SIZE))
    for i, action in enumerate(legal):
        words = action.split()
        row = rows[i]
        if words[0] == "call":
            row[0:4] = 1.0, held / 15, float(precall), fewest / 5
        elif words[0] == "drop":
            dropped = points(words[1:])
            row[4:7] = dropped / 13, (len(words) - 1) / 5, (held - dropped) / 25
        elif words == ["draw", "stack"]:
            row[7] = 1.0
        elif words[0] == "draw":
            card = words[1]
            value = POINTS[card[0]]
            row[8:11] = value / 13, ranks.count(card[0]) / 3, float(held + value <= call_max)
    return rows


def scores(weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The actions' scores (logits), ``weights . phi(s, a)``."""
    logits: np.ndarray = rows @ weights
    return logits


def probabilities(weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The softmax over the legal actions' scores."""
    logits = scores(weights, rows)
    logits -= logits.max()
    exp = np.exp(logits)
    p: np.ndarray = exp / exp.sum()
    return p
