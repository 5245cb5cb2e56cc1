"""``arena sandbox-check``: what confines a bot on this machine, tried for real.

A probe program runs inside the sandbox the arena would use, with the same
command line, and reports what it could see and do; each protection is then
printed as ``ok`` or ``MISSING`` with what the probe found.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from arena.runner import cgroups, procfs, seccomp
from arena.runner.sandbox import Limits, Sandbox, SandboxError, bwrap_problem, resolve

PROBE = r"""
import json, os, resource, socket, sys
def attempt(action):
    try:
        action()
        return True
    except OSError:
        return False
def write():
    with open(os.path.join(os.environ.get("HOME", "/nonexistent"), "probe"), "w") as f:
        f.write("x")
def refused(action):
    try:
        action()
        return False
    except PermissionError:
        return True
    except OSError:
        return False
def evict():
    fd = os.open(sys.executable, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
def probe_cache():
    fd = os.open(sys.executable, os.O_RDONLY)
    try:
        os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)
    finally:
        os.close(fd)
limits = {name: resource.getrlimit(getattr(resource, "RLIMIT_" + name))[0]
          for name in ("DATA", "CPU", "NPROC", "NOFILE", "FSIZE", "CORE")}
print(json.dumps({
    "processes": len([p for p in os.listdir("/proc") if p.isdigit()]),
    "network": attempt(lambda: socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)),
    "host_files": [e.name for e in os.scandir(bytes.fromhex(sys.argv[2]).decode())
                   if e.is_file()] if os.path.isdir(bytes.fromhex(sys.argv[2]).decode()) else [],
    "write_home": attempt(write),
    "uid": os.getuid(),
    "env": sorted(os.environ),
    "limits": limits,
    "side_channels": {"fadvise": refused(evict), "preadv2 RWF_NOWAIT": refused(probe_cache)},
    "counters": {name: open("/proc/" + name).read() for name in ("vmstat", "meminfo")},
}))
"""


@dataclass(frozen=True)
class Check:
    """One protection: whether it holds, and what was seen."""

    name: str
    ok: bool
    detail: str


def run_probe(sandbox: Sandbox) -> dict[str, Any]:
    """Run the probe in ``sandbox``; its report."""
    server = socket.create_server(("127.0.0.1", 0))
    try:
        port = server.getsockname()[1]
        # The folder in hex: a path on the command line would be shown to the bot.
        folder = os.getcwd().encode().hex()
        launch = sandbox.launch([sys.executable, "-c", PROBE, str(port), folder])
        try:
            with launch.command() as (argv, fds):
                done = subprocess.run(argv, env=launch.env, cwd=launch.cwd, pass_fds=fds,
                                      capture_output=True, timeout=60, check=False)
        finally:
            launch.release()
    finally:
        server.close()
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()
        why = tail[-1] if tail else f"exit {done.returncode}"
        raise SandboxError(f"the probe failed in the sandbox: {why}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def checks(sandbox: Sandbox) -> list[Check]:
    """Every protection of issue-level importance, tried in ``sandbox``."""
    seen = run_probe(sandbox)
    limits = sandbox.limits
    got = seen["limits"]
    expected = {"DATA": limits.memory_mb << 20, "CPU": limits.cpu_seconds,
                "NOFILE": limits.open_files, "FSIZE": limits.file_size_mb << 20, "CORE": 0}
    wrong = [k for k, v in expected.items() if got[k] != v]
    return [
        Check("bubblewrap namespaces", sandbox.kind == "bwrap",
              "in use" if sandbox.kind == "bwrap" else bwrap_problem() or "--sandbox none"),
        Check("other processes hidden", seen["processes"] <= 3,
              f"the bot sees {seen['processes']} processes"),
        Check("no network", not seen["network"],
              "a loopback connection was " + ("made" if seen["network"] else "refused")),
        Check("organiser's files hidden", not seen["host_files"],
              f"the bot sees {len(seen['host_files'])} files of {os.getcwd()}"),
        Check("not root", seen["uid"] != 0, f"the bot runs as uid {seen['uid']}"),
        Check("private writable home", bool(seen["write_home"]),
              "written" if seen["write_home"] else "not writable"),
        Check("cleared environment", set(map(str, seen["env"])) <= _allowed_env(sandbox),
              ", ".join(map(str, seen["env"]))),
        Check("resource limits", not wrong,
              limits.describe() if not wrong else f"not applied: {', '.join(wrong)}"),
        Check("seccomp filter (page cache, locked memory, ptrace, perf, keyrings, BPF, "
              "namespaces, io_uring: the list below)", all(seen["side_channels"].values()),
              ", ".join(f"{name} {'refused' if no else 'ALLOWED'}"
                        for name, no in seen["side_channels"].items())),
        Check("machine-wide counters hidden (/proc/vmstat, meminfo, ...: docs/bots.md)",
              _counters_hidden(seen["counters"], limits.memory_mb),
              "vmstat empty, meminfo the bot's limit"
              if _counters_hidden(seen["counters"], limits.memory_mb)
              else "the machine's counters are shown"),
        Check("cgroup per bot (memory with shared memory and /tmp, processes, CPU time)",
              sandbox.cgroup and cgroups.host() is not None,
              _cgroup_detail(sandbox)),
    ]


def _counters_hidden(counters: dict[str, str], memory_mb: int) -> bool:
    """Whether /proc showed no machine-wide counter (see :mod:`procfs`)."""
    total = procfs.meminfo(memory_mb).splitlines()[0]
    return not counters["vmstat"] and counters["meminfo"].startswith(total)


def _cgroup_detail(sandbox: Sandbox) -> str:
    found = cgroups.host()
    if sandbox.cgroup and found is not None:
        return f"{found.describe()} under {', '.join(found.folders)}"
    return f"{cgroups.problem() or 'not used'}: limits per process, CPU time from /proc"


def _allowed_env(sandbox: Sandbox) -> set[str]:
    from arena.runner.sandbox import BOT_ENV, MARKER_VAR

    return {*BOT_ENV, MARKER_VAR, "HOME", "TMPDIR", "PWD", "PYTHONPATH", *sandbox.pass_env}


def main(choice: str = "auto", limits: Limits | None = None) -> int:
    """Print every check; 0 when bubblewrap confines bots and every check holds."""
    sandbox = resolve(choice, limits)
    print(f"sandbox: {sandbox.kind} — {sandbox.describe()}")
    results = checks(sandbox)
    for check in results:
        print(f"  {'ok     ' if check.ok else 'MISSING'}  {check.name}: {check.detail}")
    if sandbox.kind == "bwrap":
        print("seccomp filter (EPERM):")
        for line in seccomp.describe():
            print(f"  {line}")
    return 0 if all(c.ok for c in results) else 1
