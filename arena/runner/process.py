"""A bot subprocess: the transport under :mod:`arena.runner.client`.

The process is started confined by an :class:`arena.runner.sandbox.Sandbox` (its
command line, cleared environment, private directory and resource limits) and
is killed as a whole tree with SIGKILL by :meth:`BotProcess.aclose`, which is
shielded from cancellation; callers close every bot they start in a
``finally`` so that no bot outlives the table that started it, even on Ctrl-C.

Processes are spawned from the thread that runs the trio loop (not a worker
thread): the parent-death signal that kills a bot when the arena dies belongs
to the spawning thread, and trio's worker threads come and go.

Deadlines: a watchdog task per bot closes its stdin and stdout once the
timer it watches (:meth:`BotProcess.watch`, the move under way) is out of
time, which ends any wait in :meth:`BotProcess.send` or
:meth:`BotProcess.receive`; so a move needs no cancel scope of its own.

stderr is drained continuously into a bounded tail, at a bounded rate, so a bot
that floods its log can neither block on a full pipe for long, nor make the
arena use unbounded memory, nor take the event loop's time from other tables.
What is drained also goes to the move under way's bounded buffer
(:meth:`BotProcess.take_move_log`, the per-move logs of :mod:`arena.store.move_logs`).
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shlex
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

import trio

from arena.runner.sandbox import MARKER_VAR, Launch, Sandbox, SandboxError, resolve
from arena.store.faults import CrashFault, MemoryFault
from arena.store.move_logs import MOVE_LOG_BYTES

STDERR_TAIL_BYTES = 4096
READ_CHUNK = 65536
#: A bot's stderr is read at up to this rate after the first burst; beyond it
#: the bot waits on its own full pipe, which costs nobody else anything.
STDERR_BYTES_PER_SECOND = 4 << 20
STDERR_BURST_BYTES = 1 << 20
#: How long a bot whose stdout ended is given to exit, so its fault says how
#: it ended (an exit status, a signal) rather than only that stdout closed.
EXIT_GRACE_SECONDS = 0.5
#: The process table is scanned for new children of bots at most this often.
SCAN_INTERVAL = 1.0
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class BotSpec:
    """A bot entrant: a display name (a stored bot's label), the command line that
    starts it and, for a stored bot, the directory it runs in (read-only)."""

    name: str
    command: str
    directory: str | None = None

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


class MoveBuffer:
    """What a bot wrote to stderr since the last :meth:`take`: its first
    :data:`~arena.store.move_logs.MOVE_LOG_BYTES` bytes and how many more came."""

    __slots__ = ("_cut", "_data")

    def __init__(self) -> None:
        self._data = bytearray()
        self._cut = 0

    def add(self, data: bytes) -> None:
        room = MOVE_LOG_BYTES - len(self._data)
        if room >= len(data):
            self._data += data
        else:
            self._data += data[:max(room, 0)]
            self._cut += len(data) - max(room, 0)

    def take(self) -> tuple[bytes, int]:
        """(the bytes kept, the number cut), then start afresh."""
        found = (bytes(self._data), self._cut)
        self._data.clear()
        self._cut = 0
        return found


class _ProcessTable:
    """Parent of every process on the machine, from one scan of /proc, shared
    by all bots and refreshed at most every :data:`SCAN_INTERVAL` seconds."""

    def __init__(self) -> None:
        self.children: dict[int, list[int]] = {}
        #: When (``time.monotonic()``) the next scan is due.
        self.due = 0.0
        #: Counts scans, so a bot recomputes its tree only after a new one.
        self.generation = 0

    def rescan(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now >= self.due:
            self.children = {}
            for pid, parent in _scan_parents().items():
                self.children.setdefault(parent, []).append(pid)
            self.due = now + SCAN_INTERVAL
            self.generation += 1

    def descendants(self, root: int, skip: int = 0) -> list[int]:
        """``root`` and its descendants as of the last scan, less the first
        ``skip`` generations."""
        children = self.children
        return _descendants(root, skip, lambda pid: children.get(pid, ()))


_TABLE = _ProcessTable()


def _descendants(root: int, skip: int, children_of: Callable[[int], Iterable[int]]
                 ) -> list[int]:
    """``root`` and its descendants, less the first ``skip`` generations."""
    found, stack = [], [(root, 0)]
    while stack:
        pid, depth = stack.pop()
        if depth >= skip:
            found.append(pid)
        stack.extend((child, depth + 1) for child in children_of(pid))
    return found


def _tree_now(root: int, skip: int = 0) -> list[int]:
    """``root`` and its descendants now, less the first ``skip`` generations:
    walked down from ``root`` through each process's list of children (a few
    reads), or, where the kernel has no such lists, from a new shared scan of
    every process."""
    if _HAS_CHILDREN_LISTS:
        return _descendants(root, skip, _children_now)
    _TABLE.rescan(force=True)
    return _TABLE.descendants(root, skip)


def _children_now(pid: int) -> list[int]:
    """The children of every thread of ``pid`` (/proc/PID/task/TID/children)."""
    children: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:  # gone
        return children
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/children", "rb") as file:
                children += map(int, file.read().split())
        except OSError:
            continue
    return children


_HAS_CHILDREN_LISTS = os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children")


def _scan_parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = _read_stat(int(entry.name))
            if stat is not None:
                parents[int(entry.name)] = int(stat[1])
    return parents


def _read_stat(pid: int) -> list[bytes] | None:
    """Fields of /proc/PID/stat after the command name (state first)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()


def _peak_rss_kb(pid: int) -> int | None:
    """VmHWM of /proc/PID/status in KiB (None: gone, a zombie, or a kernel thread)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as file:
            for line in file:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _cpu_of(stat: list[bytes]) -> float:
    """CPU of one process (all its threads) and of the children it reaped."""
    return sum(int(stat[i]) for i in (11, 12, 13, 14)) / _TICKS


def _process_cpu_clock(pid: int) -> int:
    """The clock id of process ``pid``'s CPU time (glibc's
    ``clock_getcpuclockid``: ``MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)``),
    which Linux lets any process read."""
    return (~pid << 3) | 2


class _StatReader:
    """Reads /proc/PID/stat of a set of processes through descriptors kept
    open (a read at offset 0 is fresh each time, and saves the open and close
    that would otherwise cost more than the read, twice per move)."""

    def __init__(self) -> None:
        self._fds: dict[int, int] = {}

    def cpu_seconds(self, pids: list[int]) -> float:
        for pid in set(self._fds) - set(pids):
            os.close(self._fds.pop(pid))
        total = 0.0
        for pid in pids:
            try:
                fd = self._fds.get(pid)
                if fd is None:
                    fd = self._fds[pid] = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
                data = os.pread(fd, 1024, 0)
            except OSError:
                continue
            total += _cpu_of(data[data.rfind(b")") + 2 :].split())
        return total

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


class Watched(Protocol):
    """What :meth:`BotProcess.watch` watches (a move's timer)."""

    def next_check(self) -> float:
        """When (``trio.current_time()``) to look next at :meth:`out_of_time`."""

    def out_of_time(self) -> bool:
        """Whether the time is up."""


class BotProcess:
    """A running bot: write bytes to its stdin, read bytes from its stdout."""

    def __init__(self, spec: BotSpec, popen: subprocess.Popen[bytes], launch: Launch,
                 sandbox: Sandbox, streams: tuple[trio.lowlevel.FdStream, ...]) -> None:
        self.spec = spec
        self.popen = popen
        self.pid = popen.pid
        self.launch = launch
        self.sandbox = sandbox
        self.stdin, self.stdout, self._stderr_stream = streams
        self.stderr = StderrTail()
        #: stderr since the last :meth:`take_move_log` (the move under way).
        self.move_log = MoveBuffer()
        self._stderr_poll = select.poll()
        self._stderr_poll.register(self._stderr_stream.fileno(), select.POLLIN)
        self._drain_scope = trio.CancelScope()
        self._drained = trio.Event()
        #: True once the watchdog closed the pipes: a watched move ran out of time.
        self.timed_out = False
        self._watched: Watched | None = None
        self._watch_scope = trio.CancelScope()
        # The watchdog's current sleep: its deadline is the next wake-up.
        self._sleep = trio.CancelScope()
        self._members = [self.pid]
        self._generation = -1
        # The CPU clocks of the members, as of scan number _clocks_generation.
        self._clocks: list[int] = []
        self._clocks_generation = -1
        self._stats = _StatReader()
        self._closed = False
        #: Whether its cgroup saw an out-of-memory kill (known once closed).
        self.out_of_memory = False
        # The bot's cgroup's CPU counter, kept open (None: no cgroup).
        self._cgroup_cpu: int | None = None
        if launch.cgroup is not None:
            self._cgroup_cpu = os.open(launch.cgroup.cpu_file, os.O_RDONLY | os.O_CLOEXEC)

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def write(self, data: bytes | memoryview) -> int:
        """Write what the pipe takes now, without waiting; the number of bytes
        written (all of a small message, unless the bot left its input
        unread).  A closed pipe is a crash."""
        try:
            return _write_some(_open_fd(self.stdin), data)
        except (trio.ClosedResourceError, OSError) as exc:
            raise CrashFault(f"stdin closed ({exc.__class__.__name__})") from None

    async def send(self, data: bytes | memoryview) -> None:
        """Write all of ``data``; a closed pipe is a crash.

        What the pipe takes at once is written without yielding; only a full
        pipe makes it wait, and that wait is its only checkpoint.  Cancelled
        there, part of ``data`` may be written already (the caller faults the
        bot: its stream is cut)."""
        view = memoryview(data)
        try:
            while view := view[self.write(view):]:
                await trio.lowlevel.wait_writable(_open_fd(self.stdin))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise CrashFault(f"stdin closed ({exc.__class__.__name__})") from None

    async def receive(self) -> bytes:
        """Read the next chunk of stdout; end of file is a crash.

        Always exactly one checkpoint before reading: it waits until the pipe
        is readable, which yields to the other tasks even when bytes are there
        already (so a bot that answers at once cannot make its table starve
        the others).  Cancelled there, nothing has been read.  At end of file
        it waits up to :data:`EXIT_GRACE_SECONDS` for the process to exit
        before raising (cancelled there, the cancellation propagates)."""
        try:
            while True:
                await trio.lowlevel.wait_readable(_open_fd(self.stdout))
                try:
                    data = os.read(_open_fd(self.stdout), READ_CHUNK)
                except BlockingIOError:  # woken, but another reader was first
                    continue
                break
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise CrashFault(f"stdout closed ({exc.__class__.__name__})") from None
        if not data:
            # Closed by its exit, most often: give the exit a moment to show.
            with trio.move_on_after(EXIT_GRACE_SECONDS):
                await self.wait()
            raise CrashFault(self.exit_description())
        return data

    def exit_description(self) -> str:
        code = self.popen.poll()
        if code is None:
            return "closed its stdout"
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        if code > 128 and self.sandbox.kind == "bwrap":
            # bwrap reports a signal death of the bot as 128 + the signal.
            with contextlib.suppress(ValueError):
                return f"killed by signal {signal.Signals(code - 128).name}"
        return f"exited with code {code}"

    def memory_fault(self) -> MemoryFault | None:
        """The fault to record instead of the one seen (a crash, a timeout) when
        the bot was killed at its memory limit; None otherwise.  Only a cgroup
        tells: without one, a process killed at RLIMIT_DATA stays a crash."""
        if not self.out_of_memory:
            return None
        return MemoryFault(f"killed at its memory limit of "
                           f"{self.sandbox.limits.memory_mb} MiB")

    def cpu_seconds(self, refresh: bool = False) -> float:
        """CPU time used so far by the bot.  In its cgroup: every process that
        was ever in it (threads, orphans, re-parented and reaped children), to
        the nanosecond, in one read.  Without one, its process tree as /proc
        counts it: in 10 ms ticks, so exact in sum over many moves, coarse for
        one; a process counts while it lives (from when it is found, see
        :meth:`_find_members`), then through its parent's count of its reaped
        children; one /proc read per process."""
        if self._cgroup_cpu is not None and self.launch.cgroup is not None:
            return self.launch.cgroup.cpu_seconds(self._cgroup_cpu)
        return self._stats.cpu_seconds(self._find_members(refresh))

    def live_cpu_seconds(self) -> float:
        """CPU time used so far by the bot's live processes (all their threads),
        to the nanosecond: one ``clock_gettime`` of each process's CPU clock,
        a tenth of :meth:`cpu_seconds`' cost.  Unlike it, it does not count
        children already reaped.  In a cgroup: the same as :meth:`cpu_seconds`."""
        if self._cgroup_cpu is not None and self.launch.cgroup is not None:
            return self.launch.cgroup.cpu_seconds(self._cgroup_cpu)
        if time.monotonic() >= _TABLE.due or self._clocks_generation != _TABLE.generation:
            self._clocks = [_process_cpu_clock(pid) for pid in self._find_members()]
            self._clocks_generation = _TABLE.generation
        total = 0
        for clock in self._clocks:
            try:
                total += time.clock_gettime_ns(clock)
            except OSError:  # gone since the last scan
                continue
        return total / 1e9

    def peak_memory_kb(self) -> int | None:
        """The bot's peak memory: the sum over its live processes of each one's
        resident-set high-water mark (VmHWM), in KiB; an upper bound of the
        tree's peak, exact for a bot of one process.  None once the bot has
        exited.  A few /proc reads: meant for the bot's end, not every move."""
        total, found = 0, False
        for pid in self._find_members(refresh=True):
            peak = _peak_rss_kb(pid)
            if peak is not None:
                total, found = total + peak, True
        return total if found else None

    def _find_members(self, refresh: bool = False) -> list[int]:
        """The bot's processes: found by a shared scan of /proc at most once a
        second (or now, with ``refresh``: :func:`_tree_now`), so a child counts
        from when it is found.  Under bubblewrap its own two processes (which
        only wait) are left out."""
        skip = 2 if self.sandbox.kind == "bwrap" else 0
        if refresh:
            self._members = _tree_now(self.pid, skip)
            self._generation = _TABLE.generation
            self._clocks_generation = -1
            return self._members
        _TABLE.rescan()
        if self._generation != _TABLE.generation:
            self._members = _TABLE.descendants(self.pid, skip)
            self._generation = _TABLE.generation
        return self._members

    async def wait(self) -> int:
        """Wait for the process (bwrap's outer process) to exit."""
        if self.popen.poll() is None:
            pidfd = os.pidfd_open(self.pid)
            try:
                await trio.lowlevel.wait_readable(pidfd)
            finally:
                os.close(pidfd)
        return self.popen.wait()

    def watch(self, timer: Watched) -> None:
        """Until :meth:`unwatch`, have the watchdog close the bot's stdin and
        stdout once ``timer`` is out of time: a task waiting in :meth:`send`
        or :meth:`receive` then gets a CrashFault, and :attr:`timed_out` is
        set.  No cancel scope per call: the watchdog's sleep is moved only
        when ``timer`` needs a look before its next wake-up."""
        self._watched = timer
        wake = timer.next_check()
        if wake < self._sleep.deadline:
            self._sleep.deadline = wake

    def unwatch(self) -> None:
        self._watched = None

    async def _watch(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                     ) -> None:
        """The watchdog task: sleeps until the watched timer's next check (or
        indefinitely), then closes the pipes if the timer is out of time.
        Waking for a timer already unwatched, or early, it just sleeps again.
        Ends when it closed the pipes, or when :meth:`aclose` cancels it."""
        with self._watch_scope:
            task_status.started()
            while True:
                with self._sleep:
                    await trio.sleep_forever()
                timer = self._watched
                if timer is not None and timer.out_of_time():
                    self.timed_out = True
                    self.stdin.close()  # wakes a waiting send or receive
                    self.stdout.close()
                    return
                self._sleep = trio.CancelScope(
                    deadline=math.inf if timer is None else timer.next_check())

    async def _drain_stderr(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                            ) -> None:
        try:
            with self._drain_scope:
                task_status.started()
                await self._read_stderr()
        finally:
            self._drained.set()

    async def _read_stderr(self) -> None:
        budget = float(STDERR_BURST_BYTES)
        last = trio.current_time()
        try:
            while data := await self._stderr_stream.receive_some(READ_CHUNK):
                self._took_stderr(bytes(data))
                now = trio.current_time()
                budget = min(STDERR_BURST_BYTES, budget + (now - last) * STDERR_BYTES_PER_SECOND)
                budget -= len(data)
                last = now
                if budget < 0:
                    await trio.sleep(-budget / STDERR_BYTES_PER_SECOND)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            return

    def take_move_log(self) -> tuple[bytes, int]:
        """What the bot wrote to stderr since the last call (at most
        :data:`~arena.store.move_logs.MOVE_LOG_BYTES` of it, and how many bytes
        more), then start afresh.  Reads first what waits in the pipe (one read,
        without waiting): written before the bot's reply, it belongs to this move
        even if the draining task has not read it yet."""
        self._read_waiting_stderr()
        return self.move_log.take()

    def _read_waiting_stderr(self) -> None:
        # A poll first: a third of the cost of a read that finds nothing (its
        # exception), and most moves write nothing.
        if not self._stderr_poll.poll(0):
            return
        fd = self._stderr_stream.fileno()
        if fd < 0:
            return
        try:
            data = os.read(fd, READ_CHUNK)
        except OSError:  # taken by the draining task meanwhile (EAGAIN), or closed
            return
        if data:
            self._took_stderr(data)

    def _took_stderr(self, data: bytes) -> None:
        self.stderr.add(data)
        self.move_log.add(data)

    def kill(self) -> None:
        """SIGKILL the bot's whole tree (idempotent, never blocks).

        Under bubblewrap, killing its outer process kills the sandbox's PID 1
        (parent-death signal), which takes every process in the namespace
        with it.  Without it: the process group, every descendant found, and
        every process carrying this bot's environment marker."""
        victims = [self.pid]
        if self.sandbox.kind != "bwrap" and self.popen.poll() is None:
            victims = _tree_now(self.pid)
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.sandbox.kind != "bwrap":
            kill_marked(self.launch.marker)
        if self.launch.cgroup is not None:
            self.launch.cgroup.kill()

    async def aclose(self) -> None:
        """Kill the tree, reap the process, close the pipes, remove its cgroup
        and delete its directory.

        Shielded from cancellation: once called, it always finishes, so a
        cancelled table still leaves no process behind.
        """
        if self._closed:
            return
        self._closed = True
        self.kill()
        with trio.CancelScope(shield=True):
            await self.wait()
            # Pick up the last words written before the kill, briefly.
            with trio.move_on_after(0.2):
                await self._drained.wait()
            self._drain_scope.cancel()
            self._watch_scope.cancel()
            await self._drained.wait()
            with contextlib.suppress(KeyError, ValueError):
                self._stderr_poll.unregister(self._stderr_stream.fileno())
            for stream in (self.stdin, self.stdout, self._stderr_stream):
                await stream.aclose()
            self._stats.close()
            if self._cgroup_cpu is not None:
                os.close(self._cgroup_cpu)
                self._cgroup_cpu = None
            group = self.launch.cgroup
            self.out_of_memory = group is not None and group.out_of_memory()
            # Its killed processes take a moment to leave the group.
            with trio.move_on_after(5):
                while group is not None and not group.remove():
                    group.kill()
                    await trio.sleep(0.005)
            self.launch.release(patience=0)


def _open_fd(stream: trio.lowlevel.FdStream) -> int:
    """The stream's file descriptor; ClosedResourceError once it is closed (its
    number may belong to another file by then)."""
    fd = stream.fileno()
    if fd < 0:
        raise trio.ClosedResourceError("the pipe was closed")
    return fd


def _write_some(fd: int, data: bytes | memoryview) -> int:
    """Write what a non-blocking pipe takes now; the number of bytes written."""
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0


def kill_marked(marker: str) -> None:
    """SIGKILL every process whose environment carries ``marker``."""
    needle = f"{MARKER_VAR}={marker}".encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as file:
                if needle in file.read().split(b"\0"):
                    os.kill(int(entry.name), signal.SIGKILL)
        except OSError:
            continue


_DEFAULT: list[Sandbox] = []


def default_sandbox() -> Sandbox:
    """``--sandbox auto`` with default limits, resolved once per process; the
    default database (``./arena.db``) is never shown to a bot."""
    if not _DEFAULT:
        from arena.store.database import DEFAULT_URL
        from arena.store.engine import private_paths

        _DEFAULT.append(resolve("auto", hidden=private_paths(DEFAULT_URL)))
    return _DEFAULT[0]


def _spawn(launch: Launch, child: tuple[int, int, int]) -> subprocess.Popen[bytes]:
    """Start ``launch`` on the ``child`` ends of its pipes.  Under bubblewrap the
    bot's stdout is passed as an extra descriptor (``Launch`` made the bot's
    chain take it as fd 1): bwrap's own processes get /dev/null, so the bot
    closing its stdout is an end of file here."""
    stdout: int = child[1]
    extra: tuple[int, ...] = ()
    if launch.options:
        stdout, extra = subprocess.DEVNULL, (child[1],)
    with launch.command() as (argv, fds):
        return subprocess.Popen(argv, stdin=child[0], stdout=stdout, stderr=child[2],
                                env=launch.env, cwd=launch.cwd, start_new_session=True,
                                close_fds=True, pass_fds=(*fds, *extra))


async def start_bot_process(spec: BotSpec, nursery: trio.Nursery,
                            sandbox: Sandbox | None = None) -> BotProcess:
    """Start ``spec`` confined by ``sandbox`` (default: :func:`default_sandbox`),
    with its stderr drained by a task in ``nursery``.

    The caller must ``await bot.aclose()`` (typically in a ``finally``).
    Raises :class:`CrashFault` if the command cannot be started.
    """
    sandbox = sandbox or default_sandbox()
    pipes = [os.pipe2(os.O_CLOEXEC) for _ in range(3)]
    child = (pipes[0][0], pipes[1][1], pipes[2][1])
    fds = (pipes[0][1], pipes[1][0], pipes[2][0])
    launch: Launch | None = None
    try:
        launch = sandbox.launch(spec.argv(), directory=spec.directory,
                                stdout_fd=child[1] if sandbox.kind == "bwrap" else None)
        popen = _spawn(launch, child)
    except (SandboxError, ValueError, OSError) as exc:
        for fd in fds:
            os.close(fd)
        if launch is not None:
            launch.release()
        raise CrashFault(f"could not start {spec.command!r}: {exc}") from None
    finally:
        for fd in child:
            os.close(fd)
    streams = tuple(trio.lowlevel.FdStream(fd) for fd in fds)
    bot = BotProcess(spec, popen, launch, sandbox, streams)
    await nursery.start(bot._drain_stderr)
    await nursery.start(bot._watch)
    return bot


def own_module_argv(module: str, *args: str) -> list[str]:
    """``python -P -m MODULE ARGS`` with this interpreter: one of the arena's own
    modules in a child process.  ``-P`` keeps the working directory off
    ``sys.path``, so that nothing in it (a folder a user's upload could name
    ``arena``) is ever imported in place of the arena's own code."""
    return [sys.executable, "-P", "-m", module, *args]


def set_autogroup_nice(pid: int, nice: int) -> None:
    """Make the scheduler's autogroup of process ``pid`` (its session, where
    autogroups are on) ``nice``: between sessions, Linux shares the CPU by their
    autogroups' niceness, not their processes'."""
    for _ in range(10):  # Linux allows one such change in 0.1 s (EAGAIN)
        try:
            with open(f"/proc/{pid}/autogroup", "w") as autogroup:
                autogroup.write(str(nice))
            return
        except BlockingIOError:
            time.sleep(0.11)
        except OSError:  # no autogroups here, or the process is gone
            return
