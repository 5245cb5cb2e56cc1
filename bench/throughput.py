"""Tournament throughput: ``arena tournament`` against a minimal trio loop, same run.

    python bench/throughput.py [--jobs 1 2 4 8] [--rounds 2] [--bots 5] [--games 15]
                               [--sandbox none] [--game furious-five] [--baseline-tree DIR]

For each ``-j N``, taking turns in ``--rounds`` rounds:

* baselines: a minimal trio loop in this process that plays the same engine,
  ``N`` tables at once, against :data:`sdk_cost.MINIMAL_BOT` processes (the
  issue's baseline) and against the random SDK bot (the same bot as the arena,
  so the gap is the arena's own): plain pipes, no sandbox, no clock, no events,
  no record; build the observation and legal actions, send, read the reply, apply;
  and the random SDK bot again under the arena's deal isolation rule: fresh bot
  processes for every stream (a seat rotation of a block of deals: the arena's
  stream length), so the ratio is like for like;
* arena: ``arena tournament`` of ``--bots`` copies of the random SDK bot
  (``python -m sample_bots.random_bot``) at tables of 3, ``-j N``, into a
  fresh SQLite file, sandbox as ``--sandbox`` says; with ``--baseline-tree DIR``
  also the same command run from another source tree (say, the previous
  commit's ``git archive``), interleaved, with the ratio.

Printed per ``N``: moves per second of each (wall clock, whole run) and their
ratio to each loop (goal: the arena at least :data:`GOAL_THROUGHPUT` x the loop), and the
CPU per move of the arena's own processes (the arena and its Dask workers,
bots excluded, read from /proc while it runs) against the loop's
(``time.process_time``; goal: at most :data:`GOAL_CPU` x).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shlex
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgpack
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sdk_cost import MINIMAL_BOT, TIME

from arena.formats.schedule import DEAL_BLOCK
from arena.games import make_game

GOAL_THROUGHPUT = 0.8
GOAL_CPU = 1.3
#: The arena against the same command run from ``--baseline-tree``.
GOAL_VS_BASELINE = 0.9
RANDOM_BOT = f"{sys.executable} -m sample_bots.random_bot"
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Figures:
    moves: int = 0
    seconds: float = 0.0
    cpu: float = 0.0
    rates: list[float] = field(default_factory=list)
    #: Bot processes started in the last run.
    started: int = 0

    def add(self, moves: int, seconds: float, cpu: float, started: int) -> None:
        self.started = started
        self.moves += moves
        self.seconds += seconds
        self.cpu += cpu
        self.rates.append(moves / seconds)

    @property
    def rate(self) -> float:
        return self.moves / self.seconds

    @property
    def cpu_per_move_us(self) -> float:
        return 1e6 * self.cpu / self.moves


# -- the baseline: a minimal trio loop --------------------------------------------
async def _table(name: str, players: int, seeds: list[int], counter: list[int],
                 bot_argv: list[str], per_stream: int | None, started: list[int]) -> None:
    """Play games off ``seeds`` until none is left, on bots started afresh every
    ``per_stream`` games (None: once)."""
    while seeds:
        await _stream(name, players, seeds, counter, bot_argv, per_stream, started)


async def _stream(name: str, players: int, seeds: list[int], counter: list[int],
                  bot_argv: list[str], games: int | None, started: list[int]) -> None:
    game = make_game(name, players)
    bots = [await trio.lowlevel.open_process(bot_argv,
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            for _ in range(players)]
    started[0] += players
    unpackers = [msgpack.Unpacker(raw=False) for _ in bots]
    played = 0
    try:
        while seeds and (games is None or played < games):
            played += 1
            state = game.new_state(seeds.pop())
            while not state.is_terminal():
                decisions = {}
                for seat in state.deciding_seats():
                    legal = state.legal_actions(seat)
                    bot = bots[seat]
                    assert bot.stdin is not None and bot.stdout is not None
                    await bot.stdin.send_all(msgpack.packb({
                        "type": "request", "id": counter[0] + 1, "time": TIME,
                        "observation": state.observation(seat), "legal": legal}))
                    reply = None
                    while reply is None:
                        unpackers[seat].feed(await bot.stdout.receive_some(65536))
                        reply = next(unpackers[seat], None)
                    decisions[seat] = legal[reply["index"]]
                    counter[0] += 1
                state.apply_actions(decisions)
    finally:
        for bot in bots:
            bot.kill()
            await bot.wait()


async def _baseline(name: str, parallel: int, games: int, players: int,
                    bot_argv: list[str], per_stream: int | None) -> tuple[int, int]:
    rng = random.Random(parallel)
    seeds = [rng.getrandbits(62) for _ in range(games)]
    counter, started = [0], [0]
    async with trio.open_nursery() as nursery:
        for _ in range(parallel):
            nursery.start_soon(_table, name, players, seeds, counter, bot_argv, per_stream,
                               started)
    return counter[0], started[0]


def run_baseline(name: str, parallel: int, games: int, players: int,
                 bot_argv: list[str], per_stream: int | None = None
                 ) -> tuple[int, float, float, int]:
    """(moves, wall seconds, CPU seconds of this process, bot processes started)."""
    wall, cpu = time.perf_counter(), time.process_time()
    moves, started = trio.run(_baseline, name, parallel, games, players, bot_argv, per_stream)
    return moves, time.perf_counter() - wall, time.process_time() - cpu, started


# -- the arena ---------------------------------------------------------------------
def _descendants(root: int) -> dict[int, tuple[str, float]]:
    """pid -> (command line, CPU seconds) of ``root`` and every descendant."""
    parents: dict[int, int] = {}
    info: dict[int, tuple[str, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        parents[int(entry)] = int(fields[1])
        info[int(entry)] = (cmdline.decode(errors="replace"),
                            (int(fields[11]) + int(fields[12])) / _TICKS)
    keep = {root}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in keep and pid not in keep:
                keep.add(pid)
                changed = True
    return {pid: info[pid] for pid in keep if pid in info}


def _cpu_seconds(pid: int) -> float | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def run_arena(name: str, parallel: int, bots: int, games: int, sandbox: str,
              folder: Path, tree: Path | None = None) -> tuple[int, float, float, int]:
    """(moves, wall seconds, CPU seconds of the arena's own processes, bot
    processes started), with the code of source tree ``tree`` if given."""
    db = folder / f"arena-{parallel}-{time.monotonic_ns()}.db"
    argv = [sys.executable, "-m", "arena.cli", "tournament", "-g", name, "-k", "3",
            "-n", str(games), "-j", str(parallel), "--sandbox", sandbox,
            "--db", f"sqlite:///{db}", *[f"-b=r{i}={RANDOM_BOT}" for i in range(bots)]]
    cpu: dict[int, float] = {}
    arena_pids: set[int] = set()
    wall = time.perf_counter()
    env = None if tree is None else {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tree)
    scanned = 0.0
    while proc.poll() is None:
        # A whole /proc scan costs CPU that the arena then lacks: find the
        # arena's processes (and count the bots) twice a second, and read only
        # the arena's own between scans.
        if time.monotonic() - scanned >= 0.5:
            scanned = time.monotonic()
            arena_pids.update(pid for pid, (cmdline, _) in _descendants(proc.pid).items()
                              if "arena.cli" in cmdline
                              or "sample_bots.random_bot" not in cmdline)
        for pid in arena_pids:
            seconds = _cpu_seconds(pid)
            if seconds is not None:
                cpu[pid] = max(cpu.get(pid, 0.0), seconds)
        time.sleep(0.02)
    wall = time.perf_counter() - wall
    _, stderr = proc.communicate()
    if proc.returncode not in (0, 3):
        raise SystemExit(f"arena failed ({proc.returncode}): {stderr.strip()[-500:]}")
    with sqlite3.connect(db) as con:
        moves = con.execute("SELECT SUM(decisions) FROM games").fetchone()[0] or 0
    # Each table's 3 bots start afresh for each of its 3 seat rotations of each
    # block of deals (the baseline tree, before blocks: of all its deals).
    blocks = 1 if tree is not None else math.ceil(games / 3 / DEAL_BLOCK)
    started = math.comb(bots, 3) * blocks * 3 * 3
    return int(moves), wall, sum(cpu.values()), started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--bots", type=int, default=5, help="random bots (tables of 3)")
    parser.add_argument("--games", type=int, default=15,
                        help="games per table (a multiple of 3; each seat rotation plays a third)")
    parser.add_argument("--game", default="furious-five")
    parser.add_argument("--sandbox", default="none", choices=["none", "bwrap", "auto"])
    parser.add_argument("--baseline-tree", type=Path,
                        help="also run the arena from this source tree (interleaved)")
    args = parser.parse_args()
    total_games = math.comb(args.bots, 3) * args.games
    minimal = [sys.executable, "-c", MINIMAL_BOT]
    sdk = shlex.split(RANDOM_BOT)
    stream = min(args.games // 3, DEAL_BLOCK)  # the arena's stream: a rotation of a block
    series: dict[str, Callable[[int], tuple[int, float, float, int]]] = {
        "loop, minimal bot": lambda j: run_baseline(args.game, j, total_games, 3, minimal),
        "loop, random SDK bot": lambda j: run_baseline(args.game, j, total_games, 3, sdk),
        "loop, SDK, per stream": lambda j: run_baseline(args.game, j, total_games, 3, sdk,
                                                        per_stream=stream),
        "arena, random SDK bot": lambda j: run_arena(args.game, j, args.bots, args.games,
                                                     args.sandbox, Path(tmp)),
    }
    if args.baseline_tree is not None:
        tree = args.baseline_tree.resolve()
        series["arena, baseline tree"] = lambda j: run_arena(
            args.game, j, args.bots, args.games, args.sandbox, Path(tmp), tree)
    figures = {(name, j): Figures() for name in series for j in args.jobs}
    with tempfile.TemporaryDirectory() as tmp:
        for round_number in range(args.rounds):
            for j in args.jobs:
                names = list(series)
                shift = round_number % len(names)
                for name in names[shift:] + names[:shift]:
                    figures[name, j].add(*series[name](j))
    print(f"{args.game}, tables of 3, {total_games} games per run, {args.rounds} rounds "
          f"interleaved, {os.cpu_count()} CPUs, arena sandbox: {args.sandbox}")
    print("moves/s (wall) and CPU per move of the arena's or the loop's own processes "
          "(bots excluded); bot processes started per run (the arena starts a table's bots "
          "afresh for each seat rotation, so that no process plays a deal twice; the loop "
          "starts one per seat and table slot)")
    for j in args.jobs:
        arena = figures["arena, random SDK bot", j]
        for name in series:
            f = figures[name, j]
            line = (f"-j {j:<2} {name:<22} {f.rate:>8,.0f} moves/s {f.cpu_per_move_us:>6.0f} "
                    f"µs CPU/move {f.started:>4} bots started")
            if name != "arena, random SDK bot":
                ratio = arena.rate / f.rate
                cpu = arena.cpu_per_move_us / f.cpu_per_move_us
                rounds = [a / b for a, b in zip(arena.rates, f.rates, strict=True)]
                goal = GOAL_VS_BASELINE if name == "arena, baseline tree" else GOAL_THROUGHPUT
                line += (f"   arena/this: {ratio:.2f}x moves/s ({min(rounds):.2f}-"
                         f"{max(rounds):.2f}; goal >= {goal}x), {cpu:.2f}x CPU/move "
                         f"(goal <= {GOAL_CPU}x)")
            print(line)


if __name__ == "__main__":
    main()
