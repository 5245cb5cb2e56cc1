"""A linear softmax policy over the lab's vector (docs/lab.md): numpy only, so
the trained bot carries this file and needs nothing of the arena.

An action's score is ``slot . (W @ [state, 1])``: the action's features (its
type and cards) against a linear map of the state's features.  The
probabilities are the softmax of the scores of the legal actions.
"""

from __future__ import annotations

import numpy as np


def split(vector: np.ndarray, state_size: int, slot_size: int,
          legal: int) -> tuple[np.ndarray, np.ndarray]:
    """The state's features (with a constant 1 for the bias) and the legal
    actions' slots, one row each."""
    state = np.append(vector[:state_size], 1.0)
    slots = vector[state_size:state_size + legal * slot_size].reshape(legal, slot_size)
    return state, slots


def probabilities(weights: np.ndarray, state: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """The softmax over the legal actions' scores."""
    scores = slots @ (weights @ state)
    scores -= scores.max()
    exp = np.exp(scores)
    return exp / exp.sum()
