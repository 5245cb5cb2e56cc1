"""Exports of real tournaments (tests/arena_db.py): CSV, JSON and PGN read back with the
standard library and a PGN tag reader, and counted against the stored games."""

from __future__ import annotations

import csv
import itertools
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from arena.store.database import Store, StoredGame
from reports.export import CSV_COLUMNS, FILES, export, pgn_result, pgn_string
from reports.folders import EXPORT_MARKER, REPORT_MARKER, FolderError
from tests.arena_db import Played, broken_copy

SEVEN_TAGS = ["Event", "Site", "Date", "Round", "White", "Black", "Result"]


@pytest.fixture(scope="module")
def exported(played: Played, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[list[StoredGame], Path]:
    out = tmp_path_factory.mktemp("export")
    store = Store(played.url)
    paths = export(store, out)
    assert paths == [out / FILES[f] for f in ("csv", "json", "pgn")]
    return list(store.games()), out


def pgn_games(lines: Iterable[str]) -> Iterator[tuple[list[tuple[str, str]], str]]:
    """(tag pairs in order, movetext) of each game, as Ordo and BayesElo read PGN."""
    tag = re.compile(r'^\[(\w+) "((?:[^"\\]|\\.)*)"\]$')
    tags: list[tuple[str, str]] = []
    for line in lines:
        found = tag.match(line.strip())
        if found:
            tags.append((found[1], re.sub(r"\\(.)", r"\1", found[2])))
        elif line.strip():
            yield tags, line.strip()
            tags = []


def test_csv_has_a_row_per_seat(exported: tuple[list[StoredGame], Path]) -> None:
    games, out = exported
    with (out / "results.csv").open(newline="") as file:
        header, *rows = list(csv.reader(file))
    assert tuple(header) == CSV_COLUMNS
    assert len(rows) == sum(len(game.seats) for game in games)
    cells = [dict(zip(header, row, strict=True)) for row in rows]
    by_seat = {(int(c["game_id"]), int(c["seat"])): c for c in cells}
    for game in games:
        for seat, bot in enumerate(game.seats):
            row = by_seat[game.id, seat]
            assert (row["bot"], int(row["place"]), float(row["score"])) == (
                bot, game.places[seat], game.scores[seat])
    crashes = Counter(c["bot"] for c in cells if c["faults"] == "crash")
    assert crashes == {"crash1@1": 3, "crash2@1": 3}  # labels: ad-hoc version 1
    assert json.loads(cells[0]["options"])["max_hands"] == 2


def test_json_holds_every_game_and_tournament(exported: tuple[list[StoredGame], Path]) -> None:
    games, out = exported
    data = json.loads((out / "results.json").read_text())
    assert [t["id"] for t in data["tournaments"]] == sorted({g.tournament_id for g in games})
    assert [g["id"] for g in data["games"]] == [g.id for g in games]
    for stored, written in zip(games, data["games"], strict=True):
        assert [s["bot"] for s in written["seats"]] == stored.seats
        assert [s["place"] for s in written["seats"]] == stored.places
        assert [f["kind"] for f in written["faults"]] == [f["kind"] for f in stored.faults]


def test_pgn_has_a_game_per_pair_of_players(exported: tuple[list[StoredGame], Path]) -> None:
    games, out = exported
    with (out / "pairs.pgn").open() as file:
        read = list(pgn_games(file))
    expected = Counter()
    for game in games:
        for i, j in itertools.combinations(range(len(game.seats)), 2):
            expected[game.seats[i], game.seats[j], pgn_result(game.places[i],
                                                             game.places[j])] += 1
    got = Counter()
    for tags, movetext in read:
        assert [name for name, _ in tags][:7] == SEVEN_TAGS  # the Seven Tag Roster, in order
        values = dict(tags)
        assert movetext == values["Result"] in ("1-0", "0-1", "1/2-1/2")
        got[values["White"], values["Black"], values["Result"]] += 1
    assert got == expected and sum(got.values()) == 6 * 3 + 3 * 3
    winner, crash1, crash2 = "winner@1", "crash1@1", "crash2@1"  # labels: ad-hoc version 1
    assert got[winner, crash1, "1-0"] + got[crash1, winner, "0-1"] == 3
    assert got[crash1, crash2, "1/2-1/2"] + got[crash2, crash1, "1/2-1/2"] == 3


def test_one_tournament_and_one_format(played: Played, tmp_path: Path) -> None:
    store = Store(played.url)
    tid = played.tournaments["jokers"]
    assert export(store, tmp_path, formats=["pgn"], tournament=tid) == [tmp_path / "pairs.pgn"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [EXPORT_MARKER, "pairs.pgn"]
    with (tmp_path / "pairs.pgn").open() as file:
        events = {dict(tags)["Event"] for tags, _ in pgn_games(file)}
    assert events == {f"Five Arena tournament {tid} (five)"}
    with pytest.raises(ValueError, match="no tournament 999"):
        export(store, tmp_path, tournament=999)
    with pytest.raises(ValueError, match="unknown export format 'xml'"):
        export(store, tmp_path, formats=["csv", "xml"])


def test_pgn_strings_are_escaped() -> None:
    name = 'a "quoted" \\ name\nwith a newline'
    line = f'[White "{pgn_string(name)}"]'
    ((tags, _),) = pgn_games([line, "", "1-0"])
    assert tags == [("White", 'a "quoted" \\ name with a newline')]
    assert "\n" not in line


def test_scan_games_reads_what_games_reads(played: Played) -> None:
    store = Store(played.url)
    games = list(store.games())
    assert list(store.scan_games()) == games
    assert list(store.scan_games(batch=2)) == games
    tid = played.tournaments["jokers"]
    assert list(store.scan_games(tid)) == [g for g in games if g.tournament_id == tid]
    assert list(store.scan_games(after=games[3].id)) == games[4:]


def test_arena_export_command(played: Played, tmp_path: Path) -> None:
    def arena(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "arena.cli", "export", "--db", played.url,
                               "--out", str(tmp_path), *args], capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL)

    done = arena("-f", "csv", "-f", "pgn")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str((tmp_path / FILES[f]).resolve()) for f in ("csv", "pgn")]
    wrong = arena("--tournament", "999999")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert wrong.stderr.startswith("arena: error: ") and "Traceback" not in wrong.stderr


def listing(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name: bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_an_export_replaces_only_an_earlier_export(played: Played, tmp_path: Path) -> None:
    store = Store(played.url)
    out = tmp_path / "out"
    export(store, out, formats=["csv", "json"])
    assert sorted(listing(out)) == [EXPORT_MARKER, "results.csv", "results.json"]
    export(store, out, formats=["pgn"])  # an earlier export: replaced whole
    assert sorted(listing(out)) == [EXPORT_MARKER, "pairs.pgn"]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "results.csv").write_text("mine\n")
    with pytest.raises(FolderError, match="not empty and not an earlier export"):
        export(store, foreign)
    report = tmp_path / "report"
    report.mkdir()
    (report / REPORT_MARKER).write_text("{}")
    with pytest.raises(FolderError, match="not an earlier export"):  # a report is not one
        export(store, report)
    assert listing(foreign) == {"results.csv": b"mine\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign", "out", "report"]


def test_a_failed_export_leaves_the_target_as_it_was(played: Played, tmp_path: Path) -> None:
    broken = Store(broken_copy(played, tmp_path))
    fresh, earlier = tmp_path / "fresh", tmp_path / "earlier"
    export(Store(played.url), earlier, formats=["json"])
    before = listing(earlier)
    for out in (fresh, earlier):
        with pytest.raises(ValueError):
            export(broken, out)
    assert not fresh.exists()
    assert listing(earlier) == before  # no truncated results.json, no empty pairs.pgn
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db", "earlier"]


def test_export_of_no_such_tournament_leaves_nothing(played: Played, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "arena.cli", "export", "--db", played.url,
                           "--out", str(out), "-t", "999"], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "arena: error: no tournament 999 in the database\n"
    assert list(tmp_path.iterdir()) == []
