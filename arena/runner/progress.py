"""Progress of a running tournament, on a terminal or in a log.

On a terminal: a tqdm bar (games, rate, ETA, faults).  Otherwise (output piped
to a file, CI, a cluster job) a plain line every :data:`LINE_EVERY` seconds and
one at the end::

    arena: 120/480 games (25%), 3.2 games/s, 410 moves/s, ETA 1m52s, faults: 2 timeout, 1 crash
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from arena.store.records import GameResult

if TYPE_CHECKING:
    from tqdm import tqdm

#: Seconds between two progress lines when the output is not a terminal.
LINE_EVERY = 5.0


def write_above_bars(message: str, out: TextIO | None = None) -> None:
    """``message`` as a line on ``out`` (default stderr) that does not break a
    progress bar; tqdm is asked only if it was loaded (no bar is drawn otherwise)."""
    out = out if out is not None else sys.stderr
    tqdm = sys.modules.get("tqdm")
    if tqdm is None:
        print(message, file=out)
    else:
        tqdm.tqdm.write(message, file=out)


def _duration(seconds: float) -> str:
    hours, rest = divmod(round(seconds), 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


class Progress:
    """Fed one finished game at a time (``progress(result)``); :meth:`close` at the end.
    ``total`` None: an open-ended run (a ladder), counted without percent or ETA."""

    def __init__(self, total: int | None, done: int = 0, out: TextIO | None = None,
                 interactive: bool | None = None, every: float = LINE_EVERY) -> None:
        self.out = out if out is not None else sys.stderr
        self.total = total
        self.done = done
        self.played = 0
        self.moves = 0
        self.faults: Counter[str] = Counter()
        self.every = every
        self.started = time.monotonic()
        self.last_line = self.started
        if interactive is None:
            interactive = self.out.isatty()
        self.bar: tqdm[None] | None = None
        if interactive:
            from tqdm import tqdm  # here: only a terminal draws a bar

            self.bar = tqdm(total=total, initial=done, unit="game", dynamic_ncols=True,
                            file=self.out)

    def __call__(self, result: GameResult) -> None:
        self.done += 1
        self.played += 1
        self.moves += result.decisions
        self.faults.update(fault.kind for fault in result.faults)
        if self.bar is not None:
            self.bar.set_postfix(faults=sum(self.faults.values()), refresh=False)
            self.bar.update(1)
        elif time.monotonic() - self.last_line >= self.every:
            self._line()

    def write(self, message: str) -> None:
        """A message that does not break the bar."""
        if self.bar is not None:
            self.bar.write(message, file=self.out)
        else:
            print(message, file=self.out, flush=True)

    def line(self) -> str:
        """The progress line: games done/total, rates, ETA, faults by kind."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.played / elapsed
        if self.total is None:
            count = f"{self.done} games"
        elif self.total:
            count = f"{self.done}/{self.total} games ({100 * self.done / self.total:.0f}%)"
        else:
            count = "0 games"
        parts = [count, f"{rate:.1f} games/s", f"{self.moves / elapsed:,.0f} moves/s"]
        left = (self.total or 0) - self.done
        if left > 0 and rate > 0:
            parts.append(f"ETA {_duration(left / rate)}")
        faults = ", ".join(f"{n} {kind}" for kind, n in sorted(self.faults.items()))
        parts.append(f"faults: {faults or 'none'}")
        return "arena: " + ", ".join(parts)

    def _line(self) -> None:
        self.last_line = time.monotonic()
        print(self.line(), file=self.out, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.played:
            self._line()
