"""Zoo: plays 2 requests legally, then writes the first half of a valid
action and stalls."""

import os
import time

import msgpack
from rawbot import Message, action, after, serve


def half(request: Message) -> None:
    whole = msgpack.packb(action(request["id"]))
    os.write(1, whole[: len(whole) // 2])
    time.sleep(600)


if __name__ == "__main__":
    serve("zoo-half-message", after(2, half))
