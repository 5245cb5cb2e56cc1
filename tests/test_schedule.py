"""The tournament schedule: duplicate deals, and no bot process sees a deal twice."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

import trio

from arena.formats.deals import deal_seed, known_key
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
    assert len(streams) == len(plan.tables()) * 3
    played = [(s.table, g) for s in streams for g in s.games]
    assert sorted(played) == [(t, g) for t in range(len(plan.tables())) for g in range(9)]
    for stream in streams:
        table = plan.tables()[stream.table]
        assert [plan.deal(g) for g in stream.games] == [0, 1, 2]  # each deal once, in order
        assert all(plan.seating(table, g) == list(stream.seating) for g in stream.games)


def test_lanes_split_each_rotation_and_still_play_each_deal_once_per_stream() -> None:
    plan = plan_of(2, 2, 10)  # one table, 5 deals, 2 rotations
    streams = plan.streams(lanes=3)
    assert len(streams) == 3 * 2
    played = sorted((s.table, g) for s in streams for g in s.games)
    assert played == [(0, g) for g in range(10)]
    for stream in streams:
        deals = [plan.deal(g) for g in stream.games]
        assert deals == sorted(set(deals))  # in order, none twice
        assert len({d % 3 for d in deals}) == 1  # one lane's deals
        assert {g % 2 for g in stream.games} == {stream.rotation}
    assert plan.streams(lanes=9) == plan.streams(lanes=5)  # no lane without a deal


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
        conn.execute(f"delete from records where game_id in ({marks})", ids)
        conn.execute(f"delete from faults where game_id in ({marks})", ids)
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
