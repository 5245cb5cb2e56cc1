"""A covert bot (issue 28, finding a): one process leaves a number in the page
cache of a file of its own, a later process of the same bot reads it back by
timing plain reads.

``cache_bot.py encode N``: evicts ``data.bin`` from the page cache (where
fadvise is allowed) and reads slot N of it, so that slot alone is cached.
``cache_bot.py decode``: times a one-page read of each slot, cold first; the
fastest slot is its guess, written to stderr as ``GUESS k``.
Slots are :data:`SPACING` apart, beyond the kernel's readahead of one read.
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data.bin")
SLOTS = 8
SPACING = 1 << 20
PAGE = 4096


def encode(number: int) -> None:
    fd = os.open(DATA, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        print("evicted", file=sys.stderr)
    except OSError as exc:
        print("evict refused", exc.errno, file=sys.stderr)
    os.pread(fd, PAGE, number * SPACING)
    os.close(fd)


def decode() -> None:
    fd = os.open(DATA, os.O_RDONLY)
    costs = []
    for slot in range(SLOTS):
        start = time.perf_counter_ns()
        os.pread(fd, PAGE, slot * SPACING)
        costs.append(time.perf_counter_ns() - start)
    os.close(fd)
    print("COSTS", costs, file=sys.stderr)
    print("GUESS", min(range(SLOTS), key=costs.__getitem__), file=sys.stderr, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "encode":
        encode(int(sys.argv[2]))
    else:
        decode()
