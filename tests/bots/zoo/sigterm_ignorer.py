"""Zoo: ignores SIGTERM, SIGINT and SIGHUP, plays legally, and at match_end
(or end of input) does not exit but sleeps."""

import signal
import time

from rawbot import Message, log, serve

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)


def stay(match_end: Message) -> None:
    log("zoo sigterm_ignorer: match over, staying")
    time.sleep(120)


if __name__ == "__main__":
    serve("zoo-sigterm-ignorer", match_end=stay)
    time.sleep(120)
