"""The organiser's commands (arena/cli/admin.py) on real stored tournaments: list
tournaments and games, replay a game in the terminal, delete a tournament (SQLite
and PostgreSQL), the version, and a demo run twice."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import pytest
from sqlalchemy import func, select

from arena.cli import main
from arena.games import make_game
from arena.store.database import CLAIMS, FAULTS, GAMES, RECORDS, Store
from arena.store.engine import HEAD_REVISION
from arena.store.tables import TABLES, TOURNAMENTS
from tests.arena_db import Played
from tests.pg import new_database
from tests.terminal import Terminal
from tests.test_cli import assert_one_line_error

RANDOM = f"{sys.executable} -m sample_bots.random_bot"


@dataclass(frozen=True)
class Ran:
    """What a command returned and printed."""

    returncode: int
    stdout: str
    stderr: str


Arena = Callable[..., Ran]


@pytest.fixture(name="arena")
def arena_fixture(capsys: pytest.CaptureFixture[str]) -> Arena:
    """Runs ``arena ARGS`` in this process (the real command, quicker than a new
    interpreter), with stdin not a terminal."""
    def run(*args: str) -> Ran:
        try:
            status = main(list(args))
        except SystemExit as exc:
            status = int(exc.code or 0)
        out, err = capsys.readouterr()
        return Ran(status, out, err)

    return run


def test_tournaments_lists_each_with_its_games_and_bots(played: Played, arena: Arena) -> None:
    proc = arena("tournaments", "--db", played.url)
    assert proc.returncode == 0, proc.stderr
    header, *lines = proc.stdout.splitlines()
    assert header.split()[:6] == ["id", "kind", "game", "status", "games", "created"]
    by_id = {int(line.split()[0]): line.split() for line in lines}
    five, jokers = by_id[played.tournaments["five"]], by_id[played.tournaments["jokers"]]
    assert five[1:5] == ["tournament", "five", "finished", "6/6"]
    assert five[-3:] == ["a@1", "b@1", "c@1"]
    assert jokers[4] == "3/3" and jokers[-3:] == ["winner@1", "crash1@1", "crash2@1"]


def listed(arena: Arena, *args: str) -> list[int]:
    proc = arena("games", *args)
    assert proc.returncode == 0, proc.stderr
    return [int(line.split()[0]) for line in proc.stdout.splitlines()]


def test_games_filters_by_tournament_bot_and_limit(played: Played, arena: Arena) -> None:
    store = Store(played.url)
    games = list(store.games())
    jokers = played.tournaments["jokers"]
    assert listed(arena, "--db", played.url) == [g.id for g in games]
    assert listed(arena, "--db", played.url, "-t", str(jokers)) == \
        [g.id for g in games if g.tournament_id == jokers]
    with_a = [g.id for g in games if "a@1" in g.seats]
    assert len(with_a) == 6 and listed(arena, "--db", played.url, "--bot", "a", "--limit", "2") == \
        with_a[-2:] == listed(arena, "--db", played.url, "--bot", "a@1", "--limit", "2")
    line = arena("games", "--db", played.url, "-t", str(jokers)).stdout.splitlines()[0]
    assert "crash1@1 crash" in line and "winner@1" in line and "decisions" in line


def test_show_replays_a_game_from_the_spectators_view_and_a_seats(played: Played,
                                                                  arena: Arena) -> None:
    store = Store(played.url)
    game = next(store.games(played.tournaments["five"]))
    record = store.record(game.id)
    assert record is not None
    spectator = arena("show", str(game.id), "--db", played.url)
    assert spectator.returncode == 0, spectator.stderr
    steps = [line for line in spectator.stdout.splitlines() if line.startswith("step ")]
    assert len(steps) == len(record.actions)  # five: every decision is public
    assert steps[0].startswith(f"step 0: seat {record.actions[0][0][0]} ")
    assert "your hand" not in spectator.stdout and "(to you)" not in spectator.stdout
    for seat, (name, score) in enumerate(zip(game.seats, game.scores, strict=True)):
        assert f"seat {seat} ({name}): score {score:g}, place {game.places[seat]}" in \
            spectator.stdout
    dealt = make_game("five", 3, game.options).new_state(game.seed).observation(2)["hand"]
    seat = arena("show", str(game.id), "--seat", "2", "--db", played.url)
    assert seat.returncode == 0, seat.stderr
    assert f"your hand: {' '.join(dealt)}" in seat.stdout and "seat 2 (you)" in seat.stdout
    assert f"your hand: {' '.join(dealt)}" not in spectator.stdout


def test_show_marks_the_moves_the_arena_played_for_a_faulted_seat(played: Played,
                                                                  arena: Arena) -> None:
    game = next(Store(played.url).games(played.tournaments["jokers"]))
    proc = arena("show", str(game.id), "--db", played.url)
    assert proc.returncode == 0, proc.stderr
    assert "[played by the arena: the seat had faulted]" in proc.stdout
    assert len(game.faults) == 2
    for fault in game.faults:
        assert f"fault: seat {fault['seat']} ({fault['bot']}) crash" in proc.stdout


def test_bad_input_is_one_line(played: Played, arena: Arena, tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path / 'none.db'}"
    for args, needle in [(("show", "99999", "--db", played.url), "no game 99999"),
                         (("show", "1", "--seat", "3", "--db", played.url), "--seat"),
                         (("games", "--bot", "nobody", "--db", played.url), "nobody"),
                         (("games", "-t", "999", "--db", played.url), "no tournament 999"),
                         (("games", "--limit", "0", "--db", played.url), "--limit"),
                         (("tournaments", "--db", missing), "no database file"),
                         (("games", "--db", missing), "arena rules"),
                         (("delete", "-t", "999", "--yes", "--db", played.url), "999"),
                         (("delete", "-t", "1", "--db", played.url), "--yes")]:
        assert_one_line_error(arena(*args), needle)
    assert not (tmp_path / "none.db").exists()
    assert len(list(Store(played.url).games())) == 9  # the refused delete deleted nothing


def test_version_names_the_package_and_schema(arena: Arena) -> None:
    proc = arena("--version")
    assert proc.returncode == 0
    first, engines = proc.stdout.strip().splitlines()
    assert first == f"arena {version('five-arena')} (database schema {HEAD_REVISION})"
    assert engines.startswith(("engines: compiled", "engines: pure Python"))


def rows_left(store: Store, tournament_id: int) -> list[int]:
    """How many rows of games, faults, records, tables, claims and tournaments belong
    to a tournament."""
    tables = select(TABLES.c.id).where(TABLES.c.tournament_id == tournament_id)
    games = select(GAMES.c.id).where(GAMES.c.table_id.in_(tables))
    wheres = [(GAMES, GAMES.c.table_id.in_(tables)), (FAULTS, FAULTS.c.game_id.in_(games)),
              (RECORDS, RECORDS.c.game_id.in_(games)),
              (TABLES, TABLES.c.tournament_id == tournament_id),
              (CLAIMS, CLAIMS.c.tournament_id == tournament_id),
              (TOURNAMENTS, TOURNAMENTS.c.id == tournament_id)]
    with store.engine.connect() as connection:
        return [int(connection.scalar(select(func.count()).select_from(table).where(where)) or 0)
                for table, where in wheres]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_delete_removes_a_tournament_and_everything_under_it(
        backend: str, request: pytest.FixtureRequest, tmp_path: Path,
        arena: Arena) -> None:
    url = new_database(request.getfixturevalue("postgres_server_url")) if backend == "postgresql" \
        else f"sqlite:///{tmp_path / 'arena.db'}"
    # Seat 0 decides first, so the bad bot crashes (a fault to delete) in every game.
    bad = f"bad={sys.executable} {Path(__file__).parent / 'bots' / 'bad_bot.py'} crash 0"
    for _ in range(2):
        proc = arena("play", "-g", "five", "-o", "max_hands=1", "--sandbox", "none",
                     "--seed", "4", "--db", url, bad, f"ok={RANDOM}")
        assert proc.returncode == 3, proc.stderr
    store = Store(url)
    assert store.claim(1, "0/0", "me", 60) and store.claim(2, "0/0", "me", 60)
    assert rows_left(store, 1) == rows_left(store, 2) == [1] * 6
    proc = arena("delete", "--tournament", "1", "--yes", "--db", url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "deleted tournament 1 and its 1 games"
    assert rows_left(store, 1) == [0] * 6 and rows_left(store, 2) == [1] * 6
    assert [t["id"] for t in store.tournaments()] == [2]


def test_delete_asks_on_a_terminal(played: Played, arena: Arena, tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    with sqlite3.connect(played.path) as source, sqlite3.connect(path) as copy:
        source.backup(copy)  # with what is still in the write-ahead log
    url, jokers = f"sqlite:///{path}", played.tournaments["jokers"]
    for answer, status, said in (("n", 1, "nothing deleted"), ("y", 0, "deleted tournament")):
        terminal = Terminal(["delete", "-t", str(jokers), "--db", url])
        assert terminal.read_until("[y/N] ") == "[y/N] "
        terminal.type(answer)
        assert terminal.finish() == status, terminal.shown
        assert said in terminal.shown
    assert [t["id"] for t in Store(url).tournaments()] == [played.tournaments["five"]]


def demo(url: str, out: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "arena.cli", "demo", "-n", "2", "-j", "1",
                           "--sandbox", "none", "--db", url, "--out", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_a_second_demo_resumes_or_reuses_what_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    url = f"sqlite:///{path}"
    demo(url, tmp_path / "site")
    with sqlite3.connect(path) as db:
        stored = db.execute("SELECT count(*) FROM games").fetchone()[0]
        # One game of tournament 2 lost (as if the demo had been interrupted).
        (lost,) = db.execute("SELECT max(g.id) FROM games g JOIN tables t ON g.table_id = t.id "
                             "WHERE t.tournament_id = 2").fetchone()
        db.execute("DELETE FROM records WHERE game_id = ?", (lost,))
        db.execute("DELETE FROM games WHERE id = ?", (lost,))
    again = demo(url, tmp_path / "site")
    assert "tournament 1 is stored already" in again.stderr
    assert "resuming tournament 2" in again.stderr
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM games").fetchone()[0] == stored
        assert db.execute("SELECT count(*) FROM tournaments").fetchone()[0] == 6
