"""A covert bot (issue 28, finding b): ``move`` moves machine-wide kernel
counters (page faults and memory, context switches, negative dentries, files
created and removed); ``read`` prints, as one JSON line on stderr, every
/proc and /sys file that shows such counters (its digest, or why not)."""

import hashlib
import json
import os
import sys
import time

FILES = [
    "/proc/vmstat", "/proc/stat", "/proc/meminfo", "/proc/loadavg", "/proc/uptime",
    "/proc/zoneinfo", "/proc/buddyinfo", "/proc/diskstats", "/proc/interrupts",
    "/proc/softirqs", "/proc/schedstat", "/proc/swaps", "/proc/locks",
    "/proc/pressure/memory", "/proc/pressure/cpu", "/proc/pressure/io",
    "/proc/sys/fs/dentry-state", "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr",
    "/proc/sys/fs/inode-state", "/proc/sys/fs/dentry-negative",
    "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/devices/system/node/node0/vmstat",
    "/sys/devices/system/node/node0/meminfo", "/sys/fs/cgroup/memory.pressure",
]


def read() -> None:
    """Each file as its digest and first line (the whole would overflow the
    stderr tail the arena keeps), and the CPU lines of /proc/stat."""
    seen = {}
    for path in FILES:
        try:
            with open(path, "rb") as file:
                data = file.read()
            seen[path] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                          "head": data.decode(errors="replace").partition("\n")[0]}
        except OSError as exc:
            seen[path] = {"refused": exc.__class__.__name__}
    with open("/proc/stat") as file:
        seen["cpu lines"] = sum(line[:3] == "cpu" and line[3:4].isdigit() for line in file)
    print(json.dumps(seen), file=sys.stderr, flush=True)


def move() -> None:
    heap = bytearray(64 << 20)
    for offset in range(0, len(heap), 4096):  # page faults, memory
        heap[offset] = 1
    for i in range(3000):  # negative dentries, which outlive the process
        os.path.exists(f"/bot/no-such-file-{os.getpid()}-{i}")
    tmp = os.environ.get("TMPDIR", "/tmp")
    for i in range(200):  # files and inodes
        path = os.path.join(tmp, f"f{i}")
        with open(path, "w") as file:
            file.write("x")
        os.remove(path)
    for _ in range(200):  # context switches
        time.sleep(0)
        os.sched_yield()
    end = time.monotonic() + 0.3  # CPU time and load
    while time.monotonic() < end:
        pass


if __name__ == "__main__":
    read() if sys.argv[1] == "read" else move()
