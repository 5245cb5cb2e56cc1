"""Zoo: plays 2 requests legally, then sends an action whose ``index`` is 0
wrapped in DEPTH one-element arrays (the limit is 16 levels), and waits.
A huge DEPTH (e.g. 100000) is written as raw bytes, past msgpack's own stack."""

import os
import sys
import time

import msgpack

DEPTH = int(sys.argv[1])


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def deep_action(request_id: int) -> bytes:
    head = msgpack.packb({"type": "action", "id": request_id, "pad": 0})[:-1]
    # head ends with the key "pad"; its value: DEPTH fixarrays of one item, then 0.
    head = head.replace(msgpack.packb("pad"), msgpack.packb("index"))
    return head + b"\x91" * DEPTH + b"\x00"


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    requests = 0
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": f"zoo-deep-{DEPTH}"})
            elif kind == "request":
                requests += 1
                if requests > 2:
                    os.write(1, deep_action(msg["id"]))
                    time.sleep(600)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
