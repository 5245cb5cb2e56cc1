"""Zoo: plays 2 requests legally, then answers with bytes that are not msgpack
(0xc1 is never used by msgpack) and waits."""

import os
import time

from rawbot import Message, after, serve


def garbage(request: Message) -> None:
    os.write(1, b"\xc1\xc1\xc1 this is not msgpack \x00\xff")
    time.sleep(600)


if __name__ == "__main__":
    serve("zoo-garbage", after(2, garbage))
