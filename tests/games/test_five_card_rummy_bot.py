"""The heuristic Five Card Rummy bot against a uniformly random chooser, in process."""

from __future__ import annotations

from sample_bots.five_card_rummy_heuristic import choose
from tests.playout import average_place, duplicate_results, win_share


def test_heuristic_beats_random_heads_up_on_duplicate_deals() -> None:
    results = duplicate_results("five-card-rummy", 2, range(20), choose)
    assert win_share(results) >= 0.8  # measured about 0.97 over 400 games


def test_heuristic_places_well_at_a_table_of_random_players() -> None:
    results = duplicate_results("five-card-rummy", 4, range(6), choose)
    assert average_place(results) <= 2.0  # random averages 2.5; measured about 1.6
