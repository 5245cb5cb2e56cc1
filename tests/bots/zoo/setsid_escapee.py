"""Zoo: at its first request starts a child that calls setsid() (leaving the
bot's process group), points its stdio at /dev/null and sleeps for two
minutes; the bot itself plays on legally and exits at match_end."""

import os
import time

from rawbot import also_at, log, serve


def escape() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:  # double fork: not even a session leader
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            time.sleep(120)
        os._exit(0)
    log("zoo setsid_escapee: escapee started")


if __name__ == "__main__":
    serve("zoo-setsid-escapee", also_at({1}, lambda _: escape()))
