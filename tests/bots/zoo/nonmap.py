"""Zoo: plays 2 requests legally, then answers with a msgpack array (not a map)
holding what an action would, and waits."""

import os
import time

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
                send({"type": "hello", "name": "zoo-nonmap"})
            elif kind == "request":
                requests += 1
                if requests > 2:
                    send(["action", msg["id"], 0])
                    time.sleep(600)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
