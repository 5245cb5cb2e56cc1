"""Deal isolation: two processes that play the same deal in different games are
never alive at the same time, and nothing a process writes outlives it.

A covert bot (``tests/bots/spy_bot.py``) publishes the hand it was dealt through
POSIX locks on its own read-only program file and a file in /tmp, and watches
for hands published by copies of itself, all the time, from its start.  Real
processes in the real bubblewrap sandbox; tournament, match and ladder at -j 1
and -j 2, in-process and on a local Dask cluster.  A control shows that the
channel does pass a hand when two copies play one deal at the same time.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pytest
import trio

from arena.formats.schedule import Ladder, Match
from arena.games import make_game
from arena.runner.client import TimeControl
from arena.runner.ladder import create_ladder, run_ladder
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.referee import play_single_game
from arena.runner.sandbox import resolve
from arena.runner.tournament import match_test, run_match, run_tournament
from arena.store.database import Store
from tests.marked import wait_gone

HERE = Path(__file__).resolve().parent
SPY = BotSpec("spy", f"{sys.executable} {HERE / 'bots' / 'spy_bot.py'}")
HONEST = [BotSpec(f"h{i}", f"{sys.executable} {HERE / 'bots' / 'deal_log_bot.py'}")
          for i in (1, 2)]
CONTROL = TimeControl(handshake=20.0, move=5.0, bank=30.0)
GAME = make_game("furious-five", 2, {"rounds": 1})
RANKS, SUITS = "A23456789TJQK", "cdhs"


def mask(hand: Iterable[str]) -> int:
    return sum(1 << (SUITS.index(card[1]) * 13 + RANKS.index(card[0])) for card in hand)


def hands_of(seeds: Iterable[int]) -> dict[int, frozenset[int]]:
    """Each hand (as a card mask) dealt in these deals -> every hand of its deal."""
    deal_of: dict[int, frozenset[int]] = {}
    for seed in set(seeds):
        state = GAME.new_state(seed)
        hands = frozenset(mask(state.observation(seat)["hand"]) for seat in range(2))
        for hand in hands:
            assert hand not in deal_of, "a hand must identify its deal"
            deal_of[hand] = hands
    return deal_of


def spy_lines(tails: Iterable[str]) -> list[dict]:
    return [json.loads(line[4:]) for tail in tails for line in tail.splitlines()
            if line.startswith("SPY ")]


def stored_tails(store: Store, tid: int) -> list[str]:
    tails = []
    for game in store.games(tid):
        record = store.record(game.id)
        assert record is not None
        tails += record.stderr
    return tails


def passed_hands(lines: list[dict], deal_of: dict[int, frozenset[int]]) -> list[dict]:
    """The lines at which a process knew a hand (any seen so far, by any channel)
    of the deal it was playing: every hand of that deal is another game's."""
    passed = []
    by_process: dict[str, list[dict]] = defaultdict(list)
    for line in lines:
        by_process[line["process"]].append(line)
    for process_lines in by_process.values():
        known: set[int] = set()
        for line in sorted(process_lines, key=lambda entry: entry["seq"]):
            known |= set(line["seen"])
            if known & deal_of[line["hand"]]:
                passed.append(line)
    return passed


def assert_no_hand_passes(store: Store, tid: int, seeds: Iterable[int],
                          spy_games: int) -> None:
    lines = spy_lines(stored_tails(store, tid))
    assert not any(g.faults for g in store.games(tid))
    # Every spy game was logged (the spy's first request of each game).
    assert len([line for line in lines if not line["seen"]]) >= spy_games
    assert passed_hands(lines, hands_of(seeds)) == []


def every_seed(plan: Plan) -> set[int]:
    """Every deal seed the plan's tables play (each table its own, unless same_deals)."""
    deals = plan.deal_seeds()
    return {deals.seed(t, d) for t in range(len(plan.tables()))
            for d in range(plan.games_per_table // plan.table_size)}


def plan_of(parallel_format: str, games_per_table: int, seed: int = 11) -> Plan:
    plan = Plan(game="furious-five", bots=(SPY, *HONEST), table_size=2,
                games_per_table=games_per_table, options={"rounds": 1}, seed=seed,
                control=CONTROL, sandbox="bwrap")
    if parallel_format == "match":
        return dataclasses.replace(plan, bots=(SPY, HONEST[0]),
                                   format=Match())
    if parallel_format == "ladder":
        return dataclasses.replace(plan, games_per_table=2, format=Ladder())
    return plan


@pytest.fixture(autouse=True)
def needs_bwrap() -> None:
    resolve("bwrap")  # SandboxError (a failed test) where bubblewrap cannot run


async def test_the_channel_passes_a_hand_between_two_games_of_one_deal_played_at_once(
        ) -> None:
    """The control: two copies playing one deal in two games at once (seats
    swapped, as two seat rotations would) do learn each other's hand, through
    the sandbox, when they share their program file (without the private copy
    of each process's files, which closes this channel even between copies
    alive together: tests/test_side_channels.py)."""
    sandbox = dataclasses.replace(resolve("bwrap"), private_copy=False)
    seed = 4242
    results = []

    async def play(specs: list[BotSpec]) -> None:
        results.append(await play_single_game(GAME, seed, specs, CONTROL, sandbox))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(play, [SPY, HONEST[0]])
        nursery.start_soon(play, [HONEST[0], SPY])
    lines = spy_lines(tail for result in results for tail in result.record.stderr)
    assert {line["hand"] for line in lines} == hands_of([seed])[mask(
        GAME.new_state(seed).observation(0)["hand"])]
    assert len({line["process"] for line in passed_hands(lines, hands_of([seed]))}) == 2


@pytest.mark.parametrize(("parallel", "same_deals"), [(1, False), (2, True)])
def test_no_hand_passes_in_a_tournament(tmp_path: Path, parallel: int,
                                        same_deals: bool) -> None:
    # Three tables (spy-h1, spy-h2, h1-h2), 10 deals each: two blocks; each table
    # its own deals, or (the harder case) the same deals at every table.
    plan = dataclasses.replace(plan_of("tournament", 20), same_deals=same_deals)
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    tid = create_tournament(store, plan)
    trio.run(lambda: run_tournament(plan, store, tid, parallel=parallel))
    assert len(store.done_games(tid)) == plan.total_games
    assert_no_hand_passes(store, tid, every_seed(plan), spy_games=2 * 20)


@pytest.mark.parametrize("parallel", [1, 2])
def test_no_hand_passes_in_a_match(tmp_path: Path, parallel: int) -> None:
    plan = plan_of("match", 2 * 8)  # at most 8 pairs: 4 blocks
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    tid = create_tournament(store, plan)
    test = match_test(plan, [])
    trio.run(lambda: run_match(plan, store, tid, test, parallel=parallel))
    assert len(store.done_games(tid)) == 16
    assert_no_hand_passes(store, tid, every_seed(plan), spy_games=16)


@pytest.mark.parametrize("parallel", [1, 2])
def test_no_hand_passes_in_a_ladder(tmp_path: Path, parallel: int) -> None:
    plan = plan_of("ladder", 2)
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    tid = create_ladder(store, plan)
    trio.run(lambda: run_ladder(plan, store, tid, lambda: plan.bots, parallel=parallel,
                                max_groups=6))
    assert len(store.done_games(tid)) == 12
    spied = sum(1 for g in store.games(tid) if "spy" in g.seats)
    assert_no_hand_passes(store, tid, [plan.deal_seeds().seed(n, 0) for n in range(6)],
                          spy_games=spied)


def test_no_hand_passes_on_a_local_dask_cluster(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    plan = dataclasses.replace(plan_of("tournament", 20), same_deals=True)
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    tid = create_tournament(store, plan)
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                      dashboard_address=None, silence_logs=40) as local, \
            Client(local) as client:
        trio.run(lambda: run_tournament(plan, store, tid, parallel=4, client=client))
    assert len(store.done_games(tid)) == plan.total_games
    assert_no_hand_passes(store, tid, every_seed(plan), spy_games=2 * 20)
    assert wait_gone("spy_bot.py") == []
