"""The report in a real browser: Debian's headless Chromium driven by Selenium.

A report is rendered (``arena report``) from small real tournaments of the sample bots
(``arena tournament`` into a temporary SQLite file), and its pages are opened from
``file://``: no console errors, no request but for local files, the leaderboard lists
every bot and sorts, the replay viewer steps both ways and switches seat views, and a
seat's view shows that seat's cards only, as the engine dealt them.  A screenshot of each
page type is saved in the test's temporary folder.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from arena.cli import main
from arena.games import make_game
from arena.store.database import Store, StoredGame
from arena.store.replays import replay, timeline
from reports.render import render_report
from tests.arena_db import Played, tournament
from tests.chromium import chromium

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

WAIT = 10.0
PY = sys.executable
BOTS = {"furious-five": ("greedy", "greedy_furious_five"),
        "octablitz": ("heuristic", "octablitz_heuristic")}


@dataclass(frozen=True)
class Report:
    """A rendered report and the database it came from."""

    site: Path
    url: str
    tournaments: dict[str, int]

    def games(self, game: str) -> list[StoredGame]:
        store = Store(self.url)
        try:
            return [g for g in store.games() if g.tournament_id == self.tournaments[game]]
        finally:
            store.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    folder = tmp_path_factory.mktemp("browser")
    url = f"sqlite:///{folder / 'arena.db'}"
    ids = {}
    for game, (name, module) in BOTS.items():
        ids[game] = tournament(url, "-g", game, "-k", "3", "-n", "3",
                               "-b", f"{name}={PY} -m sample_bots.{module}",
                               "-b", f"random={PY} -m sample_bots.random_bot",
                               "-b", f"random-2={PY} -m sample_bots.random_bot")
    assert main(["report", "--db", url, "--out", str(folder / "site")]) == 0
    return Report(folder / "site", url, ids)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    with chromium() as driver:
        yield driver


def visit(browser: WebDriver, page: Path) -> None:
    """Open ``page`` and wait until it has loaded (and its scripts ran)."""
    browser.get_log("browser")  # drop what earlier pages logged
    browser.get_log("performance")
    browser.get(page.as_uri())
    until(browser, lambda: browser.execute_script("return document.readyState") == "complete")


def until(browser: WebDriver, condition: Any, message: str = "") -> None:
    from selenium.webdriver.support.wait import WebDriverWait

    WebDriverWait(browser, WAIT).until(lambda _: condition(), message)


def assert_clean(browser: WebDriver) -> None:
    """No console error and no request for anything but a local file so far on this page."""
    errors = [entry["message"] for entry in browser.get_log("browser")
              if entry["level"] == "SEVERE"]
    assert not errors, errors
    requests = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    assert requests and all(url.startswith("file://") for url in requests), requests


def texts(browser: WebDriver, css: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [node.text for node in browser.find_elements(By.CSS_SELECTOR, css)]


# -- pages -------------------------------------------------------------------------------
def test_every_page_type_loads_cleanly(report: Report, browser: WebDriver,
                                       tmp_path: Path) -> None:
    game = report.games("furious-five")[0]
    bot_pages = sorted(report.site.glob("bot-*.html"))
    pages = {"index": "index.html", "head-to-head": "head-to-head.html",
             "tournaments": "tournaments.html",
             "tournament": f"tournament-{report.tournaments['furious-five']}.html",
             "bot": bot_pages[0].name, "game": f"game-{game.id}.html"}
    for kind, name in pages.items():
        visit(browser, report.site / name)
        if kind == "game":
            until(browser, lambda: texts(browser, ".step-label"), "the viewer did not start")
        assert_clean(browser)
        browser.save_screenshot(str(tmp_path / f"{kind}.png"))
    assert all((tmp_path / f"{kind}.png").stat().st_size > 1000 for kind in pages)


def test_the_leaderboard_lists_every_bot_and_sorts(report: Report, browser: WebDriver) -> None:
    from selenium.webdriver.common.by import By

    visit(browser, report.site / "index.html")
    boards = browser.find_elements(By.CSS_SELECTOR, "table.sortable[id^='board-']")
    assert len(boards) == len(BOTS)
    for board, (name, _) in zip(boards, BOTS.values(), strict=True):
        headers = [th.text for th in board.find_elements(By.CSS_SELECTOR, "thead th")]
        column = headers.index("Bot")

        def bots(board: Any = board, column: int = column) -> list[str]:
            rows = board.find_elements(By.CSS_SELECTOR, "tbody tr")
            return [row.find_elements(By.TAG_NAME, "td")[column].text.split()[0]
                    for row in rows]

        assert sorted(bots()) == sorted([f"{name}@1", "random@1", "random-2@1"])
        header = board.find_elements(By.CSS_SELECTOR, "thead th")[column]
        header.click()
        assert bots() == sorted(bots(), key=str.lower)
        header.click()
        assert bots() == sorted(bots(), key=str.lower, reverse=True)
    assert_clean(browser)


# -- the replay viewer --------------------------------------------------------------------
def test_the_replay_steps_both_ways_and_shows_each_seat_only_its_cards(
        report: Report, browser: WebDriver, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    game = open_replay(report, browser, "furious-five")
    assert not shown_hands(browser)  # a spectator sees no hand
    table = browser.find_element(By.CSS_SELECTOR, ".viewer .table").get_attribute("innerHTML")

    click(browser, "Next")
    assert step(browser) == 1
    assert browser.find_element(By.CSS_SELECTOR, ".viewer .table").get_attribute(
        "innerHTML") != table
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    assert step(browser) == 4
    body.send_keys(Keys.ARROW_LEFT)
    assert step(browser) == 3
    click(browser, "Previous")
    assert step(browser) == 2
    slider = browser.find_element(By.CSS_SELECTOR, ".viewer .slider")
    slider.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)
    assert step(browser) == 4
    slider.send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT)
    assert step(browser) == 2
    moves = texts(browser, ".viewer .moves")

    seat = 1
    Select(browser.find_element(By.CSS_SELECTOR, "select.viewer-select")).select_by_value(
        str(seat))
    until(browser, lambda: viewer(browser) == str(seat), "the seat's view did not load")
    assert step(browser) == 2 and texts(browser, ".viewer .moves") == moves
    for _ in range(3):
        hands = shown_hands(browser)
        assert list(hands) == [seat]  # only the chosen seat's cards are face up
        assert hands[seat] == hand_at(report, game, seat, step(browser))
        body.send_keys(*[Keys.ARROW_RIGHT] * 7)
    browser.save_screenshot(str(tmp_path / "game-seat.png"))

    Select(browser.find_element(By.CSS_SELECTOR, "select.viewer-select")).select_by_value(
        "spectator")
    until(browser, lambda: viewer(browser) == "spectator")
    assert not shown_hands(browser)
    body.send_keys(Keys.END)
    assert texts(browser, ".step-label")[0].endswith(str(step(browser)))
    assert_clean(browser)


def test_octablitz_plays_show_who_played_and_the_public_events(
        report: Report, browser: WebDriver, tmp_path: Path) -> None:
    game = open_replay(report, browser, "octablitz")
    click(browser, "Next")
    assert "play trick 1 lead face up" in texts(browser, ".viewer .moves")[0]
    assert any(line.startswith("play ") for line in texts(browser, ".viewer .log li"))
    assert len(texts(browser, ".viewer .move-list li")) == game.decisions
    browser.save_screenshot(str(tmp_path / "game-octablitz.png"))
    assert_clean(browser)


def open_replay(report: Report, browser: WebDriver, game: str) -> StoredGame:
    """Open the replay page of the first game of ``game``'s tournament; that game."""
    stored = report.games(game)[0]
    visit(browser, report.site / f"game-{stored.id}.html")
    until(browser, lambda: step(browser) == 0, "the viewer did not start")
    return stored


def click(browser: WebDriver, title: str) -> None:
    """Click the viewer's button whose title starts with ``title``."""
    from selenium.webdriver.common.by import By

    browser.find_element(By.CSS_SELECTOR, f".viewer button[title^='{title}']").click()


def step(browser: WebDriver) -> int | None:
    value = browser.execute_script("return document.getElementById('viewer').dataset.step")
    return None if value is None else int(value)


def viewer(browser: WebDriver) -> str | None:
    value = browser.execute_script("return document.getElementById('viewer').dataset.viewer")
    return None if value is None else str(value)


def shown_hands(browser: WebDriver) -> dict[int, list[str]]:
    """The face-up cards in each seat's box, by seat (seats showing none left out)."""
    hands = browser.execute_script("""
        const out = {};
        for (const box of document.querySelectorAll('.viewer .seat')) {
          const cards = [...box.querySelectorAll('.hand .card[data-card]')];
          if (cards.length) out[box.dataset.seat] = cards.map((c) => c.dataset.card);
        }
        return out;""")
    return {int(seat): cards for seat, cards in hands.items()}


def hand_at(report: Report, game: StoredGame, seat: int, position: int) -> list[str]:
    """``seat``'s hand, from the engine, at a position of that seat's replay."""
    store = Store(report.url)
    try:
        record = store.record(game.id)
    finally:
        store.close()
    assert record is not None
    steps = timeline(game, record, seat, replay(game, record))[position].steps
    state = make_game(game.game, len(game.seats), game.options).new_state(game.seed)
    for taken in record.actions[:steps.stop]:
        state.apply_actions({s: action for s, action in taken})
    return list(state.observation(seat)["hand"])


# -- report parity: speed, glyphs, labels, filters, phones, stderr ---------------------------
RAW_CARD = re.compile(r"(?<![\w-])(?:[A2-9TJQK][cdhs]|[br][sABCJKL])(?![\w-])")


def test_the_replay_plays_at_the_chosen_speed(report: Report, browser: WebDriver) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    open_replay(report, browser, "furious-five")
    speeds = Select(browser.find_element(By.CSS_SELECTOR, "select.speed-select"))
    assert [o.text for o in speeds.options] == ["0.25×", "0.5×", "1×", "2×", "4×", "8×"]
    assert speeds.first_selected_option.text == "1×"
    speeds.select_by_value("8")
    assert browser.execute_script("return document.getElementById('viewer').dataset.speed") == "8"
    click(browser, "Play")
    # 30 steps take 21 s at 1x, 2.6 s at 8x: within WAIT only at the chosen speed
    until(browser, lambda: (step(browser) or 0) >= 30, "the replay did not play at 8x")
    click(browser, "Play")  # pause
    paused = step(browser)
    speeds.select_by_value("0.25")
    assert step(browser) == paused
    assert_clean(browser)


#: A field of each game the viewer shows by its label (its key has an underscore).
LABELLED = {"furious-five": ("deck_size", "cards in the deck"),
            "octablitz": ("tricks_won", "tricks won")}
SUITS = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}


def glyph(card: str) -> str:
    """How the table draws a card: rank and suit symbol (10 for T), a rummy card's rank."""
    if card == "X":
        return "Jkr"
    if card[0] in "br" and len(card) == 2 and card[1] in "sABCJKL":
        return card[1]
    return ("10" if card[0] == "T" else card[0]) + SUITS[card[1]]


def test_moves_show_cards_as_on_the_table_and_fields_by_their_labels(
        report: Report, browser: WebDriver, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    for game, (key, label) in LABELLED.items():
        open_replay(report, browser, game)
        browser.find_element(By.TAG_NAME, "body").send_keys(*[Keys.ARROW_RIGHT] * 12)
        drawn = browser.execute_script(
            "return [...document.querySelectorAll('.viewer .card[data-card]')]"
            ".map((c) => [c.closest('.move-list') ? 'list' : 'table', c.dataset.card,"
            " c.textContent])")
        places = {where for where, _, _ in drawn}
        assert places == {"list", "table"}, f"{game}: cards drawn in {places}"
        assert all(text == glyph(card) for _, card, text in drawn)
        assert not RAW_CARD.findall(" ".join(texts(browser, ".viewer .move-list li")))
        names = [t.lower() for t in texts(browser, ".viewer dt") +
                 texts(browser, ".viewer .pile-name")]
        assert label in names and key not in " ".join(names), names
        assert not [name for name in names if "_" in name], names
        browser.save_screenshot(str(tmp_path / f"labels-{game}.png"))
    assert_clean(browser)


def test_filter_boxes_keep_the_matching_rows(report: Report, browser: WebDriver) -> None:
    from selenium.webdriver.common.by import By

    def visible(table: str) -> list[str]:
        return [row.text for row in browser.find_elements(By.CSS_SELECTOR, f"{table} tbody tr")
                if row.is_displayed()]

    visit(browser, report.site / "index.html")
    first = browser.find_element(By.CSS_SELECTOR, "table[id^='board-']").get_attribute("id")
    board = f"table#{first}"
    every = visible(board)
    box = browser.find_element(By.CSS_SELECTOR, f"input.filter[aria-controls='{first}']")
    box.send_keys("RANDOM-2")
    shown = visible(board)
    assert shown and all("random-2" in row for row in shown) and len(shown) < len(every)
    box.clear()
    box.send_keys(" ")  # blank: every row again
    assert visible(board) == every
    tid = report.tournaments["furious-five"]
    visit(browser, report.site / f"tournament-{tid}.html")
    games = visible("table#games")
    box = browser.find_element(By.CSS_SELECTOR, "input.filter[aria-controls='games']")
    box.send_keys("GREEDY")  # at every game of the table
    assert visible("table#games") == games and len(games) > 1
    box.clear()
    # The box matches a row's cells, each on its own: neighbouring cells do not run
    # together ("1" then "0.1s" is no "10.1s").
    cells = browser.execute_script(
        "return Array.from(document.querySelectorAll('table#games tbody tr'), (row) =>"
        " Array.from(row.cells, (cell) => cell.textContent.trim().toLowerCase()));")
    contents = [" ".join(row) for row in cells]
    assert len(contents) == len(games)
    across = next(left.split()[-1] + right.split()[0] for row in cells
                  for left, right in itertools.pairwise(row)
                  if left.split() and right.split() and
                  not any(left.split()[-1] + right.split()[0] in text for text in contents))
    box.send_keys(across)
    assert visible("table#games") == []
    box.clear()
    token, row = next((w, row) for n, row in enumerate(games) for w in row.split()
                      if [i for i, text in enumerate(contents) if w.lower() in text] == [n])
    box.send_keys(token)
    assert visible("table#games") == [row]
    assert [t for t in texts(browser, ".filter-count") if t] == [f"1 of {len(games)} rows"]
    box.send_keys(" no-such-bot")
    assert visible("table#games") == []
    assert_clean(browser)


def test_head_to_head_fits_a_390_px_phone(report: Report, browser: WebDriver,
                                          tmp_path: Path) -> None:
    browser.set_window_size(390, 844)
    try:
        for page in ("head-to-head.html", "index.html"):
            visit(browser, report.site / page)
            width = browser.execute_script("return document.documentElement.clientWidth")
            assert width <= 390
            wide = browser.execute_script(
                "return document.documentElement.scrollWidth")
            assert wide <= width, f"{page}: {wide} px wide on a {width} px screen"
            browser.save_screenshot(str(tmp_path / f"phone-{page}.png"))
    finally:
        browser.set_window_size(1280, 1400)


def test_a_faulted_seats_stderr_never_says_no_output(played: Played, browser: WebDriver,
                                                      tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    store = Store(played.url)
    try:
        faulty = [g for g in store.games() if any(f["stderr_tail"] for f in g.faults)]
        render_report(store, tmp_path / "site", bootstrap=0)
    finally:
        store.close()
    assert faulty
    for game in faulty:
        visit(browser, tmp_path / "site" / f"game-{game.id}.html")
        boxes = texts(browser, "#faults .faultbox pre")
        section = browser.find_element(By.ID, "stderr")
        heads = section.find_elements(By.TAG_NAME, "h3")
        for fault in game.faults:
            if not fault["stderr_tail"]:
                continue
            shown = heads[fault["seat"]].find_element(By.XPATH, "following-sibling::*[1]")
            assert shown.tag_name == "pre", f"game {game.id} seat {fault['seat']}: {shown.text}"
            assert fault["stderr_tail"].strip().splitlines()[-1] in shown.text
            assert any(fault["stderr_tail"].strip().splitlines()[-1] in box for box in boxes)
        assert_clean(browser)


# -- a match's page: verdict, LLR, bounds, path -------------------------------------------
@pytest.fixture(scope="module")
def match_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    folder = tmp_path_factory.mktemp("match")
    url = f"sqlite:///{folder / 'match.db'}"
    status = main(["match", "--db", url, "--sandbox", "none", "--seed", "5",
                   "-g", "furious-five", "-o", "rounds=1", "-j", "2",
                   "-b", f"greedy={PY} -m sample_bots.greedy_furious_five",
                   "-b", f"random={PY} -m sample_bots.random_bot",
                   "--elo0", "0", "--elo1", "300", "--sprt-model", "logistic",
                   "--max-pairs", "40"])
    assert status in (0, 3), status
    assert main(["report", "--db", url, "--out", str(folder / "site")]) == 0
    store = Store(url)
    try:
        (tournament,) = store.tournaments()
    finally:
        store.close()
    return folder / "site", url, tournament["id"]


def test_a_match_page_shows_its_verdict_llr_bounds_and_path(
        match_site: tuple[Path, str, int], browser: WebDriver, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from arena.runner.plan import Plan
    from arena.runner.tournament import match_test

    site, url, tid = match_site
    store = Store(url)
    try:
        stored = store.tournament(tid)
        assert stored is not None
        test = match_test(Plan.from_stored(stored, store.deal_secret(tid)), store.games(tid))
    finally:
        store.close()
    visit(browser, site / f"tournament-{tid}.html")
    verdict = texts(browser, "#sprt .verdict")[0]
    assert verdict.startswith({"H1": "H1 accepted", "H0": "H0 accepted",
                               "inconclusive": "inconclusive"}[test.outcome]), verdict
    bounds = test.sprt.bounds
    llr = texts(browser, "#sprt .llr")[0]
    assert llr.startswith(f"{test.llr:.2f}") and f"{bounds.lower:.2f}" in llr \
        and f"{bounds.upper:+.2f}" in llr
    assert texts(browser, "#sprt .ptnml") == [", ".join(map(str, test.counted.counts()))]
    chart = browser.find_element(By.ID, "llr-chart")
    points = chart.find_element(By.TAG_NAME, "polyline").get_attribute("points").split()
    assert len(points) == len(test.path) + 1  # from (0, 0), one point per counted pair
    levels = {g.get_attribute("class").split()[1]: float(
        g.find_element(By.TAG_NAME, "line").get_attribute("y1"))
        for g in chart.find_elements(By.CSS_SELECTOR, "g.level")}
    last_y = float(points[-1].split(",")[1])
    if test.outcome == "H1":  # the path ends on or above the upper bound (SVG y grows down)
        assert last_y <= levels["upper"] < levels["zero"] < levels["lower"]
    elif test.outcome == "H0":
        assert last_y >= levels["lower"]
    browser.save_screenshot(str(tmp_path / "match.png"))
    assert_clean(browser)


# -- ratings over time: a ladder, a bot's versions -------------------------------------------
@pytest.fixture(scope="module")
def ladder_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Two ladders in one pool; bot ``v`` has another command in the second: v@1, v@2."""
    folder = tmp_path_factory.mktemp("ladder")
    url = f"sqlite:///{folder / 'ladder.db'}"
    greedy = f"{PY} -m sample_bots.greedy_furious_five"
    random_bot = f"{PY} -m sample_bots.random_bot"
    for v in (random_bot, greedy):
        status = main(["ladder", "--db", url, "--sandbox", "none", "-g", "furious-five",
                       "-o", "rounds=1", "-j", "2", "--workers", "1", "--max-groups", "12",
                       "--no-report", "-b", f"v={v}", "-b", f"g={greedy}",
                       "-b", f"r={random_bot}"])
        assert status in (0, 3), status
    assert main(["report", "--db", url, "--out", str(folder / "site")]) == 0
    return folder / "site", url


def test_a_ladder_and_a_bots_versions_show_elo_over_time(
        ladder_site: tuple[Path, str], browser: WebDriver, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    from reports.render import bot_page

    site, url = ladder_site
    store = Store(url)
    try:
        ladders = [t for t in store.tournaments() if t["kind"] == "ladder"]
        games = store.games(ladders[0]["id"])
    finally:
        store.close()
    assert len(ladders) == 2
    visit(browser, site / f"tournament-{ladders[0]['id']}.html")
    chart = browser.find_element(By.ID, "elo-chart")
    lines = {g.find_element(By.TAG_NAME, "title").get_attribute("textContent"):
             g.find_element(By.TAG_NAME, "polyline").get_attribute("points").split()
             for g in chart.find_elements(By.CSS_SELECTOR, "g.series")}
    assert set(lines) <= {bot for game in games for bot in game.seats} and len(lines) >= 2
    assert all(1 <= len(points) <= 12 for points in lines.values())  # finite estimates only
    assert max(map(len, lines.values())) >= 2
    for points in lines.values():
        xs = [float(p.split(",")[0]) for p in points]
        assert xs == sorted(set(xs))  # over time
    browser.save_screenshot(str(tmp_path / "ladder.png"))
    assert_clean(browser)

    visit(browser, site / bot_page("v@2"))
    versions = browser.find_element(By.ID, "versions-chart-1")
    names = [t.get_attribute("textContent")
             for t in versions.find_elements(By.CSS_SELECTOR, "g.series title")]
    assert names == ["v@1", "v@2"]
    browser.save_screenshot(str(tmp_path / "versions.png"))
    assert_clean(browser)
