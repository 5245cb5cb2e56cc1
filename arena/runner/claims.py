"""Arenas that share a stored tournament split its chains instead of racing for them.

Before it plays a chain (the streams that share a deal, :class:`arena.formats.schedule.Chain`,
played one after another), an arena claims it in the database
(:meth:`arena.store.database.Store.claim`, unit ``"TABLE/BLOCK"`` of its first stream,
for :data:`LEASE_SECONDS`, renewed every third of that while the arena runs)
and then plays only that chain's games not stored yet; it releases the claim
when the chain ends, however it ends.  Claiming whole chains keeps deal
isolation across arenas on one machine: two arenas never play one deal at once.
A chain another arena holds is left for later: once the rest is played, the
arena looks again every ``retry_seconds``, and a chain whose games are all
stored is done, while one whose holder died is taken over: at once if the
holder ran on this machine and its process is gone (an arena killed and
resumed), else once its lease ran out.

Claims only avoid duplicate work.  What guarantees that no game is stored twice
is the games' unique key (:meth:`arena.store.database.Store.save_game`): an arena whose
lease ran out while it was stalled may still finish a game, and nothing breaks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import socket
import time
from collections.abc import Callable
from typing import TypeVar

import trio

from arena.formats.schedule import Chain, chain_name
from arena.runner.sandbox import process_gone
from arena.store.database import Store
from arena.store.engine import StorageError

#: How long a claim lasts unless it is renewed (by the claimants' clocks,
#: which must agree to well within it).
LEASE_SECONDS = 60.0
#: How often an arena that has nothing else to play looks again at the
#: streams other arenas hold.
RETRY_SECONDS = 2.0
#: The longest an arena waits to release a claim when it stops (the lease
#: frees the stream anyway).
RELEASE_SECONDS = 2.0

T = TypeVar("T")


def dead_here(owner: str) -> bool:
    """Whether ``owner`` (an arena's :attr:`Claims.owner`) ran on this machine
    and its process is gone: its claims need not wait for their lease (an
    arena killed and resumed at once).  A process id taken again since only
    means waiting for the lease."""
    host, _, pid = owner.rpartition(":")[0].rpartition(":")
    return host == socket.gethostname() and pid.isdigit() and process_gone(int(pid))


class Claims:
    """One arena's claims on the chains of one stored tournament.

    Every call runs the database work on a worker thread that a cancellation
    abandons (the lease settles whatever it leaves behind)."""

    def __init__(self, store: Store, tournament_id: int, *,
                 lease_seconds: float = LEASE_SECONDS,
                 retry_seconds: float = RETRY_SECONDS) -> None:
        self.store = store
        self.tournament_id = tournament_id
        self.lease_seconds = lease_seconds
        self.retry_seconds = retry_seconds
        #: Names this arena process (host, process id, start time).
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{time.time_ns()}"
        self.held: set[str] = set()

    async def take(self, chain: Chain) -> Chain | None:
        """Claim ``chain``: None while another arena holds it, else the chain with
        each stream's games cut to those still to play (read after the claim, so
        none that another arena stored before giving the chain up)."""
        name = chain_name(chain)
        store, tid = self.store, self.tournament_id
        if not await self._run(store.claim, tid, name, self.owner, self.lease_seconds):
            holder = await self._run(store.claim_holder, tid, name)
            if holder is None or not dead_here(holder) or not await self._run(
                    functools.partial(store.claim, replacing=holder), tid, name, self.owner,
                    self.lease_seconds):
                return None
        self.held.add(name)
        done = await self._run(store.done_games, tid)
        return tuple(dataclasses.replace(s, games=tuple(g for g in s.games
                                                        if (s.table, g) not in done))
                     for s in chain)

    async def release(self, chain: Chain) -> None:
        """Give ``chain`` up, waiting at most :data:`RELEASE_SECONDS` (shielded:
        it runs while its chain is being cancelled too)."""
        name = chain_name(chain)
        self.held.discard(name)
        # On a StorageError, the lease runs out instead.
        with (trio.CancelScope(shield=True), trio.move_on_after(RELEASE_SECONDS),
              contextlib.suppress(StorageError)):
            await self._run(self.store.release, self.tournament_id, name, self.owner)

    async def keep_renewed(self) -> None:
        """Renew every held claim every third of a lease, until cancelled.  A
        claim found lost (its lease ran out while this arena stalled and another
        took it) is forgotten; the unique game key keeps the two arenas' games
        apart."""
        while True:
            await trio.sleep(self.lease_seconds / 3)
            for name in sorted(self.held):
                if not await self._run(self.store.renew, self.tournament_id, name,
                                       self.owner, self.lease_seconds):
                    self.held.discard(name)

    @staticmethod
    async def _run(work: Callable[..., T], *args: object) -> T:
        return await trio.to_thread.run_sync(lambda: work(*args), abandon_on_cancel=True)
