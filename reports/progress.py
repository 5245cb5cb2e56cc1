"""What a report is computing, said as it goes: one line per stage and, through a long
stage (the replays), a line every :data:`EVERY` seconds with its count, rate and ETA.

``arena report`` says it on stderr (``arena: report: ...``); a render without a
:class:`Progress` (the ladder's, from a thread beside its own progress) says nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TextIO

#: Seconds between two progress lines of one stage.
EVERY = 2.0
#: Nothing is said before a render has lasted this long (then what was held, at once):
#: a quick report, or one that fails at once (bad input: one line), prints no progress.
QUIET_SECONDS = 1.0
PREFIX = "arena: report: "


@dataclass
class Progress:
    """Progress lines on ``stream``."""

    stream: TextIO
    every: float = EVERY
    quiet: float = QUIET_SECONDS
    started: float = field(default_factory=time.monotonic)
    _stage_start: float = 0.0
    _last: float = 0.0
    _held: list[str] = field(default_factory=list)

    def say(self, text: str) -> None:
        """One line: a stage starting, or what it found (held while the render is
        younger than :attr:`quiet` seconds)."""
        self._held.append(PREFIX + text)
        if time.monotonic() - self.started >= self.quiet:
            print("\n".join(self._held), file=self.stream, flush=True)
            self._held.clear()

    def begin(self) -> None:
        """A counted stage starts now (its rate and ETA count from here)."""
        self._stage_start = self._last = time.monotonic()

    def count(self, what: str, done: int, total: int) -> None:
        """``done`` of ``total`` ``what`` so far: a line if the last is :attr:`every` old,
        and always the last one."""
        now = time.monotonic()
        if done < total and now - self._last < self.every:
            return
        self._last = now
        elapsed = max(now - self._stage_start, 1e-9)
        rate = done / elapsed
        line = f"{what} {done:,}/{total:,} ({done * 100 // max(total, 1)}%), {rate:,.0f}/s"
        if done < total and rate > 0:
            line += f", ETA {_duration((total - done) / rate)}"
        self.say(line)

    def done(self) -> None:
        """The whole render's time (nothing for a render quicker than :attr:`quiet`)."""
        elapsed = time.monotonic() - self.started
        if elapsed >= self.quiet:
            self.say(f"done in {_duration(elapsed)}")
        self._held.clear()


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s"
