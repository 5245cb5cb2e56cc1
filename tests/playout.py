"""Random legal playouts used by every game's property tests."""

from __future__ import annotations

import random
from collections.abc import Callable

from arena.games.base import State


def random_playout(
    state: State,
    rng: random.Random,
    check: Callable[[State], None] | None = None,
    max_decisions: int = 200_000,
) -> int:
    """Play random legal actions until the game ends, building every deciding
    seat's observation each step (as the arena does) and calling ``check``
    after every step.  Returns the number of decisions made."""
    decisions = 0
    while not state.is_terminal():
        seats = state.deciding_seats()
        assert seats, "a live state must have a deciding seat"
        actions = {}
        for seat in seats:
            state.observation(seat)
            legal = state.legal_actions(seat)
            assert legal, f"seat {seat} decides but has no legal action"
            assert len(set(legal)) == len(legal), f"duplicate legal actions {legal}"
            actions[seat] = rng.choice(legal)
        state.apply_actions(actions)
        decisions += len(seats)
        assert decisions <= max_decisions, "game did not end"
        if check is not None:
            check(state)
    return decisions


def visible_strings(value: object) -> list[str]:
    """Every string anywhere inside a msgpack-like value (for leak checks)."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return out
