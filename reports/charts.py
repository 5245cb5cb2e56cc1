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


# -- line charts: an SPRT's path, ratings over time ------------------------------------

LINE_WIDTH = 560
LINE_HEIGHT = 220
LINE_LEFT = 56
LINE_TOP = 14
LINE_BOTTOM = 30


@dataclass(frozen=True)
class Series:
    """One line: its name and the SVG polyline of its points."""

    name: str
    points: str
    #: The last point (x, y), where the line's name is written.
    end: tuple[float, float]


@dataclass(frozen=True)
class LineChart:
    """Lines on one x scale and one y scale, with horizontal marks (``levels``: y, label,
    CSS class) such as an SPRT's bounds."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    series: tuple[Series, ...]
    levels: tuple[tuple[float, str, str], ...]
    xticks: tuple[tuple[float, str], ...]
    yticks: tuple[tuple[float, str], ...]
    xlabel: str
    ylabel: str


def line_chart(lines: Sequence[tuple[str, Sequence[tuple[float, float]]]], *,
               levels: Sequence[tuple[float, str, str]] = (), xlabel: str = "",
               ylabel: str = "") -> LineChart | None:
    """A chart of ``lines`` (name, (x, y) points), None when no line has a point;
    ``levels`` (value, label, CSS class) are drawn across the plot and kept in view."""
    xs = [x for _, points in lines for x, _ in points]
    ys = [y for _, points in lines for _, y in points if math.isfinite(y)]
    if not xs or not ys:
        return None
    ys += [value for value, _, _ in levels]
    low_x, high_x = min(0.0, min(xs)), max(xs) or 1.0
    low_y, high_y = min(ys), max(ys)
    pad = max((high_y - low_y) * 0.06, 1e-9 if high_y > low_y else 1.0)
    low_y, high_y = low_y - pad, high_y + pad
    left, right = LINE_LEFT, LINE_LEFT + LINE_WIDTH
    top, bottom = LINE_TOP, LINE_TOP + LINE_HEIGHT

    def x(value: float) -> float:
        return round(left + (value - low_x) / ((high_x - low_x) or 1.0) * LINE_WIDTH, 1)

    def y(value: float) -> float:
        return round(bottom - (value - low_y) / (high_y - low_y) * LINE_HEIGHT, 1)

    series = []
    for name, points in lines:
        shown = [(x(a), y(b)) for a, b in points if math.isfinite(b)]
        if shown:
            series.append(Series(name, " ".join(f"{a},{b}" for a, b in shown), shown[-1]))
    return LineChart(
        width=right + 120, height=bottom + LINE_BOTTOM, left=left, right=right, top=top,
        bottom=bottom, series=tuple(series),
        levels=tuple((y(value), label, css) for value, label, css in levels),
        xticks=tuple((x(v), f"{v:,.0f}") for v in _ticks(low_x, high_x) if v >= low_x),
        yticks=tuple((y(v), f"{v:g}") for v in _ticks(low_y, high_y)),
        xlabel=xlabel, ylabel=ylabel)
