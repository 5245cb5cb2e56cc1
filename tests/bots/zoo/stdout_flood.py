"""Zoo: plays 2 requests legally, then floods stdout with megabytes of junk
(until the arena stops reading, or 64 MiB are out) and waits.

MODE: ``random`` (random bytes) or ``bigstr`` (a str32 header claiming 200 MiB,
then the 'x' bytes of that string, for real).
"""

import os
import sys
import time

import msgpack

MODE = sys.argv[1]
CHUNK = 1 << 16
TOTAL = 64 << 20


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def flood() -> None:
    if MODE == "bigstr":
        os.write(1, b"\xdb" + (200 << 20).to_bytes(4, "big"))
    written = 0
    try:
        while written < TOTAL:
            chunk = os.urandom(CHUNK) if MODE == "random" else b"x" * CHUNK
            written += os.write(1, chunk)
    except OSError as exc:  # the arena closed the pipe: fine
        sys.stderr.write(f"zoo stdout_flood: stopped after {written} bytes: {exc}\n")
        sys.stderr.flush()


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    requests = 0
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": f"zoo-stdout-flood-{MODE}"})
            elif kind == "request":
                requests += 1
                if requests > 2:
                    flood()
                    time.sleep(600)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
