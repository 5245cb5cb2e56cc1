"""Stored results for other tools: every game as CSV and JSON, and the pairwise virtual
games as PGN so that Ordo or BayesElo can cross-check the ratings.

``arena export`` calls :func:`export`.  Files written into the output folder (besides
its manifest, ``.export-manifest.json``, which marks it as an export):

* ``results.csv``: one row per seat of every game (:data:`CSV_COLUMNS`);
* ``results.json``: ``{"tournaments": [...], "games": [...]}``, a game as in
  :func:`game_json`;
* ``pairs.pgn``: per game with a result, one PGN game per pair of players at its table:
  the Seven Tag Roster (``White`` the lower seat; ``Result`` from their places, the
  better ``1-0`` or ``0-1``, equal ``1/2-1/2``; ``Round`` ``<game id>.<seat>-<seat>``),
  then ``ArenaGame`` (the game's id) and ``ArenaGameType``; the movetext is the result.
  Games without a result, games of bot checks (``arena check-bot``) and pairs of seats
  held by one bot are left out, as the ratings leave them out.  The arena weighs each
  pair of a table of ``n`` players ``1 / (n - 1)``; PGN cannot, so where tables have
  different sizes Ordo's figures differ from the arena's (with one table size the
  estimates agree, up to Ordo's offset).

Games are read in batches (:meth:`Store.scan_games`) and written as they come, so any
number of games exports in bounded memory.
"""

from __future__ import annotations

import csv
import itertools
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from arena.store.database import CHECK_KIND, Store, StoredGame
from arena.store.sealed import shown_config
from reports.folders import EXPORT_MARKER, check_target, written_into

FORMATS = ("csv", "json", "pgn")
FILES = {"csv": "results.csv", "json": "results.json", "pgn": "pairs.pgn"}
CSV_COLUMNS = ("game_id", "tournament_id", "game", "table", "number", "seed", "options",
               "seat", "bot", "score", "place", "game_place", "faults", "no_result",
               "duration", "decisions")
_PGN_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


def export(store: Store, out_dir: Path, formats: Sequence[str] = FORMATS,
           tournament: int | None = None) -> list[Path]:
    """Write the ``formats`` (of :data:`FORMATS`) of every stored game, or of one
    tournament's, into ``out_dir``; return the files written.

    The files are written into a temporary folder that replaces ``out_dir`` (absent,
    empty or an earlier export, whose files all go) once they are complete; a failure
    leaves ``out_dir`` as it was (:mod:`reports.folders`).  ValueError for an unknown
    format or tournament (checked before anything is written), FolderError (a
    ValueError) for an ``out_dir`` that is not empty and not an earlier export."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise ValueError(f"unknown export format {unknown[0]!r} (known: {', '.join(FORMATS)})")
    tournaments = store.tournaments()
    if tournament is not None:
        tournaments = [t for t in tournaments if t["id"] == tournament]
        if not tournaments:
            raise ValueError(f"no tournament {tournament} in the database")
    out_dir = check_target(out_dir, EXPORT_MARKER, "export")
    chosen = [f for f in FORMATS if f in formats]
    tournaments = [{**t, "config": shown_config(t)} for t in tournaments]
    names = {t["id"]: f"tournament {t['id']} ({t['game']})" for t in tournaments}
    with written_into(out_dir) as work, ExitStack() as stack:
        files = {f: stack.enter_context((work / FILES[f]).open("w", encoding="utf-8",
                                                               newline=""))
                 for f in chosen}
        writers = [_WRITERS[f](files[f], tournaments, names) for f in chosen]
        for game in store.scan_games(tournament):
            for writer in writers:
                writer.add(game)
        for writer in writers:
            writer.close()
        stack.close()  # every file complete before the folder takes the target's place
        (work / EXPORT_MARKER).write_text(json.dumps(
            {"tool": "five-arena export", "tournament": tournament,
             "files": [FILES[f] for f in chosen]}) + "\n")
    return [out_dir / FILES[f] for f in chosen]


class _Writer:
    """One export file, written game by game."""

    def __init__(self, out: IO[str], tournaments: list[dict[str, Any]],
                 names: dict[int, str]) -> None:
        self.out, self.tournaments, self.names = out, tournaments, names

    def add(self, game: StoredGame) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Finish the file (after the last game)."""


# -- CSV ----------------------------------------------------------------------------------

def csv_rows(game: StoredGame) -> Iterator[list[Any]]:
    """A game's rows of ``results.csv``, one per seat (:data:`CSV_COLUMNS`)."""
    options = json.dumps(game.shown_options, sort_keys=True, separators=(",", ":"))
    kinds: dict[int, list[str]] = {}
    for fault in game.faults:
        kinds.setdefault(fault["seat"], []).append(fault["kind"])
    no_result = int(game.no_result)
    for seat, bot in enumerate(game.seats):
        yield [game.id, game.tournament_id, game.game, game.table, game.number, game.shown_seed,
               options, seat, bot, game.scores[seat], game.places[seat],
               game.game_places[seat], ";".join(kinds.get(seat, [])), no_result,
               game.duration, game.decisions]


class _Csv(_Writer):
    def __init__(self, out: IO[str], tournaments: list[dict[str, Any]],
                 names: dict[int, str]) -> None:
        super().__init__(out, tournaments, names)
        self.writer = csv.writer(out)
        self.writer.writerow(CSV_COLUMNS)

    def add(self, game: StoredGame) -> None:
        self.writer.writerows(csv_rows(game))


# -- JSON ---------------------------------------------------------------------------------

def game_json(game: StoredGame) -> dict[str, Any]:
    """A game as ``results.json`` holds it."""
    return {"id": game.id, "tournament_id": game.tournament_id, "game": game.game,
            "table": game.table, "number": game.number, "seed": game.shown_seed,
            "options": game.shown_options,
            "seats": [{"bot": bot, "score": game.scores[seat], "place": game.places[seat],
                       "game_place": game.game_places[seat]}
                      for seat, bot in enumerate(game.seats)],
            "faults": game.faults, "no_result": game.no_result,
            "duration": game.duration, "decisions": game.decisions}


class _Json(_Writer):
    """``{"tournaments": [...], "games": [...]}``, one game a line, written as games come."""

    def __init__(self, out: IO[str], tournaments: list[dict[str, Any]],
                 names: dict[int, str]) -> None:
        super().__init__(out, tournaments, names)
        self.first = True
        out.write('{"tournaments": ' + json.dumps(tournaments, ensure_ascii=False)
                  + ',\n "games": [\n')

    def add(self, game: StoredGame) -> None:
        self.out.write(("" if self.first else ",\n") + json.dumps(game_json(game),
                                                                   ensure_ascii=False))
        self.first = False

    def close(self) -> None:
        self.out.write("\n]}\n")


# -- PGN ----------------------------------------------------------------------------------

def pgn_games(game: StoredGame, event: str) -> Iterator[str]:
    """The PGN games of one stored game: one per pair of players at its table."""
    if game.no_result:
        return
    for i, j in itertools.combinations(range(len(game.seats)), 2):
        white, black = game.seats[i], game.seats[j]
        if white == black:
            continue
        result = pgn_result(game.places[i], game.places[j])
        tags = (("Event", event), ("Site", "Five Arena"), ("Date", "????.??.??"),
                ("Round", f"{game.id}.{i}-{j}"), ("White", white), ("Black", black),
                ("Result", result), ("ArenaGame", str(game.id)), ("ArenaGameType", game.game))
        yield "".join(f'[{name} "{pgn_string(value)}"]\n' for name, value in tags) \
            + f"\n{result}\n\n"


def pgn_result(white_place: int, black_place: int) -> str:
    """``1-0`` when white's place is better (lower), ``0-1`` when worse, else a draw."""
    if white_place < black_place:
        return "1-0"
    if white_place > black_place:
        return "0-1"
    return "1/2-1/2"


def pgn_string(text: str) -> str:
    """``text`` as the inside of a PGN tag's string: backslash and quote escaped,
    control characters (newlines) replaced by spaces."""
    return _PGN_UNSAFE.sub(" ", text).replace("\\", "\\\\").replace('"', '\\"')


class _Pgn(_Writer):
    def __init__(self, out: IO[str], tournaments: list[dict[str, Any]],
                 names: dict[int, str]) -> None:
        super().__init__(out, tournaments, names)
        self.checks = {t["id"] for t in tournaments if t["kind"] == CHECK_KIND}

    def add(self, game: StoredGame) -> None:
        if game.tournament_id in self.checks:
            return
        event = f"Five Arena {self.names.get(game.tournament_id, game.tournament_id)}"
        self.out.writelines(pgn_games(game, event))


_WRITERS: dict[str, type[_Writer]] = {"csv": _Csv, "json": _Json, "pgn": _Pgn}

