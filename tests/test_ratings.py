"""Tests for arena.ratings: maximum-likelihood Elo and bootstrap intervals."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.ratings import Rating, fit_elo, pairwise_outcomes, rate

#: A copy of shared/refdata (its README gives the known answers).
REFDATA = Path(__file__).resolve().parent / "data" / "refdata"
RR5 = REFDATA / "rr5_games.json"
RR5_EXPECTED = {
    "Alpha": 177.99,
    "Bravo": 52.19,
    "Charlie": -16.69,
    "Delta": -78.32,
    "Echo": -135.17,
}
RR5_POINTS = {"Alpha": 31.0, "Bravo": 23.5, "Charlie": 19.0, "Delta": 15.0, "Echo": 11.5}
RESULT_PLACES = {"1-0": (1, 2), "1/2-1/2": (1, 1), "0-1": (2, 1)}

Game = list[tuple[str, int]]


def win(a: str, b: str) -> Game:
    return [(a, 1), (b, 2)]


def draw(a: str, b: str) -> Game:
    return [(a, 1), (b, 1)]


def expected_score(ra: float, rb: float) -> float:
    return 1.0 / (1.0 + 10.0 ** ((rb - ra) / 400.0))


@pytest.fixture(scope="module")
def rr5_games() -> list[Game]:
    games = []
    for first, second, result in json.loads(RR5.read_text()):
        place_first, place_second = RESULT_PLACES[result]
        games.append([(first, place_first), (second, place_second)])
    return games


# A small mixed pool: every player has wins and losses, so the MLE is finite.
MIXED = [
    win("a", "b"),
    win("a", "b"),
    win("b", "a"),
    win("b", "c"),
    draw("b", "c"),
    win("c", "a"),
    win("a", "d"),
    win("d", "c"),
    win("c", "d"),
    [("a", 1), ("b", 2), ("c", 3), ("d", 4)],
    [("d", 1), ("c", 2), ("b", 2)],
]


def test_refdata_ratings(rr5_games: list[Game]) -> None:
    ratings = fit_elo(rr5_games)
    assert ratings.keys() == RR5_EXPECTED.keys()
    for player, expected in RR5_EXPECTED.items():
        assert ratings[player] == pytest.approx(expected, abs=0.1), player
    assert sum(ratings.values()) == pytest.approx(0.0, abs=1e-9)


def test_refdata_expected_score_equals_actual(rr5_games: list[Game]) -> None:
    ratings = fit_elo(rr5_games)
    expected: dict[str, float] = defaultdict(float)
    actual: dict[str, float] = defaultdict(float)
    for (a, place_a), (b, place_b) in rr5_games:
        expected[a] += expected_score(ratings[a], ratings[b])
        expected[b] += expected_score(ratings[b], ratings[a])
        actual[a] += 1.0 if place_a < place_b else 0.5 if place_a == place_b else 0.0
        actual[b] += 1.0 if place_b < place_a else 0.5 if place_a == place_b else 0.0
    assert actual == pytest.approx(RR5_POINTS)
    assert expected == pytest.approx(RR5_POINTS, abs=1e-6)


def test_refdata_rate_intervals(rr5_games: list[Game]) -> None:
    ratings = rate(rr5_games, bootstrap=200, seed=0)
    assert [r.player for r in ratings] == list(RR5_EXPECTED)
    for r in ratings:
        assert r.games == 40
        assert r.elo == pytest.approx(RR5_EXPECTED[r.player], abs=0.1)
        assert r.low < r.elo < r.high
        # Ordo's 95% errors are about +-70 Elo on these 100 games.
        assert 30 < r.high - r.low < 400


def test_multiplayer_table_gives_six_pairs_of_weight_one_third() -> None:
    table = [("a", 1), ("b", 2), ("c", 2), ("d", 4)]
    outcomes = pairwise_outcomes([table])
    assert len(outcomes) == 6
    assert all(o.weight == pytest.approx(1 / 3) and o.game == 0 for o in outcomes)
    scores = {(o.a, o.b): o.score for o in outcomes}
    assert scores == {
        ("a", "b"): 1.0,
        ("a", "c"): 1.0,
        ("a", "d"): 1.0,
        ("b", "c"): 0.5,
        ("b", "d"): 1.0,
        ("c", "d"): 1.0,
    }


def test_two_player_game_has_weight_one() -> None:
    (outcome,) = pairwise_outcomes([[("x", 2), ("y", 1)]])
    assert (outcome.a, outcome.b, outcome.score, outcome.weight) == ("x", "y", 0.0, 1.0)


def test_three_player_tables_twice_equal_their_pairs_once() -> None:
    tables = [
        [("a", 1), ("b", 2), ("c", 3)],
        [("b", 1), ("c", 2), ("a", 3)],
        [("a", 1), ("c", 1), ("b", 3)],
    ]
    pairs = [
        [seat_a, seat_b] for table in tables for seat_a, seat_b in itertools.combinations(table, 2)
    ]
    by_tables = fit_elo(tables * 2)
    by_pairs = fit_elo(pairs)
    assert by_tables == pytest.approx(by_pairs, abs=1e-6)


def test_swapping_names_swaps_ratings() -> None:
    swap = {"a": "b", "b": "a"}
    renamed = [[(swap.get(p, p), place) for p, place in game] for game in MIXED]
    original, swapped = fit_elo(MIXED), fit_elo(renamed)
    assert swapped["a"] == pytest.approx(original["b"], abs=1e-6)
    assert swapped["b"] == pytest.approx(original["a"], abs=1e-6)
    assert swapped["c"] == pytest.approx(original["c"], abs=1e-6)


def test_invariant_to_game_and_seat_order() -> None:
    rng = random.Random(7)
    shuffled = [rng.sample(game, len(game)) for game in MIXED]
    rng.shuffle(shuffled)
    assert fit_elo(shuffled) == pytest.approx(fit_elo(MIXED), abs=1e-6)
    assert list(fit_elo(shuffled)) != list(fit_elo(MIXED))  # the shuffle really reorders


def test_intervals_contain_estimate() -> None:
    for r in rate(MIXED * 3, bootstrap=200, seed=3):
        assert r.low <= r.elo <= r.high


def test_rate_sorted_best_first_and_counts_games() -> None:
    ratings = rate(MIXED, bootstrap=20)
    assert all(isinstance(r, Rating) for r in ratings)
    assert [r.elo for r in ratings] == sorted((r.elo for r in ratings), reverse=True)
    assert {r.player: r.games for r in ratings} == {"a": 6, "b": 7, "c": 7, "d": 5}


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    assert rate(MIXED, bootstrap=50, seed=11) == rate(MIXED, bootstrap=50, seed=11)
    assert rate(MIXED, bootstrap=50, seed=11) != rate(MIXED, bootstrap=50, seed=12)


def test_player_missing_from_some_resamples_gets_an_interval() -> None:
    games = [*MIXED * 3, win("rare", "a"), win("b", "rare")]
    rare = next(r for r in rate(games, bootstrap=100, seed=2) if r.player == "rare")
    assert rare.games == 2
    assert math.isfinite(rare.low) and math.isfinite(rare.high)
    assert rare.low <= rare.elo <= rare.high


def test_zero_bootstrap_collapses_interval() -> None:
    for r in rate(MIXED, bootstrap=0):
        assert r.low == r.elo == r.high


def test_negative_bootstrap_rejected() -> None:
    with pytest.raises(ValueError, match="bootstrap"):
        rate(MIXED, bootstrap=-1)


def test_all_wins_player_is_finite_and_highest() -> None:
    games = [*MIXED, win("top", "a"), win("top", "b"), win("top", "c"), win("top", "d")]
    ratings = fit_elo(games)
    assert all(math.isfinite(r) for r in ratings.values())
    assert max(ratings, key=ratings.__getitem__) == "top"
    assert sum(ratings.values()) == pytest.approx(0.0, abs=1e-6)
    for r in rate(games, bootstrap=50):
        assert math.isfinite(r.low) and math.isfinite(r.high)


def test_all_losses_player_is_finite_and_lowest() -> None:
    ratings = fit_elo([*MIXED, win("a", "bottom"), win("d", "bottom")])
    assert all(math.isfinite(r) for r in ratings.values())
    assert min(ratings, key=ratings.__getitem__) == "bottom"


def test_single_decisive_game() -> None:
    ratings = fit_elo([win("a", "b")])
    assert math.isfinite(ratings["a"]) and ratings["a"] > 0
    assert ratings["b"] == pytest.approx(-ratings["a"])


def test_draw_only_gives_equal_ratings() -> None:
    assert fit_elo([draw("a", "b")]) == pytest.approx({"a": 0.0, "b": 0.0})


def test_disconnected_groups_are_each_centred() -> None:
    games = [win("a", "b"), win("a", "b"), win("b", "a"), win("x", "y"), draw("x", "y")]
    ratings = fit_elo(games)
    assert ratings["a"] + ratings["b"] == pytest.approx(0.0, abs=1e-6)
    assert ratings["x"] + ratings["y"] == pytest.approx(0.0, abs=1e-6)
    # Within a group the fit is the plain two-player MLE: 2 wins of 3 and 1.5 of 2.
    assert ratings["a"] - ratings["b"] == pytest.approx(400 * math.log10(2), abs=1e-6)
    assert ratings["x"] - ratings["y"] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_no_games() -> None:
    assert fit_elo([]) == {}
    assert rate([]) == []


def test_single_player() -> None:
    assert fit_elo([[("solo", 1)]]) == {"solo": 0.0}
    assert rate([[("solo", 1)]]) == [Rating("solo", 0.0, 0.0, 0.0, 1)]


def test_player_twice_in_one_game_rejected() -> None:
    with pytest.raises(ValueError, match="more than once"):
        fit_elo([win("a", "b"), [("a", 1), ("c", 2), ("a", 3)]])


def test_empty_game_rejected() -> None:
    with pytest.raises(ValueError, match="at least one seat"):
        fit_elo([[]])


NAMES = [f"p{i}" for i in range(8)]


@st.composite
def random_games(draw_: st.DrawFn) -> list[Game]:
    games = []
    for _ in range(draw_(st.integers(1, 25))):
        players = draw_(st.lists(st.sampled_from(NAMES), min_size=1, max_size=5, unique=True))
        places = draw_(st.lists(st.integers(1, 4), min_size=len(players), max_size=len(players)))
        games.append(list(zip(players, places, strict=True)))
    return games


@st.composite
def round_robins(draw_: st.DrawFn) -> list[Game]:
    players = NAMES[: draw_(st.integers(2, 6))]
    rounds = draw_(st.integers(1, 3))
    outcome = st.sampled_from([(1, 2), (1, 1), (2, 1)])
    games = []
    for a, b in itertools.combinations(players, 2):
        for _ in range(rounds):
            place_a, place_b = draw_(outcome)
            games.append([(a, place_a), (b, place_b)])
    return games


@settings(max_examples=60, deadline=None)
@given(random_games())
def test_ratings_are_finite_and_sum_to_zero(games: list[Game]) -> None:
    ratings = fit_elo(games)
    assert ratings.keys() == {player for game in games for player, _ in game}
    assert all(math.isfinite(r) for r in ratings.values())
    assert sum(ratings.values()) == pytest.approx(0.0, abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(round_robins())
def test_round_robin_order_follows_total_score(games: list[Game]) -> None:
    ratings = fit_elo(games)
    points: dict[str, float] = defaultdict(float)
    for (a, place_a), (b, place_b) in games:
        points[a] += 1.0 if place_a < place_b else 0.5 if place_a == place_b else 0.0
        points[b] += 1.0 if place_b < place_a else 0.5 if place_a == place_b else 0.0
    assert sum(ratings.values()) == pytest.approx(0.0, abs=1e-6)
    for p, q in itertools.combinations(ratings, 2):
        if math.isclose(points[p], points[q]):
            assert ratings[p] == pytest.approx(ratings[q], abs=1e-4)
        elif points[p] > points[q]:
            assert ratings[p] > ratings[q] + 1e-6
        else:
            assert ratings[p] < ratings[q] - 1e-6
