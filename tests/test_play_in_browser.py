"""A person plays the ladder's bots in the browser (arena/server/play.py), against
a real ``arena serve`` over SQLite whose five ladder has one bot (a random bot,
uploaded and checked): over the API (only the player sees or moves in their
game, one game per person and the server's limit, illegal and late moves
refused, a silent person's seat times out, resigning) and in headless Chromium
to the end of a game at 1280 and at 390 px, with no console error and no
horizontal overflow.  Finished games are stored unrated, with their replays."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import requests

from tests.chromium import chromium
from tests.server import bot_archive, eventually, running_server, user_add, wait_status

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

#: The person's move time the server is started with (--play-move-time).
MOVE_SECONDS = 15
PASSWORD = "a long enough password"


@dataclass
class Site:
    """The server (its URL), each user's API token and password link."""

    base: str
    tokens: dict[str, str]
    links: dict[str, str]

    def call(self, user: str, method: str, path: str, **kwargs: Any) -> requests.Response:
        return requests.request(method, f"{self.base}{path}", timeout=60, headers={
            "Authorization": f"Bearer {self.tokens[user]}"}, **kwargs)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("play")
    db = f"sqlite:///{folder / 'arena.db'}"
    users = {name: user_add(db, name) for name in ("ann", "bob", "cid", "dee")}
    with running_server(db, "--ladder", "five", "--check-games", "2", "--play-games", "2",
                        "--play-move-time", str(MOVE_SECONDS),
                        bot_store=folder / "bots") as base:
        here = Site(base, {n: t for n, (t, _) in users.items()},
                    {n: link for n, (_, link) in users.items()})
        reply = here.call("ann", "POST", "/api/submissions",
                          files={"archive": ("r.tar.gz", bot_archive("randy"))})
        assert reply.status_code == 202, reply.text
        assert wait_status(base, here.tokens["ann"], reply.json()["id"])["status"] == "passed"
        yield here


def finished(site: Site, user: str, number: int, seconds: float = 120) -> dict[str, Any]:
    """The game's JSON once it is over (waiting on its changes)."""
    deadline = time.monotonic() + seconds
    body: dict[str, Any] = {"version": -1, "status": "starting"}
    while body["status"] not in ("over", "failed") and time.monotonic() < deadline:
        reply = site.call(user, "GET", f"/api/play/{number}?after={body['version']}")
        assert reply.status_code == 200, reply.text
        body = reply.json()
    return body


def your_move(site: Site, user: str, number: int, seconds: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    body: dict[str, Any] = {"version": -1, "status": "starting"}
    while body["status"] != "your-move" and time.monotonic() < deadline:
        body = site.call(user, "GET", f"/api/play/{number}?after={body['version']}").json()
    assert body["status"] == "your-move", body
    return body


def test_only_the_player_sees_and_moves_and_bad_moves_are_refused(site: Site) -> None:
    started = site.call("bob", "POST", "/api/play", json={"game": "five", "seat": 1})
    assert started.status_code == 201, started.text
    number = started.json()["id"]
    turn = your_move(site, "bob", number)
    assert turn["legal"] and turn["observation"]["seat"] == 1 and turn["view"]
    assert turn["players"] == ["randy@1", "you"]
    for other in ("ann", "cid"):  # another user's game is not there for them
        assert site.call(other, "GET", f"/api/play/{number}").status_code == 404
        assert site.call(other, "POST", f"/api/play/{number}/move",
                         json={"turn": turn["turn"], "move": 0}).status_code == 404
    assert requests.get(f"{site.base}/api/play/{number}", timeout=30).status_code == 401
    assert requests.get(f"{site.base}/play/{number}", timeout=30).status_code == 401
    illegal = site.call("bob", "POST", f"/api/play/{number}/move",
                        json={"turn": turn["turn"], "move": len(turn["legal"])})
    assert illegal.status_code == 400 and "illegal move" in illegal.json()["error"]
    stale = site.call("bob", "POST", f"/api/play/{number}/move",
                      json={"turn": turn["turn"] - 1, "move": 0})
    assert stale.status_code == 409
    again = site.call("bob", "GET", f"/api/play/{number}").json()
    assert again["status"] == "your-move" and again["turn"] == turn["turn"]  # still waiting
    ok = site.call("bob", "POST", f"/api/play/{number}/move",
                   json={"turn": turn["turn"], "move": 0})
    assert ok.status_code == 200, ok.text
    nxt = your_move(site, "bob", number)
    assert nxt["turn"] == turn["turn"] + 1
    resign = site.call("bob", "POST", f"/api/play/{number}/move",
                       json={"turn": nxt["turn"], "move": -1})
    assert resign.status_code == 200
    over = finished(site, "bob", number)
    assert over["status"] == "over", over
    assert [f["kind"] for f in over["result"]["faults"]] == ["resigned"]
    assert over["game_id"] is not None


def test_bad_starts_and_the_limits(site: Site) -> None:
    for body, status in (({"game": "octablitz"}, 404), ({"game": "five", "seat": 2}, 400),
                         ({"game": "five", "bots": ["nobody@1"]}, 400),
                         ({"game": "five", "bots": ["randy@1", "randy@1"]}, 400)):
        reply = site.call("ann", "POST", "/api/play", json=body)
        assert reply.status_code == status, (body, reply.text)
    first = site.call("ann", "POST", "/api/play", json={"game": "five"})
    assert first.status_code == 201, first.text
    second = site.call("ann", "POST", "/api/play", json={"game": "five"})
    assert second.status_code == 429 and "in play already" in second.json()["error"]
    other = site.call("cid", "POST", "/api/play", json={"game": "five"})
    assert other.status_code == 201, other.text
    full = site.call("dee", "POST", "/api/play", json={"game": "five"})  # --play-games 2
    assert full.status_code == 429 and full.headers.get("Retry-After")
    for user, reply in (("ann", first), ("cid", other)):
        number = reply.json()["id"]
        your_move(site, user, number)
        site.call(user, "POST", f"/api/play/{number}/move", json={
            "turn": site.call(user, "GET", f"/api/play/{number}").json()["turn"], "move": -1})
        assert finished(site, user, number)["status"] == "over"
    again = site.call("dee", "POST", "/api/play", json={"game": "five", "seat": 1})
    assert again.status_code == 201, again.text  # room again
    number = again.json()["id"]
    site.call("dee", "POST", f"/api/play/{number}/move",
              json={"turn": your_move(site, "dee", number)["turn"], "move": -1})
    assert finished(site, "dee", number)["status"] == "over"


def test_a_silent_person_times_out_and_the_game_is_stored_unrated(site: Site) -> None:
    reply = site.call("cid", "POST", "/api/play", json={"game": "five"})
    assert reply.status_code == 201, reply.text
    number = reply.json()["id"]
    turn = your_move(site, "cid", number)
    assert MOVE_SECONDS - 5 <= turn["seconds_left"] <= MOVE_SECONDS
    over = finished(site, "cid", number, seconds=MOVE_SECONDS + 120)
    assert over["status"] == "over"
    assert [f["kind"] for f in over["result"]["faults"]] == ["timeout"]
    late = site.call("cid", "POST", f"/api/play/{number}/move",
                     json={"turn": turn["turn"], "move": 0})
    assert late.status_code == 409
    game_id = over["game_id"]
    stored = requests.get(f"{site.base}/api/games/{game_id}", timeout=30)
    assert stored.status_code == 200, stored.text
    replay = requests.get(f"{site.base}{over['replay']}", timeout=30)
    assert replay.status_code == 200 and "human" in replay.text
    listed = eventually(lambda: requests.get(f"{site.base}/api/games?bot=randy",
                                             timeout=30).json(),
                        lambda body: any(g["id"] == game_id for g in body["games"]))
    assert any(g["id"] == game_id for g in listed["games"])  # the snapshot has it
    board = requests.get(f"{site.base}/api/leaderboard", timeout=30).json()
    assert board["pools"] == [], board  # check games and a person's are unrated


# -- in Chromium -------------------------------------------------------------------------

def until(browser: WebDriver, condition: Any, message: str, seconds: float = 30.0) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.wait import WebDriverWait

    WebDriverWait(browser, seconds, poll_frequency=0.2,
                  ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda _: condition(), message)


def no_console_errors(browser: WebDriver) -> None:
    errors = [entry["message"] for entry in browser.get_log("browser")
              if entry["level"] == "SEVERE"]
    assert not errors, errors


def fits(browser: WebDriver, what: str) -> None:
    width = browser.execute_script("return document.documentElement.clientWidth")
    wide = browser.execute_script("return document.documentElement.scrollWidth")
    assert wide <= width, f"{what}: {wide} px wide on a {width} px screen"


def state(browser: WebDriver) -> str:
    text: str = browser.execute_script(
        "const s = document.getElementById('play-status'); return s ? s.textContent : ''")
    return text


def play_to_the_end(browser: WebDriver, what: str) -> int:
    """Click the first legal action at every turn until the game is over; the moves."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    moves, deadline = 0, time.monotonic() + 600
    while not state(browser).startswith("Game over"):
        assert time.monotonic() < deadline, f"{what}: no end after {moves} moves"
        assert "could not" not in state(browser)
        buttons = browser.find_elements(By.CSS_SELECTOR, "#play-moves button:enabled")
        if not buttons:
            time.sleep(0.1)
            continue
        if moves in (0, 5):
            fits(browser, f"{what}, move {moves}")
        try:
            buttons[0].click()
            moves += 1
        except StaleElementReferenceException:
            continue
    return moves


def test_a_whole_game_in_chromium_at_1280_and_390_px(site: Site, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    with chromium() as browser:
        browser.get(site.links["dee"].replace("http://127.0.0.1:8000", site.base))
        browser.find_element(By.CSS_SELECTOR, "#password-form [name='password']").send_keys(
            PASSWORD)
        browser.find_element(By.CSS_SELECTOR, "#password-form button[type='submit']").click()
        until(browser, lambda: browser.current_url.endswith("/account"), "not signed in")
        for width, height in ((1280, 1400), (390, 844)):
            browser.set_window_size(width, height)
            browser.find_element(By.ID, "play-link").click()
            until(browser, lambda: browser.current_url.endswith("/play"), "no play page")
            fits(browser, f"/play at {width} px")
            no_console_errors(browser)
            browser.find_element(By.CSS_SELECTOR, "#play-five button[type='submit']").click()
            until(browser, lambda: "/play/" in browser.current_url, "no game page")
            moves = play_to_the_end(browser, f"{width} px")
            assert moves > 0
            until(browser, lambda: bool(browser.find_elements(By.ID, "play-replay-link")),
                  "no replay link")
            rows = browser.find_elements(By.CSS_SELECTOR, "#play-result tbody tr")
            assert len(rows) == 2 and "you" in rows[0].text
            fits(browser, f"the finished game at {width} px")
            browser.save_screenshot(str(tmp_path / f"game-{width}.png"))
            no_console_errors(browser)
            browser.find_element(By.ID, "play-replay-link").click()
            until(browser, lambda: "/games/" in browser.current_url, "no replay")
            assert "human" in browser.page_source
            no_console_errors(browser)
