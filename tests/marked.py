"""Bots that can be found: a copy of the random bot in a folder of the test's own,
so every process running it names that folder on its command line; and the
games an arena has stored so far."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

from sample_bots import random_bot


def bot_command(folder: Path) -> str:
    """The random bot, from a copy in ``folder`` so its processes can be found."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "marked_random_bot.py"
    shutil.copy(random_bot.__file__, script)
    script.chmod(0o644)
    return f"{sys.executable} {script}"


def bot_processes(marker: str) -> list[int]:
    """Processes whose command line names ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def wait_gone(marker: str, seconds: float = 10.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := bot_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def stored_keys(db: Path) -> list[tuple[int, int]]:
    """(table number, game number) of every game stored in a SQLite database;
    [] while the arena has not created it (or its schema) yet."""
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as con:
            return con.execute("SELECT tables.number, games.number FROM games "
                               "JOIN tables ON games.table_id = tables.id").fetchall()
    except sqlite3.OperationalError:
        return []
