"""The heuristic rummy-five bot against a uniformly random chooser, in process."""

from __future__ import annotations

from arena.games import make_game
from arena.games.loop import as_sent
from sample_bots.rummy_five_heuristic import choose
from tests.playout import average_place, duplicate_results, win_share


def test_heuristic_beats_random_two_players() -> None:
    results = duplicate_results("rummy-five", 2, range(30), choose)
    # Measured about 0.95; 0.76 is the 200-Elo mark.
    assert win_share(results) >= 0.8
    assert average_place(results) <= 1.2


def test_heuristic_beats_random_three_players() -> None:
    results = duplicate_results("rummy-five", 3, range(10), choose)
    assert win_share(results) >= 0.6  # a random seat would win 1/3
    assert average_place(results) <= 1.5


def test_heuristic_is_deterministic() -> None:
    state = make_game("rummy-five", 2).new_state(4)
    seat = state.deciding_seats()[0]
    observation, legal = as_sent(state.observation(seat)), list(state.legal_actions(seat))
    assert choose(observation, legal) == choose(as_sent(state.observation(seat)), legal)
