"""Timeouts of honest bots on a loaded machine: wall clock vs CPU clock, same run.

    python bench/clock_fairness.py [--rounds 2] [--move 0.1] [--load 0.8]

4 x CPU-count tables play at once; every bot spends ``load`` (80%) of the move
limit in CPU on every move, so none is ever over its limit in CPU time, but the
machine is oversubscribed four times, so in wall time each move takes longer.
Rounds alternate wall and CPU clocks; the figure is timeouts per move asked.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import trio

from arena.games import make_game
from arena.runner.client import TimeControl
from arena.runner.process import BotSpec
from arena.runner.referee import play_single_game
from arena.store.records import GameResult

SPENDER = Path(__file__).resolve().parent.parent / "tests" / "bots" / "spender_bot.py"


async def one_round(tables: int, control: TimeControl, seconds: float) -> list[GameResult]:
    game = make_game("furious-five", 2, {"rounds": 1, "max_turns": 12})
    bot = BotSpec("spender", f"{sys.executable} {SPENDER} spin {seconds}")
    results: list[GameResult] = []

    async def table(seed: int) -> None:
        results.append(await play_single_game(game, seed, [bot, bot], control))

    async with trio.open_nursery() as nursery:
        for seed in range(tables):
            nursery.start_soon(table, seed)
    return results


def tally(results: list[GameResult]) -> tuple[int, int]:
    """(moves asked of a bot, timeouts)."""
    timeouts = sum(f.kind == "timeout" for r in results for f in r.faults)
    answered = sum(t is not None for r in results for step in r.times for t in step)
    return answered + timeouts, timeouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds per clock (interleaved)")
    parser.add_argument("--move", type=float, default=0.1, help="move limit, seconds")
    parser.add_argument("--load", type=float, default=0.8, help="share of the limit spent")
    args = parser.parse_args()
    tables = 4 * (os.cpu_count() or 1)
    totals = {"wall": [0, 0], "cpu": [0, 0]}
    for _ in range(args.rounds):
        for clock in ("wall", "cpu"):
            control = TimeControl(move=args.move, bank=0.0, clock=clock)
            asked, timeouts = tally(trio.run(one_round, tables, control, args.load * args.move))
            totals[clock][0] += asked
            totals[clock][1] += timeouts
    print(f"{tables} tables at once on {os.cpu_count()} CPUs; bots spend {args.load:.0%} of a "
          f"{args.move} s move in CPU; no bank; {args.rounds} rounds per clock, interleaved")
    print(f"{'clock':8}{'moves asked':>13}{'timeouts':>10}{'per move':>10}")
    for clock, (asked, timeouts) in totals.items():
        print(f"{clock:8}{asked:>13}{timeouts:>10}{timeouts / max(asked, 1):>10.4f}")
    wall = totals["wall"][1] / max(totals["wall"][0], 1)
    cpu = totals["cpu"][1] / max(totals["cpu"][0], 1)
    print(f"CPU clock timeouts per move / wall clock's: {cpu / wall if wall else float('nan'):.4f}")


if __name__ == "__main__":
    main()
