"""The competition server's accounts (users, tokens, sessions, owners, submissions,
rate counters) as SQLAlchemy ORM rows, on the one :data:`~arena.store.tables.METADATA`
of :mod:`arena.store.tables` (the tables a run uses, in Core, so a run never imports
the ORM); changes to them are Alembic revisions in ``arena/store/migrations/versions``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from arena.store.engine import T, now
from arena.store.tables import METADATA

if TYPE_CHECKING:
    from arena.store.database import Store


class Base(DeclarativeBase):
    metadata = METADATA


def write_rows(store: Store, work: Callable[[Session], T], wait: bool = True) -> T:
    """``work(session)`` in one transaction of an ORM session on ``store``, committed;
    retried while the database is locked (:meth:`Store.retried`)."""
    def attempt() -> T:
        with Session(store.writer) as session, session.begin():
            return work(session)

    return store.retried(attempt, wait)


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
