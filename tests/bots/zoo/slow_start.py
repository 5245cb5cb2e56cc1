"""Zoo: sleeps longer than the handshake time (the test uses 3 s) before it
answers hello, then plays legally."""

import time

from rawbot import serve

SLEEP = 5.0


if __name__ == "__main__":
    serve("zoo-slow-start", hello=lambda _: time.sleep(SLEEP))
