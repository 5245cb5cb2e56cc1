"""Which tables of ``seats`` bots: every combination, balanced choices, gauntlets.

Round robin: every combination of the entrants while there are at most
``max_tables`` (12 bots at 4 seats: 495; 40 bots at 6 seats: 3,838,380), else
:func:`balanced_tables`: :func:`table_count` tables in which every bot plays
equally often and every pair of bots shares a table equally often, within one
(:func:`balance` measures it).  The search builds a cyclic design first (base
tables developed over the integers mod the number of bots: every bot plays
each base table once, every pair at distance ``d`` meets as often as every
other), and where that cannot balance the pairs, swaps bots between tables.

Each table's seat order is chosen so that every bot sits directly after every
other about equally often (:func:`orient`): in these games a player's
neighbours matter (whose discards it may take, who may take its own).

Pure and deterministic from its seed: no I/O, no clock."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

Table = tuple[int, ...]
Swap = tuple[int, int, int, int]  # table i, its bot x, table j, its bot y

#: Base tables of the cyclic design: changes tried per restart, and restarts.
CYCLIC_EFFORT = 20_000

CYCLIC_RESTARTS = 3

#: Candidate swaps the local search may evaluate (about a second of work).
SWAP_EFFORT = 400_000


class ConfigError(ValueError):
    """A tournament configuration that cannot be run; the message says why."""


@dataclass(frozen=True)
class Balance:
    """The spread (max - min) of what a schedule should keep equal."""

    tables_per_bot: int
    tables_per_pair: int


def all_tables(bots: int, seats: int) -> list[Table]:
    """Every combination of ``seats`` bots, each in ascending order."""
    return list(itertools.combinations(range(bots), seats))


def table_count(bots: int, seats: int, max_tables: int) -> int:
    """How many tables a round robin plays: every combination while there are at
    most ``max_tables``; else the most tables up to ``max_tables`` at which every
    bot can play equally often (a multiple of bots / gcd(bots, seats), which
    equal pair counts need too); else ``max_tables``."""
    combinations = math.comb(bots, seats)
    if combinations <= max_tables:
        return combinations
    step = bots // math.gcd(bots, seats)
    return max_tables - max_tables % step or max_tables


def round_robin(bots: int, seats: int, max_tables: int, seed: int = 1) -> list[Table]:
    """Every combination while there are at most ``max_tables``, else a balanced
    choice of :func:`table_count` tables; seat orders from :func:`orient`."""
    if math.comb(bots, seats) <= max_tables:
        return orient(all_tables(bots, seats))
    return balanced_tables(bots, seats, table_count(bots, seats, max_tables), seed)


def balance(tables: Sequence[Table], bots: int) -> Balance:
    """How far a schedule is from perfectly even."""
    per_bot = Counter(b for table in tables for b in table)
    pairs = Counter(pair for table in tables for pair in itertools.combinations(sorted(table), 2))
    return Balance(
        tables_per_bot=_spread([per_bot[b] for b in range(bots)]),
        tables_per_pair=_spread([pairs[p] for p in itertools.combinations(range(bots), 2)]))


def _spread(values: Sequence[int]) -> int:
    return max(values) - min(values)


def balanced_tables(bots: int, seats: int, tables: int, seed: int = 1) -> list[Table]:
    """``tables`` tables of ``seats`` distinct bots out of ``bots``, balanced.

    Every bot plays as many tables as any other (within one; exactly when
    ``tables`` is a multiple of bots / gcd(bots, seats)) and every pair of bots
    shares as many tables as any other, within one wherever the search reaches
    it (some counts make it impossible: 5 bots at 3 seats on 4 tables).  Bots
    are relabelled and tables ordered at random from ``seed``; seat orders come
    from :func:`orient`.
    """
    if not 2 <= seats <= bots:
        raise ValueError(f"cannot seat {bots} bots at tables of {seats}")
    if tables < 1:
        raise ValueError(f"a schedule needs at least one table, not {tables}")
    rng = random.Random(seed)
    design = _cyclic_design(bots, seats, tables, rng)
    if design is None or design.cost:
        start = design.tables() if design is not None else _greedy(bots, seats, tables, rng)
        search = _SwapSearch(bots, start, rng)
        search.run(SWAP_EFFORT)
        chosen = search.best
    else:
        chosen = design.tables()
    labels = list(range(bots))
    rng.shuffle(labels)
    relabelled = [tuple(labels[b] for b in table) for table in chosen]
    rng.shuffle(relabelled)
    return orient(relabelled)


def orient(tables: Sequence[Table], seed: int = 0) -> list[Table]:
    """The tables with their seats ordered so that, over the schedule, every bot
    sits directly after every other about equally often: table by table, the
    cyclic order whose neighbour pairs (left, right) were used least so far.
    Seat rotations then move every bot through every seat without changing who
    sits after whom, so this is the one thing a seat order decides."""
    rng = random.Random(seed)
    after: Counter[tuple[int, int]] = Counter()
    oriented = []
    for table in tables:
        best = min(_cyclic_orders(table, rng),
                   key=lambda order: sum(after[order[i - 1], order[i]]
                                         for i in range(len(order))))
        after.update((best[i - 1], best[i]) for i in range(len(best)))
        oriented.append(best)
    return oriented


def _cyclic_orders(table: Table, rng: random.Random, most: int = 120) -> list[Table]:
    """The table's distinct cyclic seat orders (its first bot kept in seat 0);
    ``most`` of them at random for tables too large to try them all."""
    first, rest = table[0], table[1:]
    if math.factorial(len(rest)) <= most:
        return [(first, *order) for order in itertools.permutations(rest)]
    return [table] + [(first, *rng.sample(rest, len(rest))) for _ in range(most - 1)]


@dataclass
class _CyclicDesign:
    """Base tables over Z_bots.  A full base table develops into ``bots`` tables
    (add 0 .. bots-1 to every seat); a short one is a union of cosets of the
    subgroup of order g = gcd(bots, seats), so it develops into bots / g tables.
    A pair of bots at distance d meets ``meetings[d]`` times whoever they are."""

    bots: int
    seats: int
    blocks: list[list[int]]
    #: For each block, 1 (full) or g (short, stored by its representatives mod bots/g).
    orders: list[int]
    low: int
    meetings: list[int] = field(default_factory=list)
    cost: int = 0

    def __post_init__(self) -> None:
        contributions = [self.contribution(b, o)
                         for b, o in zip(self.blocks, self.orders, strict=True)]
        self.meetings = [sum(c[d] for c in contributions) for d in range(self.bots // 2 + 1)]
        self.cost = sum(_outside(m, self.low) for m in self.meetings[1:])

    def members(self, block: Sequence[int], order: int) -> list[int]:
        step = self.bots // order
        return [r + j * step for r in block for j in range(order)]

    def distance(self, a: int, b: int) -> int:
        d = (b - a) % self.bots
        return min(d, self.bots - d)

    def contribution(self, block: Sequence[int], order: int) -> list[int]:
        """Meetings per distance of one base table's development: a pair at
        distance d < bots/2 meets once per such pair in the base table, a pair at
        distance bots/2 twice (both orders of the pair are that distance)."""
        counts = [0] * (self.bots // 2 + 1)
        for a, b in itertools.permutations(self.members(block, order), 2):
            if (b - a) % self.bots <= self.bots // 2:
                counts[(b - a) % self.bots] += 1
        return [c // order for c in counts]

    def change(self, index: int, position: int, value: int) -> dict[int, int]:
        """Meetings gained (lost: negative) per distance if ``value`` replaces the
        base table's ``position``."""
        block, order = self.blocks[index], self.orders[index]
        if order == 1:  # only the moved bot's pairs change
            change: Counter[int] = Counter()
            for other in block[:position] + block[position + 1:]:
                for bot, sign in ((block[position], -1), (value, 1)):
                    d = self.distance(bot, other)
                    change[d] += sign * (2 if 2 * d == self.bots else 1)
            return change
        moved = block.copy()
        moved[position] = value
        old, new = self.contribution(block, order), self.contribution(moved, order)
        return {d: new[d] - old[d] for d in range(1, len(new)) if new[d] != old[d]}

    def tables(self) -> list[Table]:
        out = []
        for block, order in zip(self.blocks, self.orders, strict=True):
            members = self.members(block, order)
            out += [tuple((b + shift) % self.bots for b in members)
                    for shift in range(self.bots // order)]
        return out


def _outside(count: int, low: int) -> int:
    """Penalty of a pair count outside the window [low, low + 1]: the distance to
    the fourth power, so where the window cannot be reached the searches prefer
    many pairs one outside to one pair two outside (the spread stays at two)."""
    if count < low:
        return (low - count) ** 4
    return max(0, count - low - 1) ** 4


def _window(bots: int, seats: int, tables: int) -> int:
    """The lower end of the pair-count window: the mean count, rounded down."""
    return tables * math.comb(seats, 2) // math.comb(bots, 2)


def _cyclic_design(bots: int, seats: int, tables: int,
                   rng: random.Random) -> _CyclicDesign | None:
    """The best cyclic design found for ``tables`` tables, or None when the count
    is not a multiple of bots / gcd(bots, seats)."""
    g = math.gcd(bots, seats)
    if tables % (bots // g):
        return None
    full, short = tables // bots, (tables % bots) // (bots // g)
    best: _CyclicDesign | None = None
    for _ in range(CYCLIC_RESTARTS):
        blocks = [rng.sample(range(bots), seats) for _ in range(full)]
        blocks += [rng.sample(range(bots // g), seats // g) for _ in range(short)]
        design = _CyclicDesign(bots, seats, blocks, [1] * full + [g] * short,
                               _window(bots, seats, tables))
        _anneal(design, rng, CYCLIC_EFFORT)
        if best is None or design.cost < best.cost:
            best = design
        if best.cost == 0:
            break
    return best


def _anneal(design: _CyclicDesign, rng: random.Random, effort: int) -> None:
    """Simulated annealing: move one bot of one base table at a time, keeping a
    change that makes the pair counts worse by delta with probability
    exp(-delta / temperature), the temperature falling from 1 to 1/20."""
    cooling = (1 / 20) ** (1 / effort)
    temperature = 1.0
    for _ in range(effort):
        if design.cost == 0:
            return
        temperature *= cooling
        index = rng.randrange(len(design.blocks))
        block = design.blocks[index]
        value = rng.randrange(design.bots // design.orders[index])
        if value in block:
            continue
        position = rng.randrange(len(block))
        change = design.change(index, position, value)
        meetings, low = design.meetings, design.low
        delta = sum(_outside(meetings[d] + c, low) - _outside(meetings[d], low)
                    for d, c in change.items())
        if delta <= 0 or rng.random() < math.exp(-delta / temperature):
            block[position] = value
            for d, c in change.items():
                meetings[d] += c
            design.cost += delta


def _greedy(bots: int, seats: int, count: int, rng: random.Random) -> list[Table]:
    """Tables filled seat by seat with the bot that has played least, then met
    the table's bots least: every bot's table count within one."""
    played = [0] * bots
    met = [[0] * bots for _ in range(bots)]
    tables = []
    for _ in range(count):
        table: list[int] = []
        while len(table) < seats:
            candidates = [b for b in range(bots) if b not in table]
            rng.shuffle(candidates)
            best = min(candidates, key=lambda b: (played[b], sum(met[b][o] for o in table)))
            for other in table:
                met[best][other] += 1
                met[other][best] += 1
            table.append(best)
            played[best] += 1
        tables.append(tuple(table))
    return tables


class _SwapSearch:
    """Swaps of two bots between two tables (every bot keeps its table count),
    aimed at a pair whose count is outside the window, choosing among sampled
    swaps the one that brings the counts nearest the window."""

    def __init__(self, bots: int, tables: Sequence[Table], rng: random.Random) -> None:
        self.rng = rng
        self.tables = [list(t) for t in tables]
        self.members = [set(t) for t in tables]
        self.where: list[set[int]] = [set() for _ in range(bots)]
        self.met = [[0] * bots for _ in range(bots)]
        for index, table in enumerate(self.tables):
            for b in table:
                self.where[b].add(index)
            for a, b in itertools.combinations(table, 2):
                self.met[a][b] += 1
                self.met[b][a] += 1
        self.low = _window(bots, len(self.tables[0]), len(self.tables))
        top = len(self.tables) + 2
        penalty = [_outside(c, self.low) for c in range(top + 1)]
        self.up = [penalty[c + 1] - penalty[c] for c in range(top)] + [0]
        self.down = [0] + [penalty[c - 1] - penalty[c] for c in range(1, top + 1)]
        self.bad = {p for p in itertools.combinations(range(bots), 2)
                    if penalty[self.met[p[0]][p[1]]]}
        self.cost = sum(penalty[self.met[a][b]] for a, b in itertools.combinations(range(bots), 2))
        self.best: list[Table] = [tuple(t) for t in self.tables]
        self.best_cost = self.cost

    def run(self, effort: int) -> None:
        while self.bad and effort > 0:
            a, b = self.rng.choice(sorted(self.bad))
            swaps = self._toward(a, b)
            effort -= len(swaps) + 1
            if not swaps:
                continue
            if self.rng.random() < 0.02:
                chosen, delta = self.rng.choice(swaps), None
            else:
                scored = [(self._delta(*s), self.rng.random(), s) for s in swaps]
                delta, _, chosen = min(scored)
                if delta > 0:
                    continue
            self._swap(*chosen, delta)
            if self.cost < self.best_cost:
                self.best, self.best_cost = [tuple(t) for t in self.tables], self.cost

    def _toward(self, a: int, b: int, sample: int = 15) -> list[Swap]:
        """Swaps that part a and b (met too often) or seat them together (too rarely)."""
        rng, tables = self.rng, self.tables
        if self.met[a][b] > self.low:
            swaps = []
            for i in self.where[a] & self.where[b]:
                for x in (a, b):
                    for j in rng.sample(range(len(tables)), min(len(tables), sample)):
                        if x not in self.members[j]:
                            swaps += [(i, x, j, y) for y in tables[j] if y not in self.members[i]]
            return swaps
        swaps = []
        for stay, come in ((a, b), (b, a)):
            into = sorted(self.where[stay] - self.where[come])
            away = sorted(self.where[come] - self.where[stay])
            for _ in range(sample if into and away else 0):
                i, j = rng.choice(into), rng.choice(away)
                swaps += [(i, y, j, come) for y in tables[i]
                          if y != stay and y not in self.members[j]]
        return swaps

    def _delta(self, i: int, x: int, j: int, y: int) -> int:
        """Change of the total penalty if x (at table i) and y (at table j) swap;
        a bot at both tables keeps its pairs with x and y."""
        met_x, met_y, up, down = self.met[x], self.met[y], self.up, self.down
        at_i, at_j = self.members[i], self.members[j]
        delta = 0
        for o in self.tables[i]:
            if o != x and o not in at_j:
                delta += down[met_x[o]] + up[met_y[o]]
        for o in self.tables[j]:
            if o != y and o not in at_i:
                delta += down[met_y[o]] + up[met_x[o]]
        return delta

    def _swap(self, i: int, x: int, j: int, y: int, delta: int | None) -> None:
        self.cost += self._delta(i, x, j, y) if delta is None else delta
        self._replace(i, x, y)
        self._replace(j, y, x)

    def _replace(self, index: int, out: int, into: int) -> None:
        table, met = self.tables[index], self.met
        for other in table:
            if other != out:
                met[out][other] -= 1
                met[other][out] -= 1
                met[into][other] += 1
                met[other][into] += 1
        table[table.index(out)] = into
        self.members[index].discard(out)
        self.members[index].add(into)
        self.where[out].discard(index)
        self.where[into].add(index)
        for other in table:
            if other != into:
                for pair in ((min(out, other), max(out, other)),
                             (min(into, other), max(into, other))):
                    count = met[pair[0]][pair[1]]
                    if self.low <= count <= self.low + 1:
                        self.bad.discard(pair)
                    else:
                        self.bad.add(pair)


def gauntlet_tables(challengers: Sequence[int], field: Sequence[int], seats: int,
                    max_tables: int, seed: int = 1) -> list[Table]:
    """Tables of one challenger and ``seats - 1`` field bots.

    Each challenger gets ``max_tables // len(challengers)`` tables at most: every
    combination of the field while that fits, else a balanced choice
    (:func:`round_robin` of the field), so it meets every field bot equally often
    (within one) and every field bot plays about equally often.  Challengers never
    meet.  Tables alternate between challengers, so they progress together.
    """
    per_challenger = max_tables // len(challengers)
    if per_challenger < 1:
        raise ConfigError(f"--max-tables ({max_tables}) must be at least the number of "
                          f"challengers ({len(challengers)})")
    if len(field) < seats - 1:
        raise ConfigError(f"{len(field)} field bots cannot fill a table of {seats} "
                          f"with a challenger")
    base = _field_tables(len(field), seats - 1, per_challenger, seed)
    extra = _rotation_step(base, len(field))
    rounds = []
    for number, challenger in enumerate(challengers):
        shift = number * extra
        rounds.append([(challenger, *(field[(b + shift) % len(field)] for b in table))
                       for table in base])
    return orient([table for tables in zip(*rounds, strict=True) for table in tables])


def _field_tables(bots: int, seats: int, max_tables: int, seed: int) -> list[Table]:
    """One challenger's field bots at each of its tables, as field indices, the bots
    that play one table more than others (if any) numbered first."""
    if seats == 1:
        count = table_count(bots, 1, max_tables)
        return [(b % bots,) for b in range(count)]
    tables = round_robin(bots, seats, max_tables, seed)
    played = Counter(b for table in tables for b in table)
    order = sorted(range(bots), key=lambda b: (-played[b], b))
    label = {b: new for new, b in enumerate(order)}
    return [tuple(label[b] for b in table) for table in tables]


def _rotation_step(tables: Sequence[Table], bots: int) -> int:
    """How far to turn the field between challengers so that the bots playing one
    table more (numbered first) differ from challenger to challenger."""
    played = Counter(b for table in tables for b in table)
    return sum(1 for b in range(bots) if played[b] > min(played[c] for c in range(bots)))
