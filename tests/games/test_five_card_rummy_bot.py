"""The heuristic Five Card Rummy bot against a uniformly random chooser, in process."""

from __future__ import annotations

from arena.games.loop import as_sent
from sample_bots.five_card_rummy_heuristic import choose
from tests.playout import average_place, duplicate_results, win_share


def test_heuristic_beats_random_heads_up_on_duplicate_deals() -> None:
    results = duplicate_results("five-card-rummy", 2, range(20), choose)
    assert win_share(results) >= 0.8  # measured about 0.97 over 400 games


def test_heuristic_places_well_at_a_table_of_random_players() -> None:
    results = duplicate_results("five-card-rummy", 4, range(6), choose)
    assert average_place(results) <= 2.0  # random averages 2.5; measured about 1.6


def test_the_rules_page_example_is_the_bot_playing() -> None:
    """Seed 13, every seat the bot: its decisions are the ones the rules page
    lists, and at seat 2's turn 5 it takes the discard rather than declare."""
    from arena.games import make_game

    state = make_game("five-card-rummy", 3).new_state(13)
    played = []
    for _ in range(9):
        (seat,) = state.deciding_seats()
        legal = list(state.legal_actions(seat))
        played.append(legal[choose(as_sent(state.observation(seat)), legal)])
        state.apply_action(played[-1])
    assert played == ["draw stock", "discard Ks", "take discard", "discard 3d", "take discard",
                      "discard 6s", "draw stock", "discard 2c", "take discard"]
