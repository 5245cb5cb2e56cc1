"""The rotation-order test: does a bot score better in the seat rotations of a deal
played later than in the first one played?  A bot that carries what it saw of a
deal (its opponents' hands) from an earlier rotation to a later one, through a
side channel, would.

Every bot of a table plays each deal once per seat rotation, and the order in which a
block's rotations play is drawn at random (:func:`rotation_order`, from the seed of
the block's first deal), once per block of deals: a stream plays the whole block
in one rotation.  So the
unit is a bot's *block*: its mean points in each rotation over the block's deals
(:class:`Unit`), each game's points less the bot's mean in that seat over all its
games (a seat worth more or less is the biggest noise otherwise; the mean is the
same whatever the order, so the test stays exact).  Its *advantage* is the mean of
the rotations played later minus the first-played one.  The seat and the deal
cancel: in a block the bot sits every seat once on the same deals, and which seat
comes first is drawn.  Without learning, the play order is independent of the
points, so every rotation is equally likely to be the first: the p-value is that
of the summed advantage among those redraws (Monte Carlo with a fixed seed, or
the normal approximation with the redraws' exact mean and variance when the
units are many).  One-sided: only scoring better later is suspect.

Pure: numpy only, no I/O.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: Default level: a bot is flagged when its p-value is below this.
LEVEL = 0.01
#: Monte Carlo redraws of the play order.
REPLICATES = 10_000
#: From this many units on, the normal approximation (the redraws' exact moments).
NORMAL_FROM = 400
#: The Monte Carlo stream's seed (fixed: the same games always give the same p-value).
SEED = 28


def rotation_order(seed: int, k: int) -> tuple[int, ...]:
    """The order in which the ``k`` seat rotations of a block play, drawn from
    ``seed``, the deal seed of the block's first deal: the rotations sorted by
    SHA-256 of ``"rotation-order:SEED:ROTATION"`` (a uniformly drawn permutation)."""
    def rank(rotation: int) -> bytes:
        return hashlib.sha256(f"rotation-order:{seed}:{rotation}".encode()).digest()

    return tuple(sorted(range(k), key=rank))


def order_block(config: Mapping[str, object] | None) -> int | None:
    """Deals per block of a tournament whose configuration says its blocks play
    their rotations in a drawn order (``"rotation_order": {"block": 8}``); None
    for one stored before the order was drawn (played in the order 0, 1, ...)."""
    order = (config or {}).get("rotation_order")
    block = order.get("block") if isinstance(order, Mapping) else None
    return block if isinstance(block, int) and block > 0 else None


def play_position(seed: int, k: int, rotation: int) -> int:
    """When ``rotation`` of a block whose first deal has ``seed`` plays: 0 first."""
    return rotation_order(seed, k).index(rotation)


@dataclass(frozen=True)
class Observation:
    """A bot's points in one game: ``unit`` names its block (tournament, table,
    block), ``position`` when its rotation played in the block (0 first),
    ``seat`` its seat (with anything else whose mean to take out, e.g. the table size)."""

    bot: str
    unit: Hashable
    position: int
    points: float
    seat: Hashable = 0


@dataclass(frozen=True)
class Unit:
    """A bot's block: its mean points per rotation (less its seat's mean), the
    first-played one first."""

    points: tuple[float, ...]

    @property
    def advantage(self) -> float:
        """Mean of the later-played rotations minus the first-played one."""
        first, *later = self.points
        return sum(later) / len(later) - first


@dataclass(frozen=True)
class Learning:
    """One bot's test: its units (blocks with the first-played rotation and at least
    one later), their mean advantage (in points, 0 to 1), the one-sided p-value and
    whether it is below the level."""

    units: int
    advantage: float
    p_value: float
    flagged: bool


def place_points(place: int, seats: int) -> float:
    """A place as points: 1 first, 0 last, evenly between."""
    return (seats - place) / (seats - 1) if seats > 1 else 0.0


def units(observations: Iterable[Observation]) -> dict[str, list[Unit]]:
    """Each bot's units: its observations less its mean in their seat, grouped by
    block and rotation, kept when the block has its first-played rotation and a
    later one."""
    observations = list(observations)
    seats: dict[tuple[str, Hashable], list[float]] = defaultdict(list)
    for o in observations:
        seats[o.bot, o.seat].append(o.points)
    means = {key: sum(points) / len(points) for key, points in seats.items()}
    grouped: dict[tuple[str, Hashable], dict[int, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    for o in observations:
        grouped[o.bot, o.unit][o.position].append(o.points - means[o.bot, o.seat])
    out: dict[str, list[Unit]] = defaultdict(list)
    for (bot, _), by_position in grouped.items():
        if 0 in by_position and len(by_position) >= 2:
            out[bot].append(Unit(tuple(sum(p) / len(p) for _, p in sorted(by_position.items()))))
    return dict(out)


def learning_of(found: Sequence[Unit], *, level: float = LEVEL,
               replicates: int = REPLICATES, seed: int = SEED) -> Learning:
    """The test of one bot's units (see the module's docstring)."""
    if not found:
        return Learning(0, 0.0, 1.0, False)
    width = max(len(u.points) for u in found)
    values = np.full((len(found), width), np.nan)
    for i, unit in enumerate(found):
        values[i, :len(unit.points)] = unit.points
    m = np.sum(~np.isnan(values), axis=1)
    total = np.nansum(values, axis=1)
    # Advantage if rotation j were first: (total - x_j) / (m - 1) - x_j.
    outcomes = (total[:, None] - m[:, None] * values) / (m[:, None] - 1)
    observed = float(np.sum(outcomes[:, 0]))
    p_value = (_normal_p(outcomes, m, observed) if len(found) >= NORMAL_FROM
               else _monte_carlo_p(outcomes, m, observed, replicates, seed))
    return Learning(len(found), observed / len(found), p_value, p_value < level)


def _monte_carlo_p(outcomes: np.ndarray, m: np.ndarray, observed: float, replicates: int,
                   seed: int) -> float:
    """Share of redraws (each unit's first rotation uniform) at least as high as
    ``observed``, counting the observed draw itself."""
    rng = np.random.default_rng(seed)
    rows = np.arange(len(m))
    tolerance = 1e-9 * max(1.0, abs(observed))
    higher = 0
    for start in range(0, replicates, 1000):
        count = min(1000, replicates - start)
        first = np.floor(rng.random((count, len(m))) * m).astype(int)
        sums = outcomes[rows, first].sum(axis=1)
        higher += int(np.sum(sums >= observed - tolerance))
    return (higher + 1) / (replicates + 1)


def _normal_p(outcomes: np.ndarray, m: np.ndarray, observed: float) -> float:
    """The upper tail of ``observed`` under the normal law with the redraws' mean
    and variance (each unit independent, its first rotation uniform)."""
    means = np.nansum(outcomes, axis=1) / m
    variances = np.nansum((outcomes - means[:, None]) ** 2, axis=1) / m
    sd = math.sqrt(float(np.sum(variances)))
    if sd == 0.0:
        return 1.0
    z = (observed - float(np.sum(means))) / sd
    return 0.5 * math.erfc(z / math.sqrt(2))


def rotation_learning(observations: Iterable[Observation], *, level: float = LEVEL,
                      replicates: int = REPLICATES, seed: int = SEED) -> dict[str, Learning]:
    """Every observed bot's test; a bot without a unit gets none."""
    return {bot: learning_of(found, level=level, replicates=replicates, seed=seed)
            for bot, found in sorted(units(observations).items())}
