"""Tests for arena.stats.ratings: maximum-likelihood Elo, grouped bootstrap intervals, one-sided
bounds, rank intervals, LOS, anchoring and comparable pools."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.stats.pools import PoolKey, RatableGame, duplicate_group, pools, ratable_games
from arena.stats.ratings import (
    CONFIDENCE,
    PROVISIONAL_GAMES,
    Rating,
    fit_elo,
    pairwise_outcomes,
    rate,
    rate_pool,
)

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
        assert ratings[player] == pytest.approx(expected, abs=0.005), player
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
        assert r.games == 40 and not r.provisional and r.bounded == "both"
        assert r.estimate == pytest.approx(RR5_EXPECTED[r.player], abs=0.005)
        assert r.lower < r.estimate < r.upper
        # Ordo's 95% errors are about +-70 Elo on these 100 games.
        assert 100 < r.upper - r.lower < 250


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
        assert r.lower <= r.estimate <= r.upper


def test_rate_sorted_best_first_and_counts_games() -> None:
    ratings = rate(MIXED, bootstrap=20)
    assert all(isinstance(r, Rating) for r in ratings)
    assert [r.estimate for r in ratings] == sorted((r.estimate for r in ratings), reverse=True)
    assert {r.player: r.games for r in ratings} == {"a": 6, "b": 7, "c": 7, "d": 5}


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    assert rate(MIXED, bootstrap=50, seed=11) == rate(MIXED, bootstrap=50, seed=11)
    assert rate(MIXED, bootstrap=50, seed=11) != rate(MIXED, bootstrap=50, seed=12)


def test_rare_player_interval_comes_from_the_curvature_where_resamples_diverge() -> None:
    # "rare" won once and lost once: resamples without its loss rate it +inf, those
    # without its win -inf, so the bootstrap cannot bound it on either side: the
    # likelihood's curvature does, as it does with no resample at all.
    games = [*MIXED * 3, win("rare", "a"), win("b", "rare")]
    rare = next(r for r in rate(games, bootstrap=100, seed=2) if r.player == "rare")
    curvature = next(r for r in rate(games, bootstrap=0) if r.player == "rare")
    assert rare.games == 2 and math.isfinite(rare.estimate) and rare.bounded == "both"
    assert (rare.lower, rare.upper) == pytest.approx((curvature.lower, curvature.upper))
    assert rare.lower < rare.estimate - 300 and rare.upper > rare.estimate + 300
    assert rare.format() == (f"{round(rare.estimate):+d} [{round(rare.lower):+d}, "
                             f"{round(rare.upper):+d}] (few games)")


def test_zero_bootstrap_gives_the_curvature_interval() -> None:
    for r in rate(MIXED, bootstrap=0):
        assert r.lower < r.estimate < r.upper
        assert r.upper - r.estimate == pytest.approx(r.estimate - r.lower)
    assert math.isnan(rate_pool(MIXED, bootstrap=0).los("a", "b"))


def test_negative_bootstrap_rejected() -> None:
    with pytest.raises(ValueError, match="bootstrap"):
        rate(MIXED, bootstrap=-1)


def one_sided_bound(wins: int) -> float:
    """Elo over a 0-rated opponent at which ``wins`` straight wins have chance 2.5%."""
    p = ((1 - CONFIDENCE) / 2) ** (1 / wins)
    return 400 * math.log10(p / (1 - p))


# x and y drew, so both are rated 0 and each resample leaves them there.
REFERENCE = [draw("x", "y"), draw("y", "x")]


def test_unbeaten_bot_gets_an_exact_one_sided_lower_bound() -> None:
    games = [*REFERENCE, *[win("top", "x")] * 20]
    top, *rest = rate(games, bootstrap=100)
    assert top.player == "top" and top.estimate == math.inf and top.upper == math.inf
    assert top.bounded == "lower"
    assert top.lower == pytest.approx(one_sided_bound(20), abs=1e-6)  # +278
    assert top.format() == f"> +{round(one_sided_bound(20))} (unbeaten)"
    assert (top.elo, top.low, top.high) == (top.lower,) * 3  # finite stand-ins
    assert all(r.estimate == 0 and r.bounded == "both" for r in rest)
    assert (top.rank_best, top.rank_worst) == (1, 1)


def test_winless_bot_gets_an_upper_bound_and_more_games_tighten_it() -> None:
    few = rate([*REFERENCE, *[win("x", "low")] * 3], bootstrap=20)[-1]
    many = rate([*REFERENCE, *[win("x", "low")] * 40], bootstrap=20)[-1]
    for bot, games in ((few, 3), (many, 40)):
        assert bot.player == "low" and bot.estimate == -math.inf and bot.bounded == "upper"
        assert bot.upper == pytest.approx(-one_sided_bound(games), abs=1e-6)
        assert bot.format() == f"< {round(bot.upper):+d} (winless{'; few games' * (games < 20)})"
    assert many.upper < -400 < few.upper


def test_unbeaten_chain_is_bounded_from_the_bottom_up() -> None:
    # top only ever met second, which only ever beat x: top's bound rests on second's.
    games = [*REFERENCE, *[win("second", "x")] * 20, *[win("top", "second")] * 20]
    ratings = {r.player: r for r in rate(games, bootstrap=20)}
    assert ratings["second"].lower == pytest.approx(one_sided_bound(20), abs=1e-6)
    assert ratings["top"].lower == pytest.approx(2 * one_sided_bound(20), abs=1e-6)


def test_single_decisive_game() -> None:
    # The reference (equal in size, games and all) is the first bot: a.
    ratings = fit_elo([win("a", "b")])
    assert ratings == {"a": 0.0, "b": -math.inf}
    a, b = sorted(rate([win("a", "b")], bootstrap=10), key=lambda r: r.player)
    # One game says little: a - b > the one-sided bound, shown centred between them.
    assert b.upper == pytest.approx(-one_sided_bound(1) / 2)
    assert a.lower - b.upper == pytest.approx(one_sided_bound(1))


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
    pool = rate_pool(games * 5, bootstrap=30)
    assert math.isnan(pool.los("a", "x")) and not math.isnan(pool.los("a", "b"))


def test_no_games() -> None:
    assert fit_elo([]) == {}
    assert rate([]) == []


def test_single_player_is_unrated() -> None:
    (solo,) = rate([[("solo", 1)]])
    assert math.isnan(solo.estimate) and solo.bounded == "none" and solo.games == 1
    assert solo.format() == "unrated (no opponent)" and solo.elo == 0.0
    assert solo.kind == "unrated" and not solo.met


def test_anchor_on_a_bot(rr5_games: list[Game]) -> None:
    ratings = {r.player: r for r in rate(rr5_games, bootstrap=100, anchor="Charlie")}
    charlie = RR5_EXPECTED["Charlie"]
    for player, expected in RR5_EXPECTED.items():
        assert ratings[player].estimate == pytest.approx(expected - charlie, abs=0.005)
    assert ratings["Charlie"].lower == ratings["Charlie"].upper == 0.0
    assert ratings["Alpha"].lower > 0
    with pytest.raises(ValueError, match="not in the games"):
        rate(rr5_games, anchor="Zulu")


def test_anchor_decides_the_reference_of_a_divergent_pool() -> None:
    games = [*REFERENCE, *[win("top", "x")] * 20]
    ratings = fit_elo(games, anchor="top")
    assert ratings == {"x": -math.inf, "y": -math.inf, "top": 0.0}


def test_los_is_complementary_and_follows_the_ratings(rr5_games: list[Game]) -> None:
    pool = rate_pool(rr5_games, bootstrap=300, seed=5)
    names = list(RR5_EXPECTED)
    for a, b in itertools.combinations(names, 2):
        assert pool.los(a, b) + pool.los(b, a) == pytest.approx(1.0)
        assert pool.los(a, b) > 0.5  # names are in rating order
    assert pool.los("Alpha", "Echo") > 0.99
    assert pool.los("Alpha", "Alpha") == 0.5


def test_identical_bots_have_overlapping_rank_intervals() -> None:
    games = []
    for twin in ("twin-1", "twin-2"):
        games += [win("strong", twin)] * 24 + [win(twin, "strong")] * 6
        games += [win(twin, "weak")] * 24 + [win("weak", twin)] * 6
    games += [win("twin-1", "twin-2"), win("twin-2", "twin-1"), *[win("strong", "weak")] * 30]
    pool = rate_pool(games, bootstrap=200)
    strong, *twins, weak = pool.ratings
    assert (strong.player, weak.player) == ("strong", "weak")
    assert {t.player for t in twins} == {"twin-1", "twin-2"}
    assert twins[0].estimate == pytest.approx(twins[1].estimate, abs=1e-6)
    assert [(t.rank_best, t.rank_worst) for t in twins] == [(2, 3), (2, 3)]
    assert pool.los("twin-1", "twin-2") == pytest.approx(0.5, abs=0.1)


def test_provisional_below_the_threshold() -> None:
    games = [*MIXED * 4, *[win("new", "a"), win("b", "new")] * 2]
    flags = {r.player: (r.games, r.provisional) for r in rate(games, bootstrap=0)}
    assert flags["new"] == (4, True)
    assert all(flag == (games < PROVISIONAL_GAMES) for games, flag in flags.values())
    assert flags["b"] == (30, False)


def test_format() -> None:
    assert Rating("a", 123.4, 80.2, 169.6, 30).format() == "+123 [+80, +170]"
    assert Rating("a", -0.4, -50, 49.5, 30).format() == "+0 [-50, +50]"
    assert Rating("a", math.inf, 600.2, math.inf, 30).format() == "> +600 (unbeaten)"
    assert Rating("a", -math.inf, -math.inf, -450, 3, provisional=True).format() == \
        "< -450 (winless; few games)"
    assert Rating("a", 700, 550, math.inf, 30).format() == "+700 [+550, no upper bound]"
    assert Rating("a", 0.2, 0.0, 0.4, 30).format() == "+0.2 [+0.0, +0.4]"  # never zero-width
    assert Rating("a", 0, 0, 0, 30, reference=True).format() == "+0 (reference)"
    assert Rating("a", math.nan, -math.inf, math.inf, 8, group=2).format() == \
        "not comparable (group 2)"


def grouped(games: list[Game], copies: int, own_groups: bool = False) -> list[RatableGame]:
    """Every game ``copies`` times, the copies one duplicate group (or each its own)."""
    return [RatableGame(tuple(game), None if own_groups else index)
            for index, game in enumerate(games) for _ in range(copies)]


def widths(games: list[RatableGame]) -> dict[str, float]:
    return {r.player: r.upper - r.lower for r in rate(games, bootstrap=300, seed=1)}


def test_bootstrap_resamples_whole_groups(rr5_games: list[Game]) -> None:
    # Four perfectly correlated copies per group carry the information of one game:
    # resampling groups gives exactly the intervals of one game per group, ...
    once, together = widths(grouped(rr5_games, 1)), widths(grouped(rr5_games, 4))
    assert together == pytest.approx(once, abs=1e-6)
    # ... while resampling the copies one by one shrinks them by about sqrt(4).
    apart = widths(grouped(rr5_games, 4, own_groups=True))
    for player in RR5_EXPECTED:
        assert together[player] > 1.5 * apart[player]


def test_groups_of_stored_games_are_their_deals() -> None:
    deal = [Stored(seats=["a", "b"], places=[1, 2], number=n) for n in (4, 5)]
    other = Stored(seats=["a", "b"], places=[2, 1], number=6)
    elsewhere = Stored(seats=["a", "b"], places=[2, 1], number=5, table=1)
    assert {duplicate_group(g) for g in deal} == {(7, 0, 2)}
    assert duplicate_group(other) == (7, 0, 3) and duplicate_group(elsewhere) == (7, 1, 2)
    assert duplicate_group(RatableGame(())) is None
    faulted = Stored(seats=["a", "b"], places=[2, 2], no_result=True)
    alone = Stored(seats=["a", "a"], places=[1, 2])  # one version in both seats
    ratable = ratable_games([*deal, other, faulted, alone])
    assert [g.group for g in ratable] == [(7, 0, 2), (7, 0, 2), (7, 0, 3)]
    assert list(ratable[0]) == [("a", 1), ("b", 2)] and ratable[0][1] == ("b", 2)


@dataclass
class Stored:
    """The fields of arena.store.database.StoredGame that ratings and pools read."""

    seats: list[str]
    places: list[int]
    number: int = 0
    table: int = 0
    tournament_id: int = 7
    no_result: bool = False
    game: str = "five"
    options: dict[str, Any] = field(default_factory=dict)


def test_pools_split_by_game_options_and_time_control() -> None:
    games = [Stored(["a", "b"], [1, 2], game="five", options={"max_turns": 50, "x": 1}),
             Stored(["a", "b"], [1, 2], game="five", options={"x": 1, "max_turns": 50}),
             Stored(["a", "b"], [1, 2], game="five", options={"max_turns": 60}),
             Stored(["a", "b"], [1, 2], game="octablitz"),
             Stored(["a", "b"], [1, 2], game="five", options={"max_turns": 50, "x": 1},
                    tournament_id=8)]
    split = pools(games)
    assert [len(group) for group in split.values()] == [3, 1, 1]
    first = next(iter(split))
    assert first == PoolKey("five", '{"max_turns":50,"x":1}', "null")
    assert first.settings == {"options": {"max_turns": 50, "x": 1},
                                       "time_control": None}
    times = {7: {"move": 1.0, "bank": 10.0}, 8: {"move": 0.1, "bank": 1.0}}
    by_time = pools(games, time_control=lambda g: times[g.tournament_id])
    assert [len(group) for group in by_time.values()] == [1, 2, 1, 1]
    assert by_time[PoolKey("five", '{"max_turns":50,"x":1}', '{"bank":10.0,"move":1.0}')] == [
        games[0], games[1]]


def test_a_player_twice_in_one_game_plays_its_opponents_not_itself() -> None:
    # One version in two seats of a table of 3: its pairs with c count (weight 1/2
    # each, a win and a loss), its pair with itself is skipped: two such tables weigh
    # as a win and a loss against c.
    twice = [("a", 1), ("c", 2), ("a", 3)]
    fitted = fit_elo([win("a", "b"), win("b", "c"), twice, twice])
    even = fit_elo([win("a", "b"), win("b", "c"), [("a", 1), ("c", 2)], [("c", 1), ("a", 2)]])
    assert fitted.keys() == even.keys()
    for player in fitted:
        assert fitted[player] == pytest.approx(even[player], abs=1e-6)
    assert [(o.a, o.b, o.weight) for o in pairwise_outcomes([twice])] == [
        ("a", "c", 0.5), ("c", "a", 0.5)]


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
def test_finite_ratings_sum_to_zero(games: list[Game]) -> None:
    ratings = fit_elo(games)
    assert ratings.keys() == {player for game in games for player, _ in game}
    finite = [r for r in ratings.values() if math.isfinite(r)]
    assert sum(finite) == pytest.approx(0.0, abs=1e-6)
    for r in rate(games, bootstrap=5):
        assert r.lower <= r.upper and 1 <= r.rank_best <= r.rank_worst <= len(ratings)
        if math.isinf(r.estimate):
            assert r.bounded in ("lower", "upper") and r.bounded == (
                "lower" if r.estimate > 0 else "upper")


def score(place: int, other: int) -> float:
    return 1.0 if place < other else 0.5 if place == other else 0.0


@settings(max_examples=60, deadline=None)
@given(round_robins())
def test_round_robin_order_follows_total_score(games: list[Game]) -> None:
    ratings = fit_elo(games)
    points: dict[str, float] = defaultdict(float)
    for (a, place_a), (b, place_b) in games:
        points[a] += score(place_a, place_b)
        points[b] += score(place_b, place_a)
    for p, q in itertools.permutations(ratings, 2):
        if math.isclose(points[p], points[q]):
            assert ratings[p] == pytest.approx(ratings[q], abs=1e-4)
        elif points[p] > points[q]:
            finite = math.isfinite(ratings[p]) and math.isfinite(ratings[q])
            assert ratings[p] > ratings[q] + 1e-6 if finite else ratings[p] >= ratings[q]


def test_two_bots_one_always_winning_get_one_sided_bounds_not_a_fixed_zero() -> None:
    ratings = {r.player: r for r in rate([[("a", 1), ("b", 2)]] * 10, bootstrap=50)}
    assert ratings["a"].bounded == "lower" and ratings["b"].bounded == "upper"
    assert ratings["a"].lower == -ratings["b"].upper > 0  # centred between the two
    assert ratings["a"].format().startswith("> +") and ratings["b"].format().startswith("< -")
    losing = {r.player: r for r in rate([[("a", 2), ("b", 1)]] * 10, bootstrap=50)}
    assert losing["a"].format().startswith("< -") and losing["b"].format().startswith("> +")
