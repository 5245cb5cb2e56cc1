"""A running tournament's view builder: a child process that computes the replay
views of its games as they are stored (:func:`arena.store.view_jobs.follow`), so
that a report with a replay of every game only copies them into pages.

It runs at the lowest priority (``nice`` 19): on a machine the bots keep busy
it falls behind rather than slowing them, and whatever it has not done
when the run ends is left to the report (which computes and stores the views of
any game without them).  It starts only once the run has lasted
:data:`START_AFTER_SECONDS` (a short run's views cost the report less than
starting a process would), and not for an in-memory database (no other process
can open it).
"""

from __future__ import annotations

import os
import subprocess
import sys

import trio

from arena.store.view_jobs import URL_VARIABLE

#: A run shorter than this starts no view builder.
START_AFTER_SECONDS = 10.0


async def build_views(url: str, tournament_id: int, *,
                      start_after: float = START_AFTER_SECONDS) -> None:
    """Run the view builder of a tournament's games until cancelled (then it is
    terminated, and killed if it lingers), after ``start_after`` seconds.  It also
    dies with this process (a parent-death signal).  Its failure is its own: it
    says why on stderr, and the run goes on."""
    if not _shared(url):
        return
    await trio.sleep(start_after)
    await trio.run_process(
        [sys.executable, "-m", "arena.store.view_jobs", str(tournament_id), str(os.getpid())],
        env={**os.environ, URL_VARIABLE: url}, stdin=subprocess.DEVNULL, check=False)


def _shared(url: str) -> bool:
    """Whether another process can open the database at ``url``."""
    return not (url.startswith("sqlite") and (url.rstrip("/").endswith(":") or
                                               ":memory:" in url or url.endswith("//")))
