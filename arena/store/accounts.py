"""The competition server's accounts, every query in one class (:class:`Accounts`):
users, their API tokens and one-time password links, browser sessions, who owns
each bot name, and uploaded submissions with their status.

Secrets (tokens, session cookies) are made here with :mod:`secrets` and stored
only as their sha256 digests, so a copy of the database holds none of them.
Passwords arrive already hashed (argon2, by the server); nothing here sees one.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import case, delete, func, select, update
from sqlalchemy.orm import Session

from arena.store.database import Store
from arena.store.engine import StorageError, now
from arena.store.limits import Counters
from arena.store.schema import (
    OwnerRow,
    SessionRow,
    SubmissionRow,
    TokenRow,
    UserRow,
    write_rows,
)
from arena.store.tables import BOTS, GAMES, TOURNAMENTS

#: Token kinds: a bearer token for the API, a one-time link to set a password.
API, PASSWORD = "api", "password"
#: A session's last use is written at most this often (seconds): not a write per request.
SEEN_EVERY = 60.0
#: A submission's statuses, in order; the last two are final.
STATUSES = ("queued", "building", "checking", "passed", "failed")
FINAL = frozenset({"passed", "failed"})
#: The statuses of a submission a checker has taken.
RUNNING = ("building", "checking")


class AccountError(Exception):
    """A name taken, an unknown user: the message says which, in one line."""


@dataclass(frozen=True)
class User:
    """An account; ``password`` is its argon2 hash (None: not set yet); a
    ``disabled`` one cannot sign in or use a token."""

    id: int
    name: str
    admin: bool
    password: str | None = None
    disabled: bool = False


@dataclass(frozen=True)
class Token:
    """An API token as its owner sees it listed (never the secret itself)."""

    id: int
    label: str
    created: datetime
    revoked: bool


@dataclass(frozen=True)
class BrowserSession:
    """A browser session: its user (None before sign-in) and its forms' CSRF token."""

    user: User | None
    csrf: str


@dataclass(frozen=True)
class Submission:
    """An uploaded archive and where it is (see :data:`STATUSES`)."""

    id: int
    user_id: int
    base: str
    filename: str
    status: str
    label: str | None
    message: str
    report: dict[str, Any] | None
    created: datetime
    updated: datetime
    #: The check's games as they finished (:meth:`Accounts.add_progress`).
    progress: list[dict[str, Any]] | None = None


def digest(secret: str) -> str:
    """How a secret is stored: its sha256, in hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


def _user(row: UserRow) -> User:
    return User(row.id, row.name, row.admin, row.password, row.disabled)


def _submission(row: SubmissionRow) -> Submission:
    return Submission(row.id, row.user_id, row.base, row.filename, row.status, row.label,
                      row.message, row.report, row.created, row.updated, row.progress)


@dataclass(frozen=True)
class Queue:
    """The queue as the checkers see it at one moment."""

    #: The queued submissions' ids in :func:`fair_order`.
    order: list[int]
    #: Checks running (building or checking), by user id.
    running: dict[int, int]
    #: The bot names being checked.
    busy: frozenset[str]
    #: Each queued submission's user id and bot name.
    queued: dict[int, tuple[int, str]]

    def next(self, per_user: int) -> int | None:
        """The first in the order whose user has fewer than ``per_user`` checks
        running and whose bot name is not being checked (two versions of one
        name built at once would both take its next number), if any."""
        for submission_id in self.order:
            user_id, base = self.queued[submission_id]
            if self.running.get(user_id, 0) < per_user and base not in self.busy:
                return submission_id
        return None


def fair_order(queued: Sequence[tuple[int, int]], running: dict[int, int],
               served: dict[int, datetime]) -> list[int]:
    """The queued submissions, ``(id, user id)`` oldest first, in the order the
    checkers take them: round-robin by user.  The next one is the oldest queued
    of the user with the fewest checks ``running`` now, then the one whose
    latest check was ``served`` (taken or ended) longest ago, never first; then
    the oldest.  A user's turn counts as running and served last from then on.

    Fewest running alone is not round-robin: with one checker nobody has one
    running when the next is chosen, and a user who queued many would go on."""
    waiting: dict[int, list[int]] = {}
    for submission_id, user_id in queued:
        waiting.setdefault(user_id, []).append(submission_id)
    counts = {user_id: running.get(user_id, 0) for user_id in waiting}
    # served longest ago first; never served before all; a turn taken here after all
    turns = {user_id: (1, served[user_id].timestamp()) if user_id in served else (0, 0.0)
             for user_id in waiting}
    order: list[int] = []
    for turn in range(len(queued)):
        user_id = min((u for u in waiting if waiting[u]),
                      key=lambda u: (counts[u], turns[u], waiting[u][0]))
        order.append(waiting[user_id].pop(0))
        counts[user_id] += 1
        turns[user_id] = (2, float(turn))
    return order


class Accounts:
    """The accounts kept in ``store``'s database (writes retried while it is locked),
    and its rate counters (``limits``)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.limits = Counters(store)

    def _read(self) -> Session:
        return Session(self.store.engine)

    # -- users ------------------------------------------------------------------------
    def add_user(self, name: str, *, admin: bool = False, password: str | None = None
                 ) -> User:
        """A new user (``password``: its argon2 hash, if set); AccountError if the
        name is taken."""
        def work(session: Session) -> User:
            if session.scalar(select(UserRow.id).where(UserRow.name == name)) is not None:
                raise AccountError(f"user {name!r} exists already")
            row = UserRow(name=name, admin=admin, password=password, disabled=False)
            session.add(row)
            session.flush()
            return _user(row)

        return write_rows(self.store, work)

    def user(self, user_id: int) -> User | None:
        with self._read() as session:
            row = session.get(UserRow, user_id)
            return None if row is None else _user(row)

    def user_named(self, name: str) -> User | None:
        with self._read() as session:
            row = session.scalars(select(UserRow).where(UserRow.name == name)).first()
            return None if row is None else _user(row)

    def set_password(self, user_id: int, hashed: str) -> None:
        """Store a user's new password hash (argon2, made by the caller)."""
        write_rows(self.store, lambda session: session.execute(
            update(UserRow).where(UserRow.id == user_id).values(password=hashed)))

    def set_disabled(self, user_id: int, disabled: bool) -> None:
        """Disable a user (their sessions ended, every token and password link
        revoked; their bots kept), or enable them again (nothing else restored)."""
        def work(session: Session) -> None:
            session.execute(update(UserRow).where(UserRow.id == user_id)
                            .values(disabled=disabled))
            if disabled:
                session.execute(delete(SessionRow).where(SessionRow.user_id == user_id))
                session.execute(update(TokenRow).where(TokenRow.user_id == user_id)
                                .values(revoked=True))

        write_rows(self.store, work)

    # -- tokens -----------------------------------------------------------------------
    def issue_token(self, user_id: int, kind: str = API, label: str = "") -> str:
        """A new secret of ``kind`` for the user; only its digest is stored.  In hex,
        never starting with ``-``: it is given on command lines (``arena submit
        --token T``), where such a word would be taken for an option."""
        secret = secrets.token_hex(32)
        write_rows(self.store, lambda session: session.add(TokenRow(
            user_id=user_id, digest=digest(secret), kind=kind, label=label[:200],
            revoked=False)))
        return secret

    def token_user(self, secret: str, kind: str = API) -> User | None:
        """The user an unrevoked token of ``kind`` belongs to, unless disabled; else None."""
        with self._read() as session:
            row = session.execute(
                select(UserRow).join(TokenRow, TokenRow.user_id == UserRow.id).where(
                    TokenRow.digest == digest(secret), TokenRow.kind == kind,
                    TokenRow.revoked.is_(False), UserRow.disabled.is_(False))
            ).scalar_one_or_none()
            return None if row is None else _user(row)

    def use_password_link(self, secret: str, hashed: str) -> User | None:
        """Set the password of the one-time link's user and spend the link (one
        transaction: a link works once); None for an unknown or spent link."""
        def work(session: Session) -> User | None:
            token = session.scalars(select(TokenRow).where(
                TokenRow.digest == digest(secret), TokenRow.kind == PASSWORD,
                TokenRow.revoked.is_(False))).first()
            if token is None:
                return None
            token.revoked = True
            user = session.get(UserRow, token.user_id)
            if user is None or user.disabled:
                return None
            user.password = hashed
            return _user(user)

        return write_rows(self.store, work)

    def password_link(self, user_id: int) -> str:
        """A new one-time password link's secret for the user; their older unused
        links are revoked."""
        write_rows(self.store, lambda session: session.execute(update(TokenRow).where(
            TokenRow.user_id == user_id, TokenRow.kind == PASSWORD).values(revoked=True)))
        return self.issue_token(user_id, PASSWORD)

    def revoke_tokens(self, user_id: int) -> int:
        """Revoke every API token of the user; how many were still valid."""
        def work(session: Session) -> int:
            done = session.execute(update(TokenRow).where(
                TokenRow.user_id == user_id, TokenRow.kind == API,
                TokenRow.revoked.is_(False)).values(revoked=True))
            return int(getattr(done, "rowcount", 0))

        return write_rows(self.store, work)

    def tokens(self, user_id: int) -> list[Token]:
        """The user's API tokens, oldest first."""
        with self._read() as session:
            rows = session.scalars(select(TokenRow).where(
                TokenRow.user_id == user_id, TokenRow.kind == API).order_by(TokenRow.id))
            return [Token(row.id, row.label, row.created, row.revoked) for row in rows]

    def revoke_token(self, user_id: int, token_id: int) -> bool:
        """Revoke one of the user's API tokens; False if the user has no such token."""
        def work(session: Session) -> bool:
            done = session.execute(update(TokenRow).where(
                TokenRow.id == token_id, TokenRow.user_id == user_id,
                TokenRow.kind == API).values(revoked=True))
            return bool(getattr(done, "rowcount", 0))

        return write_rows(self.store, work)

    # -- browser sessions ---------------------------------------------------------------
    def open_session(self, user_id: int | None, seconds: float) -> str:
        """A new session for ``user_id`` (None: signed out) lasting ``seconds``; its
        cookie's secret.  Expired sessions are removed meanwhile."""
        secret = secrets.token_urlsafe(32)
        clock = time.time()

        def work(session: Session) -> None:
            session.execute(delete(SessionRow).where(SessionRow.expires < clock))
            session.add(SessionRow(digest=digest(secret), user_id=user_id,
                                   csrf=secrets.token_urlsafe(32), expires=clock + seconds,
                                   seen=clock))

        write_rows(self.store, work)
        return secret

    def session(self, secret: str, idle: float | None = None) -> BrowserSession | None:
        """The session whose cookie is ``secret``, unless it expired, its user is
        disabled or (signed in) it was not used for ``idle`` seconds; else None.
        Its last use is written at most every :data:`SEEN_EVERY` seconds."""
        clock = time.time()
        with self._read() as session:
            row = session.get(SessionRow, digest(secret))
            if row is None or row.expires < clock:
                return None
            if row.user_id is None:
                return BrowserSession(None, row.csrf)
            user = session.get(UserRow, row.user_id)
            if user is None or user.disabled or (
                    idle is not None and row.seen is not None and row.seen < clock - idle):
                return None
            found, seen = BrowserSession(_user(user), row.csrf), row.seen
        if seen is None or seen < clock - SEEN_EVERY:
            write_rows(self.store, lambda session: session.execute(update(SessionRow).where(
                SessionRow.digest == digest(secret)).values(seen=clock)))
        return found

    def close_session(self, secret: str) -> None:
        write_rows(self.store, lambda session: session.execute(
            delete(SessionRow).where(SessionRow.digest == digest(secret))))

    def end_sessions(self, user_id: int, keep: str | None = None) -> int:
        """End every session of the user but the one whose cookie is ``keep``; how many."""
        def work(session: Session) -> int:
            query = delete(SessionRow).where(SessionRow.user_id == user_id)
            if keep is not None:
                query = query.where(SessionRow.digest != digest(keep))
            return int(getattr(session.execute(query), "rowcount", 0))

        return write_rows(self.store, work)

    # -- owners ---------------------------------------------------------------------------
    def owner(self, base: str) -> int | None:
        """The id of the user who owns bot name ``base``, None if nobody does."""
        with self._read() as session:
            return session.scalar(select(OwnerRow.user_id).where(OwnerRow.base == base))

    def owned(self, user_id: int) -> list[str]:
        """The bot names the user owns, sorted."""
        with self._read() as session:
            return sorted(session.scalars(select(OwnerRow.base).where(
                OwnerRow.user_id == user_id)))

    def name_holder(self, base: str) -> tuple[str, int | None] | None:
        """The name, as owned or stored, that ``base`` is in any case, and its
        owner's id (None: the organiser's); None if nobody holds it."""
        folded = base.lower()
        with self._read() as session:
            owned = session.execute(select(OwnerRow.base, OwnerRow.user_id).where(
                OwnerRow.folded == folded)).first()
            if owned is not None:
                return owned.base, owned.user_id
            stored = session.scalar(select(BOTS.c.base).where(
                func.lower(BOTS.c.base) == folded).limit(1))
            return None if stored is None else (stored, None)

    def claim_name(self, base: str, user_id: int) -> bool:
        """Make the user the owner of ``base`` unless someone owns it, or a name
        that differs from it only in case; whether the user owns ``base`` now.  A
        name already stored (``arena bot add``) with no owner, in any case, stays
        the organiser's."""
        folded = base.lower()

        def work(session: Session) -> bool:
            holder = session.execute(select(OwnerRow.base, OwnerRow.user_id).where(
                OwnerRow.folded == folded)).first()
            if holder is not None:
                return bool(holder.base == base and holder.user_id == user_id)
            if session.scalar(select(BOTS.c.id).where(
                    func.lower(BOTS.c.base) == folded).limit(1)):
                return False
            session.add(OwnerRow(base=base, folded=folded, user_id=user_id))
            return True

        try:
            return write_rows(self.store, work)
        except StorageError:  # another request claimed it meanwhile
            return self.owner(base) == user_id

    def release_name(self, base: str, user_id: int) -> None:
        """Give up the user's claim on ``base`` if no version of it is stored and no
        other submission of it is under way (a failed first upload claims nothing)."""
        def work(session: Session) -> None:
            if session.scalar(select(BOTS.c.id).where(BOTS.c.base == base).limit(1)) or \
                    session.scalar(select(SubmissionRow.id).where(
                        SubmissionRow.base == base,
                        SubmissionRow.status.not_in(list(FINAL))).limit(1)):
                return
            session.execute(delete(OwnerRow).where(OwnerRow.base == base,
                                                   OwnerRow.user_id == user_id))

        write_rows(self.store, work)

    # -- what changed ------------------------------------------------------------------------
    def activity(self) -> tuple[int, ...]:
        """Changes whenever a game, tournament status, bot version, submission
        status or check game of a submission (:meth:`add_progress`) is stored:
        (latest game id, games, tournaments, finished ones, versions, retired ones,
        submissions, their statuses' sum, their latest change in microseconds)."""
        with self._read() as session:
            games = session.execute(select(func.max(GAMES.c.id), func.count(GAMES.c.id))).one()
            tournaments = session.execute(select(
                func.count(TOURNAMENTS.c.id),
                func.count(TOURNAMENTS.c.id).filter(TOURNAMENTS.c.status == "finished"))).one()
            bots = session.execute(select(
                func.count(BOTS.c.id), func.count(BOTS.c.id).filter(BOTS.c.retired))).one()
            submissions = session.execute(select(
                func.count(SubmissionRow.id),
                func.sum(case((SubmissionRow.status == "queued", 1),
                              (SubmissionRow.status == "building", 2),
                              (SubmissionRow.status == "checking", 3),
                              (SubmissionRow.status == "passed", 4), else_=5)),
                func.max(SubmissionRow.updated))).one()
            changed = submissions[2]
            return tuple(int(value or 0) for value in (
                *games, *tournaments, *bots, *submissions[:2],
                changed.timestamp() * 1_000_000 if changed is not None else 0))

    # -- submissions ------------------------------------------------------------------------
    def add_submission(self, user_id: int, base: str, filename: str) -> Submission:
        """A new queued submission."""
        def work(session: Session) -> Submission:
            row = SubmissionRow(user_id=user_id, base=base, filename=filename[:200],
                                status="queued", message="")
            session.add(row)
            session.flush()
            return _submission(row)

        return write_rows(self.store, work)

    def update_submission(self, submission_id: int, status: str, *, label: str | None = None,
                          message: str = "", report: dict[str, Any] | None = None) -> None:
        """Move a submission to ``status`` (one of :data:`STATUSES`)."""
        if status not in STATUSES:
            raise ValueError(f"unknown submission status {status!r}")
        values: dict[str, Any] = {"status": status, "updated": now()}
        if label is not None:
            values["label"] = label
        if message:
            values["message"] = message
        if report is not None:
            values["report"] = report
        write_rows(self.store, lambda session: session.execute(
            update(SubmissionRow).where(SubmissionRow.id == submission_id).values(**values)))

    def queued(self) -> int:
        """How many submissions are queued."""
        with self._read() as session:
            return int(session.scalar(select(func.count(SubmissionRow.id)).where(
                SubmissionRow.status == "queued")) or 0)

    def unfinished_of(self, user_id: int) -> int:
        """How many of the user's submissions are queued or being checked."""
        with self._read() as session:
            return int(session.scalar(select(func.count(SubmissionRow.id)).where(
                SubmissionRow.user_id == user_id,
                SubmissionRow.status.not_in(list(FINAL)))) or 0)

    def _queue(self, session: Session) -> Queue:
        """The queue as the checkers see it now (one read transaction)."""
        queued = session.execute(select(SubmissionRow.id, SubmissionRow.user_id,
                                        SubmissionRow.base).where(
            SubmissionRow.status == "queued").order_by(SubmissionRow.id)).all()
        running = {user_id: int(count) for user_id, count in session.execute(
            select(SubmissionRow.user_id, func.count(SubmissionRow.id))
            .where(SubmissionRow.status.in_(RUNNING)).group_by(SubmissionRow.user_id))}
        served = {user_id: latest for user_id, latest in session.execute(
            select(SubmissionRow.user_id, func.max(SubmissionRow.updated))
            .where(SubmissionRow.status != "queued").group_by(SubmissionRow.user_id))}
        busy = frozenset(session.scalars(select(SubmissionRow.base).where(
            SubmissionRow.status.in_(RUNNING))))
        return Queue(fair_order([(row.id, row.user_id) for row in queued], running, served),
                     running, busy, {row.id: (row.user_id, row.base) for row in queued})

    def queue_order(self) -> list[int]:
        """The queued submissions' ids in the order the checkers take them
        (:func:`fair_order`)."""
        with self._read() as session:
            return self._queue(session).order

    def queue_positions(self) -> dict[int, int]:
        """Each queued submission's place in :meth:`queue_order`, from 1."""
        return {submission_id: place for place, submission_id in
                enumerate(self.queue_order(), 1)}

    def claim(self, submission_id: int) -> bool:
        """Take a queued submission for a check: it is *building* now, its
        progress cleared.  False if it is not queued (another checker took it):
        one conditional update, so two checkers never take the same one."""
        def work(session: Session) -> bool:
            done = session.execute(update(SubmissionRow).where(
                SubmissionRow.id == submission_id, SubmissionRow.status == "queued")
                .values(status="building", progress=None, updated=now()))
            return getattr(done, "rowcount", 0) == 1

        return write_rows(self.store, work)

    def claim_next(self, per_user: int) -> Submission | None:
        """Claim the first queued submission in :meth:`queue_order` whose user has
        fewer than ``per_user`` checks running and whose bot name is not being
        checked (its next version waits for it), if any."""
        while True:
            with self._read() as session:
                chosen = self._queue(session).next(per_user)
            if chosen is None:
                return None
            if self.claim(chosen):
                return self.submission(chosen)
            # taken by another checker meanwhile: choose again

    def add_progress(self, submission_id: int, entry: dict[str, Any]) -> None:
        """Append one finished check game (a small dict) to a submission's progress."""
        def work(session: Session) -> None:
            row = session.get(SubmissionRow, submission_id)
            if row is not None:
                row.progress = [*(row.progress or []), entry]
                row.updated = now()

        write_rows(self.store, work)

    def requeue_unfinished(self, quiet_for: float = 0.0) -> int:
        """Queue again the submissions left building or checking by a checker that
        stopped: those whose stamp is older than ``quiet_for`` seconds (a running
        checker renews it, :meth:`renew`, so another server's checks on the same
        database stay theirs).  How many were queued again."""
        stale = now() - timedelta(seconds=quiet_for)

        def work(session: Session) -> int:
            done = session.execute(update(SubmissionRow).where(
                SubmissionRow.status.in_(RUNNING), SubmissionRow.updated <= stale)
                .values(status="queued", updated=now()))
            return int(getattr(done, "rowcount", 0) or 0)

        return write_rows(self.store, work)

    def renew(self, submission_id: int) -> None:
        """Renew the stamp of a submission being built or checked: its checker is alive."""
        write_rows(self.store, lambda session: session.execute(
            update(SubmissionRow).where(SubmissionRow.id == submission_id,
                                        SubmissionRow.status.in_(RUNNING))
            .values(updated=now())))

    def submission(self, submission_id: int) -> Submission | None:
        with self._read() as session:
            row = session.get(SubmissionRow, submission_id)
            return None if row is None else _submission(row)

    def submissions(self, *, user_id: int | None = None, bases: Sequence[str] | None = None,
                    unfinished: bool = False) -> list[Submission]:
        """Submissions, newest first: the user's, of ``bases``, or not final yet."""
        query = select(SubmissionRow).order_by(SubmissionRow.id.desc())
        if user_id is not None:
            query = query.where(SubmissionRow.user_id == user_id)
        if bases is not None:
            query = query.where(SubmissionRow.base.in_(list(bases)))
        if unfinished:
            query = query.where(SubmissionRow.status.not_in(list(FINAL)))
        with self._read() as session:
            return [_submission(row) for row in session.scalars(query)]
