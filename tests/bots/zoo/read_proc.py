"""Zoo: before answering hello (and again at its 3rd request, when the other
bots are surely running), lists /proc and reads every other process's
cmdline and environ.  Writes ``PROC SEEN pid: cmdline | environ OK n bytes``
(or ``environ REFUSED error``) for up to 25 processes, then
``PROC SUMMARY self=PID others=N environ_read=M``.  Then it plays legally."""

import os
import sys

from rawbot import also_at, serve


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(1 << 16)


def snoop() -> None:
    me = os.getpid()
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    others = [p for p in pids if p != me]
    environ_read = 0
    lines = []
    for pid in others:
        try:
            cmdline = read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace")
        except OSError as exc:
            cmdline = f"<cmdline REFUSED {exc.strerror}>"
        try:
            environ = read(f"/proc/{pid}/environ")
            environ_read += 1
            env = f"environ OK {len(environ)} bytes"
        except OSError as exc:
            env = f"environ REFUSED {exc.strerror}"
        cmdline = cmdline.strip()
        if len(cmdline) > 200:  # bwrap's is long: its start and the bot's command at its end
            cmdline = f"{cmdline[:60]} ... {cmdline[-140:]}"
        lines.append(f"zoo read_proc: PROC SEEN {pid}: {cmdline} | {env}\n")
    sys.stderr.write("".join(lines[:25]))
    sys.stderr.write(f"zoo read_proc: PROC SUMMARY self={me} others={len(others)} "
                     f"environ_read={environ_read}\n")
    sys.stderr.flush()


if __name__ == "__main__":
    serve("zoo-read-proc", also_at({3}, lambda _: snoop()), hello=lambda _: snoop())
