"""What a bot's page shows beyond its versions: their ratings over time (the
x-axis in time, from when the pool's games were stored), the head-to-head
against every opponent (the report's pairwise tallies, :func:`reports.render.bot_pools`,
with the pair's Elo difference and its interval), its recent games from its own
side, and its faults with the move they happened at."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from arena.server.views import Snapshot
from arena.stats.match_stats import summarize
from arena.store.database import StoredGame
from reports.charts import LINE_LEFT, LINE_WIDTH, LineChart, line_chart
from reports.render import bot_pools
from reports.templating import format_value

DAY = 86400.0


@dataclass(frozen=True)
class HeadToHead:
    """One version's record against one opponent in one pool."""

    pool: str
    version: str
    opponent: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float
    #: The pair's Elo difference with its interval (:attr:`MatchSummary.elo_text`).
    elo: str


@dataclass(frozen=True)
class OwnGame:
    """A game as the bot's page lists it: from the side of its (first) seat."""

    id: int
    game: str
    when: str
    seat: int
    version: str
    score: str
    place: int
    players: int
    #: ``W`` first alone, ``D`` first with others, ``L`` otherwise; ``-`` no result.
    result: str
    opponents: list[str]


@dataclass(frozen=True)
class OwnFault:
    game_id: int
    version: str
    kind: str
    #: The game's action step it happened at (the first the arena played for it,
    #: as the replay counts steps), None where not stored.
    step: int | None
    message: str
    stderr_tail: str


def head_to_head(snap: Snapshot, labels: Sequence[str]) -> list[HeadToHead]:
    """Every version's record against every opponent it met, pool by pool."""
    rows = []
    for label in labels:
        for pool in bot_pools(label, snap.sections):
            for opp in pool.opponents:
                score = opp.score
                rows.append(HeadToHead(
                    pool.section.title, label, opp.bot, score.total, score.wins, score.draws,
                    score.losses, score.share,
                    summarize(score.wins, score.draws, score.losses).elo_text))
    return rows


def own_games(snap: Snapshot, base: str, games: Sequence[StoredGame]) -> list[OwnGame]:
    """``games`` from the side of the first seat a version of ``base`` held."""
    found = []
    for g in games:
        seat = next(i for i, s in enumerate(g.seats) if s == base or snap.bases.get(s) == base)
        place = g.places[seat]
        firsts = sum(1 for p in g.places if p == 1)
        result = "-" if g.no_result else "W" if place == 1 and firsts == 1 else \
            "D" if place == 1 else "L"
        found.append(OwnGame(g.id, g.game, when_text(snap.times.get(g.id)), seat, g.seats[seat],
                             format_value(g.scores[seat]), place, len(g.seats), result,
                             [s for i, s in enumerate(g.seats) if i != seat]))
    return found


def own_faults(games: Sequence[StoredGame], labels: set[str], limit: int) -> list[OwnFault]:
    """The latest ``limit`` faults of ``labels`` in ``games`` (newest first)."""
    found = [OwnFault(g.id, f["bot"], f["kind"], f.get("step"), f["detail"], f["stderr_tail"])
             for g in games for f in g.faults if f["bot"] in labels]
    return found[:limit]


def when_text(stamp: float | None) -> str:
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M") if stamp else "\u2013"


def timed_history(snap: Snapshot, anchor: str, labels: set[str]
                  ) -> list[tuple[float, dict[str, float]]]:
    """:meth:`Snapshot.history` with each point at the time its last game was stored."""
    games = snap.pools.get(anchor, [])
    return [(snap.times.get(games[n - 1].id, 0.0), elo)
            for n, elo in snap.history(anchor, labels)]


def time_chart(history: Sequence[tuple[float, dict[str, float]]],
               labels: Sequence[str]) -> LineChart | None:
    """The rating history as a chart over time, a line per version, the x-axis
    in dates (or times of day, over less than two days)."""
    if not history:
        return None
    start = history[0][0]
    lines = [(label, [((t - start) / DAY, elo[label]) for t, elo in history if label in elo])
             for label in labels]
    chart = line_chart([line for line in lines if line[1]], xlabel="time (UTC)", ylabel="Elo")
    if chart is None:
        return None
    span = max(history[-1][0] - start, 1.0) / DAY
    high = max(x for _, points in lines for x, _ in points) or 1.0
    form = "%b %d" if span >= 2 else "%H:%M" if span >= 1 / 24 else "%H:%M:%S"

    def label_at(position: float) -> str:
        days = (position - LINE_LEFT) / LINE_WIDTH * high
        return datetime.fromtimestamp(start + days * DAY, UTC).strftime(form)

    return dataclasses.replace(chart, xticks=tuple((x, label_at(x)) for x, _ in chart.xticks))
