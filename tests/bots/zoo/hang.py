"""Zoo: plays 2 requests legally, then never answers again (reads nothing more)."""

import time

from rawbot import Message, after, log, serve


def hang(request: Message) -> None:
    log("zoo hang: hanging now")
    time.sleep(600)


if __name__ == "__main__":
    serve("zoo-hang", after(2, hang))
