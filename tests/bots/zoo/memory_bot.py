"""Zoo (issue 7 part 2): a bot with a memory.  At its first decision of every
round it notes the hand it was dealt (round number + sorted hand: the same
deal seed gives the same hands in every seat rotation) in memory and in a file
in every writable place it can reach ($HOME, $TMPDIR, /tmp, /dev/shm), shared
by every copy of this bot (``zoo-memory-TAG.txt``, argument ``tag=TAG``).  If a
hand it is dealt was seen before, by itself or any other copy, it writes
``SEEN DEAL`` to stderr.  It plays legally."""

import os
import sys

from rawbot import Message, log, play, serve

TAG = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("tag=")), "shared")
FILE = f"zoo-memory-{TAG}.txt"
seen: set[str] = set()
state: dict = {}


def places() -> list[str]:
    dirs = [os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/tmp", "/dev/shm"]
    return [os.path.join(d, FILE) for d in dict.fromkeys(dirs) if d]


def remembered() -> set[str]:
    keys = set(seen)
    for path in places():
        try:
            with open(path) as f:
                keys.update(line.strip() for line in f)
        except OSError:
            pass
    return keys


def note(key: str) -> None:
    seen.add(key)
    for path in places():
        try:
            with open(path, "a") as f:
                f.write(key + "\n")
        except OSError:
            pass


def notice(obs: dict) -> None:
    round_id = (state.get("game"), obs.get("round"))
    if round_id == state.get("noted"):
        return
    state["noted"] = round_id
    hand = obs.get("hand") or []
    if len(hand) < 5:
        return  # not the dealt hand any more (should not happen at a first decision)
    key = f"round {obs.get('round')}: {' '.join(sorted(hand))}"
    if key in remembered():
        log(f"zoo memory_bot: SEEN DEAL {key} (game {state.get('game')})")
    note(key)


def on_request(request: Message) -> None:
    notice(request.get("observation", {}))
    play(request)


def game_start(msg: Message) -> None:
    state["game"] = msg.get("game_number")


def match_end(msg: Message) -> None:
    log(f"zoo memory_bot: noted {len(seen)} deals")


if __name__ == "__main__":
    serve("zoo-memory", on_request, game_start=game_start, match_end=match_end)
