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
from rawbot import Message, action, after, serve

MODE = sys.argv[1]
CLAIM = (1_000_000_000).to_bytes(4, "big")


def huge(request_id: int) -> bytes:
    if MODE == "str32":
        return b"\xdb" + CLAIM
    if MODE == "bin32":
        head = msgpack.packb(action(request_id))
        # Turn the 3-entry fixmap into 4 entries; the 4th value is the bin32 header.
        return b"\x84" + head[1:] + msgpack.packb("pad") + b"\xc6" + CLAIM
    if MODE == "array32":
        return b"\xdd" + CLAIM
    raise SystemExit(f"unknown mode {MODE}")


def claim(request: Message) -> None:
    os.write(1, huge(request["id"]))
    time.sleep(600)


if __name__ == "__main__":
    serve(f"zoo-huge-{MODE}", after(2, claim))
