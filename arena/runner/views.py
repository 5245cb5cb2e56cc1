"""A running tournament's view builder: a child process that computes the replay
views of its games as they are stored (:func:`arena.store.view_jobs.follow`), so
that a report with a replay of every game only copies them into pages.

It runs at the lowest priority (``nice`` 19, in a session of its own niced as
much): on a machine the bots keep busy it falls behind rather than slowing them,
and whatever it has not done when the run ends is left to the report (which
computes and stores the views of any game without them).  It starts only once
the run has lasted
:data:`START_AFTER_SECONDS` (a short run's views cost the report less than
starting a process would), and not for an in-memory database (no other process
can open it).
"""

from __future__ import annotations

import os
import subprocess

import trio

from arena.runner.process import own_module_argv, set_autogroup_nice
from arena.store.engine import sqlite_database
from arena.store.view_jobs import NICE, URL_VARIABLE

#: A run shorter than this starts no view builder.
START_AFTER_SECONDS = 10.0


#: Seconds a stopped view builder has to end after SIGTERM before it is killed.
STOP_SECONDS = 5.0

#: The process ids of this process's view builders that are running.
_RUNNING: set[int] = set()


def running_builders() -> frozenset[int]:
    """The process ids of this process's running view builders (whose database
    writes a message about a locked database may be waiting for)."""
    return frozenset(_RUNNING)


async def run_view_builder(url: str, tournament_id: int, *,
                           start_after: float = START_AFTER_SECONDS) -> None:
    """Run the view builder of a tournament's games until cancelled (then it is
    terminated, and killed if it lingers), after ``start_after`` seconds.  It also
    dies with this process (a parent-death signal, which Linux sends when the
    *thread* that started it ends: so it is started from this one, trio's, not from
    a worker thread that may end first).  It runs in a session of its own, whose
    scheduler autogroup (where Linux has them) is niced too: otherwise its CPU would
    come out of the arena's session's share, beside the bots'.  Its failure is its
    own: it says why on stderr, and the run goes on."""
    if sqlite_database(url) in ("", ":memory:"):  # no other process can open it
        return
    await trio.sleep(start_after)
    process = subprocess.Popen(
        own_module_argv("arena.store.view_builder", str(tournament_id), str(os.getpid())),
        env={**os.environ, URL_VARIABLE: url}, stdin=subprocess.DEVNULL,
        start_new_session=True)
    _RUNNING.add(process.pid)
    try:
        await trio.to_thread.run_sync(set_autogroup_nice, process.pid, NICE)
        await _ended(process)
    finally:
        with trio.CancelScope(shield=True):
            await _stop(process)
        _RUNNING.discard(process.pid)


async def _ended(process: subprocess.Popen[bytes]) -> None:
    """Wait until ``process`` has ended (without reaping it)."""
    try:
        descriptor = os.pidfd_open(process.pid)
    except OSError:  # a kernel before 5.3
        while process.poll() is None:
            await trio.sleep(0.5)
        return
    try:
        await trio.lowlevel.wait_readable(descriptor)
    finally:
        os.close(descriptor)


async def _stop(process: subprocess.Popen[bytes]) -> None:
    """End ``process`` quietly: SIGTERM, then SIGKILL after :data:`STOP_SECONDS`
    (trio's own ``run_process`` warns on stderr when it gets that far)."""
    if process.poll() is None:
        process.terminate()
        with trio.move_on_after(STOP_SECONDS):
            await _ended(process)
        if process.poll() is None:
            process.kill()
    await trio.to_thread.run_sync(process.wait)
