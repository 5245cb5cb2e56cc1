"""The heuristic Five Card Rummy bot against a uniformly random chooser, in process."""

from __future__ import annotations

import random

from arena.games import make_game
from sample_bots.five_card_rummy_heuristic import choose


def play(seed: int, players: int, bot_seat: int) -> int:
    """Play one game on the engine; return the heuristic's place."""
    state = make_game("five-card-rummy", players).new_state(seed)
    rng = random.Random(seed * 10 + bot_seat)
    while not state.is_terminal():
        (seat,) = state.deciding_seats()
        legal = state.legal_actions(seat)
        if seat == bot_seat:
            index = choose(state.observation(seat), list(legal))
            assert 0 <= index < len(legal)
        else:
            index = rng.randrange(len(legal))
        state.apply_action(legal[index])
    return state.places()[bot_seat]


def test_heuristic_beats_random_heads_up_on_duplicate_deals() -> None:
    # Each seed is played twice, the heuristic in either seat.
    places = [play(seed, 2, seat) for seed in range(20) for seat in (0, 1)]
    wins = sum(1 for p in places if p == 1)
    assert wins / len(places) >= 0.8  # measured about 0.97 over 400 games


def test_heuristic_places_well_at_a_table_of_random_players() -> None:
    places = [play(seed, 4, seed % 4) for seed in range(24)]
    assert sum(places) / len(places) <= 2.0  # random averages 2.5; measured about 1.55
