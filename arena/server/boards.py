"""The leaderboard as the server shows it: one tab per game, each of its pools'
rows with the owner, the rating as :meth:`~arena.stats.ratings.Rating.format`
writes it (the report's text), the average place and share of firsts, the rank
interval explained, the version's age and the movement
since the day before (the rank order of a fit, no bootstrap, on the pool's games
stored until then)."""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from arena.server.views import Snapshot
from reports.render import BoardRow, Section

#: Seconds back that "movement" compares with.
MOVEMENT_SECONDS = 86400.0


@dataclass(frozen=True)
class LeaderRow:
    """One bot version's line on a game's tab."""

    position: int
    #: The rank interval ("1–3"), None when it is one rank.
    ranks: str | None
    bot: str
    base: str
    owner: str
    rating: str
    games: int
    #: Its average place (1 = first; a faulted game counts as last).
    average_place: float
    first_share: float
    age: str
    #: Places gained (> 0) or lost since the day before; None: not ranked then.
    movement: int | None
    own: bool


@dataclass(frozen=True)
class Board:
    """One pool of a game's tab."""

    section: Section
    rows: tuple[LeaderRow, ...]

    @property
    def overlapping(self) -> bool:
        return any(row.ranks for row in self.rows)


def games_of(snap: Snapshot) -> list[str]:
    """The games with a leaderboard, in the order of their first pool."""
    return list(dict.fromkeys(game_of(snap, s) for s in snap.sections))


def game_of(snap: Snapshot, section: Section) -> str:
    games = snap.pools.get(section.anchor)
    return games[0].game if games else section.title


def boards(snap: Snapshot, game: str, owner: Callable[[str], str], own: set[str],
           added: Mapping[str, datetime | None], now: float | None = None) -> list[Board]:
    """The boards of ``game``'s pools; ``owner``: a base name's owner as shown,
    ``own``: the viewer's base names, ``added``: each label's registration time."""
    now = time.time() if now is None else now
    found = []
    for s in snap.sections:
        if game_of(snap, s) != game:
            continue
        before = previous_order(snap, s.anchor, now - MOVEMENT_SECONDS)
        rows = tuple(leader_row(position, row, snap.bases.get(row.bot, row.bot), owner,
                                own, added.get(row.bot), before, now)
                     for position, row in enumerate(s.board, 1))
        found.append(Board(s, rows))
    return found


def leader_row(position: int, row: BoardRow, base: str, owner: Callable[[str], str],
               own: set[str], added: datetime | None, before: Sequence[str] | None,
               now: float) -> LeaderRow:
    rating = row.rating
    ranks = None
    if rating is not None and rating.rank_best != rating.rank_worst:
        ranks = row.rank
    movement = None
    if before is not None and row.bot in before and rating is not None:
        movement = before.index(row.bot) + 1 - position
    age = age_text(now - added.timestamp()) if added else "\u2013"
    return LeaderRow(position, ranks, row.bot, base, owner(base), row.elo, row.tally.games,
                     row.tally.average_place, row.tally.first_share, age, movement, base in own)


def previous_order(snap: Snapshot, anchor: str, until: float) -> list[str] | None:
    """The pool's bots best first as fitted on its games stored before ``until``;
    None when it had none then (or no fit is at hand)."""
    games = snap.pools.get(anchor, [])
    stamps = [snap.times.get(g.id, 0.0) for g in games]
    n = bisect.bisect_left(stamps, until) if stamps == sorted(stamps) else \
        sum(1 for t in stamps if t < until)
    if n == 0 or snap.fits is None:
        return None
    estimates = snap.fits.of(anchor, games, n)
    return sorted(estimates, key=lambda bot: -estimates[bot])


def age_text(seconds: float) -> str:
    """``5 min``, ``3 h``, ``2 d``: how long ago, roughly."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return "just now"
