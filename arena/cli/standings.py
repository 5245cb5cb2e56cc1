"""Standings in the terminal, cutechess-style: at the end of a tournament, match or
ladder run, every ``--standings-every N`` games while it runs, and from the database
with ``arena standings``.

The figures are the report's (:func:`reports.board.board`: the Elo fit with its
bootstrap intervals and rank intervals, the place tallies and faults of
:mod:`reports.stats`), and a match's test is the one ``arena match`` runs
(:func:`arena.runner.tournament.match_test` on the stored games), so the terminal
and the HTML report never disagree.  Only the layout is made here::

    rank  bot       Elo [95%]         games  score  avg place  firsts  faults     later
    1     heur@1    +104 [+60, +150]     24  72.9%       1.29      17  -          +0.02 p=0.41
    2-3   random@1  -52 [-98, -8]        24  35.4%       1.71       7  1 timeout  -0.05 p=0.77

``later`` is the rotation-order test (:mod:`arena.stats.rotation_learning`): how
much better a bot places in the seat rotations of a deal played after the first
one, and its one-sided p-value; a flagged bot gets a ``!`` and a line below.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.cli.common import Subparsers, UserError, open_store
from arena.cli.rerender import Periodic
from arena.formats.schedule import Match
from arena.runner.plan import Plan
from arena.runner.tournament import match_test
from arena.stats.match_stats import SequentialTest, summarize_pairs
from arena.stats.rotation_learning import LEVEL, Learning
from arena.store.database import DEFAULT_URL, Store, StoredGame

#: Resamples behind the rating intervals of the standings (the report's default).
BOOTSTRAP = 200
#: With no ``--standings-every``: once a run has lasted this long, standings this often.
AUTO_SECONDS = 60.0
#: The most games ``--standings-every`` accepts.
MAX_EVERY = 10_000_000


# -- the figures ------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One bot's line: rank interval, label, Elo with interval, games, pairwise score
    (share of points against each opponent met), average place, first places, faults."""

    rank: str
    bot: str
    elo: str
    estimate: float | None
    lower: float | None
    upper: float | None
    games: int
    score: float | None
    average_place: float | None
    firsts: int
    faults: dict[str, int]
    #: The rotation-order test; None without a block played in a drawn order.
    learning: Learning | None = None
    #: :attr:`arena.stats.ratings.Rating.kind` (None: not rated), whether provisional,
    #: and its connected group (0: the pool is one group).
    elo_kind: str | None = None
    provisional: bool = False
    group: int = 0


@dataclass(frozen=True)
class Standings:
    """The standings of one set of games: a tournament's or a pool's."""

    title: str
    games: int
    rows: tuple[Row, ...]
    #: A match's closing lines (verdict, W/D/L and pairs, Elo, LLR with its bounds).
    match: tuple[str, ...] = ()
    #: A match's test, for ``--json``.
    test: SequentialTest | None = None


def standings(title: str, games: Sequence[StoredGame],
              blocks: Mapping[int, int] | None = None) -> Standings:
    """The report's leaderboard (:func:`reports.board.board`) of ``games``;
    ``blocks``: :func:`reports.stats.order_blocks` of their tournaments."""
    from reports.board import Figures, board
    from reports.stats import fault_kinds

    figures = Figures(BOOTSTRAP, blocks)
    kinds = fault_kinds(games)
    tallies, _ = figures.of(games)
    totals: dict[str, int] = defaultdict(int)
    points: dict[str, float] = defaultdict(float)
    for (bot, _), score in tallies.pairs.items():
        totals[bot] += score.total
        points[bot] += score.wins + score.draws / 2
    rows = []
    for row in board(games, figures, {}, kinds):
        total = totals[row.bot]
        rating = row.rating
        rows.append(Row(
            rank=row.rank, bot=row.bot, elo=row.elo,
            estimate=_finite(rating.estimate) if rating else None,
            lower=_finite(rating.lower) if rating else None,
            upper=_finite(rating.upper) if rating else None,
            games=row.tally.games, score=points[row.bot] / total if total else None,
            average_place=row.tally.average_place if row.tally.games else None,
            firsts=row.tally.firsts,
            faults={kind: n for kind, n in zip(kinds, row.faults, strict=True) if n},
            learning=row.learning, elo_kind=rating.kind if rating else None,
            provisional=row.provisional, group=rating.group if rating else 0))
    return Standings(title, len(games), tuple(rows))


def tournament_standings(store: Store, tournament_id: int) -> Standings:
    """A stored tournament's standings (UserError if there is none), with its
    sequential test if it is a match."""
    stored = store.tournament(tournament_id)
    if stored is None:
        raise UserError(f"no tournament {tournament_id} in the database (see 'arena "
                        f"tournaments')")
    from reports.stats import order_blocks

    games = list(store.games(tournament_id))
    title = f"{stored['kind']} {tournament_id}: {stored['game']}"
    table = standings(title, games, order_blocks([stored]))
    if stored["kind"] != Match.kind:
        return table
    plan = Plan.from_stored(stored, store.deal_secret(tournament_id))
    test = match_test(plan, games)
    verdict = match_verdict(plan, tournament_id, test, len(games) // plan.table_size)
    return Standings(title, len(games), table.rows, tuple(verdict), test)


def pool_standings(store: Store, anchor: str | None) -> list[Standings]:
    """The report's pools of rated games (checks left out), each with its standings:
    every pool, or the one named ``anchor`` (as in the report: ``five``, ``five-2``)."""
    from reports.render import latest_checks, tournament_summary
    from reports.stats import order_blocks, split_pools, time_control

    tournaments = [tournament_summary(t) for t in store.tournaments()]
    checks = latest_checks(tournaments).tournament_ids
    controls = {t["id"]: time_control(t["config"]) for t in tournaments}
    rated = [game for game in store.scan_games() if game.tournament_id not in checks]
    pools = split_pools(rated, controls)
    if anchor is not None:
        pools = [pool for pool in pools if pool.anchor == anchor]
        if not pools:
            known = ", ".join(p.anchor for p in split_pools(rated, controls)) or "none"
            raise UserError(f"no pool {anchor!r} (pools: {known})")
    blocks = order_blocks(tournaments)
    return [standings(f"pool {pool.anchor}: {pool.title}", pool.games, blocks)
            for pool in pools]


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


# -- text and JSON ----------------------------------------------------------------------

HEADER = ("rank", "bot", "Elo [95%]", "games", "score", "avg place", "firsts", "faults",
          "later")
#: What the ``later`` column means (``arena standings --help``).
LATER_HELP = ("'later' is the rotation-order test: how many more place points (0 last, "
              "1 first) a bot makes in the seat rotations of a deal played after the "
              "first-played one, and the one-sided p-value that it is chance; '!' and a "
              f"line below flag p < {LEVEL:g}: the bot may carry what it saw of a deal "
              "from an earlier rotation to a later one (docs/formats.md#rotation-order)")


#: What the ``Elo [95%]`` and ``score`` columns mean (``arena standings --help``).
ELO_HELP = ("'Elo [95%]' is the maximum-likelihood Elo of every pair of bots at a table "
            "(the better place wins the pair), centred on the pool's mean, with its 95% "
            "interval; '> x (unbeaten)' / '< x (winless)': the bot scored every / no pair "
            "against the rest, so its Elo has no finite estimate and only that 95% bound "
            "exists; '(reference)': the bot the others are measured from; 'few games': "
            "fewer than 20 rated games, provisional; 'group N': games never linked these "
            "bots to the other groups, so ratings of different groups are not comparable; "
            "'not comparable': no chain of results places the bot against its group "
            "(docs/ratings.md). 'score' is the share of points in the pairs a bot played, "
            "whoever its opponents were, so it can disagree with Elo: a bot that met weaker "
            "opponents (a gauntlet, a ladder) scores more at the same Elo, and at tables of "
            "3 or more a place counts against every other seat (second of three is a win "
            "and a loss), not only first places")


def group_lines(table: Standings) -> list[str]:
    """A line when the rows fall into groups never linked by games."""
    groups = sorted({row.group for row in table.rows if row.group})
    if len(groups) < 2:
        return []
    return [f"groups {', '.join(map(str, groups))} never met (no games link them): ratings "
            f"of different groups are not comparable, and ranks are within a group"]


def later_text(learning: Learning | None) -> str:
    """A rotation-order test in a cell: advantage and p-value, ``!`` if flagged."""
    if learning is None or not learning.units:
        return "-"
    return (f"{learning.advantage:+.2f} p={learning.p_value:.2g}"
            + (" !" if learning.flagged else ""))


def flagged_lines(table: Standings) -> list[str]:
    """A line per bot the rotation-order test flags."""
    return [f"! {row.bot} places better in later-played rotations of its deals "
            f"({row.learning.advantage:+.2f} points over {row.learning.units} blocks, "
            f"p = {row.learning.p_value:.2g} < {LEVEL:g}): it may learn from earlier "
            f"rotations of a deal (see docs/formats.md#rotation-order)"
            for row in table.rows if row.learning is not None and row.learning.flagged]


def lines(table: Standings) -> list[str]:
    """The standings as aligned plain lines (a title, a header, a row per bot), a
    line per bot the rotation-order test flags, then a match's lines."""
    cells = [HEADER] + [(
        row.rank.replace("\u2013", "-"), row.bot, row.elo.replace("\u2013", "-"),
        str(row.games), "-" if row.score is None else f"{100 * row.score:.1f}%",
        "-" if row.average_place is None else f"{row.average_place:.2f}", str(row.firsts),
        ", ".join(f"{n} {kind}" for kind, n in row.faults.items()) or "-",
        later_text(row.learning))
        for row in table.rows]
    widths = [max(len(cell[i]) for cell in cells) for i in range(len(HEADER))]
    right = {3, 4, 5, 6}
    text = [f"{table.title}, {table.games} games"]
    for cell in cells:
        text.append("  ".join(c.rjust(w) if i in right else c.ljust(w)
                              for i, (c, w) in enumerate(zip(cell, widths, strict=True))
                              ).rstrip())
    return text + group_lines(table) + flagged_lines(table) + list(table.match)


def as_json(table: Standings) -> dict[str, Any]:
    """The standings as a JSON object (non-finite numbers as null)."""
    out: dict[str, Any] = {
        "title": table.title, "games": table.games,
        "standings": [{
            "rank": row.rank.replace("\u2013", "-"), "bot": row.bot, "elo": row.estimate,
            "elo_lower": row.lower, "elo_upper": row.upper, "elo_text": row.elo,
            "elo_kind": row.elo_kind, "provisional": row.provisional,
            "group": row.group or None,
            "games": row.games, "score": row.score, "average_place": row.average_place,
            "firsts": row.firsts, "faults": row.faults,
            "rotation_learning": learning_json(row.learning)} for row in table.rows]}
    if table.test is not None:
        test, bounds = table.test, table.test.sprt.bounds
        out["match"] = {"verdict": test.outcome, "llr": test.llr, "lower": bounds.lower,
                        "upper": bounds.upper, "elo0": test.sprt.elo0,
                        "elo1": test.sprt.elo1, "model": test.sprt.model,
                        "pairs": list(test.counted.counts()), "void_pairs": test.void}
    return out


def learning_json(learning: Learning | None) -> dict[str, Any] | None:
    """A rotation-order test as JSON: blocks, mean advantage, p-value, flagged, level."""
    if learning is None:
        return None
    return {"blocks": learning.units, "advantage": learning.advantage,
            "p_value": learning.p_value, "flagged": learning.flagged, "level": LEVEL}


def match_verdict(plan: Plan, tournament_id: int, test: SequentialTest,
                  played: int) -> list[str]:
    """A match's lines: verdict, games, pairs (pentanomial), Elo, LLR with its bounds."""
    sprt = test.sprt
    first, second = (b.name for b in plan.bots)
    counted = test.counted.pairs + test.void
    verdict = {
        "H1": f"H1 accepted: {first} is better than {second} by {sprt.elo1:g} {sprt.unit} "
              f"rather than by {sprt.elo0:g} or less",
        "H0": f"H0 accepted: {first} is not better than {second} by {sprt.elo1:g} "
              f"{sprt.unit}; by {sprt.elo0:g} or less",
        "inconclusive": f"inconclusive: no bound crossed in {test.max_pairs} pairs "
                        f"(--max-pairs)",
        "running": "running: not decided yet"}[test.outcome]
    lines = [f"match {tournament_id}: {first} vs {second}, {plan.game}: {verdict}, "
             f"after {counted} pairs"]
    if played > counted:
        lines.append(f"  {played - counted} more pair(s) were in flight at the stop: "
                     f"finished and stored, not part of the test")
    if test.void:
        lines.append(f"  {test.void} pair(s) without result (every seat faulted) skipped")
    if test.counted.pairs:
        m = summarize_pairs(test.counted)
        lines += [f"  games W {m.wins} D {m.draws} L {m.losses} ({first}'s view), score "
                  f"{m.score:.3f}; pairs by {first}'s points (0, 1/2, 1, 3/2, 2): "
                  f"{' '.join(map(str, test.counted.counts()))}",
                  f"  Elo {m.elo_text}, nElo {m.nelo_text}, LOS {100 * m.los:.2f}%"]
    bounds = sprt.bounds
    lines.append(f"  LLR {test.llr:.2f} ({bounds.lower:.2f}, {bounds.upper:.2f}) "
                 f"[{sprt.elo0:.2f}, {sprt.elo1:.2f}] {sprt.unit}, {sprt.model} model")
    return lines


# -- while a run plays ------------------------------------------------------------------

def add_standings_flag(parser: argparse.ArgumentParser) -> None:
    """``--standings-every N`` of the commands that run games."""
    parser.add_argument("--standings-every", type=int, default=None, metavar="N",
                        help=f"print the standings every N games (0: only at the end; "
                             f"default: every {AUTO_SECONDS:g} s once the run has lasted "
                             f"that long; the columns: arena standings --help)")


def check_every(every: int | None) -> None:
    if every is not None and not 0 <= every <= MAX_EVERY:
        raise UserError(f"--standings-every must be from 0 to {MAX_EVERY} games, not {every}")


class Printer(Periodic):
    """Prints a running tournament's standings when due: every ``every`` stored
    games, or with ``every`` None every :data:`AUTO_SECONDS` once the run has
    lasted that long (0: never; the figures are computed on a worker thread, so
    the games and the bots' clocks never wait for them).  Lines go through
    ``say`` (above a progress bar, or as plain lines in a log)."""

    def __init__(self, store: Store, tournament_id: int, every: int | None,
                 say: Callable[[str], None]) -> None:
        super().__init__(self.print, games=every or 0,
                         minutes=AUTO_SECONDS / 60 if every is None else 0.0)
        self.store, self.tournament_id, self.say = store, tournament_id, say

    def print(self) -> None:
        """The standings now."""
        table = tournament_standings(self.store, self.tournament_id)
        self.say("\n".join(lines(table)))


def final(store: Store, tournament_id: int, *, match: bool = True) -> None:
    """The standings at the end of a run, on stderr (without a match's lines:
    ``arena match`` prints them on stdout)."""
    table = tournament_standings(store, tournament_id)
    shown = lines(table)
    print("\n".join(shown[:len(shown) - (0 if match else len(table.match))]), file=sys.stderr)


# -- arena standings --------------------------------------------------------------------

def add_standings(sub: Subparsers) -> None:
    """``arena standings``."""
    s = sub.add_parser("standings", help="the standings of a stored tournament or pool",
                       description="The standings, as printed at the end of a run: rank "
                                   "interval, bot, Elo with its 95% interval, games, score, "
                                   "average place, first places, faults; for a match its "
                                   "test. Without -t: every pool of rated games, as the "
                                   "report's leaderboards. " + ELO_HELP + ". "
                                   + LATER_HELP + ".")
    which = s.add_mutually_exclusive_group()
    which.add_argument("--tournament", "-t", type=int, metavar="ID",
                       help="one stored tournament, match or ladder")
    which.add_argument("--pool", metavar="NAME",
                       help="one pool of comparable games, named as in the report "
                            "(five, five-2, ...)")
    s.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    s.add_argument("--json", action="store_true",
                   help="print one JSON object; 'elo', 'elo_lower', 'elo_upper' are null "
                        "where that number does not exist, 'elo_kind' says why "
                        "(docs/cli.md#arena-standings)")
    s.set_defaults(run=cmd_standings)


def cmd_standings(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    if args.tournament is not None:
        tables = [tournament_standings(store, args.tournament)]
    else:
        tables = pool_standings(store, args.pool)
    if args.json:
        print(json.dumps({"standings": [as_json(table) for table in tables]}))
        return 0
    if not tables:
        print("arena: no rated games stored", file=sys.stderr)
    print("\n\n".join("\n".join(lines(table)) for table in tables))
    return 0
