"""What the bubblewrap sandbox costs: bot start-up and round-trip latency,
with it (``--sandbox bwrap``) and without it (``--sandbox none``, the baseline),
measured interleaved in one run, pinned to one CPU.

    python bench/sandbox_cost.py [--starts 20] [--trips 2000] [--cpu 0]

Start-up: from spawning the bot to its ``hello`` reply (the SDK random bot).
Round trip: ``BotClient.request`` to a running bot, in alternating batches.
"""

from __future__ import annotations

import argparse
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
    kinds = {"none": resolve("none"), "bwrap": resolve("bwrap")}
    out: dict[str, dict[str, list[float]]] = {k: {"start": [], "trip": []} for k in kinds}
    async with trio.open_nursery() as nursery:
        for _ in range(starts):
            for name, sandbox in kinds.items():
                bot, _client, seconds = await start(sandbox, nursery)
                out[name]["start"].append(seconds)
                await bot.aclose()
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
    none, bwrap = out["none"], out["bwrap"]
    print(f"pinned to CPU {args.cpu}; {args.starts} starts and {args.trips} round trips each, "
          f"interleaved")
    print(f"{'':28}{'none (baseline)':>16}{'bwrap':>12}{'ratio':>8}")
    for label, key, q, unit, scale in (("start-up to hello, median", "start", 0.5, "ms", 1e3),
                                       ("round trip p50", "trip", 0.5, "us", 1e6),
                                       ("round trip p99", "trip", 0.99, "us", 1e6)):
        a, b = p(none[key], q), p(bwrap[key], q)
        print(f"{label + f' ({unit})':28}{a * scale:>16.1f}{b * scale:>12.1f}{b / a:>8.2f}x")
    mean_none = statistics.mean(none["trip"]) * 1e6
    mean_bwrap = statistics.mean(bwrap["trip"]) * 1e6
    print(f"{'round trip mean (us)':28}{mean_none:>16.1f}{mean_bwrap:>12.1f}"
          f"{mean_bwrap / mean_none:>8.2f}x")


if __name__ == "__main__":
    main()
