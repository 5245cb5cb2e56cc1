"""Zoo: plays 2 requests legally, then answers the 3rd request with the id of
the 1st (a stale id), then nothing."""

import os
import time

import msgpack


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    ids: list[int] = []
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-stale-id"})
            elif kind == "request":
                ids.append(msg["id"])
                if len(ids) > 2:
                    send({"type": "action", "id": ids[0], "index": 0})
                    time.sleep(600)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
