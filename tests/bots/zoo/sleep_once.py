"""Zoo: sleeps past move + bank time once (its first request of game 0), then
plays legally.  The arena kills it for the timeout; the restarted process sees
a later game number and never sleeps again."""

import time

from rawbot import Message, log, play, serve

SLEEP = 4.0  # the test's move + bank is 1.5 s
game: dict = {"number": None, "slept": False}


def game_start(msg: Message) -> None:
    game["number"] = msg.get("game_number")


def on_request(request: Message) -> None:
    if game["number"] == 0 and not game["slept"]:
        game["slept"] = True
        log("zoo sleep_once: sleeping")
        time.sleep(SLEEP)
    play(request)


if __name__ == "__main__":
    serve("zoo-sleep-once", on_request, game_start=game_start)
