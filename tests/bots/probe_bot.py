"""Reports what a bot process can see and do, as one JSON line on stderr, then exits.

Usage: probe_bot.py SECRET_FILE PORT
SECRET_FILE is a host file the bot must not be able to read; PORT is a TCP port
on 127.0.0.1 where the test listens (the bot must not reach it).
"""

from __future__ import annotations

import json
import os
import resource
import socket
import sys


def attempt(action: object) -> str:
    try:
        result = action() if callable(action) else action
    except OSError as exc:
        return f"refused: {exc.__class__.__name__}"
    return f"ok: {str(result)[:60]}"


def read_file(path: str) -> str:
    with open(path) as file:
        return file.read()


def write_file(path: str) -> int:
    with open(path, "w") as file:
        return file.write("token")


def main() -> None:
    secret, port = sys.argv[1], int(sys.argv[2])
    here = os.path.dirname(os.path.abspath(__file__))
    home = os.environ.get("HOME", "")
    report = {
        "uid": os.getuid(),
        "cwd": os.getcwd(),
        "env": sorted(os.environ),
        "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        "read_secret": attempt(lambda: read_file(secret)),
        "connect": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=1)),
        "write_home": attempt(lambda: write_file(os.path.join(home, "token"))),
        "write_own_dir": attempt(lambda: write_file(os.path.join(here, "token"))),
        "write_var_tmp": attempt(lambda: write_file("/var/tmp/arena-probe-token")),
        "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0],
        "data": resource.getrlimit(resource.RLIMIT_DATA)[0],
        "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "core": resource.getrlimit(resource.RLIMIT_CORE)[0],
    }
    print(json.dumps(report), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
