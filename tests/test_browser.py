"""The report in a real browser: Debian's headless Chromium driven by Selenium.

A report is rendered (``arena report``) from small real tournaments of the sample bots
(``arena tournament`` into a temporary SQLite file), and its pages are opened from
``file://``: no console errors, no request but for local files, the leaderboard lists
every bot and sorts, the replay viewer steps both ways and switches seat views, and a
seat's view shows that seat's cards only, as the engine dealt them.  A screenshot of each
page type is saved in the test's temporary folder.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from arena.cli import main
from arena.games import make_game
from arena.store.database import Store, StoredGame
from reports.replay import replay, timeline
from tests.arena_db import tournament
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
