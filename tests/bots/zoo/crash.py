"""Zoo: plays 2 requests legally, then exits with status 3 mid-game."""

import os

from rawbot import Message, after, log, serve


def crash(request: Message) -> None:
    log("zoo crash: about to crash")
    os._exit(3)


if __name__ == "__main__":
    serve("zoo-crash", after(2, crash))
