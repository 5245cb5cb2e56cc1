"""Two-player match statistics against the published figures in tests/data/refdata/README.md
(every SPRT and two-player figure there) and fastchess's own test vectors for pairs
(app/tests/elo_test.cpp, sprt_test.cpp: its pentanomial Elo, and its generalized SPRT
on pairs, normalized and logistic)."""

from __future__ import annotations

import math
import random

import pytest

from arena.stats.match_stats import (
    Pentanomial,
    SequentialTest,
    Sprt,
    SprtBounds,
    gsprt_llr,
    los_decisive,
    pair_llr,
    sprt_llr,
    summarize,
    summarize_pairs,
)


def test_fastchess_trinomial_w136_l96_d111() -> None:
    m = summarize(wins=136, draws=111, losses=96)
    assert m.elo == pytest.approx(40.70, abs=0.005)
    assert m.elo_error == pytest.approx(30.43, abs=0.005)
    assert m.nelo == pytest.approx(49.77, abs=0.005)
    assert m.nelo_error == pytest.approx(36.77, abs=0.005)
    assert m.los == pytest.approx(0.9960, abs=0.00005)


def test_fastchess_trinomial_w76_l89_d123() -> None:
    m = summarize(wins=76, draws=123, losses=89)
    assert m.nelo == pytest.approx(-20.76, abs=0.005)
    assert m.nelo_error == pytest.approx(40.13, abs=0.005)
    assert m.los == pytest.approx(0.1553, abs=0.00005)
    assert m.score == pytest.approx(0.477, abs=0.0005)


def test_fastchess_trinomial_w34_l356() -> None:
    m = summarize(wins=34, draws=0, losses=356)
    assert m.nelo == pytest.approx(-508.44, abs=0.005)
    assert m.nelo_error == pytest.approx(34.48, abs=0.005)


def test_cutechess_los() -> None:
    assert los_decisive(136, 96) == pytest.approx(0.99568, abs=0.000005)
    assert los_decisive(5, 5) == 0.5


@pytest.mark.parametrize(("wins", "losses", "draws", "llr"), [
    (1477, 1351, 2942, 2.52), (555, 555, 298, -0.74), (3, 149, 1, -4.69)])
def test_cutechess_sprt(wins: int, losses: int, draws: int, llr: float) -> None:
    assert sprt_llr(wins, draws, losses, elo0=0, elo1=10) == pytest.approx(llr, abs=0.005)


def test_cutechess_sprt_bounds_and_verdicts() -> None:
    bounds = SprtBounds.of(alpha=0.01, beta=0.01)
    assert bounds.lower == pytest.approx(-4.595, abs=0.001)
    assert bounds.upper == pytest.approx(4.595, abs=0.001)
    assert bounds.verdict(sprt_llr(3, 1, 149, 0, 10)) == "H0"
    assert bounds.verdict(sprt_llr(1477, 2942, 1351, 0, 10)) is None
    assert bounds.verdict(5.0) == "H1"
    assert 0 < sprt_llr(10, 0, 3, 0, 10) < bounds.upper  # defined before the first draw
    assert sprt_llr(0, 0, 0, 0, 10) == 0.0


@pytest.mark.parametrize(("wins", "losses", "draws", "bounds", "llr"), [
    (36433, 36027, 68692, (0, 2), 0.92), (10871, 10650, 20431, (-1.75, 0.25), 2.30)])
def test_fastchess_generalized_sprt(wins: int, losses: int, draws: int,
                                    bounds: tuple[float, float], llr: float) -> None:
    assert gsprt_llr(wins, draws, losses, *bounds) == pytest.approx(llr, abs=0.005)


def test_degenerate_matches() -> None:
    perfect = summarize(wins=10, draws=0, losses=0)
    assert perfect.elo == math.inf and perfect.los == 1.0
    assert gsprt_llr(0, 0, 0, 0, 2) == 0.0


def test_fastchess_generalized_sprt_bounds_and_verdicts() -> None:
    bounds = SprtBounds.of(alpha=0.05, beta=0.05)
    assert bounds.lower == pytest.approx(-2.944, abs=0.001)
    assert bounds.upper == pytest.approx(2.944, abs=0.001)
    assert bounds.verdict(gsprt_llr(36433, 68692, 36027, 0, 2)) is None
    assert bounds.verdict(gsprt_llr(10871, 20431, 10650, -1.75, 0.25)) is None
    assert SprtBounds.of(0.01, 0.01).verdict(sprt_llr(555, 298, 555, 0, 10)) is None


# fastchess's Stats(LL, LD, WL, DD, WD, WW) vectors.
@pytest.mark.parametrize(("counts", "nelo", "nelo_error", "elo", "elo_error", "los"), [
    ((34, 54, 31, 32, 64, 75), 57.94, 28.28, 55.58, 27.65, 1.0000),
    ((332, 433, 457, 41, 333, 334), -9.17, 10.96, -8.64, 10.33, 0.0505),
    ((7895, 8757, 5485, 200, 568, 9999), -19.01, 2.65, -21.04, 2.95, 0.0)])
def test_fastchess_pentanomial_elo(counts: tuple[int, ...], nelo: float, nelo_error: float,
                                   elo: float, elo_error: float, los: float) -> None:
    m = summarize_pairs(Pentanomial(*counts))
    assert m.nelo == pytest.approx(nelo, abs=0.005)
    assert m.nelo_error == pytest.approx(nelo_error, abs=0.005)
    assert m.elo == pytest.approx(elo, abs=0.005)
    assert m.elo_error == pytest.approx(elo_error, abs=0.005)
    assert m.los == pytest.approx(los, abs=0.00005)


@pytest.mark.parametrize(("counts", "model", "bounds", "llr"), [
    ((365, 16618, 36029, 200, 16974, 390), "normalized", (0, 2), 2.25),
    ((127, 4883, 10311, 401, 5150, 104), "normalized", (-1.75, 0.25), 3.01),
    ((223, 9863, 20279, 1000, 10037, 246), "logistic", (0.5, 2.5), -3.07),
    ((871, 26175, 55003, 980, 26678, 821), "logistic", (0, 2), -4.98)])
def test_fastchess_generalized_sprt_on_pairs(counts: tuple[int, ...], model: str,
                                             bounds: tuple[float, float], llr: float) -> None:
    assert pair_llr(Pentanomial(*counts), *bounds, model) == pytest.approx(llr, abs=0.005)
    assert Sprt(*bounds, model=model).llr(Pentanomial(*counts)) == pytest.approx(llr, abs=0.005)


def test_pairs_count_as_pentanomial_and_as_games() -> None:
    pairs = Pentanomial.of([(1, 1), (1, 0.5), (0, 1), (0.5, 0.5), (0.5, 0), (0, 0), (1, 1)])
    assert pairs == Pentanomial(ll=1, ld=1, wl=1, dd=1, wd=1, ww=2)
    assert pairs.counts() == (1, 1, 2, 1, 2)
    games = pairs.trinomial()
    assert (games.wins, games.draws, games.losses) == (6, 4, 4)
    # Game by game the same games give the trinomial figures.
    assert summarize_pairs(pairs).score == summarize(6, 4, 4).score
    sprt = Sprt(0, 10, 0.05, 0.05, "bayesian")
    assert sprt.llr(pairs) == sprt_llr(6, 4, 4, 0, 10)


def pair_points(rng: random.Random, strength: float) -> tuple[float, float]:
    return (float(rng.random() < strength), float(rng.random() < strength))


def test_sequential_test_stops_at_the_first_crossing_whatever_the_order() -> None:
    rng = random.Random(3)
    pairs = [pair_points(rng, 0.75) for _ in range(400)]
    sprt = Sprt(elo0=0, elo1=100, alpha=0.05, beta=0.05, model="logistic")
    in_order = SequentialTest(sprt, max_pairs=400)
    for deal, (first, second) in enumerate(pairs):
        in_order.record(deal, 0, first)
        in_order.record(deal, 1, second)
    assert in_order.outcome == "H1" and in_order.decided
    stop = in_order.next_deal  # pairs 0 .. stop - 1 were tested
    assert in_order.counted == Pentanomial.of(pairs[:stop])
    assert in_order.llr == pytest.approx(sprt.llr(Pentanomial.of(pairs[:stop])))
    assert sprt.llr(Pentanomial.of(pairs[:stop - 1])) < sprt.bounds.upper <= in_order.llr

    halves = [(deal, rotation, pair[rotation]) for deal, pair in enumerate(pairs[:stop + 20])
              for rotation in (0, 1)]
    rng.shuffle(halves)
    shuffled = SequentialTest(sprt, max_pairs=400)
    for half in halves:
        shuffled.record(*half)
    assert (shuffled.outcome, shuffled.counted, shuffled.llr) == \
        (in_order.outcome, in_order.counted, in_order.llr)


def test_sequential_test_waits_for_missing_pairs_and_skips_void_ones() -> None:
    test = SequentialTest(Sprt(0, 5), max_pairs=3)
    test.record(1, 0, 1.0)
    test.record(1, 1, 1.0)
    assert test.counted.pairs == 0 and test.outcome == "running"  # deal 0 not played yet
    test.record(0, 0, None)  # every seat faulted
    test.record(0, 1, 0.0)
    assert test.void == 1 and test.counted == Pentanomial(ww=1) and not test.decided
    test.record(2, 1, 0.5)
    test.record(2, 0, 0.5)
    assert test.outcome == "inconclusive" and test.decided
    assert test.counted == Pentanomial(dd=1, ww=1)


@pytest.mark.parametrize(("sprt", "needle"), [
    (Sprt(elo0=5, elo1=5), "--elo0 (5) must be below --elo1 (5)"),
    (Sprt(alpha=0), "--alpha must be between 0 and 1"),
    (Sprt(beta=1.5), "--beta must be between 0 and 1"),
    (Sprt(alpha=0.6, beta=0.5), "--alpha + --beta must be below 1"),
    (Sprt(elo1=math.inf), "finite"),
    (Sprt(elo1=250), "within +/-200 nElo with the normalized model"),
    (Sprt(elo0=-1500, model="logistic"), "within +/-1000 Elo"),
    (Sprt(model="gaussian"), "--sprt-model must be one of normalized, logistic, bayesian")])
def test_bad_sprt_settings_are_named(sprt: Sprt, needle: str) -> None:
    problem = sprt.problem()
    assert problem is not None and needle in problem
    assert Sprt().problem() is None


def test_every_model_gives_a_finite_llr_on_extreme_samples() -> None:
    # Nearly all draws, one-sided pairs, huge and tiny counts, the widest bounds.
    rng = random.Random(2)
    for _ in range(400):
        counts = [rng.choice([0, 0, 1, 2, 50, 1000, 100000]) for _ in range(6)]
        model = rng.choice(["normalized", "logistic", "bayesian"])
        most = 200 if model == "normalized" else 1000
        elo0 = rng.uniform(-most, most - 1)
        sprt = Sprt(elo0, rng.uniform(elo0 + 1, most), model=model)
        assert sprt.problem() is None
        assert math.isfinite(sprt.llr(Pentanomial(*counts))), (sprt, counts)
