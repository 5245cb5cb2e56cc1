"""Plays the first legal action and logs what it was dealt: ``deal_log_bot.py``.

For every game it writes one line to stderr, ``DEAL {json}``: its process (a
random id drawn at start, since a sandbox's PID namespace may give every bot
the same pid; and its pid), the ``games`` of the ``match_start`` it was sent,
the game number, and its hand at its first request of the game (in
furious-five that is the hand it was dealt: only its own turns change it),
which identifies the deal and the seat.  The arena stores each game's stderr
tail with the game, where tests read it to check that no bot process sees two
games of one deal; stderr reaches the test through any sandbox, where a file
or an environment variable might not.  Raw msgpack, so that it depends on
nothing but msgpack.
"""

import json
import os
import sys
import uuid

import msgpack

PROCESS = uuid.uuid4().hex


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def log(entry: dict) -> None:
    sys.stderr.write("DEAL " + json.dumps(entry) + "\n")
    sys.stderr.flush()


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    games = None
    game_number = None
    logged = True
    while True:
        data = os.read(0, 65536)
        if not data:
            return
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "deal-log", "version": "0"})
            elif kind == "match_start":
                games = msg["games"]
            elif kind == "game_start":
                game_number, logged = msg["game_number"], False
            elif kind == "request":
                if not logged:
                    log({"process": PROCESS, "pid": os.getpid(), "games": games,
                         "game_number": game_number,
                         "hand": sorted(msg["observation"]["hand"])})
                    logged = True
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
