"""A bot that floods its stdout with unsolicited messages: ``flood_bot.py MODE``.

From the handshake on, a thread writes tiny ``{"type": "spam"}`` messages
without pause (in writes of at most PIPE_BUF bytes, so they never interleave
with a reply).  MODE ``answer``: the main thread still answers every request
correctly; ``silent``: it never answers.  MODE ``heavy`` floods nothing but
sends, before each reply, 16 unsolicited messages of about 60 KiB each (as
many messages as the arena tolerates, each nearly as large as a message may
be).  A well-behaved arena reads its stdout only while it waits for a reply,
so between requests the writer blocks on the full pipe.
"""

import os
import sys
import threading

import msgpack

sys.path.append(os.path.join(os.path.dirname(__file__), "zoo"))  # for rawbot.py
from rawbot import Message, hello, play, serve

MODE = sys.argv[1]
MAX_IGNORED = 16
BIG = msgpack.packb({"type": "spam", **{f"k{i}": list(range(100)) * 40 for i in range(15)}})
BATCH = msgpack.packb({"type": "spam"}) * (4096 // len(msgpack.packb({"type": "spam"})))


def flood() -> None:
    while True:
        os.write(1, BATCH)


def on_hello(msg: Message) -> None:
    hello(f"flood-{MODE}")
    if MODE != "heavy":
        threading.Thread(target=flood, daemon=True).start()


def on_request(request: Message) -> None:
    if MODE == "heavy":
        os.write(1, BIG * MAX_IGNORED)
    if MODE in ("answer", "heavy"):
        play(request)


if __name__ == "__main__":
    serve(None, on_request, hello=on_hello, match_end=lambda _: os._exit(0))
