"""Elo gap of each game's heuristic sample bot over the random bot.

    python bench/heuristic_gap.py [--games 40] [--game NAME ...]

For each game, a real tournament (subprocess bots, the arena, SQLite in a
temporary folder): the heuristic against the random bot (two random bots for
games of 3+ players), then the Elo fit.  Prints each gap with the heuristic's
95% interval and whether it clears the 200-point bar.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import trio

from arena.bots.samples import spec
from arena.games import game_class
from arena.runner.client import TimeControl
from arena.runner.plan import Plan, create_tournament
from arena.runner.tournament import run_tournament
from arena.stats.pools import ratable_games
from arena.stats.ratings import rate
from arena.store.database import Store
from sample_bots import HEURISTICS, RANDOM

BAR = 200.0


def gap_for(game: str, games: int, folder: str, seed: int) -> tuple[float, float, float, int]:
    table = max(2, game_class(game).min_players)
    randoms = tuple(spec(RANDOM, f"random-{i}") for i in range(table - 1))
    bots = (spec(HEURISTICS[game], "heuristic"), *randoms)
    games_per_table = max(table, games - games % table)
    plan = Plan(game=game, bots=bots, table_size=table, games_per_table=games_per_table,
                seed=seed, control=TimeControl(move=5, bank=30))
    plan.validate()
    store = Store(f"sqlite:///{folder}/{game}.db")
    tid = create_tournament(store, plan)
    trio.run(lambda: run_tournament(plan, store, tid, parallel=os.cpu_count() or 1))
    stored = list(store.games(tid))
    ratings = {r.player: r for r in rate(ratable_games(stored), bootstrap=200, seed=seed)}
    random_elo = sum(ratings[b.name].elo for b in randoms) / len(randoms)
    heuristic = ratings["heuristic"]
    faults = sum(len(g.faults) for g in stored)
    return (heuristic.elo - random_elo, heuristic.low - random_elo,
            heuristic.high - random_elo, faults)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per game type")
    parser.add_argument("--game", action="append", help="only these games")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    print(f"{'game':18}{'Elo gap':>9}  {'95% interval':>18}{'faults':>8}{'time':>8}  bar {BAR:.0f}")
    with tempfile.TemporaryDirectory() as folder:
        for game in args.game or list(HEURISTICS):
            start = time.monotonic()
            gap, low, high, faults = gap_for(game, args.games, folder, args.seed)
            verdict = "ok" if gap >= BAR else "BELOW"
            print(f"{game:18}{gap:>+9.0f}  [{low:>+7.0f}, {high:>+7.0f}]{faults:>8}"
                  f"{time.monotonic() - start:>7.0f}s  {verdict}")


if __name__ == "__main__":
    main()
