"""The static HTML report: leaderboards, head-to-head, bot pages, tournaments, replays.

Everything comes from stored games through :class:`arena.store.database.Store`.  The output is
a flat folder of ``.html`` files, one stylesheet and the replay viewer's assets, with
relative links only, so it opens from ``file://`` and works offline.

Pages (``page`` names a pool of comparable games, see :mod:`reports.stats`):

* ``index.html``: a leaderboard and rating chart per pool, the registered bots;
* ``head-to-head.html``: per pool, the pairwise results and the LOS matrix;
* ``bot-<name>-<hash>.html``: one bot's results per pool, opponent and seat, its place
  histogram, faults with their stderr tails and move-time percentiles;
* ``tournaments.html``, ``tournament-<id>.html`` (summary, standings, first games page)
  and ``tournament-<id>-<n>.html`` (more games, at most :data:`PAGE_ROWS` rows and
  :data:`PAGE_BYTES` of rows a page);
* ``game-<id>.html``: replay pages (:mod:`reports.replay`) of every game (or of the
  most recent, :func:`replay_ids`), written by a pool of processes
  (:mod:`reports.replay_pool`).

Rendering is incremental (:mod:`reports.site`): a page whose inputs did not change since
the last render into the same folder is not written again.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment
from markupsafe import Markup, escape

from arena.stats.match_stats import MatchSummary, summarize
from arena.stats.ratings import PROVISIONAL_GAMES
from arena.stats.rotation_learning import LEVEL as LEARNING_LEVEL
from arena.store.database import PERSON_KIND, Store, StoredGame, stored_check
from arena.store.faults import FAULT_LABELS
from arena.store.replays import VIEWS_FORMAT
from arena.store.sealed import shown_config
from reports import replay_pool
from reports.board import BoardRow as BoardRow
from reports.board import Figures as Figures
from reports.board import board as board
from reports.charts import LineChart, RatingChart, line_chart, rating_chart
from reports.folders import REPORT_MARKER, check_target, is_earlier, written_into
from reports.match_page import match_view
from reports.progress import Progress
from reports.replay import seat_file
from reports.site import Site
from reports.stats import (
    TIME_SAMPLE_GAMES,
    TIME_SAMPLE_MOVES,
    FaultExample,
    MoveTimes,
    PairScore,
    PlaceTally,
    Pool,
    fault_examples,
    fault_kinds,
    move_times,
    order_blocks,
    split_pools,
    time_control,
    time_samples,
)
from reports.templating import SHARED_FILES, environment

# re-exported: their home was here (tests and other code import them from here)
from reports.templating import bot_page as bot_page
from reports.templating import format_value as format_value
from reports.templating import match_number as match_number
from reports.templating import percent as percent
from reports.templating import shade as shade

TEMPLATES = Path(__file__).parent / "templates"
#: Games per page of a tournament's games list, at most.
PAGE_ROWS = 500
#: Bytes of games-list rows per page, at most (a page stays well under 2 MB).
PAGE_BYTES = 1_500_000
#: Tables listed in a tournament's seating (a big field has tens of thousands).
SEATING_SHOWN = 200


# -- what the pages show ----------------------------------------------------------------

@dataclass(frozen=True)
class Section:
    """One pool's leaderboard, chart and pairwise results."""

    anchor: str
    title: str
    settings: tuple[tuple[str, str], ...]
    games: int
    board: tuple[BoardRow, ...]
    chart: RatingChart | None
    pairs: Mapping[tuple[str, str], PairScore]
    los: Mapping[tuple[str, str], float]

    @property
    def bots(self) -> list[str]:
        return [row.bot for row in self.board]

    def cell(self, bot: str, opponent: str) -> PairScore | None:
        return self.pairs.get((bot, opponent))

    def matches(self) -> list[tuple[str, str, MatchSummary]]:
        """Each pair that met, the higher-rated bot first, as fastchess prints a
        match: W/D/L, score, Elo and nElo with 95% errors, LOS."""
        bots = self.bots
        return [(bot, opponent, summarize(score.wins, score.draws, score.losses))
                for i, bot in enumerate(bots) for opponent in bots[i + 1:]
                if (score := self.pairs.get((bot, opponent))) is not None and score.total]


@dataclass(frozen=True)
class Opponent:
    """A bot's results against one opponent in one pool."""

    bot: str
    score: PairScore
    #: Likelihood of superiority from the ratings' bootstrap (None if not rated).
    los: float | None


@dataclass(frozen=True)
class BotPool:
    """What a bot page shows of one pool."""

    section: Section
    row: BoardRow
    opponents: tuple[Opponent, ...]
    histogram: tuple[tuple[int, int, float], ...]  # place, games, share of the most common
    seats: tuple[tuple[int, PlaceTally], ...]


@dataclass(frozen=True)
class FaultKind:
    """A bot's faults of one kind: how many, and the latest few with a replay flag."""

    kind: str
    count: int
    examples: tuple[tuple[FaultExample, bool], ...]


# -- the report ---------------------------------------------------------------------------

def render_report(store: Store, out_dir: Path, *, bootstrap: int = 200,
                  max_replays: int | None = None, page_rows: int = PAGE_ROWS,
                  processes: int | None = None, nice: int = 0, logs: bool = False,
                  progress: Progress | None = None) -> Path:
    """Write the report into ``out_dir``; return its index.html.

    A new report is written into a temporary folder beside ``out_dir`` that replaces it
    when complete (:mod:`reports.folders`); an earlier report in ``out_dir`` is updated
    in place, page by page.  FolderError (a ValueError) for an ``out_dir`` that is not
    empty and not an earlier report, ValueError for a negative ``max_replays``.

    ``bootstrap`` is the number of resamples behind each rating interval.
    ``max_replays``: replay pages for the most recent N games; None: for every game.
    ``page_rows`` bounds the rows of a games-list page.  Replays are written on
    ``processes`` worker processes (default: one per CPU) at niceness ``nice``
    (:mod:`reports.replay_pool`).  Pages already in ``out_dir`` from identical inputs
    are left as they are.  ``logs``: each seat file holds the seat's per-move stderr
    too (``arena report --logs``, for the organiser: :mod:`arena.store.move_logs`).
    ``progress`` is told what is being computed, and how far the replays are.
    """
    out_dir = check_target(out_dir, REPORT_MARKER, "report")
    if max_replays is not None and max_replays < 0:
        raise ValueError(f"max_replays must be 0 or more, not {max_replays}")
    if progress is not None:
        progress.say("reading the stored games")
    games = list(store.scan_games())
    gc.freeze()  # the games live to the end: collections need not scan them again and again
    try:
        if is_earlier(out_dir, REPORT_MARKER):
            _render(store, out_dir, games, bootstrap, max_replays, page_rows, processes, nice,
                    progress, logs=logs)
        else:
            with written_into(out_dir) as work:
                _render(store, work, games, bootstrap, max_replays, page_rows, processes,
                        nice, progress, logs=logs)
    finally:
        gc.unfreeze()
    if progress is not None:
        progress.done()
    return out_dir / "index.html"


def _render(store: Store, out_dir: Path, games: Sequence[StoredGame], bootstrap: int,
            max_replays: int | None, page_rows: int, processes: int | None,
            nice: int, progress: Progress | None, *, logs: bool = False) -> None:
    site, env = Site(out_dir), _environment()
    for name in SHARED_FILES:
        site.copy(name, TEMPLATES / name)
    tournaments = [tournament_summary(t) for t in store.tournaments()]
    kinds = fault_kinds(games)
    replayed = replay_ids(games, max_replays)
    common = {"kinds": kinds, "labels": FAULT_LABELS,
              "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
    # The replays' workers start first: this process renders the other pages meanwhile.
    with _replay_pages(site, store, games, replayed, tournaments, common, processes, nice,
                       logs, progress) as running:
        _main_pages(site, env, store, games, tournaments, replayed, common, bootstrap,
                    page_rows, progress)
        running.wait(progress)
    site.finish()


def _main_pages(site: Site, env: Environment, store: Store, games: Sequence[StoredGame],
                tournaments: list[dict[str, Any]], replayed: set[int],
                common: dict[str, Any], bootstrap: int, page_rows: int,
                progress: Progress | None) -> None:
    """Every page but the replays: leaderboards, head-to-head, tournaments, bots."""
    registered = store.bots()
    # A label (BASE@VERSION) names the arena's version; beside it, what the bot reports.
    versions = {bot["name"]: bot["reported"] for bot in registered}
    bases = {bot["name"]: bot["base"] for bot in registered}
    kinds = common["kinds"]
    figures = Figures(bootstrap, order_blocks(tournaments))
    controls = {t["id"]: time_control(t["config"]) for t in tournaments}
    checks = latest_checks(tournaments)
    unrated = unrated_ids(tournaments, checks)
    rated = [game for game in games if game.tournament_id not in unrated]
    split = split_pools(rated, controls)
    if progress is not None:
        progress.say(f"rating {len(rated):,} games in {len(split)} pool(s) "
                     f"({bootstrap} bootstrap resamples each), writing the other pages")
    sections = [section(pool, figures, kinds, versions) for pool in split]
    pool_games = {pool.anchor: pool.games for pool in split}
    pages = _Pages(site, env, common)

    played = {row.bot for s in sections for row in s.board} | set(checks.latest)
    pages.add("index.html", "index.html", active="leaderboard", sections=sections,
              total_games=len(rated), checks=len(checks.tournament_ids),
              tournaments=len(tournaments) - len(checks.tournament_ids), bots=registered,
              pages={bot: bot_page(bot) for bot in played})
    pages.add("head-to-head.html", "head_to_head.html", active="h2h", sections=sections)
    pages.add("tournaments.html", "tournaments.html", active="tournaments",
              tournaments=tournaments)
    by_tournament = _group(games, lambda g: g.tournament_id)
    for tournament in tournaments:
        own = by_tournament.get(tournament["id"], [])
        ranked = bool(own) and tournament["id"] not in unrated
        _tournament_pages(pages, tournament, own, replayed, page_rows,
                          board=board(own, figures, versions, kinds) if ranked else (),
                          chart=ladder_chart(own, figures)
                          if ranked and tournament["kind"] == "ladder" else None)
    _bot_pages(pages, store, rated, sections, replayed, versions, checks.latest, bases,
               _VersionLines(figures, pool_games))


def section(pool: Pool, figures: Figures, kinds: Sequence[str],
            versions: Mapping[str, str]) -> Section:
    """A pool's leaderboard, chart and pairwise results."""
    tallies, rated = figures.of(pool.games)
    rows = board(pool.games, figures, versions, kinds)
    order = {r.player: i for i, r in enumerate(rated.ratings)}
    los = {(a, b): float(rated.los_matrix[order[a], order[b]])
           for a in order for b in order
           if a != b and not math.isnan(rated.los_matrix[order[a], order[b]])}
    return Section(anchor=pool.anchor, title=pool.title,
                   settings=pool.settings, games=len(pool.games), board=rows,
                   chart=rating_chart(rated.ratings), pairs=dict(tallies.pairs), los=los)


def replay_ids(games: Sequence[StoredGame], max_replays: int | None) -> set[int]:
    """Ids of the games that get a replay page: the ``max_replays`` most recent; by
    default (None) every game."""
    ids = sorted(game.id for game in games)
    if max_replays is None:
        return set(ids)
    return set(ids[max(0, len(ids) - max_replays):] if max_replays > 0 else [])


def tournament_page(tournament_id: int, page: int = 0) -> str:
    """The file name of a tournament's page (0) or of its games list's ``page``-th page."""
    return f"tournament-{tournament_id}.html" if page == 0 \
        else f"tournament-{tournament_id}-{page + 1}.html"


# -- writing pages ------------------------------------------------------------------------

class _Pages:
    """Pages of one render: each written only when its inputs changed (:class:`Site`)."""

    def __init__(self, site: Site, env: Environment, common: dict[str, Any]) -> None:
        self.site, self.env, self.common = site, env, common

    def add(self, name: str, template: str, **context: Any) -> None:
        """Page ``name`` from ``template`` and ``context`` (its inputs, with the fault kinds)."""
        if not self.fresh(name, context):
            self.write(name, template, context)

    def fresh(self, name: str, inputs: Any) -> bool:
        return self.site.fresh(name, (self.common["kinds"], inputs))

    def write(self, name: str, template: str, context: dict[str, Any]) -> None:
        self.site.write(name, self.env.get_template(template), {**context, **self.common})


def _tournament_pages(pages: _Pages, tournament: dict[str, Any], games: Sequence[StoredGame],
                      replayed: set[int], page_rows: int, board: Sequence[BoardRow],
                      chart: LineChart | None) -> None:
    """A tournament's page (summary, standings, the first games) and its games pages."""
    tid = tournament["id"]
    labels: Mapping[str, str] = pages.common["labels"]
    names: dict[str, str] = {}
    rows = (game_row(game, game.id in replayed, labels, names) for game in games)
    first: list[str] = []
    spans: list[tuple[int, int]] = []
    done = 0
    for number, chunk in enumerate(_paginate(rows, page_rows)):
        spans.append((done + 1, done + len(chunk)))
        done += len(chunk)
        if number == 0:
            first = chunk
            continue
        _games_page(pages, tournament, number, chunk, spans[-1], len(games))
    links = [(tournament_page(tid, number), span) for number, span in enumerate(spans)]
    summary = game_summary(games)
    context = {"active": "tournaments", "t": tournament, "config": config_items(tournament),
               "summary": summary, "board": board, "links": links, "page": 0,
               "match": match_view(tournament, games), "elo_chart": chart,
               "span": spans[0] if spans else (0, 0),
               "all_replayed": all(game.id in replayed for game in games)}
    if not pages.fresh(tournament_page(tid), (context, _rows_digest(first))):
        pages.write(tournament_page(tid), "tournament.html",
                    {**context, "rows": Markup("".join(first))})


def _games_page(pages: _Pages, tournament: dict[str, Any], number: int, rows: list[str],
                span: tuple[int, int], total: int) -> None:
    """Page ``number`` (from 0) of a tournament's games list; links to its neighbours
    (the next one only once it exists, so a growing list rewrites its last page only)."""
    tid = tournament["id"]
    following = tournament_page(tid, number + 1) if span[1] < total else None
    # only what the page shows of the tournament: its progress would rewrite every page
    context = {"active": "tournaments", "t": {"id": tid, "game": tournament["game"]},
               "page": number, "span": span,
               "previous": tournament_page(tid, number - 1), "following": following}
    name = tournament_page(tid, number)
    if not pages.fresh(name, (context, _rows_digest(rows))):
        pages.write(name, "games.html", {**context, "rows": Markup("".join(rows))})


def _paginate(rows: Iterable[str], page_rows: int) -> Iterator[list[str]]:
    """``rows`` in pages of at most ``page_rows`` rows and :data:`PAGE_BYTES` bytes."""
    page: list[str] = []
    size = 0
    for row in rows:
        if page and (len(page) >= page_rows or size + len(row) > PAGE_BYTES):
            yield page
            page, size = [], 0
        page.append(row)
        size += len(row.encode()) if not row.isascii() else len(row)
    if page:
        yield page


def _rows_digest(rows: list[str]) -> str:
    hasher = hashlib.blake2b(digest_size=16)
    for row in rows:
        hasher.update(row.encode())
    return hasher.hexdigest()


def game_row(game: StoredGame, replayed: bool, labels: Mapping[str, str],
             names: dict[str, str] | None = None) -> str:
    """One games-list row as HTML (built here, not by the template: a list can hold
    100,000 games, and a template loop costs about 20 times as much).  ``names`` caches
    escaped bot names between calls."""
    names = {} if names is None else names
    link = f'<a href="game-{game.id}.html">{game.id}</a>' if replayed else str(game.id)
    seats = "".join(f'<span><span class="seatno">{seat}</span> {_escaped(bot, names)}</span>'
                    for seat, bot in enumerate(game.seats))
    scores = "".join(f"<span>{_number(score)}</span>" for score in game.scores)
    places = "".join(f'<span class="first">{place}</span>' if place == 1
                     else f"<span>{place}</span>" for place in game.places)
    faults = ""
    if game.faults:
        faults = "".join(
            f'<span class="faultline">seat {f["seat"]} {_escaped(f["bot"], names)}: '
            f'{escape(labels.get(f["kind"], f["kind"]).lower())}</span>' for f in game.faults)
        if game.no_result:
            faults = '<span class="faultline">no result</span>' + faults
        return (f'<tr class="faulty">{_cells(game, link, seats, scores, places)}'
                f'<td class="fault">{faults}</td></tr>\n')
    return f"<tr>{_cells(game, link, seats, scores, places)}<td></td></tr>\n"


def _cells(game: StoredGame, link: str, seats: str, scores: str, places: str) -> str:
    return (f'<td class="num" data-sort="{game.id}">{link}</td>'
            f'<td class="num">{game.table}</td><td class="num">{game.number}</td>'
            f'<td class="num seed">{_seed_text(game)}</td><td class="stack">{seats}</td>'
            f'<td class="num stack">{scores}</td><td class="num stack">{places}</td>'
            f'<td class="num" data-sort="{game.duration}">{game.duration:.1f}s</td>')


def _seed_text(game: StoredGame) -> str:
    return "secret" if game.shown_seed is None else str(game.shown_seed)


def _escaped(text: str, cache: dict[str, str]) -> str:
    found = cache.get(text)
    if found is None:
        found = cache[text] = str(escape(text))
    return found


def _number(value: Any) -> str:
    """A score as :func:`format_value` writes it, faster for plain numbers."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(escape(format_value(value)))


def ladder_chart(games: Sequence[StoredGame], figures: Figures) -> LineChart | None:
    """A ladder's ratings over its games, a line per bot."""
    lines = figures.over_time(games)
    return line_chart(sorted(lines.items()), xlabel="games", ylabel="Elo")


@dataclass(frozen=True)
class _VersionLines:
    """The ratings over time of a bot's versions, per pool (``pool_games`` by anchor)."""

    figures: Figures
    pool_games: Mapping[str, Sequence[StoredGame]]

    def charts(self, versions: Sequence[VersionRow]) -> list[tuple[str, LineChart]]:
        """Per pool where two or more of the versions played: their lines."""
        found = []
        for anchor in dict.fromkeys(v.anchor for v in versions if v.anchor):
            labels = {v.bot for v in versions if v.anchor == anchor}
            lines = self.figures.over_time(self.pool_games.get(anchor, ()))
            shown = sorted(((bot, points) for bot, points in lines.items() if bot in labels),
                           key=lambda line: _version_order(line[0]))
            chart = line_chart(shown, xlabel="games", ylabel="Elo") if len(shown) > 1 else None
            if chart is not None:
                found.append((next(v.pool or "" for v in versions if v.anchor == anchor), chart))
        return found


def _bot_pages(pages: _Pages, store: Store, games: Sequence[StoredGame],
               sections: Sequence[Section], replayed: set[int],
               versions: Mapping[str, str], checks: Mapping[str, list[dict[str, Any]]],
               bases: Mapping[str, str], lines: _VersionLines) -> None:
    """A page per bot that played (``games``: the rated ones) or was checked (its
    latest ``checks``), with the versions of its name (``bases``: label to base
    name); move times are read only for pages that changed."""
    samples = time_samples(games)
    examples = fault_examples(games)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for s in sections:
        for row in s.board:
            for kind, count in row.tally.faults.items():
                counts[row.bot][kind] += count
    stale: dict[str, dict[str, Any]] = {}
    for bot in sorted({row.bot for s in sections for row in s.board} | set(checks)):
        sampled = {game: ids for (who, game), ids in samples.items() if who == bot}
        context = {"active": "leaderboard", "bot": bot, "version": versions.get(bot, ""),
                   "pools": bot_pools(bot, sections), "checks": checks.get(bot, []),
                   "versions": (own_versions := version_rows(bot, bases, sections)),
                   "version_charts": lines.charts(own_versions),
                   "faults": fault_kinds_of(counts[bot], examples.get(bot, {}), replayed)}
        if not pages.fresh(bot_page(bot), (context, sampled)):
            stale[bot] = context
    wanted = {(bot, game): ids for (bot, game), ids in samples.items() if bot in stale}
    ids = {game_id for sample in wanted.values() for game_id in sample}
    times = move_times(store, {game.id: game for game in games if game.id in ids}, wanted)
    for bot, context in stale.items():
        own: dict[str, MoveTimes] = {game: t for (who, game), t in times.items() if who == bot}
        pages.write(bot_page(bot), "bot.html", {**context, "times": sorted(own.items())})


@dataclass(frozen=True)
class Checks:
    """The stored ``arena check-bot`` reports: which tournaments are checks (their
    games count in no leaderboard or rating), and per bot its latest check of
    each game, latest first."""

    tournament_ids: frozenset[int]
    latest: Mapping[str, list[dict[str, Any]]]


def unrated_ids(tournaments: Iterable[Mapping[str, Any]], checks: Checks) -> frozenset[int]:
    """The tournaments whose games count in no rating or leaderboard: the checks,
    and a person's games against bots in the browser (:data:`PERSON_KIND`)."""
    return checks.tournament_ids | {t["id"] for t in tournaments if t["kind"] == PERSON_KIND}


def latest_checks(tournaments: Iterable[Mapping[str, Any]]) -> Checks:
    """The :class:`Checks` among stored ``tournaments``."""
    found = [check for t in tournaments if (check := stored_check(t)) is not None]
    latest: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for check in sorted(found, key=lambda c: -c["tournament_id"]):
        latest[check["bot"]].setdefault(check["game"], {
            **check, "created_text": format_time(check["created"])})
    return Checks(frozenset(c["tournament_id"] for c in found),
                  {bot: list(by_game.values()) for bot, by_game in latest.items()})


def bot_pools(bot: str, sections: Sequence[Section]) -> tuple[BotPool, ...]:
    """The bot's results in every pool it played in."""
    found = []
    for s in sections:
        row = next((r for r in s.board if r.bot == bot), None)
        if row is None:
            continue
        opponents = tuple(Opponent(other, score, s.los.get((bot, other)))
                          for other in s.bots if (score := s.cell(bot, other)) is not None)
        places = row.tally.places
        most = max(places.values(), default=0)
        histogram = tuple((place, places.get(place, 0), places.get(place, 0) / most)
                          for place in range(1, max(places, default=0) + 1))
        seats = tuple(sorted(row.tally.seats.items()))
        found.append(BotPool(s, row, opponents, histogram, seats))
    return tuple(found)


@dataclass(frozen=True)
class VersionRow:
    """One version of a bot's base name, in one pool it played in (``pool`` None: none)."""

    bot: str
    pool: str | None
    anchor: str | None
    elo: str
    games: int


def version_rows(bot: str, bases: Mapping[str, str],
                 sections: Sequence[Section]) -> tuple[VersionRow, ...]:
    """Every version of ``bot``'s base name (itself included) with its rating in each
    pool, in the order they were registered; none for a bot without versions."""
    base = bases.get(bot, bot)
    labels = [label for label, of in bases.items() if of == base]
    if labels == [bot] and base == bot:
        return ()
    rows = []
    for label in sorted(labels, key=_version_order):
        found = [(s, row) for s in sections for row in s.board if row.bot == label]
        rows += [VersionRow(label, s.title, s.anchor, row.elo, row.tally.games)
                 for s, row in found] or [VersionRow(label, None, None, "\u2013", 0)]
    return tuple(rows)


def _version_order(label: str) -> tuple[int, str]:
    version = label.rpartition("@")[2]
    return (int(version), "") if version.isdigit() else (1 << 62, version)


def fault_kinds_of(counts: Mapping[str, int],
                   examples: Mapping[str, list[FaultExample]],
                   replayed: set[int]) -> tuple[FaultKind, ...]:
    """A bot's faults per kind, most frequent first, each example flagged if replayed."""
    return tuple(FaultKind(kind, count, tuple((e, e.game_id in replayed)
                                              for e in examples.get(kind, [])))
                 for kind, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                 if count)


@contextlib.contextmanager
def _replay_pages(site: Site, store: Store, games: Sequence[StoredGame],
                  replayed: set[int], tournaments: Sequence[dict[str, Any]],
                  common: dict[str, Any], processes: int | None, nice: int,
                  logs: bool, progress: Progress | None) -> Iterator[replay_pool.Running]:
    """Start writing the replay pages of the ``replayed`` games whose inputs changed
    (:func:`reports.replay_pool.started`); the last render's replay pages no longer
    chosen are deleted (:meth:`Site.finish`).  ``logs``: with the seats' per-move stderr."""
    for game in games:
        if game.id in replayed:
            for seat in range(len(game.seats)):
                site.track(seat_file(game.id, seat))
    pages = replay_pool.Pages(
        url=store.url, out_dir=site.out_dir, environment=environment, context=common,
        names={t["id"]: f"#{t['id']} {t['game']}" for t in tournaments},
        protections={t["id"]: (t["config"] or {}).get("protections") for t in tournaments},
        logs=logs)
    jobs = replay_pool.stale(pages, games, replayed, site.fresh)
    if progress is not None:
        progress.say(_replays_plan(store, jobs, len(replayed),
                                   replay_pool.pool_size(len(jobs), processes=processes,
                                                         nice=nice)))
        progress.begin()
    with replay_pool.started(pages, jobs, store, processes=processes, nice=nice) as running:
        yield running


def _replays_plan(store: Store, jobs: Sequence[replay_pool.Job], replayed: int,
                  workers: int) -> str:
    """What the replays will cost: pages to write, and the views to compute of games the
    run's view builder did not reach (each replayed through its engine for the
    spectator and every seat)."""
    stored = store.ids_with_views(VIEWS_FORMAT)
    missing = sum(1 for game, _, _ in jobs if game.id not in stored)
    text = f"{len(jobs):,} replay pages to write ({replayed - len(jobs):,} up to date)"
    if not jobs:
        return text
    text += f" on {workers} worker processes; " if workers else " in this process; "
    if not missing:
        return text + "every one's replay views are stored: copying them"
    return text + (f"{missing:,} of their games have no stored replay views yet (a run's "
                   f"view builder, at a low priority, falls behind on a busy machine): "
                   f"replaying those through the engine for the spectator and every seat, "
                   f"and storing their views")


# -- page data ----------------------------------------------------------------------------

def tournament_summary(tournament: dict[str, Any]) -> dict[str, Any]:
    """A stored tournament plus its distinct bots (in seating order) and creation time."""
    bots = list(dict.fromkeys(bot for table in tournament["tables"] for bot in table))
    return {**tournament, "bots": bots, "created_text": format_time(tournament["created"])}


def game_summary(games: Sequence[StoredGame]) -> list[tuple[str, str]]:
    """(label, text) facts about a tournament's stored games."""
    if not games:
        return []
    faulty = [game for game in games if game.faults]
    no_result = sum(1 for game in faulty if game.no_result)
    seconds = sum(game.duration for game in games)
    return [("Games stored", f"{len(games):,}"),
            ("With a fault", f"{len(faulty):,}"), ("No result", f"{no_result:,}"),
            ("Decisions per game", f"{sum(g.decisions for g in games) / len(games):,.0f}"),
            ("Game time", f"{seconds / len(games):.2f} s average, {seconds / 3600:,.2f} h in all")]


def config_items(tournament: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) pairs describing a tournament's configuration, whatever its keys."""
    config = shown_config(tournament)
    tables = tournament["tables"]
    items = [("Game", tournament["game"]), ("Kind", tournament["kind"]),
             ("Tables", str(len(tables)))]
    sizes = sorted({len(table) for table in tables})
    if "table_size" not in config and sizes:
        items.append(("Table size", " / ".join(map(str, sizes))))
    if "seed" in config or tournament.get("deals"):  # not a single 'arena play' game
        items.append(("Deals", deals_text(tournament)))
    for key, value in config.items():
        if key in ("game", "protections", *DEAL_KEYS):  # notices of their own
            continue
        if key == "check" and isinstance(value, dict):  # on the bot's page in full
            items.append(("Check", "passed" if value.get("passed") else
                          "failed: " + "; ".join(map(str, value.get("reasons", [])))))
            continue
        if key == "bots" and isinstance(value, list):
            text = "; ".join(f"{b.get('name')}: {b.get('command')}" for b in value
                             if isinstance(b, dict))
        else:
            text = format_value(value)
        items.append((key.replace("_", " ").capitalize(), text or "(none)"))
    return items


#: Configuration keys that :func:`deals_text` describes.
DEAL_KEYS = ("seed", "deals", "same_deals")


def deals_text(tournament: dict[str, Any]) -> str:
    """Where a tournament's deals come from, as its page says: known (the seed), or
    secret with each commitment and, once revealed, the secret (docs/formats.md)."""
    config = tournament["config"] or {}
    same = "; the same deals at every table" if config.get("same_deals") or \
        "deals" not in config else ""
    if not tournament.get("deals"):
        seed = config.get("seed")
        return ("known deals" + ("" if seed is None else f" (seed {seed})") + same)
    parts = []
    for deals in tournament["deals"]:
        where = f"tables from {deals['first_table']}: " if tournament["kind"] == "ladder" else ""
        revealed = (f"revealed secret {deals['secret']}" if deals["secret"] is not None
                    else "secret not revealed yet")
        parts.append(f"{where}commitment sha256 {deals['commitment']}, {revealed}")
    return "secret deals" + same + "; " + "; ".join(parts)


def format_time(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp


def _group(games: Iterable[StoredGame], key: Any) -> dict[Any, list[StoredGame]]:
    groups: dict[Any, list[StoredGame]] = {}
    for game in games:
        groups.setdefault(key(game), []).append(game)
    return groups


def _environment() -> Environment:
    """The templates' environment with the globals the report's pages use."""
    env = environment()
    env.globals.update(provisional_games=PROVISIONAL_GAMES, learning_level=LEARNING_LEVEL,
                       time_sample_games=TIME_SAMPLE_GAMES, time_sample_moves=TIME_SAMPLE_MOVES,
                       seating_shown=SEATING_SHOWN)
    return env
