"""The arena's round trip against a minimal trio loop on the same bot's pipes.

    python bench/latency.py [--batches 20] [--batch 200] [--cpu N] [--sandbox none]
                            [--breakdown]

One bot process, :data:`sdk_cost.MINIMAL_BOT` (os.read + msgpack.Unpacker,
answers index 0), started by the arena's process layer; the bench and the bot
pinned to one CPU.  In alternating batches on that process, the same requests
(observation, legal actions and events from random playouts of every game):

* baseline: a minimal trio loop on the bot's pipes (pack the request,
  ``send_all``, ``receive_some`` into a ``msgpack.Unpacker`` until the reply);
* arena: ``BotClient.request`` (request id, discarding earlier messages, the
  move clock with its /proc CPU readings, the limit-checking reader, the
  reply's checks).

The gap is the arena's own cost per decision.  ``--breakdown`` times the
pieces of ``BotClient.request`` one by one.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import time
import timeit
from pathlib import Path
from typing import Any

import msgpack
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sdk_cost import MINIMAL_BOT, TIME, requests

from arena.client import BotClient, Clock, MoveTimer, TimeControl, new_request_id
from arena.process import BotProcess, BotSpec, start_bot_process
from arena.sandbox import resolve
from protocol import wire

MINIMAL = BotSpec("minimal", f"{shlex.quote(sys.executable)} -c {shlex.quote(MINIMAL_BOT)}")
Request = tuple[dict[str, Any], list[str], list[dict[str, Any]]]


def corpus(size: int) -> list[Request]:
    out = []
    for _, data in requests(per_game=max(1, size // 6)):
        message = msgpack.unpackb(data)
        out.append((message["observation"], message["legal"], message["events"]))
    return out


async def baseline_batch(bot: BotProcess, batch: list[Request]) -> list[float]:
    """A minimal trio loop: pack, send_all, receive_some until the reply."""
    unpacker = msgpack.Unpacker(raw=False)
    samples = []
    for request_id, (observation, legal, events) in enumerate(batch, start=1):
        start = time.perf_counter()
        await bot.stdin.send_all(msgpack.packb({
            "type": "request", "id": request_id, "observation": observation, "legal": legal,
            "events": events, "time": TIME}))
        reply = None
        while reply is None:
            unpacker.feed(await bot.stdout.receive_some(65536))
            reply = next(unpacker, None)
        assert reply["id"] == request_id
        samples.append(time.perf_counter() - start)
    return samples


async def arena_batch(client: BotClient, clock: Clock, batch: list[Request]) -> list[float]:
    samples = []
    for observation, legal, events in batch:
        start = time.perf_counter()
        await client.request(observation, legal, events, clock)
        samples.append(time.perf_counter() - start)
    return samples


async def measure(args: argparse.Namespace, batch: list[Request]
                  ) -> tuple[list[float], list[float], list[float], list[float]]:
    spec = MINIMAL
    base: list[float] = []
    arena: list[float] = []
    base_cpu: list[float] = []
    arena_cpu: list[float] = []
    async with trio.open_nursery() as nursery:
        bot = await start_bot_process(spec, nursery, resolve(args.sandbox))
        try:
            client = BotClient(bot)
            await client.handshake(30)
            clock = Clock(TimeControl(move=10, bank=10))
            await baseline_batch(bot, batch)  # warm up
            await arena_batch(client, clock, batch)
            for round_ in range(args.batches):
                for kind in ("base", "arena") if round_ % 2 else ("arena", "base"):
                    cpu = time.process_time()
                    if kind == "base":
                        base += await baseline_batch(bot, batch)
                        base_cpu.append((time.process_time() - cpu) / len(batch))
                    else:
                        arena += await arena_batch(client, clock, batch)
                        arena_cpu.append((time.process_time() - cpu) / len(batch))
        finally:
            await bot.aclose()
    return base, arena, base_cpu, arena_cpu


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return (statistics.median(ordered) * 1e6,
            ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e6)


def breakdown(batch: list[Request]) -> None:
    """Each piece of BotClient.request, timed alone (microseconds per call)."""
    observation, legal, events = batch[len(batch) // 2]

    async def pieces() -> list[tuple[str, float]]:
        spec = MINIMAL
        async with trio.open_nursery() as nursery:
            bot = await start_bot_process(spec, nursery, resolve("none"))
            try:
                client = BotClient(bot)
                await client.handshake(30)
                clock = Clock(TimeControl(move=10, bank=10))
                reply = wire.pack({"type": "action", "id": 12345678901234, "index": 0})
                reader = wire.MessageReader(wire.BOT_LIMITS)

                def timer() -> None:
                    MoveTimer(clock, bot).finish()

                def parse() -> None:
                    reader.push(reply)
                    reader.next_message()

                def scopes() -> None:
                    with trio.move_on_at(trio.current_time() + 10):
                        with trio.move_on_at(trio.current_time() + 10):
                            pass

                def pack() -> None:
                    wire.pack({"type": "request", "id": 12345678901234,
                               "observation": observation, "legal": legal, "events": events,
                               "time": clock.as_message()})

                def minimal_pack() -> None:
                    msgpack.packb({"type": "request", "id": 12345678901234,
                                   "observation": observation, "legal": legal,
                                   "events": events, "time": TIME})

                n = 20000
                rows = [
                    ("new_request_id (secrets)", timeit.timeit(new_request_id, number=n) / n),
                    ("MoveTimer + finish (2 CPU reads)", timeit.timeit(timer, number=n) / n),
                    ("  one cpu_seconds()", timeit.timeit(bot.cpu_seconds, number=n) / n),
                    ("clock.as_message", timeit.timeit(clock.as_message, number=n) / n),
                    ("wire.pack(request)", timeit.timeit(pack, number=n) / n),
                    ("  msgpack.packb, baseline", timeit.timeit(minimal_pack, number=n) / n),
                    ("reader: push + parse reply", timeit.timeit(parse, number=n) / n),
                    ("2 nested move_on_at scopes", timeit.timeit(scopes, number=n) / n),
                ]
                for label, awaitable in (
                        ("trio checkpoint", trio.lowlevel.checkpoint),
                        ("_discard_received (nothing)", client._discard_received)):
                    start = time.perf_counter()
                    for _ in range(n):
                        await awaitable()
                    rows.append((label, (time.perf_counter() - start) / n))
                return rows
            finally:
                await bot.aclose()

    print("\nbreakdown (each piece alone, us per call):")
    for label, seconds in trio.run(pieces):
        print(f"  {label:36}{seconds * 1e6:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    parser.add_argument("--sandbox", default="none", choices=("none", "bwrap"))
    parser.add_argument("--breakdown", action="store_true")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})  # the bot inherits it
    batch = (corpus(args.batch) * args.batch)[: args.batch]
    base, arena, base_cpu, arena_cpu = trio.run(measure, args, batch)
    b50, b99 = percentiles(base)
    a50, a99 = percentiles(arena)
    bc, ac = statistics.median(base_cpu) * 1e6, statistics.median(arena_cpu) * 1e6
    print(f"pinned to CPU {args.cpu}, sandbox {args.sandbox}; {args.batches} batches of "
          f"{args.batch} round trips each, alternating, on one minimal bot process")
    print(f"{'':28}{'p50 (us)':>10}{'p99 (us)':>10}{'arena CPU (us)':>16}")
    print(f"{'minimal trio loop':28}{b50:>10.1f}{b99:>10.1f}{bc:>16.1f}")
    print(f"{'arena BotClient.request':28}{a50:>10.1f}{a99:>10.1f}{ac:>16.1f}")
    print(f"arena / minimal trio loop: p50 {a50 / b50:.2f}x ({a50 - b50:+.1f} us), "
          f"p99 {a99 / b99:.2f}x, arena-side CPU {ac / bc:.2f}x ({ac - bc:+.1f} us)")
    if args.breakdown:
        breakdown(batch)


if __name__ == "__main__":
    main()
