"""Every game of the stored tournament database (``tests/data/stored_games.db``,
see :mod:`tests.games.stored_games`) replays identically on this code's engines:
each stored step applied, everything shown at every step (observations, legal
actions), the events, the reveal and the final result as stored."""

from __future__ import annotations

import functools

import pytest

from arena.games import game_names
from arena.store.database import StoredGame
from arena.store.records import GameRecord
from tests.games.stored_games import CONFIGS, STORED, replay, stored_games

TRACE_STEP = 8  # bytes of one step's digest


@functools.cache
def _games() -> list[tuple[StoredGame, GameRecord, bytes]]:
    return list(stored_games(STORED))


def test_the_database_holds_every_game_and_configuration() -> None:
    stored = {(game.game, len(game.seats), tuple(sorted(game.options.items())))
              for game, _, _ in _games()}
    assert {game for game, _, _ in stored} == set(game_names())
    for config in CONFIGS:
        options = {key: value for key, value in config.options.items()}
        assert any(game == config.game and players == config.players
                   and all(dict(items).get(k) == v for k, v in options.items())
                   for game, players, items in stored), config


@pytest.mark.parametrize("name", game_names())
def test_stored_games_replay_identically(name: str) -> None:
    games = [entry for entry in _games() if entry[0].game == name]
    assert games
    for game, record, trace in games:
        got = replay(game, record)
        where = f"{name} game {game.id} ({len(game.seats)} seats, {game.options})"
        steps = len(record.actions) + 1
        assert len(trace) == steps * TRACE_STEP, where
        for step in range(steps):
            span = slice(step * TRACE_STEP, (step + 1) * TRACE_STEP)
            assert got.trace[span] == trace[span], f"{where}: what is shown differs at step {step}"
        assert got.events == record.events, where
        assert got.reveal == record.reveal, where
        assert got.places == game.game_places, where
        assert got.scores == game.scores, where
