"""A leaderboard's rows and the figures behind them (tallies, ratings, the rotation-order
test), each computed once: what both the report's pages (:mod:`reports.render`) and the
standings printed on the terminal (:mod:`arena.cli.standings`) show.

Kept apart from the pages so that the closing standings of a run load no templates
(jinja2) and none of the page writers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.stats.ratings import RatedPool, Rating
from arena.stats.rotation_learning import Learning
from arena.store.database import StoredGame
from reports.stats import (
    BotTally,
    Tallies,
    elo_over_time,
    learning,
    rank_text,
    rate,
    sort_value,
    tally,
)


@dataclass(frozen=True)
class BoardRow:
    """One bot's line on a leaderboard; ``rating`` None for a bot that could not be rated
    (all its games seat one bot twice, or have no result)."""

    bot: str
    version: str
    rating: Rating | None
    tally: BotTally
    faults: tuple[int, ...]
    #: Likelihood that this bot is stronger than the next one listed.
    los_next: float | None
    #: Its rotation-order test (:mod:`arena.stats.rotation_learning`), None without
    #: a block whose rotations played in a drawn order.
    learning: Learning | None = None

    @property
    def rank(self) -> str:
        return rank_text(self.rating) if self.rating else "\u2013"

    @property
    def rank_sort(self) -> int:
        return self.rating.rank_best if self.rating else 10**6

    @property
    def elo(self) -> str:
        return self.rating.format() if self.rating else "\u2013"

    @property
    def elo_sort(self) -> float:
        return sort_value(self.rating) if self.rating else -1e9

    @property
    def provisional(self) -> bool:
        return bool(self.rating and self.rating.provisional)


class Figures:
    """Tallies and ratings of game lists, each computed once (a tournament that is a whole
    pool reuses the pool's)."""

    def __init__(self, bootstrap: int, blocks: Mapping[int, int] | None = None) -> None:
        """``blocks``: deals per block of the tournaments whose rotation order is
        drawn (:func:`reports.stats.order_blocks`), for the rotation-order test."""
        self.bootstrap = bootstrap
        self.blocks = dict(blocks or {})
        self._done: dict[tuple[int, ...], tuple[Tallies, RatedPool]] = {}
        self._lines: dict[tuple[int, ...], dict[str, list[tuple[int, float]]]] = {}
        self._learning: dict[tuple[int, ...], dict[str, Learning]] = {}

    def of(self, games: Sequence[StoredGame]) -> tuple[Tallies, RatedPool]:
        key = tuple(game.id for game in games)
        if key not in self._done:
            self._done[key] = (tally(games), rate(games, self.bootstrap))
        return self._done[key]

    def learning(self, games: Sequence[StoredGame]) -> dict[str, Learning]:
        """:func:`reports.stats.learning` of ``games``, computed once."""
        key = tuple(game.id for game in games)
        if key not in self._learning:
            self._learning[key] = learning(games, self.blocks)
        return self._learning[key]

    def over_time(self, games: Sequence[StoredGame]) -> dict[str, list[tuple[int, float]]]:
        """:func:`reports.stats.elo_over_time` of ``games``, computed once."""
        key = tuple(game.id for game in games)
        if key not in self._lines:
            self._lines[key] = elo_over_time(games)
        return self._lines[key]


def board(games: Sequence[StoredGame], figures: Figures, versions: Mapping[str, str],
          kinds: Sequence[str]) -> tuple[BoardRow, ...]:
    """Every bot of ``games``, rated ones best first, then the unrated ones by name."""
    tallies, rated = figures.of(games)
    ratings = rated.ratings
    tests = figures.learning(games)

    def row(bot: str, rating: Rating | None, los_next: float | None) -> BoardRow:
        mine = tallies.bots.get(bot) or BotTally()
        return BoardRow(bot, versions.get(bot, ""), rating, mine,
                        tuple(mine.faults[kind] for kind in kinds), los_next, tests.get(bot))

    rows = [row(r.player, r, _finite(rated.los_matrix[i, i + 1]) if i + 1 < len(ratings)
                else None) for i, r in enumerate(ratings)]
    listed = {r.player for r in ratings}
    rows += [row(bot, None, None) for bot in sorted(tallies.bots) if bot not in listed]
    return tuple(rows)


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else float(value)
