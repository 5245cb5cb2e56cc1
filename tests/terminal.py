"""A real ``arena`` process on a pseudo-terminal, driven as a person would: read
what it shows until a prompt, type a line."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Sequence


class Terminal:
    """``arena ARGS`` with a pseudo-terminal as its stdin, stdout and stderr."""

    def __init__(self, args: Sequence[str], env: dict[str, str] | None = None) -> None:
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen([sys.executable, "-m", "arena.cli", *args], stdin=slave,
                                     stdout=slave, stderr=slave, env=env,
                                     start_new_session=True)
        os.close(slave)
        #: Everything shown so far; :meth:`read_until` consumes up to what it found.
        self.shown = ""
        self._unread = 0

    def read_until(self, *texts: str, timeout: float = 60) -> str | None:
        """Read until one of ``texts`` appears in the unread output (return it) or the
        process closes the terminal (None)."""
        deadline = time.monotonic() + timeout
        while True:
            unread = self.shown[self._unread:]
            found = [(unread.index(t), t) for t in texts if t in unread]
            if found:
                at, text = min(found)
                self._unread += at + len(text)
                return text
            left = deadline - time.monotonic()
            assert left > 0, f"none of {texts} within {timeout}s; shown:\n{self.shown[-2000:]}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # EIO: the process closed the terminal
                    data = b""
                if not data:
                    return None
                self.shown += data.decode(errors="replace")

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def finish(self, timeout: float = 60) -> int:
        """Read to the end; the exit status."""
        while self.read_until("\0", timeout=timeout) is not None:
            pass
        status = self.proc.wait(timeout=timeout)
        os.close(self.master)
        return status
