"""Zoo: plays 2 requests legally, then closes its stdout and sleeps (a crash, as
docs/protocol.md says: not a timeout, though the process lives on)."""

import os
import time

from rawbot import Message, after, log, serve


def close_stdout(request: Message) -> None:
    log("zoo close_stdout: closing stdout")
    os.close(1)
    time.sleep(60)


if __name__ == "__main__":
    serve("zoo-close-stdout", after(2, close_stdout))
