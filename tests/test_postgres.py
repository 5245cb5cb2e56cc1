"""A real tournament stored in a real PostgreSQL server the test starts itself."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.storage import Store
from tests.pg import postgres_server

RANDOM = f"{sys.executable} -m sample_bots.random_bot"


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=300, check=False)


def test_a_tournament_into_postgresql_and_its_report(postgres_url: str, tmp_path: Path) -> None:
    proc = arena("tournament", "-g", "furious-five", "-k", "2", "-n", "4", "-o", "rounds=2",
                 "-b", f"a={RANDOM}", "-b", f"b={RANDOM}", "-b", f"c={RANDOM}",
                 "--db", postgres_url)
    assert proc.returncode == 0, proc.stderr
    store = Store(postgres_url)
    (tournament,) = store.tournaments()
    assert tournament["status"] == "finished" and tournament["games_done"] == 12
    games = list(store.games(tournament["id"]))
    assert len(games) == 12 and {tuple(sorted(g.seats)) for g in games} == {
        ("a", "b"), ("a", "c"), ("b", "c")}
    record = store.record(games[0].id)
    assert record is not None and record.actions
    report = arena("report", "--db", postgres_url, "--out", str(tmp_path / "site"))
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_bad_postgresql_url_is_one_line(postgres_url: str) -> None:
    bad = postgres_url.replace("/postgres?", "/no_such_database?")
    proc = arena("tournament", "-g", "five", "-b", f"a={RANDOM}", "-b", f"b={RANDOM}",
                 "--db", bad)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
