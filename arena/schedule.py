"""Which bots meet at which tables: a balanced round robin for large fields.

With ``n`` bots at tables of ``k`` seats there are C(n, k) possible tables (12
bots at 4 seats: 495; 40 bots: 91,390).  :func:`balanced_tables` picks a given
number of them so that every bot plays as many tables as any other (within
one) and every pair of bots shares a table as often as any other pair (within
one where the search reaches it; :func:`balance` measures it).  Each table is
played in every seat rotation on duplicate deals, so every bot sits every seat
equally often in play whatever the order of a table.

Groundwork for the tournament formats (not yet used by :mod:`arena.tournament`).

Pure and deterministic from its seed: no I/O, no clock.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

Table = tuple[int, ...]


@dataclass(frozen=True)
class Balance:
    """The spread (max - min) of what a schedule should keep equal."""

    tables_per_bot: int
    tables_per_pair: int


def all_tables(bots: int, seats: int) -> list[Table]:
    """Every combination of ``seats`` bots, each in ascending order."""
    return list(itertools.combinations(range(bots), seats))


def round_robin(bots: int, seats: int, max_tables: int, seed: int = 1) -> list[Table]:
    """Every combination while there are at most ``max_tables``, else a balanced
    choice of ``max_tables`` tables."""
    if math.comb(bots, seats) <= max_tables:
        return all_tables(bots, seats)
    return balanced_tables(bots, seats, max_tables, seed)


def balanced_tables(bots: int, seats: int, tables: int, seed: int = 1,
                    effort: int = 200_000) -> list[Table]:
    """``tables`` tables of ``seats`` distinct bots out of ``bots``, balanced.

    A greedy start (fewest tables first, then fewest meetings with those
    already seated), then swaps of two bots between two tables that keep every
    bot's table count and lower the sum of squared pair counts, tried at random
    (``effort`` tries at most; plateau moves allowed so the search keeps going).
    """
    if not 2 <= seats <= bots:
        raise ValueError(f"cannot seat {bots} bots at tables of {seats}")
    rng = random.Random(seed)
    schedule = _Schedule(bots, _greedy(bots, seats, tables, rng))
    schedule.improve(rng, effort)
    return [tuple(sorted(table)) for table in schedule.tables]


def balance(tables: Sequence[Table], bots: int) -> Balance:
    """How far a schedule is from perfectly even."""
    per_bot = Counter(b for table in tables for b in table)
    pairs = Counter(pair for table in tables for pair in itertools.combinations(sorted(table), 2))
    return Balance(
        tables_per_bot=_spread([per_bot[b] for b in range(bots)]),
        tables_per_pair=_spread([pairs[p] for p in itertools.combinations(range(bots), 2)]))


def _spread(values: Sequence[int]) -> int:
    return max(values) - min(values)


def _greedy(bots: int, seats: int, count: int, rng: random.Random) -> list[list[int]]:
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
        tables.append(table)
    return tables


class _Schedule:
    """Tables with their pair counts, for the swap search."""

    def __init__(self, bots: int, tables: list[list[int]]) -> None:
        self.tables = tables
        self.met = [[0] * bots for _ in range(bots)]
        for table in tables:
            for a, b in itertools.combinations(table, 2):
                self.met[a][b] += 1
                self.met[b][a] += 1

    def improve(self, rng: random.Random, effort: int) -> None:
        count = len(self.tables)
        played = Counter(b for table in self.tables for b in table)
        for attempt in range(effort):
            i, j = rng.randrange(count), rng.randrange(count)
            if i == j:
                self._hand_over(i, rng, played)
                continue
            if attempt % 2:
                # Half the tries start from a table whose bots meet most often.
                i = max(rng.sample(range(count), min(count, 8)), key=self._crowding)
                if i == j:
                    continue
            x, y = rng.choice(self.tables[i]), rng.choice(self.tables[j])
            if x == y or x in self.tables[j] or y in self.tables[i]:
                continue
            # A bot at both tables meets x and y once fewer at one and once
            # more at the other: its pairs do not change, which the two
            # one-table deltas count as +2 each.
            shared = len(set(self.tables[i]) & set(self.tables[j]))
            delta = self._delta(i, x, y) + self._delta(j, y, x) - 4 * shared
            if delta < 0 or (delta == 0 and rng.random() < 0.5):
                self._move(i, x, y)
                self._move(j, y, x)

    def _crowding(self, index: int) -> int:
        table = self.tables[index]
        return max(self.met[a][b] for a, b in itertools.combinations(table, 2))

    def _hand_over(self, index: int, rng: random.Random, played: Counter[int]) -> None:
        """Give one of a bot's tables to a bot with one table fewer, if that
        evens the pairs: table counts stay within one."""
        table = self.tables[index]
        out = rng.choice(table)
        into = rng.randrange(len(self.met))
        if into in table or played[out] - played[into] != 1:
            return
        delta = self._delta(index, out, into)
        if delta < 0 or (delta == 0 and rng.random() < 0.5):
            self._move(index, out, into)
            played[out] -= 1
            played[into] += 1

    def _delta(self, index: int, out: int, into: int) -> int:
        """Change of the sum of squared pair counts when ``into`` replaces
        ``out`` at table ``index``, on the counts as they stand."""
        met, delta = self.met, 0
        for other in self.tables[index]:
            if other != out:
                delta += (2 * met[into][other] + 1) - (2 * met[out][other] - 1)
        return delta

    def _move(self, index: int, out: int, into: int) -> None:
        table = self.tables[index]
        for other in table:
            if other != out:
                self.met[out][other] -= 1
                self.met[other][out] -= 1
                self.met[into][other] += 1
                self.met[other][into] += 1
        table[table.index(out)] = into
