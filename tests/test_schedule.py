"""The tournament schedule: duplicate deals, and no bot process sees a deal twice."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

import trio

from arena.formats.deals import deal_seed, known_key
from arena.formats.schedule import DEAL_BLOCK, chain_name
from arena.formats.schedule import chains as chains_of
from arena.games import make_game
from arena.runner.client import TimeControl
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.tournament import run_tournament
from arena.store.database import Store

HERE = Path(__file__).resolve().parent
DEAL_LOG_BOT = HERE / "bots" / "deal_log_bot.py"
CONTROL = TimeControl(handshake=10.0, move=2.0, bank=10.0)


def plan_of(bots: int, table_size: int, games: int) -> Plan:
    specs = tuple(BotSpec(f"log{i}", f"{sys.executable} {DEAL_LOG_BOT}") for i in range(bots))
    return Plan(game="furious-five", bots=specs, table_size=table_size, games_per_table=games,
                options={"rounds": 1}, seed=11, control=CONTROL)


def expected_schedule(plan: Plan) -> set[tuple[int, int, tuple[str, ...], int]]:
    """(table, game number, bots in seat order, seed) as the arena always scheduled
    them: deal ``g // k`` with seats rotated by ``g % k``, each table its own deal
    seeds (the keyed hash of :mod:`arena.formats.deals`)."""
    k = plan.table_size
    schedule = set()
    for number, table in enumerate(plan.tables()):
        for g in range(plan.games_per_table):
            seats = tuple(plan.bots[table[(seat + g % k) % k]].name for seat in range(k))
            schedule.add((number, g, seats, deal_seed(known_key(11), number, g // k)))
    return schedule


def stored_schedule(store: Store, tid: int) -> set[tuple[int, int, tuple[str, ...], int]]:
    return {(g.table, g.number, tuple(g.seats), g.seed) for g in store.games(tid)}


def read_log(store: Store, tid: int, games: set[tuple[int, int]] | None = None) -> list[dict]:
    """The deal log lines the bots wrote to stderr, from the stored games'
    stderr tails (of the given (table, game number) only, if given)."""
    log = []
    for game in store.games(tid):
        if games is not None and (game.table, game.number) not in games:
            continue
        record = store.record(game.id)
        assert record is not None
        for tail in record.stderr:
            log += [json.loads(line[5:]) for line in tail.splitlines() if line.startswith("DEAL ")]
    return log


def assert_no_process_sees_a_deal_twice(plan: Plan, log: list[dict]) -> None:
    game = make_game(plan.game, plan.table_size, plan.options)
    deal_of: dict[tuple[str, ...], int] = {}
    seeds = {plan.deal_seeds().seed(t, d) for t in range(len(plan.tables()))
             for d in range(plan.games_per_table // plan.table_size)}
    for seed in seeds:
        state = game.new_state(seed)
        for seat in range(plan.table_size):
            deal_of[tuple(sorted(state.observation(seat)["hand"]))] = seed
    assert len(deal_of) == plan.table_size * len(seeds), "hands must identify deals"
    seen: dict[str, list[int]] = defaultdict(list)
    for entry in log:
        hand = tuple(entry["hand"])
        assert hand in deal_of, f"logged hand {hand} was dealt in no deal"
        seen[entry["process"]].append(deal_of[hand])
    for process, deals in seen.items():
        assert len(deals) == len(set(deals)), f"process {process} saw a deal twice: {deals}"


def test_streams_cover_every_game_once_with_one_deal_each() -> None:
    plan = plan_of(4, 3, 9)
    streams = plan.streams()
    assert len(streams) == len(plan.tables()) * 3  # 3 deals: one block
    played = [(s.table, g) for s in streams for g in s.games]
    assert sorted(played) == [(t, g) for t in range(len(plan.tables())) for g in range(9)]
    for stream in streams:
        table = plan.tables()[stream.table]
        assert [plan.deal(g) for g in stream.games] == [0, 1, 2]  # each deal once, in order
        assert all(plan.seating(table, g) == list(stream.seating) for g in stream.games)


def test_blocks_split_each_rotation_and_chains_join_the_streams_of_a_deal() -> None:
    plan = plan_of(2, 2, 2 * (2 * DEAL_BLOCK + 3))  # one table, 2 rotations, 3 blocks
    streams = plan.streams()
    # Each block's rotations in their drawn order (tests/test_rotation_order.py).
    assert [(s.block, s.rotation, len(s.games)) for s in streams] == [
        (b, r, n) for b, n in ((0, DEAL_BLOCK), (1, DEAL_BLOCK), (2, 3))
        for r in plan.block_order(0, b * DEAL_BLOCK, 2)]
    assert sorted(g for s in streams for g in s.games) == list(range(plan.games_per_table))
    for stream in streams:
        deals = [plan.deal(g) for g in stream.games]
        assert deals == list(range(stream.block * DEAL_BLOCK, stream.block * DEAL_BLOCK
                                   + len(deals)))
        assert {g % 2 for g in stream.games} == {stream.rotation}
    # One chain per block: its two rotations, in their order.
    assert plan.chains() == [(streams[0], streams[1]), (streams[2], streams[3]),
                             (streams[4], streams[5])]
    assert [chain_name(c) for c in plan.chains()] == ["0/0", "0/1", "0/2"]


def test_chains_join_every_table_that_plays_the_same_deals() -> None:
    # With the same deals at every table (--same-deals), a block's streams at
    # every table share its deals, so they are one chain.
    plan = dataclasses.replace(plan_of(4, 3, 3 * (DEAL_BLOCK + 1)), same_deals=True)
    chains = plan.chains()
    assert [len(chain) for chain in chains] == [4 * 3, 4 * 3]
    assert [{s.block for s in chain} for chain in chains] == [{0}, {1}]
    # By default each table has its own deals: a chain is one block of one table.
    own = dataclasses.replace(plan, same_deals=False).chains()
    assert len(own) == 4 * 2 and all(len({s.table for s in c}) == 1 for c in own)
    # Streams with their own deals are chained by deal, whatever their table.
    streams = plan.streams()
    seeds = {(s.table, s.block): 100 * s.table + s.block for s in streams}
    by_table = chains_of(streams, lambda s: {seeds[s.table, s.block]})
    assert len(by_table) == 4 * 2 and all(len(c) == 3 for c in by_table)
    assert [(c[0].block, c[0].table) for c in by_table] == [(b, t) for b in (0, 1)
                                                              for t in range(4)]
    assert all([s.rotation for s in c] == list(plan.block_order(
        c[0].table, c[0].block * DEAL_BLOCK, 3)) for c in by_table)
    # A stacked deck: every game shares its first hand.
    stacked = dataclasses.replace(plan, options={**plan.options,
                                                 "deck": make_game(plan.game, 3).deck()})
    assert len(stacked.chains()) == 1


def test_no_bot_process_plays_two_games_of_one_deal(tmp_path: Path) -> None:
    plan = plan_of(3, 3, 9)  # one table, 3 seat rotations x 3 deals
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    tid = create_tournament(store, plan)
    trio.run(lambda: run_tournament(plan, store, tid, parallel=2))

    assert stored_schedule(store, tid) == expected_schedule(plan)
    assert all(not g.faults for g in store.games(tid))
    log = read_log(store, tid)
    assert len(log) == plan.total_games * plan.table_size  # every seat of every game
    assert_no_process_sees_a_deal_twice(plan, log)
    # One process per seat of each stream, each told it plays the stream's 3 games.
    assert len({e["process"] for e in log}) == 3 * plan.table_size
    assert {e["games"] for e in log} == {3}


def test_resume_plays_exactly_the_missing_games_on_fresh_processes(tmp_path: Path) -> None:
    plan = plan_of(3, 2, 6)  # three tables, 2 seat rotations x 3 deals
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    tid = create_tournament(store, plan)
    trio.run(lambda: run_tournament(plan, store, tid, parallel=2))
    lost = {(0, 2), (2, 3), (2, 5)}
    first = read_log(store, tid, {(t, g) for t in range(3) for g in range(6)} - lost)

    # Lose games as an interrupted run would: a middle game of one stream, and
    # the last two games of another.
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        ids = [row[0] for row in conn.execute(
            "select games.id from games join tables on games.table_id = tables.id "
            "where (tables.number = 0 and games.number = 2) "
            "or (tables.number = 2 and games.number in (3, 5))")]
        assert len(ids) == 3
        marks = ",".join("?" * len(ids))
        for table in ("records", "faults", "move_logs", "replay_views"):
            conn.execute(f"delete from {table} where game_id in ({marks})", ids)
        conn.execute(f"delete from games where id in ({marks})", ids)
    trio.run(lambda: run_tournament(plan, store, tid, parallel=2))

    assert stored_schedule(store, tid) == expected_schedule(plan)
    resumed = read_log(store, tid, lost)
    assert sorted({e["game_number"] for e in resumed}) == [2, 3, 5]
    assert len(resumed) == 3 * plan.table_size
    # match_start counts the games this match plays: 1 in table 0's stream, 2 in table 2's.
    assert sorted(e["games"] for e in resumed) == [1, 1, 2, 2, 2, 2]
    assert not {e["process"] for e in resumed} & {e["process"] for e in first}
    assert_no_process_sees_a_deal_twice(plan, first + resumed)
