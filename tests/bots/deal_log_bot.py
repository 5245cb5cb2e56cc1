"""Plays the first legal action and logs what it was dealt: ``deal_log_bot.py``.

For every game it appends one JSON line to the file named by DEAL_LOG: its pid,
the ``games`` of the ``match_start`` it was sent, and its hand at its first
request of the game (in furious-five that is the hand it was dealt: only its
own turns change it), which identifies the deal and the seat.  Tests use it to
check that no bot process sees two games of one deal.  Raw msgpack, so that it
depends on nothing but msgpack.
"""

import json
import os

import msgpack


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def log(entry: dict) -> None:
    with open(os.environ["DEAL_LOG"], "a") as f:
        f.write(json.dumps(entry) + "\n")


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
                    log({"pid": os.getpid(), "games": games, "game_number": game_number,
                         "hand": sorted(msg["observation"]["hand"])})
                    logged = True
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
