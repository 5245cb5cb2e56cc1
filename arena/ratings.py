"""Elo ratings by maximum likelihood, with bootstrap confidence intervals.

Every finished table is turned into pairwise *virtual games*: each pair of players at a
table of ``n`` players is one game won by the better place (equal places are a draw, half a
win each), weighted ``1 / (n - 1)`` so that a table counts as much in total as one game per
player.  Ratings are the maximum-likelihood Bradley-Terry fit on the standard Elo scale,
``P(i beats j) = 1 / (1 + 10 ** ((Rj - Ri) / 400))``, centred on mean 0.

The fit is a batched damped Newton iteration on the negative weighted log-likelihood, so the
bootstrap refits all resamples at once.  Edge cases:

* When some player's maximum-likelihood rating is infinite (all wins or all losses against
  a group, detected exactly from the win/loss graph), every player gets a tiny symmetric
  prior: a draw of weight :data:`PRIOR_WEIGHT` against a virtual 0-rated opponent.  It is
  added only in that case, so well-posed data get the exact maximum-likelihood fit.
* Ratings in different connected components of the comparison graph are not comparable;
  each component is centred on mean 0 on its own (so the overall mean is 0 too).
* A player who never met an opponent (only ever alone at a table) is rated 0.

Stored games become tables to rate through :func:`ratable_games`, which leaves out the
games without a result (every seat faulted) and those that seat one player twice.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.sparse.csgraph import connected_components

Game = Sequence[tuple[str, int]]
FloatArray = NDArray[np.floating[Any]]
IntArray = NDArray[np.int64]

PRIOR_WEIGHT = 0.01
"""Weight of the virtual draw against a 0-rated opponent, used only when the MLE diverges."""

_ELO_PER_NAT = 400.0 / math.log(10.0)
_MAX_NEWTON_STEPS = 100
_MAX_HALVINGS = 40
_TOLERANCE = 1e-18  # on the squared Newton decrement, about twice the gap to the optimum
# Below this decrement Newton is in its quadratic phase and the decrease of the objective is
# lost in rounding, so Armijo cannot judge the step: take it whole.
_FULL_STEP_DECREMENT = 1e-8
_MAX_BATCH_CELLS = 4_000_000  # bootstrap chunk size bound: resamples x players x players


class TableResult(Protocol):
    """A finished game as stored (e.g. ``arena.storage.StoredGame``)."""

    @property
    def seats(self) -> Sequence[str]: ...

    @property
    def places(self) -> Sequence[int]: ...

    @property
    def no_result(self) -> bool: ...


def ratable_games(games: Iterable[TableResult]) -> list[Game]:
    """The (player, place) tables to rate: every game but those without a result
    (every seat faulted, so their places say nothing) and those that seat one player
    twice (a player cannot play itself)."""
    return [list(zip(game.seats, game.places, strict=True)) for game in games
            if not game.no_result and len(set(game.seats)) == len(game.seats)]


@dataclass(frozen=True)
class Rating:
    """A player's rating with its 95% bootstrap confidence interval."""

    player: str
    elo: float
    low: float
    high: float
    games: int


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

    Raises ``ValueError`` for an empty table or a player seated twice at one table.
    """
    outcomes = []
    for index, game in enumerate(games):
        _check_game(game)
        weight = 1.0 / (len(game) - 1) if len(game) > 1 else 0.0
        for (a, place_a), (b, place_b) in itertools.combinations(game, 2):
            outcomes.append(PairOutcome(index, a, b, _score(place_a, place_b), weight))
    return outcomes


def fit_elo(games: Sequence[Game]) -> dict[str, float]:
    """Maximum-likelihood Elo rating of every player in ``games`` (mean 0)."""
    design = _Design.build(games)
    if not design.players:
        return {}
    elo = design.fit(np.ones((1, design.n_games)))[0]
    return dict(zip(design.players, elo.tolist(), strict=True))


def rate(games: Sequence[Game], *, bootstrap: int = 200, seed: int = 0) -> list[Rating]:
    """Ratings with 95% confidence intervals, best first.

    The intervals are the 2.5 and 97.5 percentiles of each player's rating over
    ``bootstrap`` refits on games resampled with replacement (deterministic for a ``seed``);
    resamples in which a player does not appear are left out of that player's interval.
    With ``bootstrap=0`` the interval collapses to the estimate.
    """
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap}")
    design = _Design.build(games)
    if not design.players:
        return []
    point = design.fit(np.ones((1, design.n_games)))[0]
    counts = np.random.default_rng(seed).multinomial(
        design.n_games, np.full(design.n_games, 1.0 / design.n_games), size=bootstrap
    )
    samples = design.fit(counts.astype(np.float64), start=point)
    low, high = _percentile_interval(samples, point)
    ratings = [
        Rating(player, float(elo), float(lo), float(hi), int(seats))
        for player, elo, lo, hi, seats in zip(
            design.players, point, low, high, design.seat_counts, strict=True
        )
    ]
    return sorted(ratings, key=lambda r: (-r.elo, str(r.player)))


def _percentile_interval(samples: FloatArray, point: FloatArray) -> tuple[FloatArray, FloatArray]:
    """2.5/97.5 percentiles per player, ignoring NaN; the point itself where no sample exists."""
    low, high = point.copy(), point.copy()
    seen = ~np.isnan(samples).all(axis=0)
    if seen.any():
        low[seen], high[seen] = np.nanpercentile(samples[:, seen], [2.5, 97.5], axis=0)
    return low, high


def _check_game(game: Game) -> None:
    if not game:
        raise ValueError("a game needs at least one seat")
    players = [player for player, _ in game]
    if len(set(players)) != len(players):
        raise ValueError(f"a player appears more than once in one game: {players}")


def _score(place_a: int, place_b: int) -> float:
    if place_a == place_b:
        return 0.5
    return 1.0 if place_a < place_b else 0.0


@dataclass(frozen=True)
class _Design:
    """Games as sparse matrices over the distinct pairs ``first[k] < second[k]``.

    ``wins[g, k]`` / ``losses[g, k]`` are the weighted points of ``first[k]`` /
    ``second[k]`` in game ``g``; ``seats[g, i]`` is 1 when player ``i`` sat at game ``g``.
    A bootstrap resample is a row of game multiplicities, so its sufficient statistics are
    one sparse product.
    """

    players: tuple[str, ...]
    first: IntArray
    second: IntArray
    wins: sparse.csr_array
    losses: sparse.csr_array
    seats: sparse.csr_array

    @property
    def n_games(self) -> int:
        return int(self.seats.shape[0])

    @property
    def seat_counts(self) -> IntArray:
        return np.asarray(self.seats.sum(axis=0), dtype=np.int64).ravel()

    @classmethod
    def build(cls, games: Sequence[Game]) -> _Design:
        outcomes = pairwise_outcomes(games)
        index: dict[str, int] = {}
        seat_rows, seat_cols = [], []
        for g, game in enumerate(games):
            for player, _ in game:
                seat_rows.append(g)
                seat_cols.append(index.setdefault(player, len(index)))
        pairs: dict[tuple[int, int], int] = {}
        rows, cols, win_mass, loss_mass = [], [], [], []
        for outcome in outcomes:
            i, j, score = index[outcome.a], index[outcome.b], outcome.score
            if i > j:
                i, j, score = j, i, 1.0 - score
            rows.append(outcome.game)
            cols.append(pairs.setdefault((i, j), len(pairs)))
            win_mass.append(outcome.weight * score)
            loss_mass.append(outcome.weight * (1.0 - score))
        shape = (len(games), len(pairs))
        ends = np.array(list(pairs), dtype=np.int64).reshape(-1, 2)
        return cls(
            players=tuple(index),
            first=ends[:, 0],
            second=ends[:, 1],
            wins=sparse.csr_array((win_mass, (rows, cols)), shape=shape, dtype=np.float64),
            losses=sparse.csr_array((loss_mass, (rows, cols)), shape=shape, dtype=np.float64),
            seats=sparse.csr_array(
                (np.ones(len(seat_rows)), (seat_rows, seat_cols)), shape=(len(games), len(index))
            ),
        )

    def fit(self, counts: FloatArray, start: FloatArray | None = None) -> FloatArray:
        """Elo ratings for each row of game multiplicities ``counts`` (shape resamples x games).

        Players absent from a resample get NaN.  ``start`` (Elo) warm-starts every row.
        """
        n = len(self.players)
        chunk = max(1, _MAX_BATCH_CELLS // (n * n))
        theta0 = np.zeros(n) if start is None else start / _ELO_PER_NAT
        parts = [
            self._fit_chunk(counts[k : k + chunk], theta0) for k in range(0, len(counts), chunk)
        ]
        return np.concatenate(parts or [np.empty((0, n))]) * _ELO_PER_NAT

    def _fit_chunk(self, counts: FloatArray, theta0: FloatArray) -> FloatArray:
        wins = np.asarray(self.wins.T @ counts.T).T
        losses = np.asarray(self.losses.T @ counts.T).T
        labels, needs_prior = _components(self.first, self.second, wins, losses, len(self.players))
        problem = _Problem.build(self.first, self.second, wins, losses, needs_prior, labels)
        theta = _newton(problem, np.tile(theta0, (len(counts), 1)))
        theta = _centre(theta, labels)
        theta[np.asarray(self.seats.T @ counts.T).T == 0] = np.nan
        return theta


def _components(
    first: IntArray, second: IntArray, wins: FloatArray, losses: FloatArray, n: int
) -> tuple[IntArray, NDArray[np.bool_]]:
    """Connected components of each resample's comparison graph, and whether its MLE diverges.

    Labels are unique across resamples.  The MLE is finite iff, within every component,
    the digraph "i scored against j" is strongly connected (Ford's condition), i.e. iff the
    strong and weak component counts agree.  All resamples go through one block-diagonal
    graph so this is two scipy calls, not two per resample.
    """
    offset = (np.arange(len(wins)) * n)[:, None]
    head, tail = first + offset, second + offset
    src = np.concatenate([head[wins > 0], tail[losses > 0]])
    dst = np.concatenate([tail[wins > 0], head[losses > 0]])
    size = len(wins) * n
    graph = sparse.csr_array((np.ones(len(src)), (src, dst)), shape=(size, size))
    _, weak = connected_components(graph, directed=True, connection="weak")
    _, strong = connected_components(graph, directed=True, connection="strong")
    weak, strong = weak.reshape(-1, n), strong.reshape(-1, n)
    return weak.astype(np.int64), _count_distinct(strong) > _count_distinct(weak)


def _count_distinct(labels: NDArray[np.int32]) -> IntArray:
    ordered = np.sort(labels, axis=1)
    return 1 + (np.diff(ordered, axis=1) != 0).sum(axis=1)


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
    """Batched objective in natural units (theta = Elo * ln 10 / 400), one row per resample.

    Negative weighted log-likelihood, plus the prior where needed, plus
    ``0.5 * sum over components of (sum of theta)**2``: the likelihood ignores a shift of a
    component, so this term only fixes that shift (at mean 0) and makes the Hessian regular.
    """

    first: IntArray
    second: IntArray
    wins: FloatArray
    totals: FloatArray
    prior: FloatArray
    same_component: FloatArray
    signed: sparse.csr_array
    incidence: sparse.csr_array

    @classmethod
    def build(
        cls,
        first: IntArray,
        second: IntArray,
        wins: FloatArray,
        losses: FloatArray,
        needs_prior: NDArray[np.bool_],
        labels: IntArray,
    ) -> _Problem:
        n, pairs = labels.shape[1], np.arange(len(first))
        rows = np.concatenate([pairs, pairs])
        cols = np.concatenate([first, second])
        signs = np.concatenate([np.ones(len(first)), -np.ones(len(first))])
        return cls(
            first=first,
            second=second,
            wins=wins,
            totals=wins + losses,
            prior=np.where(needs_prior, PRIOR_WEIGHT, 0.0),
            same_component=(labels[:, :, None] == labels[:, None, :]).astype(np.float64),
            signed=sparse.csr_array((signs, (rows, cols)), shape=(len(first), n)),
            incidence=sparse.csr_array((np.abs(signs), (rows, cols)), shape=(len(first), n)),
        )

    def _diffs(self, theta: FloatArray) -> FloatArray:
        return np.asarray(theta[:, self.first] - theta[:, self.second])

    def objective(self, theta: FloatArray) -> FloatArray:
        x = self._diffs(theta)
        nll = (self.wins * _softplus(-x) + (self.totals - self.wins) * _softplus(x)).sum(axis=1)
        prior = 0.5 * self.prior * (_softplus(theta) + _softplus(-theta)).sum(axis=1)
        shift = 0.5 * np.einsum("bi,bij,bj->b", theta, self.same_component, theta)
        return np.asarray(nll + prior + shift)

    def derivatives(self, theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        p = _sigmoid(self._diffs(theta))
        residual = self.totals * p - self.wins
        curvature = self.totals * p * (1.0 - p)
        q = _sigmoid(theta)
        grad = np.asarray(self.signed.T @ residual.T).T
        grad += self.prior[:, None] * (q - 0.5)
        grad += np.einsum("bij,bj->bi", self.same_component, theta)
        hess = self.same_component.copy()
        hess[:, self.first, self.second] -= curvature
        hess[:, self.second, self.first] -= curvature
        diagonal = np.asarray(self.incidence.T @ curvature.T).T
        diagonal += self.prior[:, None] * q * (1.0 - q)
        n = theta.shape[1]
        hess[:, np.arange(n), np.arange(n)] += diagonal
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


def _line_search(
    problem: _Problem,
    theta: FloatArray,
    step: FloatArray,
    slope: FloatArray,
    active: NDArray[np.bool_],
) -> FloatArray:
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
