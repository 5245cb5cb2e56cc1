"""The five-or-less heuristic bot beats a uniformly random player by a wide margin."""

from __future__ import annotations

import random

from arena.games.five_or_less import FiveOrLess
from arena.games.loop import as_sent
from sample_bots.five_or_less_heuristic import choose
from tests.playout import average_place, duplicate_results, win_share


def test_heuristic_beats_random_heads_up() -> None:
    results = duplicate_results("five-or-less", 2, range(40), choose)
    assert win_share(results) >= 0.9  # measured 1.00
    assert average_place(results) <= 1.1


def test_heuristic_beats_three_random_players() -> None:
    results = duplicate_results("five-or-less", 4, range(10), choose, {"limit": 100})
    assert win_share(results) >= 0.75  # random would win 0.25
    assert average_place(results) <= 1.5


def test_heuristic_answers_every_decision_kind() -> None:
    state = FiveOrLess(3, {"call_below_five": True}).new_state(5)
    phases = set()
    rng = random.Random(5)
    while not state.is_terminal():
        (seat,) = state.deciding_seats()
        legal = state.legal_actions(seat)
        phases.add(state.phase)
        seen = as_sent(state.observation(seat))
        index = choose(seen, list(legal)) if seat == 0 else rng.randrange(len(legal))
        assert 0 <= index < len(legal)
        assert choose(seen, list(legal)) == index or seat != 0  # deterministic
        state.apply_action(legal[index])
    assert {"turn", "draw"} <= phases
