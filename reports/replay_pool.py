"""Replay pages of many games, written by a pool of worker processes.

A page copies its game's replay views, computed once when the game was stored
(:mod:`arena.store.replays`; the arena's view builder, :mod:`arena.runner.views`).
A game stored without them (a view builder that fell behind or was stopped, older
code's views) has them computed here, from its record, and stored: replaying a game
through its engine for the spectator and every seat costs tens to hundreds of
milliseconds for a long game.  A report with a replay of every game hands its games
out in batches of :data:`BATCH` to worker processes, each of which opens the database
itself, reads its batch's views (computing those missing) and writes their pages
(:func:`reports.replay.write_replay`): the work spreads over every CPU and the parent
process holds no view.  The workers start before the report's other pages are rendered
(:func:`started`), so that the render's own process computes those meanwhile.  Fewer
than :data:`POOL_FROM` batches are written here, in this process (starting workers would
cost more).

Workers are spawned (never forked: the ladder renders from a thread while trio runs; and
as the render's own children, their CPU time counts in its resource usage), with a lower
scheduling priority when asked (``nice``), so that a report rendered while bots play
(the ladder's) takes only CPU the bots leave over; each dies with the render (Linux's
parent-death signal), so a killed render leaves no worker behind.  A batch
that fails raises in the parent: the render fails as a whole (see
:mod:`reports.folders`).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment

from arena.store.database import Store, StoredGame
from arena.store.view_builder import die_with_parent
from arena.store.view_jobs import load_views
from reports.progress import Progress
from reports.replay import ASSETS, TEMPLATES, neighbours, write_replay

#: Games per batch handed to a worker.
BATCH = 50
#: Batches from which workers are started: fewer are written here (a re-render after a
#: hundred new games computes their views in less CPU than starting workers takes).
POOL_FROM = 4
#: The template of a replay page.
TEMPLATE = "game.html"

#: A game to replay with the ids of its tournament's previous and next replayed game.
Job = tuple[StoredGame, int | None, int | None]


@dataclass(frozen=True)
class Pages:
    """What every replay page of a render shares: ``environment`` builds the templates'
    environment (a module-level function, so that workers can import it), ``context`` is
    every page's common context, ``names`` and ``protections`` per tournament id."""

    url: str
    out_dir: Path
    environment: Callable[[], Environment]
    context: dict[str, Any]
    names: dict[int, str]
    protections: dict[int, Any]
    seat_views: bool = True
    #: Seat files hold the seats' per-move stderr too (``arena report --logs``).
    logs: bool = False


def workers() -> int:
    """Worker processes by default: the CPUs this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count() or 1


def write_replays(pages: Pages, store: Store, games: Sequence[StoredGame],
                  replayed: set[int], *, fresh: Callable[[str, Any], bool] | None = None,
                  processes: int | None = None, nice: int = 0, batch: int = BATCH) -> int:
    """Write ``game-<id>.html`` (and with ``seat_views`` its seat files) into
    ``pages.out_dir`` for every game of ``games`` whose id is in ``replayed``, each
    linking to its tournament's previous and next replayed game; return how many.
    A page for which ``fresh(name, inputs)`` says the copy on disk came from the same
    inputs is left as it is (see :func:`stale`).  Pages are written on ``processes``
    worker processes at niceness ``nice`` (:func:`write_all`)."""
    jobs = stale(pages, games, replayed, fresh)
    write_all(pages, jobs, store, processes=processes, nice=nice, batch=batch)
    return len(jobs)


def stale(pages: Pages, games: Sequence[StoredGame], replayed: set[int],
          fresh: Callable[[str, Any], bool] | None = None) -> list[Job]:
    """The replay pages of ``games`` (those in ``replayed``) to write: those for which
    ``fresh(name, inputs)`` does not say the copy on disk came from the same inputs (a
    stored game never changes, so only its links and its tournament's facts can: a
    re-render after ``N`` new games writes about ``N``).  Copies the viewer's shared
    assets into ``pages.out_dir`` if there is any."""
    jobs = list(neighbours([g for g in games if g.id in replayed]))
    if fresh is not None:
        jobs = [(game, previous, following) for game, previous, following in jobs
                if not fresh(f"game-{game.id}.html", (
                    game, previous, following, pages.names.get(game.tournament_id),
                    pages.protections.get(game.tournament_id), pages.seat_views,
                    *(("logs",) if pages.logs else ())))]
    if jobs:
        for asset in ASSETS:
            shutil.copyfile(TEMPLATES / asset, pages.out_dir / asset)
    return jobs


def write_all(pages: Pages, jobs: Sequence[Job], store: Store, *,
              processes: int | None = None, nice: int = 0, batch: int = BATCH) -> None:
    """Write the replay page (and seat files) of every job (:func:`started`), and wait."""
    with started(pages, jobs, store, processes=processes, nice=nice, batch=batch) as running:
        running.wait()


@dataclass
class Running:
    """Replay pages being written (:func:`started`)."""

    pages: Pages
    batches: list[list[Job]]
    store: Store
    #: The pool's batches, or None: written here by :meth:`wait`.
    futures: list[Future[None]] | None

    def wait(self, progress: Progress | None = None) -> None:
        """Until every page is written, counting them on ``progress`` (its stage begun
        when they were started); a batch that failed raises here."""
        total, done = sum(map(len, self.batches)), 0
        if self.futures is None:
            for some in self.batches:
                write_batch(self.pages, some, self.store)
                done += len(some)
                if progress is not None:
                    progress.count("replays", done, total)
            return
        sizes = {id(future): len(some) for future, some in zip(self.futures, self.batches,
                                                                 strict=True)}
        for future in as_completed(self.futures):
            future.result()
            done += sizes[id(future)]
            if progress is not None:
                progress.count("replays", done, total)


@contextlib.contextmanager
def started(pages: Pages, jobs: Sequence[Job], store: Store, *,
            processes: int | None = None, nice: int = 0, batch: int = BATCH
            ) -> Iterator[Running]:
    """Start writing the replay page (and seat files) of every job: on ``processes``
    worker processes (default :func:`workers`) at niceness ``nice``, in batches of
    ``batch`` games, each reading records from its own connection to ``pages.url``; or,
    when there are fewer than :data:`POOL_FROM` batches or one process, unless ``nice`` is set (then
    always in workers, so that this process, running bots beside the render, keeps its
    interpreter), here, from ``store``, in :meth:`Running.wait`.  The workers start at
    once, so that this process can render other pages meanwhile; leaving the block
    without waiting (an error) cancels the batches not started and waits for the others,
    so that no worker writes on."""
    batches = [list(jobs[start:start + batch]) for start in range(0, len(jobs), batch)]
    count = pool_size(len(jobs), processes=processes, nice=nice, batch=batch)
    if not count:
        yield Running(pages, batches, store, None)
        return
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(count, mp_context=context, initializer=_start_worker,
                               initargs=(nice, os.getpid()))
    try:
        yield Running(pages, batches, store,
                      [pool.submit(write_batch, pages, some) for some in batches])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def pool_size(jobs: int, *, processes: int | None = None, nice: int = 0,
              batch: int = BATCH) -> int:
    """The worker processes :func:`started` starts for ``jobs`` pages; 0: none, they are
    written in this process."""
    batches = -(-jobs // batch)
    count = min(processes or workers(), batches)
    return 0 if count < 1 or (not nice and (count == 1 or batches < POOL_FROM)) else count


def write_batch(pages: Pages, jobs: Sequence[Job], store: Store | None = None) -> None:
    """Write one batch's pages: here from ``store``, or in a worker from its own."""
    store = store or _store(pages.url)
    template = _environment(pages.environment).get_template(TEMPLATE)
    views = load_views(store, [game for game, _, _ in jobs])
    logs = store.move_logs([game.id for game, _, _ in jobs]) \
        if pages.logs and pages.seat_views else {}
    for game, previous, following in jobs:
        page = {"active": "tournaments", "g": game,
                "tournament": pages.names.get(game.tournament_id),
                "previous": previous, "following": following,
                "protections": pages.protections.get(game.tournament_id), **pages.context}
        write_replay(template, pages.out_dir, game, views[game.id], page,
                     seat_views=pages.seat_views, logs=logs.get(game.id, {}))


@functools.cache
def _store(url: str) -> Store:
    """This process's store of ``url``, opened once."""
    return Store(url)


@functools.cache
def _environment(make: Callable[[], Environment]) -> Environment:
    return make()


def _start_worker(nice: int, parent: int) -> None:
    """A worker's set-up: die with the render that started it (a killed render leaves no
    worker writing on), and lower its priority by ``nice``."""
    die_with_parent(parent)
    if nice:
        os.nice(nice)
