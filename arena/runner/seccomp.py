"""The seccomp filter every bubblewrap-confined bot runs under: system calls a
card game never needs, which side channels and escapes use, fail with EPERM
(the process goes on; a runtime that probes for one sees it unsupported).

Built with libseccomp through :mod:`pyseccomp` (its ctypes binding: no compiler,
Debian's ``libseccomp2``) as a BPF program, which bubblewrap loads just before it
runs the bot (``--seccomp FD``).  What is refused, and why, is :data:`REFUSED`;
``arena sandbox-check`` lists it.
"""

from __future__ import annotations

import errno
import functools
import os

#: CLONE_NEW* flags: a new namespace of any kind.
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x20000, 0x2000000, 0x4000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID = 0x8000000, 0x10000000, 0x20000000
CLONE_NEWNET, CLONE_NEWTIME = 0x40000000, 0x80
NAMESPACE_FLAGS_EACH = (CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
                        CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWTIME)
#: preadv2/pwritev2's flag that reads only what is cached (a page-cache probe).
RWF_NOWAIT = 0x8
#: madvise advice that loads or evicts pages of a file: WILLNEED, COLD, PAGEOUT,
#: POPULATE_READ, POPULATE_WRITE.
MADVISE_CACHE = (3, 20, 21, 22, 23)

#: Refused outright, by purpose.
REFUSED: dict[str, tuple[str, ...]] = {
    "page-cache eviction and probing": (
        "fadvise64", "readahead", "mincore", "cachestat", "remap_file_pages"),
    "locked memory (a global counter)": (
        "mlock", "mlock2", "munlock", "mlockall", "munlockall"),
    "other processes' memory": (
        "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp",
        "pidfd_getfd", "userfaultfd", "migrate_pages", "move_pages"),
    "performance counters": ("perf_event_open",),
    "kernel keyrings": ("keyctl", "add_key", "request_key"),
    "BPF": ("bpf",),
    "namespaces and mounts": (
        "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
        "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at",
        "open_by_handle_at", "fanotify_init", "quotactl", "quotactl_fd"),
    "asynchronous I/O that bypasses these rules": (
        "io_uring_setup", "io_uring_enter", "io_uring_register"),
    "the kernel and the machine": (
        "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
        "swapon", "swapoff", "reboot", "acct", "syslog", "iopl", "ioperm", "uselib",
        "vhangup", "lookup_dcookie", "memfd_secret"),
}
#: Refused only with some arguments, in words (for ``arena sandbox-check``).
CONDITIONAL = (
    "preadv2/pwritev2 with RWF_NOWAIT (page-cache probing)",
    "madvise WILLNEED, COLD, PAGEOUT, POPULATE_READ/WRITE (loading or evicting cached pages)",
    "clone with a new namespace; unshare of anything but a user namespace (the exec chain "
    "of a root-run arena makes one, then drops every capability)",
    "clone3 (ENOSYS: the C library falls back to clone, whose flags are checked)",
)


class SeccompError(Exception):
    """The filter cannot be built here; the message says what is missing."""


def describe() -> list[str]:
    """What the filter refuses, a line per purpose."""
    lines = [f"{purpose}: {', '.join(names)}" for purpose, names in REFUSED.items()]
    return lines + [f"with some arguments: {text}" for text in CONDITIONAL]


@functools.cache
def program() -> bytes:
    """The filter as a BPF program for the running kernel's native architecture
    (other architectures' system calls kill the process); built once."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # OSError: libseccomp.so.2 missing
        raise SeccompError(f"libseccomp is not usable ({exc}): apt-get install "
                           f"libseccomp2; pip install pyseccomp") from None
    refuse = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(sc.ALLOW)
    for names in REFUSED.values():
        for name in names:
            rules.add_rule(refuse, name)
    for name in ("preadv2", "pwritev2"):
        rules.add_rule(refuse, name, sc.Arg(5, sc.MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT))
    for advice in MADVISE_CACHE:
        rules.add_rule(refuse, "madvise", sc.Arg(2, sc.EQ, advice))
    for flag in NAMESPACE_FLAGS_EACH:
        rules.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    rules.add_rule(refuse, "unshare", sc.Arg(0, sc.NE, CLONE_NEWUSER))
    rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    read, write = os.pipe()
    try:
        rules.export_bpf(os.fdopen(write, "wb", closefd=False))
        os.close(write)
        write = -1
        with os.fdopen(read, "rb") as pipe:
            read = -1
            return pipe.read()
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)
