"""Zoo: plays every request legally, but writes 64 KiB of log to stderr
before each answer (megabytes per game).  Never a fault."""

import os
import sys

from rawbot import Message, play, serve

LINE = b"zoo stderr_flood: " + b"blah " * 200 + b"\n"
BLOCK = LINE * ((64 << 10) // len(LINE))


def log_block() -> None:
    data = BLOCK
    while data:
        data = data[os.write(2, data):]


def on_request(request: Message) -> None:
    log_block()
    play(request)


def match_end(msg: Message) -> None:
    sys.stderr.write("zoo stderr_flood: bye\n")


if __name__ == "__main__":
    serve("zoo-stderr-flood", on_request, match_end=match_end)
