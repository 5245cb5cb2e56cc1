"""Tables on Dask workers: the cores of one machine (``-j N``) or a cluster.

The coordinating arena splits what is left of a schedule into :class:`Unit`\\ s
(up to :data:`UNIT_GAMES` games of one seat-rotation stream, played on that
unit's own bot processes, so no process sees a deal twice), submits each to
Dask, and stores each unit's games as the unit comes back.  Workers only play:
they run the trio table runner (:func:`arena.runner.stream.play_stream`) and return
the finished games; they never open the database.

A lost worker costs only its units' unsaved games: Dask runs the unit again on
another worker, and the database's unique game key (tournament, table, deal,
rotation) makes storing a game that is already there a no-op, so no game is
ever stored twice.

``distributed`` is imported only when a cluster is used (``import arena`` stays
cheap).  What a worker machine needs: this package installed, the bot programs
at the same paths as on the coordinating machine, and the sandbox (bubblewrap)
if the tournament asks for it; see the README.
"""

from __future__ import annotations

import logging
import math
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

from arena.formats.deals import DealSeeds
from arena.formats.schedule import Stream
from arena.runner.plan import Plan
from arena.runner.stream import play_stream
from arena.store.records import GameResult

if TYPE_CHECKING:
    from distributed import Client, WorkerPlugin


#: Most games in one unit: a lost worker replays at most this many per unit it held.
UNIT_GAMES = 8


class ClusterError(Exception):
    """The cluster cannot be reached or started; the message says why in one line."""


@dataclass(frozen=True)
class Unit:
    """Games of one stream played together on one worker, on fresh bot processes."""

    stream: Stream
    games: tuple[int, ...]


def units(streams: Sequence[tuple[Stream, Sequence[int]]],
          size: int = UNIT_GAMES) -> list[Unit]:
    """Each stream's missing games in chunks of at most ``size``, in deal order,
    the first chunk of every stream before any second chunk (so every table
    makes progress early)."""
    chunked = [[Unit(stream, tuple(todo[i : i + size])) for i in range(0, len(todo), size)]
               for stream, todo in streams]
    longest = max(map(len, chunked), default=0)
    return [chunks[i] for i in range(longest) for chunks in chunked if i < len(chunks)]


def play_unit(plan: Plan, unit: Unit, seeds: DealSeeds,
              hidden: tuple[str, ...]) -> list[tuple[int, GameResult]]:
    """On a worker: play ``unit`` to its end, return (game number, result) pairs.

    The sandbox is resolved here, on the worker's machine.  The bots are killed
    before this returns, whatever happens.
    """
    sandbox = plan.resolve_sandbox(hidden)
    results: list[tuple[int, GameResult]] = []

    async def keep(number: int, result: GameResult) -> None:
        results.append((number, result))

    trio.run(play_stream, plan, unit.stream, list(unit.games), seeds, sandbox, keep)
    return results


def local_layout(parallel: int, cpus: int | None = None) -> tuple[int, int]:
    """(worker processes, tables per worker) for ``parallel`` tables on this machine:
    one process per two CPUs at most, the tables shared out among them.  The
    bots need CPU too: measured on two CPUs, two worker processes played fewer
    moves a second than one process playing the same tables (bench/throughput.py)."""
    cpus = cpus or len(os.sched_getaffinity(0))
    workers = max(1, min(parallel, cpus // 2))
    return workers, math.ceil(parallel / workers)


@contextmanager
def open_client(parallel: int, address: str | None = None,
                workers: int | None = None) -> Iterator[Client]:
    """A Dask client: on the scheduler at ``address`` (``tcp://HOST:PORT``), else
    on a local cluster of ``workers`` processes (default: :func:`local_layout`)
    sharing ``parallel`` tables at once.  Closed (and a local cluster shut
    down, its workers with it) on exit."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - a dependency of the package
        raise ClusterError("the 'distributed' package is not installed "
                           "(pip install 'dask[distributed]')") from None
    if address is not None:
        try:
            client = Client(address, timeout=10)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: "
                               f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                               ) from None
        with client:
            yield client
        return
    if workers is None:
        workers, threads = local_layout(parallel)
    else:
        threads = math.ceil(parallel / workers)
    # A Ctrl-C reaches the whole process group; the workers must leave it to
    # this process, which cancels their units and shuts them down.  They keep
    # an ignored SIGINT from their parent across exec; restarted ones get the
    # plugin.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                               host="127.0.0.1", dashboard_address=None,
                               worker_dashboard_address=None, silence_logs=logging.ERROR,
                               # no dashboard, and its HTTP server on a free port, not 8787
                               scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    finally:
        signal.signal(signal.SIGINT, previous)
    with cluster, Client(cluster) as client:
        client.register_plugin(_ignore_interrupts(), name="five-arena-ignore-sigint")
        yield client


def _ignore_interrupts() -> WorkerPlugin:
    """A Dask worker plugin: the worker ignores SIGINT (see :func:`open_client`).
    Built here so that importing this module does not import ``distributed``."""
    from distributed import WorkerPlugin

    class IgnoreInterrupts(WorkerPlugin):
        def setup(self, worker: object) -> None:
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, signal.SIG_IGN)

    return IgnoreInterrupts()


def cluster_slots(client: Client) -> int:
    """How many units the cluster's workers run at once (their threads)."""
    info: dict[str, Any] = client.scheduler_info()
    return sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()) or 1


#: Stores one game a unit brought back: ``await save(unit, number, result)``.
SaveGame = Callable[[Unit, int, GameResult], Awaitable[None]]


async def run_units(client: Client, plan: Plan, todo: Sequence[Unit], seeds: DealSeeds,
                    hidden: tuple[str, ...], save: SaveGame) -> None:
    """Play every unit on the cluster, saving each unit's games as it comes back.

    Waiting happens on worker threads, so the event loop stays free; on
    cancellation (Ctrl-C) or an error the units still queued or running are
    cancelled on the cluster, and every game already saved stays saved.  A
    unit whose workers kept dying raises :class:`ClusterError`; an error raised
    by the unit itself (e.g. the sandbox cannot run there) propagates as is.
    """
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    plan_future, seeds_future = client.scatter([plan, seeds], broadcast=True, hash=False)
    futures = {client.submit(play_unit, plan_future, unit, seeds_future, hidden,
                             pure=False): unit for unit in todo}
    finished = as_completed(list(futures))
    try:
        while (future := await trio.to_thread.run_sync(next, finished, None,
                                                       abandon_on_cancel=True)) is not None:
            try:
                results = await trio.to_thread.run_sync(future.result,
                                                        abandon_on_cancel=True)
            except KilledWorker:
                unit = futures[future]
                raise ClusterError(
                    f"workers kept dying while playing table {unit.stream.table} "
                    f"(rotation {unit.stream.rotation}); its unsaved games were not "
                    f"stored: resume to play them") from None
            for number, result in results:
                await save(futures[future], number, result)
    finally:
        client.cancel(list(futures))
