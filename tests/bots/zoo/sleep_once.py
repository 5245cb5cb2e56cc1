"""Zoo: sleeps past move + bank time once (its first request of game 0), then
plays legally.  The arena kills it for the timeout; the restarted process sees
a later game number and never sleeps again."""

import os
import sys
import time

import msgpack

SLEEP = 4.0  # the test's move + bank is 1.5 s


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    game_number = None
    slept = False
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-sleep-once"})
            elif kind == "game_start":
                game_number = msg.get("game_number")
            elif kind == "request":
                if game_number == 0 and not slept:
                    slept = True
                    sys.stderr.write("zoo sleep_once: sleeping\n")
                    sys.stderr.flush()
                    time.sleep(SLEEP)
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
