"""The competition server as a person uses it, in Debian's headless Chromium
(Selenium), against a real ``arena serve`` over SQLite and over PostgreSQL:
sign up, upload a bot, watch it pass its check and appear on the leaderboard
without reloading, see its rating over time drawn, open one of its games in its
own seat's view and in the spectator's; a second browser session, another user,
cannot see that seat."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.chromium import chromium
from tests.pg import new_database, postgres_server
from tests.server import bot_archive, running_server, user_add, wait_status

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

#: Seconds to wait for a check to pass, the ladder to play, a page to update.
SLOW = 240.0
PASSWORD = "a long enough password"


def until(browser: WebDriver, condition: Any, message: str, seconds: float = 15.0) -> None:
    """Wait until ``condition()``; an element a live page swapped out meanwhile
    (stale) is looked for again at the next poll."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.wait import WebDriverWait

    WebDriverWait(browser, seconds, poll_frequency=0.5,
                  ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda _: condition(), message)


def fill(browser: WebDriver, form: str, **fields: str) -> None:
    """Fill the fields of form ``#form`` and submit it."""
    from selenium.webdriver.common.by import By

    for name, value in fields.items():
        browser.find_element(By.CSS_SELECTOR, f"#{form} [name='{name}']").send_keys(value)
    browser.find_element(By.CSS_SELECTOR, f"#{form} button[type='submit']").click()


def text(browser: WebDriver, css: str) -> str:
    """The text of the first element ``css`` finds ("" if none, or if a live page
    swapped it out as it was read)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    try:
        found = browser.find_elements(By.CSS_SELECTOR, css)
        return found[0].text if found else ""
    except StaleElementReferenceException:
        return ""


def sign_up(browser: WebDriver, base: str, name: str) -> None:
    browser.get(f"{base}/signup")
    fill(browser, "signup-form", name=name, password=PASSWORD)
    until(browser, lambda: browser.current_url.endswith("/account"), "not signed up")


def no_console_errors(browser: WebDriver) -> None:
    errors = [entry["message"] for entry in browser.get_log("browser")
              if entry["level"] == "SEVERE"]
    assert not errors, errors


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
    else:
        with postgres_server() as url:
            yield new_database(url)


def test_an_author_signs_up_uploads_and_watches_their_bot_play(database: str,
                                                                tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    opponent, _ = user_add(database, "bob")
    archive = tmp_path / "carolbot.tar.gz"
    archive.write_bytes(bot_archive("carolbot"))
    with running_server(database, "--open-signup", "--ladder", "five", "--check-games", "2",
                        bot_store=tmp_path / "bots") as base, \
            chromium() as carol, chromium() as dave:
        reply = requests.post(f"{base}/api/submissions", timeout=60,
                              headers={"Authorization": f"Bearer {opponent}"},
                              files={"archive": ("b.tar.gz", bot_archive("bobbot"))})
        assert reply.status_code == 202, reply.text
        sign_up(carol, base, "carol")
        upload = carol.find_element(By.CSS_SELECTOR, "#upload-form input[type='file']")
        upload.send_keys(str(archive))
        carol.find_element(By.CSS_SELECTOR, "#upload-form button[type='submit']").click()
        until(carol, lambda: "/submissions/" in carol.current_url, "no submission page")
        carol.execute_script("window.notReloaded = true")
        until(carol, lambda: text(carol, "#status") == "passed",
              f"the check did not pass: {text(carol, 'main')}", SLOW)
        assert carol.execute_script("return window.notReloaded") is True
        assert wait_status(base, opponent, reply.json()["id"])["status"] == "passed"

        carol.get(base)
        carol.execute_script("window.notReloaded = true")
        until(carol, lambda: "carolbot@1" in text(carol, "main table"),
              "carolbot never reached the leaderboard", SLOW)
        assert carol.execute_script("return window.notReloaded") is True  # updated live
        no_console_errors(carol)

        carol.get(f"{base}/bots/carolbot")  # rating over time: a chart above its table
        until(carol, lambda: carol.execute_script(
            "return document.querySelectorAll('#history svg.lines polyline').length") == 1,
            f"no rating chart: {text(carol, '#history')}", SLOW)
        points, title, cells = carol.execute_script("""
            const line = document.querySelector('#history svg.lines polyline');
            const cells = [...document.querySelectorAll(
                '#history table tbody tr td:nth-child(2)')].map((td) => td.textContent);
            return [line.getAttribute('points').trim().split(/\\s+/),
                    line.parentNode.querySelector('title').textContent, cells];""")
        assert title == "carolbot@1"
        assert len(points) == len([cell for cell in cells if cell.strip()]) >= 1, (points, cells)
        no_console_errors(carol)

        games = requests.get(f"{base}/api/games", params={"bot": "carolbot"}, timeout=60)
        game = next(g for g in games.json()["games"] if "bobbot@1" in g["seats"])
        seat = game["seats"].index("carolbot@1")
        carol.get(f"{base}/games/{game['id']}")
        until(carol, lambda: carol.execute_script(
            "return document.getElementById('viewer').dataset.step") == "0", "no viewer")
        Select(carol.find_element(By.CSS_SELECTOR, ".viewer-select")).select_by_value(str(seat))
        until(carol, lambda: carol.execute_script(
            "return document.getElementById('viewer').dataset.viewer") == str(seat),
            "carol's seat view did not show")
        Select(carol.find_element(By.CSS_SELECTOR, ".viewer-select")).select_by_value(
            "spectator")
        until(carol, lambda: carol.execute_script(
            "return document.getElementById('viewer').dataset.viewer") == "spectator",
            "the spectator's view did not show")
        no_console_errors(carol)

        sign_up(dave, base, "dave")
        dave.get(f"{base}/games/{game['id']}")
        until(dave, lambda: dave.execute_script(
            "return document.getElementById('viewer').dataset.step") == "0", "no viewer")
        options = [o.get_attribute("value") for o in
                   dave.find_elements(By.CSS_SELECTOR, ".viewer-select option")]
        assert options == ["spectator"]
        status = dave.execute_async_script(
            "fetch(arguments[0]).then((r) => arguments[1](r.status))",
            f"/games/{game['id']}/seat/{seat}.js")
        assert status == 404
