"""A bot that, once the arena's hello arrives, touches shared memory without
end instead of answering: a shared mapping escapes RLIMIT_DATA, so only its
cgroup's limit stops it (an out-of-memory kill).  Safety cap 3 GiB."""

import mmap
import os
import sys

CAP = 3 << 30

if __name__ == "__main__":
    os.read(0, 65536)  # the hello
    shared = mmap.mmap(-1, CAP, mmap.MAP_SHARED)
    for offset in range(0, CAP, 4096):
        shared[offset] = 1
    print("shared memory hog: safety cap reached, nothing stopped me", file=sys.stderr)
    os._exit(4)
