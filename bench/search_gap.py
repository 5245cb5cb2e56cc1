"""Elo gap of each game's search bot over its heuristic bot, within the default time control.

    python bench/search_gap.py [--games 32] [--game NAME ...] [--think 0.1] [-j 2]

For each game with a search bot (``sample_bots.SEARCH``): a real ``arena
tournament`` (subprocess bots in the sandbox, the default time control: 1 s a
move, 10 s of bank) into a temporary SQLite database, heads-up, search bot
against heuristic bot on duplicate deals (every deal played twice, seats
swapped).  From the stored games: the pentanomial Elo of the search bot with
its 95% interval (``arena.stats.match_stats``, pairs of one deal), faults, the
search bot's slowest move, and whether the gap reaches the +100 bar.

``--think`` is the search bot's time per move (its default is 0.2 s); the
bench uses 0.1 s by default to fit the run in a few minutes on two cores.

``--against pure`` measures what the compiled engines are worth in strength:
the same search bot, same seed and time per move, against itself on the
pure-Python engines (:mod:`sample_bots.pure`: its playouts are slower, its
search otherwise identical).  The Elo is then the compiled bot's
over the pure one; the +100 bar does not apply.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.games import native
from arena.stats.match_stats import MatchSummary, Pentanomial, summarize_pairs
from arena.store.database import Store, StoredGame
from sample_bots import HEURISTICS, SEARCH, command

BAR = 100.0
SEARCH_NAME = "search"
#: The opponents the search bot can meet, by ``--against``.
OPPONENTS = ("heuristic", "pure")
#: How the games name a bot: ad-hoc version 1 of each, in a fresh database (docs/bots.md).
SEARCH_LABEL = f"{SEARCH_NAME}@1"


@dataclass(frozen=True)
class Gap:
    """One game's match: the search bot's figures and how it kept to its clock."""

    summary: MatchSummary
    faults: int
    slowest_ms: float
    seconds: float


def play_match(game: str, games: int, think: float, parallel: int, seed: int,
               folder: Path, against: str) -> list[StoredGame]:
    """Run the ``arena tournament`` of one game and return its stored games."""
    db = f"sqlite:///{folder}/{game}.db"
    settings = f"--think {think} --seed {seed}"
    search = f"{command(SEARCH[game])} {settings}"
    opponent = (command(HEURISTICS[game]) if against == "heuristic"
                else f"{command('pure')} {SEARCH[game]} {settings}")
    done = subprocess.run(
        ["arena", "tournament", "-g", game, "-k", "2", "-n", str(games), "--seed", str(seed),
         "-j", str(parallel), "--db", db,
         "-b", f"{SEARCH_NAME}={search}", "-b", f"{against}={opponent}"],
        check=False, capture_output=True, text=True)
    if done.returncode not in (0, 3):  # 3: some bot faulted, counted below
        sys.exit(f"arena tournament failed ({done.returncode}):\n{done.stderr}")
    return list(Store(db).games())


def pairs(games: Sequence[StoredGame], against: str) -> Pentanomial:
    """The search bot's points per deal, both seatings (games without result left out)."""
    by_deal: dict[int, list[float]] = {}
    for game in games:
        if game.no_result:
            continue
        mine = game.places[game.seats.index(SEARCH_LABEL)]
        theirs = game.places[game.seats.index(f"{against}@1")]
        points = 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0
        by_deal.setdefault(game.number // 2, []).append(points)
    return Pentanomial.of([(p[0], p[1]) for p in by_deal.values() if len(p) == 2])


def slowest_move_ms(folder: Path, game: str, games: Sequence[StoredGame]) -> float:
    """The search bot's longest move (wall time) over every stored game."""
    store = Store(f"sqlite:///{folder}/{game}.db")
    slowest = 0
    for stored in games:
        record = store.record(stored.id)
        if record is None:
            continue
        seat = stored.seats.index(SEARCH_LABEL)
        for step, times in zip(record.actions, record.times, strict=True):
            for (decider, _action), move in zip(step, times, strict=True):
                if move is not None and decider == seat:
                    slowest = max(slowest, move[0])
    return slowest / 1000


def measure(game: str, games: int, think: float, parallel: int, seed: int,
            folder: Path, against: str) -> Gap:
    start = time.monotonic()
    stored = play_match(game, games, think, parallel, seed, folder, against)
    faults = sum(len(g.faults) for g in stored)
    return Gap(summarize_pairs(pairs(stored, against)), faults,
               slowest_move_ms(folder, game, stored), time.monotonic() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=32, help="games per game type (even)")
    parser.add_argument("--game", action="append", choices=sorted(SEARCH), help="only these games")
    parser.add_argument("--think", type=float, default=0.1, help="search seconds per move")
    parser.add_argument("-j", "--parallel", type=int, default=2, help="streams at once")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--against", choices=OPPONENTS, default="heuristic",
                        help="the heuristic bot, or the same search bot on pure-Python engines")
    args = parser.parse_args()
    engines = native.status()
    print(f"search bot against {args.against}; {engines}")
    print(f"{'game':14}{'games':>6}{'W-D-L':>10}  {'Elo gap, 95%':<32}"
          f"{'faults':>7}{'slowest':>9}{'time':>7}  bar +{BAR:.0f}")
    with tempfile.TemporaryDirectory() as name:
        for game in args.game or list(SEARCH):
            gap = measure(game, args.games - args.games % 2, args.think, args.parallel,
                          args.seed, Path(name), args.against)
            s = gap.summary
            verdict = ("-" if args.against == "pure" else "ok" if s.elo >= BAR else "BELOW")
            print(f"{game:14}{s.wins + s.draws + s.losses:>6}"
                  f"{f'{s.wins}-{s.draws}-{s.losses}':>10}  {s.elo_text:<32}"
                  f"{gap.faults:>7}{gap.slowest_ms:>7.0f}ms"
                  f"{gap.seconds:>6.0f}s  {verdict}", flush=True)
            if native.compiled_in_use() and not native.built():
                sys.exit("the compiled engines were removed during the run (another build "
                         "pruned them): bots started after that ran pure Python")


if __name__ == "__main__":
    main()
