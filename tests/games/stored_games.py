"""A stored database of real tournament games of every game, and what replaying
them through the engines must give.

``tests/data/stored_games.db`` is a SQLite database written by ``arena
tournament --db`` (sample bots, known seeds, several seat counts and options
per game), plus one table of its own, ``engine_trace``: per game, a digest per
step of everything the engine showed at that step (every seat's and the
spectator's observation, as sent, and every seat's legal actions).  A faster
engine must replay every stored game to the same steps, events, reveal, scores
and places, or games already in people's databases would no longer replay.

Regenerate (only for a deliberate rule change, saying so in the commit)::

    python -m tests.games.stored_games --write
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.games import make_game
from arena.games.base import State
from arena.games.loop import as_sent
from arena.store.database import Store, StoredGame
from arena.store.records import GameRecord
from sample_bots import HEURISTICS, RANDOM, command

STORED = Path(__file__).parent.parent / "data" / "stored_games.db"
TRACE_TABLE = "engine_trace"


@dataclass(frozen=True)
class Config:
    """One tournament of the database: one table of ``players`` sample bots."""

    game: str
    players: int
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 1


CONFIGS: tuple[Config, ...] = (
    Config("furious-five", 2, {"rounds": 4}),
    Config("furious-five", 3, {"rounds": 3, "ace_high": True, "multi_drop": True}),
    Config("furious-five", 5, {"rounds": 2, "call_at_five": True, "split_fail": True}),
    Config("furious-five", 4, {"target": 40, "max_turns": 30}),
    Config("five", 2, {"limit": 100}),
    Config("five", 3, {"jokers": True, "limit": 60}),
    Config("five", 6, {"limit": 40, "max_turns": 25}),
    Config("five-or-less", 2, {"limit": 60}),
    Config("five-or-less", 4, {"call_below_five": True, "limit": 40}),
    Config("five-or-less", 8, {"limit": 20, "max_hands": 6}),
    Config("five-card-rummy", 2, {"target": 60}),
    Config("five-card-rummy", 4, {"target": 40}),
    Config("five-card-rummy", 6, {"target": 25, "max_turns": 60}),
    Config("rummy-five", 2, {}),
    Config("rummy-five", 3, {"deals": 2, "chips": 10}),
    Config("rummy-five", 4, {"deals": 2, "chips": 4}),
    Config("octablitz", 3, {"deals": 4}),
    Config("octablitz", 4, {"deals": 3, "chips": 6}),
)


def _digest(value: Any) -> bytes:
    text = json.dumps(as_sent(value), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).digest()[:8]


def seen_at_step(state: State) -> bytes:
    """The digest of what the engine shows now: each seat's observation and
    legal actions, then the spectator's observation."""
    seats = [[state.observation(seat), state.legal_actions(seat)]
             for seat in range(state.num_players)]
    return _digest([seats, state.observation(None)])


@dataclass
class Replayed:
    """A stored game replayed through this code's engine."""

    trace: bytes  # seen_at_step before every step and once at the end
    events: list[dict[str, Any]]
    reveal: dict[str, Any]
    scores: list[float]
    places: list[int]


def replay(game: StoredGame, record: GameRecord) -> Replayed:
    """Apply every stored step to a new state from the game's seed and options."""
    state = make_game(game.game, len(game.seats), game.options).new_state(game.seed)
    trace = bytearray()
    for step in record.actions:
        trace += seen_at_step(state)
        state.apply_actions({seat: action for seat, action in step})
    trace += seen_at_step(state)
    return Replayed(bytes(trace), [e.to_dict() for e in state.events], state.reveal(),
                    state.scores(), state.places())


def stored_games(database: Path) -> Iterator[tuple[StoredGame, GameRecord, bytes]]:
    """Every game of a copy of ``database``, its record and its stored trace (the
    copy, since opening a database migrates it to this code's schema)."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / database.name
        shutil.copyfile(database, copy)
        with sqlite3.connect(copy) as connection:
            traces = dict(connection.execute(f"SELECT game_id, steps FROM {TRACE_TABLE}"))
        store = Store(f"sqlite:///{copy}")
        try:
            for game in store.scan_games():
                record = store.record(game.id)
                assert record is not None, f"game {game.id} has no record"
                yield game, record, traces[game.id]
        finally:
            store.close()


def _tournament(config: Config, database: Path) -> None:
    bots = [f"random{seat}={command(RANDOM)}" for seat in range(config.players - 1)]
    bots.append(f"heuristic={command(HEURISTICS[config.game])}")
    options = [arg for key, value in config.options.items() for arg in ("-o", f"{key}={value}")]
    subprocess.run(
        ["arena", "tournament", "-g", config.game, "-k", str(config.players),
         "-n", str(config.players), "--seed", str(config.seed), "--sandbox", "none",
         "-j", "1", "--db", f"sqlite:///{database}", *options,
         *[arg for bot in bots for arg in ("-b", bot)]],
        check=True, stdout=subprocess.DEVNULL)


def write(database: Path) -> None:
    """Play every configured tournament into a new ``database`` and store the trace."""
    database.unlink(missing_ok=True)
    for config in CONFIGS:
        _tournament(config, database)
    rows = []
    for game, record, _ in _games_without_trace(database):
        assert not game.faults, f"game {game.id} has faults: {game.faults}"
        rows.append((game.id, replay(game, record).trace))
    with sqlite3.connect(database) as connection:
        connection.execute(f"CREATE TABLE {TRACE_TABLE} (game_id INTEGER PRIMARY KEY, steps BLOB)")
        connection.executemany(f"INSERT INTO {TRACE_TABLE} VALUES (?, ?)", rows)
    with sqlite3.connect(database) as connection:
        connection.execute("VACUUM")
    print(f"wrote {database}: {len(rows)} games, {database.stat().st_size:,} bytes")


def _games_without_trace(database: Path) -> Iterator[tuple[StoredGame, GameRecord, None]]:
    store = Store(f"sqlite:///{database}")
    try:
        for game in store.scan_games():
            record = store.record(game.id)
            assert record is not None
            yield game, record, None
    finally:
        store.close()


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write(STORED)
