"""Who plays: a ladder says who joined and who is left out and why; a stored bot's
check is stored where the bot is; a stored bot never sits in a game its bot.toml
does not list; ``bot list`` counts check games apart.  Real CLI, real bots, real SQLite."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.store.database import Store
from tests.test_bots import RANDOM, make_bot, run

QUICK = ("-o", "rounds=1", "--sandbox", "none")


def add(capsys: pytest.CaptureFixture[str], folder: Path, db: str) -> None:
    status, _, err = run(capsys, "bot", "add", str(folder), "--db", db)
    assert status == 0, err


def other_game_bot(folder: Path, name: str) -> Path:
    """A bot whose bot.toml lists octablitz only."""
    make_bot(folder, name)
    toml = folder / "bot.toml"
    toml.write_text(toml.read_text().replace('["furious-five", "five"]', '["octablitz"]'))
    return folder


def crashing_bot(folder: Path, name: str) -> Path:
    """A bot that exits at once: it fails its check."""
    make_bot(folder, name)
    (folder / "bot.py").write_text("raise SystemExit(1)\n")
    return folder


def wait_for(path: Path, text: str, timeout: float = 180) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = path.read_text()
        if text in found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not in {path.read_text()!r}")


def test_a_ladder_says_who_plays_who_is_left_out_and_who_joins(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    for name in ("alpha", "beta", "delta"):
        add(capsys, make_bot(tmp_path / name, name), db)
    add(capsys, other_game_bot(tmp_path / "gamma", "gamma"), db)
    add(capsys, crashing_bot(tmp_path / "eps", "eps"), db)
    for name in ("alpha", "eps"):
        run(capsys, "check-bot", "-b", name, "-g", "furious-five", *QUICK, "--db", db)
    assert run(capsys, "bot", "retire", "delta", "--db", db)[0] == 0
    err = tmp_path / "ladder.err"
    with err.open("w") as stderr:
        ladder = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "ladder", "-g", "furious-five", "-k", "2",
             "-j", "1", "--no-report", *QUICK, "-b", f"r={RANDOM}", "--db", db],
            stdout=subprocess.DEVNULL, stderr=stderr, stdin=subprocess.DEVNULL)
    try:
        first = wait_for(err, "ladder: left out")
        assert "arena: ladder entrants in furious-five: r@1 (-b), alpha@1" in first
        left = next(line for line in first.splitlines() if "left out" in line)
        assert left == ("arena: ladder: left out: beta@1 (no check-bot in furious-five "
                        "stored); delta@1 (retired); eps@1 (its check-bot in furious-five "
                        "failed); gamma@1 (its bot.toml lists octablitz, not furious-five)")
        status, _, output = run(capsys, "check-bot", "-b", "beta", "-g", "furious-five",
                                *QUICK, "--db", db)
        assert status == 0, output
        wait_for(err, "arena: ladder: joined: beta@1")
        assert run(capsys, "bot", "retire", "alpha", "--db", db)[0] == 0
        later = wait_for(err, "arena: ladder: left: alpha@1")
        assert "left out: alpha@1 (retired)" in later
    finally:
        ladder.send_signal(signal.SIGINT)
        ladder.wait(timeout=120)


def test_check_bot_stores_a_stored_bots_check_in_its_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the default database, sqlite:///arena.db, is here
    status, _, err = run(capsys, "bot", "add", str(make_bot(tmp_path / "src", "mine")))
    assert status == 0, err
    status, _, err = run(capsys, "check-bot", "-b", "mine", "-g", "furious-five", *QUICK)
    assert status == 0, err
    assert "arena: check of mine@1 stored in sqlite:///arena.db" in err
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        (check,) = store.checks()
        assert check["bot"] == "mine@1" and check["game"] == "furious-five" and check["passed"]
    finally:
        store.close()


@pytest.mark.parametrize("command", ["tournament", "match", "ladder", "play"])
def test_a_stored_bot_is_never_seated_in_a_game_its_manifest_does_not_list(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    add(capsys, make_bot(tmp_path / "src", "mine"), db)  # furious-five and five
    before = Store(db).tournaments()
    bots = ["mine", f"r={RANDOM}"] if command == "play" else ["-b", "mine", "-b", f"r={RANDOM}"]
    status, out, err = run(capsys, command, "-g", "octablitz", "--sandbox", "none", *bots,
                           "--db", db)
    assert status == 2 and out == ""
    assert err.strip() == ("arena: error: bot 'mine@1' does not play octablitz: its bot.toml "
                           "lists furious-five, five")
    assert Store(db).tournaments() == before
    # An ad-hoc bot (by command) plays any game.
    status, _, err = run(capsys, "play", "-g", "octablitz", "--sandbox", "none", "--seed", "3",
                         RANDOM, RANDOM, RANDOM)
    assert status == 0, err


def test_bot_list_counts_check_games_apart_from_rated_games(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    add(capsys, make_bot(tmp_path / "src", "mine"), db)
    status, _, err = run(capsys, "check-bot", "-b", "mine", "-g", "furious-five", "-n", "4",
                         *QUICK, "--db", db)
    assert status == 0, err
    status, _, err = run(capsys, "tournament", "-g", "furious-five", *QUICK, "-n", "2", "-j",
                         "1", "-b", "mine", "-b", f"r={RANDOM}", "--db", db)
    assert status == 0, err
    status, out, _ = run(capsys, "bot", "list", "--db", db)
    header, *rows = out.splitlines()
    assert header.split()[-4:] == ["rated", "games", "check", "games"]
    mine = next(row.split() for row in rows if row.startswith("mine@1"))
    assert mine[-2:] == ["2", "4"]  # the tournament's 2 games; the check's 4
