"""Tables on Dask workers: the cores of one machine (``-j N``) or a cluster.

The unit of work is the same as in the arena's own process: one stream (one seat
rotation of one block of a table's deals, :class:`arena.formats.schedule.Stream`) on
its own bot processes, so bots that keep state between games play the same games
wherever they run.  The coordinating arena plays each chain (the streams that
share a deal) one stream after another: it submits a chain's next stream to Dask
only once the previous one came back, its bots ended, so two processes that play
one deal are never alive at once on any worker.  It stores each stream's games as
they come back.  Workers only play: they run the trio table runner
(:func:`arena.runner.stream.play_stream`) and return the finished games; they never
open the database.

A lost worker costs only its streams' unsaved games: Dask runs the stream again on
another worker (once the lost worker's bots died with it, since they die with
their parent), and the database's unique game key (tournament, table, deal,
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
from typing import TYPE_CHECKING, Any

import trio

from arena.formats.deals import DealSeeds
from arena.formats.schedule import Chain, Stream
from arena.runner.plan import Plan
from arena.runner.stream import in_order, play_stream
from arena.store.records import GameResult

if TYPE_CHECKING:
    from distributed import Client, WorkerPlugin


class ClusterError(Exception):
    """The cluster cannot be reached or started; the message says why in one line."""


def play_unit(plan: Plan, stream: Stream, seeds: DealSeeds,
              hidden: tuple[str, ...]) -> list[tuple[int, GameResult]]:
    """On a worker: play ``stream``'s games on its own bot processes, return
    (game number, result) pairs.

    The sandbox is resolved here, on the worker's machine.  Every bot process
    has ended before this returns, whatever happens.
    """
    sandbox = plan.resolve_sandbox(hidden)
    results: list[tuple[int, GameResult]] = []

    async def keep(number: int, result: GameResult) -> None:
        results.append((number, result))

    trio.run(play_stream, plan, stream, list(stream.games), seeds, sandbox, keep)
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


#: Stores one game a stream brought back: ``await save(table, number, result)``.
SaveGame = Callable[[int, int, GameResult], Awaitable[None]]


async def run_chains(client: Client, plan: Plan, chains: Sequence[Chain], seeds: DealSeeds,
                     hidden: tuple[str, ...], save: SaveGame) -> None:
    """Play every chain on the cluster, its streams one after another, saving
    each stream's games as it comes back.

    Twice as many chains as the cluster has threads are in flight, so a worker
    finds the next stream queued when it finishes one.  Waiting happens on
    worker threads, so the event loop stays free; on cancellation (Ctrl-C) or
    an error the streams still queued or running are cancelled on the cluster,
    and every game already saved stays saved.  A stream whose workers kept
    dying raises :class:`ClusterError`; an error raised by the stream itself
    (e.g. the sandbox cannot run there) propagates as is.
    """
    from distributed.scheduler import KilledWorker

    plan_future, seeds_future = client.scatter([plan, seeds], broadcast=True, hash=False)
    in_flight = 2 * cluster_slots(client)
    threads = trio.CapacityLimiter(in_flight)
    futures: list[Any] = []

    async def run_chain(chain: Chain) -> None:
        for stream in chain:
            if not stream.games:
                continue
            future = client.submit(play_unit, plan_future, stream, seeds_future, hidden,
                                   pure=False)
            futures.append(future)
            try:
                results = await trio.to_thread.run_sync(future.result, abandon_on_cancel=True,
                                                        limiter=threads)
            except KilledWorker:
                raise ClusterError(
                    f"workers kept dying while playing table {stream.table} "
                    f"(rotation {stream.rotation}); its unsaved games were not "
                    f"stored: resume to play them") from None
            for number, result in results:
                await save(stream.table, number, result)

    try:
        await in_order(chains, run_chain, in_flight)
    finally:
        client.cancel(futures)
