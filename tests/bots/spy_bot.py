"""Tries to learn hands of its own deal from copies of itself in other games:
``spy_bot.py``, a furious-five bot that plays the first legal action.

The covert channels it tries, as a hostile bot would:

* POSIX byte-range locks on its own program file (read-only, but shared by every
  copy of the bot, in any sandbox, through the kernel): at the first request of
  each game it takes a read lock on the byte at offset ``mask``, its hand as a
  52-bit card mask, and at every request it lists the locks other processes
  hold on the file (``F_GETLK``), each one a hand a live copy holds now;
* a file in ``/tmp`` (``spy-MASK``), and every such file it finds there.

It looks all the time, from its start (a thread, every 10 ms), so that a copy
started ahead of its first game learns what the copies playing meanwhile hold;
at the first request of a game it keeps looking for 0.2 s, so that a copy
playing the same deal at the same time has every chance to show its hand.  It
logs to stderr ``SPY {json}`` at the first request of each game (``hand``: its
own hand) and at each request at which it has seen hands it had not reported
yet (``seen``: card masks; ``seq`` orders a process's lines).  A test reads
these lines from the stored games' stderr tails and checks that no process
ever knew a hand of a deal it was playing.  Raw msgpack
(``zoo/rawbot.py``), so that it depends on nothing but msgpack.
"""

import fcntl
import json
import os
import struct
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.append(os.path.join(os.path.dirname(__file__), "zoo"))  # for rawbot.py
from rawbot import Message, play, serve

RANKS = "A23456789TJQK"
SUITS = "cdhs"
PROCESS = uuid.uuid4().hex
PROGRAM = os.open(__file__, os.O_RDONLY)
TMP = Path("/tmp")
#: struct flock on x86-64 Linux: l_type, l_whence, l_start, l_len, l_pid.
FLOCK = "hhqqi"
state: dict = {"game": None, "mask": None, "seen": set(), "reported": set(), "fresh": False,
               "seq": 0}


def card_mask(hand: list[str]) -> int:
    return sum(1 << (SUITS.index(card[1]) * 13 + RANKS.index(card[0])) for card in hand)


def lock(kind: int, start: int) -> None:
    fcntl.fcntl(PROGRAM, fcntl.F_SETLK, struct.pack(FLOCK, kind, os.SEEK_SET, start, 1, 0))


def held_by_others(low: int, high: int) -> set[int]:
    """Offsets in [low, high) of the locks other processes hold on the program."""
    if low >= high:
        return set()
    query = struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET, low, high - low, 0)
    kind, _, start, length, _ = struct.unpack(FLOCK, fcntl.fcntl(PROGRAM, fcntl.F_GETLK,
                                                                 query))
    if kind == fcntl.F_UNLCK:
        return set()
    return ({start} | held_by_others(low, start)
            | held_by_others(start + max(length, 1), high))


def look() -> set[int]:
    """Hands other processes show now: their locks, and files in /tmp but our own."""
    files = {int(path.name[4:]) for path in TMP.glob("spy-*")} - {state["mask"]}
    return held_by_others(1, 1 << 53) | files


def keep_looking() -> None:
    while True:
        state["seen"] |= look()
        time.sleep(0.01)


def log(entry: dict) -> None:
    state["seq"] += 1
    sys.stderr.write("SPY " + json.dumps({"process": PROCESS, "seq": state["seq"],
                                          "game": state["game"], **entry}) + "\n")
    sys.stderr.flush()


def game_start(msg: Message) -> None:
    state["game"], state["fresh"] = msg["game_number"], True


def report(seen: set[int]) -> None:
    new = seen - state["reported"]
    if new:
        state["reported"] |= new
        log({"hand": state["mask"], "seen": sorted(new)})


def on_request(request: Message) -> None:
    if state["fresh"]:
        state["fresh"] = False
        if state["mask"] is not None:
            lock(fcntl.F_UNLCK, state["mask"])
        state["mask"] = card_mask(request["observation"]["hand"])
        lock(fcntl.F_RDLCK, state["mask"])
        (TMP / f"spy-{state['mask']}").touch()
        log({"hand": state["mask"], "seen": []})
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            state["seen"] |= look()
            time.sleep(0.01)
    report(state["seen"] | look())
    play(request)


if __name__ == "__main__":
    threading.Thread(target=keep_looking, daemon=True).start()
    serve("spy", on_request, version="0", game_start=game_start)
