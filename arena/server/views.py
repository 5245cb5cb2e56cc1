"""What the server's pages and API show, computed from the store and cached:
the leaderboards and game lists of one :class:`Snapshot` (recomputed when a
game or submission is stored), replays rendered on demand from a game's stored
views (:mod:`arena.store.replays`, the static report's code and visibility rules;
computed and stored here for a game stored without them), and the rendered pages
of viewers without a session (:class:`Page`, with ETags).

Blocking (database reads, rating fits): called from worker threads.
"""

from __future__ import annotations

import functools
import hashlib
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
from reports.render import BoardRow, Figures, Section, latest_checks, section, unrated_ids
from reports.stats import fault_kinds, order_blocks, rate, split_pools, time_control

#: Resamples behind each rating interval on the server's leaderboards.
BOOTSTRAP = 100
#: Games per page of a games list.
PAGE_ROWS = 50
#: Seconds between two reads of the database's generation (what changed).
GENERATION_SECONDS = 1.0
#: Seconds a snapshot is served at least (or :data:`REFRESH_FACTOR` times its
#: computation) before the next one is computed: each one redraws every page.
MIN_REFRESH = 3.0
REFRESH_FACTOR = 10
#: Points of a bot page's rating history per pool.
HISTORY_POINTS = 12
#: Pages kept rendered for viewers without a session.
PAGE_CACHE = 512
#: Replays kept rendered.
REPLAY_CACHE = 256
#: Rating fits kept for rating histories.
FITS_KEPT = 4096


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
    #: Fits of a pool's first games, shared by the snapshots of one server.
    fits: Fits | None = field(default=None, compare=False)
    #: When each game was stored (POSIX seconds), by id.
    times: dict[int, float] = field(default_factory=dict, compare=False)

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
            self.histories[key] = rating_history(self.pools.get(anchor, []), labels,
                                                 self.fits, anchor)
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


@dataclass(frozen=True)
class Page:
    """A rendered response for viewers without a session (the same for all of
    them), with its ETag; served while :meth:`fresh`: a replay page (``tournament``
    set) while its tournament's state is ``finished`` (the game is stored for
    good, only its seed waits for the end), any other page while the snapshot is
    the one it was drawn from (``stamp``)."""

    body: bytes
    media_type: str
    etag: str
    stamp: tuple[int, ...] = ()
    tournament: int | None = None
    finished: bool = False

    @classmethod
    def of(cls, body: bytes, media_type: str, snapshot: Snapshot,
           tournament: int | None = None) -> Page:
        etag = f'"{hashlib.blake2b(body, digest_size=12).hexdigest()}"'
        if tournament is not None:
            return cls(body, media_type, etag, tournament=tournament,
                       finished=snapshot.finished(tournament))
        return cls(body, media_type, etag, stamp=snapshot.stamp)

    def fresh(self, snapshot: Snapshot) -> bool:
        if self.tournament is not None:
            return snapshot.finished(self.tournament) == self.finished
        return snapshot.stamp == self.stamp


class PageCache:
    """Rendered pages by key (a URL), the :data:`PAGE_CACHE` most recently used."""

    def __init__(self) -> None:
        self._pages: OrderedDict[Hashable, Page] = OrderedDict()
        self._lock = threading.Lock()
        #: Keys of pages being drawn anew (read and changed in the event loop only).
        self.drawing: set[Hashable] = set()

    def get(self, key: Hashable) -> Page | None:
        with self._lock:
            if key in self._pages:
                self._pages.move_to_end(key)
            return self._pages.get(key)

    def put(self, key: Hashable, page: Page) -> Page:
        with self._lock:
            self._pages[key] = page
            while len(self._pages) > PAGE_CACHE:
                self._pages.popitem(last=False)
        return page


class Views:
    """The cached views of one database.  :meth:`refresh` (called every
    :data:`GENERATION_SECONDS` by the server, in a worker thread) reads the
    database's generation and recomputes the snapshot when it changed; requests
    only read the latest snapshot, so none waits for a computation but the first."""

    def __init__(self, store: Store, accounts: Accounts) -> None:
        self.store, self.accounts = store, accounts
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self.pages = PageCache()
        self.replay = functools.lru_cache(maxsize=REPLAY_CACHE)(self._replay)
        self.fits = Fits()

    def snapshot(self) -> Snapshot:
        """The latest snapshot (the first one computed now)."""
        current = self._snapshot
        if current is None:
            with self._lock:
                if self._snapshot is None:
                    self._snapshot = self._compute(self.accounts.activity())
                current = self._snapshot
        return current

    def current(self) -> Snapshot | None:
        """The latest snapshot, None before the first."""
        return self._snapshot

    def refresh(self) -> float:
        """Recompute the snapshot if the database changed since; the seconds it took."""
        stamp = self.accounts.activity()
        with self._lock:
            if self._snapshot is not None and self._snapshot.stamp == stamp:
                return 0.0
            began = time.monotonic()
            self._snapshot = self._compute(stamp)
            return time.monotonic() - began

    def _compute(self, stamp: tuple[int, ...]) -> Snapshot:
        games = self._games(stamp)
        tournaments = {t["id"]: t for t in self.store.tournaments()}
        checks = latest_checks(tournaments.values())
        unrated = unrated_ids(tournaments.values(), checks)
        rated = [g for g in games if g.tournament_id not in unrated]
        controls = {tid: time_control(t["config"]) for tid, t in tournaments.items()}
        registered = self.store.bots()
        versions = {bot["name"]: bot["reported"] for bot in registered}
        kinds = fault_kinds(games)
        figures = Figures(BOOTSTRAP, order_blocks(tournaments.values()))
        pools = split_pools(rated, controls)
        sections = [section(pool, figures, kinds, versions) for pool in pools]
        return Snapshot(stamp, games, tournaments, sections, kinds,
                        pools={pool.anchor: pool.games for pool in pools},
                        bases={bot["name"]: bot["base"] for bot in registered},
                        fits=self.fits, times=self._times(games))

    def _games(self, stamp: tuple[int, ...]) -> list[StoredGame]:
        """Every stored game, oldest first: the snapshot's before and those stored
        since (all of them read again if some were deleted: ``stamp`` counts them)."""
        before = self._snapshot.games if self._snapshot is not None else []
        games = [*before, *self.store.scan_games(after=before[-1].id if before else 0)]
        return games if len(games) == stamp[1] else list(self.store.scan_games())

    def _times(self, games: list[StoredGame]) -> dict[int, float]:
        """:attr:`Snapshot.times` of ``games``: the snapshot's before and those
        stored since read (all of them again if some were deleted)."""
        before = self._snapshot.times if self._snapshot is not None else {}
        times = {**before, **self.store.finish_times(after=max(before, default=0))}
        return times if all(g.id in times for g in games[-1:]) and len(times) == len(games) \
            else self.store.finish_times()

    def _replay(self, game_id: int) -> tuple[StoredGame, ReplayViews] | None:
        game = self.store.game(game_id)
        if game is None:
            return None
        return game, load_views(self.store, [game])[game_id]


class Fits:
    """Elo fits (no bootstrap) of a pool's first ``n`` games, kept across snapshots:
    a pool only grows at its end, so the fit of its first ``n`` games stays true
    (keyed by the ``n``-th game's id too, in case games were deleted)."""

    def __init__(self) -> None:
        self._fits: OrderedDict[tuple[str, int, int], dict[str, float]] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, anchor: str, games: Sequence[StoredGame], n: int) -> dict[str, float]:
        """Each player's finite Elo estimate on ``games[:n]``."""
        key = (anchor, n, games[n - 1].id)
        with self._lock:
            found = self._fits.get(key)
        if found is None:
            found = {r.player: r.estimate for r in rate(games[:n], 0).ratings
                     if math.isfinite(r.estimate)}
            with self._lock:
                self._fits[key] = found
                while len(self._fits) > FITS_KEPT:
                    self._fits.popitem(last=False)
        return found


def checkpoints(total: int, points: int = HISTORY_POINTS) -> list[int]:
    """The ``n`` at which a rating history is fitted: multiples of a power of two,
    at most ``points`` of them, and ``total``; they stay the same as games are
    added (until the step doubles), so their fits are reused."""
    if total <= 0:
        return []
    step = 1
    while total > step * points:
        step *= 2
    return sorted({*range(step, total + 1, step), total})


def rating_history(games: Sequence[StoredGame], players: set[str], fits: Fits | None = None,
                   anchor: str = "", points: int = HISTORY_POINTS
                   ) -> list[tuple[int, dict[str, float]]]:
    """The Elo of ``players`` over a pool's games, oldest first: fitted on the first
    ``n`` games at the :func:`checkpoints` (no bootstrap), each with the finite
    estimates of the players rated by then."""
    fits = fits or Fits()
    history = []
    for n in checkpoints(len(games), points):
        found = {player: elo for player, elo in fits.of(anchor, games, n).items()
                 if player in players}
        if found:
            history.append((n, found))
    return history
