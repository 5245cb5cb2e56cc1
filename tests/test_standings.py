"""Standings in the terminal: while a run plays, at its end, and ``arena standings``
from the database; the same figures as the HTML report.  Real bots, real SQLite."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from arena.store.database import Store
from reports.render import Figures, board
from reports.stats import fault_kinds
from tests.test_cli import arena_here, assert_one_line_error

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
GREEDY = f"{sys.executable} -m sample_bots.greedy_furious_five"
BOTS = ["-b", f"a={RANDOM}", "-b", f"b={RANDOM}", "-b", f"g={GREEDY}",
        # time enough on a loaded machine: no timeout changes the figures compared
        "--move-time", "30", "--handshake-time", "60"]


def tables(stderr: str) -> list[list[str]]:
    """The standings blocks printed on stderr: each its title line, header and rows."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("rank ")]
    return [lines[i - 1:i + 4] for i in starts]


def test_a_tournament_prints_standings_as_it_goes_and_at_the_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    run = arena_here(capsys, "tournament", "-g", "furious-five", "-o", "rounds=2", *BOTS,
                     "-n", "8", "-j", "1", "--standings-every", "6", "--db", db)
    assert run.returncode == 0, run.stderr
    blocks = tables(run.stderr)
    # 24 games, every 6: at least once while it runs (a print still running when a
    # later one falls due merges them), and always at the end.
    assert len(blocks) >= 2, run.stderr
    assert blocks[-1][0] == "tournament 1: furious-five, 24 games"
    assert blocks[-1][1].split() == ["rank", "bot", "Elo", "[95%]", "games", "score", "avg",
                                     "place", "firsts", "faults", "later"]
    assert {row.split()[1] for row in blocks[-1][2:]} == {"a@1", "b@1", "g@1"}

    again = arena_here(capsys, "standings", "-t", "1", "--db", db)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == blocks[-1]


def test_standings_json_are_the_reports_figures(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    run = arena_here(capsys, "tournament", "-g", "furious-five", "-o", "rounds=2", *BOTS,
                     "-n", "6", "--standings-every", "0", "--db", db)
    assert run.returncode == 0, run.stderr
    assert len(tables(run.stderr)) == 1  # 0: only at the end
    out = json.loads(arena_here(capsys, "standings", "-t", "1", "--json", "--db", db).stdout)
    (table,) = out["standings"]
    store = Store(db)
    games = list(store.games(1))
    rows = board(games, Figures(200), {}, fault_kinds(games))
    assert [r["bot"] for r in table["standings"]] == [row.bot for row in rows]
    for mine, theirs in zip(table["standings"], rows, strict=True):
        assert theirs.rating is not None
        assert mine["elo_text"] == theirs.elo
        assert mine["games"] == theirs.tally.games and mine["firsts"] == theirs.tally.firsts
        assert mine["average_place"] == theirs.tally.average_place
    assert sum(r["firsts"] for r in table["standings"]) >= 18  # every game has a winner
    assert table["games"] == 18


def test_a_match_shows_its_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    run = arena_here(capsys, "match", "-g", "furious-five", "-o", "rounds=1",
                     "-b", f"g={GREEDY}", "-b", f"r={RANDOM}", "--max-pairs", "6",
                     "--move-time", "30", "--handshake-time", "60", "--db", db)
    assert run.returncode in (0, 3), run.stderr
    assert "LLR" in run.stdout and len(tables(run.stderr)) == 1
    progress = [line for line in run.stderr.splitlines() if "games/s" in line]
    assert progress and all("/12 games" not in line and "ETA" not in line
                            for line in progress)  # --max-pairs is no total
    out = json.loads(arena_here(capsys, "standings", "-t", "1", "--json", "--db", db).stdout)
    match = out["standings"][0]["match"]
    assert match["verdict"] in ("H0", "H1", "inconclusive")
    assert match["lower"] < 0 < match["upper"]
    assert len(match["pairs"]) == 5 and sum(match["pairs"]) + match["void_pairs"] <= 6
    text = arena_here(capsys, "standings", "-t", "1", "--db", db).stdout
    assert "LLR" in text and "pairs by g@1's points" in text
    # greedy often wins every pair of 6: never "Elo +inf +/- nan", nor any other inf/nan
    assert not re.search(r"\b(inf|nan)\b", run.stdout + run.stderr + text), text


def test_a_ladder_ends_with_its_standings_and_pools_are_listed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path}/t.db"
    run = arena_here(capsys, "ladder", "-g", "furious-five", "-o", "rounds=1", *BOTS,
                     "--max-groups", "3", "--no-report", "--db", db)
    assert run.returncode in (0, 3), run.stderr
    assert tables(run.stderr)[-1][0] == "ladder 1: furious-five, 6 games"
    pools = arena_here(capsys, "standings", "--db", db)
    assert pools.returncode == 0 and pools.stdout.startswith("pool furious-five")
    one = arena_here(capsys, "standings", "--pool", "furious-five", "--db", db)
    assert one.stdout == pools.stdout
    assert_one_line_error(arena_here(capsys, "standings", "--pool", "five", "--db", db),
                          "no pool 'five'", "furious-five")
    assert_one_line_error(arena_here(capsys, "standings", "-t", "9", "--db", db), "no tournament 9")
