"""Arenas sharing a stored tournament split its streams (arena/runner/claims.py): real
bots, a real SQLite database, each arena with its own connection."""

from __future__ import annotations

import functools
import socket
import subprocess
import sys
import time
from pathlib import Path

import trio

from arena.runner.client import TimeControl
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.tournament import run_tournament
from arena.store.database import Store
from arena.store.records import GameResult

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
PLAN = Plan(game="furious-five", bots=tuple(BotSpec(f"r{i}", RANDOM) for i in range(3)),
            table_size=2, games_per_table=4, options={"rounds": 1},
            control=TimeControl(move=2.0, bank=10.0))
EVERY_GAME = {(table, game) for table in range(3) for game in range(4)}


def counter(counts: dict[str, int], arena: str) -> object:
    def on_game(result: GameResult) -> None:
        counts[arena] += 1
    return on_game


async def test_arenas_sharing_a_tournament_play_each_game_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    tid = create_tournament(Store(url), PLAN)
    played = {"a": 0, "b": 0, "c": 0}
    async with trio.open_nursery() as nursery:
        for arena in played:
            nursery.start_soon(functools.partial(
                run_tournament, PLAN, Store(url), tid, parallel=2, retry_seconds=0.2,
                on_game=counter(played, arena)))  # type: ignore[arg-type]
    assert Store(url).done_games(tid) == EVERY_GAME
    # Without claims each arena would play every stream it found unplayed.
    assert sum(played.values()) == len(EVERY_GAME), played


async def test_a_stream_whose_holder_died_is_taken_over_when_its_lease_ends(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    store = Store(url)
    tid = create_tournament(store, PLAN)
    assert store.claim(tid, "0/0", "a dead arena", 1.5)  # table 0, rotation 0
    played = {"a": 0}
    began = time.monotonic()
    await run_tournament(PLAN, store, tid, parallel=2, retry_seconds=0.2,
                         on_game=counter(played, "a"))  # type: ignore[arg-type]
    assert time.monotonic() - began >= 1.0  # it waited for the lease to end
    assert store.done_games(tid) == EVERY_GAME and played["a"] == len(EVERY_GAME)
    # Every claim was released: another arena may take any stream at once.
    assert all(store.claim(tid, f"{t}/{r}", "another arena", 60)
               for t in range(3) for r in range(2))


async def test_an_arena_waits_for_a_live_holder_then_plays_its_stream(tmp_path: Path) -> None:
    """A stream held by another arena is not played while that arena holds it;
    once it is released, it is."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    store = Store(url)
    tid = create_tournament(store, PLAN)
    assert store.claim(tid, "1/1", "a live arena", 60)  # table 1, rotation 1
    held = {(1, 1), (1, 3)}
    played = {"a": 0}

    async def holder() -> None:
        with trio.fail_after(120):
            while store.done_games(tid) != EVERY_GAME - held:
                await trio.sleep(0.1)
        await trio.sleep(1.0)  # the arena looks again every 0.2 s meanwhile
        assert store.done_games(tid) == EVERY_GAME - held
        store.release(tid, "1/1", "a live arena")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(holder)
        nursery.start_soon(functools.partial(
            run_tournament, PLAN, store, tid, parallel=2, retry_seconds=0.2,
            on_game=counter(played, "a")))  # type: ignore[arg-type]
    assert store.done_games(tid) == EVERY_GAME and played["a"] == len(EVERY_GAME)


async def test_a_stream_whose_holder_was_killed_here_is_taken_over_at_once(
        tmp_path: Path) -> None:
    """An arena killed (say, kill -9) and resumed on the same machine need not
    wait for its old claims' leases: their process is gone."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    store = Store(url)
    tid = create_tournament(store, PLAN)
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert store.claim(tid, "2/0", f"{socket.gethostname()}:{gone.pid}:0", 600)
    began = time.monotonic()
    await run_tournament(PLAN, store, tid, parallel=2, retry_seconds=0.2)
    assert store.done_games(tid) == EVERY_GAME
    assert time.monotonic() - began < 300  # not the 600 s lease
