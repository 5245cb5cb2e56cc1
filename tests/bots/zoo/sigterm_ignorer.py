"""Zoo: ignores SIGTERM, SIGINT and SIGHUP, plays legally, and at match_end
(or end of input) does not exit but sleeps."""

import os
import signal
import sys
import time

import msgpack

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-sigterm-ignorer"})
            elif kind == "request":
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                sys.stderr.write("zoo sigterm_ignorer: match over, staying\n")
                sys.stderr.flush()
                time.sleep(120)
    time.sleep(120)


if __name__ == "__main__":
    main()
