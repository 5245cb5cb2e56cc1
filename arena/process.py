"""A bot subprocess: the transport under :mod:`arena.client`.

The process is started in its own session (so it leads a new process group)
and is killed as a whole group with SIGKILL by :meth:`BotProcess.aclose`, which
is shielded from cancellation; callers close every bot they start in a
``finally`` so that no bot outlives the table that started it, even on Ctrl-C.

stderr is drained continuously into a bounded tail, so a bot that floods its
log can neither block on a full pipe nor make the arena use unbounded memory.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
from collections import deque
from dataclasses import dataclass

import trio

from arena.faults import CrashFault

STDERR_TAIL_BYTES = 4096
READ_CHUNK = 65536


@dataclass(frozen=True)
class BotSpec:
    """A bot entrant: a display name and the command line that starts it."""

    name: str
    command: str

    def argv(self) -> list[str]:
        return shlex.split(self.command)


class StderrTail:
    """The last :data:`STDERR_TAIL_BYTES` bytes a bot wrote to stderr."""

    def __init__(self, limit: int = STDERR_TAIL_BYTES) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._limit = limit

    def add(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        while self._size - len(self._chunks[0]) >= self._limit:
            self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        data = b"".join(self._chunks)[-self._limit :]
        return data.decode("utf-8", errors="replace")

    def take(self) -> str:
        """The tail so far, then start afresh (one tail per game)."""
        text = self.text()
        self._chunks.clear()
        self._size = 0
        return text


class BotProcess:
    """A running bot: write bytes to its stdin, read bytes from its stdout."""

    def __init__(self, spec: BotSpec, process: trio.Process) -> None:
        self.spec = spec
        self.process = process
        self.stderr = StderrTail()
        self._drain_scope = trio.CancelScope()
        self._drained = trio.Event()

    async def send(self, data: bytes) -> None:
        """Write all of ``data``; a closed pipe is a crash."""
        assert self.process.stdin is not None
        try:
            await self.process.stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise CrashFault(f"stdin closed ({exc.__class__.__name__})") from None

    async def receive(self) -> bytes:
        """Read the next chunk of stdout; end of file is a crash."""
        assert self.process.stdout is not None
        try:
            data = await self.process.stdout.receive_some(READ_CHUNK)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise CrashFault(f"stdout closed ({exc.__class__.__name__})") from None
        if not data:
            raise CrashFault(self.exit_description())
        return bytes(data)

    def exit_description(self) -> str:
        code = self.process.poll()
        if code is None:
            return "closed its stdout"
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with code {code}"

    async def _drain_stderr(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                            ) -> None:
        try:
            with self._drain_scope:
                task_status.started()
                await self._read_stderr()
        finally:
            self._drained.set()

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            while data := await self.process.stderr.receive_some(READ_CHUNK):
                self.stderr.add(bytes(data))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return

    def kill(self) -> None:
        """SIGKILL the bot's whole process group (idempotent, never blocks)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    async def aclose(self) -> None:
        """Kill the process group, reap the process, close the pipes.

        Shielded from cancellation: once called, it always finishes, so a
        cancelled table still leaves no process behind.
        """
        self.kill()
        with trio.CancelScope(shield=True):
            await self.process.wait()
            # Pick up the last words written before the kill, briefly: a
            # grandchild may still hold the pipe open.
            with trio.move_on_after(0.2):
                await self._drained.wait()
            self._drain_scope.cancel()
            await self._drained.wait()
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    await stream.aclose()


async def start_bot_process(spec: BotSpec, nursery: trio.Nursery) -> BotProcess:
    """Start ``spec`` with its stderr drained by a task in ``nursery``.

    The caller must ``await bot.aclose()`` (typically in a ``finally``).
    Raises :class:`CrashFault` if the command cannot be started.
    """
    try:
        process = await trio.lowlevel.open_process(
            spec.argv(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:
        raise CrashFault(f"could not start {spec.command!r}: {exc}") from None
    bot = BotProcess(spec, process)
    await nursery.start(bot._drain_stderr)
    return bot
