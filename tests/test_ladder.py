"""The continuous ladder (issue 11 §3): the table picker on its own, the ladder with
real subprocess bots of known strength, stop and resume, and ``arena ladder``."""

from __future__ import annotations

import itertools
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.cli import main
from arena.formats.ladder import STALEST_EVERY, LadderState, pick_table, table_rng
from arena.formats.schedule import Ladder
from arena.formats.tables import ConfigError
from arena.runner.ladder import create_ladder, run_ladder
from arena.runner.plan import Plan
from arena.runner.process import BotSpec
from arena.store.database import Store
from arena.store.engine import StorageError
from arena.store.records import GameResult
from reports.stats import rate
from sample_bots import command
from tests.marked import bot_command, stored_keys, wait_gone

# -- the picker, without processes ---------------------------------------------------------


def names(n: int, prefix: str = "b") -> list[str]:
    return [f"{prefix}{i:02d}" for i in range(n)]


def play(state: LadderState, entrants: Sequence[str], seats: int, tables: int,
         seed: int = 1) -> list[tuple[str, ...]]:
    """Pick and count ``tables`` tables; the tables picked."""
    picked = []
    for _ in range(tables):
        table = pick_table(state, entrants, seats, table_rng(seed, state.tables))
        state.add(table)
        picked.append(table)
    return picked


def longest_wait(tables: Sequence[Sequence[str]], entrant: str) -> int:
    """The most tables between two of ``entrant``'s tables (or from the start to its first)."""
    seen = [-1] + [i for i, table in enumerate(tables) if entrant in table]
    return max(b - a for a, b in itertools.pairwise(seen))


def test_a_table_is_distinct_entrants_and_a_pure_function_of_state_and_seed() -> None:
    history = play(LadderState(), names(7), 3, 40)
    assert all(len(set(table)) == 3 for table in history)
    again = LadderState.of(history[:20])
    assert play(again, names(7), 3, 20) == history[20:]
    with pytest.raises(ConfigError, match="2 active entrant"):
        pick_table(LadderState(), ["a", "b", "a"], 3, random.Random(1))


def test_a_new_entrant_gets_the_next_tables_until_it_has_caught_up() -> None:
    state = LadderState()
    play(state, names(12), 2, 300)
    fewest = min(state.played.values())
    after = play(state, [*names(12), "new"], 2, 2 * fewest)
    with_new = [i for i, table in enumerate(after) if "new" in table]
    assert with_new[0] == 0
    # Seeded on every table but the least-recently-played ones, so at least 3 of every 4.
    caught_up = next(i for i in range(len(after))
                     if sum(1 for t in after[:i + 1] if "new" in t) >= fewest)
    assert len([i for i in with_new if i <= caught_up]) >= (caught_up + 1) * 3 // 4
    assert caught_up < fewest * STALEST_EVERY // 3 + 1


@pytest.mark.parametrize(("bots", "seats"), [(12, 2), (12, 3), (14, 4), (5, 3)])
def test_every_entrant_plays_often_and_pairs_meet_evenly(bots: int, seats: int) -> None:
    entrants = names(bots)
    state = LadderState()
    history = play(state, entrants, seats, 50 * bots // seats)
    for name in entrants:
        # Guaranteed: every STALEST_EVERY-th table seats whoever waited longest.
        assert longest_wait(history, name) <= STALEST_EVERY * bots
        # In practice the fewest-tables seeding keeps it near a round's length.
        assert longest_wait(history, name) <= 2 * bots // seats + STALEST_EVERY
    played = [state.played[name] for name in entrants]
    assert max(played) - min(played) <= 2
    met = [state.met[a, b] for a, b in itertools.combinations(entrants, 2)]
    assert max(met) - min(met) <= (1 if seats == 2 else 3)


def test_entrants_joining_together_never_starve_the_others() -> None:
    state = LadderState()
    history = play(state, names(12), 2, 120)
    everyone = [*names(12), *names(6, "new")]
    history += play(state, everyone, 2, 200)
    for name in names(12):
        assert longest_wait(history[120:], name) <= STALEST_EVERY * len(everyone)
    assert min(state.played[name] for name in names(6, "new")) >= 10


def test_a_retired_entrant_gets_no_new_table() -> None:
    state = LadderState()
    play(state, names(6), 2, 30)
    later = play(state, names(6)[1:], 2, 60)
    assert not any("b00" in table for table in later)
    assert state.played["b00"] > 0  # its tables stay counted


# -- storing a ladder's tables -------------------------------------------------------------

def ladder_plan(bots: Sequence[BotSpec], game: str = "furious-five",
                options: dict[str, str] | None = None, seed: int = 1) -> Plan:
    return Plan(game=game, bots=tuple(bots), table_size=2, games_per_table=2,
                options=options or {"rounds": "1"}, seed=seed, sandbox="none", format=Ladder())


def test_append_table_grows_a_tournament_and_its_bots_once(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    tid = create_ladder(store, ladder_plan([BotSpec("a", "x"), BotSpec("b", "y")]))
    store.append_table(tid, 0, ["b", "a"], games=2)
    store.append_table(tid, 1, ["c", "a"], games=2, configs=[{"name": "c", "command": "z"},
                                                    {"name": "a", "command": "other"}])
    stored = store.tournament(tid)
    assert stored is not None
    assert stored["tables"] == [["b", "a"], ["c", "a"]]
    assert stored["total_games"] == 4
    assert [(b["name"], b["command"]) for b in stored["config"]["bots"]] == [
        ("a", "x"), ("b", "y"), ("c", "z")]
    with pytest.raises(StorageError):
        store.append_table(tid, 1, ["a", "b"], games=2)
    assert store.tournament(tid)["tables"] == stored["tables"]  # type: ignore[index]


# -- the ladder with real bots -------------------------------------------------------------

#: Bots of known strength: five-or-less's heuristic mixed with random play
#: (docs/sample_bots.md).  The weakest (random) and the strongest (the heuristic)
#: stand 0.25 apart from the rest, the ten between 0.25 and 0.75 0.056 apart.
FIELD = [0.0, *(0.25 + 0.5 * i / 9 for i in range(10)), 1.0]
#: Entrants added mid-run: (strength, games played by the ladder when they join).
LATE = {"late-a": (0.6, 80), "late-b": (0.4, 140)}
#: Tables the simulation plays (two games each).
GROUPS = 150
#: A new entrant plays at least 3 of every 4 tables until it has caught up: 5 of its
#: first 7, 10 games (docs/formats.md).
NEW_TABLES, NEW_WITHIN = 5, 7


def strength_bot(name: str, strength: float, seed: int) -> BotSpec:
    return BotSpec(name, f"{command('five_or_less_heuristic')} --strength {strength:.4f} "
                         f"--seed {seed}")


def kendall_tau(xs: Sequence[float], ys: Sequence[float]) -> float:
    concordant = discordant = 0
    for i, j in itertools.combinations(range(len(xs)), 2):
        sign = (xs[i] - xs[j]) * (ys[i] - ys[j])
        concordant += sign > 0
        discordant += sign < 0
    return (concordant - discordant) / (concordant + discordant)


async def test_the_ladder_orders_bots_of_known_strength_and_new_ones_play_first(
        tmp_path: Path) -> None:
    strengths = {f"s{i:02d}": p for i, p in enumerate(FIELD)}
    entrants = [strength_bot(name, p, i) for i, (name, p) in enumerate(strengths.items())]
    plan = ladder_plan(entrants, "five-or-less", {"limit": "30"}, seed=7)
    store = Store(f"sqlite:///{tmp_path / 'ladder.db'}")
    tid = create_ladder(store, plan)
    joined: dict[str, int] = {}
    played = 0

    def on_game(_result: GameResult) -> None:
        nonlocal played
        played += 1
        for name, (strength, at) in LATE.items():
            if played == at:
                entrants.append(strength_bot(name, strength, len(entrants)))
                strengths[name] = strength
                joined[name] = len(store.tournament(tid)["tables"])  # type: ignore[index]

    # Four games at once on two cores: each group starts its own bots, and two groups
    # in flight keep the cores busy while one group's bots start.
    await run_ladder(plan, store, tid, lambda: entrants, parallel=4, max_groups=GROUPS,
                     on_game=on_game)

    games = list(store.games(tid))
    assert len(games) == 2 * GROUPS and not any(game.faults for game in games)
    ratings = rate(games, bootstrap=0).ratings
    order = [r.player for r in ratings]
    # Twelve of the fourteen stand 0.056 apart (about 40 games each): neighbours swap
    # now and then, so not every pair is in order; the extremes are far apart.
    tau = kendall_tau([r.estimate for r in ratings], [strengths[name] for name in order])
    assert tau >= 0.7, (tau, order)
    assert order[0] == "s11" and order[-1] == "s00", order
    tables = store.tournament(tid)["tables"]  # type: ignore[index]
    for name, at in joined.items():
        theirs = [i for i, table in enumerate(tables) if name in table]
        # Picked at the next table (one picked meanwhile may have missed it).
        assert theirs[0] <= at + 1, (name, at, theirs[:8])
        assert len([i for i in theirs if i < theirs[0] + NEW_WITHIN]) >= NEW_TABLES


async def test_resume_first_finishes_the_unfinished_tables(tmp_path: Path) -> None:
    bots = [BotSpec(f"r{i}", bot_command(tmp_path / "bots")) for i in range(3)]
    plan = ladder_plan(bots)
    store = Store(f"sqlite:///{tmp_path / 'ladder.db'}")
    tid = create_ladder(store, plan)
    await run_ladder(plan, store, tid, lambda: bots, parallel=2, max_groups=2)
    store.append_table(tid, 2, ["r2", "r0"], games=2)  # as if killed before it played
    await run_ladder(plan, store, tid, lambda: bots, parallel=2, max_groups=3)
    stored = store.tournament(tid)
    assert stored is not None and len(stored["tables"]) == 3
    assert store.done_games(tid) == {(t, g) for t in range(3) for g in range(2)}
    assert {tuple(g.seats) for g in store.games(tid) if g.table == 2} == {
        ("r2", "r0"), ("r0", "r2")}


# -- arena ladder --------------------------------------------------------------------------

def ladder_argv(db: Path, bots: Sequence[str], *more: str, workers: int = 1) -> list[str]:
    sandbox = ("--sandbox", "none") if "-g" in more else ()  # a resume keeps the stored one
    return [sys.executable, "-m", "arena.cli", "ladder", "--db", f"sqlite:///{db}",
            "-j", "2", "--workers", str(workers), *sandbox, *more,
            *(f"-b=r{i}={bot}" for i, bot in enumerate(bots))]


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL])
def test_stop_mid_run_then_resume_plays_every_game_once(tmp_path: Path, stop: int) -> None:
    marker = str(tmp_path / "bots")
    bots = [bot_command(tmp_path / "bots")] * 3
    db = tmp_path / "arena.db"
    first = ladder_argv(db, bots, "-g", "furious-five", "-o", "rounds=1", "--max-groups", "12",
                        "--no-report")
    proc = subprocess.Popen(first, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    while len(stored_keys(db)) < 3 and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, stop)
    _, err = proc.communicate(timeout=60)
    if stop == signal.SIGINT:
        assert proc.returncode == 130, err
        assert "resume with 'arena ladder --resume 1" in err and "--max-groups 12" in err
    assert wait_gone(marker) == [], "a bot outlived the stopped arena"
    keys = stored_keys(db)
    assert len(keys) == len(set(keys)) < 24
    again = subprocess.run([*ladder_argv(db, []), "--resume", "1", "--max-groups", "12",
                            "--no-report"], stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    keys = stored_keys(db)
    assert len(keys) == len(set(keys)) == 24
    assert set(keys) == {(t, g) for t in range(12) for g in range(2)}
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT kind, status FROM tournaments").fetchall() == [
            ("ladder", "finished")]
    assert wait_gone(marker) == []


def test_ladder_on_dask_rerenders_the_report_and_adds_entrants_on_resume(
        tmp_path: Path) -> None:
    db, out = tmp_path / "arena.db", tmp_path / "report"
    bots = [command("random_bot")] * 2
    run = subprocess.run(ladder_argv(db, bots, "-g", "furious-five", "-o", "rounds=1",
                                     "--max-groups", "3", "--report-every", "2",
                                     "--out", str(out), workers=2),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("arena: report: ") >= 2  # every 2 games, and at the end
    assert "ladder 1: 6 games" in run.stderr
    assert (out / "index.html").is_file()
    more = subprocess.run([*ladder_argv(db, [*bots, command("greedy_furious_five")]),
                           "--resume", "1", "--max-groups", "4", "--no-report"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert more.returncode == 0, more.stderr
    with sqlite3.connect(db) as con:
        (last,) = con.execute("SELECT bots FROM tables WHERE number = 3").fetchone()
    assert "r2" in last  # the new entrant plays the next table


@pytest.mark.parametrize(("args", "needle"), [
    (["-g", "five", "-b", "a=python3"], "cannot fill a table of 2"),
    (["-g", "five", "-k", "1", "-b", "a=python3", "-b", "b=python3"], "player"),
    (["-g", "five", "--max-groups", "0", "-b", "a=python3", "-b", "b=python3"],
     "--max-groups must be from 1"),
    (["-g", "five", "--report-minutes", "nan", "-b", "a=python3", "-b", "b=python3"],
     "--report-minutes"),
    (["-g", "five", "--report-every", "-1", "-b", "a=python3", "-b", "b=python3"],
     "--report-every"),
    (["--resume", "1"], "is a tournament: resume it with 'arena tournament --resume 1'"),
    (["--resume", "7"], "no tournament 7"),
])
def test_bad_input_is_one_line_and_stores_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        needle: str) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    store = Store(url)
    store.create_tournament("five", {"game": "five"}, [["a", "b"]], 2)
    create_ladder(store, ladder_plan([BotSpec("a", "python3"), BotSpec("b", "python3")]))
    before = store.tournaments()
    with pytest.raises(SystemExit) as exit_:
        main(["ladder", "--db", url, "--sandbox", "none", "--no-report", *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arena: error: ") and needle in err[0], err
    assert store.tournaments() == before


def test_a_ladder_is_not_resumed_as_a_tournament(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    create_ladder(Store(url), ladder_plan([BotSpec("a", "python3"), BotSpec("b", "python3")]))
    with pytest.raises(SystemExit):
        main(["tournament", "--db", url, "--resume", "1"])
    assert "resume it with 'arena ladder --resume 1'" in capsys.readouterr().err


async def test_an_entrant_renamed_to_another_program_stops_the_ladder(tmp_path: Path) -> None:
    bots = [BotSpec(f"r{i}", command("random_bot")) for i in range(2)]
    plan = ladder_plan(bots)
    store = Store(f"sqlite:///{tmp_path / 'ladder.db'}")
    tid = create_ladder(store, plan)
    renamed = [bots[0], BotSpec("r1", command("greedy_furious_five"))]
    with pytest.raises(BaseExceptionGroup) as raised:
        await run_ladder(plan, store, tid, lambda: renamed, parallel=2, max_groups=1)
    (error,) = raised.value.exceptions
    assert isinstance(error, ConfigError) and "a changed program needs a new name" in str(error)
    assert store.tournament(tid)["tables"] == []  # type: ignore[index]
