"""The tables a run reads and writes (bots, tournaments, games and what hangs off
them), as SQLAlchemy Core tables: a tournament never imports the ORM (about 0.1 s of
CPU to import and map).  The server's accounts are ORM rows on the same
:data:`METADATA` in :mod:`arena.store.schema`; changes to either are Alembic
revisions in ``arena/store/migrations/versions``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from arena.store.engine import now

#: Every table of the arena's database, these and the accounts'.
METADATA = MetaData()

#: A bot version: one immutable program, identified by its label ``name``
#: (``BASE@VERSION``; a bot stored before versions has version "" and its label is
#: its base name).  ``fingerprint``: sha256 of the content (a directory's files, or
#: an ad-hoc command and its files); ``directory``: the stored copy it runs in (NULL
#: for an ad-hoc version); ``games``: the games its manifest lists (NULL: not
#: declared); ``reported``: the version the bot reports in its handshake.
BOTS = Table(
    "bots", METADATA,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("command", Text, nullable=False),
    Column("version", String(200), nullable=False, default=""),
    Column("author", String(200), nullable=False, default=""),
    Column("base", String(200), nullable=False, index=True),
    Column("fingerprint", String(64), nullable=False, default=""),
    Column("directory", Text, nullable=True),
    Column("build", Text, nullable=False, default=""),
    Column("games", JSON, nullable=True),
    Column("added", DateTime(timezone=True), nullable=True),
    Column("retired", Boolean, nullable=False, default=False),
    Column("reported", String(200), nullable=False, default=""),
    Index("uq_bots_base_version", "base", "version", unique=True),
)

#: One tournament (or one ``arena play`` game): its configuration and status.
TOURNAMENTS = Table(
    "tournaments", METADATA,
    Column("id", Integer, primary_key=True),
    Column("kind", String(20), nullable=False, default="tournament"),
    Column("game", String(50), nullable=False),
    Column("config", JSON, nullable=False),
    Column("status", String(20), nullable=False, default="running"),
    Column("total_games", Integer, nullable=False, default=0),
    Column("created", DateTime(timezone=True), nullable=False, default=now),
)

#: A table of a tournament: which bots sit at it.
TABLES = Table(
    "tables", METADATA,
    Column("id", Integer, primary_key=True),
    Column("tournament_id", ForeignKey("tournaments.id"), nullable=False),
    Column("number", Integer, nullable=False),
    Column("bots", JSON, nullable=False),
    UniqueConstraint("tournament_id", "number"),
)

#: A finished game: who sat where and how it ended.  Its key (table, deal, rotation)
#: is unique: game ``number`` of a table is the table's ``deal``-th deal in seat
#: ``rotation``.
GAMES = Table(
    "games", METADATA,
    Column("id", Integer, primary_key=True),
    Column("table_id", ForeignKey("tables.id"), nullable=False, index=True),
    Column("number", Integer, nullable=False),
    Column("deal", Integer, nullable=False),
    Column("rotation", Integer, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("options", JSON, nullable=False),
    Column("seats", JSON, nullable=False),
    Column("scores", JSON, nullable=False),
    Column("game_places", JSON, nullable=False),
    Column("places", JSON, nullable=False),
    Column("fault_count", Integer, nullable=False, default=0),
    Column("ignored", JSON, nullable=False),
    Column("decisions", Integer, nullable=False, default=0),
    Column("duration", Float, nullable=False),
    Column("finished", DateTime(timezone=True), nullable=False, default=now),
    UniqueConstraint("table_id", "number"),
    Index("uq_games_table_deal_rotation", "table_id", "deal", "rotation", unique=True),
)

#: A bot fault in a game, with the bot's stderr tail; ``step``: the first action
#: step the arena played for the seat (NULL in older databases).
FAULTS = Table(
    "faults", METADATA,
    Column("id", Integer, primary_key=True),
    Column("game_id", ForeignKey("games.id"), nullable=False, index=True),
    Column("seat", Integer, nullable=False),
    Column("bot", String(200), nullable=False, index=True),
    Column("kind", String(30), nullable=False),
    Column("detail", Text, nullable=False),
    Column("stderr_tail", Text, nullable=False),
    Column("step", Integer, nullable=True),
)

def _game_data(name: str, *columns: Column[Any]) -> Table:
    """A table of bytes ``data`` per game (and ``columns``), keyed by ``game_id``."""
    return Table(name, METADATA, Column("game_id", ForeignKey("games.id"), primary_key=True),
                 *columns, Column("data", LargeBinary, nullable=False))


#: A game's full record (:meth:`GameRecord.pack`): the action log (enough to replay
#: the game exactly from seed + options), the events, the reveal, the move times and
#: the bots' stderr.
RECORDS = _game_data("records")

#: A game's replay views (:class:`arena.store.replays.ReplayViews`), computed once
#: from its record after it is stored; ``format`` is the code's
#: :data:`~arena.store.replays.VIEWS_FORMAT` when they were computed.
VIEWS = _game_data("replay_views", Column("format", Integer, nullable=False))

#: One seat's per-move stderr in a game (:func:`arena.store.move_logs.pack`): a row
#: per seat that wrote any while it was asked; shown to its owner only.
LOGS = _game_data("move_logs", Column("seat", Integer, primary_key=True))

#: Work an arena holds in a tournament (see :meth:`Store.claim`) until ``expires``
#: (seconds since the epoch, by the claiming arena's clock).
CLAIMS = Table(
    "claims", METADATA,
    Column("tournament_id", ForeignKey("tournaments.id"), primary_key=True),
    Column("unit", String(200), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("expires", Float, nullable=False),
)

#: A tournament's deal secret (:mod:`arena.formats.deals`): the key of the deal seeds
#: of its tables from ``first_table`` on (a ladder has one per period), the
#: commitment published at the start, and whether it is revealed yet.  Until it is,
#: nothing shown of the games it dealt carries a seed or a stacked deck.
SECRETS = Table(
    "deal_secrets", METADATA,
    Column("tournament_id", ForeignKey("tournaments.id"), primary_key=True),
    Column("first_table", Integer, primary_key=True),
    Column("secret", String(64), nullable=False),
    Column("commitment", String(64), nullable=False),
    Column("revealed", Boolean, nullable=False, default=False),
)
