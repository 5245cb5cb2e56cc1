"""Zoo: plays 2 requests legally, then answers with an illegal index.

VARIANT: ``out_of_range`` (len(legal)), ``negative`` (-1), ``float`` (0.0),
``string`` ("0"), ``bool`` (False).
"""

import os
import sys
import time

import msgpack

VARIANT = sys.argv[1]


def bad_index(legal: list) -> object:
    return {"out_of_range": len(legal), "negative": -1, "float": 0.0, "string": "0",
            "bool": False}[VARIANT]


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
                send({"type": "hello", "name": f"zoo-illegal-{VARIANT}"})
            elif kind == "request":
                requests += 1
                if requests > 2:
                    send({"type": "action", "id": msg["id"], "index": bad_index(msg["legal"])})
                    time.sleep(600)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
