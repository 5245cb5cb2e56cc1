"""Zoo: before answering hello (the handshake time gives it room, so it dies
of the limit rather than of a time-out) allocates and touches memory, 64 MiB
at a time, until it dies.  Safety cap: at 3 GiB it gives up (writes "safety cap" to
stderr and exits 4), so a missing limit cannot take a shared machine down."""

import os
import sys

import msgpack

STEP = 64 << 20
CAP = 3 << 30


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def hog() -> None:
    hoard = []
    total = 0
    while total < CAP:
        hoard.append(b"\x01" * STEP)  # filled, so every page is touched
        total += STEP
        sys.stderr.write(f"zoo memory_hog: {total >> 20} MiB\n")
        sys.stderr.flush()
    sys.stderr.write("zoo memory_hog: safety cap reached, nothing stopped me\n")
    sys.stderr.flush()
    os._exit(4)


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                hog()
                send({"type": "hello", "name": "zoo-memory-hog"})
            elif kind == "request":
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
