"""The competition site's pages for a bot author (issue 30): the forms (labels,
hints, errors in place, links between them), "Getting started" (the kits as
archives, this server's own ``arena submit`` line, the rules), the leaderboard
(tabs per game, owners, ratings as ``Rating.format`` writes them, movement since
the day before, the signed-in user's rows, the filter box) and a bot's page
(ratings over time, head-to-head, recent games from its side, faults).  A real
``arena serve`` over a real SQLite database of two tournaments, the first one
stored two days earlier; each page in headless Chromium at 1280 and 390 px with
no console error and no horizontal scrolling."""

from __future__ import annotations

import html
import io
import re
import sqlite3
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import requests

from arena.store.accounts import Accounts
from arena.store.database import Store
from tests.chromium import chromium
from tests.server import arena, csrf_of, running_server, set_password, sign_in, user_add

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

PASSWORD = "a long enough password"
RANDOM = f"{sys.executable} -m sample_bots.random_bot"
HEURISTIC = f"{sys.executable} -m sample_bots.five_heuristic"
ILLEGAL = f"{sys.executable} {Path(__file__).parent / 'bots' / 'zoo' / 'illegal.py'} out_of_range"


@dataclass(frozen=True)
class Site:
    base: str
    db: str
    #: bob's password link (path), not used: the password page
    bob_link: str

    def get(self, path: str, session: requests.Session | None = None) -> requests.Response:
        return (session or requests).get(self.base + path, timeout=60)


def tournament(db: str, game: str, *bots: str) -> None:
    played = arena("tournament", "-g", game, "-k", "2", "-n", "4", "--sandbox", "none",
                   "-j", "1", *(flag for bot in bots for flag in ("-b", bot)), "--db", db)
    assert played.returncode in (0, 3), played.stderr


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """ann owns annbot (two versions, the second a day old); org1 and org2 are the
    organiser's; five and furious-five have games; the first tournament's games
    were stored two days ago."""
    folder = tmp_path_factory.mktemp("site")
    db = f"sqlite:///{folder / 'arena.db'}"
    _, link = user_add(db, "ann")
    _, bob = user_add(db, "bob")
    accounts = Accounts(Store(db))
    ann = accounts.user_named("ann")
    assert ann is not None and accounts.claim_name("annbot", ann.id)
    tournament(db, "five", f"annbot={RANDOM}", f"org1={RANDOM}", f"org2={RANDOM}")
    with sqlite3.connect(folder / "arena.db") as connection:
        connection.execute("UPDATE games SET finished = datetime(finished, '-2 days')")
    tournament(db, "five", f"annbot={HEURISTIC}", f"org1={RANDOM}", f"org2={RANDOM}")
    tournament(db, "furious-five", f"org1={RANDOM}", f"org2={RANDOM}", f"badbot={ILLEGAL}")
    with running_server(db, "--open-signup") as base:
        set_password(base, link, PASSWORD)
        yield Site(base, db, bob.replace("http://127.0.0.1:8000", ""))


# -- forms and getting started --------------------------------------------------------------

def test_a_wrong_password_is_said_inside_the_form_with_the_reset_note(site: Site) -> None:
    session = requests.Session()
    page = session.get(f"{site.base}/signin", timeout=30)
    assert '<label for="signin-name">Name</label>' in page.text
    assert 'href="/signup"' in page.text and "arena user reset" in page.text
    reply = session.post(f"{site.base}/signin", timeout=30, data={
        "csrf": csrf_of(page.text), "name": "ann", "password": "not it at all"})
    assert reply.status_code == 400
    form = re.search(r'<form[^>]*id="signin-form".*?</form>', reply.text, re.S)
    assert form and "wrong name or password" in form.group(0)
    assert 'aria-invalid="true"' in form.group(0)


def test_sign_up_hints_the_password_rule_and_says_a_short_one_in_place(site: Site) -> None:
    session = requests.Session()
    page = session.get(f"{site.base}/signup", timeout=30)
    assert "At least 8 characters." in page.text and 'href="/signin"' in page.text
    reply = session.post(f"{site.base}/signup", timeout=30, data={
        "csrf": csrf_of(page.text), "name": "carol", "password": "short"})
    assert reply.status_code == 400
    field = re.search(r'<input id="signup-password"[^>]*>', reply.text)
    assert field and 'aria-invalid="true"' in field.group(0)
    assert re.search(r'id="signup-form".*id="error"[^>]*>a password has at least 8',
                     reply.text, re.S)


def test_getting_started_names_this_server_and_serves_each_kit(site: Site) -> None:
    page = site.get("/start")
    assert page.ok
    assert f"arena submit ./mybot --server {site.base} --token TOKEN --wait" in page.text
    for language, bot_file in (("python", "bot.py"), ("javascript", "bot.js"), ("c", "bot.c")):
        assert f"arena new-bot mybot --lang {language}" in page.text
        kit = site.get(f"/start/kits/{language}.tar.gz")
        assert kit.ok and "attachment" in kit.headers["Content-Disposition"]
        with tarfile.open(fileobj=io.BytesIO(kit.content)) as tar:
            names = tar.getnames()
            manifest = tar.extractfile("mybot/bot.toml")
            assert manifest is not None and b'name = "mybot"' in manifest.read()
        assert f"mybot/{bot_file}" in names and "mybot/README.md" in names
    assert site.get("/start/kits/cobol.tar.gz").status_code == 404
    for game in ("five", "furious-five", "octablitz"):
        assert f'href="/rules/{game}.md"' in page.text
    rules = site.get("/rules/five.md")
    assert rules.ok and rules.headers["Content-Type"].startswith("text/plain")
    assert rules.text.startswith("# five")
    assert "docs/lab.md" in page.text


def test_the_account_page_leads_to_getting_started(site: Site) -> None:
    account = sign_in(site.base, "ann", PASSWORD).get(f"{site.base}/account", timeout=30)
    assert 'href="/start' in account.text and 'id="start-link"' in account.text
    assert "At least 8 characters." in account.text


# -- the leaderboard ---------------------------------------------------------------------

RATING = re.compile(r"^([+-]\d+(\.\d+)? \[[^\]]+\]|[<>] [+-]\d+|[+-]0)( \([^)]*\))?$")


def board_rows(page: str) -> dict[str, dict[str, str]]:
    """The rows of the page's boards by bot: each cell's text by class, and the row's."""
    found = {}
    for row in re.findall(r"<tr(?: class=\"own\")?>.*?</tr>", page, re.S):
        bot = re.search(r'<td class="bot"><a [^>]*>([^<]+)</a>', row)
        if bot:
            cells = {name: html.unescape(re.sub(r"<[^>]+>", "", text)).strip() for name, text in
                     re.findall(r'<td class="(?:num )?(\w+)(?: \w+)?">(.*?)</td>', row, re.S)}
            found[bot.group(1)] = {**cells, "row": row}
    return found


def test_the_leaderboard_has_a_tab_per_game_with_owners_and_ratings(site: Site) -> None:
    page = site.get("/")
    assert page.ok
    assert re.search(r'<nav class="tabs".*href="/\?game=five" aria-current="page".*'
                     r'href="/\?game=furious-five"', page.text, re.S)
    rows = board_rows(page.text)
    assert set(rows) == {"annbot@1", "annbot@2", "org1@1", "org2@1"}
    assert rows["annbot@2"]["owner"] == rows["annbot@1"]["owner"] == "ann"
    assert rows["org1@1"]["owner"] == "organiser"
    for row in rows.values():
        assert RATING.match(row["elo"]), row["elo"]
        assert int(row["games"]) > 0 and row["age"]
        assert 1.0 <= float(row["place"]) <= 2.0 and re.fullmatch(r"\d+%", row["firsts"])
    other = board_rows(site.get("/?game=furious-five").text)
    assert {"org1@1", "org2@1"} <= set(other) and "annbot@1" not in other
    assert site.get("/?game=octablitz").status_code == 404


def test_movement_is_since_the_day_before_and_new_versions_are_new(site: Site) -> None:
    rows = board_rows(site.get("/").text)
    assert rows["annbot@2"]["move"] == "new"
    for bot in ("annbot@1", "org1@1", "org2@1"):  # ranked two days ago
        assert rows[bot]["move"] != "new" and re.fullmatch(r"[▲▼]\d+|–", rows[bot]["move"])


def test_overlapping_ranks_are_explained_and_own_rows_highlighted(site: Site) -> None:
    page = site.get("/")
    if "(1–" in page.text:
        assert "cannot order them yet" in page.text
        assert re.search(r'<abbr class="ranks" title="Rank 1–\d with 95% confidence', page.text)
    assert 'class="own"' not in page.text
    mine = sign_in(site.base, "ann", PASSWORD).get(f"{site.base}/", timeout=30).text
    own = {bot for bot, row in board_rows(mine).items() if 'class="own"' in row["row"]}
    assert own == {"annbot@1", "annbot@2"}


# -- a bot's page ------------------------------------------------------------------------

def table_rows(page: str, table: str) -> list[list[str]]:
    """The cells' text of each body row of table ``#table``."""
    body = re.search(rf'<table[^>]*id="{table}".*?<tbody>(.*?)</tbody>', page, re.S)
    assert body, f"no table {table}"
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
             for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)]


def test_a_bots_ratings_are_drawn_over_time(site: Site) -> None:
    page = site.get("/bots/annbot").text
    chart = re.search(r'<svg id="history-chart-1".*?</svg>', page, re.S)
    assert chart, "no rating chart"
    ticks = re.findall(r'<text class="tick x"[^>]*>([^<]+)</text>', chart.group(0))
    # two days between the first tournament and the others: dates, not game counts
    assert ticks and all(re.fullmatch(r"[A-Z][a-z]{2} \d{2}", tick) for tick in ticks), ticks
    # annbot@2 won every pair so far: no finite estimate, no line
    assert "<title>annbot@1</title>" in chart.group(0)


def test_a_bots_head_to_head_covers_every_opponent_with_an_elo_interval(site: Site) -> None:
    rows = table_rows(site.get("/bots/annbot").text, "h2h-table")
    met = {(row[1], row[2]) for row in rows}
    assert met == {(v, o) for v in ("annbot@1", "annbot@2") for o in ("org1@1", "org2@1")}
    for row in rows:
        wins, draws, losses = map(int, row[4].split("–"))
        assert wins + draws + losses == int(row[3]) > 0
        assert re.fullmatch(r"[+-]\d+\.\d (\+/- \d+\.\d|\[.*\])|[<>] [+-]\d+\.\d \(.*\)",
                            row[6]), row[6]


def test_a_bots_games_are_listed_from_its_side(site: Site) -> None:
    rows = table_rows(site.get("/bots/annbot").text, "games-table")
    assert len(rows) == 16  # 8 games a version: two tables of 4
    for game_id, when, game, version, seat, score, place, result, opponents in rows:
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", when) and game == "five"
        assert version.startswith("annbot@") and "annbot" not in opponents
        stored = site.get(f"/api/games/{game_id}").json()
        assert stored["seats"][int(seat)] == version
        places = stored["places"]
        assert place == f"{places[int(seat)]} of 2"
        assert float(score) == stored["scores"][int(seat)]
        assert result == ("W" if places[int(seat)] == 1 and places.count(1) == 1 else
                          "D" if places[int(seat)] == 1 else "L")


def test_a_bots_faults_show_the_move_and_message_and_stderr_only_to_its_owner(
        site: Site) -> None:
    rows = table_rows(site.get("/bots/badbot").text, "faults-table")
    assert rows
    for game_id, version, kind, step, message in rows:
        assert version == "badbot@1" and kind == "illegal_action", kind
        assert step.isdigit() and int(step) >= 2, step  # its third request at the earliest
        assert message and game_id.isdigit()
    assert 'class="stderr"' not in site.get("/bots/badbot").text


# -- every page in Chromium ------------------------------------------------------------

#: Every page of the site, as anyone sees it and as ann (who owns annbot) does;
#: GAME: a game of annbot's (its replay; ann's view has her seat's stderr by move).
PUBLIC = ["/", "/?game=furious-five", "/games", "/games?game=five", "GAME", "/bots/annbot",
          "/bots/badbot", "/start", "/signin", "/signup", "PASSWORD", "/no/such/page"]
SIGNED_IN = ["/account", "/", "/?game=furious-five", "/games", "GAME", "/bots/annbot",
             "/bots/org1", "/bots/badbot", "/start", "/play", "/no/such/page"]


def fits_without_console_errors(browser: WebDriver, url: str, width: int) -> None:
    """Page ``url`` is no wider than the window and logged no error (a page that
    answers 404 only its own status)."""
    browser.get(url)
    inner = browser.execute_script("return window.innerWidth")
    assert abs(inner - width) < 40, (url, inner)
    wide = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 0, f"{url} is {wide} px wider than the window at {width} px"
    errors = [entry["message"] for entry in browser.get_log("browser")
              if entry["level"] == "SEVERE" and not (url.endswith("/no/such/page") and
                                                     entry["message"].startswith(url))]
    assert not errors, (url, errors)


@pytest.mark.parametrize("width", [1280, 390])
def test_each_page_fits_its_width_without_console_errors(site: Site, width: int) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    games = site.get("/api/games").json()["games"]
    game = next(g["id"] for g in games if any(s.startswith("annbot@") for s in g["seats"]))
    named = {"GAME": f"/games/{game}", "PASSWORD": site.bob_link}
    with chromium() as browser:
        browser.set_window_size(width, 900)
        for path in PUBLIC:
            fits_without_console_errors(browser, site.base + named.get(path, path), width)
        browser.get(f"{site.base}/signin")
        browser.find_element(By.ID, "signin-name").send_keys("ann")
        browser.find_element(By.ID, "signin-password").send_keys(PASSWORD)
        browser.find_element(By.CSS_SELECTOR, "#signin-form button[type='submit']").click()
        WebDriverWait(browser, 30, poll_frequency=0.3).until(
            lambda _: browser.current_url.endswith("/account"), "not signed in")
        for path in SIGNED_IN:
            fits_without_console_errors(browser, site.base + named.get(path, path), width)
        browser.get(site.base + named["GAME"])
        assert browser.find_elements(By.ID, "move-logs"), "ann's seat has no stderr by move"
        browser.get(site.base + "/")
        browser.find_element(By.ID, "board-filter").send_keys("ann")
        shown = [row.find_element(By.CSS_SELECTOR, "td.bot").text for row in
                 browser.find_elements(By.CSS_SELECTOR, ".board tbody tr")
                 if row.is_displayed()]
        assert sorted(shown) == ["annbot@1", "annbot@2"]
        assert browser.find_element(By.ID, "filter-count").text == "2 of 4"
