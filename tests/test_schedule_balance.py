"""Balanced round-robin tables for fields too large for every combination."""

from __future__ import annotations

import math

import pytest

from arena.schedule import all_tables, balance, balanced_tables, round_robin


@pytest.mark.parametrize(("bots", "seats", "tables"), [
    (5, 3, 5), (5, 4, 4), (12, 3, 60), (12, 4, 60), (12, 6, 40), (40, 3, 300), (40, 4, 300)])
def test_every_bot_and_every_pair_within_one(bots: int, seats: int, tables: int) -> None:
    schedule = balanced_tables(bots, seats, tables)
    assert len(schedule) == tables
    assert all(len(set(table)) == seats for table in schedule)
    assert balance(schedule, bots).tables_per_bot <= 1
    assert balance(schedule, bots).tables_per_pair <= 1


def test_forty_bots_at_six_seats() -> None:
    # Every bot plays 30 tables; pairs meet 3.85 times on average. The search
    # reaches a spread of 2 here, not yet 1 (open in issue 9).
    result = balance(balanced_tables(40, 6, 200), 40)
    assert result.tables_per_bot == 0
    assert result.tables_per_pair <= 2


def test_round_robin_uses_every_combination_while_it_can() -> None:
    assert round_robin(5, 3, max_tables=10) == all_tables(5, 3)
    assert len(round_robin(12, 4, max_tables=100)) == 100
    assert math.comb(12, 4) == len(round_robin(12, 4, max_tables=495))


def test_deterministic_from_the_seed() -> None:
    assert balanced_tables(12, 4, 30, seed=3) == balanced_tables(12, 4, 30, seed=3)
    with pytest.raises(ValueError):
        balanced_tables(3, 4, 5)
