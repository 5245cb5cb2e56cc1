"""What the Python SDK costs a bot: CPU per move and start-up, against a minimal
msgpack bot, measured interleaved in one run, pinned to one CPU.

    python bench/sdk_cost.py [--starts 20] [--batches 20] [--batch 500] [--cpu N]
                             [--bot COMMAND ...]

Bots: the baseline :data:`MINIMAL_BOT` (reads with ``os.read`` into a
``msgpack.Unpacker``, answers index 0); ``python -m sample_bots.random_bot``
(the SDK through the sample bots' package, as the arena runs it);
:data:`SDK_FIRST_LEGAL` (the SDK answering index 0: the SDK's own cost);
``--bot`` adds any command line (repeat it for more).

Moves: requests taken from random playouts of every game (their observation,
legal actions and new events, as the referee sends them) are written to each
bot over plain pipes, one round trip at a time, in batches taking turns; the
bot's CPU per move is read from ``/proc/PID/schedstat`` (nanoseconds; the
10 ms ticks of ``/proc/PID/stat`` where that is missing) before and after
each batch, so start-up never counts.  Start-up: wall time from spawning the
process to reading its ``hello`` reply, and the CPU it used by then.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import statistics
import subprocess
import sys
import time
from typing import Any

import msgpack

from arena.games import game_class, game_names, make_game

MINIMAL_BOT = r"""
import os, msgpack
unpacker = msgpack.Unpacker(raw=False)
while data := os.read(0, 65536):
    unpacker.feed(data)
    for m in unpacker:
        if m["type"] == "request":
            os.write(1, msgpack.packb({"type": "action", "id": m["id"], "index": 0}))
        elif m["type"] == "hello":
            os.write(1, msgpack.packb({"type": "hello", "name": "minimal", "version": "1",
                                       "author": "", "protocol": 1}))
"""
#: The SDK's own cost: a bot that answers index 0 like the minimal bot.
SDK_FIRST_LEGAL = "from protocol import run; run(lambda observation, legal: 0, name='first')"
HELLO = msgpack.packb({"type": "hello", "protocol": 1})
TIME = {"move_ms": 1000, "bank_ms": 10000, "clock": "wall"}
_TICKS = os.sysconf("SC_CLK_TCK")


def requests(per_game: int, seed: int = 1) -> list[tuple[int, bytes]]:
    """(id, packed request) from random playouts: ``per_game`` of every game."""
    rng = random.Random(seed)
    out = []
    for name in game_names():
        players = max(2, game_class(name).min_players)
        game = make_game(name, players)
        taken = 0
        for deal in range(10**6):
            state = game.new_state(deal)
            seen = [0] * players
            while not state.is_terminal() and taken < per_game:
                decisions = {}
                for seat in state.deciding_seats():
                    legal = state.legal_actions(seat)
                    events = [e.to_dict() for e in state.events[seen[seat]:]
                              if e.visible_to(seat)]
                    seen[seat] = len(state.events)
                    request_id = rng.randrange(1, 2**53)
                    out.append((request_id, msgpack.packb({
                        "type": "request", "id": request_id,
                        "observation": state.observation(seat), "legal": legal,
                        "events": events, "time": TIME})))
                    decisions[seat] = rng.choice(legal)
                    taken += 1
                state.apply_actions(decisions)
            if taken >= per_game:
                break
    return out


def cpu_seconds(pid: int) -> float:
    """CPU time of a single-threaded process so far."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as file:
            return int(file.read().split()[0]) / 1e9
    except OSError:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read()
        fields = data[data.rfind(b")") + 2 :].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS


class Bot:
    """A bot process on plain blocking pipes."""

    def __init__(self, argv: list[str]) -> None:
        self.began = time.perf_counter()
        self.popen = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.to_bot, self.from_bot = self.popen.stdin.fileno(), self.popen.stdout.fileno()
        self.unpacker = msgpack.Unpacker(raw=False)

    def ask(self, data: bytes) -> dict[str, Any]:
        os.write(self.to_bot, data)
        while True:
            for message in self.unpacker:
                return message
            chunk = os.read(self.from_bot, 65536)
            if not chunk:
                raise RuntimeError(f"bot exited with {self.popen.wait()}")
            self.unpacker.feed(chunk)

    def hello(self) -> tuple[float, float]:
        """Handshake; the wall seconds since the spawn and the bot's CPU seconds."""
        reply = self.ask(HELLO)
        wall = time.perf_counter() - self.began
        assert reply["type"] == "hello", reply
        return wall, cpu_seconds(self.popen.pid)

    def moves(self, batch: list[tuple[int, bytes]]) -> float:
        """Play the batch; the bot's CPU seconds per move."""
        before = cpu_seconds(self.popen.pid)
        for request_id, data in batch:
            reply = self.ask(data)
            assert reply["type"] == "action" and reply["id"] == request_id, reply
        return (cpu_seconds(self.popen.pid) - before) / len(batch)

    def close(self) -> None:
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.popen.stdin.close()
        self.popen.wait()
        self.popen.stdout.close()


#: Issue 8 part 5: the SDK bot's CPU per move and its start-up at most this
#: many times the minimal bot's.
GOAL = 1.3


def table(title: str, unit: str, scale: float, figures: dict[str, list[float]]) -> None:
    """One row per bot: median and mean, their ratios to the minimal bot's,
    and the median over rounds of the ratio within each round (each round
    runs every bot once, in a rotating order)."""
    base = figures["minimal"]
    print(f"{title:28}{'median':>10}{'ratio':>7}{'mean':>10}{'ratio':>7}{'per round':>11}")
    for kind, values in figures.items():
        median, mean = statistics.median(values), statistics.mean(values)
        print(f"{kind:28}{median * scale:>8.1f}{unit}{median / statistics.median(base):>7.2f}"
              f"{mean * scale:>8.1f}{unit}{mean / statistics.mean(base):>7.2f}"
              f"{round_ratio(figures, kind):>10.2f}x")


def round_ratio(figures: dict[str, list[float]], kind: str) -> float:
    """The median over rounds of ``kind``'s figure over the minimal bot's."""
    return statistics.median(a / b for a, b in zip(figures[kind], figures["minimal"],
                                                     strict=True))


def verdict(what: str, figures: dict[str, list[float]]) -> None:
    worst = max(round_ratio(figures, kind) for kind in figures if kind.startswith("SDK"))
    print(f"{what}: the SDK bots at most {worst:.2f}x the minimal bot per round "
          f"(goal: at most {GOAL:.1f}x: {'met' if worst <= GOAL else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20, help="start-ups of each bot")
    parser.add_argument("--batches", type=int, default=20, help="move batches of each bot")
    parser.add_argument("--batch", type=int, default=500, help="moves per batch")
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    parser.add_argument("--bot", action="append", default=[],
                        help="another subject: a command line (repeat)")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})  # the bots inherit it
    bots = {"minimal": [sys.executable, "-c", MINIMAL_BOT],
            "SDK random_bot": [sys.executable, "-m", "sample_bots.random_bot"],
            "SDK first legal": [sys.executable, "-c", SDK_FIRST_LEGAL]}
    for command in args.bot:
        bots[command] = shlex.split(command)
    corpus = requests(per_game=max(1, args.batch // len(game_names())))
    batch = (corpus * (args.batch // len(corpus) + 1))[: args.batch]
    print(f"pinned to CPU {args.cpu}; figures of each bot, ratio to the minimal bot's")

    wall: dict[str, list[float]] = {kind: [] for kind in bots}
    cpu: dict[str, list[float]] = {kind: [] for kind in bots}
    for round_ in range(args.starts):
        for kind in rotated(list(bots), round_):
            bot = Bot(bots[kind])
            seconds, used = bot.hello()
            wall[kind].append(seconds)
            cpu[kind].append(used)
            bot.close()

    moves: dict[str, list[float]] = {kind: [] for kind in bots}
    running = {kind: Bot(argv) for kind, argv in bots.items()}
    for bot in running.values():
        bot.hello()
        bot.moves(batch)  # warm up
    for round_ in range(args.batches):
        for kind in rotated(list(bots), round_):
            moves[kind].append(running[kind].moves(batch))
    for bot in running.values():
        bot.close()

    size = statistics.mean(len(data) for _, data in corpus)
    print(f"\nCPU per move: {args.batches} batches of {args.batch} moves per bot, "
          f"requests of {size:.0f} bytes on average from every game")
    table("CPU per move", " us", 1e6, moves)
    verdict("CPU per move", moves)
    print(f"\nstart-up, spawn to hello reply: {args.starts} per bot")
    table("wall time", " ms", 1e3, wall)
    table("CPU time", " ms", 1e3, cpu)
    verdict("start-up wall time", wall)


def rotated(kinds: list[str], round_: int) -> list[str]:
    """Each round in another order, so no bot always runs right after another."""
    shift = round_ % len(kinds)
    return kinds[shift:] + kinds[:shift]


if __name__ == "__main__":
    main()
