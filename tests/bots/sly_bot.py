"""A bot that bends the protocol without breaking the game: ``sly_bot.py MODE [N]``.

early N: before each request arrives, writes N actions guessing the ids 1..N
    (index 1), then answers the request itself correctly (index 0).
wrong_type: answers each request with its id as a float, a string and a
    boolean (index 1), then correctly (index 0).
wrong_type_only: answers with the id as a float only.
hello_keys: a hello with unknown keys and a non-string name, then plays well.
hello_junk: a hello followed by bytes that are not msgpack, then plays well.
"""

import os
import sys

import msgpack

MODE = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 0


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def guess() -> None:
    if MODE == "early":
        os.write(1, b"".join(msgpack.packb({"type": "action", "id": i, "index": 1})
                             for i in range(1, N + 1)))


def hello() -> None:
    if MODE == "hello_keys":
        send({"type": "hello", "name": 12345, "version": "1", "extra": {"nested": [1, 2]},
              "author": None, "x" * 40: "y" * 400})
    else:
        send({"type": "hello", "name": f"sly-{MODE}"})
    if MODE == "hello_junk":
        os.write(1, b"\xc1 this is not msgpack")
    guess()


def answer(request: dict) -> None:
    rid = request["id"]
    if MODE.startswith("wrong_type"):
        send({"type": "action", "id": float(rid), "index": 1})
        if MODE == "wrong_type_only":
            return
        send({"type": "action", "id": str(rid), "index": 1})
        send({"type": "action", "id": True, "index": 1})
    send({"type": "action", "id": rid, "index": 0})
    guess()


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                hello()
            elif kind == "request":
                answer(msg)
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
