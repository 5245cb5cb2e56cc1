"""Zoo: plays 2 requests legally, then answers with a msgpack array (not a map)
holding what an action would, and waits."""

import time

from rawbot import Message, after, send, serve


def nonmap(request: Message) -> None:
    send(["action", request["id"], 0])
    time.sleep(600)


if __name__ == "__main__":
    serve("zoo-nonmap", after(2, nonmap))
