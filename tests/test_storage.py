"""The database (arena/store/database.py) on a SQLite file and on a real PostgreSQL
server: Alembic migrations (new, made before migrations, newer than the code),
the unique game key that makes saving idempotent, work claims, also with two
processes racing, and the stored record bytes in the new and the old format."""

from __future__ import annotations

import dataclasses
import gc
import json
import multiprocessing
import random
import sqlite3
import subprocess
import sys
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from arena.games import game_names
from arena.store.database import Store
from arena.store.engine import (
    FIRST_REVISION,
    HEAD_REVISION,
    MIGRATIONS,
    SQLITE_SCHEMA,
    StorageError,
    alembic_config,
    insert_new_in_savepoint,
    schema_revision,
    sqlite_statements,
    write_sqlite_schema,
)
from arena.store.records import PACKED_MSGPACK, FaultRecord, GameRecord, GameResult
from arena.store.schema import Base
from tests.pg import new_database
from tests.test_records import played

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty database on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'arena.db'}"
    return new_database(request.getfixturevalue("postgres_server_url"))


def old_pack(record: GameRecord) -> bytes:
    """GameRecord.pack as the code before msgpack stored records (zlib JSON)."""
    return zlib.compress(json.dumps(record.to_json(), separators=(",", ":")).encode(), 6)


def result(seed: int = 3, faults: int = 1) -> GameResult:
    """A full 3-seat furious-five game with random moves, as the referee returns it."""
    record = played("furious-five", 3, seed)
    return GameResult(seed=seed, bots=["a", "b", "c"], scores=[2.0, 0.0, -2.0],
                      game_places=[1, 2, 3], places=[1, 2, 3],
                      faults=[FaultRecord(s, "abc"[s], "crash", "exited 1", "boom", 5)
                              for s in range(faults)],
                      record=record, ignored=[0, 0, 0], duration=1.5,
                      decisions=sum(map(len, record.actions)))


def new_tournament(store: Store, games: int = 6) -> int:
    store.register_bots([(name, "bot") for name in "abc"])
    return store.create_tournament("furious-five", {"table_size": 3}, [["a", "b", "c"]], games)


def count(url: str, table: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return int(connection.scalar(text(f"SELECT count(*) FROM {table}")))
    finally:
        engine.dispose()


def revision(url: str) -> str | None:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return schema_revision(connection)
    finally:
        engine.dispose()


# -- migrations ----------------------------------------------------------------------
def test_the_head_revision_is_the_newest_migration() -> None:
    assert ScriptDirectory(str(MIGRATIONS)).get_heads() == [HEAD_REVISION]


def test_a_new_database_is_migrated_to_the_head_and_matches_the_models(url: str) -> None:
    Store(url).close()
    assert revision(url) == HEAD_REVISION != FIRST_REVISION
    engine = create_engine(url)
    with engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
    engine.dispose()


def test_a_new_sqlite_database_is_what_the_migrations_make(tmp_path: Path) -> None:
    """The snapshot a new SQLite database is made from (no Alembic) is current: the same
    statements as running every migration leaves (whose order of a table's indexes
    varies from run to run), and a new database holds them."""
    fresh = tmp_path / "fresh.json"
    write_sqlite_schema(fresh)
    made, snapshot = json.loads(fresh.read_text()), json.loads(SQLITE_SCHEMA.read_text())
    assert (made["revision"], sorted(made["statements"])) == (
        snapshot["revision"], sorted(snapshot["statements"])), (
        "the migrations changed: remake arena/store/sqlite_schema.json with "
        "python -c 'from arena.store.engine import write_sqlite_schema; write_sqlite_schema()'")
    url = f"sqlite:///{tmp_path / 'new.db'}"
    Store(url).close()
    engine = create_engine(url)
    with engine.connect() as connection:
        assert sqlite_statements(connection) == snapshot["statements"]
    engine.dispose()
    assert revision(url) == HEAD_REVISION


#: The schema as the code before migrations created it (SQLAlchemy's create_all
#: of its models), ``faults.step`` optional: the oldest code had none.
LEGACY_DDL = """
CREATE TABLE bots (id {serial}, name VARCHAR(200) NOT NULL, command TEXT NOT NULL,
    version VARCHAR(200) NOT NULL, author VARCHAR(200) NOT NULL, UNIQUE (name));
CREATE TABLE tournaments (id {serial}, kind VARCHAR(20) NOT NULL, game VARCHAR(50) NOT NULL,
    config JSON NOT NULL, status VARCHAR(20) NOT NULL, total_games INTEGER NOT NULL,
    created {datetime} NOT NULL);
CREATE TABLE tables (id {serial}, tournament_id INTEGER NOT NULL, number INTEGER NOT NULL,
    bots JSON NOT NULL, UNIQUE (tournament_id, number),
    FOREIGN KEY(tournament_id) REFERENCES tournaments (id));
CREATE TABLE games (id {serial}, table_id INTEGER NOT NULL, number INTEGER NOT NULL,
    seed BIGINT NOT NULL, options JSON NOT NULL, seats JSON NOT NULL, scores JSON NOT NULL,
    game_places JSON NOT NULL, places JSON NOT NULL, fault_count INTEGER NOT NULL,
    ignored JSON NOT NULL, decisions INTEGER NOT NULL, duration FLOAT NOT NULL,
    finished {datetime} NOT NULL, UNIQUE (table_id, number),
    FOREIGN KEY(table_id) REFERENCES tables (id));
CREATE INDEX ix_games_table_id ON games (table_id);
CREATE TABLE faults (id {serial}, game_id INTEGER NOT NULL, seat INTEGER NOT NULL,
    bot VARCHAR(200) NOT NULL, kind VARCHAR(30) NOT NULL, detail TEXT NOT NULL,
    stderr_tail TEXT NOT NULL{step}, FOREIGN KEY(game_id) REFERENCES games (id));
CREATE INDEX ix_faults_game_id ON faults (game_id);
CREATE INDEX ix_faults_bot ON faults (bot);
CREATE TABLE records (game_id INTEGER NOT NULL, data {blob} NOT NULL, PRIMARY KEY (game_id),
    FOREIGN KEY(game_id) REFERENCES games (id));
"""
LEGACY_TYPES = {
    "sqlite": {"serial": "INTEGER NOT NULL PRIMARY KEY", "datetime": "DATETIME",
               "blob": "BLOB"},
    "postgresql": {"serial": "SERIAL NOT NULL PRIMARY KEY",
                   "datetime": "TIMESTAMP WITH TIME ZONE", "blob": "BYTEA"},
}


def make_legacy_database(url: str, step: bool, record: GameRecord) -> None:
    """A database as the code before migrations left it: one tournament of 3-seat
    tables, its game 4 (deal 1, rotation 1) with a fault and its record in the
    old zlib-JSON format."""
    engine = create_engine(url)
    types = LEGACY_TYPES[engine.dialect.name]
    with engine.begin() as connection:
        for statement in LEGACY_DDL.format(step=", step INTEGER" if step else "",
                                           **types).split(";"):
            if statement.strip():
                connection.exec_driver_sql(statement)
        now = datetime.now(UTC)
        connection.execute(text(
            "INSERT INTO bots (name, command, version, author) VALUES "
            "('a', 'x', '', ''), ('b', 'x', '', ''), ('c', 'x', '', '')"))
        connection.execute(text(
            "INSERT INTO tournaments (kind, game, config, status, total_games, created) "
            "VALUES ('tournament', 'furious-five', :config, 'interrupted', 6, :now)"),
            {"config": json.dumps({"game": "furious-five", "table_size": 3}), "now": now})
        connection.execute(text("INSERT INTO tables (tournament_id, number, bots) "
                                "VALUES (1, 0, :bots)"), {"bots": json.dumps(["a", "b", "c"])})
        connection.execute(text(
            "INSERT INTO games (table_id, number, seed, options, seats, scores, game_places, "
            "places, fault_count, ignored, decisions, duration, finished) VALUES (1, 4, 77, "
            "'{}', :seats, '[1, 0, -1]', '[1, 2, 3]', '[1, 2, 3]', 1, '[0, 0, 0]', 10, 0.5, "
            ":now)"), {"seats": json.dumps(["b", "c", "a"]), "now": now})
        connection.execute(text(
            "INSERT INTO faults (game_id, seat, bot, kind, detail, stderr_tail) "
            "VALUES (1, 2, 'a', 'timeout', 'late', 'tail')"))
        connection.execute(text("INSERT INTO records (game_id, data) VALUES (1, :data)"),
                           {"data": old_pack(record)})
    engine.dispose()


@pytest.mark.parametrize("step", [True, False], ids=["with-step", "without-step"])
def test_a_database_made_before_migrations_is_adopted_and_its_game_kept(
        url: str, step: bool) -> None:
    record = played("furious-five", 3, 11)
    make_legacy_database(url, step, record)
    store = Store(url)
    assert revision(url) == HEAD_REVISION
    (game,) = store.games()
    assert (game.number, game.seed, game.seats) == (4, 77, ["b", "c", "a"])
    assert game.faults == [{"seat": 2, "bot": "a", "kind": "timeout", "detail": "late",
                            "stderr_tail": "tail", "step": None}]
    assert store.record(game.id) == record
    # The migration gave it its key (deal 1, rotation 1): saving it again stores nothing.
    assert store.save_game(1, 0, 4, {}, result()) == game.id
    assert store.save_game(1, 0, 4, {}, result(), deal=1, rotation=1) == game.id
    again = store.save_game(1, 0, 5, {}, result())
    assert again != game.id and count(url, "games") == 2
    assert store.done_games(1) == {(0, 4), (0, 5)}
    store.close()


def test_a_schema_newer_than_the_code_is_refused_in_one_line(url: str) -> None:
    Store(url).close()
    engine = create_engine(url)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = 'ffff99'"))
    engine.dispose()
    with pytest.raises(StorageError) as refused:
        Store(url)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("database ")
    assert (f"has schema revision ffff99, newer than this arena knows "
            f"(head {HEAD_REVISION}): upgrade five-arena") in message
    assert revision(url) == "ffff99"  # untouched


def test_a_downgraded_database_is_upgraded_again_with_its_games(url: str) -> None:
    store = Store(url)
    tid = new_tournament(store)
    first = store.save_game(tid, 0, 5, {}, result())
    store.close()
    engine = create_engine(url)
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), FIRST_REVISION)
    engine.dispose()
    assert revision(url) == FIRST_REVISION
    store = Store(url)
    assert revision(url) == HEAD_REVISION
    assert store.save_game(tid, 0, 5, {}, result(), deal=1, rotation=2) == first
    assert count(url, "games") == 1
    store.close()


def test_several_arenas_opening_a_new_database_at_once(url: str) -> None:
    code = "import sys; from arena.store.database import Store; Store(sys.argv[1]).close()"
    procs = [subprocess.Popen([sys.executable, "-c", code, url], stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert revision(url) == HEAD_REVISION


def test_opening_waits_while_another_process_holds_the_sqlite_lock(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("BEGIN IMMEDIATE")
    waits: list[int] = []

    def on_locked() -> None:
        waits.append(1)
        holder.execute("ROLLBACK")

    Store(f"sqlite:///{path}", on_locked=on_locked).close()
    assert waits == [1] and revision(f"sqlite:///{path}") == HEAD_REVISION
    holder.close()


# -- the unique game key ---------------------------------------------------------------
def test_saving_a_game_twice_stores_it_once(url: str) -> None:
    store = Store(url)
    tid = new_tournament(store)
    first = store.save_game(tid, 0, 4, {"rounds": 3}, result(faults=2))
    assert store.save_game(tid, 0, 4, {"rounds": 3}, result(seed=9, faults=1)) == first
    (game,) = store.games(tid)
    assert game.seed == 3 and len(game.faults) == 2
    assert [count(url, table) for table in ("games", "faults", "records")] == [1, 2, 1]
    store.close()


def test_a_game_number_stored_under_another_key_is_an_error(url: str) -> None:
    store = Store(url)
    tid = new_tournament(store)
    store.save_game(tid, 0, 4, {}, result())
    with pytest.raises(StorageError, match="another deal and rotation"):
        store.save_game(tid, 0, 4, {}, result(), deal=0, rotation=0)
    assert count(url, "games") == 1
    store.close()


def test_the_savepoint_insert_skips_a_taken_key_and_keeps_the_transaction(url: str) -> None:
    store = Store(url)
    tid = new_tournament(store)
    claims = Base.metadata.tables["claims"]
    row = {"tournament_id": tid, "unit": "0/0", "owner": "x", "expires": 1.0}
    with store.engine.begin() as connection:
        assert insert_new_in_savepoint(connection, claims, row) == (tid, "0/0")
        assert insert_new_in_savepoint(connection, claims, {**row, "owner": "y"}) is None
        assert insert_new_in_savepoint(connection, claims, {**row, "unit": "0/1"}) is not None
    assert count(url, "claims") == 2
    store.close()


def save_games(url: str, tid: int, numbers: list[int], start: Any) -> None:
    store = Store(url)
    played_once = result()
    games = [dataclasses.replace(played_once, seed=number) for number in numbers]
    start.wait()  # then both save the same games in the same order, racing on each key
    for number, game in zip(numbers, games, strict=True):
        store.save_game(tid, 0, number, {}, game)
    store.close()


def test_two_processes_saving_the_same_games_store_each_once(url: str) -> None:
    store = Store(url)
    tid = new_tournament(store, 12)
    numbers = list(range(12))
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    procs = [context.Process(target=save_games, args=(url, tid, numbers, start))
             for _ in range(2)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    games = list(store.games(tid))
    assert sorted(game.number for game in games) == numbers
    assert all(len(game.faults) == 1 and game.seed == game.number for game in games)
    assert count(url, "records") == 12 and count(url, "faults") == 12
    store.close()


# -- claims --------------------------------------------------------------------------
def test_a_claim_is_held_until_released_or_expired(url: str) -> None:
    store = Store(url)
    tid = new_tournament(store)
    assert store.claim(tid, "0/1", "arena-1", 60)
    assert not store.claim(tid, "0/1", "arena-2", 60)
    assert store.claim(tid, "0/1", "arena-1", 60)  # its own: renewed
    assert store.claim(tid, "0/2", "arena-2", 60)  # another unit
    assert not store.renew(tid, "0/1", "arena-2", 60)
    store.release(tid, "0/1", "arena-2")  # not its claim: nothing happens
    assert not store.claim(tid, "0/1", "arena-2", 60)
    store.release(tid, "0/1", "arena-1")
    assert store.claim(tid, "0/1", "arena-2", 0)  # a lease that has already run out
    assert store.claim(tid, "0/1", "arena-1", 60)
    assert not store.renew(tid, "0/1", "arena-2", 60)
    assert store.renew(tid, "0/1", "arena-1", 60)
    store.close()


def claim_units(url: str, tid: int, units: list[str], owner: str, start: Any,
                won: Any) -> None:
    store = Store(url)
    start.wait()
    won.put((owner, [unit for unit in units if store.claim(tid, unit, owner, 600)]))
    store.close()


def test_two_processes_claiming_the_same_units_get_each_unit_once(url: str) -> None:
    store = Store(url)
    tid = new_tournament(store)
    units = [f"{table}/{rotation}" for table in range(20) for rotation in range(3)]
    context = multiprocessing.get_context("spawn")
    start, won = context.Barrier(2), context.Queue()
    procs = [context.Process(target=claim_units, args=(
        url, tid, random.Random(owner).sample(units, len(units)), owner, start, won))
        for owner in ("arena-1", "arena-2")]
    for proc in procs:
        proc.start()
    results = dict(won.get(timeout=120) for _ in procs)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    assert sorted(results["arena-1"] + results["arena-2"]) == sorted(units)
    assert count(url, "claims") == len(units)
    store.close()


# -- the stored record bytes ----------------------------------------------------------------
@pytest.mark.parametrize("game", game_names())
def test_a_record_round_trips_through_the_new_and_the_old_bytes(game: str) -> None:
    record = played(game, 3, 5)
    new, old = record.pack(), old_pack(record)
    assert new[:1] == PACKED_MSGPACK and old[:1] == b"\x78"
    assert GameRecord.unpack(new) == record == GameRecord.unpack(old)
    assert gc.isenabled()  # unpack pauses the garbage collector, and only while it runs


def test_bots_registered_by_two_stores_at_once_are_stored_once(url: str) -> None:
    """Two checks of an upload server register the same opponents at once: on
    PostgreSQL the second insert of a name failed the check (a unique key)."""
    import threading

    stores = [Store(url) for _ in range(2)]
    names = [f"opponent{i}" for i in range(40)]
    start, failures = threading.Barrier(2), []

    def register(store: Store) -> None:
        start.wait()
        try:
            for name in names:
                store.register_bots([(name, "python -m sample_bots.random_bot")])
        except Exception as exc:  # the failure is the finding
            failures.append(exc)

    threads = [threading.Thread(target=register, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    engine = create_engine(url)
    with engine.connect() as connection:
        counts = connection.execute(text(
            "SELECT name, count(*) FROM bots GROUP BY name")).all()
    engine.dispose()
    assert sorted(counts) == [(name, 1) for name in sorted(names)]
    for store in stores:
        store.close()
