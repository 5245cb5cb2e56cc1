"""The ``arena`` command as users run it: real processes, real SQLite."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.games import game_class, make_game
from sample_bots import HEURISTICS

HERE = Path(__file__).resolve().parent
RANDOM = f"{sys.executable} -m sample_bots.random_bot"
GREEDY = f"{sys.executable} -m sample_bots.greedy_furious_five"
BAD_BOT = HERE / "bots" / "bad_bot.py"


def arena(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("arena: error: ")
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_play_json_reports_scores_places_and_record() -> None:
    proc = arena("play", "--game", "furious-five", "--seed", "42", "--option", "rounds=2",
                 "--json", f"a={RANDOM}", f"b={GREEDY}")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["game"] == "furious-five" and out["seed"] == 42
    assert out["bots"] == ["a", "b"]
    assert len(out["scores"]) == 2 and len(out["places"]) == 2
    assert sum(out["scores"]) == 0  # chips are zero-sum
    assert sorted(out["places"]) in ([1, 2], [1, 1])
    assert out["record"]["actions"] and out["record"]["events"]
    assert out["faults"] == []


def test_play_is_deterministic_for_a_seed_with_deterministic_bots() -> None:
    runs = [arena("play", "-g", "furious-five", "--seed", "5", "--json", GREEDY, GREEDY)
            for _ in range(2)]
    outs = [json.loads(p.stdout) for p in runs]
    assert outs[0]["record"] == outs[1]["record"]
    assert outs[0]["scores"] == outs[1]["scores"]


def test_play_reports_a_fault_with_exit_3() -> None:
    proc = arena("play", "-g", "furious-five", "--seed", "1", "--json",
                 f"bad={sys.executable} {BAD_BOT} illegal 2", RANDOM)
    assert proc.returncode == 3
    out = json.loads(proc.stdout)
    assert [f["kind"] for f in out["faults"]] == ["illegal_action"]
    assert out["places"][0] == 2
    assert "illegal_action" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["play", "-g", "no-such-game", RANDOM, RANDOM], ["unknown game", "no-such-game"]),
        (["play", "-g", "furious-five", "-o", "bogus=1", RANDOM, RANDOM], ["bogus"]),
        (["play", "-g", "furious-five", "-o", "rounds=zero", RANDOM, RANDOM], ["rounds"]),
        (["play", "-g", "furious-five", "-o", "deck=Ah,2h", RANDOM, RANDOM], ["deck"]),
        (["play", "-g", "furious-five", "./no/such/bot.py"], ["no/such/bot.py"]),
        (["play", "-g", "furious-five", RANDOM], ["furious-five is for 2-5 players"]),
        (["play", "-g", "furious-five", "--db", "nope://x", RANDOM, RANDOM], ["nope://x"]),
        (["play", "-g", "five", "--frobnicate", RANDOM], ["frobnicate"]),
        (["tournament", "-g", "furious-five", "-b", f"a={RANDOM}"], ["cannot fill a table"]),
        (["tournament", "-g", "furious-five", "-b", f"a={RANDOM}", "-b", f"b={RANDOM}",
          "-n", "3"], ["multiple of the table size"]),
        (["tournament", "-g", "furious-five", "-b", f"a={RANDOM}", "-b", f"a={RANDOM}"],
         ["used twice"]),
        (["tournament", "--resume", "99", "--db", "sqlite:///{tmp}/x.db"], ["no tournament 99"]),
        (["report", "--db", "postgresql+nosuchdriver://u@h/db"], ["nosuchdriver"]),
        (["report", "--db", "sqlite:////nonexistent-dir/sub/x.db"], ["cannot open database"]),
    ],
)
def test_bad_input_is_one_clear_line(args: list[str], needles: list[str], tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert_one_line_error(arena(*args, cwd=tmp_path), *needles)


def test_games_lists_every_game_with_options() -> None:
    proc = arena("games")
    assert proc.returncode == 0
    for name in ("furious-five", "max_turns", "deck"):
        assert name in proc.stdout


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_then_resume_completes_without_losing_games(
    signum: signal.Signals, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    cmd = [sys.executable, "-m", "arena.cli", "tournament", "-g", "furious-five",
           "-b", f"a={RANDOM}", "-b", f"b={GREEDY}", "-b", f"c={RANDOM}", "-n", "20",
           "-o", "rounds=3", "-j", "1", "--db", db]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    stored = 0
    while time.monotonic() < deadline and stored < 3:
        time.sleep(0.2)
        try:
            with sqlite3.connect(tmp_path / "arena.db") as conn:
                stored = conn.execute("select count(*) from games").fetchone()[0]
        except sqlite3.OperationalError:
            stored = 0
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "resume with" in err and "Traceback" not in err
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        before = conn.execute("select count(*) from games").fetchone()[0]
        status = conn.execute("select status from tournaments").fetchone()[0]
    assert 3 <= before < 60 and status == "interrupted"
    done = arena("tournament", "--resume", "1", "--db", db)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        after = conn.execute("select count(*) from games").fetchone()[0]
        pairs = conn.execute("select count(distinct table_id || '-' || number) from games")
        distinct = pairs.fetchone()[0]
        status = conn.execute("select status from tournaments").fetchone()[0]
    assert after == distinct == 60 and status == "finished"


@pytest.mark.parametrize("game", sorted(HEURISTICS))
def test_play_json_works_for_every_game_with_the_sample_bots(game: str) -> None:
    players = max(2, game_class(game).min_players)
    bots = [f"heuristic={sys.executable} -m sample_bots.{HEURISTICS[game]}"]
    bots += [f"random{i}={RANDOM}" for i in range(players - 1)]
    proc = arena("play", "-g", game, "--seed", "99", "--json", *bots)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["game"] == game and out["bots"][0] == "heuristic"
    assert len(out["scores"]) == len(out["places"]) == players
    assert min(out["places"]) == 1 and out["faults"] == []
    assert out["record"]["actions"] and out["decisions"] > 0
    # The printed record replays to the printed result.
    state = make_game(game, players, out["options"]).new_state(out["seed"])
    for step in out["record"]["actions"]:
        state.apply_actions({seat: action for seat, action in step})
    assert state.is_terminal()
    assert state.scores() == out["scores"] and state.places() == out["places"]
