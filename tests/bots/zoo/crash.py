"""Zoo: plays 2 requests legally, then exits with status 3 mid-game."""

import os
import sys

import msgpack


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    requests = 0
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-crash"})
            elif kind == "request":
                requests += 1
                if requests > 2:
                    sys.stderr.write("zoo crash: about to crash\n")
                    sys.stderr.flush()
                    os._exit(3)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
