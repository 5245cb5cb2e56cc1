"""What the server's pages and API show, computed from the store and cached:
the leaderboards and game lists of one :class:`Snapshot` (recomputed when a
game or submission is stored), and replays rendered on demand from a stored
record's stored views (:mod:`arena.store.replays`, the static report's code and visibility
rules; computed and stored here for a game stored without them).

Blocking (database reads, rating fits): called from worker threads.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.store.accounts import Accounts
from arena.store.database import Store, StoredGame
from arena.store.replays import ReplayViews
from arena.store.view_jobs import load_views
from reports.render import BoardRow, Figures, Section, latest_checks, section
from reports.stats import fault_kinds, rate, split_pools, time_control

#: Resamples behind each rating interval on the server's leaderboards.
BOOTSTRAP = 100
#: Games per page of a games list.
PAGE_ROWS = 50
#: Seconds a snapshot is served at least before the database is looked at again.
MIN_REFRESH = 2.0
#: Points of a bot page's rating history per pool.
HISTORY_POINTS = 12
#: Pages kept rendered for viewers without a session.
PAGE_CACHE = 512
#: Replays kept rendered.
REPLAY_CACHE = 256


@dataclass(frozen=True)
class Snapshot:
    """The stored games and leaderboards as of ``stamp``."""

    stamp: tuple[int, ...]
    games: list[StoredGame]
    tournaments: dict[int, dict[str, Any]]
    sections: list[Section]
    kinds: list[str]
    #: The pools behind ``sections``, by anchor (their games, oldest first).
    pools: dict[str, list[StoredGame]] = field(default_factory=dict)
    #: Version label -> its base name.
    bases: dict[str, str] = field(default_factory=dict)
    #: :meth:`history` computed so far.
    histories: dict[tuple[str, frozenset[str]], list[tuple[int, dict[str, float]]]] = field(
        default_factory=dict, compare=False)

    @property
    def stamp_text(self) -> str:
        """The stamp as live pages compare it."""
        return ".".join(map(str, self.stamp))

    def rows(self, labels: set[str]) -> list[tuple[Section, BoardRow]]:
        """The leaderboard rows of ``labels``, pool by pool."""
        return [(s, row) for s in self.sections for row in s.board if row.bot in labels]

    def history(self, anchor: str, labels: set[str]) -> list[tuple[int, dict[str, float]]]:
        """:func:`rating_history` of ``labels`` in a pool, computed once per snapshot."""
        key = (anchor, frozenset(labels))
        if key not in self.histories:
            self.histories[key] = rating_history(self.pools.get(anchor, []), labels)
        return self.histories[key]

    def finished(self, tournament_id: int) -> bool:
        """Whether a tournament is over (its seeds may then be shown)."""
        return self.tournaments.get(tournament_id, {}).get("status") == "finished"

    def filtered(self, *, bot: str | None = None, game: str | None = None,
                 tournament: int | None = None) -> list[StoredGame]:
        """The games, newest first, of a bot name (any version, or one label), a
        game and a tournament, where given."""
        found = []
        for g in reversed(self.games):
            if (game and g.game != game) or (tournament is not None and \
                    g.tournament_id != tournament):
                continue
            if bot and not any(s == bot or self.bases.get(s) == bot for s in g.seats):
                continue
            found.append(g)
        return found


class PageCache:
    """Rendered pages by key, the :data:`PAGE_CACHE` most recently used."""

    def __init__(self) -> None:
        self._pages: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            if key in self._pages:
                self._pages.move_to_end(key)
            return self._pages.get(key)

    def put(self, key: Hashable, body: bytes) -> bytes:
        with self._lock:
            self._pages[key] = body
            while len(self._pages) > PAGE_CACHE:
                self._pages.popitem(last=False)
        return body


class Views:
    """The cached views of one database."""

    def __init__(self, store: Store, accounts: Accounts) -> None:
        self.store, self.accounts = store, accounts
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._due = 0.0
        self.pages = PageCache()
        self.replay = functools.lru_cache(maxsize=REPLAY_CACHE)(self._replay)

    def snapshot(self) -> Snapshot:
        """The snapshot of the database, at most :data:`MIN_REFRESH` seconds (or four
        times its last computation's time) old: recomputed only when something was
        stored, by one request at a time, while the others get the one before."""
        current = self._snapshot
        if current is not None and (time.monotonic() < self._due or self._lock.locked()):
            return current
        with self._lock:
            if self._snapshot is not None and time.monotonic() < self._due:
                return self._snapshot
            stamp = self.accounts.activity()
            began = time.monotonic()
            if self._snapshot is None or self._snapshot.stamp != stamp:
                self._snapshot = self._compute(stamp)
            cost = time.monotonic() - began
            self._due = time.monotonic() + max(MIN_REFRESH, 4 * cost)
            return self._snapshot

    def fresh_stamp(self) -> tuple[int, ...] | None:
        """The snapshot's stamp while it needs no look at the database, else None."""
        current = self._snapshot
        return current.stamp if current is not None and time.monotonic() < self._due else None

    def _compute(self, stamp: tuple[int, ...]) -> Snapshot:
        games = list(self.store.scan_games())
        tournaments = {t["id"]: t for t in self.store.tournaments()}
        checks = latest_checks(tournaments.values())
        rated = [g for g in games if g.tournament_id not in checks.tournament_ids]
        controls = {tid: time_control(t["config"]) for tid, t in tournaments.items()}
        registered = self.store.bots()
        versions = {bot["name"]: bot["reported"] for bot in registered}
        kinds = fault_kinds(games)
        figures = Figures(BOOTSTRAP)
        pools = split_pools(rated, controls)
        sections = [section(pool, figures, kinds, versions) for pool in pools]
        return Snapshot(stamp, games, tournaments, sections, kinds,
                        pools={pool.anchor: pool.games for pool in pools},
                        bases={bot["name"]: bot["base"] for bot in registered})

    def _replay(self, game_id: int) -> tuple[StoredGame, ReplayViews] | None:
        game = self.store.game(game_id)
        if game is None:
            return None
        return game, load_views(self.store, [game])[game_id]


def rating_history(games: Sequence[StoredGame], players: set[str],
                   points: int = HISTORY_POINTS) -> list[tuple[int, dict[str, float]]]:
    """The Elo of ``players`` over a pool's games, oldest first: fitted on the first
    ``n`` games at up to ``points`` evenly spaced ``n`` (no bootstrap), each with the
    finite estimates of the players rated by then."""
    history = []
    for n in sorted({-(-len(games) * i // points) for i in range(1, points + 1)} - {0}):
        ratings = rate(games[:n], 0).ratings
        found = {r.player: r.estimate for r in ratings
                 if r.player in players and math.isfinite(r.estimate)}
        if found:
            history.append((n, found))
    return history
