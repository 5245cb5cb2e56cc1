"""The server's response headers, asked of a real ``arena serve`` (issue 27):
every response of every route (pages, API, static files, errors, 304s,
redirects, the kept pages' fast path) carries the security headers; whatever
depends on a signed-in viewer or a token is ``Cache-Control: no-store``; a
seat's view is JSON for its owner (or an admin) only, never a script."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import requests

from arena.server import api, guide, pages
from arena.store.replays import unpack
from reports.templating import TEMPLATES as REPORT_TEMPLATES
from tests.replay_page import page_facts
from tests.server import (
    bot_archive,
    csrf_of,
    played_database,
    running_server,
    set_password,
    sign_in,
    user_add,
)

PASSWORD = "correct horse battery"

#: What every response carries (docs/server.md, "Headers").
SECURITY = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; object-src 'none'; base-uri 'none'; "
                               "form-action 'self'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
#: How a response may be kept: "shared" (the kept pages: no-cache, revalidated by
#: ETag), "private" (no-store), "any" (only the security headers asked for).
SHARED, PRIVATE, ANY = "shared", "private", "any"


@dataclass
class Site:
    base: str
    tokens: dict[str, str]
    links: dict[str, str]
    game: int
    ann: requests.Session
    root: requests.Session


@dataclass
class Case:
    """One request of a route (``method``, the route's path pattern), its reply
    and how the reply may be kept."""
    route: tuple[str, str]
    reply: requests.Response
    keep: str = ANY


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("headers")
    db = played_database(folder)
    tokens, links = {}, {}
    for name, flags in (("ann", ()), ("root", ("--admin",)), ("eve", ())):
        tokens[name], links[name] = user_add(db, name, *flags)
    with running_server(db, "--open-signup", "--check-games", "1") as base:
        games = requests.get(f"{base}/api/games", timeout=60).json()["games"]
        yield Site(base, tokens, links, games[0]["id"], set_password(base, links["ann"], PASSWORD),
                   set_password(base, links["root"], PASSWORD))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def kept_page(url: str) -> tuple[requests.Response, requests.Response, requests.Response]:
    """A page everyone sees, asked three times (the last ones answered from the
    kept pages, before any routing), then again with its ETag (a 304)."""
    replies = [requests.get(url, timeout=60) for _ in range(3)]
    again = requests.get(url, timeout=60, headers={"If-None-Match": replies[-1].headers["ETag"]})
    return replies[1], replies[2], again


def every_route(site: Site) -> list[Case]:
    """A request of every route, as the site's visitors, users and scripts make them."""
    base, ann, root, token, game = site.base, site.ann, site.root, site.tokens["ann"], site.game
    cases: list[Case] = []

    def shared_and_private(route: str, path: str) -> None:
        for reply in kept_page(base + path):
            cases.append(Case(("GET", route), reply, SHARED))
        cases.append(Case(("GET", route), ann.get(base + path, timeout=60), PRIVATE))
        cases.append(Case(("GET", route), requests.get(base + path, timeout=60,
                                                       headers=bearer(token)), PRIVATE))

    shared_and_private("/", "/")
    shared_and_private("/bots/{base}", "/bots/org1")
    shared_and_private("/games", "/games?game=five")
    shared_and_private("/games/{game_id:int}", f"/games/{game}")
    shared_and_private("/api/live", "/api/live")
    shared_and_private("/api/leaderboard", "/api/leaderboard")
    shared_and_private("/api/games", "/api/games")
    shared_and_private("/api/games/{game_id:int}", f"/api/games/{game}")
    for name in ("style.css", "replay.js", "live.js", "play.js", "board.js", "replay.css",
                 "nothing.js"):
        cases.append(Case(("GET", "/static/{name}"), requests.get(f"{base}/static/{name}",
                                                                 timeout=60)))
    cases += [Case(("GET", "/start"), ann.get(f"{base}/start", timeout=60), PRIVATE),
              Case(("GET", "/start"), requests.get(f"{base}/start", timeout=60), PRIVATE),
              Case(("GET", "/start/kits/{language}.tar.gz"),
                   requests.get(f"{base}/start/kits/c.tar.gz", timeout=60)),
              Case(("GET", "/rules/{game}.md"), requests.get(f"{base}/rules/five.md", timeout=60))]
    seat = "/games/{game_id:int}/seat/{seat:int}.json"
    cases += [Case(("GET", seat), root.get(f"{base}/games/{game}/seat/1.json", timeout=60),
                   PRIVATE),
              Case(("GET", seat), ann.get(f"{base}/games/{game}/seat/1.json", timeout=60),
                   PRIVATE)]
    cases.append(Case(("POST", "/bots/{base}/retire"), ann.post(
        f"{base}/bots/org1/retire", data={"version": "1"}, timeout=60), PRIVATE))

    anonymous = requests.Session()
    signin = anonymous.get(f"{base}/signin", timeout=60)
    cases.append(Case(("GET", "/signin"), signin, PRIVATE))
    cases.append(Case(("POST", "/signin"), anonymous.post(f"{base}/signin", timeout=60, data={
        "csrf": csrf_of(signin.text), "name": "ann", "password": "wrong"}), PRIVATE))
    signup = anonymous.get(f"{base}/signup", timeout=60)
    cases.append(Case(("GET", "/signup"), signup, PRIVATE))
    cases.append(Case(("POST", "/signup"), anonymous.post(
        f"{base}/signup", timeout=60, allow_redirects=False,
        data={"csrf": csrf_of(signup.text), "name": "zed", "password": PASSWORD}), PRIVATE))
    link = site.links["eve"].replace("http://127.0.0.1:8000", base)
    cases.append(Case(("GET", "/password/{token}"), anonymous.get(link, timeout=60), PRIVATE))
    cases.append(Case(("POST", "/password/{token}"), requests.post(
        link, data={"password": "x" * 20}, timeout=60), PRIVATE))
    leaving = sign_in(base, "ann", PASSWORD)
    cases.append(Case(("POST", "/signout"), leaving.post(
        f"{base}/signout", timeout=60, allow_redirects=False,
        data={"csrf": csrf_of(leaving.get(f"{base}/account", timeout=60).text)}), PRIVATE))
    other = sign_in(base, "root", PASSWORD)  # refused, both: the site's sessions stay
    form = csrf_of(other.get(f"{base}/account", timeout=60).text)
    cases.append(Case(("POST", "/account/password"), other.post(
        f"{base}/account/password", timeout=60, allow_redirects=False,
        data={"csrf": form, "old": "wrong", "new": "y" * 20}), PRIVATE))
    cases.append(Case(("POST", "/account/signout-everywhere"), other.post(
        f"{base}/account/signout-everywhere", timeout=60, allow_redirects=False,
        data={"csrf": "wrong"}), PRIVATE))

    account = ann.get(f"{base}/account", timeout=60)
    cases.append(Case(("GET", "/account"), account, PRIVATE))
    cases.append(Case(("GET", "/account"), requests.get(f"{base}/account", timeout=60,
                                                        allow_redirects=False)))
    made = [ann.post(f"{base}/account/tokens", timeout=60,
                     data={"csrf": csrf_of(account.text), "label": f"t{i}"}) for i in range(2)]
    cases += [Case(("POST", "/account/tokens"), reply, PRIVATE) for reply in made]
    listed = requests.get(f"{base}/api/tokens", headers=bearer(token), timeout=60)
    cases.append(Case(("GET", "/api/tokens"), listed, PRIVATE))
    ids = [t["id"] for t in listed.json()["tokens"] if t["label"] in ("t0", "t1")]
    cases.append(Case(("POST", "/account/tokens/{token_id:int}/revoke"), ann.post(
        f"{base}/account/tokens/{ids[0]}/revoke", data={"csrf": csrf_of(account.text)},
        timeout=60, allow_redirects=False), PRIVATE))
    cases.append(Case(("DELETE", "/api/tokens/{token_id:int}"), requests.delete(
        f"{base}/api/tokens/{ids[1]}", headers=bearer(token), timeout=60), PRIVATE))

    archive = {"archive": ("b.tar.gz", bot_archive("annbot"))}
    cases.append(Case(("POST", "/upload"), ann.post(f"{base}/upload", files=archive,
                                                    timeout=60), PRIVATE))
    submitted = requests.post(f"{base}/api/submissions", headers=bearer(token), files=archive,
                              timeout=60)
    cases.append(Case(("POST", "/api/submissions"), submitted, PRIVATE))
    number = submitted.json()["id"]
    cases.append(Case(("GET", "/submissions/{submission_id:int}"), ann.get(
        f"{base}/submissions/{number}", timeout=60), PRIVATE))
    cases.append(Case(("GET", "/api/submissions/{submission_id:int}"), requests.get(
        f"{base}/api/submissions/{number}", headers=bearer(token), timeout=60), PRIVATE))
    cases.append(Case(("GET", "/api/bots/{base}"), requests.get(f"{base}/api/bots/annbot",
                                                                timeout=60)))
    cases.append(Case(("GET", "/api/bots/{base}"), requests.get(
        f"{base}/api/bots/annbot", headers=bearer(token), timeout=60), PRIVATE))
    cases.append(Case(("POST", "/api/bots/{base}/retire"), requests.post(
        f"{base}/api/bots/org1/retire", headers=bearer(token), json={}, timeout=60), PRIVATE))
    for method in ("GET", "POST", "PUT", "DELETE"):
        cases.append(Case((method, "/api/{rest:path}"), requests.request(
            method, f"{base}/api/nothing", timeout=60)))
    return cases


def route_set() -> set[tuple[str, str]]:
    """Every (method, path pattern) the application routes."""
    found = set()
    for route in [*pages.routes(), *api.routes(), *guide.routes()]:
        for method in route.methods or ():
            if method != "HEAD":
                found.add((method, route.path))
    return found


def assert_guarded(case: Case) -> None:
    """The security headers, and the caching ``case.keep`` asks for."""
    headers, what = case.reply.headers, (case.route, case.reply.url, case.reply.status_code)
    for name, value in SECURITY.items():
        assert headers.get(name) == value, (name, headers.get(name), what)
    cache = headers.get("Cache-Control", "")
    if case.keep == PRIVATE:
        assert "no-store" in cache and "ETag" not in headers, (cache, what)
    elif case.keep == SHARED:
        assert cache == "no-cache" and "ETag" in headers, (cache, what)


def assert_no_inline_script(case: Case) -> None:
    """An HTML page runs only the site's script files: no inline script, no
    ``on...=`` handler, no ``style=`` (the policy would block them)."""
    if not case.reply.headers.get("Content-Type", "").startswith("text/html"):
        return
    html = case.reply.text
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in tag or re.search(r'type="application/(json|x-five-replay)"', tag), \
            (tag, case.route)
    assert not re.search(r"<[^>]+\son[a-z]+\s*=", html), case.route
    assert not re.search(r"<[^>]+\sstyle\s*=", html), case.route


def test_every_response_of_every_route_carries_the_security_headers(site: Site) -> None:
    cases = every_route(site)
    missing = route_set() - {case.route for case in cases}
    assert not missing, f"routes this test does not ask: {sorted(missing)}"
    for case in cases:
        assert_guarded(case)
        assert_no_inline_script(case)
    statuses = {case.reply.status_code for case in cases}
    assert {200, 202, 303, 304, 400, 403, 404} <= statuses, statuses


def test_static_files_say_what_they_are(site: Site) -> None:
    """``nosniff``: a browser takes a file only for what its Content-Type says."""
    for name, kind in (("style.css", "text/css"), ("replay.js", "javascript"),
                       ("live.js", "javascript"), ("play.js", "javascript")):
        reply = requests.get(f"{site.base}/static/{name}", timeout=60)
        assert reply.status_code == 200 and kind in reply.headers["Content-Type"], name


def test_every_page_has_the_one_stylesheet_the_report_writes(site: Site) -> None:
    """One layout, one stylesheet: the report's style.css, as the report writes it;
    every file a page names under /static/ is there."""
    sheet = requests.get(f"{site.base}/static/style.css", timeout=60)
    assert sheet.content == (REPORT_TEMPLATES / "style.css").read_bytes()
    assert ".form-card" in sheet.text and ".viewer .board" in sheet.text
    for name in ("replay.css", "site.css", "play.css"):
        assert requests.get(f"{site.base}/static/{name}", timeout=60).status_code == 404
    for path in ("/", "/games", f"/games/{site.game}", "/start", "/signin", "/play",
                 "/account", "/no/such/page"):
        html = site.ann.get(site.base + path, timeout=60).text
        assert re.findall(r'<link rel="stylesheet"[^>]*>', html) == [
            '<link rel="stylesheet" href="/static/style.css">'], path
        for name in re.findall(r'(?:src|href)="/static/([^"]+)"', html):
            reply = requests.get(f"{site.base}/static/{name}", timeout=60)
            assert reply.status_code == 200, (path, name)


def test_error_pages_and_unrouted_methods_carry_the_headers(site: Site) -> None:
    for method, path in (("GET", "/no/such/page"), ("DELETE", "/games"), ("GET", "/games/x"),
                         ("GET", "/games?page=x"), ("POST", "/")):
        reply = requests.request(method, site.base + path, timeout=60)
        assert reply.status_code in (400, 404, 405), (method, path, reply.status_code)
        assert_guarded(Case((method, path), reply, PRIVATE))


def test_a_seat_view_is_json_for_its_owner_only_and_never_a_script(site: Site) -> None:
    base, game = site.base, site.game
    for who in (site.root, site.ann, requests.Session()):
        for seat in (0, 1):
            assert who.get(f"{base}/games/{game}/seat/{seat}.js", timeout=60).status_code == 404
    for seat in (0, 1):  # the admin manages every bot
        reply = site.root.get(f"{base}/games/{game}/seat/{seat}.json", timeout=60)
        assert reply.status_code == 200, reply.text
        assert reply.headers["Content-Type"] == "application/json"
        assert "no-store" in reply.headers["Cache-Control"]
        body = reply.json()
        assert body["seat"] == seat and unpack(body["view"])["seat"] == seat
    # ann owns neither bot: no seat view by her session, her token, or no one's
    url = f"{base}/games/{game}/seat/0.json"
    assert site.ann.get(url, timeout=60).status_code == 404
    assert requests.get(url, headers=bearer(site.tokens["ann"]), timeout=60).status_code == 404
    assert requests.get(url, timeout=60).status_code == 404
    assert site.root.get(f"{base}/games/{game}/seat/7.json", timeout=60).status_code == 404
    # the page lists the seat views its viewer may fetch, and no script to load
    mine = page_facts(site.root.get(f"{base}/games/{game}", timeout=60).text)
    assert mine["seat_urls"] == [f"/games/{game}/seat/0.json", f"/games/{game}/seat/1.json"]
    assert "seat_files" not in mine
    assert page_facts(requests.get(f"{base}/games/{game}", timeout=60).text)["seat_urls"] == []
    assert page_facts(site.ann.get(f"{base}/games/{game}", timeout=60).text)["seat_urls"] == []


def test_the_account_page_with_a_new_token_is_never_stored(site: Site) -> None:
    account = site.ann.get(f"{site.base}/account", timeout=60)
    made = site.ann.post(f"{site.base}/account/tokens", timeout=60,
                         data={"csrf": csrf_of(account.text), "label": "once"})
    assert made.ok and 'id="new-token"' in made.text
    assert made.headers["Cache-Control"] == "no-store"
    assert made.headers["X-Frame-Options"] == "DENY"

