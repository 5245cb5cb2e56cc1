"""The static HTML report: leaderboards, head-to-head crosstables, tournaments, game replays.

Everything comes from stored records through :class:`arena.storage.Store`; no game is
replayed (each game class only says which recorded decisions are public), so a report can
be rendered from any database.  The output
is a flat directory of ``.html`` files and one stylesheet, with relative links only, so
it opens from ``file://`` and works offline.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, Template

from arena.faults import FAULT_KINDS, FAULT_LABELS
from arena.ratings import ratable_games, rate
from arena.storage import Store, StoredGame, counted_games
from reports.replay import replay_context as replay_context  # re-exported: tests use it
from reports.replay import write_replays

TEMPLATES = Path(__file__).parent / "templates"
STYLESHEET = "style.css"
_CHUNKS = 256  # template output pieces per write: unbuffered streaming costs a write per piece

@dataclass(frozen=True)
class BoardRow:
    """One bot's line on a leaderboard; ``elo`` is None for a bot that could not be rated."""

    rank: int | None
    bot: str
    elo: float | None
    low: float | None
    high: float | None
    games: int
    average_place: float
    first_share: float
    faults: dict[str, int]


@dataclass
class PairScore:
    """One bot's record against another over the games they sat at together."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def total(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def share(self) -> float:
        """Points (win 1, draw 1/2) per pair, in 0..1."""
        return (self.wins + self.draws / 2) / self.total if self.total else 0.0

    def add(self, mine: int, theirs: int) -> None:
        if mine < theirs:
            self.wins += 1
        elif mine == theirs:
            self.draws += 1
        else:
            self.losses += 1


@dataclass(frozen=True)
class Crosstable:
    """Pairwise scores between the bots of one game type, ``bots`` ordered by rating."""

    bots: list[str]
    cells: dict[tuple[str, str], PairScore]

    def cell(self, bot: str, opponent: str) -> PairScore | None:
        return self.cells.get((bot, opponent))


@dataclass(frozen=True)
class Section:
    """Everything shown for one game type: its leaderboard and crosstable."""

    game: str
    anchor: str
    games: int
    board: list[BoardRow]
    crosstable: Crosstable


@dataclass
class _Tally:
    games: int = 0
    place_sum: int = 0
    firsts: int = 0
    faults: Counter[str] = field(default_factory=Counter)


def render_report(store: Store, out_dir: Path, *, bootstrap: int = 200,
                  max_replays: int | None = None) -> Path:
    """Write the whole report into ``out_dir`` (created if needed); return its index.html.

    ``bootstrap`` is the number of resamples behind each Elo confidence interval.
    ``max_replays`` limits replay pages to the most recent N games (None: every game).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TEMPLATES / STYLESHEET, out_dir / STYLESHEET)
    env = _environment()

    games = list(store.games())
    tournaments = store.tournaments()
    kinds = fault_kinds(games)
    sections = [section(name, group, kinds, bootstrap)
                for name, group in _group(games, lambda g: g.game).items()]
    replayed = replay_ids(games, max_replays)
    common = {"kinds": kinds, "labels": FAULT_LABELS,
              "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}

    _write(env, "index.html", out_dir / "index.html", active="leaderboard", sections=sections,
           total_games=len(games), tournaments=tournaments, bots=store.bots(), **common)
    _write(env, "head_to_head.html", out_dir / "head-to-head.html", active="h2h",
           sections=sections, **common)
    _write(env, "tournaments.html", out_dir / "tournaments.html", active="tournaments",
           tournaments=[tournament_summary(t) for t in tournaments], **common)

    by_tournament = _group(games, lambda g: g.tournament_id)
    for tournament in tournaments:
        own = by_tournament.get(tournament["id"], [])
        _write(env, "tournament.html", out_dir / f"tournament-{tournament['id']}.html",
               active="tournaments", t=tournament_summary(tournament),
               config=config_items(tournament), board=leaderboard(own, kinds, bootstrap),
               games=own, replayed=replayed, **common)

    write_replays(env.get_template("game.html"), store, out_dir, games, replayed,
                  tournaments, common)
    return out_dir / "index.html"


# -- statistics ---------------------------------------------------------------------------

def fault_kinds(games: Iterable[StoredGame]) -> list[str]:
    """The four standard fault kinds, then any other kind found in ``games``."""
    seen = {fault["kind"] for game in games for fault in game.faults}
    return list(FAULT_KINDS) + sorted(seen - set(FAULT_KINDS))


def section(game: str, games: Sequence[StoredGame], kinds: Sequence[str],
            bootstrap: int) -> Section:
    """Leaderboard and crosstable of the games of one game type."""
    board = leaderboard(games, kinds, bootstrap)
    return Section(game=game, anchor=slug(game), games=len(games), board=board,
                   crosstable=crosstable(games, [row.bot for row in board]))


def leaderboard(games: Sequence[StoredGame], kinds: Sequence[str],
                bootstrap: int) -> list[BoardRow]:
    """Every bot of ``games``, best Elo first, with its places and fault counts.

    Games that seat one bot twice cannot be rated (a player cannot play itself); they
    still count for places and faults, and a bot seen only in such games is listed last
    without an Elo.  Games without a result (every seat faulted) count for faults only.
    """
    tallies = _tallies(games)
    ratable = ratable_games(games)
    ratings = rate(ratable, bootstrap=bootstrap) if ratable else []
    rows = [_row(rank, r.player, tallies[r.player], kinds, (r.elo, r.low, r.high))
            for rank, r in enumerate(ratings, start=1)]
    rated = {r.player for r in ratings}
    rows += [_row(None, bot, tally, kinds, None)
             for bot, tally in sorted(tallies.items()) if bot not in rated]
    return rows


def _tallies(games: Iterable[StoredGame]) -> dict[str, _Tally]:
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    for game in games:
        for fault in game.faults:
            tallies[fault["bot"]].faults[fault["kind"]] += 1
        if game.no_result:
            continue
        for bot, place in zip(game.seats, game.places, strict=True):
            tally = tallies[bot]
            tally.games += 1
            tally.place_sum += place
            tally.firsts += place == 1
    return tallies


def _row(rank: int | None, bot: str, tally: _Tally, kinds: Sequence[str],
         elo: tuple[float, float, float] | None) -> BoardRow:
    played = max(tally.games, 1)
    return BoardRow(rank=rank, bot=bot, elo=elo[0] if elo else None,
                    low=elo[1] if elo else None, high=elo[2] if elo else None,
                    games=tally.games, average_place=tally.place_sum / played,
                    first_share=tally.firsts / played,
                    faults={kind: tally.faults[kind] for kind in kinds})


def crosstable(games: Iterable[StoredGame], order: Sequence[str]) -> Crosstable:
    """Pairwise results: each pair of seats at one table is one win, draw or loss."""
    cells: dict[tuple[str, str], PairScore] = defaultdict(PairScore)
    for game in counted_games(games):
        for i, j in itertools.combinations(range(len(game.seats)), 2):
            a, b = game.seats[i], game.seats[j]
            if a == b:
                continue
            cells[a, b].add(game.places[i], game.places[j])
            cells[b, a].add(game.places[j], game.places[i])
    return Crosstable(bots=list(order), cells=dict(cells))


def replay_ids(games: Sequence[StoredGame], max_replays: int | None) -> set[int]:
    """Ids of the games that get a replay page: the most recent ``max_replays``, or all."""
    ids = sorted(game.id for game in games)
    if max_replays is not None:
        ids = ids[len(ids) - max_replays:] if max_replays > 0 else []
    return set(ids)


# -- page data ----------------------------------------------------------------------------

def tournament_summary(tournament: dict[str, Any]) -> dict[str, Any]:
    """A stored tournament plus its distinct bots (in seating order) and creation time."""
    bots = list(dict.fromkeys(bot for table in tournament["tables"] for bot in table))
    return {**tournament, "bots": bots, "created_text": format_time(tournament["created"])}


def config_items(tournament: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) pairs describing a tournament's configuration, whatever its keys."""
    config: dict[str, Any] = tournament["config"] or {}
    tables = tournament["tables"]
    items = [("Game", tournament["game"]), ("Kind", tournament["kind"]),
             ("Tables", str(len(tables)))]
    sizes = sorted({len(table) for table in tables})
    if "table_size" not in config and sizes:
        items.append(("Table size", " / ".join(map(str, sizes))))
    for key, value in config.items():
        if key in ("game", "protections"):  # protections: a notice of their own
            continue
        if key == "bots" and isinstance(value, list):
            text = "; ".join(f"{b.get('name')}: {b.get('command')}" for b in value
                             if isinstance(b, dict))
        else:
            text = format_value(value)
        items.append((key.replace("_", " ").capitalize(), text or "(none)"))
    return items


def format_value(value: Any) -> str:
    """A config, option, action or event value as short readable text.

    Dicts become ``key: value, ...`` (empty: ``""``), whole floats lose their ``.0``,
    other non-strings are JSON.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ", ".join([f"{key}: {format_value(item)}" for key, item in value.items()])
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, ensure_ascii=False)


def format_time(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "game"


def signed(value: float) -> str:
    """Elo as ``+123`` / ``-45`` (rounded first, so never ``-0``)."""
    return f"{round(value):+d}"


def percent(share: float) -> str:
    """A 0..1 share as a whole percentage, halves rounded up (87.5 and 62.5 alike)."""
    return f"{math.floor(100 * share + 0.5)}%"


def _to_json(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


def _group(games: Iterable[StoredGame], key: Any) -> dict[Any, list[StoredGame]]:
    groups: dict[Any, list[StoredGame]] = {}
    for game in games:
        groups.setdefault(key(game), []).append(game)
    return groups


# -- writing ------------------------------------------------------------------------------

def _environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(signed=signed, json=_to_json, value=format_value, percent=percent)
    return env


def _write(env: Environment, template: str, path: Path, **context: Any) -> None:
    _dump(env.get_template(template), path, context)


def _dump(template: Template, path: Path, context: dict[str, Any]) -> None:
    """Stream a page to disk in buffered chunks (a big games table never sits in memory)."""
    stream = template.stream(**context)
    stream.enable_buffering(_CHUNKS)
    stream.dump(str(path), encoding="utf-8")
