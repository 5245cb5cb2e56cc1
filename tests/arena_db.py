"""Small real tournaments for the report and export tests: the sample bots (and a bot that
crashes) as real processes, played by ``arena tournament`` into a real SQLite file.

The session fixture ``played`` (registered in tests/conftest.py) holds:

* ``five``: bots a, b, c (two random, the heuristic) at a table of 3, 6 games;
* ``jokers``: the same game with option ``jokers=true`` (so another pool): ``winner``
  (random) and two bots that crash on their first move, ``crash1`` and ``crash2``, at a
  table of 3, 3 games: ``winner`` is unbeaten; the crashers share last place.
"""

from __future__ import annotations

import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.cli import main
from arena.store.database import Store

HERE = Path(__file__).resolve().parent
RANDOM = f"{sys.executable} -m sample_bots.random_bot"
HEURISTIC = f"{sys.executable} -m sample_bots.five_heuristic"
CRASHER = f"{sys.executable} {HERE / 'bots' / 'bad_bot.py'} crash 0"
#: The random bot on a fixed seed: unseeded, it sometimes ended a hand (``end``)
#: before a crasher's first move, so that crasher never faulted and ``winner``
#: was beaten.  On this seed every game is long and both crashers fault.
SEEDED_RANDOM = f"env RANDOM_BOT_SEED=3 {RANDOM}"
FIVE = ("-g", "five", "-o", "max_hands=2")


@dataclass(frozen=True)
class Played:
    """A database of real tournaments and their ids by name."""

    path: Path
    tournaments: dict[str, int]

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"


def tournament(url: str, *args: str) -> int:
    """Run ``arena tournament`` (no sandbox: quicker) into ``url``; the new tournament's id."""
    status = main(["tournament", "--db", url, "--sandbox", "none", "--seed", "11", *args])
    assert status in (0, 3), status  # 3: a bot faulted
    store = Store(url)
    try:
        return max(t["id"] for t in store.tournaments())
    finally:
        store.close()


@pytest.fixture(scope="session", name="played")
def played_fixture(tmp_path_factory: pytest.TempPathFactory) -> Played:
    path = tmp_path_factory.mktemp("played") / "arena.db"
    url = f"sqlite:///{path}"
    bots = ("-b", f"a={RANDOM}", "-b", f"b={RANDOM}", "-b", f"c={HEURISTIC}")
    ids = {"five": tournament(url, *FIVE, "-k", "3", "-n", "6", *bots),
           "jokers": tournament(url, *FIVE, "-o", "jokers=true", "-k", "3", "-n", "3",
                                "-b", f"winner={SEEDED_RANDOM}", "-b", f"crash1={CRASHER}",
                                "-b", f"crash2={CRASHER}")}
    return Played(path, ids)


def broken_copy(played: Played, folder: Path, *, record: bool = False) -> str:
    """A copy of the database whose last game's seats are not JSON (``record``: whose
    last game's record is not a record): reading it fails after the earlier games were
    read (a real failure half-way through an export or a report)."""
    (folder / "db").mkdir()
    path = folder / "db" / "broken.db"
    with sqlite3.connect(played.path) as source, sqlite3.connect(path) as copy:
        source.backup(copy)  # with what is still in its write-ahead log
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE records SET data = x'00ff00ff' "
                           "WHERE game_id = (SELECT max(id) FROM games)" if record else
                           "UPDATE games SET seats = '[not json' "
                           "WHERE id = (SELECT max(id) FROM games)")
    return f"sqlite:///{path}"
