"""Inline SVG charts, laid out here and drawn by the templates (no script, no assets).

A rating chart is one row per rated bot: the estimate as a dot and the interval as a
whisker; an open side (a one-sided bound such as "> +600") runs to the plot's edge and
ends in an arrow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from arena.stats.ratings import Rating

LABEL_WIDTH = 170
PLOT_WIDTH = 520
ROW_HEIGHT = 22
TOP = 24
BOTTOM = 10
#: Characters of a bot's name shown beside its row (the full name is its tooltip).
LABEL_CHARS = 24


@dataclass(frozen=True)
class Whisker:
    """One bot's row: ``x`` None when the estimate is open (infinite)."""

    label: str
    name: str
    text: str
    y: float
    x: float | None
    low: float
    high: float
    open_low: bool
    open_high: bool


@dataclass(frozen=True)
class RatingChart:
    width: int
    height: int
    left: int
    right: int
    rows: tuple[Whisker, ...]
    ticks: tuple[tuple[float, str], ...]


def rating_chart(ratings: Sequence[Rating]) -> RatingChart | None:
    """The chart of ``ratings`` (in their order), None when none is placed on the scale."""
    shown = [r for r in ratings if not math.isnan(r.estimate)]
    finite = [v for r in shown for v in (r.estimate, r.lower, r.upper) if math.isfinite(v)]
    if not finite:
        return None
    low, high = min(finite), max(finite)
    pad = max((high - low) * 0.08, 25.0)
    low, high = low - pad, high + pad
    left, right = LABEL_WIDTH, LABEL_WIDTH + PLOT_WIDTH

    def x(value: float) -> float:
        if math.isinf(value):
            return float(left if value < 0 else right)
        return round(left + (value - low) / (high - low) * PLOT_WIDTH, 1)

    rows = tuple(
        Whisker(label=_label(r.player), name=r.player, text=r.format(),
                y=TOP + ROW_HEIGHT * (index + 0.5),
                x=x(r.estimate) if math.isfinite(r.estimate) else None,
                low=x(r.lower), high=x(r.upper),
                open_low=math.isinf(r.lower), open_high=math.isinf(r.upper))
        for index, r in enumerate(shown))
    ticks = tuple((x(value), f"{round(value):+d}" if value else "0")
                  for value in _ticks(low, high))
    return RatingChart(width=right + 20, height=TOP + ROW_HEIGHT * len(rows) + BOTTOM,
                       left=left, right=right, rows=rows, ticks=ticks)


def _label(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1] + "\u2026"


def _ticks(low: float, high: float, count: int = 6) -> list[float]:
    """Round values between ``low`` and ``high``, about ``count`` of them."""
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) // step) + 1)]
