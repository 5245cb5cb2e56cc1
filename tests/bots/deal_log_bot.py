"""Plays the first legal action and logs what it was dealt: ``deal_log_bot.py``.

For every game it writes one line to stderr, ``DEAL {json}``: its process (a
random id drawn at start, since a sandbox's PID namespace may give every bot
the same pid; and its pid), the ``games`` of the ``match_start`` it was sent,
the game number, and its hand at its first request of the game (in
furious-five that is the hand it was dealt: only its own turns change it),
which identifies the deal and the seat.  The arena stores each game's stderr
tail with the game, where tests read it to check that no bot process sees two
games of one deal; stderr reaches the test through any sandbox, where a file
or an environment variable might not.  Raw msgpack (``zoo/rawbot.py``), so
that it depends on nothing but msgpack.
"""

import json
import os
import sys
import uuid

sys.path.append(os.path.join(os.path.dirname(__file__), "zoo"))  # for rawbot.py
from rawbot import Message, play, serve

PROCESS = uuid.uuid4().hex
#: What the bot knows of the match: ``games`` and ``game_number`` so far, and
#: whether it has logged the current game's deal yet.
seen: dict = {"games": None, "game_number": None, "logged": True}


def log(entry: dict) -> None:
    sys.stderr.write("DEAL " + json.dumps(entry) + "\n")
    sys.stderr.flush()


def match_start(msg: Message) -> None:
    seen["games"] = msg["games"]


def game_start(msg: Message) -> None:
    seen["game_number"], seen["logged"] = msg["game_number"], False


def on_request(request: Message) -> None:
    if not seen["logged"]:
        log({"process": PROCESS, "pid": os.getpid(), "games": seen["games"],
             "game_number": seen["game_number"],
             "hand": sorted(request["observation"]["hand"])})
        seen["logged"] = True
    play(request)


if __name__ == "__main__":
    serve("deal-log", on_request, version="0", match_start=match_start, game_start=game_start)
