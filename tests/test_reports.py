"""The static HTML report, rendered from a real SQLite database filled through the Store."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from arena.stats.match_stats import summarize
from arena.store.database import Store, StoredGame
from arena.store.records import FaultRecord, GameRecord, GameResult, forfeit_places
from arena.store.replays import replay_context
from reports import replay_pool
from reports.folders import FolderError
from reports.render import (
    bot_page,
    render_report,
    replay_ids,
)
from reports.site import MANIFEST
from reports.templating import TEMPLATES, environment, percent
from tests.arena_db import Played, broken_copy

ROOT = Path(__file__).resolve().parents[1]

HERE = Path(__file__).resolve().parent
XSS = "<script>alert(1)</script>"
STDERR_HTML = "Traceback: <b>boom</b> & <img src=x onerror=alert(2)>"
BOOTSTRAP = 20


class Tables(HTMLParser):
    """Every <table id=...> of a page as rows of cell texts (thead and tbody alike)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._table = self.tables.setdefault(dict(attrs).get("id") or "", [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []
        elif tag == "span" and self._cell is not None and self._cell:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._table is not None and self._cell is not None:
            self._table[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table(path: Path, table_id: str) -> list[list[str]]:
    return Tables(path.read_text()).tables[table_id]


def result(seats: list[str], game_places: list[int], seed: int,
           faults: tuple[FaultRecord, ...] = ()) -> GameResult:
    """A stored-shaped game: score = 10 * (4 - place), two steps of actions, events."""
    faulted = {f.seat for f in faults}
    return GameResult(
        seed=seed, bots=seats, scores=[10.0 * (4 - p) for p in game_places],
        game_places=game_places, places=forfeit_places(game_places, faulted),
        faults=list(faults), record=GameRecord(
            actions=[[[0, f"draw deck g{seed}"]], [[1, "drop 5h"], [2, "pass"]]][: len(seats)],
            events=[{"kind": "deal", "to": [0], "cards": ["SECRETCARD"]},
                    {"kind": "play", "seat": 1, "card": f"PUBLIC{seed}"}],
            reveal={"hands": [["ah", "kd"]]},
            stderr=[f"log of seat {i}" for i in range(len(seats))],
            bot_info=[{"name": s, "version": "1.0", "author": "t"} for s in seats]),
        ignored=[0] * len(seats), duration=0.25, decisions=3)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, dict[str, list[int]], Path]:
    """Two game types; strong always wins 'five'; hand-checkable 'five-or-less'; faults."""
    tmp = tmp_path_factory.mktemp("arena")
    store = Store(f"sqlite:///{tmp}/a.db")
    store.register_bots([("strong", "python strong.py"), ("mid", "python mid.py"),
                         ("weak", "python weak.py"), (XSS, "run <b>bold</b> --x")])
    ids: dict[str, list[int]] = {"five": [], "small": []}

    tables = [["strong", "mid", "weak"], ["mid", XSS, "strong"], ["weak", "strong", XSS]]
    config = {"table_size": 3, "games_per_table": 4, "options": {"max_turns": 50},
              "time_control": {"move": 1.0, "bank": 10.0}}
    five = store.create_tournament("five", config, tables, total_games=12)
    for t, seats in enumerate(tables):
        for n in range(4):
            others = [s for s in seats if s != "strong"][:: 1 if n % 2 else -1]
            order = ["strong", *others]
            if (t, n) == (1, 0):  # strong's only game not in first place
                order = [others[0], "strong", others[1]]
            game_places = [order.index(s) + 1 for s in seats]
            faults: tuple[FaultRecord, ...] = ()
            if t == 2 and n == 1:
                faults = (FaultRecord(2, XSS, "crash", "exited with code 1", STDERR_HTML),)
            if t == 2 and n == 2:
                faults = (FaultRecord(0, "weak", "timeout", "no reply in 1.0 s", ""),
                          FaultRecord(2, XSS, "illegal_action", "index 9 of 3", "oops"))
            if t == 1 and n == 3:
                faults = (FaultRecord(1, XSS, "protocol_error", "bad msgpack", ""),)
            ids["five"].append(store.save_game(five, t, n, {"max_turns": 50},
                                               result(seats, game_places, 100 * t + n, faults)))
    store.set_status(five, "finished")

    # five-or-less, by hand: A-B win/loss/draw; A and B always beat C.
    small = store.create_tournament("five-or-less", {}, [["A", "B", "C"]], total_games=4)
    for n, places in enumerate([[1, 2, 3], [2, 1, 3], [1, 1, 3]]):
        ids["small"].append(store.save_game(small, 0, n, {}, result(["A", "B", "C"], places, n)))
    store.create_tournament("five", {}, [["mid", "weak"]], total_games=2)  # nothing played yet

    out = tmp / "site"
    render_report(store, out, bootstrap=BOOTSTRAP)
    return store, ids, out


def test_every_page_is_written(arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, ids, out = arena
    names = {p.name for p in out.iterdir()}
    expected = {"index.html", "head-to-head.html", "tournaments.html", "style.css",
                "sortable.js", "tournament-1.html", "tournament-2.html", "tournament-3.html",
                MANIFEST}
    expected |= {f"game-{i}.html" for i in ids["five"] + ids["small"]}
    expected |= {bot_page(bot) for bot in ("strong", "mid", "weak", XSS, "A", "B", "C")}
    assert names - {"replay.js"} == expected
    for name in ("style.css", "sortable.js"):  # the files the server serves too
        assert (out / name).read_bytes() == (TEMPLATES / name).read_bytes()
    for page in out.glob("*.html"):
        html = page.read_text()
        for target in ("index.html", "head-to-head.html", "tournaments.html"):
            assert f'href="{target}"' in html, (page.name, target)
        # the server's layout and stylesheet: no inline script (its CSP allows none)
        assert re.findall(r'<link rel="stylesheet"[^>]*>', html) == [
            '<link rel="stylesheet" href="style.css">'], page.name
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag or 'type="application/' in tag, (page.name, tag)


def test_leaderboard_rates_every_bot_and_ranks_the_strong_one_first(
        arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, _, out = arena
    header, *rows = table(out / "index.html", "board-five")
    assert header[:8] == ["Rank", "Bot", "Elo [95%]", "LOS", "Games", "Avg place", "1st %",
                          "Later"]
    assert header[8:] == ["Timeout", "Crash", "Memory", "Illegal", "Protocol"]
    assert rows[0][1] == "strong 1.0"  # with the version its handshake gave
    assert {row[1] for row in rows} == {f"{bot} 1.0" for bot in ("strong", "mid", "weak", XSS)}
    for row in rows:  # every bot has fewer than 20 games: provisional
        assert re.fullmatch(r"[+-]\d+ \[[+-]\d+, [+-]\d+\] \(few games\)", row[2]), row
        assert re.fullmatch(r"\d+(\u2013\d+)?", row[0]), row
        assert re.fullmatch(r"\d+%|\u2013", row[3]), row
    strong = rows[0]
    assert strong[0].startswith("1") and strong[4] == "12" and rows[-1][3] == "\u2013"
    assert strong[5] == "1.08" and strong[6] == "91.7%"  # second once in 12 games
    small = [row[1] for row in table(out / "index.html", "board-five-or-less")[1:]]
    assert small[-1] == "C" and set(small) == {"A", "B", "C"}  # not registered: no version


def test_fault_counts_per_kind(arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, _, out = arena
    header, *rows = table(out / "index.html", "board-five")
    by_bot = {row[1].removesuffix(" 1.0"): dict(zip(header, row, strict=True)) for row in rows}
    counts = {bot: [cells[k] for k in ("Timeout", "Crash", "Illegal", "Protocol")]
              for bot, cells in by_bot.items()}
    assert counts == {"strong": ["0"] * 4, "mid": ["0"] * 4, "weak": ["1", "0", "0", "0"],
                      XSS: ["0", "1", "1", "1"]}
    html = (out / "index.html").read_text()
    assert html.count('class="num fault"') == 4


def test_crosstable_matches_hand_computed_scores(
        arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, _, out = arena
    header, *rows = table(out / "head-to-head.html", "h2h-five-or-less")
    bots = [row[1] for row in rows]
    assert bots[-1] == "C"
    cell = {(rows[i][1], bots[j]): rows[i][2 + j] for i in range(3) for j in range(3)}
    assert cell["A", "B"] == "1-1-1 50%" and cell["B", "A"] == "1-1-1 50%"
    assert cell["A", "C"] == "3-0-0 100%" and cell["C", "B"] == "0-0-3 0%"
    assert cell["C", "C"] == "—"
    assert len(header) == 2 + 3
    header, *five = table(out / "head-to-head.html", "h2h-five")
    strong = next(row for row in five if row[1] == "strong")
    # Columns follow the leaderboard's order, which ties may change: find them by name.
    opponents = [row[1] for row in five]
    assert strong[2 + opponents.index(XSS)] == "7-0-1 88%"  # lost once, to the XSS bot
    assert strong[2 + opponents.index("mid")] == "8-0-0 100%"


def test_tournament_pages(arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, ids, out = arena
    listing = table(out / "tournaments.html", "tournaments")
    assert [row[0] for row in listing[1:]] == ["#1", "#2", "#3"]
    assert listing[1][4] == "12 / 12" and listing[3][4] == "0 / 2"
    page = out / "tournament-1.html"
    html = page.read_text()
    games = table(page, "games")[1:]
    assert [int(row[0]) for row in games] == ids["five"]
    for game_id in ids["five"]:
        assert f'href="game-{game_id}.html"' in html
    assert "Games per table" in html and "move: 1, bank: 10" in html and "max_turns: 50" in html
    assert html.count('<tr class="faulty">') == 3
    assert "seat 2 &lt;script&gt;alert(1)&lt;/script&gt;: crash" in html
    assert table(page, "board")[1][1] == "strong 1.0"
    assert "No games yet in this tournament" in (out / "tournament-3.html").read_text()


def test_replay_pages(arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, ids, out = arena
    crash_game = ids["five"][9]  # table 2, game 1
    html = (out / f"game-{crash_game}.html").read_text()
    assert "draw deck g201" in html and "drop 5h" in html
    steps = re.findall(r"<li>(.*?)</li>", html.split('class="steps"')[1].split("</ol>")[0])
    assert len(steps) == 2 and "weak" in steps[0] and ">0<" in steps[0]
    assert "PUBLIC201" in html and "SECRETCARD" not in html
    assert "exited with code 1" in html and "log of seat 1" in html and "&#34;kd&#34;" in html
    seats = table(out / f"game-{crash_game}.html", "seats")
    assert [row[1] for row in seats[1:]] == ["weak 1.0", "strong 1.0", f"{XSS} 1.0"]
    assert seats[3][4:] == ["3", "crash"]


def test_untrusted_text_is_escaped(arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, ids, out = arena
    for page in out.glob("*.html"):
        html = page.read_text()
        assert XSS not in html and "<b>" not in html and "<img" not in html, page.name
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (out / "index.html").read_text()
    assert "run &lt;b&gt;bold&lt;/b&gt; --x" in (out / "index.html").read_text()
    crash = (out / f"game-{ids['five'][9]}.html").read_text()
    assert "<pre>Traceback: &lt;b&gt;boom&lt;/b&gt; &amp; &lt;img src=x" in crash


def test_no_external_resources(arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, _, out = arena
    link = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:[a-z]+:)?//""", re.IGNORECASE)
    for page in out.iterdir():
        text = page.read_text()
        assert not link.search(text), page.name
        assert "http://" not in text and "https://" not in text and "@import" not in text


def test_max_replays_keeps_the_most_recent(
        arena: tuple[Store, dict[str, list[int]], Path], tmp_path: Path) -> None:
    store, ids, _ = arena
    render_report(store, tmp_path, bootstrap=0, max_replays=2)
    written = sorted(int(p.stem.split("-")[1]) for p in tmp_path.glob("game-*.html"))
    assert written == sorted(ids["five"] + ids["small"])[-2:]
    html = (tmp_path / "tournament-1.html").read_text()
    assert "game-" not in html and "most recent games only" in html


def test_empty_database(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/a.db")
    index = render_report(store, tmp_path / "site")
    assert index == tmp_path / "site" / "index.html"
    assert "No games yet" in index.read_text()
    assert "No games yet" in (tmp_path / "site" / "head-to-head.html").read_text()
    assert "No tournaments yet" in (tmp_path / "site" / "tournaments.html").read_text()


# -- what spectators may see -----------------------------------------------------------
def _stored(game: str, seats: list[str], faults: list[dict[str, Any]]) -> StoredGame:
    n = len(seats)
    return StoredGame(id=1, tournament_id=1, table=0, number=0, game=game, seed=1, options={},
                      seats=seats, scores=[0.0] * n, places=list(range(1, n + 1)),
                      game_places=list(range(1, n + 1)), faults=faults, duration=0.1,
                      decisions=4, ignored=[0] * n)


def _shown(context: dict[str, Any]) -> list[list[tuple[int, str, bool]]]:
    return [[(seat, action, by_arena) for seat, _, action, by_arena in step]
            for step in context["steps"]]


def test_arena_default_moves_are_marked_from_the_faults_step() -> None:
    actions = [[[0, "drop 5h"]], [[1, "drop 6h"]], [[0, "drop 7h"]], [[1, "drop 8h"]]]
    record = GameRecord(actions=actions)
    fault = {"seat": 1, "bot": "b", "kind": "crash", "detail": "", "stderr_tail": ""}
    marked = replay_context(_stored("five", ["a", "b"], [{**fault, "step": 1}]), record)
    assert _shown(marked) == [[(0, "drop 5h", False)], [(1, "drop 6h", True)],
                              [(0, "drop 7h", False)], [(1, "drop 8h", True)]]
    old = replay_context(_stored("five", ["a", "b"], [fault]), record)  # no step: no marking
    assert not any(by_arena for step in _shown(old) for _, _, by_arena in step)
    later = replay_context(_stored("five", ["a", "b"], [{**fault, "step": 3}]), record)
    assert [by for step in _shown(later) for _, _, by in step] == [False, False, False, True]


def test_a_faulted_seats_stderr_is_its_faults_tail_not_no_output() -> None:
    fault = {"seat": 1, "bot": "b", "kind": "crash", "detail": "exited with code 1",
             "stderr_tail": "Traceback ...\nValueError: bad hand", "step": 0}
    record = GameRecord(actions=[[[0, "drop 5h"]]], stderr=["", ""])
    context = replay_context(_stored("five", ["a", "b"], [fault]), record)
    assert context["stderr"] == ["", "Traceback ...\nValueError: bad hand"]
    own = GameRecord(actions=[[[0, "drop 5h"]]], stderr=["", "its own log"])
    assert replay_context(_stored("five", ["a", "b"], [fault]), own)["stderr"][1] == "its own log"


def test_claim_window_answers_are_private() -> None:
    record = GameRecord(actions=[
        [[0, "discard bC"]],
        [[1, "pass"]],                                        # a lone pass: not even the window
        [[1, "discard rs"]],
        [[2, "set rs rs"], [0, "catch"]],                     # the catch wins
        [[0, "discard bA"]],
        [[1, "run bB bC"], [2, "pass"]],                      # the run wins
    ])
    context = replay_context(_stored("rummy-five", ["a", "b", "c"], []), record)
    assert _shown(context) == [[(0, "discard bC", False)], [(1, "discard rs", False)],
                               [(0, "catch", False)], [(0, "discard bA", False)],
                               [(1, "run bB bC", False)]]
    assert context["private_decisions"]


def test_no_result_games_count_for_faults_only(tmp_path: Path) -> None:
    """Both seats fault: no first place for anyone, no rating, but the faults show."""
    store = Store(f"sqlite:///{tmp_path}/nr.db")
    tid = store.create_tournament("five", {"protections": "bubblewrap sandbox (test)"},
                                  [["P", "Q"]], total_games=3)
    both = (FaultRecord(0, "P", "crash", "exited", ""), FaultRecord(1, "Q", "timeout", "late", ""))
    store.save_game(tid, 0, 0, {}, result(["P", "Q"], [1, 2], 1, both))
    store.save_game(tid, 0, 1, {}, result(["P", "Q"], [2, 1], 2))
    store.save_game(tid, 0, 2, {}, result(["Q", "P"], [2, 1], 3))
    out = tmp_path / "site"
    render_report(store, out, bootstrap=BOOTSTRAP)
    header, *rows = table(out / "index.html", "board-five")
    cells = {row[1]: dict(zip(header, row, strict=True)) for row in rows}
    assert cells["P"]["Games"] == "2" and cells["P"]["1st %"] == "50.0%"
    assert cells["P"]["Crash"] == "1" and cells["Q"]["Timeout"] == "1"
    _, *h2h = table(out / "head-to-head.html", "h2h-five")
    p_row = next(row for row in h2h if row[1] == "P")
    assert "1-0-1 50%" in p_row
    page = (out / f"tournament-{tid}.html").read_text()
    assert "no result" in page and "bubblewrap sandbox (test)" in page
    replay = min(out.glob("game-*.html"), key=lambda p: int(p.stem.split("-")[1])).read_text()
    assert "every seat faulted" in replay and "bubblewrap sandbox (test)" in replay


# -- real tournaments (sample bots as processes, SQLite): pools, bounds, pages -----------
@pytest.fixture(scope="module")
def real_site(played: Played, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the real tournaments, games lists paged two games a page."""
    out = tmp_path_factory.mktemp("real") / "site"
    render_report(Store(played.url), out, bootstrap=BOOTSTRAP, page_rows=2)
    return out


def section_text(path: Path, anchor: str) -> str:
    return path.read_text().split(f'<section id="{anchor}">')[1].split("</section>")[0]


def test_pools_split_games_of_other_options(real_site: Path) -> None:
    boards = Tables((real_site / "index.html").read_text()).tables
    # label (ad-hoc version 1, docs/bots.md), then the version the bot reports
    assert {row[1] for row in boards["board-five"][1:]} == {"a@1 1", "b@1 1", "c@1 1"}
    assert {row[1] for row in boards["board-five-2"][1:]} == {"winner@1 1", "crash1@1 0",
                                                              "crash2@1 0"}
    plain, jokers = (section_text(real_site / "index.html", a) for a in ("five", "five-2"))
    assert "<strong>Options:</strong> max_hands 2</span>" in plain  # what is not a default
    assert "<strong>Options:</strong> jokers on, max_hands 2</span>" in jokers
    assert "<strong>Time control:</strong> move 1 s, bank 10 s, wall clock" in plain
    h2h = Tables((real_site / "head-to-head.html").read_text()).tables
    assert {"h2h-five", "h2h-five-2", "los-five", "los-five-2"} <= set(h2h)


def test_an_unbeaten_bot_gets_a_one_sided_bound(real_site: Path) -> None:
    header, *rows = table(real_site / "index.html", "board-five-2")
    cells = {row[1].split("@")[0]: dict(zip(header, row, strict=True)) for row in rows}
    assert re.fullmatch(r"> [+-]\d+ \(unbeaten; few games\)", cells["winner"]["Elo [95%]"]), cells
    for crasher in ("crash1", "crash2"):  # tied last every game: finite, equal
        assert re.fullmatch(r"[+-]\d+ \[[+-]\d+, [+-]\d+\] \(few games\)",
                            cells[crasher]["Elo [95%]"]), cells
        assert cells[crasher]["Crash"] == "3" and cells[crasher]["Rank"] in ("1\u20133", "2\u20133")
    assert cells["winner"]["Rank"][0] == "1" and cells["winner"]["1st %"] == "100.0%"
    html = (real_site / "index.html").read_text()
    chart = html.split('id="chart-five-2"')[1].split("</svg>")[0]
    assert chart.count('class="arrow"') == 1 and chart.count('class="estimate"') == 2


def test_games_lists_are_paged(real_site: Path, played: Played) -> None:
    tid = played.tournaments["five"]
    names = [f"tournament-{tid}.html", f"tournament-{tid}-2.html", f"tournament-{tid}-3.html"]
    assert not (real_site / f"tournament-{tid}-4.html").exists()
    pages = [table(real_site / name, "games")[1:] for name in names]
    assert [len(rows) for rows in pages] == [2, 2, 2]
    stored = [game.id for game in Store(played.url).games(tid)]
    assert [int(row[0]) for rows in pages for row in rows] == stored
    first, middle, last = ((real_site / name).read_text() for name in names)
    assert all(f'href="{name}"' in first for name in names)
    assert f'href="{names[0]}" rel="prev"' in middle and f'href="{names[2]}" rel="next"' in middle
    assert 'rel="next"' not in last
    assert all((real_site / name).stat().st_size < 2_000_000 for name in names)


def test_links_lead_only_to_pages_that_exist(played: Played, tmp_path: Path) -> None:
    render_report(Store(played.url), tmp_path, bootstrap=0, max_replays=1)
    assert len(list(tmp_path.glob("game-*.html"))) == 1
    linked = set()
    for page in tmp_path.glob("*.html"):
        for target in re.findall(r'href="([^"#]+)', page.read_text()):
            if target == "data:,":  # the layout's empty icon: no request for favicon.ico
                continue
            assert (tmp_path / target).is_file(), (page.name, target)
            linked.add(target)
    assert any(name.startswith("game-") for name in linked)
    assert any(name.startswith("bot-") for name in linked)


def test_bot_page(real_site: Path) -> None:
    page = real_site / bot_page("crash1@1")
    html = page.read_text()
    assert [row[:3] for row in table(page, "opponents-five-2")[1:]] == [
        ["winner@1", "3", "0-0-3"], ["crash2@1", "3", "0-3-0"]]
    assert table(page, "versions-table")[1][:2] == ["crash1@1", "five (jokers on, max_hands 2; "
                                                    "move 1 s, bank 10 s, wall clock)"]
    assert table(page, "places-five-2") == [["1", "0", ""], ["2", "3", ""]]
    assert [row[:2] for row in table(page, "seats-five-2")[1:]] == [["0", "1"], ["1", "1"],
                                                                     ["2", "1"]]
    assert table(page, "fault-kinds")[1:] == [["Crash", "3"]]
    assert html.count('class="faultbox"') == 3 and "bad_bot: about to crash" in html
    (times,) = table(real_site / bot_page("a@1"), "times")[2:]
    assert times[0] == "five" and int(times[1]) == 6 and int(times[2]) > 0
    wall = [float(value) for value in times[3:7]]
    assert wall == sorted(wall) and wall[-1] > 0  # p50 <= p90 <= p99 <= max (shown to 0.1 ms)


def test_every_game_is_replayed_by_default() -> None:
    games = [StoredGame(id=i, tournament_id=1 + i % 2, table=0, number=i, game="five", seed=1,
                        options={}, seats=["a", "b"], scores=[0.0, 0.0], places=[1, 2],
                        game_places=[1, 2], faults=[], duration=0.1, decisions=2,
                        ignored=[0, 0])
             for i in range(1, 501)]
    assert replay_ids(games, None) == set(range(1, 501))
    assert replay_ids(games, 5) == {g.id for g in games[-5:]} and not replay_ids(games, 0)
    assert replay_ids(games, 10_000) == set(range(1, 501))


def test_rendering_again_writes_only_what_changed(played: Played, tmp_path: Path) -> None:
    store, out, old = _copy(played, tmp_path), tmp_path / "site", 1_000_000_000

    def render_after_aging() -> set[str]:
        """Render; the files it wrote (every file is made old first)."""
        for path in out.glob("*"):
            os.utime(path, (old, old))
        render_report(store, out, bootstrap=BOOTSTRAP, max_replays=0, page_rows=2)
        return {path.name for path in out.iterdir() if path.stat().st_mtime != old}

    render_after_aging()
    assert render_after_aging() == {MANIFEST}
    tid = played.tournaments["five"]
    _play_last_deal_again(store, tid)
    assert render_after_aging() == {
        MANIFEST, "index.html", "head-to-head.html", "tournaments.html",
        f"tournament-{tid}.html",  # its standings and list of pages
        f"tournament-{tid}-3.html",  # now with a link to the next page
        f"tournament-{tid}-4.html", *(bot_page(f"{bot}@1") for bot in "abc")}
    assert [int(row[0]) for row in table(out / f"tournament-{tid}-4.html", "games")[1:]] == [
        max(game.id for game in store.games())]


def _copy(played: Played, tmp_path: Path) -> Store:
    """A store of a copy of the played database."""
    db = tmp_path / "copy.db"
    with sqlite3.connect(played.path) as source, sqlite3.connect(db) as copy:
        source.backup(copy)  # with what is still in the write-ahead log
    return Store(f"sqlite:///{db}")


def _play_last_deal_again(store: Store, tid: int) -> None:
    """Store the tournament's last game again as its table's next deal (a new game)."""
    last = list(store.games(tid))[-1]
    record = store.record(last.id)
    assert record is not None
    store.save_game(tid, last.table, last.number + 3, last.options, GameResult(
        seed=last.seed, bots=last.seats, scores=last.scores, game_places=last.game_places,
        places=last.places, faults=[], record=record, ignored=last.ignored,
        duration=last.duration, decisions=last.decisions))


def test_a_render_after_new_games_equals_a_full_render(played: Played, tmp_path: Path) -> None:
    store = _copy(played, tmp_path)
    again, full = tmp_path / "again", tmp_path / "full"
    render_report(store, again, bootstrap=BOOTSTRAP, page_rows=2)  # every replay
    for tid in played.tournaments.values():
        _play_last_deal_again(store, tid)
    render_report(store, again, bootstrap=BOOTSTRAP, page_rows=2)  # only what changed
    render_report(store, full, bootstrap=BOOTSTRAP, page_rows=2)

    def contents(out: Path) -> dict[str, str]:
        """Every file but the manifest, its generation time left out."""
        return {path.name: re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "TIME",
                                  path.read_text(encoding="utf-8"))
                for path in out.iterdir() if path.name != MANIFEST}

    rendered, expected = contents(again), contents(full)
    assert sorted(rendered) == sorted(expected)
    assert [name for name in expected if rendered[name] != expected[name]] == []
    assert any(name.startswith("game-") and name.endswith("-seat1.js") for name in expected)


def test_replay_pages_are_rewritten_only_when_their_inputs_change(played: Played,
                                                                  tmp_path: Path) -> None:
    store, out, old = Store(played.url), tmp_path / "site", 1_000_000_000
    render_report(store, out, bootstrap=BOOTSTRAP, max_replays=4)
    pages = sorted(path.name for path in out.glob("game-*.html"))
    assert len(pages) == 4
    for path in out.glob("*"):
        os.utime(path, (old, old))
    render_report(store, out, bootstrap=BOOTSTRAP, max_replays=4)
    assert [p for p in pages if (out / p).stat().st_mtime != old] == []
    render_report(store, out, bootstrap=BOOTSTRAP, max_replays=5)  # a fifth: new links
    rewritten = {p.name for p in out.glob("game-*.html") if p.stat().st_mtime != old}
    assert len(rewritten) >= 1 and len(rewritten) < 5


def test_pairs_are_printed_as_fastchess_prints_a_match(
        arena: tuple[Store, dict[str, list[int]], Path]) -> None:
    _, _, out = arena
    header, *rows = table(out / "head-to-head.html", "pairs-five-or-less")
    assert header == ["bot", "opponent", "games", "W-D-L", "score", "Elo", "nElo", "LOS"]
    by_pair = {(row[0], row[1]): row for row in rows}
    assert set(by_pair) == {("A", "B"), ("A", "C"), ("B", "C")} or \
        set(by_pair) == {("B", "A"), ("A", "C"), ("B", "C")}
    for row in rows:
        wins, draws, losses = map(int, row[3].split("-"))
        m = summarize(wins, draws, losses)
        assert row[2] == str(wins + draws + losses) and row[4] == f"{m.score:.3f}"
        assert row[5] == m.elo_text.replace("+/-", "±") and "inf" not in row[5]
        assert row[6] == m.nelo_text.replace("+/-", "±") and "inf" not in row[6]
        assert row[7] == percent(m.los)
    assert by_pair["A", "C"][3] == "3-0-0"
    assert by_pair["A", "C"][5].startswith("> ") and "every game won" in by_pair["A", "C"][5]


# -- the report's folder ----------------------------------------------------------------

def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name: bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_a_failed_report_leaves_the_target_as_it_was(played: Played, tmp_path: Path) -> None:
    broken = Store(broken_copy(played, tmp_path, record=True))
    fresh, earlier = tmp_path / "fresh", tmp_path / "earlier"
    render_report(Store(played.url), earlier, bootstrap=0, max_replays=0)
    before = files(earlier)
    with pytest.raises(Exception):  # noqa: B017 - whatever a damaged record raises
        render_report(broken, fresh, bootstrap=0)
    assert not fresh.exists()  # not a folder holding only style.css
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db", "earlier"]
    render_report(Store(played.url), earlier, bootstrap=0, max_replays=1)  # in place
    after = files(earlier)
    assert MANIFEST in after and after.keys() > before.keys()


def test_a_report_refuses_a_folder_that_is_not_one(played: Played, tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "index.html").write_text("my own page")
    with pytest.raises(FolderError, match="not empty and not an earlier report"):
        render_report(Store(played.url), foreign, bootstrap=0)
    assert files(foreign) == {"index.html": b"my own page"}

    def arena(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "arena.cli", "report", "--db",
                               played.url, *args], capture_output=True, text=True,
                              timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})

    for args, message in [(["--out", ""], "the report folder must be named"),
                          (["--out", "foreign"], "not an earlier report of this tool"),
                          (["--out", "new", "--max-replays", "-1"], "-1 is negative")]:
        done = arena(*args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("arena: error: ") and message in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign"]
    assert files(foreign) == {"index.html": b"my own page"}


def test_a_pool_of_processes_writes_the_same_replays(played: Played, tmp_path: Path) -> None:
    store = Store(played.url)
    games = list(store.scan_games())
    here, pooled = tmp_path / "here", tmp_path / "pooled"
    for out, processes, nice in ((here, 1, 0), (pooled, 2, 5)):
        out.mkdir()
        pages = replay_pool.Pages(url=played.url, out_dir=out, environment=environment,
                                  context={"kinds": [], "labels": {}, "generated": "now"},
                                  names={}, protections={})
        written = replay_pool.write_replays(pages, store, games, {g.id for g in games},
                                            processes=processes, nice=nice, batch=2)
        assert written == len(games)
    assert files(pooled) == files(here)
    assert len([name for name in files(here) if name.endswith(".html")]) == len(games)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_a_killed_render_leaves_no_worker_behind(played: Played, tmp_path: Path) -> None:
    script = f"""
import sys
from pathlib import Path
from arena.store.database import Store
from reports import replay_pool
from reports.templating import environment
store = Store({played.url!r})
games = list(store.scan_games()) * 40  # long enough to be killed half-way
out = Path({str(tmp_path / "out")!r})
out.mkdir()
pages = replay_pool.Pages(url={played.url!r}, out_dir=out, environment=environment,
                          context={{"kinds": [], "labels": {{}}, "generated": "now"}},
                          names={{}}, protections={{}})
print("started", flush=True)
replay_pool.write_all(pages, [(g, None, None) for g in games], store, processes=2, batch=1)
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "started\n"
        for _ in range(600):  # both workers up (generous: a loaded machine)
            workers = [pid for pid in children(proc.pid)
                       if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text()]
            if len(workers) == 2:
                break
            time.sleep(0.1)
        assert len(workers) == 2, "the pool did not start"
    finally:
        proc.kill()
        proc.wait()
    for _ in range(300):
        if not any(Path(f"/proc/{pid}").exists() for pid in workers):
            break
        time.sleep(0.1)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], "a worker outlived it"
