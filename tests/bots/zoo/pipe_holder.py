"""Zoo: starts a child that keeps the bot's stdout (and stderr) open and
sleeps, then the parent exits.

MODE: ``midgame`` (the parent exits at its 3rd request: a crash, even though
the pipe stays open) or ``atend`` (the parent exits normally at match_end).
"""

import os
import sys
import time

import msgpack

MODE = sys.argv[1]


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def leave_child_and_exit(status: int) -> None:
    if os.fork() == 0:
        os.close(0)
        time.sleep(120)
        os._exit(0)
    sys.stderr.write(f"zoo pipe_holder: parent exits ({MODE}), child holds stdout\n")
    sys.stderr.flush()
    os._exit(status)


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    requests = 0
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": f"zoo-pipe-holder-{MODE}"})
            elif kind == "request":
                requests += 1
                if MODE == "midgame" and requests > 2:
                    leave_child_and_exit(0)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                leave_child_and_exit(0)
    leave_child_and_exit(0)


if __name__ == "__main__":
    main()
