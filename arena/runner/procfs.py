"""What a bubblewrap-confined bot sees of the kernel's machine-wide state in
``/proc``: nothing that one process can move and a later one read.

bubblewrap mounts a fresh ``/proc`` for the bot's PID namespace, but many of
its files are the whole machine's counters (memory by kind, page faults,
context switches, interrupts, disk reads, open files, cached dentries, load,
pressure): a bot that moves one (by allocating, faulting pages, reading a
file, creating files) leaves a number that a later process of the same deal
could read.  Every such file is covered (:func:`masks`):

* :data:`EMPTY` files read as empty;
* :data:`EMPTY_DIRS` become an empty read-only directory;
* ``meminfo``, ``stat``, ``loadavg``, ``uptime`` and the ``sys/fs`` counters
  show synthetic, constant values (``meminfo``: the bot's own memory limit,
  all of it free; ``stat``: one zero line per CPU, so runtimes that count
  CPUs from it still do, as LXCFS does);
* ``cpuinfo`` shows the machine's CPUs without their current clock rate.

``/sys`` is not mounted at all.  :func:`masks` lists only what exists on this
kernel (binding over a missing file of ``/proc`` fails).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass

PROC = "/proc"
#: Machine-wide counters (or root-only page maps) shown as empty files.
EMPTY = (
    "vmstat", "zoneinfo", "buddyinfo", "pagetypeinfo", "slabinfo", "diskstats", "interrupts",
    "softirqs", "sched_debug", "schedstat", "kpageflags", "kpagecount", "kpagecgroup",
    "timer_list", "vmallocinfo", "locks", "key-users", "swaps", "cgroups", "latency_stats",
    "sys/kernel/pty/nr",
)
#: Folders of counters (pressure stall information, interrupts per IRQ,
#: file-system statistics such as XFS's read and write counts) shown empty.
EMPTY_DIRS = ("pressure", "irq", "fs", "spl")
LOADAVG = "0.00 0.00 0.00 1/1 1\n"
UPTIME = "1.00 1.00\n"
#: ``/proc/sys/fs`` counters of open files, inodes and dentries (cached
#: dentries, negative ones included, outlive the process that made them).
SYS_FS = {
    "sys/fs/file-nr": "0\t0\t{file_max}\n",
    "sys/fs/inode-nr": "0\t0\n",
    "sys/fs/inode-state": "0\t0\t0\t0\t0\t0\t0\n",
    "sys/fs/dentry-state": "0\t0\t45\t0\t0\t0\n",
    "sys/fs/dentry-negative": "0\n",
    "sys/fs/aio-nr": "0\n",
}


@dataclass(frozen=True)
class Mask:
    """One path of ``/proc`` covered: by ``data`` (a file), or by an empty
    read-only directory (``data`` None)."""

    path: str
    data: bytes | None


def masks(memory_mb: int) -> list[Mask]:
    """Every covering, for a bot whose memory limit is ``memory_mb`` MiB."""
    return [*_static_masks(), Mask(f"{PROC}/meminfo", meminfo(memory_mb).encode())]


@functools.cache
def _static_masks() -> tuple[Mask, ...]:
    found: list[Mask] = []
    for name in EMPTY:
        found.append(Mask(f"{PROC}/{name}", b""))
    found += [Mask(f"{PROC}/{name}", None) for name in EMPTY_DIRS]
    found += [Mask(f"{PROC}/stat", stat().encode()), Mask(f"{PROC}/loadavg", LOADAVG.encode()),
              Mask(f"{PROC}/uptime", UPTIME.encode()), Mask(f"{PROC}/cpuinfo", cpuinfo())]
    file_max = _read(f"{PROC}/sys/fs/file-max").strip() or "1048576"
    found += [Mask(f"{PROC}/{name}", text.format(file_max=file_max).encode())
              for name, text in SYS_FS.items()]
    return tuple(mask for mask in found if os.path.lexists(mask.path))


def meminfo(memory_mb: int) -> str:
    """A ``/proc/meminfo`` of a machine whose memory is the bot's limit, all free."""
    total = memory_mb << 10
    lines = {"MemTotal": total, "MemFree": total, "MemAvailable": total}
    for key in ("Buffers", "Cached", "SwapCached", "Active", "Inactive", "Active(anon)",
                "Inactive(anon)", "Active(file)", "Inactive(file)", "Unevictable", "Mlocked",
                "SwapTotal", "SwapFree", "Dirty", "Writeback", "AnonPages", "Mapped", "Shmem",
                "KReclaimable", "Slab", "SReclaimable", "SUnreclaim", "KernelStack",
                "PageTables", "CommitLimit", "Committed_AS", "VmallocUsed", "HugePages_Total",
                "HugePages_Free"):
        lines.setdefault(key, 0)
    return "".join(f"{key + ':':<16}{value:>8} kB\n" for key, value in lines.items())


def stat() -> str:
    """A ``/proc/stat`` of the machine's CPUs, every counter zero (boot time kept)."""
    cpus = [line.split()[0] for line in _lines(f"{PROC}/stat")
            if line.startswith("cpu") and line[3:4].isdigit()]
    btime = next((line for line in _lines(f"{PROC}/stat") if line.startswith("btime ")),
                 "btime 0")
    zeros = " ".join("0" * 10)
    return "".join([f"cpu  {zeros}\n", *(f"{cpu} {zeros}\n" for cpu in cpus),
                    "intr 0\nctxt 0\n", f"{btime}\n",
                    "processes 0\nprocs_running 1\nprocs_blocked 0\n",
                    f"softirq {' '.join('0' * 11)}\n"])


def cpuinfo() -> bytes:
    """``/proc/cpuinfo`` less each CPU's current clock rate (it moves with load)."""
    return "".join(f"{line}\n" for line in _lines(f"{PROC}/cpuinfo")
                   if not line.startswith("cpu MHz")).encode()


def described() -> Iterator[str]:
    """What is covered, for ``arena sandbox-check`` and the docs."""
    yield f"empty: {', '.join(m.path for m in _static_masks() if m.data == b'')}"
    yield f"empty folders: {', '.join(m.path for m in _static_masks() if m.data is None)}"
    yield (f"synthetic: {PROC}/meminfo (the bot's memory limit), "
           + ", ".join(m.path for m in _static_masks() if m.data))


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def _lines(path: str) -> list[str]:
    return _read(path).splitlines()
