"""Rate limits counted in the database (``rate_counters``), so that a restarted
server, or a second one on the same database, keeps counting.

A limit allows ``count`` events per fixed window of ``seconds`` for each subject
(an account, an address).  Taking an event is one atomic step: ``UPDATE ... SET
count = count + 1 WHERE ... AND count < limit``, else the window's first row
inserted (a concurrent insert of the same row lost to a unique-key error is
retried as an update), so no number of concurrent requests gets past a limit.
Windows that ended are deleted whenever a new one starts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.store.database import Store
from arena.store.schema import RateCounterRow, write_rows


@dataclass(frozen=True)
class Limit:
    """At most ``count`` events of ``kind`` per subject in each fixed window of
    ``seconds``."""

    kind: str
    count: int
    seconds: float

    def window(self, clock: float) -> int:
        """The number of the window ``clock`` (seconds since the epoch) falls in."""
        return int(clock // self.seconds)

    def retry_after(self, clock: float) -> int:
        """Whole seconds from ``clock`` until the next window starts (at least 1)."""
        return max(1, int((self.window(clock) + 1) * self.seconds - clock + 0.999))


class _Refused(Exception):
    """Rolls back a :meth:`Counters.take` whose limit ``limit`` is used up."""

    def __init__(self, limit: Limit) -> None:
        super().__init__(limit.kind)
        self.limit = limit


class Counters:
    """The rate counters kept in ``store``'s database."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def take(self, *events: tuple[Limit, str]) -> Limit | None:
        """Count one event of each (limit, subject), all or none in one transaction:
        None if every limit allowed it, else the first limit that was used up (and
        nothing is counted)."""
        clock = time.time()

        def work(session: Session) -> None:
            for limit, subject in events:
                if not _take_one(session, limit, subject[:200], limit.window(clock)):
                    raise _Refused(limit)

        try:
            write_rows(self.store, work)
        except _Refused as refused:
            return refused.limit
        return None

    def give_back(self, limit: Limit, subject: str) -> None:
        """Uncount one event taken in the current window (an attempt that turned
        out not to count, such as a sign-in with the right password)."""
        window = limit.window(time.time())
        write_rows(self.store, lambda session: session.execute(
            update(RateCounterRow).where(_row(limit, subject[:200], window),
                                         RateCounterRow.count > 0)
            .values(count=RateCounterRow.count - 1)))

    def used(self, limit: Limit, subject: str) -> int:
        """How many events the subject has in the current window."""
        window = limit.window(time.time())
        with Session(self.store.engine) as session:
            return int(session.scalar(select(RateCounterRow.count).where(
                _row(limit, subject[:200], window))) or 0)


def _row(limit: Limit, subject: str, window: int) -> ColumnElement[bool]:
    return and_(RateCounterRow.kind == limit.kind, RateCounterRow.subject == subject,
                RateCounterRow.window == window)


def _take_one(session: Session, limit: Limit, subject: str, window: int) -> bool:
    """Count one event if the window has room; whether it had."""
    for _ in range(2):
        counted = session.execute(update(RateCounterRow).where(
            _row(limit, subject, window), RateCounterRow.count < limit.count)
            .values(count=RateCounterRow.count + 1))
        if getattr(counted, "rowcount", 0):
            return True
        if session.scalar(select(RateCounterRow.count).where(
                _row(limit, subject, window))) is not None:
            return False  # the window is full
        if limit.count < 1:
            return False
        try:
            with session.begin_nested():  # another transaction may insert it first
                session.add(RateCounterRow(kind=limit.kind, subject=subject, window=window,
                                           count=1))
        except IntegrityError:
            continue  # it did: count in its row
        # A new window: the kind's ended ones are of no use any more.
        session.execute(delete(RateCounterRow).where(RateCounterRow.kind == limit.kind,
                                                     RateCounterRow.window < window))
        return True
    return False
