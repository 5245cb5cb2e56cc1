"""``arena serve`` as its users reach it: a real server process on a free port of
127.0.0.1 over a real SQLite database, real accounts, real uploads built and
checked by the bots layer, real HTTP (requests)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import requests

from reports.replay import unpack
from tests.server import (
    arena,
    bot_archive,
    csrf_of,
    running_server,
    set_password,
    sign_in,
    user_add,
)

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
PASSWORD = "correct horse battery"


@dataclass
class Site:
    base: str
    db: str
    tokens: dict[str, str]
    links: dict[str, str]

    def get(self, path: str, token: str | None = None, **kw: object) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.get(self.base + path, headers=headers, timeout=60, **kw)  # type: ignore[arg-type]

    def post(self, path: str, token: str | None = None, **kw: object) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.post(self.base + path, headers=headers, timeout=60, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("server")
    db = f"sqlite:///{folder / 'arena.db'}"
    played = arena("tournament", "-g", "five", "-k", "2", "-n", "4", "--sandbox", "none",
                   "-j", "1", "-b", f"org1={RANDOM}", "-b", f"org2={RANDOM}", "--db", db)
    assert played.returncode == 0, played.stderr
    tokens, links = {}, {}
    for name, flags in (("ann", ()), ("bob", ()), ("root", ("--admin",))):
        tokens[name], links[name] = user_add(db, name, *flags)
    with running_server(db, "--check-games", "2") as base:
        yield Site(base, db, tokens, links)


def test_user_add_prints_a_token_and_a_link_and_refuses_a_name_twice(site: Site) -> None:
    again = arena("user", "add", "ann", "--db", site.db)
    assert again.returncode == 2 and again.stderr.strip() == \
        "arena: error: user 'ann' exists already"
    bad = arena("user", "add", "no spaces", "--db", site.db)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "Traceback" not in bad.stderr + again.stderr


def test_leaderboards_and_games_for_everyone(site: Site) -> None:
    page = site.get("/")
    assert page.status_code == 200 and "org1@1" in page.text and "org2@1" in page.text
    board = site.get("/api/leaderboard").json()
    assert [row["bot"] for row in board["pools"][0]["rows"]] != []
    assert {row["base"] for row in board["pools"][0]["rows"]} == {"org1", "org2"}
    games = site.get("/api/games", params={"bot": "org1"}).json()
    assert games["total"] == 4 and all("org1@1" in g["seats"] for g in games["games"])
    assert site.get("/games", params={"game": "five", "bot": "org2"}).status_code == 200
    assert site.get("/games", params={"game": "nope"}).status_code == 400
    assert site.get("/api/games", params={"page": "x"}).json()["status"] == 400
    assert "org1@1" in site.get("/bots/org1").text


def test_unknown_ids_are_404_as_html_or_json(site: Site) -> None:
    for path in ("/games/999999", "/bots/nobody", "/submissions/999999", "/no/such/page",
                 "/games/1/seat/7.js", "/password/not-a-link", "/static/../arena.db"):
        reply = site.get(path)
        assert reply.status_code == 404, path
        assert "Traceback" not in reply.text and "<h1>Error 404</h1>" in reply.text, path
    for path in ("/api/games/999999", "/api/bots/nobody", "/api/submissions/999999",
                 "/api/nothing"):
        reply = site.get(path, site.tokens["ann"])
        assert reply.status_code == 404 and reply.json()["status"] == 404, path


def test_a_spectator_replay_holds_no_seat_view_and_no_seed_of_an_unfinished_one(
        site: Site) -> None:
    game = site.get("/api/games").json()["games"][0]
    page = site.get(f"/games/{game['id']}").text
    data = unpack(re.search(r'id="replay-data">([^<]+)<', page).group(1))  # type: ignore[union-attr]
    assert data["seat_files"] == [] and data["bots"] == game["seats"]
    assert all(site.get(f"/games/{game['id']}/seat/{seat}.js").status_code == 404
               for seat in range(2))
    # the tournament is finished: its seed may show
    assert game["seed"] is not None and str(game["seed"]) in page


def test_the_admin_sees_every_seat_view(site: Site) -> None:
    game = site.get("/api/games").json()["games"][0]
    root = set_password(site.base, site.links["root"], PASSWORD)
    page = root.get(f"{site.base}/games/{game['id']}", timeout=60).text
    data = unpack(re.search(r'id="replay-data">([^<]+)<', page).group(1))  # type: ignore[union-attr]
    assert len(data["seat_files"]) == 2
    seat = root.get(site.base + data["seat_files"][1], timeout=60)
    assert seat.status_code == 200 and seat.text.startswith('replaySeat("')
    assert unpack(seat.text.split('"')[1])["seat"] == 1


def test_a_password_link_works_once_and_signing_in_makes_a_new_session(site: Site) -> None:
    ann = set_password(site.base, site.links["ann"], PASSWORD)
    assert site.get(site.links["ann"].replace("http://127.0.0.1:8000", "")).status_code == 404
    assert "ann" in ann.get(f"{site.base}/account", timeout=60).text
    # session fixation: a cookie planted before sign-in is not signed in after it
    browser = requests.Session()
    planted = browser.get(f"{site.base}/signin", timeout=60)
    before = browser.cookies["arena_session"]
    signed = browser.post(f"{site.base}/signin", timeout=60, data={
        "csrf": csrf_of(planted.text), "name": "ann", "password": PASSWORD})
    assert signed.url.endswith("/account")
    after = browser.cookies["arena_session"]
    assert after != before
    victim = requests.get(f"{site.base}/account", cookies={"arena_session": before},
                          timeout=60, allow_redirects=False)
    assert victim.status_code == 303 and victim.headers["location"] == "/signin"
    header = signed.history[0].headers["set-cookie"].lower()
    assert "httponly" in header and "samesite=lax" in header


def test_every_form_needs_its_sessions_csrf_token(site: Site) -> None:
    ann = sign_in(site.base, "ann", PASSWORD)
    other = requests.Session()
    foreign = csrf_of(other.get(f"{site.base}/signin", timeout=60).text)
    forms = [("/signin", {"name": "ann", "password": PASSWORD}), ("/signout", {}),
             ("/account/tokens", {"label": "x"}), ("/account/tokens/1/revoke", {}),
             ("/bots/org1/retire", {"version": "1"}), ("/password/x", {"password": "x" * 9}),
             ("/upload", {})]
    for path, fields in forms:
        for csrf in (None, foreign):
            data = dict(fields, **({"csrf": csrf} if csrf else {}))
            reply = ann.post(site.base + path, data=data, timeout=60, allow_redirects=False)
            assert reply.status_code == 403, (path, csrf, reply.status_code)
            assert "CSRF" in reply.text


def test_a_sign_in_flood_is_rate_limited(site: Site) -> None:
    browser = requests.Session()
    csrf = csrf_of(browser.get(f"{site.base}/signin", timeout=60).text)
    codes = [browser.post(f"{site.base}/signin", timeout=60, data={
        "csrf": csrf, "name": "bob", "password": f"wrong {i}"}).status_code for i in range(8)]
    assert codes[:5] == [400] * 5 and codes[5:] == [429] * 3
    # bob's right password waits too: the account is locked for the minute
    late = browser.post(f"{site.base}/signin", timeout=60, data={
        "csrf": csrf, "name": "bob", "password": PASSWORD})
    assert late.status_code == 429 and "Retry-After" in late.headers


def test_the_api_refuses_writes_without_a_token(site: Site) -> None:
    archive = bot_archive("nobody-bot")
    reply = site.post("/api/submissions", files={"archive": ("b.tar.gz", archive)})
    assert reply.status_code == 401 and reply.json()["status"] == 401
    wrong = site.post("/api/submissions", "not-a-token", files={"archive": ("b.tar.gz", archive)})
    assert wrong.status_code == 401
    ann = sign_in(site.base, "ann", PASSWORD)  # a browser's cookie is not enough for the API
    assert ann.post(f"{site.base}/api/submissions", timeout=60,
                    files={"archive": ("b.tar.gz", archive)}).status_code == 401
    assert site.get("/api/bots/nobody-bot").status_code == 404
