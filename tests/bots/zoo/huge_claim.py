"""Zoo: plays 2 requests legally, then sends a msgpack header claiming about
10^9 bytes (or items) and nothing more.  The arena must see a protocol error at
once, not wait for the rest (or the deadline).

MODE: ``str32`` (a bare str32 header), ``bin32`` (an action map whose last value
is a bin32 header), ``array32`` (a bare array32 header claiming 10^9 items).
"""

import os
import sys
import time

import msgpack

MODE = sys.argv[1]
CLAIM = (1_000_000_000).to_bytes(4, "big")


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def huge(request_id: int) -> bytes:
    if MODE == "str32":
        return b"\xdb" + CLAIM
    if MODE == "bin32":
        head = msgpack.packb({"type": "action", "id": request_id, "index": 0})
        # Turn the 3-entry fixmap into 4 entries; the 4th value is the bin32 header.
        return b"\x84" + head[1:] + msgpack.packb("pad") + b"\xc6" + CLAIM
    if MODE == "array32":
        return b"\xdd" + CLAIM
    raise SystemExit(f"unknown mode {MODE}")


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    requests = 0
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": f"zoo-huge-{MODE}"})
            elif kind == "request":
                requests += 1
                if requests > 2:
                    os.write(1, huge(msg["id"]))
                    time.sleep(600)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
