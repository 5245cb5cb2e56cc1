"""Bad input found before anything starts: one line on stderr, exit 2, no banner, no
plan, nothing stored changed.  Real processes, real SQLite files (one damaged by
overwriting pages), a real PostgreSQL server for the masked password."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.store.database import Store
from tests.test_cli import arena, arena_here, assert_one_line_error, dump, existing_db

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
BOTS = ["-b", f"a={RANDOM}", "-b", f"b={RANDOM}"]

__all__ = ["existing_db"]  # the fixture, used below


def closed_port() -> int:
    """A local TCP port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["tournament", "-g", "five", *BOTS, "-j", "0"], ["--parallel", "not 0"]),
        (["tournament", "-g", "five", *BOTS, "-j", "100000"], ["--parallel", "100000"]),
        (["tournament", "-g", "five", *BOTS, "--workers", "0"], ["--workers", "not 0"]),
        (["tournament", "-g", "five", *BOTS, "--cluster", "garbage"],
         ["--cluster 'garbage'", "tcp://HOST"]),
        (["tournament", "-g", "five", *BOTS, "--workers", "2", "--cluster", "tcp://{closed}"],
         ["--workers", "--cluster"]),
        (["ladder", "-g", "five", *BOTS, "-j", "0", "--no-report"], ["--parallel"]),
        (["match", "-g", "five", *BOTS, "-j", "0"], ["--parallel"]),
        (["demo", "-j", "100000"], ["--parallel"]),
        (["tournament", "-g", "five", *BOTS, "--move-time", "0", "--bank-time", "0"],
         ["--move-time", "--bank-time", "both 0"]),
        (["match", "-g", "five", *BOTS, "--move-time", "0", "--bank-time", "0"],
         ["both 0"]),
        (["play", "-g", "five", "--handshake-time", "0", RANDOM, RANDOM], ["--handshake-time"]),
        (["tournament", "-g", "five", *BOTS, "--handshake-time", "0"], ["--handshake-time"]),
        (["tournament", "-g", "five", "-b", "a b=python x.py", "-b", f"b={RANDOM}"],
         ["'a b' is not a bot name"]),
        (["tournament", "-g", "five", "-b", "a@1=python x.py", "-b", f"b={RANDOM}"],
         ["'a@1' is not a bot name"]),
        (["play", "-g", "five", f"{sys.executable} -m no_such_module", RANDOM],
         ["no module 'no_such_module'"]),
        (["tournament", "-g", "five", "-b", f"x={sys.executable} -m sample_bots.nope",
          "-b", f"b={RANDOM}"], ["'x'", "sample_bots.nope"]),
        (["tournament", "-g", "five", *BOTS, "--standings-every", "-1"], ["--standings-every"]),
    ],
)
def test_bad_run_flags_are_one_line_before_any_banner(args: list[str], needles: list[str],
                                                      tmp_path: Path) -> None:
    args = [a.replace("{closed}", f"127.0.0.1:{closed_port()}") for a in args]
    proc = arena(*args, "--db", f"sqlite:///{tmp_path}/t.db", cwd=tmp_path)
    assert_one_line_error(proc, *needles)  # one line: no sandbox banner, no plan
    assert list(tmp_path.iterdir()) == []  # no database made


def test_an_unreachable_cluster_fails_fast(tmp_path: Path) -> None:
    """Refused before the banner by a plain connection (refused at once), not after
    Dask's 10 s connection timeout: told by the message, not by the clock."""
    proc = arena("tournament", "-g", "five", *BOTS, "--cluster",
                 f"tcp://127.0.0.1:{closed_port()}", "--db", f"sqlite:///{tmp_path}/t.db")
    assert_one_line_error(proc, "cannot reach the Dask scheduler", "Connection refused")
    assert "Timed out" not in proc.stderr


def test_report_refuses_a_negative_replay_count(existing_db: Path, tmp_path: Path) -> None:
    proc = arena("report", "--db", f"sqlite:///{existing_db}", "--out", str(tmp_path / "r"),
                 "--max-replays", "-1")
    assert_one_line_error(proc, "--max-replays", "-1")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        ("tournament", ["--games", "8"]),
        ("tournament", ["--bot", f"c={RANDOM}"]),
        ("tournament", ["--move-time", "3"]),
        ("match", ["--seed", "5"]),
        ("match", ["--elo1", "10"]),
        ("ladder", ["--seats", "3"]),
    ],
)
def test_flags_a_resume_would_ignore_are_refused(command: str, flags: list[str],
                                                 existing_db: Path) -> None:
    store = Store(f"sqlite:///{existing_db}")  # tournament 1; a match 2 and a ladder 3
    for kind in ("match", "ladder"):
        store.create_tournament("furious-five", {"game": "furious-five"}, [], 0, kind=kind)
    store.close()
    before = dump(existing_db)
    resumed = {"tournament": "1", "match": "2", "ladder": "3"}[command]
    proc = arena(command, "--resume", resumed, *flags, "--db", f"sqlite:///{existing_db}")
    assert_one_line_error(proc, flags[0], "cannot be changed when resuming")
    assert dump(existing_db) == before


def damage(path: Path) -> None:
    """Overwrite the root pages of the arena's tables (the header, the schema page
    and Alembic's page stay valid): the file opens, its queries fail."""
    with sqlite3.connect(path) as conn:
        conn.execute("VACUUM")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = [root for name, root in conn.execute(
            "SELECT name, rootpage FROM sqlite_master WHERE type = 'table'")
            if name != "alembic_version"]
    conn.close()
    with open(path, "r+b") as file:
        for root in roots:
            file.seek((root - 1) * page)
            file.write(b"\xde\xad" * (page // 2))


DAMAGED_COMMANDS = [
    ["tournaments"], ["games"], ["show", "1"], ["standings"], ["standings", "-t", "1"],
    ["bot", "list"], ["bot", "show", "a"], ["delete", "--tournament", "1", "--yes"],
    ["report", "--out", "{tmp}/report"], ["export", "--out", "{tmp}/export"],
    ["tournament", "-g", "five", *BOTS], ["tournament", "--resume", "1"],
    ["match", "-g", "five", *BOTS], ["match", "--resume", "1"],
    ["ladder", "-g", "five", *BOTS, "--max-groups", "1", "--no-report"],
    ["check-bot", "-b", "a"],
]


#: Commands of :data:`DAMAGED_COMMANDS` run as processes of their own (the rest by the
#: CLI's main in the test's process, which a traceback would fail as surely).
DAMAGED_IN_PROCESSES = (["tournament", "-g", "five", *BOTS], ["report", "--out", "{tmp}/report"])


def test_a_damaged_database_is_one_line_for_every_command(
        existing_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    damage(existing_db)
    with sqlite3.connect(existing_db) as conn, pytest.raises(sqlite3.DatabaseError):
        conn.execute("SELECT * FROM games").fetchall()  # really damaged
    conn.close()
    intact = existing_db.read_bytes()
    monkeypatch.chdir(tmp_path)
    for command in DAMAGED_COMMANDS:
        args = [a.replace("{tmp}", str(tmp_path)) for a in command]
        db = ["--db", f"sqlite:///{existing_db}"]
        proc = arena(*args, *db, cwd=tmp_path) if command in DAMAGED_IN_PROCESSES \
            else arena_here(capsys, *args, *db)
        assert_one_line_error(proc, "database disk image is malformed")
        assert existing_db.read_bytes() == intact, command  # nothing written into it


def test_a_bot_that_prints_text_is_told_so() -> None:
    talker = shlex.join([sys.executable, "-c", "import time; print('hello, I am a bot', "
                                               "flush=True); time.sleep(30)"])
    proc = arena("play", "-g", "five", "--seed", "1", "--json", f"talker={talker}", RANDOM)
    assert proc.returncode == 3, proc.stderr
    assert "written text to stdout" in proc.stderr and "byte 'h'" in proc.stderr


def test_demo_recognises_its_tournaments_whatever_the_interpreter_path(
        tmp_path: Path) -> None:
    """A second demo run by another path to the same interpreter (as after pip
    rewrote the ``arena`` script) reuses every stored tournament."""
    db = f"sqlite:///{tmp_path}/demo.db"
    flags = ["demo", "-n", "3", "-j", "1", "--db", db, "--out", str(tmp_path / "r")]
    first = arena(*flags, timeout=300)
    assert first.returncode in (0, 3), first.stderr
    other = tmp_path / "bin" / "python3"
    other.parent.mkdir()
    os.symlink(sys.executable, other)
    second = subprocess.run([str(other), "-m", "arena.cli", *flags], capture_output=True,
                            text=True, timeout=300, stdin=subprocess.DEVNULL,
                            cwd=Path(__file__).resolve().parent.parent)
    assert second.returncode in (0, 3), second.stderr
    reused = [line for line in second.stderr.splitlines() if "is stored already" in line]
    assert len(reused) == 6, second.stderr
    with sqlite3.connect(tmp_path / "demo.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM tournaments").fetchone()[0] == 6


def test_a_postgresql_password_is_never_shown(tmp_path: Path, postgres_server_url: str) -> None:
    from tests.pg import new_database

    server = postgres_server_url
    secret = "s3cr3t-pw"
    url = new_database(server).replace("postgresql+psycopg://arena@",
                                       f"postgresql+psycopg://arena:{secret}@")
    run = arena("tournament", "-g", "furious-five", "-o", "rounds=1", *BOTS, "-n", "2",
                "--db", url)
    assert run.returncode == 0, run.stderr
    assert "arena:***@" in run.stderr  # the closing line names the database, masked
    missing = arena("tournament", "--resume", "99", "--db", url)
    assert_one_line_error(missing, "no tournament 99", "arena:***@")
    empty = new_database(server).replace("arena@", f"arena:{secret}@")
    nothing = arena("tournaments", "--db", empty)
    assert "no tournaments in" in nothing.stderr and "arena:***@" in nothing.stderr
    report = arena("report", "--db", url, "--out", str(tmp_path / "r"))
    assert report.returncode == 0, report.stderr
    store = Store(url)
    stored = json.dumps([t["config"] for t in store.tournaments()])
    store.close()
    outputs = [run.stdout, run.stderr, missing.stderr, nothing.stderr, report.stdout,
               report.stderr, stored]
    assert stored and all(secret not in text for text in outputs)
    for path in (tmp_path / "r").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    shutil.rmtree(tmp_path / "r")
