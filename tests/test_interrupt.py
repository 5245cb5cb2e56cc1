"""Ctrl-C ends a run as cutechess ends one: the first SIGINT or SIGTERM of ``arena
tournament``, ``match`` or ``ladder`` stops it and prints its standings (a match's
with its test) and the resume command; a second one exits at once.  Real arena
processes, real bots, real signals."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.runner import cgroups
from arena.runner.sandbox import SCRATCH_PREFIX
from arena.store.database import Store
from sample_bots import random_bot
from tests.marked import bot_command, stored_keys, wait_gone

RUNS = {
    "tournament": ["-k", "2", "-n", "200"],
    "match": [],
    "ladder": ["--no-report"],
}


def start(command: str, db: Path, bot: str, tmp: Path | None = None,
          run: Sequence[str] = ()) -> subprocess.Popen[str]:
    """The arena ``command`` on furious-five, its bots outside bubblewrap (their
    private folders in ``tmp``, the arena's TMPDIR, when given)."""
    argv = [sys.executable, "-m", "arena.cli", command, "-g", "furious-five", "-o", "rounds=1",
            "--db", f"sqlite:///{db}", "-j", "2", "--sandbox", "none",
            *(["--workers", "1"] if command != "match" else []), *(run or RUNS[command]),
            *(f"-b=r{i}={bot}" for i in range(2 if command == "match" else 3))]
    env = None if tmp is None else {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def bot_folders(tmp: Path) -> list[str]:
    """The bots' private folders left in ``tmp``."""
    return sorted(path.name for path in tmp.glob(f"{SCRATCH_PREFIX}*"))


def wait_for_games(proc: subprocess.Popen[str], db: Path, games: int) -> None:
    deadline = time.monotonic() + 120
    while len(stored_keys(db)) < games and proc.poll() is None:
        assert time.monotonic() < deadline, "no games stored in 2 minutes"
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it was stopped"


@pytest.mark.parametrize(("command", "signum"), [
    ("tournament", signal.SIGINT), ("match", signal.SIGTERM), ("ladder", signal.SIGINT),
    ("ladder", signal.SIGTERM)])
def test_the_first_signal_prints_the_standings_and_the_resume_command(
        tmp_path: Path, command: str, signum: int) -> None:
    marker = str(tmp_path / "bots")
    db = tmp_path / "arena.db"
    proc = start(command, db, bot_command(tmp_path / "bots"))
    wait_for_games(proc, db, 4)
    os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "Warning" not in err, err
    lines = err.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("rank  bot"))
    resume = next(i for i, line in enumerate(lines) if "resume with" in line)
    assert header < resume == len(lines) - 1, err  # standings, then the resume command last
    assert f"'arena {command} --resume 1 --db sqlite:///{db}'" in lines[resume]
    stored = len(stored_keys(db))
    assert f"{command} 1: furious-five, {stored} games" in lines[header - 1]
    rows = lines[header + 1:resume]
    store = Store(f"sqlite:///{db}")
    try:  # every bot with a finished game (-j 2: the first games may leave one out)
        played = {seat for game in store.games(1) for seat in game.seats}
    finally:
        store.close()
    assert played <= {f"r{i}@1" for i in range(2 if command == "match" else 3)}
    assert {row.split()[1] for row in rows if row[:1].isdigit()} == played, err
    if command == "match":  # the SPRT's state: not decided, its LLR and bounds
        assert any("running: not decided yet" in line for line in rows), err
        assert any(line.strip().startswith("LLR ") for line in rows), err
    assert wait_gone(marker) == [], "a bot outlived the stopped arena"
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT status FROM tournaments").fetchall() == [("interrupted",)]


def lingering_bot(folder: Path) -> str:
    """The random bot, which on its way out ignores SIGTERM and sleeps: ending it takes
    the arena its whole exit grace, a window in which a stopped run is still stopping."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "lingering_bot.py"
    script.write_text(
        "import atexit, runpy, signal, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "atexit.register(time.sleep, 60)\n"
        f"runpy.run_path({random_bot.__file__!r}, run_name='__main__')\n")
    return f"{sys.executable} {script}"


def test_a_second_signal_exits_at_once(tmp_path: Path) -> None:
    marker = str(tmp_path / "bots")
    db = tmp_path / "arena.db"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = start("tournament", db, lingering_bot(tmp_path / "bots"), tmp)
    wait_for_games(proc, db, 4)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.stderr is not None
    err = ""
    while "arena: stopping" not in err:  # then the bots are being ended
        line = proc.stderr.readline()
        assert line, err
        err += line
    os.kill(proc.pid, signal.SIGINT)
    proc.wait(timeout=60)
    err += proc.stderr.read()  # not communicate(): it misses what readline() buffered
    assert proc.returncode == 130, err
    assert err.rstrip().endswith("arena: interrupted again: exiting at once"), err
    assert "Traceback" not in err and "resume with" not in err
    assert wait_gone(marker) == [], "a bot outlived the arena"
    assert bot_folders(tmp) == [], "a bot's private folder outlived the arena"
    keys = stored_keys(db)
    assert keys and len(keys) == len(set(keys))
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_the_folders_of_a_dead_arenas_bots_go_with_the_next_run(tmp_path: Path) -> None:
    """An arena killed at once (kill -9) leaves its bots' private folders; the next
    arena to make one there removes them, never a live arena's."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    gone = subprocess.Popen(["sleep", "60"])
    dead_tag = cgroups.owner_tag(gone.pid)
    gone.kill()
    gone.wait()
    stale = tmp / f"{SCRATCH_PREFIX}{dead_tag}-k9x1"
    (stale / ".cache").mkdir(parents=True)
    live = tmp / f"{SCRATCH_PREFIX}{cgroups.owner_tag(os.getpid())}-live"
    live.mkdir()
    proc = start("tournament", tmp_path / "arena.db", f"{sys.executable} -m sample_bots.random_bot",
                 tmp, ["-k", "2", "-n", "2"])
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert bot_folders(tmp) == [live.name]
