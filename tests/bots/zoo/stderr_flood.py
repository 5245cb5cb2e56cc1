"""Zoo: plays every request legally, but writes 64 KiB of log to stderr
before each answer (megabytes per game).  Never a fault."""

import os
import sys

import msgpack

LINE = b"zoo stderr_flood: " + b"blah " * 200 + b"\n"
BLOCK = LINE * ((64 << 10) // len(LINE))


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def log_block() -> None:
    data = BLOCK
    while data:
        data = data[os.write(2, data):]


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-stderr-flood"})
            elif kind == "request":
                log_block()
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                sys.stderr.write("zoo stderr_flood: bye\n")
                return


if __name__ == "__main__":
    main()
