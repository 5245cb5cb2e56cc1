"""Keeping the HTML report fresh while a long run (a ladder) plays.

:class:`Rerender` renders the report (:func:`reports.render.render_report`, which
rewrites only the pages whose inputs changed) every ``games`` stored games
and/or every ``minutes`` minutes, whichever comes first (0: not by that measure;
never when no game was stored since the last render), on a worker thread so
that games go on meanwhile, one render at a time; and once more at the end.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import trio

from arena.store.database import Store

#: The niceness of the process that writes replays while the ladder plays.
RENDER_NICE = 10


class Rerender:
    """Counts stored games (:meth:`count`) and renders when due (:meth:`keep_fresh`)."""

    def __init__(self, store: Store, folder: Path, *, games: int = 0, minutes: float = 0.0,
                 say: Callable[[str], None] = print) -> None:
        self.store, self.folder, self.say = store, folder, say
        self.games, self.minutes = games, minutes
        self.new = 0
        self.due = trio.Event()

    def count(self) -> None:
        """One more game stored."""
        self.new += 1
        if self.games and self.new >= self.games:
            self.due.set()

    async def keep_fresh(self) -> None:
        """Render whenever due, until cancelled (a render in progress is finished
        first: a cancelled render would leave a half-written report)."""
        while True:
            with trio.move_on_after(60 * self.minutes if self.minutes else math.inf):
                await self.due.wait()
            self.due = trio.Event()
            if self.new:
                self.new = 0
                await trio.to_thread.run_sync(self.render)

    def render(self) -> None:
        """Render now, and say where."""
        from reports.render import render_report

        # Replays on one worker process at a low priority: the bots keep the CPUs, and
        # this process (the ladder's arena) its interpreter.
        index = render_report(self.store, self.folder, processes=1, nice=RENDER_NICE)
        self.say(f"arena: report: {index.resolve()}")
