"""What the bubblewrap sandbox costs: bot start-up, closing and round-trip
latency, with it (``--sandbox bwrap``, each bot in a cgroup of its own, and
without the cgroup) and without it (``--sandbox none``, the baseline),
measured interleaved in one run, pinned to one CPU.

    python bench/sandbox_cost.py [--starts 20] [--trips 2000] [--cpu 0]

Start-up: from spawning the bot to its ``hello`` reply (the SDK random bot).
Close: ``BotProcess.aclose`` (kill, reap, remove the cgroup and directory).
Round trip: ``BotClient.request`` to a running bot, in alternating batches.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time

import trio

from arena.runner.client import BotClient, Clock, TimeControl
from arena.runner.process import BotProcess, BotSpec, start_bot_process
from arena.runner.sandbox import Sandbox, resolve

SPEC = BotSpec("random", f"{sys.executable} -m sample_bots.random_bot")
OBSERVATION = {"seat": 0, "phase": "drop", "hand": ["2c", "5d", "9h", "Ks", "Qd"]}
LEGAL = ["drop 2c", "drop 5d", "drop 9h", "drop Ks", "drop Qd"]
BATCH = 100


async def start(sandbox: Sandbox, nursery: trio.Nursery) -> tuple[BotProcess, BotClient, float]:
    began = time.perf_counter()
    bot = await start_bot_process(SPEC, nursery, sandbox)
    client = BotClient(bot)
    await client.handshake(30)
    return bot, client, time.perf_counter() - began


async def measure(starts: int, trips: int) -> dict[str, dict[str, list[float]]]:
    bwrap = resolve("bwrap")
    kinds = {"none": dataclasses.replace(resolve("none"), cgroup=False),
             "bwrap": dataclasses.replace(bwrap, cgroup=False), "bwrap+cgroup": bwrap}
    out: dict[str, dict[str, list[float]]] = {
        k: {"start": [], "close": [], "trip": []} for k in kinds}
    async with trio.open_nursery() as nursery:
        for _ in range(starts):
            for name, sandbox in kinds.items():
                bot, _client, seconds = await start(sandbox, nursery)
                out[name]["start"].append(seconds)
                began = time.perf_counter()
                await bot.aclose()
                out[name]["close"].append(time.perf_counter() - began)
        running = {name: await start(sandbox, nursery) for name, sandbox in kinds.items()}
        clock = Clock(TimeControl(move=10, bank=10))
        for _ in range(max(1, trips // BATCH)):
            for name, (_bot, client, _s) in running.items():
                for _ in range(BATCH):
                    began = time.perf_counter()
                    await client.request(OBSERVATION, LEGAL, [], clock)
                    out[name]["trip"].append(time.perf_counter() - began)
        for bot, _client, _s in running.values():
            await bot.aclose()
    return out


def p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--trips", type=int, default=2000)
    parser.add_argument("--cpu", type=int, default=0, help="the CPU to pin to")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    out = trio.run(measure, args.starts, args.trips)
    print(f"pinned to CPU {args.cpu}; {args.starts} starts and {args.trips} round trips each, "
          f"interleaved; ratios against none (the baseline), and cgroup/no cgroup")
    names = list(out)
    print(f"{'':32}" + "".join(f"{n:>14}" for n in names) + f"{'cg/bwrap':>10}")
    rows = (("start-up to hello, median", "start", 0.5, "ms", 1e3),
            ("close, median", "close", 0.5, "ms", 1e3),
            ("round trip p50", "trip", 0.5, "us", 1e6),
            ("round trip p99", "trip", 0.99, "us", 1e6))
    for label, key, q, unit, scale in rows:
        values = [p(out[n][key], q) for n in names]
        print(f"{label + f' ({unit})':32}" + "".join(
            f"{v * scale:>8.1f} {v / values[0]:>4.2f}x" for v in values)
            + f"{values[2] / values[1]:>9.2f}x")
    means = [statistics.mean(out[n]["trip"]) for n in names]
    print(f"{'round trip mean (us)':32}" + "".join(
        f"{m * 1e6:>8.1f} {m / means[0]:>4.2f}x" for m in means) + f"{means[2] / means[1]:>9.2f}x")

if __name__ == "__main__":
    main()
