"""The rotation-order test (issue 28 point 4): a block's seat rotations play in an
order drawn from the deal secret, reproducible from it and kept by a resume; a bot
that carries what it saw of a deal from an earlier rotation to a later one is
flagged; honest bots are flagged no more often than the level allows; the
standings (text and JSON), the report and the server's leaderboard show it."""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import trio

from arena.formats.deals import deal_seed, secret_key
from arena.formats.schedule import DEAL_BLOCK
from arena.runner.plan import Plan, create_tournament, new_secret
from arena.runner.process import BotSpec
from arena.runner.tournament import run_tournament
from arena.stats.rotation_learning import LEVEL, Observation, rotation_learning, rotation_order
from arena.store.database import Store
from reports.render import render_report
from reports.stats import learning, order_blocks
from tests.test_cli import arena_here

HERE = Path(__file__).parent
PYTHON = sys.executable
RANDOM = f"{PYTHON} -m sample_bots.random_bot"
HEURISTIC = f"{PYTHON} -m sample_bots.five_heuristic"
CHEAT = HERE / "bots" / "rotation_cheat_bot.py"
#: A secret whose first block at a table of two plays rotation 1 first, and whose
#: 4 blocks play in both orders.
FIXED_SECRET = "01" * 32


def plan_of(k: int, blocks: int, secret: str | None = None, seed: int | None = None) -> Plan:
    bots = tuple(BotSpec(f"r{i}", RANDOM) for i in range(k))
    return Plan(game="furious-five", bots=bots, table_size=k,
                games_per_table=k * DEAL_BLOCK * blocks, options={"rounds": 1},
                seed=seed, secret=secret, sandbox="none")


def orders(plan: Plan) -> list[tuple[int, ...]]:
    """Each chain's rotations in the order its streams play."""
    return [tuple(s.rotation for s in chain) for chain in plan.chains()]


# -- (a) the order is drawn, reproducible, kept by a resume ---------------------------

def test_the_order_of_rotations_is_drawn_from_the_secret_and_recomputed_from_it() -> None:
    first, second = new_secret(), new_secret()
    a, b = plan_of(3, 24, secret=first), plan_of(3, 24, secret=second)
    assert orders(a) != orders(b)
    assert {o for o in orders(a)} != {(0, 1, 2)}  # not the fixed order
    assert all(sorted(o) == [0, 1, 2] for o in orders(a))
    # Anyone with the revealed secret: the block's first deal seed, then its order.
    for chain in a.chains():
        head = chain[0]
        seed = deal_seed(secret_key(first), head.table, head.block * DEAL_BLOCK)
        assert tuple(s.rotation for s in chain) == rotation_order(seed, 3)
    # The stored configuration and secret give the same order back; a known seed too.
    assert orders(Plan.from_config(a.to_config(), secret=first)) == orders(a)
    known = plan_of(3, 24, seed=7)
    assert orders(Plan.from_config(known.to_config())) == orders(known) != orders(
        plan_of(3, 24, seed=8))
    # A tournament stored before the order was drawn resumes in the fixed order.
    legacy = {key: v for key, v in known.to_config().items() if key != "rotation_order"}
    assert set(orders(Plan.from_config(legacy))) == {(0, 1, 2)}


def test_games_play_in_the_drawn_order_and_a_resume_keeps_it(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/t.db")
    plan = plan_of(2, 4, secret=FIXED_SECRET)
    tid = create_tournament(store, plan)
    stored = 0

    async def interrupted() -> None:
        with trio.CancelScope() as scope:
            def count(_: object) -> None:
                nonlocal stored
                stored += 1
                if stored == 3:  # inside block 0's first-played rotation, 1
                    scope.cancel()
            await run_tournament(plan, store, tid, parallel=1, on_game=count)

    trio.run(interrupted)
    assert 0 < len(store.done_games(tid)) < plan.total_games
    stored_tournament = store.tournament(tid)
    assert stored_tournament is not None
    resumed = Plan.from_stored(stored_tournament, store.deal_secret(tid))
    assert orders(resumed) == orders(plan)
    trio.run(lambda: run_tournament(resumed, store, tid, parallel=1))
    games = sorted(store.games(tid), key=lambda g: g.id)  # ids: the order they were stored
    assert len(games) == plan.total_games
    # Each block's rotations one after another, in the drawn order, across the
    # interruption (a resume in another order would split a rotation's games).
    played: dict[int, list[int]] = defaultdict(list)
    for game in games:
        block, rotation = game.number // 2 // DEAL_BLOCK, game.number % 2
        if played[block][-1:] != [rotation]:
            played[block].append(rotation)
    secret = store.deal_secret(tid)
    assert secret is not None
    for block, rotations in played.items():
        seed = deal_seed(secret_key(secret), 0, block * DEAL_BLOCK)
        assert tuple(rotations) == rotation_order(seed, 2)
    assert {tuple(r) for r in played.values()} == {(0, 1), (1, 0)}  # both orders
    # The stored games give every game's play position back.
    blocks = order_blocks([stored_tournament])
    assert blocks == {tid: DEAL_BLOCK}
    assert set(learning(games, blocks)) == {"r0", "r1"}


# -- (b) and (d): a deliberate cheater is flagged, and the standings say so ------------

def test_a_bot_learning_from_earlier_rotations_is_flagged_everywhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    channel = tmp_path / "channel"
    channel.mkdir()
    db = f"sqlite:///{tmp_path}/t.db"
    # The cheater meets two honest heuristic bots (a gauntlet: every table seats it),
    # 24 blocks of 8 deals at each table: known deals, so the games are the same on
    # every run (about p = 0.001 expected; the fixed seed keeps it from chance).
    run = arena_here(capsys, "tournament", "-g", "five", "-o", "max_hands=1",
                     "-b", f"cheat={PYTHON} {CHEAT} {channel}", "-b", f"heur={HEURISTIC}",
                     "-b", f"heur2={HEURISTIC}", "--challenger", "cheat", "-k", "2",
                     "-n", str(2 * DEAL_BLOCK * 24), "--seed", "5", "--sandbox", "none",
                     "-j", "2", "--workers", "1", "--move-time", "30",
                     "--handshake-time", "60", "--standings-every", "0", "--db", db)
    assert run.returncode == 0, run.stderr
    assert (channel / "records.jsonl").exists()  # the channel was used
    # The standings printed at the end: a column, and a line for the flagged bot.
    header = [line for line in run.stderr.splitlines() if line.startswith("rank ")]
    assert header and header[-1].split()[-1] == "later", run.stderr
    flagged = [line for line in run.stderr.splitlines() if line.startswith("! ")]
    assert len(flagged) == 1 and flagged[0].startswith("! cheat@1 places better"), run.stderr

    out = json.loads(arena_here(capsys, "standings", "-t", "1", "--json", "--db", db).stdout)
    tests = {row["bot"]: row["rotation_learning"] for row in out["standings"][0]["standings"]}
    assert set(tests) == {"cheat@1", "heur@1", "heur2@1"}
    assert tests["cheat@1"]["flagged"] and tests["cheat@1"]["p_value"] < LEVEL
    assert tests["cheat@1"]["advantage"] > 0.05 and tests["cheat@1"]["blocks"] == 48
    assert not tests["heur@1"]["flagged"] and not tests["heur2@1"]["flagged"]
    text = arena_here(capsys, "standings", "-t", "1", "--db", db).stdout
    assert text.splitlines()[1].split()[-1] == "later" and "! cheat@1" in text
    pools = json.loads(arena_here(capsys, "standings", "--json", "--db", db).stdout)
    assert [row["rotation_learning"]["flagged"] for row in pools["standings"][0]["standings"]
            if row["bot"] == "cheat@1"] == [True]
    shown = " ".join(arena_here(capsys, "standings", "--help").stdout.split())
    assert "rotation-order test" in shown.replace("- ", "-")  # argparse wraps at hyphens

    # The HTML report's leaderboard marks it.
    index = render_report(Store(db), tmp_path / "report", bootstrap=20, max_replays=0,
                          processes=1).read_text()
    assert ">Later</th>" in index and index.count("learning-flag") == 1


# -- (c) honest bots: flagged no more often than the level allows ----------------------

def honest_observations(rng: np.random.Generator, k: int, blocks: int,
                        seat_effect: float) -> list[Observation]:
    """One honest bot's games at a table of ``k``: points depend on its seat and
    the deal, never on when the rotation played; one drawn order per block."""
    seats = rng.normal(0, seat_effect, k)
    out = []
    for block in range(blocks):
        order = rng.permutation(k)
        for _ in range(DEAL_BLOCK):
            deal = rng.normal(0, 0.2)
            for position, rotation in enumerate(order):
                chance = 1 / (1 + math.exp(-(seats[rotation] + deal)))
                points = float(rng.random() < chance)
                out.append(Observation("honest", block, position, points, int(rotation)))
    return out


@pytest.mark.parametrize(("k", "blocks", "seat_effect", "trials"), [
    (2, 12, 1.5, 400), (3, 30, 0.5, 300),
    (2, 420, 1.0, 100)])  # beyond NORMAL_FROM units: the normal approximation
def test_honest_bots_are_flagged_at_most_as_often_as_the_level(
        k: int, blocks: int, seat_effect: float, trials: int) -> None:
    rng = np.random.default_rng(2800 + k * blocks)
    flagged = sum(rotation_learning(honest_observations(rng, k, blocks, seat_effect),
                                    replicates=2000)["honest"].flagged
                  for _ in range(trials))
    # Twice the level, plus three binomial standard deviations.
    assert flagged <= 2 * LEVEL * trials + 3 * math.sqrt(trials * LEVEL * (1 - LEVEL))
