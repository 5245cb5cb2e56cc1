"""Crash safety: SIGKILL the arena mid-tournament, resume, and nothing is lost,
nothing is stored twice, and no bot outlives the arena that started it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.marked import bot_command, stored_keys, wait_gone

GAME = ("-g", "furious-five")
BOTS = 3
TABLE = 2
GAMES_PER_TABLE = 12


def arena_argv(db: Path, command: str, parallel: int, resume: bool) -> list[str]:
    argv = [sys.executable, "-m", "arena.cli", "tournament", "--db", f"sqlite:///{db}",
            "-j", str(parallel), "--workers", str(parallel)]  # 2: a local Dask cluster
    if resume:
        return [*argv, "--resume", "1"]
    bots = [f"-b=r{i}={command}" for i in range(BOTS)]
    return [*argv, *GAME, "-k", str(TABLE), "-n", str(GAMES_PER_TABLE), *bots]


@pytest.mark.parametrize("parallel", [1, 2])
def test_sigkill_at_random_moments_then_resume_plays_exactly_the_schedule(
        tmp_path: Path, parallel: int) -> None:
    marker = str(tmp_path / "bots")
    command = bot_command(tmp_path / "bots")
    db = tmp_path / "arena.db"
    rng = random.Random(parallel)
    kills = 0
    for attempt in range(4):
        proc = subprocess.Popen(arena_argv(db, command, parallel, resume=attempt > 0),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        # Kill mid-run: once this run has stored a game, at a random moment.
        before = len(stored_keys(db))
        while len(stored_keys(db)) == before and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.0))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
        assert wait_gone(marker) == [], "a bot outlived the killed arena"
        keys = stored_keys(db)
        assert len(keys) == len(set(keys)), "a game was stored twice"
    assert kills >= 2
    final = subprocess.run(arena_argv(db, command, parallel, resume=True),
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=300)
    # The last killed run may have played the last game: then there is nothing to resume.
    assert final.returncode in (0, 3) or "is finished: nothing to resume" in final.stderr, \
        final.stderr
    tables = BOTS * (BOTS - 1) // 2
    expected = {(t, g) for t in range(tables) for g in range(GAMES_PER_TABLE)}
    keys = stored_keys(db)
    assert len(keys) == len(set(keys)) == len(expected)
    assert set(keys) == expected
    assert wait_gone(marker) == []
