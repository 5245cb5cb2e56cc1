"""The five heuristic bot against a uniformly random chooser, in process."""

from __future__ import annotations

from typing import Any

import pytest

from arena.games import make_game
from sample_bots.five_heuristic import choose as heuristic
from sample_bots.five_heuristic import should_end
from tests.playout import average_place, duplicate_results, play_choosers, win_share


def test_heuristic_beats_random_heads_up() -> None:
    results = duplicate_results("five", 2, range(40), heuristic)
    assert win_share(results) >= 0.9  # measured 1.00; >= 0.76 is +200 Elo


@pytest.mark.parametrize(("players", "options"), [(4, {}), (6, {"jokers": True})])
def test_heuristic_beats_random_at_a_full_table(players: int, options: dict[str, Any]) -> None:
    results = duplicate_results("five", players, range(8), heuristic, options)
    assert win_share(results) >= 0.75
    assert average_place(results) <= 1.6  # random's average place would be (n + 1) / 2


def test_heuristic_is_deterministic_and_always_legal() -> None:
    for players in range(2, 7):
        options = {"jokers": players % 2 == 0, "max_turns": 60, "max_hands": 20}
        first, again = (play_choosers(make_game("five", players, options).new_state(players),
                                      [heuristic] * players) for _ in range(2))
        assert first == again


def test_heuristic_survives_unseen_cards_all_worth_ten() -> None:
    """Regression: with only tens and faces unseen the spread of their points is
    0, which divided by zero (``arena play -g five --seed 3208962713313740198``
    against a bot that always answers index 0)."""
    state = make_game("five", 2).new_state(3208962713313740198)
    places = play_choosers(state, [heuristic, lambda _observation, _legal: 0])
    assert sorted(places) in ([1, 2], [1, 1])


def test_should_end_with_no_spread_compares_the_certain_totals() -> None:
    observation = {"hand_points": 9, "seat": 0, "in_hand": [0, 1], "turn_number": 0,
                   "known_cards": [[], []], "hand_sizes": [2, 1]}
    assert should_end(observation, 10.0, 0.0)
    assert not should_end({**observation, "hand_points": 10}, 10.0, 0.0)
