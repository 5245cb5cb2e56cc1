"""A bot that bends the protocol without breaking the game: ``sly_bot.py MODE [N]``.

early N: before each request arrives, writes N actions guessing the ids 1..N
    (index 1), then answers the request itself correctly (index 0).
wrong_type: answers each request with its id as a float, a string and a
    boolean (index 1), then correctly (index 0).
wrong_type_only: answers with the id as a float only.
hello_keys: a hello with unknown keys and a non-string name, then plays well.
hello_junk: a hello followed by bytes that are not msgpack, then plays well.
"""

import os
import sys

import msgpack

sys.path.append(os.path.join(os.path.dirname(__file__), "zoo"))  # for rawbot.py
from rawbot import Message, action, hello, play, send, serve

MODE = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 0


def guess() -> None:
    if MODE == "early":
        os.write(1, b"".join(msgpack.packb(action(i, 1)) for i in range(1, N + 1)))


def on_hello(msg: Message) -> None:
    if MODE == "hello_keys":
        hello(12345, version="1", extra={"nested": [1, 2]}, author=None, **{"x" * 40: "y" * 400})
    else:
        hello(f"sly-{MODE}")
    if MODE == "hello_junk":
        os.write(1, b"\xc1 this is not msgpack")
    guess()


def answer(request: Message) -> None:
    rid = request["id"]
    if MODE.startswith("wrong_type"):
        send(action(float(rid), 1))
        if MODE == "wrong_type_only":
            return
        send(action(str(rid), 1))
        send(action(True, 1))
    play(request)
    guess()


if __name__ == "__main__":
    serve(None, answer, hello=on_hello)
