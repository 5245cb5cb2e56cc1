"""What storing a finished game costs, in CPU time per game, against the goal of
issue 9 (saving a full furious-five game: at most 2 ms CPU).

    python bench/store_cost.py [--rounds 7] [--batch 30] [--cpu N] [--no-postgres]
                               [--profile]

The game: the longest of eight full 3-seat furious-five games (default
options) played by the engine with random choices (``arena.games.loop.play``),
in a ``GameResult`` as the referee builds it (move times, stderr tails, the
bots' info).

* pack: ``GameRecord.pack`` (msgpack + zlib, a format byte) against the older
  format (compact JSON, zlib level 6), with the stored bytes of each; also the
  CPU to read them back (``unpack``).
* save: ``Store.save_game`` (pack, Core inserts, commit) on a SQLite file in WAL
  mode, and on PostgreSQL where ``tests/pg.py`` can start a server (client CPU
  only: the server's is in other processes), against the previous save path
  (ORM rows, the older record format; :func:`previous_save`).

To be comparable the figures come from one run on one CPU: the process is
pinned (``--cpu``), time is CPU time (``time.process_time``), and baseline and
new take turns in batches of ``--batch`` games, ``--rounds`` times (the order
swapped each round) after a warm-up batch each; each figure is the median of
the rounds' per-game figures, with their range.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import json
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from engine_speed import pin
from sqlalchemy import select
from sqlalchemy.orm import DeclarativeBase, Session

from arena.games import make_game
from arena.games.loop import play
from arena.store import tables
from arena.store.database import Store
from arena.store.engine import writer
from arena.store.records import GameRecord, GameResult, forfeit_places


class _Row(DeclarativeBase):
    """ORM rows of the bench's own on the arena's tables (the store writes them with
    SQLAlchemy Core now; this is how it wrote them before)."""


class TableRow(_Row):
    __table__ = tables.TABLES


class GameRow(_Row):
    __table__ = tables.GAMES


class FaultRow(_Row):
    __table__ = tables.FAULTS


class RecordRow(_Row):
    __table__ = tables.RECORDS


class BotRow(_Row):
    __table__ = tables.BOTS


#: Issue 9's goal: CPU per saved game, in milliseconds.
GOAL_MS = 2.0
BOTS = ["random-1", "random-2", "random-3"]


def finished_game(seed: int = 7) -> GameResult:
    """A full 3-seat furious-five game with random moves, as the referee returns it."""
    game = make_game("furious-five", 3)
    state = game.new_state(seed)
    rng = random.Random(seed)
    actions = play(state, lambda state, seat: rng.choice(state.legal_actions(seat)))
    # A move's [wall, CPU] time in µs: a fast bot's round trip; CPU in 10 ms ticks.
    times: list[list[list[int] | None]] = [
        [[rng.randrange(150, 3000), rng.choice((0, 0, 0, 10000))] for _ in step]
        for step in actions]
    record = GameRecord(
        actions=actions, events=[e.to_dict() for e in state.events], reveal=state.reveal(),
        times=times, stderr=["random bot: seeded\n" * 3 for _ in BOTS],
        bot_info=[{"name": "random", "version": "1.0", "author": "five-arena"} for _ in BOTS],
        actions_public=game.actions_public)
    places = state.places()
    return GameResult(seed=seed, bots=list(BOTS), scores=state.scores(), game_places=places,
                      places=forfeit_places(places, set()), faults=[], record=record,
                      ignored=[0, 0, 0], duration=1.2, decisions=sum(map(len, actions)))


def old_pack(record: GameRecord) -> bytes:
    """The record format before msgpack: compact JSON, zlib level 6."""
    return zlib.compress(json.dumps(record.to_json(), separators=(",", ":")).encode(), 6)


def previous_save(store: Store, tournament_id: int, table: int, number: int,
                  options: dict[str, Any], result: GameResult) -> int:
    """``save_game`` as the code did it before: ORM rows, the older record format
    (plus the game's key columns, which the schema now requires)."""
    with Session(writer(store.engine)) as session, session.begin():
        table_id = session.scalar(select(TableRow.id).where(
            TableRow.tournament_id == tournament_id, TableRow.number == table))
        game = GameRow(table_id=table_id, number=number, deal=number // 3, rotation=number % 3,
                       seed=result.seed, options=options, seats=result.bots,
                       scores=result.scores, game_places=result.game_places,
                       places=result.places, fault_count=len(result.faults),
                       ignored=result.ignored, decisions=result.decisions,
                       duration=result.duration)
        session.add(game)
        session.flush()
        for fault in result.faults:
            session.add(FaultRow(game_id=game.id, seat=fault.seat, bot=fault.bot,
                                 kind=fault.kind, detail=fault.detail,
                                 stderr_tail=fault.stderr_tail, step=fault.step))
        session.add(RecordRow(game_id=game.id, data=old_pack(result.record)))
        for name, info in zip(result.bots, result.record.bot_info, strict=False):
            bot = session.scalar(select(BotRow).where(BotRow.name == name))
            if bot is not None and (info.get("version") or info.get("author")):
                bot.version, bot.author = info["version"], info["author"]
        return game.id


@dataclass
class Runner:
    """One way of doing the work, timed in batches: ms of CPU per game per round."""

    name: str
    one: Callable[[], object]
    per_round: list[float] = field(default_factory=list)

    def run(self, batch: int, record: bool = True) -> None:
        gc.collect()  # no batch pays for garbage another left
        started = time.process_time()
        for _ in range(batch):
            self.one()
        if record:
            self.per_round.append((time.process_time() - started) / batch * 1e3)

    @property
    def median(self) -> float:
        return statistics.median(self.per_round)

    def line(self, baseline: Runner | None = None, goal: float | None = None) -> str:
        spread = f"{min(self.per_round):.3f}-{max(self.per_round):.3f}"
        text = f"  {self.name:34}{self.median:9.3f} ms  (rounds {spread})"
        if baseline is not None:
            text += f"  {self.median / baseline.median:5.2f}x {baseline.name}"
        if goal is not None:
            text += f"  goal <= {goal:g} ms: {'met' if self.median <= goal else 'MISSED'}"
        return text


def interleave(pair: tuple[Runner, Runner], rounds: int, batch: int) -> None:
    """Warm each up, then alternate batches, the order swapped every round."""
    for runner in pair:
        runner.run(max(1, batch // 4), record=False)
    for round_ in range(rounds):
        for runner in pair if round_ % 2 == 0 else pair[::-1]:
            runner.run(batch)


def savers(url: str, result: GameResult) -> tuple[Runner, Runner]:
    """The previous and the new save path into a new tournament at ``url``."""
    store = Store(url)
    store.register_bots([(name, "bot") for name in BOTS])
    tid = store.create_tournament("furious-five", {"table_size": 3}, [BOTS, BOTS], 0)
    numbers = {0: 0, 1: 0}
    options = make_game("furious-five", 3).options

    def save(table: int, how: Callable[..., int]) -> Callable[[], int]:
        def one() -> int:
            numbers[table] += 1
            return how(tid, table, numbers[table], options, result)
        return one

    return (Runner("previous save (ORM, JSON-zlib)",
                   save(1, lambda *args: previous_save(store, *args))),
            Runner("save_game", save(0, store.save_game)))


@contextlib.contextmanager
def postgres(enabled: bool) -> Iterator[str | None]:
    """A PostgreSQL URL from tests/pg.py's throw-away server, or None (with why)."""
    if not enabled:
        yield None
        return
    try:
        from tests.pg import postgres_server
        with postgres_server() as url:
            yield url
    except Exception as exc:  # no server programs, initdb failed...: report and go on
        print(f"PostgreSQL: not measured ({str(exc).splitlines()[0]})")
        yield None


def profile(one: Callable[[], object], count: int) -> None:
    profiler = cProfile.Profile()
    profiler.runcall(lambda: [one() for _ in range(count)])
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds (default 7)")
    parser.add_argument("--batch", type=int, default=30, help="games per batch (default 30)")
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)),
                        help="the CPU to pin to (default: the highest allowed)")
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    parser.add_argument("--profile", action="store_true",
                        help="also print a profile of save_game on SQLite")
    args = parser.parse_args()
    pin(args.cpu)
    # The longest of a few games: the figure for a long game, not an average one.
    result = max((finished_game(seed) for seed in range(1, 9)),
                 key=lambda game: len(game.record.actions))
    record = result.record
    new, old = record.pack(), old_pack(record)
    json_bytes = len(json.dumps(record.to_json(), separators=(",", ":")))
    print(f"pinned to CPU {args.cpu}; CPU time (process_time); {args.rounds} rounds of "
          f"{args.batch}-game batches, interleaved; medians per game")
    print(f"game: furious-five, 3 seats, {len(record.actions)} steps, {len(record.events)} "
          f"events, {json_bytes / 1024:.1f} KiB of JSON")
    print(f"stored bytes: new {len(new)}, old {len(old)} ({len(new) / len(old):.2f}x)")

    packs = (Runner("old pack (JSON, zlib 6)", lambda: old_pack(record)),
             Runner("pack (msgpack, zlib)", record.pack))
    unpacks = (Runner("old unpack", lambda: GameRecord.unpack(old)),
               Runner("unpack", lambda: GameRecord.unpack(new)))
    with tempfile.TemporaryDirectory() as folder, postgres(not args.no_postgres) as pg_url:
        backends = {"SQLite (WAL)": savers(f"sqlite:///{folder}/bench.db", result)}
        if pg_url is not None:
            backends["PostgreSQL"] = savers(pg_url, result)
        for pair in (packs, unpacks, *backends.values()):
            interleave(pair, args.rounds, args.batch)
        print("pack:")
        print(packs[0].line())
        print(packs[1].line(packs[0]))
        print("unpack:")
        print(unpacks[0].line())
        print(unpacks[1].line(unpacks[0]))
        for name, (previous, new_save) in backends.items():
            print(f"save a game, {name}:")
            print(previous.line())
            print(new_save.line(previous, GOAL_MS))
        if args.profile:
            profile(backends["SQLite (WAL)"][1].one, 200)


if __name__ == "__main__":
    main()
