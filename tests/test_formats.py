"""The tournament formats as users run them: real subprocess bots, real SQLite.

Round robin with a balanced schedule, gauntlet and SPRT match: the stored tables
and games follow the schedule, a resume reads the stored tables, a match stops
on its bound with no half pair left, and bad input is one line with nothing stored.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path

import pytest

from arena.cli import main
from arena.formats.schedule import MATCH_BLOCK, RoundRobin, seating
from arena.formats.tables import gauntlet_tables, round_robin
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.tournament import match_test
from arena.stats.match_stats import Pentanomial, Sprt
from arena.store.database import Store, StoredGame
from tests.test_cli import RANDOM, arena_here, assert_one_line_error, dump

GREEDY = f"{sys.executable} -m sample_bots.greedy_furious_five"
#: Quick games, played in this process (no worker processes to start).
QUICK = ["-g", "furious-five", "-o", "rounds=1", "--workers", "1"]


def randoms(*names: str) -> list[str]:
    return [arg for name in names for arg in ("-b", f"{name}={RANDOM}")]


def stored(path: Path) -> tuple[Store, dict, list[StoredGame]]:
    store = Store(f"sqlite:///{path}")
    tournament = store.tournaments()[-1]
    return store, tournament, list(store.games(tournament["id"]))


def assert_games_follow_the_tables(store: Store, tournament: dict,
                                   games: list[StoredGame]) -> None:
    """Every game of every stored table, once, seated by its rotation, on the
    deal its number says (each table its own deals)."""
    config = tournament["config"]
    plan = Plan.from_stored(tournament, store.deal_secret(tournament["id"]))
    k, n = config["table_size"], config["games_per_table"]
    names = [b["name"] for b in config["bots"]]
    seeds = plan.deal_seeds()
    expected = {(t, g, tuple(names[b] for b in seating(table, g % k)), seeds.seed(t, g // k))
                for t, table in enumerate(plan.tables()) for g in range(n)}
    assert {(g.table, g.number, tuple(g.seats), g.seed) for g in games} == expected
    assert len(games) == len(expected)


def test_round_robin_plays_a_balanced_schedule_when_combinations_are_too_many(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    names = [f"r{i}" for i in range(6)]
    proc = arena_here(capsys, "tournament", *QUICK, "-k", "3", "-n", "3", *randoms(*names),
                      "--max-tables", "4", "--seed", "3", "-j", "2",
                      "--db", f"sqlite:///{tmp_path / 'a.db'}")
    assert proc.returncode == 0, proc.stderr
    assert "arena: round robin: 4 of 20 tables, balanced" in proc.stderr
    store, tournament, games = stored(tmp_path / "a.db")
    assert tournament["kind"] == "tournament" and tournament["status"] == "finished"
    assert tournament["config"]["format"] == {"name": "round-robin", "max_tables": 4}
    # The stored tables are the balanced schedule: every bot at 2 tables, pairs 0-1 times.
    schedule = round_robin(6, 3, 4, seed=3)
    labels = [f"{name}@1" for name in names]  # each an ad-hoc version (docs/bots.md)
    assert tournament["tables"] == [[labels[b] for b in table] for table in schedule]
    assert Counter(b for t in tournament["tables"] for b in t) == {n: 2 for n in labels}
    assert_games_follow_the_tables(store, tournament, games)
    seats = Counter((name, seat) for g in games for seat, name in enumerate(g.seats))
    assert seats == {(name, seat): 2 for name in labels for seat in range(3)}


def test_resume_plays_the_stored_tables_not_a_new_schedule(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "a.db"
    bots = tuple(BotSpec(f"r{i}", RANDOM) for i in range(6))
    plan = Plan(game="furious-five", bots=bots, table_size=3, games_per_table=3,
                options={"rounds": 1}, seed=3, format=RoundRobin(max_tables=4))
    store = Store(f"sqlite:///{path}")
    tid = create_tournament(store, plan)
    store.close()
    # Edit what a recomputation would use (the format: now every combination,
    # 20 tables) and one stored table (other bots, another seat order).
    with sqlite3.connect(path) as conn:
        config = json.loads(conn.execute("select config from tournaments").fetchone()[0])
        config["format"]["max_tables"] = 1000
        conn.execute("update tournaments set config = ?", (json.dumps(config),))
        conn.execute("update tables set bots = ? where number = 0",
                     (json.dumps(["r5", "r0", "r4"]),))
    proc = arena_here(capsys, "tournament", "--resume", str(tid), "--db", f"sqlite:///{path}",
                      "-j", "2", "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    store, tournament, games = stored(path)
    assert len(tournament["tables"]) == 4 and tournament["tables"][0] == ["r5", "r0", "r4"]
    assert_games_follow_the_tables(store, tournament, games)
    assert {tuple(g.seats) for g in games if g.table == 0} == \
        {("r5", "r0", "r4"), ("r0", "r4", "r5"), ("r4", "r5", "r0")}


def test_gauntlet_seats_one_challenger_with_the_field_at_every_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    names = ["new", "old", "f1", "f2", "f3"]
    proc = arena_here(capsys, "tournament", *QUICK, "-k", "3", "-n", "3", *randoms(*names),
                      "--challenger", "new", "--challenger", "old", "--max-tables", "6",
                      "--seed", "1", "-j", "2", "--db", f"sqlite:///{tmp_path / 'a.db'}")
    assert proc.returncode == 0, proc.stderr
    assert "arena: gauntlet: 2 challenger(s) at 6 tables of 3" in proc.stderr
    store, tournament, games = stored(tmp_path / "a.db")
    assert tournament["kind"] == "gauntlet"
    # --challenger names a bot; the format holds its label (docs/bots.md)
    assert tournament["config"]["format"]["challengers"] == ["new@1", "old@1"]
    schedule = gauntlet_tables([0, 1], [2, 3, 4], 3, 6, seed=1)
    labels = [f"{name}@1" for name in names]
    assert tournament["tables"] == [[labels[b] for b in table] for table in schedule]
    for table in tournament["tables"]:
        assert len({"new@1", "old@1"} & set(table)) == 1
    for challenger in ("new@1", "old@1"):
        met = Counter(b for t in tournament["tables"] if challenger in t for b in t)
        assert [met[f] for f in ("f1@1", "f2@1", "f3@1")] == [2, 2, 2]
    assert_games_follow_the_tables(store, tournament, games)


def match_pairs(games: list[StoredGame]) -> dict[int, list[StoredGame]]:
    pairs: dict[int, list[StoredGame]] = {}
    for game in sorted(games, key=lambda g: g.number):
        pairs.setdefault(game.number // 2, []).append(game)
    return pairs


def test_match_stops_on_its_bound_and_leaves_no_half_pair(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    proc = arena_here(capsys, "match", "-g", "furious-five", "-o", "rounds=1",
                      "-b", f"greedy={GREEDY}", "-b", f"random={RANDOM}", "--elo0", "0",
                      "--elo1", "300", "--sprt-model", "logistic", "-j", "4",
                      "--db", f"sqlite:///{tmp_path / 'm.db'}")
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("match 1: greedy@1 vs random@1, furious-five: H")
    assert "LLR" in proc.stdout and "(-2.94, 2.94) [0.00, 300.00] Elo, logistic model" \
        in proc.stdout
    store, tournament, games = stored(tmp_path / "m.db")
    assert tournament["kind"] == "match" and tournament["status"] == "finished"
    assert tournament["tables"] == [["greedy@1", "random@1"]]
    pairs = match_pairs(games)
    for a, b in (p for p in pairs.values() if len(p) == 2):
        assert a.seed == b.seed  # one deal, seats swapped
        assert a.seats == ["greedy@1", "random@1"] and b.seats == ["random@1", "greedy@1"]
    assert all(len(pair) == 2 for pair in pairs.values()), "a half pair was left"
    # At most one block of deals per chain at once (5 at -j 4: 4 and one starting
    # its bots) was in flight when the test stopped.
    plan = Plan.from_stored(tournament, store.deal_secret(tournament["id"]))
    test = match_test(plan, games)
    assert test.outcome in ("H0", "H1") and test.outcome in first
    assert len(pairs) - test.next_deal <= 5 * MATCH_BLOCK
    # The bound was crossed by the last counted pair, not before.
    sprt = Sprt(0, 300, model="logistic")
    points = [(float(a.places[0] < a.places[1]) + 0.5 * (a.places[0] == a.places[1]),
               float(b.places[1] < b.places[0]) + 0.5 * (b.places[0] == b.places[1]))
              for a, b in (pairs[d] for d in range(test.next_deal))]
    assert test.counted == Pentanomial.of(points)
    assert sprt.bounds.verdict(sprt.llr(Pentanomial.of(points[:-1]))) is None
    assert f"after {test.next_deal} pairs" in first


def test_match_resume_plays_the_missing_games_and_recomputes_the_test(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "m.db"
    db = f"sqlite:///{path}"
    proc = arena_here(capsys, "match", "-g", "furious-five", "-o", "rounds=1", *randoms("a", "b"),
                      "--max-pairs", "3", "-j", "2", "--db", db)
    assert proc.returncode == 0, proc.stderr
    assert "inconclusive: no bound crossed in 3 pairs (--max-pairs)" in proc.stdout
    before = {(g.number, tuple(g.seats)) for g in stored(path)[2]}
    with sqlite3.connect(path) as conn:  # lose a whole pair and half of another
        ids = [row[0] for row in conn.execute("select id from games where number in (2, 3, 5)")]
        marks = ",".join("?" * len(ids))
        for table in ("records", "faults", "move_logs", "replay_views"):
            conn.execute(f"delete from {table} where game_id in ({marks})", ids)
        conn.execute(f"delete from games where id in ({marks})", ids)
        conn.execute("update tournaments set status = 'interrupted'")  # else finished
    wrong = arena_here(capsys, "tournament", "--resume", "1", "--db", db)
    assert_one_line_error(wrong, "is a match", "arena match --resume 1")
    resumed = arena_here(capsys, "match", "--resume", "1", "--db", db, "-j", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert "(3 played in" in resumed.stderr
    assert "inconclusive" in resumed.stdout and "after 3 pairs" in resumed.stdout
    assert {(g.number, tuple(g.seats)) for g in stored(path)[2]} == before


def test_help_names_the_formats_flags(capsys: pytest.CaptureFixture[str]) -> None:
    tournament = arena_here(capsys, "tournament", "--help")
    assert tournament.returncode == 0
    for flag in ("--max-tables", "--challenger", "--resume", "docs/formats.md"):
        assert flag in tournament.stdout
    match = arena_here(capsys, "match", "--help")
    assert match.returncode == 0
    for flag in ("--elo0", "--elo1", "--alpha", "--beta", "--sprt-model", "--max-pairs",
                 "normalized", "bayesian"):
        assert flag in match.stdout


@pytest.fixture
def existing(tmp_path: Path) -> Path:
    """A database holding one tournament, which bad input must leave alone."""
    path = tmp_path / "existing.db"
    store = Store(f"sqlite:///{path}")
    store.create_tournament("furious-five", {"game": "furious-five"}, [["a", "b"]], 2)
    store.close()
    return path


TWO = ["-b", f"a={RANDOM}", "-b", f"b={RANDOM}"]


@pytest.mark.parametrize(("args", "needles"), [
    (["tournament", "-g", "furious-five", *TWO, "--max-tables", "0"], ["--max-tables", "0"]),
    (["tournament", "-g", "furious-five", *TWO, "--max-tables", "99999999"], ["--max-tables"]),
    (["tournament", "-g", "furious-five", *TWO, "--max-tables", "many"], ["--max-tables"]),
    (["tournament", "-g", "furious-five", *TWO, "--challenger", "c"],
     ["--challenger 'c' is not one of the bots (a@1, b@1)"]),
    (["tournament", "-g", "furious-five", *TWO, "-b", f"c={RANDOM}", "-k", "3",
      "--challenger", "a", "--challenger", "b"], ["needs at least 2 field bots"]),
    (["tournament", "-g", "furious-five", *TWO, "--challenger", "a", "--challenger", "a"],
     ["given twice"]),
    (["tournament", "-g", "octablitz", *TWO, "-b", f"c={RANDOM}", "-b", f"d={RANDOM}",
      "-b", f"e={RANDOM}", "-k", "5"], ["octablitz is for 3-4 players, not 5"]),
    (["tournament", "-g", "furious-five", *TWO, "-n", "1000000000"], ["at most 100000"]),
    (["match", "-g", "octablitz", *TWO], ["a match is for two players", "octablitz"]),
    (["match", "-g", "furious-five", *TWO, "-b", f"c={RANDOM}"], ["exactly two bots"]),
    (["match", "-g", "furious-five", *TWO, "--elo0", "5", "--elo1", "5"],
     ["--elo0 (5) must be below --elo1 (5)"]),
    (["match", "-g", "furious-five", *TWO, "--alpha", "0"], ["--alpha", "between 0 and 1"]),
    (["match", "-g", "furious-five", *TWO, "--beta", "1.5"], ["--beta"]),
    (["match", "-g", "furious-five", *TWO, "--elo1", "nan"], ["finite"]),
    (["match", "-g", "furious-five", *TWO, "--elo1", "300"], ["within +/-200 nElo"]),
    (["match", "-g", "furious-five", *TWO, "--max-pairs", "0"], ["--max-pairs", "not 0"]),
    (["match", "-g", "furious-five", *TWO, "--sprt-model", "gauss"], ["--sprt-model"]),
    (["match", "-g", "furious-five", *TWO, "-j", "0"], ["--parallel"]),
    (["match", "--resume", "1"], ["is a tournament", "arena tournament --resume 1"]),
    (["match", "--resume", "7"], ["no tournament 7"]),
])
def test_bad_input_is_one_line_and_stores_nothing(
        args: list[str], needles: list[str], existing: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # In this process, for speed: main() is all the command runs.
    monkeypatch.chdir(tmp_path)
    before = dump(existing)
    with pytest.raises(SystemExit) as stopped:
        main([*args, "--db", f"sqlite:///{existing}"])
    assert stopped.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), lines
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert dump(existing) == before
    assert {p.name for p in tmp_path.iterdir()} <= {"existing.db", "existing.db-wal",
                                                     "existing.db-shm"}
