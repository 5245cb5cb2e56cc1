"""Balanced tables for fields too large for every combination, and the gauntlet's tables."""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter

import pytest

from arena.formats.schedule import DEFAULT_MAX_TABLES
from arena.formats.tables import (
    all_tables,
    balance,
    balanced_tables,
    gauntlet_tables,
    orient,
    round_robin,
    table_count,
)


def step(bots: int, seats: int) -> int:
    """Table counts at which every bot can play equally often are multiples of this."""
    return bots // math.gcd(bots, seats)


def around_default(bots: int, seats: int) -> list[int]:
    """--max-tables values giving the count the tournament chooses by default and
    the counts next to it."""
    s = step(bots, seats)
    return [DEFAULT_MAX_TABLES, DEFAULT_MAX_TABLES - s, DEFAULT_MAX_TABLES + s]


CASES = [(bots, seats, max_tables)
         for bots, seats in [(12, 3), (12, 4), (12, 6), (40, 3), (40, 4), (40, 6)]
         for max_tables in around_default(bots, seats)]
CASES += [(5, 3, 5), (5, 3, 9), (5, 3, 10), (5, 4, 4), (5, 4, 5)]


@pytest.mark.parametrize(("bots", "seats", "max_tables"), CASES)
def test_every_bot_and_every_pair_within_one(bots: int, seats: int, max_tables: int) -> None:
    schedule = round_robin(bots, seats, max_tables, seed=1)
    count = table_count(bots, seats, max_tables)
    assert len(schedule) == count <= max_tables
    if count < math.comb(bots, seats):
        assert count % step(bots, seats) == 0 or count == max_tables
        assert count > max_tables - step(bots, seats)  # as many as balance allows
    assert all(len(set(table)) == seats for table in schedule)
    assert all(0 <= b < bots for table in schedule for b in table)
    measured = balance(schedule, bots)
    assert measured.tables_per_bot == (0 if count % step(bots, seats) == 0 else 1)
    assert measured.tables_per_pair <= 1


def test_the_default_count_for_forty_bots_at_six_seats_is_fast() -> None:
    started = time.process_time()
    schedule = round_robin(40, 6, DEFAULT_MAX_TABLES, seed=7)
    assert time.process_time() - started < 2
    assert len(schedule) == 200  # every bot plays 30 tables
    assert balance(schedule, 40).tables_per_bot == 0
    assert balance(schedule, 40).tables_per_pair <= 1


def test_table_count_keeps_every_bot_equal() -> None:
    assert table_count(5, 3, 200) == 10  # every combination
    assert table_count(12, 4, 200) == 198  # 198 x 4 / 12 = 66 tables per bot
    assert table_count(40, 6, 199) == 180  # multiples of 40 / gcd(40, 6) = 20
    assert table_count(40, 3, 39) == 39  # fewer tables than one round: as many as allowed
    assert table_count(12, 4, 495) == 495


def test_round_robin_uses_every_combination_while_it_can() -> None:
    assert sorted(tuple(sorted(t)) for t in round_robin(5, 3, max_tables=10)) == all_tables(5, 3)
    assert len(round_robin(12, 4, max_tables=100)) == 99
    assert math.comb(12, 4) == len(round_robin(12, 4, max_tables=495))


def test_deterministic_from_the_seed() -> None:
    assert balanced_tables(12, 4, 60, seed=3) == balanced_tables(12, 4, 60, seed=3)
    assert balanced_tables(12, 4, 60, seed=3) != balanced_tables(12, 4, 60, seed=4)
    assert round_robin(40, 6, 200, seed=2) == round_robin(40, 6, 200, seed=2)
    with pytest.raises(ValueError):
        balanced_tables(3, 4, 5)


def neighbours(tables: list[tuple[int, ...]]) -> Counter[tuple[int, int]]:
    """How often bot a sits directly before bot b (b's seat is a's seat + 1)."""
    return Counter((t[i - 1], t[i]) for t in tables for i in range(len(t)))


def test_seat_orders_balance_who_sits_after_whom() -> None:
    # In ascending order bot 0 would always sit directly before bot 1 at 3 seats.
    for bots, seats in [(5, 3), (6, 4), (8, 5)]:
        tables = orient(all_tables(bots, seats))
        assert sorted(tuple(sorted(t)) for t in tables) == all_tables(bots, seats)
        after = neighbours(tables)
        counts = [after[a, b] for a, b in itertools.permutations(range(bots), 2)]
        assert max(counts) - min(counts) <= 2, (bots, seats)
        assert all(abs(after[a, b] - after[b, a]) <= 1
                   for a, b in itertools.combinations(range(bots), 2))
    after = neighbours(round_robin(40, 3, 200))
    assert all(abs(after[a, b] - after[b, a]) <= 1 for a, b in itertools.combinations(range(40), 2))


@pytest.mark.parametrize(("challengers", "field", "seats", "max_tables", "per_challenger"), [
    (1, 4, 3, 200, 6),  # every pair of the field: C(4, 2)
    (2, 5, 2, 200, 5),  # heads-up against each field bot
    (2, 12, 4, 100, 48),  # C(12, 3) = 220 > 50: balanced, 48 = 12 x 4 / gcd(12, 3)
    (3, 7, 3, 20, 6),  # 6 tables of 2 out of 7: field counts within one
])
def test_gauntlet_every_challenger_meets_every_field_bot_evenly(
        challengers: int, field: int, seats: int, max_tables: int, per_challenger: int) -> None:
    chosen = list(range(field, field + challengers))  # challengers numbered after the field
    tables = gauntlet_tables(chosen, list(range(field)), seats, max_tables, seed=5)
    assert len(tables) == challengers * per_challenger <= max_tables
    for table in tables:
        assert len(set(table)) == seats
        assert len([b for b in table if b in chosen]) == 1  # exactly one challenger
    for challenger in chosen:
        met = Counter(b for t in tables if challenger in t for b in t if b != challenger)
        counts = [met[b] for b in range(field)]
        assert max(counts) - min(counts) <= 1, (challenger, counts)
    played = Counter(b for t in tables for b in t if b not in chosen)
    assert max(played.values()) - min(played[b] for b in range(field)) <= 1
    # Challengers take turns: every window of ``challengers`` tables holds each once.
    firsts = [next(b for b in t if b in chosen) for t in tables]
    assert all(sorted(firsts[i : i + challengers]) == chosen
               for i in range(0, len(firsts), challengers))
