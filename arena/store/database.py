"""Storage: every stored record and every query, in one module (SQLAlchemy 2).

Default: a SQLite file (``sqlite:///arena.db``); any SQLAlchemy URL works.
Each finished game is committed in its own transaction as it finishes, so an
interrupted tournament loses at most the games that were in flight.  While
another process holds the database's write lock (another arena, a backup),
writes wait and retry (:class:`DatabaseLocked`, ``on_locked``) rather than fail.

The schema is Alembic's (``arena/store/migrations``): :func:`open_engine` upgrades
a database to the newest revision, adopts one created before migrations, and
refuses one newer than this code.  Every game has a key (table, deal, rotation)
that the database keeps unique, so saving a game twice stores it once; several
arenas can share a tournament through :meth:`Store.claim`.

Reports read only what is here (:func:`Store.games`, :func:`Store.tournaments`
...), never game internals.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Insert,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    case,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    IntegrityError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    mapped_column,
    relationship,
    selectinload,
)

from arena.store.records import GameRecord, GameResult, is_no_result

if TYPE_CHECKING:
    from alembic.config import Config

DEFAULT_URL = "sqlite:///arena.db"
#: The kind of the tournaments ``arena check-bot`` stores: their games count in
#: no leaderboard or rating.
CHECK_KIND = "check"
#: How long one SQLite write waits for another process's lock before it gives up.
BUSY_TIMEOUT_MS = 2000
#: Seconds between attempts of a write that waits for the database's lock.
LOCK_RETRY_SECONDS = 1.0
#: Alembic's scripts: the schema's revisions.
MIGRATIONS = Path(__file__).with_name("migrations")
#: The revision that matches the schema of databases created before migrations.
FIRST_REVISION = "0001"
#: The newest revision in ``MIGRATIONS`` (a test checks): known without
#: importing Alembic, which only a database that needs migrating loads.
HEAD_REVISION = "0003"
#: PostgreSQL advisory lock held (for one transaction) while migrating.
MIGRATION_LOCK_KEY = 0x46495645_4D494752  # "FIVEMIGR"
#: Execution option: a write transaction (on SQLite, BEGIN IMMEDIATE).
_WRITE = "arena_write"

T = TypeVar("T")


class StorageError(Exception):
    """The database cannot be opened or used; the message says why in one line."""


class DatabaseLocked(StorageError):
    """Another process held the database's lock for longer than the busy timeout."""


def _is_locked(exc: OperationalError) -> bool:
    message = str(exc.orig if exc.orig is not None else exc).lower()
    return "locked" in message or "busy" in message


def _first_line(exc: Exception) -> str:
    orig = getattr(exc, "orig", None)
    return (str(orig or exc).splitlines() or [type(exc).__name__])[0]


def _now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class BotRow(Base):
    """A bot version: one immutable program, identified by its label ``name``
    (``BASE@VERSION``; a bot stored before versions has version "" and its
    label is its base name)."""

    __tablename__ = "bots"
    __table_args__ = (Index("uq_bots_base_version", "base", "version", unique=True),)
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    command: Mapped[str] = mapped_column(Text)
    version: Mapped[str] = mapped_column(String(200), default="")
    author: Mapped[str] = mapped_column(String(200), default="")
    base: Mapped[str] = mapped_column(String(200), index=True)
    #: sha256 of the content (a directory's files, or an ad-hoc command and its files).
    fingerprint: Mapped[str] = mapped_column(String(64), default="")
    #: The stored copy the bot runs in; NULL for an ad-hoc version.
    directory: Mapped[str | None] = mapped_column(Text, nullable=True)
    build: Mapped[str] = mapped_column(Text, default="")
    #: The games its manifest lists; NULL: not declared (ad-hoc).
    games: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    added: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    retired: Mapped[bool] = mapped_column(Boolean, default=False)
    #: The version the bot itself reports in its handshake.
    reported: Mapped[str] = mapped_column(String(200), default="")


class TournamentRow(Base):
    """One tournament (or one ``arena play`` game): its configuration and status."""

    __tablename__ = "tournaments"
    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(20), default="tournament")
    game: Mapped[str] = mapped_column(String(50))
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(20), default="running")
    total_games: Mapped[int] = mapped_column(Integer, default=0)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    tables: Mapped[list[TableRow]] = relationship(back_populates="tournament")


class TableRow(Base):
    """A table of a tournament: which bots sit at it."""

    __tablename__ = "tables"
    __table_args__ = (UniqueConstraint("tournament_id", "number"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"))
    number: Mapped[int] = mapped_column(Integer)
    bots: Mapped[list[str]] = mapped_column(JSON)
    tournament: Mapped[TournamentRow] = relationship(back_populates="tables")


class GameRow(Base):
    """A finished game: who sat where and how it ended.  Its key (table, deal,
    rotation) is unique: game ``number`` of a table is the table's ``deal``-th
    deal in seat ``rotation``."""

    __tablename__ = "games"
    __table_args__ = (UniqueConstraint("table_id", "number"),
                      Index("uq_games_table_deal_rotation", "table_id", "deal", "rotation",
                            unique=True))
    id: Mapped[int] = mapped_column(primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("tables.id"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    deal: Mapped[int] = mapped_column(Integer)
    rotation: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(BigInteger)
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    seats: Mapped[list[str]] = mapped_column(JSON)
    scores: Mapped[list[float]] = mapped_column(JSON)
    game_places: Mapped[list[int]] = mapped_column(JSON)
    places: Mapped[list[int]] = mapped_column(JSON)
    fault_count: Mapped[int] = mapped_column(Integer, default=0)
    ignored: Mapped[list[int]] = mapped_column(JSON)
    decisions: Mapped[int] = mapped_column(Integer, default=0)
    duration: Mapped[float] = mapped_column(Float)
    finished: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    faults: Mapped[list[FaultRow]] = relationship(order_by="FaultRow.id")
    record: Mapped[RecordRow] = relationship(uselist=False)


class FaultRow(Base):
    """A bot fault in a game, with the bot's stderr tail."""

    __tablename__ = "faults"
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    bot: Mapped[str] = mapped_column(String(200), index=True)
    kind: Mapped[str] = mapped_column(String(30))
    detail: Mapped[str] = mapped_column(Text)
    stderr_tail: Mapped[str] = mapped_column(Text)
    #: First action step the arena played for the seat; NULL in older databases.
    step: Mapped[int | None] = mapped_column(Integer, nullable=True)


class RecordRow(Base):
    """A game's full record (:meth:`GameRecord.pack`): the action log (enough to
    replay the game exactly from seed + options), the events, the reveal, the
    move times and the bots' stderr."""

    __tablename__ = "records"
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class ClaimRow(Base):
    """Work an arena holds in a tournament (see :meth:`Store.claim`) until ``expires``
    (seconds since the epoch, by the claiming arena's clock)."""

    __tablename__ = "claims"
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    unit: Mapped[str] = mapped_column(String(200), primary_key=True)
    owner: Mapped[str] = mapped_column(String(200))
    expires: Mapped[float] = mapped_column(Float)


GAMES, FAULTS, RECORDS, BOTS, CLAIMS = (cast(Table, row.__table__) for row in (
    GameRow, FaultRow, RecordRow, BotRow, ClaimRow))


@dataclass(frozen=True)
class BotVersion:
    """A stored bot version (see :class:`BotRow`)."""

    base: str
    version: str
    command: str
    fingerprint: str
    directory: str | None = None
    build: str = ""
    games: list[str] | None = None
    author: str = ""
    added: datetime | None = None
    retired: bool = False
    reported: str = ""

    @property
    def label(self) -> str:
        """How its seats, faults and ratings name it: ``BASE@VERSION``."""
        return f"{self.base}@{self.version}" if self.version else self.base


def _bot_version(row: BotRow) -> BotVersion:
    return BotVersion(base=row.base, version=row.version, command=row.command,
                      fingerprint=row.fingerprint, directory=row.directory, build=row.build,
                      games=row.games, author=row.author, added=row.added,
                      retired=row.retired, reported=row.reported)


def _next_version(session: Session, base: str) -> str:
    taken = session.scalars(select(BotRow.version).where(BotRow.base == base)).all()
    return str(max((int(v) for v in taken if v.isdigit()), default=0) + 1)


@dataclass(frozen=True)
class StoredGame:
    """A game as reports see it."""

    id: int
    tournament_id: int
    table: int
    number: int
    game: str
    seed: int
    options: dict[str, Any]
    seats: list[str]
    scores: list[float]
    places: list[int]
    game_places: list[int]
    faults: list[dict[str, Any]]
    duration: float
    decisions: int
    ignored: list[int]

    @property
    def no_result(self) -> bool:
        """Every seat faulted: the game counts in no rating or place statistic."""
        return is_no_result(len(self.seats), {f["seat"] for f in self.faults})


def counted_games(games: Iterable[StoredGame]) -> list[StoredGame]:
    """The games that count for places (average place, first places, head-to-head):
    every game but the no-result ones.  Fault counts still use every game."""
    return [game for game in games if not game.no_result]


def stored_check(tournament: Mapping[str, Any]) -> dict[str, Any] | None:
    """The check report a stored tournament (:meth:`Store.tournament`) of kind
    :data:`CHECK_KIND` keeps in its config, with its ``tournament_id``,
    ``created`` and ``status``; None for any other tournament."""
    check = (tournament.get("config") or {}).get("check")
    if tournament.get("kind") != CHECK_KIND or not isinstance(check, dict):
        return None
    return {**check, "tournament_id": tournament["id"], "created": tournament["created"],
            "status": tournament["status"]}


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


def private_paths(url: str) -> tuple[str, ...]:
    """Files no bot may ever see: a SQLite database and its journals."""
    database = sqlite_database(url)
    if not database or database == ":memory:" or database.startswith("file:"):
        return ()
    path = os.path.abspath(database)
    return (path, *(path + suffix for suffix in ("-wal", "-shm", "-journal")))


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
    write = connection.get_execution_options().get(_WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _retry_locked(work: Callable[[], T], on_locked: Callable[[], None] | None) -> T:
    """``work()``, retried while the database is locked, calling ``on_locked()``
    before each wait; with ``on_locked`` None, DatabaseLocked at once."""
    while True:
        try:
            return work()
        except OperationalError as exc:
            if not _is_locked(exc):
                raise
            if on_locked is None:
                raise DatabaseLocked(f"database is locked: {_first_line(exc)}") from None
            on_locked()
        time.sleep(LOCK_RETRY_SECONDS)


def writer(engine: Engine) -> Engine:
    """``engine`` for write transactions: on SQLite they begin IMMEDIATE."""
    return engine.execution_options(**{_WRITE: True})


def open_engine(url: str, on_locked: Callable[[], None] | None = None) -> Engine:
    """An engine for ``url`` with the schema upgraded to the newest revision
    (:func:`upgrade_schema`); StorageError if unusable.

    While the database is locked, upgrading waits (see ``on_locked`` in :class:`Store`)."""
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
        _retry_locked(lambda: upgrade_schema(engine), on_locked)
    except ArgumentError:
        raise StorageError(f"not a database URL: {url!r} (try sqlite:///arena.db)") from None
    except NoSuchModuleError as exc:
        raise StorageError(f"unsupported database URL {url!r}: {exc}") from None
    except ModuleNotFoundError as exc:
        raise StorageError(f"database driver for {url!r} is not installed: {exc.name}") from None
    except SQLAlchemyError as exc:
        raise StorageError(f"cannot open database {url!r}: {_first_line(exc)}") from None
    return engine


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


def upgrade_schema(engine: Engine) -> None:
    """Bring the database to :data:`HEAD_REVISION`: create the schema in a new
    one, adopt one made before migrations, apply the missing revisions; one
    transaction, one process at a time.  StorageError for a revision this code
    does not know (made by newer code)."""
    with engine.connect() as connection:
        if schema_revision(connection) == HEAD_REVISION:
            return
    with writer(engine).begin() as connection:
        if connection.dialect.name == "postgresql":
            # Concurrent arenas on a new database: the second waits, then finds it done.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                               {"key": MIGRATION_LOCK_KEY})
        current = schema_revision(connection)
        if current != HEAD_REVISION:
            _migrate(connection, current, engine.url.render_as_string())


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
        raise StorageError(f"cannot upgrade database {url}: {_first_line(exc)}") from None


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
    statement = (sqlite.insert(table).on_conflict_do_nothing() if dialect == "sqlite"
                 else postgresql.insert(table).on_conflict_do_nothing())
    return statement.returning(*table.primary_key.columns)


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


#: The version a bot reports in a game's handshake, where it changed; its author
#: where none is known (a manifest's author stays).
_UPDATE_BOT_INFO = update(BOTS).where(
    BOTS.c.name == bindparam("who"),
    or_(BOTS.c.reported != bindparam("reported_version"),
        (BOTS.c.author == "") & (bindparam("new_author") != "")),
).values(reported=bindparam("reported_version"),
         author=case((BOTS.c.author == "", bindparam("new_author")), else_=BOTS.c.author))


class Store:
    """The arena's database: writes results, answers the reports' queries.

    A write that finds the database locked by another process waits and
    retries; ``on_locked`` (if given) is called once per such wait.  Writes
    given ``wait=False`` make one attempt (bounded by :data:`BUSY_TIMEOUT_MS`)
    and raise :class:`DatabaseLocked`, for callers that wait in their own way.
    """

    def __init__(self, url: str = DEFAULT_URL,
                 on_locked: Callable[[], None] | None = None) -> None:
        self.url = url
        self.on_locked = on_locked
        self._waiting = False
        self.engine = open_engine(url, self.notice_locked)
        self._writer = writer(self.engine)
        self._waiting = False
        #: (tournament id, table number) -> (table row id, table size)
        self._tables: dict[tuple[int, int], tuple[int, int]] = {}

    def close(self) -> None:
        self.engine.dispose()

    def notice_locked(self) -> None:
        """Tell ``on_locked`` that a write is waiting for the lock, once per wait."""
        if not self._waiting and self.on_locked is not None:
            self.on_locked()
        self._waiting = True

    def _write(self, work: Callable[[Session], T], wait: bool = True) -> T:
        """``work(session)`` in one transaction, committed; retried while locked."""
        def attempt() -> T:
            with Session(self._writer) as session, session.begin():
                return work(session)

        try:
            done = _retry_locked(attempt, self.notice_locked if wait else None)
        except SQLAlchemyError as exc:
            raise StorageError(f"cannot write to database {self.url!r}: "
                               f"{_first_line(exc)}") from None
        self._waiting = False
        return done

    # -- writes ------------------------------------------------------------
    def register_bots(self, bots: Sequence[tuple[str, str]]) -> None:
        """Register (label, command) pairs not registered yet, each as a bot of its
        own (base name = label); a registered label is left as it is, since a
        version never changes (versions come from :meth:`add_bot_version`)."""
        def work(session: Session) -> None:
            for name, command in bots:
                if session.scalar(select(BotRow.id).where(BotRow.name == name)) is None:
                    session.add(BotRow(name=name, base=name, command=command))

        self._write(work)

    def add_bot_version(self, bot: BotVersion) -> tuple[BotVersion, bool]:
        """Store a new version of ``bot.base`` unless one with its fingerprint is
        stored: (the stored version, whether it is new).  ``bot.version`` "" is
        numbered here (1, 2, ... per base name).  StorageError if the version is
        taken by other content."""
        def work(session: Session) -> tuple[BotVersion, bool]:
            same = session.scalars(select(BotRow).where(
                BotRow.base == bot.base, BotRow.fingerprint == bot.fingerprint)
                .order_by(BotRow.id)).first()
            if same is not None:
                return _bot_version(same), False
            version = bot.version or _next_version(session, bot.base)
            label = f"{bot.base}@{version}"
            if session.scalar(select(BotRow.id).where(BotRow.name == label)) is not None:
                raise StorageError(f"bot {label} is stored already with other content: "
                                   f"give the new content a new version")
            row = BotRow(name=label, base=bot.base, version=version, command=bot.command,
                         fingerprint=bot.fingerprint, directory=bot.directory,
                         build=bot.build, games=bot.games, author=bot.author, added=_now())
            session.add(row)
            session.flush()
            return _bot_version(row), True

        return self._write(work)

    def next_bot_version(self, base: str) -> str:
        """The version number a new version of ``base`` gets if none is given."""
        with Session(self.engine) as session:
            return _next_version(session, base)

    def retire_bots(self, base: str, version: str | None = None) -> list[str]:
        """Retire ``base``'s version (every version when None): the labels retired
        now (already retired ones are not listed)."""
        def work(session: Session) -> list[str]:
            query = select(BotRow).where(BotRow.base == base, BotRow.retired.is_(False))
            if version is not None:
                query = query.where(BotRow.version == version)
            rows = session.scalars(query.order_by(BotRow.id)).all()
            for row in rows:
                row.retired = True
            return [row.name for row in rows]

        return self._write(work)

    def create_tournament(self, game: str, config: dict[str, Any], tables: Sequence[Sequence[str]],
                          total_games: int, kind: str = "tournament") -> int:
        def work(session: Session) -> int:
            row = TournamentRow(kind=kind, game=game, config=config, total_games=total_games)
            session.add(row)
            session.flush()
            for number, bots in enumerate(tables):
                session.add(TableRow(tournament_id=row.id, number=number, bots=list(bots)))
            return row.id

        return self._write(work)

    def append_table(self, tournament_id: int, number: int, bots: Sequence[str], *,
                     games: int, configs: Sequence[Mapping[str, str]] = ()) -> None:
        """Add table ``number`` (``bots`` in seat order) to a running tournament whose
        tables grow as it plays (a ladder), counting ``games`` more in its total;
        ``configs`` are bots its configuration does not name yet
        (:func:`arena.runner.tournament.bot_config`), added to it.  One transaction;
        StorageError if the table number is taken."""
        def work(session: Session) -> None:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                raise StorageError(f"no tournament {tournament_id}")
            known = {bot["name"] for bot in row.config.get("bots", [])}
            added = [dict(config) for config in configs if config["name"] not in known]
            if added:
                row.config = {**row.config, "bots": [*row.config.get("bots", []), *added]}
            row.total_games += games
            session.add(TableRow(tournament_id=tournament_id, number=number, bots=list(bots)))

        self._write(work)

    def private_paths(self) -> tuple[str, ...]:
        return private_paths(self.url)

    def set_protections(self, tournament_id: int, protections: str) -> None:
        """Record what confined the bots of a run (shown on its report pages)."""
        def work(session: Session) -> None:
            row = session.get(TournamentRow, tournament_id)
            if row is not None:
                row.config = {**row.config, "protections": protections}

        self._write(work, True)

    def set_status(self, tournament_id: int, status: str, *, wait: bool = True) -> None:
        def work(session: Session) -> None:
            row = session.get(TournamentRow, tournament_id)
            if row is not None:
                row.status = status

        self._write(work, wait)

    def save_game(self, tournament_id: int, table: int, number: int, options: dict[str, Any],
                  result: GameResult, *, wait: bool = True, deal: int | None = None,
                  rotation: int | None = None) -> int:
        """Commit one finished game with its faults and record, in one
        transaction, under its key: (table, ``deal``, ``rotation``), by default
        ``divmod(number, table size)``.  Idempotent: if a game with that key is
        stored already (a resumed or concurrent arena played it too), store
        nothing and return the stored game's id."""
        data = result.record.pack()  # before the transaction: no lock held meanwhile

        def work(session: Session) -> int:
            connection = session.connection()
            table_id, size = self._table(connection, tournament_id, table)
            key = {"table_id": table_id, "deal": number // size if deal is None else deal,
                   "rotation": number % size if rotation is None else rotation}
            return self._insert_game(connection, key, number, options, result, data)

        return self._write(work, wait)

    def _table(self, connection: Connection, tournament_id: int, table: int) -> tuple[int, int]:
        """(row id, size) of a tournament's table: the size from the tournament's
        config, else the number of bots at it; remembered."""
        found = self._tables.get((tournament_id, table))
        if found is None:
            row = connection.execute(
                select(TableRow.id, TableRow.bots, TournamentRow.config)
                .join(TournamentRow, TableRow.tournament_id == TournamentRow.id)
                .where(TableRow.tournament_id == tournament_id, TableRow.number == table)).first()
            if row is None:
                raise StorageError(f"tournament {tournament_id} has no table {table}")
            size = int((row.config or {}).get("table_size") or len(row.bots) or 1)
            found = self._tables[(tournament_id, table)] = (row.id, size)
        return found

    @staticmethod
    def _insert_game(connection: Connection, key: dict[str, int], number: int,
                     options: dict[str, Any], result: GameResult, data: bytes) -> int:
        inserted = insert_new(connection, GAMES, {
            **key, "number": number, "seed": result.seed, "options": options,
            "seats": result.bots, "scores": result.scores, "game_places": result.game_places,
            "places": result.places, "fault_count": len(result.faults),
            "ignored": result.ignored, "decisions": result.decisions,
            "duration": result.duration, "finished": _now()})
        if inserted is None:
            stored = connection.scalar(select(GAMES.c.id).where(
                *(GAMES.c[name] == value for name, value in key.items())))
            if stored is None:
                raise StorageError(f"game {number} of the table is stored already, under "
                                   f"another deal and rotation than {key['deal']}, "
                                   f"{key['rotation']}")
            return int(stored)
        game_id = int(inserted[0])
        if result.faults:
            connection.execute(insert(FAULTS), [
                {"game_id": game_id, "seat": f.seat, "bot": f.bot, "kind": f.kind,
                 "detail": f.detail, "stderr_tail": f.stderr_tail, "step": f.step}
                for f in result.faults])
        connection.execute(insert(RECORDS), {"game_id": game_id, "data": data})
        infos = [{"who": name, "reported_version": info.get("version", ""),
                  "new_author": info.get("author", "")}
                 for name, info in zip(result.bots, result.record.bot_info, strict=False)
                 if info.get("version") or info.get("author")]
        if infos:
            connection.execute(_UPDATE_BOT_INFO, infos)
        return game_id

    # -- claims: arenas sharing a tournament -----------------------------------
    def claim(self, tournament_id: int, unit: str, owner: str, lease_seconds: float, *,
              replacing: str | None = None) -> bool:
        """Whether ``owner`` now holds ``unit`` of a tournament for ``lease_seconds``:
        true if the unit was unclaimed, already ``owner``'s (the lease is
        extended), its previous lease has expired, or it was held by
        ``replacing`` (an owner known to be dead); false while another owner's
        lease runs.  Race-safe: of arenas claiming one unit at once, exactly
        one gets it.

        A unit is a piece of work, e.g. ``"3/1"`` for rotation 1 of table 3;
        ``owner`` names one arena process (e.g. host:pid:start time).  Leases
        are by the claimants' clocks, which must agree to well within a lease.
        Claims only avoid wasted work: what guarantees that no game is stored
        twice is the games' unique key (:meth:`save_game`), so an arena that
        lost its claim (expired) may finish its game and nothing breaks."""
        def work(session: Session) -> bool:
            connection, now = session.connection(), time.time()
            held = {"tournament_id": tournament_id, "unit": unit, "owner": owner,
                    "expires": now + lease_seconds}
            if insert_new(connection, CLAIMS, held) is not None:
                return True
            takeable = [CLAIMS.c.owner == owner, CLAIMS.c.expires <= now]
            if replacing is not None:
                takeable.append(CLAIMS.c.owner == replacing)
            taken = connection.execute(
                update(CLAIMS).where(*self._claim_key(tournament_id, unit), or_(*takeable))
                .values(owner=owner, expires=now + lease_seconds))
            return taken.rowcount == 1

        return self._write(work)

    def claim_holder(self, tournament_id: int, unit: str) -> str | None:
        """Who holds (or last held) ``unit`` of a tournament, if anyone."""
        with Session(self.engine) as session:
            return session.scalar(select(CLAIMS.c.owner).where(
                *self._claim_key(tournament_id, unit)))

    def renew(self, tournament_id: int, unit: str, owner: str, lease_seconds: float) -> bool:
        """Extend ``owner``'s claim of ``unit`` to ``lease_seconds`` from now; false if
        ``owner`` does not hold it (another arena took it after the lease expired,
        or it was released)."""
        def work(session: Session) -> bool:
            renewed = session.connection().execute(
                update(CLAIMS).where(*self._claim_key(tournament_id, unit),
                                     CLAIMS.c.owner == owner)
                .values(expires=time.time() + lease_seconds))
            return renewed.rowcount == 1

        return self._write(work)

    def release(self, tournament_id: int, unit: str, owner: str) -> None:
        """Give up ``owner``'s claim of ``unit`` (nothing if it holds none)."""
        self._write(lambda session: session.connection().execute(
            delete(CLAIMS).where(*self._claim_key(tournament_id, unit),
                                 CLAIMS.c.owner == owner)))

    @staticmethod
    def _claim_key(tournament_id: int, unit: str) -> tuple[Any, Any]:
        return CLAIMS.c.tournament_id == tournament_id, CLAIMS.c.unit == unit

    # -- reads ---------------------------------------------------------------
    def tournament(self, tournament_id: int) -> dict[str, Any] | None:
        with Session(self.engine) as session:
            row = session.get(TournamentRow, tournament_id)
            if row is None:
                return None
            return self._tournament_dict(session, row)

    def tournaments(self) -> list[dict[str, Any]]:
        with Session(self.engine) as session:
            rows = session.scalars(select(TournamentRow).order_by(TournamentRow.id)).all()
            return [self._tournament_dict(session, row) for row in rows]

    @staticmethod
    def _tournament_dict(session: Session, row: TournamentRow) -> dict[str, Any]:
        done = session.scalar(select(func.count(GameRow.id)).join(TableRow).where(
            TableRow.tournament_id == row.id)) or 0
        return {"id": row.id, "kind": row.kind, "game": row.game, "config": row.config,
                "status": row.status, "total_games": row.total_games, "games_done": done,
                "created": row.created.isoformat() if row.created else "",
                "tables": [t.bots for t in sorted(row.tables, key=lambda t: t.number)]}

    def checks(self, label: str | None = None) -> list[dict[str, Any]]:
        """The stored ``arena check-bot`` reports (tournaments of kind
        :data:`CHECK_KIND`) of bot ``label`` (None: of every bot), latest first:
        see :func:`stored_check`."""
        with Session(self.engine) as session:
            rows = session.scalars(select(TournamentRow).where(TournamentRow.kind == CHECK_KIND)
                                   .order_by(TournamentRow.id.desc())).all()
            found = (stored_check(self._tournament_dict(session, row)) for row in rows)
            return [check for check in found
                    if check is not None and label in (None, check["bot"])]

    def done_games(self, tournament_id: int, table: int | None = None) -> set[tuple[int, int]]:
        """(table number, game number) of every stored game of a tournament (at
        one of its tables, if given)."""
        query = select(TableRow.number, GameRow.number).join(GameRow).where(
            TableRow.tournament_id == tournament_id)
        if table is not None:
            query = query.where(TableRow.number == table)
        with Session(self.engine) as session:
            return {(t, g) for t, g in session.execute(query)}

    def games(self, tournament_id: int | None = None) -> Iterator[StoredGame]:
        """Every stored game (of one tournament, if given), oldest first."""
        with Session(self.engine) as session:
            query = (select(GameRow, TableRow, TournamentRow)
                     .join(TableRow, GameRow.table_id == TableRow.id)
                     .join(TournamentRow, TableRow.tournament_id == TournamentRow.id)
                     .order_by(GameRow.id)
                     .options(selectinload(GameRow.faults)))
            if tournament_id is not None:
                query = query.where(TournamentRow.id == tournament_id)
            for game, table, tournament in session.execute(query):
                yield StoredGame(
                    id=game.id, tournament_id=tournament.id, table=table.number,
                    number=game.number, game=tournament.game, seed=game.seed,
                    options=game.options, seats=game.seats, scores=game.scores,
                    places=game.places, game_places=game.game_places,
                    faults=[{"seat": f.seat, "bot": f.bot, "kind": f.kind, "detail": f.detail,
                             "stderr_tail": f.stderr_tail, "step": f.step}
                            for f in game.faults],
                    duration=game.duration, decisions=game.decisions,
                    ignored=game.ignored)

    def record(self, game_id: int) -> GameRecord | None:
        """A game's full record (actions, events, reveal, times, stderr)."""
        with Session(self.engine) as session:
            row = session.get(RecordRow, game_id)
            return GameRecord.unpack(row.data) if row is not None else None

    def game(self, game_id: int) -> StoredGame | None:
        """One stored game (as :meth:`scan_games` reads it), or None."""
        found = next(self.scan_games(after=game_id - 1, batch=1), None)
        return found if found is not None and found.id == game_id else None

    def delete_tournament(self, tournament_id: int) -> int:
        """Delete a tournament and everything stored under it (its games with
        their faults and records, its tables and claims) in one transaction;
        the number of games deleted.  The bots stay registered."""
        tables = select(TableRow.id).where(TableRow.tournament_id == tournament_id)
        games = select(GAMES.c.id).where(GAMES.c.table_id.in_(tables))

        def work(session: Session) -> int:
            connection = session.connection()
            for child in (FAULTS, RECORDS):
                connection.execute(delete(child).where(child.c.game_id.in_(games)))
            deleted = connection.execute(delete(GAMES).where(GAMES.c.table_id.in_(tables)))
            connection.execute(delete(CLAIMS).where(CLAIMS.c.tournament_id == tournament_id))
            connection.execute(delete(TableRow).where(TableRow.tournament_id == tournament_id))
            connection.execute(delete(TournamentRow).where(TournamentRow.id == tournament_id))
            return int(deleted.rowcount)

        count = self._write(work)
        self._tables = {key: row for key, row in self._tables.items() if key[0] != tournament_id}
        return count

    def records(self, game_ids: Sequence[int], batch: int = 500
                ) -> Iterator[tuple[int, GameRecord]]:
        """(game id, record) for many games, fetched ``batch`` at a time."""
        with Session(self.engine) as session:
            for start in range(0, len(game_ids), batch):
                chunk = list(game_ids[start : start + batch])
                rows = session.execute(select(RecordRow.game_id, RecordRow.data)
                                       .where(RecordRow.game_id.in_(chunk)))
                for game_id, data in rows:
                    yield game_id, GameRecord.unpack(data)

    def bots(self) -> list[dict[str, str]]:
        """Every registered bot version by label: name (the label), base, version,
        command, author, and the version it reports in its handshake."""
        with Session(self.engine) as session:
            rows = session.scalars(select(BotRow).order_by(BotRow.name)).all()
            return [{"name": r.name, "base": r.base, "command": r.command,
                     "version": r.version, "author": r.author, "reported": r.reported}
                    for r in rows]

    def bot_versions(self, base: str | None = None) -> list[BotVersion]:
        """Every bot version (of ``base``, if given), by base name, oldest first."""
        with Session(self.engine) as session:
            query = select(BotRow).order_by(BotRow.base, BotRow.id)
            if base is not None:
                query = query.where(BotRow.base == base)
            return [_bot_version(row) for row in session.scalars(query)]

    def scan_games(self, tournament_id: int | None = None, *, after: int = 0,
                   batch: int = 5000) -> Iterator[StoredGame]:
        """The games of :meth:`games` (every one, or one tournament's) with an id above
        ``after``, oldest first, fetched ``batch`` at a time by plain SQL: for reports and
        exports over many games (no ORM objects, no records).  JSON values that repeat
        (options, seats, places) are decoded once and shared between games: read them,
        never change them."""
        shared: dict[str, Any] = {}

        def decode(raw: Any, share: bool = True) -> Any:
            if not isinstance(raw, str):  # a driver that decodes JSON itself
                return raw
            if not share:
                return json.loads(raw)
            found = shared.get(raw)
            if found is None:
                if len(shared) >= _SHARED_VALUES:
                    shared.clear()
                found = shared[raw] = json.loads(raw)
            return found

        games = (select(GAMES.c.id, TableRow.tournament_id, TableRow.number, GAMES.c.number,
                        TournamentRow.game, GAMES.c.seed, GAMES.c.duration, GAMES.c.decisions,
                        GAMES.c.fault_count, *(GAMES.c[name].cast(Text) for name in _SCANNED))
                 .join(TableRow, GAMES.c.table_id == TableRow.id)
                 .join(TournamentRow, TableRow.tournament_id == TournamentRow.id)
                 .order_by(GAMES.c.id).limit(batch))
        if tournament_id is not None:
            games = games.where(TableRow.tournament_id == tournament_id)
        faults = select(FAULTS.c.game_id, *(FAULTS.c[key] for key in _FAULT_KEYS)) \
            .order_by(FAULTS.c.id)
        with self.engine.connect() as connection:
            while rows := connection.execute(games.where(GAMES.c.id > after)).all():
                first, after = rows[0][0], rows[-1][0]
                by_game: dict[int, list[dict[str, Any]]] = {}
                if any(row.fault_count for row in rows):
                    for game_id, *fault in connection.execute(
                            faults.where(FAULTS.c.game_id.between(first, after))):
                        by_game.setdefault(game_id, []).append(dict(zip(_FAULT_KEYS, fault,
                                                                        strict=True)))
                for (game_id, tournament, table, number, game, seed, duration, decisions, _,
                     options, seats, scores, places, game_places, ignored) in rows:
                    yield StoredGame(
                        id=game_id, tournament_id=tournament, table=table, number=number,
                        game=game, seed=seed, options=decode(options), seats=decode(seats),
                        scores=decode(scores, share=False), places=decode(places),
                        game_places=decode(game_places), faults=by_game.get(game_id, []),
                        duration=duration, decisions=decisions, ignored=decode(ignored))


#: JSON columns :meth:`Store.scan_games` reads, in the order it reads them.
_SCANNED = ("options", "seats", "scores", "places", "game_places", "ignored")
_FAULT_KEYS = ("seat", "bot", "kind", "detail", "stderr_tail", "step")
#: Distinct JSON values :meth:`Store.scan_games` keeps decoded at once (then starts afresh).
_SHARED_VALUES = 50_000
