"""The competition server as a person uses it, in Debian's headless Chromium
(Selenium), against a real ``arena serve`` over SQLite and over PostgreSQL:
sign up, upload a bot, watch it pass its check and appear on the leaderboard
without reloading, see its rating over time drawn, open one of its games in its
own seat's view and in the spectator's; a second browser session, another user,
cannot see that seat.  No page logs an error (a script or style the site's
Content-Security-Policy refused would be one).  A page of another site (another
port of 127.0.0.1) can neither read a signed-in user's seat view nor frame
their account page."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.chromium import chromium
from tests.pg import new_database, postgres_server
from tests.server import bot_archive, played_database, running_server, user_add, wait_status

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
    browser.get(f"{base}/signin")
    no_console_errors(browser)
    browser.get(f"{base}/signup")
    no_console_errors(browser)
    fill(browser, "signup-form", name=name, password=PASSWORD)
    until(browser, lambda: browser.current_url.endswith("/account"), "not signed up")
    no_console_errors(browser)


def no_console_errors(browser: WebDriver) -> None:
    """Nothing logged as an error since the last look: no failed script or fetch,
    nothing the Content-Security-Policy refused."""
    errors = [entry["message"] for entry in browser.get_log("browser")
              if entry["level"] == "SEVERE"]
    assert not errors, errors


def fits_both_widths(browser: WebDriver) -> None:
    """The page shown, at 390 and at 1280 px, is no wider than the window (then
    back at 1280 px)."""
    for width in (390, 1280):
        browser.set_window_size(width, 900)
        wide = browser.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth")
        assert wide <= 0, f"{browser.current_url} is {wide} px too wide at {width} px"


def fetched(browser: WebDriver) -> list[str]:
    """The URLs the page has fetched since it was loaded."""
    urls: list[str] = browser.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name)")
    return urls


def view_options(browser: WebDriver) -> list[str]:
    from selenium.webdriver.common.by import By

    return [o.get_attribute("value") or "" for o in
            browser.find_elements(By.CSS_SELECTOR, ".viewer-select option")]


def choose_view(browser: WebDriver, value: str) -> None:
    """Pick a view in the replay's selector and wait until it shows."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select

    Select(browser.find_element(By.CSS_SELECTOR, ".viewer-select")).select_by_value(value)
    until(browser, lambda: browser.execute_script(
        "return document.getElementById('viewer').dataset.viewer") == value,
        f"the view {value} did not show: {text(browser, '#viewer .notice')}")


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
        fits_both_widths(carol)  # the submission page, with its build and check
        no_console_errors(carol)
        done = wait_status(base, opponent, reply.json()["id"])
        assert done["status"] == "passed", done.get("message")

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
        carol.get(f"{base}/games?bot=carolbot")
        until(carol, lambda: "carolbot@1" in text(carol, "#games-table"), "no games listed")
        no_console_errors(carol)
        carol.get(f"{base}/games/{game['id']}")
        until(carol, lambda: carol.execute_script(
            "return document.getElementById('viewer').dataset.step") == "0", "no viewer")
        # only her own seat is offered; its view is fetched as JSON
        assert view_options(carol) == ["spectator", str(seat)]
        choose_view(carol, str(seat))
        assert f"{base}/games/{game['id']}/seat/{seat}.json" in fetched(carol)
        choose_view(carol, "spectator")
        choose_view(carol, str(seat))
        no_console_errors(carol)

        carol.get(f"{base}/play")  # the ladder's bots to play
        assert text(carol, "h1") == "Play the bots"
        fits_both_widths(carol)
        no_console_errors(carol)

        sign_up(dave, base, "dave")
        dave.get(f"{base}/games/{game['id']}")
        until(dave, lambda: dave.execute_script(
            "return document.getElementById('viewer').dataset.step") == "0", "no viewer")
        assert view_options(dave) == ["spectator"]
        no_console_errors(dave)  # the spectator's replay
        for suffix in ("js", "json"):
            status = dave.execute_async_script(
                "fetch(arguments[0]).then((r) => arguments[1](r.status))",
                f"/games/{game['id']}/seat/{seat}.{suffix}")
            assert status == 404, suffix


#: Another site's page: it defines the global a seat script calls, loads the seat
#: view by <script src> (the old URL and the new) and frames the account page.
ATTACKER = """<!doctype html>
<title>another site</title>
<script>window.stolen = []; window.replaySeat = (text) => window.stolen.push(text);</script>
<script src="{base}/games/{game}/seat/0.js"></script>
<script src="{base}/games/{game}/seat/0.json"></script>
<iframe id="frame" src="{base}/account" width="600" height="400"></iframe>
"""
#: Fetch with the browser's cookies, then without reading rights (no-cors): what came back.
STEAL = """
const done = arguments[arguments.length - 1];
const url = arguments[0];
const got = [];
fetch(url, {credentials: "include"}).then((r) => r.text()).then(
    (t) => got.push("cors:" + t), (e) => got.push("cors refused"))
  .then(() => fetch(url, {credentials: "include", mode: "no-cors"}))
  .then((r) => r.text()).then((t) => got.push("no-cors:" + t), (e) => got.push("no-cors refused"))
  .then(() => done(got));
"""


@contextmanager
def another_site(folder: Path) -> Iterator[str]:
    """A plain HTTP server on another port of 127.0.0.1 serving ``folder``; its URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_another_site_cannot_read_a_seat_view_or_frame_the_account_page(
        tmp_path: Path) -> None:
    """An admin signed in: every seat of every game is theirs to see, on the site;
    a page on another port of the same host (the same site to the browser, so
    its SameSite=Lax cookie goes along) gets none of it."""
    from selenium.webdriver.common.by import By

    db = played_database(tmp_path)
    _, link = user_add(db, "root", "--admin")
    with running_server(db) as base, chromium() as root:
        game = requests.get(f"{base}/api/games", timeout=60).json()["games"][0]["id"]
        root.get(link.replace("http://127.0.0.1:8000", base))
        fill(root, "password-form", password=PASSWORD)
        until(root, lambda: root.current_url.endswith("/account"), "not signed in")
        no_console_errors(root)

        # on the site: the admin's replay shows either seat, fetched as JSON
        root.get(f"{base}/games/{game}")
        until(root, lambda: root.execute_script(
            "return document.getElementById('viewer').dataset.step") == "0", "no viewer")
        assert view_options(root) == ["spectator", "0", "1"]
        for value in ("1", "spectator", "0", "1"):
            choose_view(root, value)
        assert f"{base}/games/{game}/seat/0.json" in fetched(root)
        no_console_errors(root)

        (tmp_path / "attacker.html").write_text(ATTACKER.format(base=base, game=game))
        with another_site(tmp_path) as elsewhere:
            root.get(f"{elsewhere}/attacker.html")
            until(root, lambda: root.execute_script(
                "return document.readyState") == "complete", "the page did not load")
            assert root.execute_script("return window.stolen") == []
            got = root.execute_async_script(STEAL, f"{base}/games/{game}/seat/0.json")
            # no CORS header: unreadable; Cross-Origin-Resource-Policy: not even opaque
            assert got == ["cors refused", "no-cors refused"], got
            logged = " ".join(entry["message"] for entry in root.get_log("browser"))
            assert "frame-ancestors" in logged or "X-Frame-Options" in logged, logged
            root.switch_to.frame(root.find_element(By.ID, "frame"))
            assert not root.find_elements(By.ID, "upload-form"), "the account page was framed"
            assert "root" not in root.find_element(By.TAG_NAME, "body").text
            root.switch_to.default_content()
