"""The arena's round trip against a minimal trio loop on the same bot's pipes.

    python bench/latency.py [--batches 20] [--batch 200] [--cpu N] [--sandbox none]
                            [--clock wall] [--breakdown]

One bot process, :data:`sdk_cost.MINIMAL_BOT` (os.read + msgpack.Unpacker,
answers index 0), started by the arena's process layer; the bench and the bot
pinned to one CPU.  In ``--batches`` rounds, each a batch of every kind in
turn (in a rotating order) on that process, the same requests (observation,
legal actions and events from random playouts of every game):

* minimal (the baseline of issue 8 part 5): a minimal trio loop on the bot's
  pipes (pack the request, ``send_all``, ``receive_some`` into a
  ``msgpack.Unpacker`` until the reply);
* arena: ``BotClient.request`` (request id, discarding earlier messages, the
  move timer with its CPU readings and the watchdog, the limit-checking
  reader, the reply's checks);
* raw (for reference): the leanest trio loop, ``os.write`` then
  ``wait_readable`` and ``os.read``: one scheduler pass per round trip where
  ``send_all`` and ``receive_some`` take three, as the arena does.

Per kind: the median over rounds of each batch's median round trip, the p99 of
all round trips, and the median over rounds of this process's CPU per round
trip (``time.process_time``: the loop's own work, whatever else the machine
does); ratios are medians over rounds of the ratio within each round.  The gap
to the minimal loop is the arena's own cost per decision.  ``--breakdown``
times the pieces of ``BotClient.request`` one by one.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import time
import timeit
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sdk_cost import MINIMAL_BOT, TIME, requests

from arena.runner.client import BotClient, Clock, MoveTimer, TimeControl, new_request_id
from arena.runner.process import BotProcess, BotSpec, start_bot_process
from arena.runner.sandbox import resolve
from protocol import wire

#: Issue 8 part 5: the arena's round trip at most this many times the minimal loop's.
GOAL = 1.2
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


async def raw_batch(bot: BotProcess, batch: list[Request]) -> list[float]:
    """The leanest trio loop (for reference): ``os.write``, then
    ``wait_readable`` and ``os.read`` until the reply; one trio scheduler pass
    per round trip, where ``send_all`` and ``receive_some`` take three."""
    unpacker = msgpack.Unpacker(raw=False)
    packer = msgpack.Packer()
    to_bot, from_bot = bot.stdin.fileno(), bot.stdout.fileno()
    samples = []
    for request_id, (observation, legal, events) in enumerate(batch, start=1):
        start = time.perf_counter()
        os.write(to_bot, packer.pack({
            "type": "request", "id": request_id, "observation": observation, "legal": legal,
            "events": events, "time": TIME}))
        reply = None
        while reply is None:
            await trio.lowlevel.wait_readable(from_bot)
            unpacker.feed(os.read(from_bot, 65536))
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


KINDS = ("minimal", "arena", "raw")
LABELS = {"minimal": "minimal trio loop", "arena": "arena BotClient.request",
          "raw": "raw-fd trio loop"}


@dataclass
class Figures:
    """One kind's figures: every round trip (seconds) and, per round, the
    batch's median round trip and its CPU per round trip in this process."""

    samples: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


async def measure(args: argparse.Namespace, batch: list[Request]) -> dict[str, Figures]:
    figures = {kind: Figures() for kind in KINDS}
    async with trio.open_nursery() as nursery:
        bot = await start_bot_process(MINIMAL, nursery, resolve(args.sandbox))
        try:
            client = BotClient(bot)
            await client.handshake(30)
            clock = Clock(TimeControl(move=10, bank=10, clock=args.clock))
            runs = {"minimal": lambda: baseline_batch(bot, batch),
                    "arena": lambda: arena_batch(client, clock, batch),
                    "raw": lambda: raw_batch(bot, batch)}
            for run in runs.values():  # warm up
                await run()
            for round_ in range(args.batches):
                shift = round_ % len(KINDS)
                for kind in KINDS[shift:] + KINDS[:shift]:
                    cpu = time.process_time()
                    samples = await runs[kind]()
                    figures[kind].cpu.append((time.process_time() - cpu) / len(batch))
                    figures[kind].p50.append(statistics.median(samples))
                    figures[kind].samples += samples
        finally:
            await bot.aclose()
    return figures


def ratios(figures: dict[str, Figures], kind: str, base: str, attr: str) -> float:
    """The median over rounds of ``kind``'s figure over ``base``'s in the same round."""
    pairs = zip(getattr(figures[kind], attr), getattr(figures[base], attr), strict=True)
    return statistics.median(a / b for a, b in pairs)


def breakdown(batch: list[Request]) -> None:
    """Each piece of BotClient.request, timed alone (microseconds per call,
    the best of 5 runs)."""
    observation, legal, events = batch[len(batch) // 2]

    def best(function: Callable[[], object], n: int = 20000) -> float:
        return min(timeit.repeat(function, number=n, repeat=5)) / n

    async def best_async(function: Callable[[], Awaitable[object]], n: int = 20000) -> float:
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n):
                await function()
            runs.append(time.perf_counter() - start)
        return min(runs) / n

    async def pieces() -> list[tuple[str, float]]:
        async with trio.open_nursery() as nursery:
            bot = await start_bot_process(MINIMAL, nursery, resolve("none"))
            try:
                client = BotClient(bot)
                await client.handshake(30)
                clock = Clock(TimeControl(move=10, bank=10))
                timer = MoveTimer(clock, bot)
                reply = wire.pack({"type": "action", "id": 12345678901234, "index": 0})
                reader = wire.MessageReader(wire.BOT_LIMITS)
                unpacker = msgpack.Unpacker(raw=False)
                pack = wire.packer()

                def parse() -> None:
                    reader.push(reply)
                    reader.next_message()

                def minimal_parse() -> None:
                    unpacker.feed(reply)
                    next(unpacker)

                def watch() -> None:
                    bot.watch(timer)
                    bot.unwatch()

                def scope() -> None:
                    with trio.CancelScope(deadline=trio.current_time() + 10):
                        pass

                def request() -> None:
                    pack({"type": "request", "id": 12345678901234, "observation": observation,
                          "legal": legal, "events": events, "time": clock.as_message()})

                def minimal_request() -> None:
                    msgpack.packb({"type": "request", "id": 12345678901234,
                                   "observation": observation, "legal": legal,
                                   "events": events, "time": TIME})

                return [
                    ("new_request_id", best(new_request_id)),
                    ("MoveTimer + finish (wall clock)",
                     best(lambda: MoveTimer(clock, bot).finish())),
                    ("  one live_cpu_seconds()", best(bot.live_cpu_seconds)),
                    ("  (one cpu_seconds(), CPU clock)", best(bot.cpu_seconds)),
                    ("process.watch + unwatch", best(watch)),
                    ("  (a CancelScope with a deadline)", best(scope)),
                    ("clock.as_message + pack(request)", best(request)),
                    ("  msgpack.packb, minimal loop", best(minimal_request)),
                    ("reader: push + parse reply", best(parse)),
                    ("  Unpacker feed + next, minimal", best(minimal_parse)),
                    ("_discard_received (nothing)", await best_async(client._discard_received)),
                    ("trio checkpoint (scheduler pass)",
                     await best_async(trio.lowlevel.checkpoint)),
                ]
            finally:
                await bot.aclose()

    print("\nbreakdown (each piece alone, us per call, best of 5):")
    for label, seconds in trio.run(pieces):
        print(f"  {label:36}{seconds * 1e6:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20, help="rounds")
    parser.add_argument("--batch", type=int, default=200, help="round trips per batch")
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    parser.add_argument("--sandbox", default="none", choices=("none", "bwrap"))
    parser.add_argument("--clock", default="wall", choices=("wall", "cpu"))
    parser.add_argument("--breakdown", action="store_true")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})  # the bot inherits it
    batch = (corpus(args.batch) * args.batch)[: args.batch]
    figures = trio.run(measure, args, batch)
    print(f"pinned to CPU {args.cpu}, sandbox {args.sandbox}, clock {args.clock}; "
          f"{args.batches} rounds, each a batch of {args.batch} round trips of every kind "
          f"in turn, on one minimal bot process")
    print(f"{'':28}{'p50 (us)':>10}{'p99 (us)':>10}{'CPU here (us)':>15}"
          f"{'p50 ratio':>11}{'CPU ratio':>11}")
    for kind in KINDS:
        ordered = sorted(figures[kind].samples)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        print(f"{LABELS[kind]:28}{statistics.median(figures[kind].p50) * 1e6:>10.1f}"
              f"{p99 * 1e6:>10.1f}{statistics.median(figures[kind].cpu) * 1e6:>15.1f}"
              f"{ratios(figures, kind, 'minimal', 'p50'):>10.2f}x"
              f"{ratios(figures, kind, 'minimal', 'cpu'):>10.2f}x")
    p50 = ratios(figures, "arena", "minimal", "p50")
    print(f"arena / minimal trio loop (median over rounds of the same round's ratio): "
          f"p50 round trip {p50:.2f}x (goal: at most {GOAL:.1f}x: "
          f"{'met' if p50 <= GOAL else 'NOT met'}), CPU in this process "
          f"{ratios(figures, 'arena', 'minimal', 'cpu'):.2f}x; against the raw-fd loop: "
          f"p50 {ratios(figures, 'arena', 'raw', 'p50'):.2f}x, "
          f"CPU {ratios(figures, 'arena', 'raw', 'cpu'):.2f}x")
    if args.breakdown:
        breakdown(batch)


if __name__ == "__main__":
    main()
