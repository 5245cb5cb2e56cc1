"""Two-player match statistics against the published figures in tests/data/refdata/README.md."""

from __future__ import annotations

import math

import pytest

from arena.match_stats import (
    SprtBounds,
    gsprt_llr,
    los_decisive,
    sprt_llr,
    summarize,
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
