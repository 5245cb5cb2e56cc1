"""Zoo: plays 2 requests legally, then floods stdout with megabytes of junk
(until the arena stops reading, or 64 MiB are out) and waits.

MODE: ``random`` (random bytes) or ``bigstr`` (a str32 header claiming 200 MiB,
then the 'x' bytes of that string, for real).
"""

import os
import sys
import time

from rawbot import Message, after, log, serve

MODE = sys.argv[1]
CHUNK = 1 << 16
TOTAL = 64 << 20


def flood() -> None:
    if MODE == "bigstr":
        os.write(1, b"\xdb" + (200 << 20).to_bytes(4, "big"))
    written = 0
    try:
        while written < TOTAL:
            chunk = os.urandom(CHUNK) if MODE == "random" else b"x" * CHUNK
            written += os.write(1, chunk)
    except OSError as exc:  # the arena closed the pipe: fine
        log(f"zoo stdout_flood: stopped after {written} bytes: {exc}")


def flood_and_wait(request: Message) -> None:
    flood()
    time.sleep(600)


if __name__ == "__main__":
    serve(f"zoo-stdout-flood-{MODE}", after(2, flood_and_wait))
