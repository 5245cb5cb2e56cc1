"""Zoo: answers every request twice, with the same id (the second answer is
stale by the time the arena reads it).  The first answer is always legal."""

import os

import msgpack


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-reply-twice"})
            elif kind == "request":
                send({"type": "action", "id": msg["id"], "index": 0})
                send({"type": "action", "id": msg["id"], "index": len(msg["legal"]) - 1})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
