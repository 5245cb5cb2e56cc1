"""The seccomp filter of bubblewrap-confined bots (issue 28, point 1): a bot that
tries each refused system call gets EPERM (ENOSYS for clone3), while what a bot
needs (reading its files, threads, fork, a subprocess, plain preadv2) works.
Real bots under the real sandbox; the starter kits' Node and C bots play under
it in tests/test_kits.py, the sample bots in tests/test_sample_bots.py."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import trio

from arena.runner import seccomp
from arena.runner.sandbox import Sandbox
from tests.test_sandbox import bot_script, run_to_exit

#: A bot that tries every system call and prints {name: errno or "ok"} on stderr.
PROBE = textwrap.dedent("""
    import ctypes, errno, json, mmap, os, subprocess, sys, threading
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    found = {}
    def call(name, number, *args):
        ctypes.set_errno(0)
        result = libc.syscall(number, *[ctypes.c_long(a) for a in args])
        found[name] = "ok" if result >= 0 else ctypes.get_errno()
    def attempt(name, action):
        try:
            action()
            found[name] = "ok"
        except OSError as exc:
            found[name] = exc.errno
    fd = os.open(sys.argv[0], os.O_RDONLY)
    page = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    address = ctypes.addressof(ctypes.c_char.from_buffer_copy(b"x"))
    vector = bytearray(4096)
    buffer = (ctypes.c_char * 4096)()
    held = ctypes.addressof(buffer)
    attempt("fadvise64", lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED))
    call("readahead", 187, fd, 0, 4096)
    call("mincore", 27, held & ~4095, 4096, held)
    call("cachestat", 451, fd, 0, 0, 0)
    attempt("preadv2 RWF_NOWAIT", lambda: os.preadv(fd, [vector], 0, os.RWF_NOWAIT))
    attempt("preadv2", lambda: os.preadv(fd, [vector], 0, 0))
    call("mlock", 149, held & ~4095, 4096)
    call("munlock", 150, held & ~4095, 4096)
    safe = sys.argv[1:] == ["safe"]  # unconfined: nothing that changes this process
    if not safe:
        call("mlockall", 151, 1)
    attempt("madvise PAGEOUT", lambda: page.madvise(21))
    attempt("madvise WILLNEED", lambda: page.madvise(mmap.MADV_WILLNEED))
    attempt("madvise NORMAL", lambda: page.madvise(mmap.MADV_NORMAL))
    call("userfaultfd", 323, 0)
    call("perf_event_open", 298, 0, 0, -1, -1, 0)
    call("ptrace", 101, 0x4206, 0, 0, 0)  # PTRACE_SEIZE of pid 0: refused or ESRCH
    call("process_vm_readv", 310, os.getppid(), 0, 0, 0, 0, 0)
    call("keyctl", 250, 0, 0, 0, 0, 0)
    call("add_key", 248, 0, 0, 0, 0, 0)
    call("bpf", 321, 0, 0, 0)
    if not safe:
        call("unshare mount namespace", 272, 0x20000)
        call("unshare network namespace", 272, 0x40000000)
        call("clone new namespace", 56, 0x20000 | 17, 0, 0, 0, 0)
    call("setns", 308, -1, 0)
    call("mount", 165, 0, 0, 0, 0, 0)
    call("io_uring_setup", 425, 8, 0)
    call("clone3", 435, 0, 0)
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    found["thread"] = "ok"
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    found["fork"] = "ok" if os.waitpid(pid, 0)[1] == 0 else "failed"
    found["subprocess"] = "ok" if subprocess.run(["/bin/true"]).returncode == 0 else "failed"
    print(json.dumps(found), file=sys.stderr)
""")

REFUSED = ["fadvise64", "readahead", "mincore", "cachestat", "preadv2 RWF_NOWAIT", "mlock",
           "munlock", "mlockall", "madvise PAGEOUT", "madvise WILLNEED", "userfaultfd",
           "perf_event_open", "ptrace", "process_vm_readv", "keyctl", "add_key", "bpf",
           "unshare mount namespace", "unshare network namespace", "setns", "mount",
           "io_uring_setup", "clone new namespace"]
ALLOWED = ["preadv2", "madvise NORMAL", "thread", "fork", "subprocess"]


def test_a_bot_gets_eperm_for_each_refused_call_and_keeps_what_it_needs(
        tmp_path: Path) -> None:
    command = bot_script(tmp_path, PROBE)
    bot = trio.run(run_to_exit, command, Sandbox("bwrap"))
    found = json.loads(bot.stderr.text().strip().splitlines()[-1])
    assert {name: found[name] for name in REFUSED} == {name: 1 for name in REFUSED}
    assert found["clone3"] == 38  # ENOSYS: the C library falls back to clone
    assert {name: found[name] for name in ALLOWED} == {name: "ok" for name in ALLOWED}


def test_without_the_sandbox_the_same_calls_are_not_filtered(tmp_path: Path) -> None:
    """The probe itself is sound: outside bubblewrap the page-cache calls work."""
    command = bot_script(tmp_path, PROBE) + " safe"
    bot = trio.run(run_to_exit, command, Sandbox("none"))
    found = json.loads(bot.stderr.text().strip().splitlines()[-1])
    assert found["fadvise64"] == found["preadv2 RWF_NOWAIT"] == found["mincore"] == "ok"


def test_sandbox_check_lists_the_filter() -> None:
    import subprocess

    done = subprocess.run([sys.executable, "-m", "arena", "sandbox-check"], text=True,
                          capture_output=True, timeout=120, check=False)
    assert "ok       seccomp filter" in done.stdout, done.stdout
    for line in seccomp.describe():
        assert f"  {line}\n" in done.stdout
