"""Connecting to a database: URLs, SQLite's pragmas and write transactions, waiting
for another process's lock, schema migrations (Alembic, run from code) and
inserts that tolerate a row already there.  Queries live in
:mod:`arena.store.database`, tables in :mod:`arena.store.tables` and
:mod:`arena.store.schema`."""

from __future__ import annotations

import functools
import json
import os
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import (
    Insert,
    Table,
    create_engine,
    event,
    insert,
    inspect,
    text,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    IntegrityError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)

from arena.store.revision import HEAD_REVISION

if TYPE_CHECKING:
    from alembic.config import Config


#: How long one SQLite write waits for another process's lock before it gives up.
BUSY_TIMEOUT_MS = 2000

#: Seconds between attempts of a write that waits for the database's lock.
LOCK_RETRY_SECONDS = 1.0

#: Alembic's scripts: the schema's revisions.
MIGRATIONS = Path(__file__).with_name("migrations")

#: A new SQLite database's schema at :data:`HEAD_REVISION`: the statements that running
#: every migration leaves in ``sqlite_master``, replayed rather than running Alembic
#: (importing it and running the migrations costs about half a second of CPU);
#: :func:`write_sqlite_schema` remakes it, a test checks it is current.
SQLITE_SCHEMA = Path(__file__).with_name("sqlite_schema.json")

#: The revision that matches the schema of databases created before migrations.
FIRST_REVISION = "0001"


#: PostgreSQL advisory lock held (for one transaction) while migrating.
MIGRATION_LOCK_KEY = 0x46495645_4D494752  # "FIVEMIGR"

#: Execution option: a write transaction (on SQLite, BEGIN IMMEDIATE).
WRITE = "arena_write"

T = TypeVar("T")


class StorageError(Exception):
    """The database cannot be opened or used; the message says why in one line."""


class DatabaseLocked(StorageError):
    """Another process held the database's lock for longer than the busy timeout."""


def is_locked(exc: OperationalError) -> bool:
    message = str(exc.orig if exc.orig is not None else exc).lower()
    return "locked" in message or "busy" in message


def first_line(exc: Exception) -> str:
    orig = getattr(exc, "orig", None)
    return (str(orig or exc).splitlines() or [type(exc).__name__])[0]


def now() -> datetime:
    return datetime.now(UTC)


def sqlite_database(url: str) -> str | None:
    """The database of a SQLite URL (``""`` or ``":memory:"`` when in memory);
    None for another backend or a string that is not a URL."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite":
        return None
    return parsed.database or ""


#: The bot store's folder beside a SQLite database (``arena bot add``).
DEFAULT_BOT_STORE = "arena-bots"


def database_file(url: str) -> str | None:
    """The absolute path of a SQLite database file; None for another database."""
    database = sqlite_database(url)
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return os.path.abspath(database)


def private_paths(url: str) -> tuple[str, ...]:
    """What no bot may ever see: a SQLite database, its journals and the bot
    store beside it (other bots' files)."""
    path = database_file(url)
    if path is None:
        return ()
    store = os.path.join(os.path.dirname(os.path.realpath(path)), DEFAULT_BOT_STORE)
    return (path, *(path + suffix for suffix in ("-wal", "-shm", "-journal")), store)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # The driver's own transaction handling is off (isolation_level None):
    # _sqlite_begin begins every transaction, so that DDL and savepoints are
    # transactional and a write takes the lock when it begins.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    # A write begins IMMEDIATE: it waits for the write lock (busy timeout) up
    # front, rather than failing when a read transaction turns into a write.
    write = connection.get_execution_options().get(WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def retry_locked(work: Callable[[], T], on_locked: Callable[[], None] | None) -> T:
    """``work()``, retried while the database is locked, calling ``on_locked()``
    before each wait; with ``on_locked`` None, DatabaseLocked at once."""
    while True:
        try:
            return work()
        except OperationalError as exc:
            if not is_locked(exc):
                raise
            if on_locked is None:
                raise DatabaseLocked(f"database is locked: {first_line(exc)}") from None
            on_locked()
        time.sleep(LOCK_RETRY_SECONDS)


def writer(engine: Engine) -> Engine:
    """``engine`` for write transactions: on SQLite they begin IMMEDIATE."""
    return engine.execution_options(**{WRITE: True})


class Missing(StorageError):
    """No arena database at the URL (no file, an empty file, no arena tables), and
    the caller did not ask to create one."""


def new_database(url: str) -> str | None:
    """Why ``url`` holds no arena database yet, without connecting (a connection
    would create a SQLite file): "no such file" or "an empty file" for a SQLite
    file; None otherwise (a database that exists, or another backend, which
    :func:`open_engine` checks for the arena's tables)."""
    path = database_file(url)
    if path is None:
        return None
    try:
        size = os.stat(path).st_size
    except (FileNotFoundError, NotADirectoryError):
        return f"no database file {path!r}"
    except OSError as exc:
        raise StorageError(f"cannot open database {url!r}: {exc.strerror or exc}") from None
    return f"{path!r} is an empty file (0 bytes)" if size == 0 else None


def open_engine(url: str, on_locked: Callable[[], None] | None = None, *,
                create: bool = True) -> Engine:
    """An engine for ``url`` with the schema upgraded to the newest revision
    (:func:`upgrade_schema`); StorageError if unusable.

    Without ``create``, :class:`Missing` for a database not made yet (no file, an
    empty file, a database without the arena's tables) and nothing is created.
    While the database is locked, upgrading waits (see ``on_locked`` in :class:`Store`)."""
    return opened(url, on_locked, create=create)[0]


def opened(url: str, on_locked: Callable[[], None] | None = None, *,
           create: bool = True) -> tuple[Engine, bool]:
    """:func:`open_engine`, and whether this call created the arena's schema (a new
    database)."""
    if not create and (why := new_database(url)) is not None:
        raise Missing(f"no arena database at {url}: {why}")  # before connecting creates it
    try:
        parsed = make_url(url)
        is_sqlite = parsed.get_backend_name() == "sqlite"
        # Games are saved from a worker thread, so SQLite must allow it.
        kwargs: dict[str, Any] = {"connect_args": {"check_same_thread": False}} if is_sqlite \
            else {}
        engine = create_engine(parsed, **kwargs)
        if is_sqlite:
            event.listen(engine, "connect", _sqlite_pragmas)
            event.listen(engine, "begin", _sqlite_begin)
        created = retry_locked(lambda: upgrade_schema(engine, create=create), on_locked)
    except ArgumentError:
        raise StorageError(f"not a database URL: {url!r} (try sqlite:///arena.db)") from None
    except NoSuchModuleError as exc:
        raise StorageError(f"unsupported database URL {url!r}: {exc}") from None
    except ModuleNotFoundError as exc:
        raise StorageError(f"database driver for {url!r} is not installed: {exc.name}") from None
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot open database {url!r}: {first_line(exc)}") from None
    return engine, created

# -- the schema's revisions (Alembic) -----------------------------------------------
def schema_revision(connection: Connection) -> str | None:
    """The database's schema revision; None if it has none (new, or made
    before migrations)."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.scalar(text("SELECT version_num FROM alembic_version"))


def alembic_config(connection: Connection) -> Config:
    """Alembic's configuration (no ``alembic.ini``) to run the arena's migrations
    on ``connection``, in its transaction: for ``alembic.command`` functions."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def upgrade_schema(engine: Engine, *, create: bool = True) -> bool:
    """Bring the database to :data:`HEAD_REVISION`: create the schema in a new
    one (only with ``create``, else :class:`Missing`), adopt one made before
    migrations, apply the missing revisions; one transaction, one process at a
    time.  StorageError for a revision this code does not know (made by newer
    code).  Whether it created the schema."""
    with engine.connect() as connection:
        revision = schema_revision(connection)
        if revision == HEAD_REVISION:
            return False
        if revision is None and not create and not inspect(connection).has_table("games"):
            raise Missing(f"no arena database at {engine.url.render_as_string()}: "
                          f"it holds no arena tables")
    with writer(engine).begin() as connection:
        if connection.dialect.name == "postgresql":
            # Concurrent arenas on a new database: the second waits, then finds it done.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                               {"key": MIGRATION_LOCK_KEY})
        current = schema_revision(connection)
        if current == HEAD_REVISION:
            return False
        new = current is None and not inspect(connection).has_table("games")
        if new and _create_sqlite_schema(connection):
            return True
        _migrate(connection, current, engine.url.render_as_string())
        return new


def sqlite_statements(connection: Connection) -> list[str]:
    """Every statement a SQLite database's schema is made of (tables, indexes,
    triggers, views), in the order they were made; SQLite's own tables left out."""
    return list(connection.scalars(text(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
        "ORDER BY rowid")))


def _create_sqlite_schema(connection: Connection) -> bool:
    """In an empty SQLite database, the schema at :data:`HEAD_REVISION` from
    :data:`SQLITE_SCHEMA`, stamped; False (nothing done) for another database, a
    database that holds anything, or a snapshot of another revision."""
    if connection.dialect.name != "sqlite" or sqlite_statements(connection):
        return False
    try:
        snapshot = json.loads(SQLITE_SCHEMA.read_text())
    except (OSError, ValueError):
        return False
    if snapshot.get("revision") != HEAD_REVISION:
        return False
    for statement in snapshot["statements"]:
        connection.exec_driver_sql(statement)
    connection.execute(text("INSERT INTO alembic_version (version_num) VALUES (:head)"),
                       {"head": HEAD_REVISION})
    return True


def write_sqlite_schema(path: Path = SQLITE_SCHEMA) -> None:
    """Write :data:`SQLITE_SCHEMA` from a new database that every migration made (after
    adding a migration: ``python -c 'from arena.store.engine import write_sqlite_schema;
    write_sqlite_schema()'``)."""
    with tempfile.TemporaryDirectory() as folder:
        engine = create_engine(f"sqlite:///{folder}/schema.db")
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        with writer(engine).begin() as connection:
            _migrate(connection, None, "the snapshot's database")
        with engine.connect() as connection:
            statements = sqlite_statements(connection)
        engine.dispose()
    path.write_text(json.dumps({"revision": HEAD_REVISION, "statements": statements},
                               indent=1) + "\n")


def _migrate(connection: Connection, current: str | None, url: str) -> None:
    from alembic import command
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    if current is not None and current not in {
            script.revision for script in ScriptDirectory(str(MIGRATIONS)).walk_revisions()}:
        raise StorageError(
            f"database {url} has schema revision {current}, newer than this arena "
            f"knows (head {HEAD_REVISION}): upgrade five-arena")
    config = alembic_config(connection)
    try:
        if current is None and inspect(connection).has_table("games"):
            _adopt_unversioned(connection)
            command.stamp(config, FIRST_REVISION)
        command.upgrade(config, HEAD_REVISION)
    except CommandError as exc:
        raise StorageError(f"cannot upgrade database {url}: {first_line(exc)}") from None


def _adopt_unversioned(connection: Connection) -> None:
    """Make a database created before migrations match :data:`FIRST_REVISION`:
    the oldest code created ``faults`` without ``step``."""
    columns = {column["name"] for column in inspect(connection).get_columns("faults")}
    if "step" not in columns:
        connection.execute(text("ALTER TABLE faults ADD COLUMN step INTEGER"))


def insert_new(connection: Connection, table: Table,
               values: dict[str, Any]) -> tuple[Any, ...] | None:
    """Insert a row unless a row with the same unique key is there (that one is
    left as it is): the new row's primary key, or None.  Race-safe: of two
    transactions inserting one key at once, the second waits for the first
    and inserts nothing if it commits."""
    dialect = connection.dialect.name
    if dialect not in ("sqlite", "postgresql"):
        return insert_new_in_savepoint(connection, table, values)
    row = connection.execute(_insert_unless_taken(dialect, table), values).first()
    return None if row is None else tuple(row)


@functools.cache
def _insert_unless_taken(dialect: str, table: Table) -> Insert:
    # Built once: building a statement costs more CPU than running it (cached compiled).
    # Each dialect's module is imported here, so a SQLite run never loads PostgreSQL's
    # (about 30 ms of CPU).
    keys = table.primary_key.columns
    if dialect == "sqlite":
        from sqlalchemy.dialects import sqlite
        return sqlite.insert(table).on_conflict_do_nothing().returning(*keys)
    from sqlalchemy.dialects import postgresql
    return postgresql.insert(table).on_conflict_do_nothing().returning(*keys)


def insert_new_in_savepoint(connection: Connection, table: Table,
                            values: dict[str, Any]) -> tuple[Any, ...] | None:
    """:func:`insert_new` for databases without ``ON CONFLICT DO NOTHING``: a
    plain insert in a savepoint, rolled back on a unique violation."""
    try:
        with connection.begin_nested():
            inserted = connection.execute(insert(table), values).inserted_primary_key
            return tuple(inserted or ())
    except IntegrityError:
        return None
