"""Zoo: at its first request forks children (each sleeps two minutes and
tries to fork once more) until fork is refused, then plays on legally.
Safety cap: 100 forks (then "safety cap" on stderr), so a missing process
limit cannot take a shared machine down."""

import os
import sys
import time

import msgpack

CAP = 100


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def bomb() -> None:
    forks = 0
    while forks < CAP:
        try:
            pid = os.fork()
        except OSError as exc:
            sys.stderr.write(f"zoo fork_bomb: fork refused after {forks} forks: {exc}\n")
            sys.stderr.flush()
            return
        if pid == 0:
            try:
                if os.fork() == 0:
                    time.sleep(120)
                    os._exit(0)
            except OSError:
                pass
            time.sleep(120)
            os._exit(0)
        forks += 1
    sys.stderr.write(f"zoo fork_bomb: safety cap reached: {forks} forks, none refused\n")
    sys.stderr.flush()


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    bombed = False
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-fork-bomb"})
            elif kind == "request":
                if not bombed:
                    bombed = True
                    bomb()
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
