"""Zoo: sleeps longer than the handshake time (the test uses 3 s) before it
answers hello, then plays legally."""

import os
import time

import msgpack

SLEEP = 5.0


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                time.sleep(SLEEP)
                send({"type": "hello", "name": "zoo-slow-start"})
            elif kind == "request":
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
