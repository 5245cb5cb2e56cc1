"""Zoo: before answering hello, tries to read the tournament's database: the
absolute path it is given (``db=PATH``, or a bare PATH argument), its -wal and
-shm files, ``./arena.db``, ``../arena.db`` and ``$HOME/arena.db``; and to list
the database's directory.  One stderr line per attempt: ``DB OPEN OK path``,
``DB ROWS path ...`` (when SQLite could query it), ``DB LIST OK dir ...`` or
``DB REFUSED path: error``.  Then it plays legally.

Self-contained (no ``rawbot``): tests/test_zoo.py copies this file alone next to
a database, as the organiser's own bot, where no helper module is visible."""

import os
import sqlite3
import sys

import msgpack

GIVEN = [a.split("=", 1)[1] if a.startswith("db=") else a
         for a in sys.argv[1:] if a.startswith(("db=", "/"))]


def log(line: str) -> None:
    sys.stderr.write(f"zoo read_db: {line}\n")


def try_file(path: str) -> None:
    try:
        with open(path, "rb") as f:
            head = f.read(16)
        log(f"DB OPEN OK {path}: {head!r}")
    except OSError as exc:
        log(f"DB REFUSED {path}: {exc.strerror}")
        return
    if head.startswith(b"SQLite format 3"):
        try:
            db = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
            tables = [r[0] for r in db.execute("select name from sqlite_master")]
            games = db.execute("select count(*) from games").fetchone()
            log(f"DB ROWS {path}: tables {tables}, games {games}")
        except sqlite3.Error as exc:
            log(f"DB QUERY FAILED {path}: {exc}")


def attack() -> None:
    paths = []
    for given in GIVEN:
        paths += [given, given + "-wal", given + "-shm"]
    paths += ["arena.db", "../arena.db", os.path.join(os.environ.get("HOME", "/"), "arena.db")]
    for path in dict.fromkeys(paths):
        try_file(path)
    for given in GIVEN:
        folder = os.path.dirname(given)
        try:
            log(f"DB LIST OK {folder}: {sorted(os.listdir(folder))[:20]}")
        except OSError as exc:
            log(f"DB REFUSED {folder}: {exc.strerror}")
    sys.stderr.flush()


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                attack()
                send({"type": "hello", "name": "zoo-read-db"})
            elif kind == "request":
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
