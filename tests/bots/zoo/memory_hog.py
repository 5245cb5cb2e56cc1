"""Zoo: before answering hello (the handshake time gives it room, so it dies
of the limit rather than of a time-out) allocates and touches memory, 64 MiB
at a time, until it dies.  Safety cap: at 3 GiB it gives up (writes "safety cap" to
stderr and exits 4), so a missing limit cannot take a shared machine down."""

import os

from rawbot import log, serve

STEP = 64 << 20
CAP = 3 << 30


def hog() -> None:
    hoard = []
    total = 0
    while total < CAP:
        hoard.append(b"\x01" * STEP)  # filled, so every page is touched
        total += STEP
        log(f"zoo memory_hog: {total >> 20} MiB")
    log("zoo memory_hog: safety cap reached, nothing stopped me")
    os._exit(4)


if __name__ == "__main__":
    serve("zoo-memory-hog", hello=lambda _: hog())
