"""Computing and storing the replay views of stored games, a batch at a time
(:mod:`arena.store.replays` computes one game's; this reads and writes the store).

A running tournament's view builder (started by :mod:`arena.runner.views` as
``python -m arena.store.view_builder TOURNAMENT PARENT``, the database URL in the
environment variable :data:`URL_VARIABLE`) follows the games as they are stored
(:func:`follow`); a report or the server calls :func:`load_views` for the games it
shows, which computes (and stores) the views of any game still without them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Mapping, Sequence

from arena.store.database import StorageError, Store, StoredGame
from arena.store.records import GameRecord
from arena.store.replays import VIEWS_FORMAT, ReplayViews, views


def build_views(store: Store, game_ids: Sequence[int]) -> int:
    """Compute and store the views of ``game_ids`` (stored games); return how many."""
    games = [game for game_id in game_ids if (game := store.game(game_id)) is not None]
    computed = compute(store, games)
    store_views(store, computed)
    return len(computed)


def load_views(store: Store, games: Sequence[StoredGame], *, save: bool = True
               ) -> dict[int, ReplayViews]:
    """The views of ``games`` by id: as stored, or computed now for a game without
    them (older code's, or not built yet) and then stored if ``save`` and the
    database takes the write at once (a locked or read-only database keeps none)."""
    found = {game_id: ReplayViews.load(data) for game_id, data
             in store.replay_views([game.id for game in games], VIEWS_FORMAT)}
    missing = compute(store, [game for game in games if game.id not in found])
    if missing and save:
        with contextlib.suppress(StorageError):
            store_views(store, missing, wait=False)
    return found | missing


def store_views(store: Store, computed: Mapping[int, ReplayViews], *, wait: bool = True) -> None:
    """Store views by game id in this code's format (:meth:`Store.save_replay_views`)."""
    store.save_replay_views([(game_id, VIEWS_FORMAT, view.dump())
                             for game_id, view in computed.items()], wait=wait)


def compute(store: Store, games: Sequence[StoredGame]) -> dict[int, ReplayViews]:
    """The views of ``games`` computed from their stored records."""
    records = dict(store.records([game.id for game in games]))
    return {game.id: views(game, records.get(game.id) or GameRecord()) for game in games}


#: The environment variable that gives a view builder its database URL (not its
#: command line, which every local user can read, and a URL can hold a password).
URL_VARIABLE = "ARENA_VIEWS_DATABASE"
#: Seconds a view builder waits when every stored game has its views.
IDLE_SECONDS = 0.5
#: Seconds between two scans of the whole tournament: a game committed after one
#: with a higher id (PostgreSQL's sequences) is found then.
RESCAN_SECONDS = 30.0
#: A view builder's niceness: it takes only the CPU time nothing else (no bot) wants.
NICE = 19
#: Games a view builder computes per transaction.
FOLLOW_BATCH = 10


def follow(store: Store, tournament_id: int, parent: int) -> None:
    """Build the views of the tournament's games as they are stored, oldest first,
    until process ``parent`` is gone (its run ended or died)."""
    after, rescan = 0, time.monotonic() + RESCAN_SECONDS
    while os.getppid() == parent:
        ids = store.without_views(VIEWS_FORMAT, tournament_id, after=after,
                                  limit=FOLLOW_BATCH)
        if ids:
            build_views(store, ids)
            after = ids[-1]
        elif time.monotonic() > rescan:
            after, rescan = 0, time.monotonic() + RESCAN_SECONDS
        else:
            time.sleep(IDLE_SECONDS)


def main(argv: Sequence[str]) -> int:
    """A view builder: ``TOURNAMENT PARENT``, at the lowest priority (the bots come
    first); its process is :mod:`arena.store.view_builder`, which dies with its parent."""
    tournament_id, parent = map(int, argv)
    os.nice(NICE)
    store = Store(os.environ[URL_VARIABLE])
    try:
        follow(store, tournament_id, parent)
    except StorageError as exc:
        print(f"arena: view builder stopped: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0

