"""A cgroup for every bot sandbox: its memory, process count and CPU time,
charged to the bot as a whole rather than to each of its processes.

The kernel counts in a cgroup what per-process rlimits miss: shared memory
and the pages of the bot's private ``/tmp`` (tmpfs) against the memory limit,
every process and thread of the bot against one process limit, and the CPU
time of every process that was ever in it (threads, orphans, re-parented and
already reaped children) in one counter.

Two layouts, whichever the host delegates (:func:`host`):

cgroup v2
    a group under the arena's own cgroup, when that cgroup offers the memory
    and pids controllers to its children (``cgroup.subtree_control``).
cgroup v1
    on hybrid hosts, one group per controller (memory, pids, cpuacct), each
    under the arena's own group of that hierarchy.

The bot joins its group before it runs any code of its own: the first step of
its exec chain (:func:`join_argv`, a ``/bin/sh`` that writes its own pid into
the group and then execs), never a ``preexec_fn`` (trio spawns from a
thread).  A group is named for the process that made it (pid namespace, pid
and start time), so a later arena removes the groups of arenas that died
(:func:`remove_stale`, run once per process by :func:`host`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shlex
import signal
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = "/sys/fs/cgroup"
#: The folder, under the arena's own cgroup, that holds the bot groups.
FOLDER = "five-arena"
V1_CONTROLLERS = ("memory", "pids", "cpuacct")
V2_CONTROLLERS = ("memory", "pids")


class CgroupError(Exception):
    """A bot's cgroup could not be made; the message says why."""


@dataclass(frozen=True)
class Host:
    """Where this process makes bot groups: one folder (v2) or one per
    controller (v1, in :data:`V1_CONTROLLERS` order)."""

    version: int
    folders: tuple[str, ...]

    def describe(self) -> str:
        return f"cgroup v{self.version}"


@dataclass(frozen=True)
class BotGroup:
    """One bot's cgroup (a directory per hierarchy)."""

    version: int
    dirs: tuple[str, ...]

    @property
    def cpu_file(self) -> str:
        return (f"{self.dirs[2]}/cpuacct.usage" if self.version == 1
                else f"{self.dirs[0]}/cpu.stat")

    def cpu_seconds(self, fd: int) -> float:
        """The CPU time charged so far, from :attr:`cpu_file` opened as ``fd``
        (a read at offset 0 is fresh each time)."""
        data = os.pread(fd, 4096, 0)
        if self.version == 1:
            return int(data) / 1e9
        for line in data.splitlines():
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) / 1e6
        return 0.0

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the group at its memory limit:
        ``oom_kill`` of ``memory.events`` (v2) or ``memory.oom_control`` (v1);
        on a v1 kernel without that count (before 4.13), whether the limit was
        ever hit (``memory.failcnt``).  False once the group is removed."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            lines = Path(self.dirs[0], name).read_text().splitlines()
            counts = dict(line.split(maxsplit=1) for line in lines if " " in line)
            if "oom_kill" in counts:
                return int(counts["oom_kill"]) > 0
            if self.version == 1:
                return int(Path(self.dirs[0], "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            pass
        return False

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.dirs:
            with contextlib.suppress(OSError, ValueError):
                found.update(map(int, Path(folder, "cgroup.procs").read_text().split()))
        found.discard(0)  # a process of another pid namespace
        return sorted(found)

    def kill(self) -> None:
        """SIGKILL every process in the group (never blocks)."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                Path(self.dirs[0], "cgroup.kill").write_text("1")
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def remove(self) -> bool:
        """Remove the group's directories; False while a process is still in it
        (the caller kills and tries again)."""
        done = True
        for folder in self.dirs:
            try:
                os.rmdir(folder)
            except FileNotFoundError:
                continue
            except OSError:
                done = False
        return done


def join_argv(group: BotGroup, argv: list[str]) -> list[str]:
    """``argv`` behind a step that moves itself into ``group``, then execs it:
    every process the bot ever starts is in the group from its first
    instruction.  A failed move stops the chain (exit 126)."""
    moves = " && ".join(f"echo $$ > {shlex.quote(folder + '/cgroup.procs')}"
                        for folder in group.dirs)
    return ["/bin/sh", "-c", f'{moves} || exit 126; exec "$@"', "sh", *argv]


def make(memory_bytes: int, processes: int) -> BotGroup:
    """A new group with these limits; raises :class:`CgroupError`."""
    where = host()
    if where is None:
        raise CgroupError(problem() or "no cgroup")
    name = f"{owner_tag(os.getpid())}-{secrets.token_hex(4)}"
    group = BotGroup(where.version, tuple(f"{folder}/{name}" for folder in where.folders))
    try:
        for folder in group.dirs:
            os.mkdir(folder)
        _set_limits(group, memory_bytes, processes)
    except OSError as exc:
        group.remove()
        raise CgroupError(f"cannot make a cgroup under {where.folders[0]}: {exc}") from None
    return group


def _set_limits(group: BotGroup, memory_bytes: int, processes: int) -> None:
    if group.version == 2:
        Path(group.dirs[0], "memory.max").write_text(str(memory_bytes))
        with contextlib.suppress(FileNotFoundError):
            Path(group.dirs[0], "memory.swap.max").write_text("0")
        Path(group.dirs[0], "pids.max").write_text(str(processes))
        return
    memory, pids = group.dirs[0], group.dirs[1]
    Path(memory, "memory.limit_in_bytes").write_text(str(memory_bytes))
    with contextlib.suppress(OSError):  # absent without swap accounting
        Path(memory, "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
    Path(pids, "pids.max").write_text(str(processes))


@functools.cache
def _found() -> tuple[Host | None, str | None]:
    """This process's host layout, or why there is none; stale groups of dead
    arenas are removed on the way (once per process)."""
    errors: list[str] = []
    for finder in (_v2_host, _v1_host):
        try:
            found = finder()
        except OSError as exc:
            errors.append(str(exc))
            continue
        if found is None:
            continue
        try:
            for folder in found.folders:
                os.makedirs(folder, exist_ok=True)
            if found.version == 2:  # the bot groups below it get both controllers
                Path(found.folders[0], "cgroup.subtree_control").write_text(
                    " ".join(f"+{c}" for c in V2_CONTROLLERS))
            remove_stale(found)
            make_probe = BotGroup(found.version, tuple(
                f"{folder}/{owner_tag(os.getpid())}-probe" for folder in found.folders))
            for folder in make_probe.dirs:
                os.mkdir(folder)
            make_probe.remove()
        except OSError as exc:
            errors.append(f"cannot make a cgroup under {found.folders[0]}: {exc}")
            continue
        return found, None
    return None, (errors[-1] if errors else
                  "neither a cgroup v2 hierarchy delegating memory and pids nor cgroup v1 "
                  "memory, pids and cpuacct hierarchies are mounted")


def host() -> Host | None:
    """Where bot groups are made here, or None (see :func:`problem`)."""
    return _found()[0]


def problem() -> str | None:
    """Why no bot cgroup can be made here, or None when one can."""
    return _found()[1]


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and ``""`` for v2."""
    paths: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _v2_host() -> Host | None:
    own = _own_paths().get("")
    for mount in (ROOT, f"{ROOT}/unified"):
        if own is None or not os.path.exists(f"{mount}/cgroup.controllers"):
            continue
        folder = f"{mount}{own.rstrip('/')}"
        offered = Path(folder, "cgroup.subtree_control").read_text().split()
        if not set(V2_CONTROLLERS) <= set(offered):
            continue
        return Host(2, (f"{folder}/{FOLDER}",))
    return None


def _v1_host() -> Host | None:
    own = _own_paths()
    folders = []
    for controller in V1_CONTROLLERS:
        mount = f"{ROOT}/{controller}"
        if controller not in own or not os.path.exists(f"{mount}/cgroup.procs"):
            return None
        folders.append(f"{mount}{own[controller].rstrip('/')}/{FOLDER}")
    return Host(1, tuple(folders))


# -- groups of arenas that died ------------------------------------------------------

def _namespace() -> int:
    return os.stat("/proc/self/ns/pid").st_ino


def _start_time(pid: int) -> str | None:
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return data[data.rfind(b")") + 2:].split()[19].decode()


def owner_tag(pid: int) -> str:
    """``NAMESPACE-PID-STARTTIME`` of a live process: who made a group."""
    return f"{_namespace()}-{pid}-{_start_time(pid)}"


def owner_dead(name: str) -> bool:
    """Whether the process that made group ``name`` (of this pid namespace) is
    gone; a group of another namespace is never judged.  ``name`` is
    ``owner_tag(pid)-SUFFIX`` (a bot's private folder is named the same way)."""
    parts = name.split("-")
    if len(parts) != 4 or not parts[1].isdigit() or parts[0] != str(_namespace()):
        return False
    return _start_time(int(parts[1])) != parts[2]


def remove_stale(where: Host) -> list[str]:
    """Kill what is left in, and remove, every group whose arena died; their names."""
    removed = []
    names = {entry.name for folder in where.folders if os.path.isdir(folder)
             for entry in os.scandir(folder) if entry.is_dir()}
    for name in sorted(names):
        if not owner_dead(name):
            continue
        group = BotGroup(where.version, tuple(f"{folder}/{name}" for folder in where.folders))
        for _ in range(100):
            group.kill()
            if group.remove():
                removed.append(name)
                break
            time.sleep(0.01)
    return removed
