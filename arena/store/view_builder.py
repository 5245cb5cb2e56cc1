"""The view builder's process: ``python -m arena.store.view_builder TOURNAMENT PARENT``
(started by :mod:`arena.runner.views`; the work is :func:`arena.store.view_jobs.main`).

It asks Linux for the parent-death signal before it imports anything else: the
imports take a second of CPU, many at niceness 19 on a busy machine, and an arena
killed meanwhile (``kill -9``) must not leave it behind.  Only the standard
library's lightest modules are loaded first.
"""

import ctypes
import os
import signal
import sys

#: ``prctl``'s option that sets the signal this process gets when its parent dies.
PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Be killed when this process's parent (the thread that started it) dies;
    exit at once if ``parent`` is already gone."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


if __name__ == "__main__":
    die_with_parent(int(sys.argv[2]))
    from arena.store.view_jobs import main

    sys.exit(main(sys.argv[1:]))
