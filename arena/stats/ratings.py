"""Elo ratings by maximum likelihood, with bootstrap intervals over duplicate groups.

Every finished table is turned into pairwise *virtual games*: each pair of players at a
table of ``n`` players is one game won by the better place (equal places are a draw, half a
win each), weighted ``1 / (n - 1)`` so that a table counts as much in total as one game per
player.  Ratings are the maximum-likelihood Bradley-Terry fit on the standard Elo scale,
``P(i beats j) = 1 / (1 + 10 ** ((Rj - Ri) / 400))``.  docs/ratings.md gives the formulas;
in short:

* The data reduce to, per pair of players, the weighted points of the first and the total
  weight; the fit and every bootstrap refit run on those sums, never on single games.
* Intervals come from a bootstrap over *duplicate groups* (every seat rotation of one deal
  at one table, see :func:`ratable_games`).  Groups with the same pairwise content are
  collapsed into one *type*, so a resample is one multinomial draw over the types.
* When the maximum-likelihood estimate diverges (a bot unbeaten or winless against the
  rest), the bot is rated ``+inf`` / ``-inf`` with an honest one-sided bound: the shift at
  which the wins (losses) it has would be as unlikely as ``(1 - CONFIDENCE) / 2``.
* Ratings are centred on the mean of the pool (of its finitely rated bots) or anchored on
  one bot; rank intervals come from the intervals; LOS from the bootstrap.

Stored games become tables to rate through :func:`arena.stats.pools.ratable_games`;
:func:`arena.stats.pools.pools` splits them into comparable pools first (same game,
options and time control).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

Game = Sequence[tuple[str, int]]
FloatArray = NDArray[np.floating[Any]]
IntArray = NDArray[np.integer[Any]]
BoolArray = NDArray[np.bool_]

CONFIDENCE = 0.95
"""Coverage of every interval (two-sided) and of the one-sided bounds (each tail is 2.5%)."""

PROVISIONAL_GAMES = 20
"""Below this many rated games a rating is provisional: against equal opponents the 95%
half-width of a rating is about ``681 / sqrt(games)`` Elo, more than 150 below 20 games."""

ELO_PER_NAT = 400.0 / math.log(10.0)
_TAIL = (1.0 - CONFIDENCE) / 2.0
_MAX_NEWTON_STEPS = 100
_MAX_HALVINGS = 40
_TOLERANCE = 1e-18  # on the squared Newton decrement, about twice the gap to the optimum
# Below this decrement Newton is in its quadratic phase and the decrease of the objective is
# lost in rounding, so Armijo cannot judge the step: take it whole.
_FULL_STEP_DECREMENT = 1e-8
# Bootstrap chunk bound on resamples x max(players^2, pairs, group types): about 8 bytes
# each in several arrays at once, so tens of MB whatever the data size.
_MAX_BATCH_CELLS = 1_000_000
# A bootstrap side that reaches less than 0.01 Elo beyond the estimate measured nothing (the
# resamples did not spread: rounding is all that moved them).
_MEASURED = 0.01 / ELO_PER_NAT


# ---------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Rating:
    """A bot's rating with its ``CONFIDENCE`` interval and rank interval.

    ``estimate`` is the maximum-likelihood Elo: ``+inf`` / ``-inf`` when it diverges (the
    bot scored every point / no point against the rest), NaN when the bot has no comparison
    with the reference of its group.  ``lower`` / ``upper`` are ``-inf`` / ``+inf`` on an
    open side.  Ranks run from 1 (best) within the bot's connected group.  ``group`` numbers
    the connected groups (1 the largest) when games do not link the whole pool, else 0:
    ratings of different groups are not comparable.  ``reference`` marks the bot the others
    are measured from (the anchor, or a group's only finitely rated bot): its rating is 0
    by definition, with no interval.  ``met`` is False for a bot that never met another.
    """

    player: str
    estimate: float
    lower: float
    upper: float
    games: int
    rank_best: int = 1
    rank_worst: int = 1
    provisional: bool = False
    group: int = 0
    reference: bool = False
    met: bool = True

    @property
    def bounded(self) -> Literal["both", "lower", "upper", "none"]:
        """Which bounds are finite."""
        low, high = math.isfinite(self.lower), math.isfinite(self.upper)
        return "both" if low and high else "lower" if low else "upper" if high else "none"

    @property
    def kind(self) -> Literal["interval", "unbeaten", "winless", "reference",
                              "not comparable", "unrated"]:
        """What the rating is: an estimate with an interval; ``unbeaten`` / ``winless``
        (the estimate diverges: only a lower / upper bound exists); the ``reference``
        others are measured from (0, no interval); ``not comparable`` with its group's
        reference; ``unrated`` (it never met another bot)."""
        if not self.met:
            return "unrated"
        if math.isnan(self.estimate):
            return "not comparable"
        if math.isinf(self.estimate):
            return "unbeaten" if self.estimate > 0 else "winless"
        return "reference" if self.reference else "interval"

    @property
    def elo(self) -> float:
        """A finite stand-in for ``estimate`` (the finite bound when it diverges, else 0),
        kept for callers that print three finite numbers; new code uses :meth:`format`."""
        for value in (self.estimate, self.lower, self.upper):
            if math.isfinite(value):
                return value
        return 0.0

    @property
    def low(self) -> float:
        """``lower``, or :attr:`elo` when open (see :attr:`elo`)."""
        return self.lower if math.isfinite(self.lower) else self.elo

    @property
    def high(self) -> float:
        """``upper``, or :attr:`elo` when open (see :attr:`elo`)."""
        return self.upper if math.isfinite(self.upper) else self.elo

    def format(self) -> str:
        """The rating as every table, page and chart shows it (the one formatting function).

        ``+123 [+80, +170]``; ``> +600 (unbeaten)`` / ``< -450 (winless)`` when the estimate
        diverges and only one bound exists; ``+0 (reference)`` for the bot the others are
        measured from; ``not comparable`` without a comparison; ``unrated (no opponent)``.
        Notes in parentheses add ``few games`` (provisional) and ``group N`` (a pool whose
        groups never met).  Never ``inf``, ``nan`` or an interval of no width.
        """
        notes: list[str] = []
        kind = self.kind
        if kind == "unrated":
            return "unrated (no opponent)"
        text: str = kind  # "not comparable"
        if kind in ("unbeaten", "winless"):
            above = kind == "unbeaten"
            bound = self.lower if above else self.upper
            text = (f"{'>' if above else '<'} {_signed(bound)}" if math.isfinite(bound)
                    else "no bound")
            notes.append(kind)
        elif kind == "reference":
            text = _signed(self.estimate)
            notes.append(kind)
        elif kind == "interval":
            text = _interval_text(self.estimate, self.lower, self.upper)
        if self.provisional:
            notes.append("few games")
        if self.group:
            notes.append(f"group {self.group}")
        return text + (f" ({'; '.join(notes)})" if notes else "")


def _interval_text(estimate: float, lower: float, upper: float) -> str:
    """``+12 [-3, +30]`` with as many decimals as keep the three numbers apart (up to 2);
    an open side as ``no lower bound`` / ``no upper bound``."""
    finite = [v for v in (lower, estimate, upper) if math.isfinite(v)]
    digits = next((d for d in range(3)
                   if len({_signed(v, d) for v in finite}) == len(finite)), 2)
    low = _signed(lower, digits) if math.isfinite(lower) else "no lower bound"
    high = _signed(upper, digits) if math.isfinite(upper) else "no upper bound"
    return f"{_signed(estimate, digits)} [{low}, {high}]"


def _signed(value: float, digits: int = 0) -> str:
    """``+12`` / ``-3`` (rounded first, so never ``-0``)."""
    text = f"{round(value, digits) + 0.0:+.{digits}f}"
    return "+" + text[1:] if float(text) == 0 else text


@dataclass(frozen=True)
class RatedPool:
    """Every bot's :class:`Rating`, best first, and the pairwise likelihood of superiority.

    ``los_matrix[i][j]`` is the share of bootstrap resamples in which ``ratings[i]`` is
    rated above ``ratings[j]`` (ties count half), NaN without resamples or when the two are
    not comparable (different connected groups).
    """

    ratings: tuple[Rating, ...]
    los_matrix: FloatArray = field(compare=False, repr=False)
    anchor: str | None = None
    bootstrap: int = 0

    def los(self, a: str, b: str) -> float:
        """Likelihood that ``a`` is stronger than ``b``."""
        order = {r.player: i for i, r in enumerate(self.ratings)}
        return float(self.los_matrix[order[a], order[b]])


# ---------------------------------------------------------------------------------------
# Public functions


@dataclass(frozen=True)
class PairOutcome:
    """One weighted virtual game between two players who sat at the same table.

    ``score`` is ``a``'s points (1 win, 0.5 draw, 0 loss) and ``game`` the table's index.
    """

    game: int
    a: str
    b: str
    score: float
    weight: float


def pairwise_outcomes(games: Sequence[Game]) -> list[PairOutcome]:
    """Split every table into its pairwise virtual games, weighted ``1 / (n - 1)``.

    Raises ``ValueError`` for an empty table.  A player seated twice at one table
    (one bot version in two seats) plays no virtual game against itself.
    """
    outcomes = []
    _encode(games)  # the same errors as the fit
    for index, game in enumerate(games):
        weight = 1.0 / (len(game) - 1) if len(game) > 1 else 0.0
        for (a, place_a), (b, place_b) in itertools.combinations(game, 2):
            if a != b:
                outcomes.append(PairOutcome(index, a, b, _score(place_a, place_b), weight))
    return outcomes


def fit_elo(games: Sequence[Game], *, anchor: str | None = None) -> dict[str, float]:
    """Maximum-likelihood Elo of every player in ``games``, in order of first appearance:
    ``+inf`` / ``-inf`` where it diverges, NaN for a player without comparison (see
    :class:`Rating`); centred on the pool mean of the finite ones, or 0 for ``anchor``."""
    pool = _Pool.build(games)
    if not pool.players:
        return {}
    point = _PointFit.build(pool, anchor)
    return dict(zip(pool.players, (point.values * ELO_PER_NAT).tolist(), strict=True))


def rate(games: Sequence[Game], *, bootstrap: int = 200, seed: int = 0,
         anchor: str | None = None) -> list[Rating]:
    """The ratings of :func:`rate_pool`, best first."""
    return list(rate_pool(games, bootstrap=bootstrap, seed=seed, anchor=anchor).ratings)


def rate_pool(games: Sequence[Game], *, bootstrap: int = 200, seed: int = 0,
              anchor: str | None = None) -> RatedPool:
    """Ratings with ``CONFIDENCE`` intervals, rank intervals and LOS; best first.

    ``games`` are tables of ``(player, place)``; a :class:`RatableGame` also names its
    duplicate group.  Intervals are the 2.5 and 97.5 percentiles over ``bootstrap``
    resamples of whole groups (deterministic for a ``seed``), one-sided bounds where the
    estimate diverges; with ``bootstrap=0`` a finite interval collapses to the estimate.
    ``anchor`` names the bot rated 0 (default: the pool mean is 0).
    """
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    pool = _Pool.build(games)
    if not pool.players:
        return RatedPool((), np.empty((0, 0)), anchor, bootstrap)
    point = _PointFit.build(pool, anchor)
    samples = _bootstrap(pool, point, bootstrap, seed)
    lower, upper = _intervals(point, samples)
    best, worst = _rank_intervals(lower, upper, point.component, point.rated)
    groups = _group_numbers(point.component, point.rated)
    ratings = [
        Rating(player, float(e), float(lo), float(hi), int(g), int(b), int(w),
               bool(g < PROVISIONAL_GAMES), int(group), met=bool(met))
        for player, e, lo, hi, g, b, w, group, met in zip(
            pool.players, point.values * ELO_PER_NAT, lower * ELO_PER_NAT,
            upper * ELO_PER_NAT, pool.games, best, worst, groups, point.rated, strict=True)
    ]
    if anchor is None:
        ratings = _open_lone_references(ratings, point.component)
    ratings = [dataclasses.replace(r, reference=True) if _is_reference(r) else r
               for r in ratings]
    order = sorted(range(len(ratings)), key=lambda i: _rank_key(ratings[i]))
    los = _los(samples, point.component)[np.ix_(order, order)]
    return RatedPool(tuple(ratings[i] for i in order), los, anchor, bootstrap)


def _is_reference(r: Rating) -> bool:
    """A finite rating whose interval has no width: the bot its group is measured from
    (every other finite rating has a positive curvature half-width)."""
    return math.isfinite(r.estimate) and r.lower == r.estimate == r.upper


def _group_numbers(component: IntArray, rated: BoolArray) -> IntArray:
    """1, 2, ... for the connected groups of rated bots (most bots first, then first seen)
    when there are several, else 0; 0 for a bot that met no one."""
    labels = sorted(set(component[rated].tolist()),
                    key=lambda c: (-int((component == c).sum()), int(np.argmax(component == c))))
    numbers = np.zeros(len(component), dtype=np.int64)
    if len(labels) > 1:
        for number, label in enumerate(labels, start=1):
            numbers[(component == label) & rated] = number
    return numbers


def _distinct(values: IntArray) -> list[int]:
    """The distinct values of a small integer array, in order: ``np.unique`` without
    its check for a masked array, which imports ``numpy.ma`` (15 ms of CPU, a tenth of
    a small tournament's closing standings)."""
    return sorted(set(values.tolist()))


def _open_lone_references(ratings: list[Rating], component: IntArray) -> list[Rating]:
    """:func:`_open_lone_reference` within each connected group."""
    out = list(ratings)
    for label in _distinct(component):
        members = np.flatnonzero(component == label).tolist()
        for i, rating in zip(members, _open_lone_reference([ratings[i] for i in members]),
                             strict=True):
            out[i] = rating
    return out


def _open_lone_reference(ratings: list[Rating]) -> list[Rating]:
    """When one bot of a group beat every other (or lost to every other) every time, it
    is the group's only finitely rated bot, so the mean of the finite ratings pins it at
    exactly 0 with a zero-width interval, a value that measures nothing.  Then centre
    between it and the nearest of the others instead: it gets a one-sided bound
    (``> +70``) and the others' bounds move by the same amount (``< -70``)."""
    finite = [r for r in ratings if math.isfinite(r.estimate)]
    others = [r for r in ratings if r not in finite]
    if len(finite) != 1 or not others:
        return ratings
    if all(r.estimate == -math.inf and math.isfinite(r.upper) for r in others):
        shift = -max(r.upper for r in others) / 2
        lone = dataclasses.replace(finite[0], estimate=math.inf, lower=shift, upper=math.inf)
    elif all(r.estimate == math.inf and math.isfinite(r.lower) for r in others):
        shift = -min(r.lower for r in others) / 2
        lone = dataclasses.replace(finite[0], estimate=-math.inf, lower=-math.inf, upper=shift)
    else:
        return ratings
    return [lone if r is finite[0] else
            dataclasses.replace(r, lower=r.lower + shift, upper=r.upper + shift)
            for r in ratings]


def _rank_key(r: Rating) -> tuple[bool, int, float, float, float, str]:
    estimate = 0.0 if math.isnan(r.estimate) else -r.estimate
    return (math.isnan(r.estimate), r.group, estimate, -r.lower, -r.upper, r.player)


def _score(place_a: int, place_b: int) -> float:
    if place_a == place_b:
        return 0.5
    return 1.0 if place_a < place_b else 0.0


# ---------------------------------------------------------------------------------------
# Data: pair statistics per type of duplicate group


@dataclass(frozen=True)
class _Tables:
    """Games of one size ``n``: player indices and places (games x n), and group indices."""

    players: IntArray
    places: IntArray
    groups: IntArray


def _encode(games: Sequence[Game]) -> tuple[dict[str, int], list[_Tables]]:
    """Player indices (first appearance) and the games as arrays, one set per table size.

    One flat pass over all seats, then numpy per table size (a loop per game would cost
    more than the whole fit)."""
    sizes = np.fromiter((len(game) for game in games), dtype=np.int64, count=len(games))
    if (sizes == 0).any():
        raise ValueError("a game needs at least one seat")
    seats = [seat for game in games for seat in getattr(game, "seats", game)]
    index: dict[str, int] = {}
    players = np.fromiter((index.setdefault(player, len(index)) for player, _ in seats),
                          dtype=np.int64, count=len(seats))
    places = np.fromiter((place for _, place in seats), dtype=np.int64, count=len(seats))
    groups = _group_indices(games)
    starts = np.cumsum(sizes) - sizes
    tables = []
    for n in _distinct(sizes):
        rows = np.flatnonzero(sizes == n)
        cells = starts[rows][:, None] + np.arange(n)
        tables.append(_Tables(players[cells], places[cells], groups[rows]))
    return index, tables


def _group_indices(games: Sequence[Game]) -> IntArray:
    """A number per duplicate group; a game without a group is a group of its own."""
    ids: dict[Hashable, int] = {}
    numbers = []
    for game in games:
        key = getattr(game, "group", None)
        number = len(ids) if key is None else ids.setdefault(key, len(ids))
        if key is None:
            ids[object()] = number
        numbers.append(number)
    return np.array(numbers, dtype=np.int64)


def _pair_records(tables: list[_Tables]) -> tuple[IntArray, IntArray, IntArray, FloatArray,
                                                  FloatArray]:
    """Every virtual game as (group, a, b, points of a, weight) with ``a < b``; a pair
    of seats held by one player is none."""
    parts: list[tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray]] = []
    for t in tables:
        n = t.players.shape[1]
        for s, u in itertools.combinations(range(n), 2):
            i, j = t.players[:, s], t.players[:, u]
            score = np.where(t.places[:, s] == t.places[:, u], 0.5,
                             (t.places[:, s] < t.places[:, u]).astype(np.float64))
            score = np.where(i > j, 1.0 - score, score)
            weight = np.full(len(i), 1.0 / (n - 1))
            other = i != j
            parts.append((t.groups[other], np.minimum(i, j)[other], np.maximum(i, j)[other],
                          (weight * score)[other], weight[other]))
    if not parts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, empty.astype(np.float64), empty.astype(np.float64)
    group, a, b, points, weight = (np.concatenate(column) for column in zip(*parts, strict=True))
    return group, a, b, points, weight


@dataclass(frozen=True)
class _Pool:
    """The games reduced to pair statistics per *type* of duplicate group.

    Pair ``k`` is players ``first[k] < second[k]``.  Groups whose virtual games sum to the
    same points and weights on the same pairs are one type; ``type_points[t, k]`` /
    ``type_totals[t, k]`` are the points of ``first[k]`` and the total weight on pair ``k``
    in one group of type ``t``, and ``type_counts[t]`` the number of such groups.  A
    resample of the groups is then a row of type multiplicities.
    """

    players: tuple[str, ...]
    games: IntArray
    first: IntArray
    second: IntArray
    type_points: _Sparse
    type_totals: _Sparse
    type_counts: IntArray

    @classmethod
    def build(cls, games: Sequence[Game]) -> _Pool:
        index, tables = _encode(games)
        n = len(index)
        seats = [t.players.ravel() for t in tables]
        played = np.bincount(np.concatenate(seats), minlength=n) if seats else np.zeros(0)
        group, a, b, points, weight = _pair_records(tables)
        pair_codes, pair = np.unique(a * n + b, return_inverse=True)
        pairs = len(pair_codes)
        cell_codes, cell = np.unique(group * pairs + pair, return_inverse=True)
        cells = (cell_codes // pairs, cell_codes % pairs,
                 _sums(cell, points), _sums(cell, weight))
        rows, columns, type_points, type_totals, counts = _group_types(*cells)

        def matrix(values: FloatArray) -> _Sparse:
            return _Sparse(rows, columns, values, pairs)

        return cls(tuple(index), played.astype(np.int64), pair_codes // max(n, 1),
                   pair_codes % max(n, 1), matrix(type_points), matrix(type_totals), counts)

    def stats(self, counts: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Pair points and totals (rows x pairs) for rows of type multiplicities."""
        return self.type_points.times(counts), self.type_totals.times(counts)


@dataclass(frozen=True)
class _Sparse:
    """A sparse matrix as entries (row, column, value) with ``columns`` columns, for the
    one product the fit needs (numpy alone: scipy.sparse costs half a second to import)."""

    rows: IntArray
    cols: IntArray
    values: FloatArray
    columns: int

    def times(self, weights: FloatArray) -> FloatArray:
        """``weights @ self`` (rows of weights over this matrix's rows), in chunks."""
        out = np.empty((len(weights), self.columns))
        step = max(1, _MAX_BATCH_CELLS // max(len(self.rows), 1))
        for start in range(0, len(weights), step):
            chunk = weights[start : start + step]
            out[start : start + step] = _scatter(chunk[:, self.rows] * self.values, self.cols,
                                                 self.columns)
        return out


def _scatter(values: FloatArray, index: IntArray, size: int) -> FloatArray:
    """Per row of ``values`` (rows x k), the sums of its entries by ``index`` (k) into
    ``size`` bins: rows x size."""
    rows = len(values)
    bins = (np.arange(rows)[:, None] * size + index).ravel()
    sums = np.bincount(bins, weights=values.ravel(), minlength=rows * size)
    return np.asarray(sums, dtype=np.float64).reshape(rows, size)


def _sums(index: IntArray, values: FloatArray) -> FloatArray:
    return np.asarray(np.bincount(index, weights=values), dtype=np.float64)


def _group_types(group: IntArray, pair: IntArray, points: FloatArray, totals: FloatArray
                 ) -> tuple[IntArray, IntArray, FloatArray, FloatArray, IntArray]:
    """Distinct groups by content, as sparse entries (type, pair, points, totals) and the
    number of groups of each type.

    The cells come sorted by group then pair, so a group's cells are one run; groups with
    ``r`` cells are rows of ``3 r`` numbers, deduplicated at once by ``np.unique``.
    """
    blocks: list[tuple[IntArray, IntArray, FloatArray, FloatArray, IntArray]] = []
    _, starts, sizes = np.unique(group, return_index=True, return_counts=True)
    types = 0
    for r in _distinct(sizes):
        cells = starts[sizes == r][:, None] + np.arange(r)
        rows = np.concatenate([pair[cells], points[cells], totals[cells]], axis=1)
        distinct, count = np.unique(rows, axis=0, return_counts=True)
        blocks.append((np.repeat(np.arange(types, types + len(count)), r),
                       distinct[:, :r].ravel().astype(np.int64), distinct[:, r : 2 * r].ravel(),
                       distinct[:, 2 * r :].ravel(), count))
        types += len(count)
    if not blocks:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty.astype(np.float64), empty.astype(np.float64), empty
    type_of, type_pair, type_points, type_totals, counts = (
        np.concatenate(column) for column in zip(*blocks, strict=True))
    return type_of, type_pair, type_points, type_totals, counts


# ---------------------------------------------------------------------------------------
# The fit: within strongly connected components, then placed against a reference


@dataclass(frozen=True)
class _Fit:
    """Maximum-likelihood fits of rows of pair statistics (one row per resample).

    ``strong`` labels (unique across rows) the strongly connected components of the graph
    "i scored against j"; ``theta`` (natural units: Elo / ELO_PER_NAT) is the fit on the
    games within components, each centred on 0.  Games across components are all won by
    one side, so this is the limit of the likelihood's maximum: those games are won with
    probability 1 when the components drift apart.
    """

    theta: FloatArray
    strong: IntArray
    #: ``reach[row, i, j]``: j is reachable from i (i scored against ... against j), or i == j.
    reach: BoolArray

    @classmethod
    def solve(cls, first: IntArray, second: IntArray, points: FloatArray, totals: FloatArray,
              start: FloatArray) -> _Fit:
        rows, n = len(points), len(start)
        reach = _closure(_score_graph(first, second, points, totals, n))
        # Strongly connected: each reaches the other; labelled by the component's first
        # bot, offset by row so that labels are unique across rows.
        mutual = reach & reach.transpose(0, 2, 1)
        strong = mutual.argmax(axis=2) + (np.arange(rows) * n)[:, None]
        within = strong[:, first] == strong[:, second]
        problem = _Problem.build(first, second, points * within, totals * within, strong)
        theta = _newton(problem, np.tile(start, (rows, 1)))
        return cls(_centre(theta, strong), strong, reach)

    def place(self, reps: IntArray, component: IntArray, align: BoolArray,
              target: FloatArray) -> FloatArray:
        """Ratings (natural units) relative to one reference component per connected group.

        ``reps[row, c]`` is a bot of group ``c``'s reference component.  That component
        is shifted so that its bots in ``align`` have the mean of their ``target``; every
        other bot is ``+inf`` above it (it reaches the reference in the graph), ``-inf``
        below, NaN when neither (no comparison in this row).
        """
        in_reference = self.strong == np.take_along_axis(self.strong, reps, axis=1)[:, component]
        mask = in_reference & align
        groups = np.eye(reps.shape[1])[component]
        gap = np.where(mask, target - self.theta, 0.0) @ groups
        shift = gap / np.maximum(mask @ groups, 1)
        above, below = _reachable(self.reach, reps)
        placed = np.where(above, np.inf, np.where(below, -np.inf, np.nan))
        return np.where(in_reference, self.theta + shift[:, component], placed)


def _score_graph(first: IntArray, second: IntArray, points: FloatArray, totals: FloatArray,
                 n: int) -> BoolArray:
    """Per row, the graph over players: ``graph[row, i, j]`` when i scored against j (a
    relative slack keeps rounding from making an edge)."""
    graph = np.zeros((len(points), n, n), dtype=bool)
    won, lost = points > 1e-12 * totals, totals - points > 1e-12 * totals
    row, pair = np.nonzero(won)
    graph[row, first[pair], second[pair]] = True
    row, pair = np.nonzero(lost)
    graph[row, second[pair], first[pair]] = True
    return graph


def _closure(graph: BoolArray) -> BoolArray:
    """Reflexive transitive closure of each row's graph, by repeated squaring (as costly
    as one Newton step of the fit, which solves rows x n x n systems)."""
    n = graph.shape[1]
    reach = (graph | np.eye(n, dtype=bool)).astype(np.float32)
    while True:
        wider = (reach @ reach > 0).astype(np.float32)
        if np.array_equal(wider, reach):
            return reach > 0
        reach = wider


def _reachable(reach: BoolArray, reps: IntArray) -> tuple[BoolArray, BoolArray]:
    """Bots that reach a row's reference bots (above them) and that they reach (below)."""
    rows = np.arange(len(reps))[:, None]
    above = np.asarray(reach[rows, :, reps].any(axis=1), dtype=bool)
    below = np.asarray(reach[rows, reps, :].any(axis=1), dtype=bool)
    return above, below


def _centre(theta: FloatArray, labels: IntArray) -> FloatArray:
    sums = np.bincount(labels.ravel(), weights=theta.ravel())
    sizes = np.bincount(labels.ravel())
    return theta - (sums / np.maximum(sizes, 1))[labels]


def _softplus(x: FloatArray) -> FloatArray:
    return np.logaddexp(0.0, x)


def _sigmoid(x: FloatArray) -> FloatArray:
    return np.exp(-_softplus(-x))


@dataclass(frozen=True)
class _Problem:
    """Batched objective in natural units, one row per resample.

    Negative weighted log-likelihood plus ``0.5 * sum over components of (sum of theta)**2``:
    the likelihood ignores a shift of a component, so this term only fixes that shift (at
    mean 0) and makes the Hessian regular.
    """

    first: IntArray
    second: IntArray
    wins: FloatArray
    totals: FloatArray
    same_component: FloatArray
    signs: FloatArray
    ends: IntArray

    @classmethod
    def build(cls, first: IntArray, second: IntArray, wins: FloatArray, totals: FloatArray,
              labels: IntArray) -> _Problem:
        return cls(
            first=first,
            second=second,
            wins=wins,
            totals=totals,
            same_component=(labels[:, :, None] == labels[:, None, :]).astype(np.float64),
            signs=np.concatenate([np.ones(len(first)), -np.ones(len(first))]),
            ends=np.concatenate([first, second]),
        )

    def _diffs(self, theta: FloatArray) -> FloatArray:
        return np.asarray(theta[:, self.first] - theta[:, self.second])

    def objective(self, theta: FloatArray) -> FloatArray:
        x = self._diffs(theta)
        nll = (self.wins * _softplus(-x) + (self.totals - self.wins) * _softplus(x)).sum(axis=1)
        shift = 0.5 * np.einsum("bi,bij,bj->b", theta, self.same_component, theta)
        return np.asarray(nll + shift)

    def derivatives(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        p = _sigmoid(self._diffs(theta))
        residual = self.totals * p - self.wins
        curvature = self.totals * p * (1.0 - p)
        n = theta.shape[1]
        both = np.concatenate([residual, residual], axis=1)
        grad = _scatter(both * self.signs, self.ends, n)
        grad += np.einsum("bij,bj->bi", self.same_component, theta)
        hess = self.same_component.copy()
        hess[:, self.first, self.second] -= curvature
        hess[:, self.second, self.first] -= curvature
        hess[:, np.arange(n), np.arange(n)] += _scatter(
            np.concatenate([curvature, curvature], axis=1), self.ends, n)
        return grad, hess


def _newton(problem: _Problem, theta: FloatArray) -> FloatArray:
    """Damped Newton (Armijo backtracking) on all rows at once; the objective is convex."""
    for _ in range(_MAX_NEWTON_STEPS):
        grad, hess = problem.derivatives(theta)
        step = -np.linalg.solve(hess, grad[..., None])[..., 0]
        slope = (grad * step).sum(axis=1)
        active = -slope > _TOLERANCE
        if not active.any():
            break
        theta = theta + _line_search(problem, theta, step, slope, active)[:, None] * step
    return theta


def _line_search(problem: _Problem, theta: FloatArray, step: FloatArray, slope: FloatArray,
                 active: BoolArray) -> FloatArray:
    base = problem.objective(theta)
    settled = ~active | (-slope < _FULL_STEP_DECREMENT)
    length = np.ones(len(theta))
    for _ in range(_MAX_HALVINGS):
        trial = problem.objective(theta + length[:, None] * step)
        accepted = settled | (trial <= base + 1e-4 * length * slope)
        if accepted.all():
            break
        length = np.where(accepted, length, 0.5 * length)
    return np.where(active, length, 0.0)


# ---------------------------------------------------------------------------------------
# Point estimate, one-sided bounds, bootstrap, intervals, LOS, ranks


@dataclass(frozen=True)
class _PointFit:
    """The fit on all games, placed against each connected group's reference component.

    The reference of a group is the anchor's component when the anchor is in the group,
    else its strongly connected component with the most bots (then the most games within,
    then the most games in all, then the first bot).  ``references[c]`` are the bots a
    resample's reference is chosen by (the anchor alone, or the reference component);
    ``align`` marks every such bot.
    ``lower`` / ``upper`` hold the one-sided bounds of the bots outside the references,
    ``half`` the curvature half-widths of those inside (:func:`_curvature_half_widths`).
    """

    values: FloatArray
    theta: FloatArray
    component: IntArray
    rated: BoolArray
    references: list[IntArray]
    align: BoolArray
    lower: FloatArray
    upper: FloatArray
    half: FloatArray

    @classmethod
    def build(cls, pool: _Pool, anchor: str | None) -> _PointFit:
        n = len(pool.players)
        points, totals = pool.stats(pool.type_counts[None, :].astype(np.float64))
        fit = _Fit.solve(pool.first, pool.second, points, totals, np.zeros(n))
        component, rated = _groups(pool, totals[0])
        chosen = _anchor_index(pool, anchor, rated)
        strong = fit.strong[0]
        reps = _reference_reps(pool, strong, component, totals[0], chosen)
        references = [np.array([r]) if r == chosen else np.flatnonzero(strong == strong[r])
                      for r in reps]
        align = np.zeros(n, dtype=bool)
        align[np.concatenate(references)] = True
        values = fit.place(reps[None, :], component, align, np.zeros(n))[0]
        values[~rated] = np.nan
        lower, upper = _one_sided(pool, fit.theta[0], strong, values, points[0], totals[0])
        half = _curvature_half_widths(pool, fit.theta[0], strong, references, totals[0])
        return cls(values, fit.theta[0], component, rated, references, align, lower, upper,
                   half)


def _curvature_half_widths(pool: _Pool, theta: FloatArray, strong: IntArray,
                           references: list[IntArray], totals: FloatArray) -> FloatArray:
    """``CONFIDENCE`` half-widths (natural units) of the ratings in each reference component
    from the likelihood's curvature there (observed information, as a Wald interval on the
    logistic scale); 0 elsewhere.  A rating is its bot's ``theta`` minus the mean over
    the aligned bots (the component, or the anchor alone), whose variance is
    ``G_ii - 2 (G w)_i + w' G w`` with ``G`` the pseudo-inverse of the component's
    Hessian (a weighted graph Laplacian) and ``w`` the aligned bots' averaging weights."""
    half = np.zeros(len(theta))
    z = NormalDist().inv_cdf(1.0 - _TAIL)
    for aligned in references:
        members = np.flatnonzero(strong == strong[aligned[0]])
        if len(members) < 2:
            continue
        position = np.full(len(theta), -1)
        position[members] = np.arange(len(members))
        i, j = position[pool.first], position[pool.second]
        use = (i >= 0) & (j >= 0) & (totals > 0)
        p = _sigmoid(theta[pool.first[use]] - theta[pool.second[use]])
        curvature = totals[use] * p * (1.0 - p)
        hessian = np.zeros((len(members), len(members)))
        np.add.at(hessian, (i[use], j[use]), -curvature)
        np.add.at(hessian, (j[use], i[use]), -curvature)
        hessian[np.diag_indices(len(members))] = -hessian.sum(axis=1)
        inverse = np.linalg.pinv(hessian, hermitian=True)
        weights = np.zeros(len(members))
        weights[position[aligned]] = 1.0 / len(aligned)
        spread = inverse @ weights
        variance = np.diag(inverse) - 2 * spread + weights @ spread
        half[members] = z * np.sqrt(np.clip(variance, 0.0, None))
    return half


def _groups(pool: _Pool, totals: FloatArray) -> tuple[IntArray, BoolArray]:
    """Connected group of each bot in the graph of pairs that met, and whether the bot met
    anyone (a bot alone in its group has no rating)."""
    n, met = len(pool.players), totals > 0
    a, b = pool.first[met], pool.second[met]
    # Each bot takes the least label of its neighbours until none changes; components are
    # then numbered by their first bot, as scipy's connected_components numbers them.
    label = np.arange(n)
    while True:
        lower = label.copy()
        np.minimum.at(lower, a, label[b])
        np.minimum.at(lower, b, label[a])
        lower = lower[lower]
        if np.array_equal(lower, label):
            break
        label = lower
    component = np.unique(label, return_inverse=True)[1].reshape(n)
    return component.astype(np.int64), np.bincount(component, minlength=n)[component] > 1


def _anchor_index(pool: _Pool, anchor: str | None, rated: BoolArray) -> int | None:
    if anchor is None:
        return None
    if anchor not in pool.players:
        raise ValueError(f"anchor {anchor!r} is not in the games")
    index = pool.players.index(anchor)
    if not rated[index]:
        raise ValueError(f"anchor {anchor!r} never met another player")
    return index


def _reference_reps(pool: _Pool, strong: IntArray, component: IntArray, totals: FloatArray,
                    anchor: int | None) -> IntArray:
    """A bot of each group's reference component (see :class:`_PointFit`)."""
    size = np.bincount(strong)
    inside = strong[pool.first] == strong[pool.second]
    within = np.bincount(strong[pool.first], weights=totals * inside, minlength=len(size))
    ends = np.concatenate([strong[pool.first], strong[pool.second]])
    played = np.bincount(ends, weights=np.concatenate([totals, totals]), minlength=len(size))
    reps: list[int] = []
    for c in range(int(component.max()) + 1):
        if anchor is not None and component[anchor] == c:
            reps.append(anchor)
            continue
        members = np.flatnonzero(component == c)
        reps.append(int(max(members, key=lambda i: (
            size[strong[i]], within[strong[i]], played[strong[i]], -i))))
    return np.array(reps, dtype=np.int64)


def _resample_reps(strong: IntArray, references: list[IntArray]) -> IntArray:
    """Per row and group: the reference bot whose component holds most reference bots."""
    reps = np.empty((len(strong), len(references)), dtype=np.int64)
    for c, members in enumerate(references):
        labels = strong[:, members]
        votes = (labels[:, :, None] == labels[:, None, :]).sum(axis=2)
        reps[:, c] = members[votes.argmax(axis=1)]
    return reps


def _one_sided(pool: _Pool, theta: FloatArray, strong: IntArray, values: FloatArray,
               points: FloatArray, totals: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bounds of the bots rated ``+inf`` (lower) and ``-inf`` (upper); NaN for the finite
    ones (their interval comes from the bootstrap), infinite for the rest.  A bot at
    ``-inf`` is one at ``+inf`` of the negated ratings, scoring the points it conceded."""
    lost = totals - points
    lower = _lower_bounds(pool, theta, strong, values, (points, lost, totals))
    upper = -_lower_bounds(pool, -theta, strong, -values, (lost, points, totals))
    finite = np.isfinite(values)
    return np.where(finite, np.nan, lower), np.where(finite, np.nan, upper)


def _lower_bounds(pool: _Pool, theta: FloatArray, strong: IntArray, values: FloatArray,
                  scores: tuple[FloatArray, FloatArray, FloatArray]) -> FloatArray:
    """Lower bounds of the components rated ``+inf``, from the bottom up, ``-inf`` elsewhere
    (``upper`` is ``+inf`` for these bots).

    Such a component only ever scored against the bots outside it.  Its bound is the shift
    ``d`` of its fitted ratings at which the points it scored against bots of known rating
    (the reference's, or another component's bound once found: the least favourable value)
    have weighted likelihood ``(1 - CONFIDENCE) / 2``.
    """
    known = np.where(np.isfinite(values), values, np.nan)
    bound = np.full(len(values), -np.inf)
    pending = sorted(set(strong[values == np.inf].tolist()))
    while pending:
        ready = {label: shift for label in pending
                 if (shift := _shift_bound(pool, label, theta, strong, known, values, scores))
                 is not None}
        if not ready:
            break
        for label, shift in ready.items():
            members = strong == label
            bound[members] = known[members] = shift + theta[members]
        pending = [label for label in pending if label not in ready]
    return bound


def _shift_bound(pool: _Pool, label: int, theta: FloatArray, strong: IntArray,
                 known: FloatArray, values: FloatArray,
                 scores: tuple[FloatArray, FloatArray, FloatArray]) -> float | None:
    """The bound's shift for one component; None while a bot it scored against is itself
    unbounded yet."""
    first_points, second_points, totals = scores
    inside = strong == label
    out_first = inside[pool.first] & ~inside[pool.second]
    out_second = inside[pool.second] & ~inside[pool.first]
    me = np.concatenate([pool.first[out_first], pool.second[out_second]])
    them = np.concatenate([pool.second[out_first], pool.first[out_second]])
    scored = np.concatenate([first_points[out_first], second_points[out_second]])
    weight = np.concatenate([totals[out_first], totals[out_second]])
    use = scored > 1e-12 * weight
    me, them, scored = me[use], them[use], scored[use]
    unknown = np.isnan(known[them])
    if (unknown & (values[them] == np.inf)).any():
        return None
    if unknown.all():
        return -math.inf
    return _solve_shift(theta[me[~unknown]] - known[them[~unknown]], scored[~unknown])


def _solve_shift(x: FloatArray, weight: FloatArray) -> float:
    """The ``d`` with ``sum(weight * log sigmoid(d + x)) = log((1 - CONFIDENCE) / 2)``."""

    def excess(d: float) -> float:
        return float(-(weight * _softplus(-(d + x))).sum() - math.log(_TAIL))

    low, high = -float(x.max()), 40.0 - float(x.min())
    while excess(low) > 0:
        low -= 10.0
    # Bisection (excess rises with d): scipy's brentq would cost its import.
    for _ in range(200):  # 1e-12 apart, or as near as floats get
        if high - low <= 1e-12:
            break
        middle = 0.5 * (low + high)
        if excess(middle) > 0:
            high = middle
        else:
            low = middle
    return 0.5 * (low + high)


def _bootstrap(pool: _Pool, point: _PointFit, bootstrap: int, seed: int) -> FloatArray:
    """Ratings (natural units) in ``bootstrap`` resamples of the groups, in chunks: each
    chunk is one multinomial draw of type counts and one batched fit."""
    n, groups = len(pool.players), int(pool.type_counts.sum())
    if bootstrap == 0 or groups == 0:
        return np.empty((0, n))
    rng = np.random.default_rng(seed)
    share = pool.type_counts / groups
    chunk = max(1, _MAX_BATCH_CELLS // max(n * n, len(share), len(pool.first)))
    parts = []
    for start in range(0, bootstrap, chunk):
        counts = rng.multinomial(groups, share, size=min(chunk, bootstrap - start))
        points, totals = pool.stats(counts.astype(np.float64))
        fit = _Fit.solve(pool.first, pool.second, points, totals, point.theta)
        reps = _resample_reps(fit.strong, point.references)
        parts.append(fit.place(reps, point.component, point.align, point.values))
    samples = np.concatenate(parts)
    samples[:, ~point.rated] = np.nan
    return samples


def _intervals(point: _PointFit, samples: FloatArray) -> tuple[FloatArray, FloatArray]:
    """For a finite estimate, each side from the bootstrap percentile interval (the order
    statistics just outside the tails, so infinite resamples need no arithmetic) where it
    measures that side, else from the curvature interval ``values +/- half``: a side at
    which the bot diverges in more than a tail of the resamples, or at which the resamples
    do not spread beyond the estimate (by 0.01 Elo: too few or too uniform groups), says
    nothing.  So a finite estimate lies strictly inside its interval unless it is the
    reference (half-width 0).  The one-sided bounds elsewhere."""
    values, finite = point.values, np.isfinite(point.values)
    lower = np.where(finite, values - point.half, point.lower)
    upper = np.where(finite, values + point.half, point.upper)
    seen = finite & ~np.isnan(samples).all(axis=0) if len(samples) else finite & False
    if seen.any():
        low = np.nanpercentile(samples[:, seen], 100 * _TAIL, axis=0, method="lower")
        high = np.nanpercentile(samples[:, seen], 100 * (1 - _TAIL), axis=0, method="higher")
        estimate = values[seen]
        measured_low = np.isfinite(low) & (low < estimate - _MEASURED)
        measured_high = np.isfinite(high) & (high > estimate + _MEASURED)
        lower[seen] = np.where(measured_low, low, lower[seen])
        upper[seen] = np.where(measured_high, high, upper[seen])
    return lower, upper


def _los(samples: FloatArray, component: IntArray) -> FloatArray:
    """Share of resamples with row bot above column bot (ties half), among those rating
    both; NaN across connected groups."""
    rows, n = samples.shape
    above, both = np.zeros((n, n)), np.zeros((n, n))
    step = max(1, _MAX_BATCH_CELLS // max(n * n, 1))
    for start in range(0, rows, step):
        a, b = samples[start : start + step, :, None], samples[start : start + step, None, :]
        above += ((a > b) + 0.5 * (a == b)).sum(axis=0)
        both += (~np.isnan(a) & ~np.isnan(b)).sum(axis=0)
    los = np.divide(above, both, out=np.full((n, n), np.nan), where=both > 0)
    los[component[:, None] != component[None, :]] = np.nan
    return los


def _rank_intervals(lower: FloatArray, upper: FloatArray, component: IntArray,
                    rated: BoolArray) -> tuple[IntArray, IntArray]:
    """Within each connected group, best rank: 1 + bots whose interval lies wholly above;
    worst: all but those below.  A bot that met no one has every rank of the pool."""
    same = component[:, None] == component[None, :]
    best = 1 + ((lower[None, :] > upper[:, None]) & same).sum(axis=1)
    worst = same.sum(axis=1) - ((upper[None, :] < lower[:, None]) & same).sum(axis=1)
    best = np.where(rated, best, 1)
    worst = np.where(rated, worst, len(lower))
    return best.astype(np.int64), worst.astype(np.int64)
