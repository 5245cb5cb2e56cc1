"""The heuristic rummy-five bot against a uniformly random chooser, in process."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from arena.games import make_game
from sample_bots.rummy_five_heuristic import choose

Chooser = Callable[[dict[str, Any], list[str]], int]


def _random_chooser(seed: int) -> Chooser:
    rng = random.Random(seed)
    return lambda observation, legal: rng.randrange(len(legal))


def _play(players: int, seed: int, choosers: list[Chooser]) -> list[int]:
    state = make_game("rummy-five", players).new_state(seed)
    while not state.is_terminal():
        actions = {}
        for seat in state.deciding_seats():
            legal = state.legal_actions(seat)
            index = choosers[seat](state.observation(seat), legal)
            assert 0 <= index < len(legal)
            actions[seat] = legal[index]
        state.apply_actions(actions)
    return state.places()


def _duplicate_match(players: int, seeds: range) -> tuple[float, float]:
    """Every seed played once with the heuristic in each seat: (win share, mean place)."""
    wins = places = 0.0
    games = 0
    for seed in seeds:
        for seat in range(players):
            choosers = [_random_chooser(seed * 10 + s) for s in range(players)]
            choosers[seat] = choose
            result = _play(players, seed, choosers)
            games += 1
            places += result[seat]
            if result[seat] == 1:
                wins += 1 / result.count(1)
    return wins / games, places / games


def test_heuristic_beats_random_two_players() -> None:
    share, place = _duplicate_match(2, range(30))
    # Measured about 0.95; 0.76 is the 200-Elo mark.
    assert share >= 0.8, share
    assert place <= 1.2, place


def test_heuristic_beats_random_three_players() -> None:
    share, place = _duplicate_match(3, range(10))
    assert share >= 0.6, share  # a random seat would win 1/3
    assert place <= 1.5, place


def test_heuristic_is_deterministic() -> None:
    state = make_game("rummy-five", 2).new_state(4)
    seat = state.deciding_seats()[0]
    observation, legal = state.observation(seat), state.legal_actions(seat)
    assert choose(observation, legal) == choose(observation, list(legal))
