"""The database's tables (SQLAlchemy declarative rows); changes to them are
Alembic revisions in ``arena/store/migrations/versions``."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    mapped_column,
    relationship,
)

if TYPE_CHECKING:
    pass
from arena.store.engine import now


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
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
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
    finished: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
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


class ReplayViewRow(Base):
    """A game's replay views (:class:`arena.store.replays.ReplayViews`), computed once
    from its record after it is stored; ``format`` is the code's
    :data:`~arena.store.replays.VIEWS_FORMAT` when they were computed."""

    __tablename__ = "replay_views"
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), primary_key=True)
    format: Mapped[int] = mapped_column(Integer)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class MoveLogRow(Base):
    """One seat's per-move stderr in a game (:func:`arena.store.move_logs.pack`):
    a row per seat that wrote any while it was asked; shown to its owner only."""

    __tablename__ = "move_logs"
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class ClaimRow(Base):
    """Work an arena holds in a tournament (see :meth:`Store.claim`) until ``expires``
    (seconds since the epoch, by the claiming arena's clock)."""

    __tablename__ = "claims"
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    unit: Mapped[str] = mapped_column(String(200), primary_key=True)
    owner: Mapped[str] = mapped_column(String(200))
    expires: Mapped[float] = mapped_column(Float)


class DealSecretRow(Base):
    """A tournament's deal secret (:mod:`arena.formats.deals`): the key of the deal
    seeds of its tables from ``first_table`` on (a ladder has one per period), the
    commitment published at the start, and whether it is revealed yet.  Until it
    is, nothing shown of the games it dealt carries a seed or a stacked deck."""

    __tablename__ = "deal_secrets"
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    first_table: Mapped[int] = mapped_column(Integer, primary_key=True)
    secret: Mapped[str] = mapped_column(String(64))
    commitment: Mapped[str] = mapped_column(String(64))
    revealed: Mapped[bool] = mapped_column(Boolean, default=False)


class UserRow(Base):
    """An account of the competition server (``arena serve``): it owns bot names.
    ``password`` is an argon2 hash; NULL until the user sets one."""

    __tablename__ = "users"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    password: Mapped[str | None] = mapped_column(Text, nullable=True)
    admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    #: A disabled user cannot sign in or use a token; their bots are kept.
    disabled: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class TokenRow(Base):
    """A secret a user holds, stored only as its sha256 ``digest``: an API bearer
    token (kind ``api``) or a one-time link to set a password (kind ``password``)."""

    __tablename__ = "tokens"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(20))
    label: Mapped[str] = mapped_column(String(200), default="")
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    revoked: Mapped[bool] = mapped_column(Boolean, default=False)


class SessionRow(Base):
    """A browser session, by the sha256 ``digest`` of its cookie; ``user_id`` NULL
    before sign-in (a session is never promoted: signing in makes a new one).
    ``csrf`` is the token its forms carry; ``expires`` in seconds since the epoch."""

    __tablename__ = "sessions"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True,
                                                index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    expires: Mapped[float] = mapped_column(Float)
    #: When it was last used (seconds since the epoch): idle too long, it ends.
    seen: Mapped[float | None] = mapped_column(Float, nullable=True)


class OwnerRow(Base):
    """Who owns a bot name (every version of it): the user who first submitted it."""

    __tablename__ = "owners"
    __table_args__ = (UniqueConstraint("folded", name="uq_owners_folded"),)
    base: Mapped[str] = mapped_column(String(200), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    #: ``base`` case-folded: ``Hog`` and ``hog`` are one name, owned once.
    folded: Mapped[str] = mapped_column(String(200))


class SubmissionRow(Base):
    """An uploaded bot archive and where it is: ``status`` queued, building,
    checking, passed or failed; ``label`` once stored as a version; ``message``
    why it failed; ``report`` the check report (JSON) once checked."""

    __tablename__ = "submissions"
    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    base: Mapped[str] = mapped_column(String(200), index=True)
    filename: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20), default="queued")
    label: Mapped[str | None] = mapped_column(String(200), nullable=True)
    message: Mapped[str] = mapped_column(Text, default="")
    report: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    updated: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    #: The check's games as they finish (a list of small dicts), while it runs.
    progress: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)


class RateCounterRow(Base):
    """How many times ``subject`` (an account, an address) did ``kind`` (a sign-in
    that failed, a sign-up, an upload) in the fixed time ``window`` (its number
    since the epoch, in the kind's window length).  In the database so that a
    restarted server, or a second one, keeps counting."""

    __tablename__ = "rate_counters"
    kind: Mapped[str] = mapped_column(String(40), primary_key=True)
    subject: Mapped[str] = mapped_column(String(200), primary_key=True)
    window: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    count: Mapped[int] = mapped_column(Integer)
