"""Arena round-trip latency vs a plain blocking-pipe ping-pong, same run.

    python bench/latency.py [--n 3000]

Arena: BotClient.request() on trio against a real SDK bot subprocess
(msgpack both ways, the SDK's os.read loop).  Baseline: the same bot process
code path replaced by the simplest possible echo over blocking pipes
(``os.write`` / ``os.read`` in both processes, msgpack both ways).  The gap is
the arena's own overhead per decision.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import msgpack
import trio

from arena.client import BotClient, Clock, TimeControl
from arena.process import BotSpec, start_bot_process

OBSERVATION = {"seat": 0, "phase": "drop", "hand": ["2c", "5d", "9h", "Ks", "Qd"],
               "live_drop": [["4s", "5s", "6s"]], "hand_sizes": [5, 4, 5], "chips": [0, 3, -3]}
LEGAL = ["drop 2c", "drop 5d", "drop 9h", "drop Ks", "drop Qd"]

ECHO_CHILD = r"""
import os, msgpack
u = msgpack.Unpacker(raw=False)
while True:
    data = os.read(0, 65536)
    if not data:
        break
    u.feed(data)
    for m in u:
        os.write(1, msgpack.packb({"type": "action", "id": m["id"], "index": 0}))
"""


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return (statistics.median(ordered) * 1e6,
            ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e6)


def baseline(n: int) -> list[float]:
    child = subprocess.Popen([sys.executable, "-c", ECHO_CHILD], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert child.stdin and child.stdout
    fd_in, fd_out = child.stdout.fileno(), child.stdin.fileno()
    unpacker = msgpack.Unpacker(raw=False)
    samples = []
    for i in range(n):
        message = msgpack.packb({"type": "request", "id": i, "observation": OBSERVATION,
                                 "legal": LEGAL, "events": [], "time": {}})
        start = time.perf_counter()
        os.write(fd_out, message)
        reply = None
        while reply is None:
            unpacker.feed(os.read(fd_in, 65536))
            for m in unpacker:
                reply = m
        samples.append(time.perf_counter() - start)
    child.stdin.close()
    child.wait()
    return samples


async def arena_round_trips(n: int) -> list[float]:
    spec = BotSpec("random", f"{sys.executable} -m sample_bots.random_bot")
    samples = []
    async with trio.open_nursery() as nursery:
        bot = await start_bot_process(spec, nursery)
        try:
            client = BotClient(bot)
            await client.handshake(10)
            clock = Clock(TimeControl(move=10, bank=10))
            for _ in range(n):
                start = time.perf_counter()
                await client.request(OBSERVATION, LEGAL, [], clock)
                samples.append(time.perf_counter() - start)
        finally:
            await bot.aclose()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=3000)
    args = parser.parse_args()
    base = baseline(args.n)
    arena = trio.run(arena_round_trips, args.n)
    b50, b99 = percentiles(base)
    a50, a99 = percentiles(arena)
    print(f"round trips: {args.n} each")
    print(f"{'':24}{'p50 (us)':>10}{'p99 (us)':>10}")
    print(f"{'blocking-pipe baseline':24}{b50:>10.1f}{b99:>10.1f}")
    print(f"{'arena (trio + SDK bot)':24}{a50:>10.1f}{a99:>10.1f}")
    print(f"arena overhead: p50 {a50 - b50:+.1f} us ({a50 / b50:.2f}x), "
          f"p99 {a99 - b99:+.1f} us ({a99 / b99:.2f}x)")


if __name__ == "__main__":
    main()
