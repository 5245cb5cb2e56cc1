"""Zoo: plays 2 requests legally, then sends an action whose ``index`` is 0
wrapped in DEPTH one-element arrays (the limit is 16 levels), and waits.
A huge DEPTH (e.g. 100000) is written as raw bytes, past msgpack's own stack."""

import os
import sys
import time

import msgpack
from rawbot import Message, after, serve

DEPTH = int(sys.argv[1])


def deep_action(request: Message) -> None:
    head = msgpack.packb({"type": "action", "id": request["id"], "pad": 0})[:-1]
    # head ends with the key "pad"; its value: DEPTH fixarrays of one item, then 0.
    head = head.replace(msgpack.packb("pad"), msgpack.packb("index"))
    os.write(1, head + b"\x91" * DEPTH + b"\x00")
    time.sleep(600)


if __name__ == "__main__":
    serve(f"zoo-deep-{DEPTH}", after(2, deep_action))
