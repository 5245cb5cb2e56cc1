"""Zoo: plays 2 requests legally, then answers the 3rd request with the id of
the 1st (a stale id), then nothing."""

import time

from rawbot import Message, action, play, send, serve

ids: list[int] = []


def on_request(request: Message) -> None:
    ids.append(request["id"])
    if len(ids) > 2:
        send(action(ids[0]))
        time.sleep(600)
    play(request)


if __name__ == "__main__":
    serve("zoo-stale-id", on_request)
