"""The greedy Furious Five bot: its policy, and that it beats random play."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from arena.games.furious_five import FuriousFive
from sample_bots.greedy_furious_five import TAKE_AT_MOST, choose

Chooser = Callable[[dict[str, Any], list[str]], int]


@pytest.mark.parametrize(
    ("legal", "expected"),
    [
        (["drop Ac As", "call"], "call"),
        (["drop 2c 2d", "drop 3c 4d 5h", "drop 5h 5s"], "drop 3c 4d 5h"),
        (["drop 5h 5s", "drop Qc Kd Ah"], "drop Qc Kd Ah"),
        (["drop 2c", "drop 9d", "drop 4h"], "drop 9d"),
        # equal totals: the first listed
        (["drop 3c 4d 5h", "drop 3c 4d 5s"], "drop 3c 4d 5h"),
        (["draw deck", "draw 3c", "draw 5h"], "draw 3c"),
        (["draw deck", "draw 7c", "draw 9h"], "draw deck"),
        (["draw deck", f"draw {TAKE_AT_MOST}d", "draw Kh"], f"draw {TAKE_AT_MOST}d"),
        (["draw deck"], "draw deck"),
        # multi_drop: a further drop beats drawing
        (["draw deck", "draw Ac", "drop 9c 9s"], "drop 9c 9s"),
    ],
)
def test_greedy_policy(legal: list[str], expected: str) -> None:
    assert legal[choose({}, legal)] == expected


def play_game(seed: int, players: int, choosers: list[Chooser], **options: Any) -> list[int]:
    state = FuriousFive(players, options).new_state(seed)
    while not state.is_terminal():
        seat = state.turn
        legal = state.legal_actions(seat)
        state.apply_action(legal[choosers[seat](state.observation(seat), legal)])
    return state.places()


def random_chooser(seed: int) -> Chooser:
    rng = random.Random(seed)
    return lambda _observation, legal: rng.randrange(len(legal))


@pytest.mark.parametrize(
    "options", [{}, {"multi_drop": True, "ace_high": True, "call_at_five": True}]
)
def test_greedy_beats_random_heads_up(options: dict[str, Any]) -> None:
    wins = 0.0
    games = 0
    for seed in range(20):
        for greedy_seat in (0, 1):  # duplicate deals: same seed, seats swapped
            choosers = [random_chooser(seed * 2 + greedy_seat)] * 2
            choosers[greedy_seat] = choose
            places = play_game(seed, 2, choosers, rounds=5, **options)
            other = 1 - greedy_seat
            wins += 1.0 if places[greedy_seat] < places[other] else (
                0.5 if places[greedy_seat] == places[other] else 0.0)
            games += 1
    assert wins / games >= 0.85, wins / games


def test_greedy_beats_random_at_a_full_table() -> None:
    places = []
    for seed in range(6):
        for greedy_seat in range(4):
            choosers = [random_chooser(seed * 4 + k) for k in range(4)]
            choosers[greedy_seat] = choose
            places.append(play_game(seed, 4, choosers, rounds=5)[greedy_seat])
    assert sum(places) / len(places) <= 1.5, places
