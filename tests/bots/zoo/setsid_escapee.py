"""Zoo: at its first request starts a child that calls setsid() (leaving the
bot's process group), points its stdio at /dev/null and sleeps for two
minutes; the bot itself plays on legally and exits at match_end."""

import os
import sys
import time

import msgpack


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def escape() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:  # double fork: not even a session leader
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            time.sleep(120)
        os._exit(0)
    sys.stderr.write("zoo setsid_escapee: escapee started\n")
    sys.stderr.flush()


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    escaped = False
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-setsid-escapee"})
            elif kind == "request":
                if not escaped:
                    escaped = True
                    escape()
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
