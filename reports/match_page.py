"""What a match's page shows of its sequential test: the verdict, the LLR with its
bounds, the pairs (pentanomial) and the LLR's path, pair by pair, as fishtest shows a test.

The test is recomputed from the stored games exactly as ``arena match --resume`` does
(:class:`arena.stats.match_stats.SequentialTest`: pairs in deal order, a pair with a
game without result skipped), so the page and the terminal agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.stats.match_stats import (
    Pentanomial,
    SequentialTest,
    Sprt,
    points_by_places,
    verdict_text,
)
from arena.store.database import StoredGame
from reports.charts import LineChart, line_chart


@dataclass(frozen=True)
class MatchView:
    """A match's test as its page shows it."""

    first: str
    second: str
    sprt: Sprt
    #: "H1", "H0", "inconclusive" (every pair played) or "running".
    outcome: str
    verdict: str
    llr: float
    lower: float
    upper: float
    pairs: Pentanomial
    void: int
    max_pairs: int
    chart: LineChart | None


def match_view(tournament: Mapping[str, Any], games: Sequence[StoredGame]
               ) -> MatchView | None:
    """The test of a stored match (``tournament`` with its ``games``), None for any
    other tournament or a match whose configuration names no test or no two bots."""
    config = tournament.get("config") or {}
    settings = (config.get("format") or {}).get("sprt")
    names = [bot.get("name") for bot in config.get("bots", []) if isinstance(bot, dict)]
    if tournament.get("kind") != "match" or not isinstance(settings, dict) or len(names) < 2:
        return None
    sprt = Sprt.from_dict(settings)
    first, second = str(names[0]), str(names[1])
    size = int(config.get("table_size", 2))
    test = SequentialTest(sprt, int(config.get("games_per_table", 0)) // size)
    for game in sorted(games, key=lambda g: g.number):
        points = None if game.no_result or first not in game.seats or second not in game.seats \
            else points_by_places(game.places[game.seats.index(first)],
                                  game.places[game.seats.index(second)])
        test.record(game.number // size, game.number % size, points)
    bounds = sprt.bounds
    chart = line_chart([("LLR", [(0, 0.0), *test.path])],
                       levels=[(bounds.upper, f"H1 {bounds.upper:+.2f}", "upper"),
                               (bounds.lower, f"H0 {bounds.lower:+.2f}", "lower"),
                               (0.0, "0", "zero")],
                       xlabel="pairs", ylabel="LLR")
    return MatchView(first, second, sprt, test.outcome,
                     verdict_text(test.outcome, first, second, sprt), test.llr,
                     bounds.lower, bounds.upper, test.counted, test.void, test.max_pairs,
                     chart)
