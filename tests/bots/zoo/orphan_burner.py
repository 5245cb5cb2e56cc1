"""Zoo: at each of its first ``times=N`` requests (default 2), leaves an orphan
(double fork, re-parented inside the sandbox) that burns ``burn=SECONDS`` of
CPU, sleeps ``wait=SECONDS`` itself (using no CPU), then plays legally; later
requests it plays at once.  Its clock must be charged for the orphans."""

import os
import sys
import time

from rawbot import Message, log, play, serve

ARGS = dict(word.split("=", 1) for word in sys.argv[1:] if "=" in word)
BURN, WAIT = float(ARGS.get("burn", "1")), float(ARGS.get("wait", "1"))
TIMES = int(ARGS.get("times", "2"))
SEEN = [0]


def burn_in_an_orphan() -> None:
    if os.fork() == 0:
        if os.fork() == 0:
            end = time.process_time() + BURN
            while time.process_time() < end:
                pass
            os._exit(0)
        os._exit(0)
    os.wait()


def handle(request: Message) -> None:
    SEEN[0] += 1
    if SEEN[0] > TIMES:
        play(request)
        return
    burn_in_an_orphan()
    log("zoo orphan_burner: left a burning orphan")
    time.sleep(WAIT)
    play(request)


if __name__ == "__main__":
    serve("zoo-orphan-burner", handle)
