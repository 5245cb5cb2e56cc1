"""The heuristic octablitz bot against uniformly random play, in process."""

from __future__ import annotations

import random

import pytest

from arena.games import make_game
from arena.games.loop import as_sent
from sample_bots.octablitz_heuristic import choose
from tests.playout import average_place, duplicate_results, pair_share, win_share


@pytest.mark.parametrize("players", [3, 4])
def test_heuristic_beats_random_play(players: int) -> None:
    results = duplicate_results("octablitz", players, range(12), choose)
    # Random play would win 1/n of the games, place (n+1)/2 on average and
    # beat each opponent half of the time; 76% per pair is about +200 Elo.
    assert win_share(results) >= 0.8
    assert average_place(results) <= 1.3
    assert pair_share(results) >= 0.85


def test_heuristic_always_answers_a_legal_index() -> None:
    rng = random.Random(5)
    for num_players in (3, 4):
        state = make_game("octablitz", num_players, {"deals": 3}).new_state(11)
        while not state.is_terminal():
            (seat,) = state.deciding_seats()
            legal = state.legal_actions(seat)
            index = choose(as_sent(state.observation(seat)), list(legal))
            assert 0 <= index < len(legal)
            state.apply_action(legal[index] if seat % 2 else rng.choice(legal))
