"""A real tournament stored in a real PostgreSQL server the test starts itself."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.store.database import Store
from tests.marked import bot_command, wait_gone
from tests.pg import new_database
from tests.test_cli import arena_here

RANDOM = f"{sys.executable} -m sample_bots.random_bot"


@pytest.fixture(scope="module")
def postgres_url(postgres_server_url: str) -> str:
    """A database of this module's own on the run's server."""
    return new_database(postgres_server_url)


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def test_a_tournament_into_postgresql_and_its_report(
        postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proc = arena_here(capsys, "tournament", "-g", "furious-five", "-k", "2", "-n", "4",
                      "-o", "rounds=2", "-b", f"a={RANDOM}", "-b", f"b={RANDOM}",
                      "-b", f"c={RANDOM}", "--db", postgres_url)
    assert proc.returncode == 0, proc.stderr
    store = Store(postgres_url)
    (tournament,) = store.tournaments()
    assert tournament["status"] == "finished" and tournament["games_done"] == 12
    games = list(store.games(tournament["id"]))
    assert len(games) == 12 and {tuple(sorted(g.seats)) for g in games} == {
        ("a@1", "b@1"), ("a@1", "c@1"), ("b@1", "c@1")}  # ad-hoc versions (docs/bots.md)
    record = store.record(games[0].id)
    assert record is not None and record.actions
    report = arena_here(capsys, "report", "--db", postgres_url, "--out", str(tmp_path / "site"))
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_bad_postgresql_url_is_one_line(postgres_server_url: str) -> None:
    bad = postgres_server_url.replace("/postgres?", "/no_such_database?")
    assert bad != postgres_server_url
    proc = arena("tournament", "-g", "five", "-b", f"a={RANDOM}", "-b", f"b={RANDOM}",
                 "--db", bad)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_several_arenas_write_one_tournament_at_once(postgres_server_url: str, tmp_path: Path,
                                                      backend: str) -> None:
    url = new_database(postgres_server_url) if backend == "postgresql" else \
        f"sqlite:///{tmp_path / 'shared.db'}"
    command = bot_command(tmp_path / "bots")
    argv = [sys.executable, "-m", "arena.cli", "tournament", "--db", url, "-j", "1"]
    first = subprocess.Popen([*argv, "-g", "furious-five", "-o", "rounds=2", "-k", "2", "-n", "8",
                              *[f"-b=r{i}={command}" for i in range(3)]],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not Store(url).tournaments():
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.1)
    others = [subprocess.Popen([*argv, "--resume", "1"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for _ in range(2)]
    played = 0
    for proc in (first, *others):
        _, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        played += int(re.search(r"\((\d+) played in", stderr).group(1))  # type: ignore[union-attr]
    # The arenas split the streams (arena/runner/claims.py): no game was played twice.
    assert played == 24
    store = Store(url)
    keys = [(g.table, g.number) for g in store.games(1)]
    assert sorted(keys) == [(t, g) for t in range(3) for g in range(8)]
    assert wait_gone(str(tmp_path / "bots")) == []
