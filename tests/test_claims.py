"""Arenas sharing a stored tournament split its chains (arena/runner/claims.py): real
bots, a real SQLite database, each arena with its own connection."""

from __future__ import annotations

import functools
import socket
import subprocess
import sys
import time
from pathlib import Path

import trio

from arena.formats.schedule import DEAL_BLOCK, Chain, chain_name
from arena.runner.client import TimeControl
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.tournament import run_tournament
from arena.store.database import Store
from arena.store.records import GameResult

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
# Two blocks of deals: at least two chains (claims hold chains: the streams that
# share a deal).
PLAN = Plan(game="furious-five", bots=tuple(BotSpec(f"r{i}", RANDOM) for i in range(3)),
            table_size=2, games_per_table=2 * (DEAL_BLOCK + 1), options={"rounds": 1},
            control=TimeControl(move=2.0, bank=10.0))
EVERY_GAME = {(table, game) for table in range(3) for game in range(PLAN.games_per_table)}
CHAINS = PLAN.chains()


def games_of(chain: Chain) -> set[tuple[int, int]]:
    return {(stream.table, g) for stream in chain for g in stream.games}


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
    # Without claims each arena would play every chain it found unplayed.
    assert sum(played.values()) == len(EVERY_GAME), played


async def test_a_chain_whose_holder_died_is_taken_over_when_its_lease_ends(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    store = Store(url)
    tid = create_tournament(store, PLAN)
    assert store.claim(tid, chain_name(CHAINS[0]), "a dead arena", 1.5)
    played = {"a": 0}
    began = time.monotonic()
    await run_tournament(PLAN, store, tid, parallel=2, retry_seconds=0.2,
                         on_game=counter(played, "a"))  # type: ignore[arg-type]
    assert time.monotonic() - began >= 1.0  # it waited for the lease to end
    assert store.done_games(tid) == EVERY_GAME and played["a"] == len(EVERY_GAME)
    # Every claim was released: another arena may take any chain at once.
    assert all(store.claim(tid, chain_name(chain), "another arena", 60) for chain in CHAINS)


async def test_an_arena_waits_for_a_live_holder_then_plays_its_chain(tmp_path: Path) -> None:
    """A chain held by another arena is not played while that arena holds it;
    once it is released, it is."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    store = Store(url)
    tid = create_tournament(store, PLAN)
    name = chain_name(CHAINS[-1])
    assert store.claim(tid, name, "a live arena", 60)
    held = games_of(CHAINS[-1])
    assert held and held != EVERY_GAME
    played = {"a": 0}

    async def holder() -> None:
        with trio.fail_after(120):
            while store.done_games(tid) != EVERY_GAME - held:
                await trio.sleep(0.1)
        await trio.sleep(1.0)  # the arena looks again every 0.2 s meanwhile
        assert store.done_games(tid) == EVERY_GAME - held
        store.release(tid, name, "a live arena")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(holder)
        nursery.start_soon(functools.partial(
            run_tournament, PLAN, store, tid, parallel=2, retry_seconds=0.2,
            on_game=counter(played, "a")))  # type: ignore[arg-type]
    assert store.done_games(tid) == EVERY_GAME and played["a"] == len(EVERY_GAME)


async def test_a_chain_whose_holder_was_killed_here_is_taken_over_at_once(
        tmp_path: Path) -> None:
    """An arena killed (say, kill -9) and resumed on the same machine need not
    wait for its old claims' leases: their process is gone."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    store = Store(url)
    tid = create_tournament(store, PLAN)
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert store.claim(tid, chain_name(CHAINS[-1]), f"{socket.gethostname()}:{gone.pid}:0", 600)
    began = time.monotonic()
    await run_tournament(PLAN, store, tid, parallel=2, retry_seconds=0.2)
    assert store.done_games(tid) == EVERY_GAME
    assert time.monotonic() - began < 300  # not the 600 s lease
