"""The heuristic octablitz bot against uniformly random play, in process."""

from __future__ import annotations

import random

from arena.games import make_game
from sample_bots.octablitz_heuristic import choose


def play_game(num_players: int, seed: int, heuristic_seat: int) -> list[int]:
    """Places of one game: the heuristic at ``heuristic_seat``, random elsewhere."""
    state = make_game("octablitz", num_players).new_state(seed)
    rng = random.Random(seed * 7919 + heuristic_seat)
    while not state.is_terminal():
        (seat,) = state.deciding_seats()
        legal = state.legal_actions(seat)
        if seat == heuristic_seat:
            index = choose(state.observation(seat), list(legal))
            assert 0 <= index < len(legal)
        else:
            index = rng.randrange(len(legal))
        state.apply_action(legal[index])
    return state.places()


def test_heuristic_beats_random_play() -> None:
    """Duplicate deals: every seed is played with the heuristic in every seat."""
    for num_players in (3, 4):
        games = wins = pair_wins = pairs = 0
        place_sum = 0
        for seed in range(12):
            for seat in range(num_players):
                places = play_game(num_players, seed, seat)
                games += 1
                place_sum += places[seat]
                wins += places[seat] == 1
                for other in range(num_players):
                    if other != seat:
                        pairs += 1
                        pair_wins += places[seat] < places[other]
        # Random play would win 1/n of the games, place (n+1)/2 on average and
        # beat each opponent half of the time; 76% per pair is about +200 Elo.
        assert wins / games >= 0.8, (num_players, wins, games)
        assert place_sum / games <= 1.3, (num_players, place_sum / games)
        assert pair_wins / pairs >= 0.85, (num_players, pair_wins, pairs)


def test_heuristic_always_answers_a_legal_index() -> None:
    rng = random.Random(5)
    for num_players in (3, 4):
        state = make_game("octablitz", num_players, {"deals": 3}).new_state(11)
        while not state.is_terminal():
            (seat,) = state.deciding_seats()
            legal = state.legal_actions(seat)
            index = choose(state.observation(seat), list(legal))
            assert 0 <= index < len(legal)
            state.apply_action(legal[index] if seat % 2 else rng.choice(legal))
