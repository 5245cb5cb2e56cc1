"""Zoo: starts a child that keeps the bot's stdout (and stderr) open and
sleeps, then the parent exits.

MODE: ``midgame`` (the parent exits at its 3rd request: a crash, even though
the pipe stays open) or ``atend`` (the parent exits normally at match_end).
"""

import os
import sys
import time

from rawbot import after, log, play, serve

MODE = sys.argv[1]


def leave_child_and_exit(status: int) -> None:
    if os.fork() == 0:
        os.close(0)
        time.sleep(120)
        os._exit(0)
    log(f"zoo pipe_holder: parent exits ({MODE}), child holds stdout")
    os._exit(status)


if __name__ == "__main__":
    serve(f"zoo-pipe-holder-{MODE}",
          after(2, lambda _: leave_child_and_exit(0)) if MODE == "midgame" else play,
          match_end=lambda _: leave_child_and_exit(0))
    leave_child_and_exit(0)
