"""``arena serve`` as its users reach it: a real server process on a free port of
127.0.0.1 over a real SQLite database, real accounts, real uploads built and
checked by the bots layer, real HTTP (requests)."""

from __future__ import annotations

import http.client
import io
import json
import os
import re
import stat
import tarfile
import time
import urllib.parse
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from arena.cli.serve import CHECK_NICE
from arena.store.accounts import Accounts
from arena.store.database import Store
from arena.store.replays import unpack
from tests.replay_page import page_facts, seat_urls
from tests.server import (
    BOT_PY,
    MANIFEST,
    arena,
    bot_archive,
    csrf_of,
    eventually,
    fresh_window,
    log_of,
    make_bot,
    played_database,
    running_server,
    set_password,
    sign_in,
    start_arena,
    stop,
    tar_gz,
    user_add,
    wait_status,
)

PASSWORD = "correct horse battery"


@dataclass
class Site:
    base: str
    db: str
    tokens: dict[str, str]
    links: dict[str, str]
    signed: set[str] = field(default_factory=set)

    def get(self, path: str, token: str | None = None, **kw: object) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.get(self.base + path, headers=headers, timeout=60, **kw)  # type: ignore[arg-type]

    def post(self, path: str, token: str | None = None, **kw: object) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.post(self.base + path, headers=headers, timeout=60, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("server")
    db = played_database(folder, 4)
    tokens, links = {}, {}
    for name, flags in (("ann", ()), ("bob", ()), ("root", ("--admin",)), ("eve", ())):
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


def test_api_tokens_and_password_links_never_look_like_an_option(site: Site) -> None:
    """``arena submit --token T``: a token starting with ``-`` would be taken for an
    option (it happened: a random token failed ``arena submit`` one time in 64)."""
    store = Store(site.db)
    try:
        accounts = Accounts(store)
        user = accounts.user_named("ann")
        assert user is not None
        issued = [accounts.issue_token(user.id) for _ in range(50)]
    finally:
        store.close()
    issued += [site.tokens[name] for name in site.tokens]
    assert all(re.fullmatch(r"[0-9a-f]{64}", token) for token in issued), issued


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
    bot_page = site.get("/bots/org1").text
    assert "org1@1" in bot_page and "Rating over time" in bot_page
    elo = {row["bot"]: row["elo"] for row in board["pools"][0]["rows"]}["org1@1"]
    history = re.search(r'id="history".*?<tbody>(.*?)</tbody>', bot_page, re.S)
    assert history is not None
    rows = re.findall(r'<tr><td class="nowrap">([^<]+)</td><td class="num">([^<]*)</td>',
                      history.group(1))
    assert rows and [when for when, _ in rows] == sorted(when for when, _ in rows)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", when) for when, _ in rows)
    assert all(re.fullmatch(r"[+-]\d+", cell) for _, cell in rows)
    assert elo is not None and rows[-1][1] == f"{elo:+.0f}"


def test_pages_for_everyone_are_kept_and_revalidated_by_their_etag(site: Site) -> None:
    for path in ("/", "/games", "/games/1", "/api/leaderboard", "/api/live"):
        for _ in range(5):  # something stored meanwhile (a check) draws the page anew
            first = requests.get(site.base + path, timeout=60)
            assert first.status_code == 200 and first.headers["Cache-Control"] == "no-cache"
            again = requests.get(site.base + path, timeout=60,
                                 headers={"If-None-Match": first.headers["ETag"]})
            if again.status_code == 304:
                break
        assert again.status_code == 304 and again.content == b"", path
        signed = requests.get(site.base + path, timeout=60, headers={
            "If-None-Match": first.headers["ETag"],
            "Authorization": f"Bearer {site.tokens['ann']}"})
        assert signed.status_code == 200 and "ETag" not in signed.headers, path


def test_unknown_ids_are_404_as_html_or_json(site: Site) -> None:
    for path in ("/games/999999", "/bots/nobody", "/submissions/999999", "/no/such/page",
                 "/games/1/seat/7.json", "/games/1/seat/0.js", "/password/not-a-link",
                 "/static/../arena.db"):
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
    assert seat_urls(page) == [] and page_facts(page)["bots"] == game["seats"]
    assert all(site.get(f"/games/{game['id']}/seat/{seat}.json").status_code == 404
               for seat in range(2))
    # the tournament is finished: its seed may show
    assert game["seed"] is not None and str(game["seed"]) in page


def test_the_admin_sees_every_seat_view(site: Site) -> None:
    game = site.get("/api/games").json()["games"][0]
    root = sign_in_with_password(site, "root")
    page = root.get(f"{site.base}/games/{game['id']}", timeout=60).text
    urls = seat_urls(page)
    assert len(urls) == 2 and all(urls)
    seat = root.get(site.base + str(urls[1]), timeout=60)
    assert seat.status_code == 200 and seat.headers["Content-Type"] == "application/json"
    assert unpack(seat.json()["view"])["seat"] == 1


def test_a_password_link_works_once_and_signing_in_makes_a_new_session(site: Site) -> None:
    if "ann" in site.signed:
        pytest.skip("ann's link was used by an earlier test (run the module in order)")
    ann = sign_in_with_password(site, "ann")
    assert site.get(site.links["ann"].replace("http://127.0.0.1:8000", "")).status_code == 404
    assert "ann" in ann.get(f"{site.base}/account", timeout=60).text
    # session fixation: a cookie planted before sign-in is not signed in after it
    browser = requests.Session()
    planted = browser.get(f"{site.base}/signin", timeout=60)
    assert "arena_session" not in browser.cookies  # a form token only: no session yet
    before = "planted-by-an-attacker"
    browser.cookies.set("arena_session", before, domain="127.0.0.1", path="/")
    signed = browser.post(f"{site.base}/signin", timeout=60, data={
        "csrf": csrf_of(planted.text), "name": "ann", "password": PASSWORD})
    assert signed.url.endswith("/account"), signed.text
    after = browser.cookies["arena_session"]
    assert after != before
    victim = requests.get(f"{site.base}/account", cookies={"arena_session": before},
                          timeout=60, allow_redirects=False)
    assert victim.status_code == 303 and victim.headers["location"] == "/signin"
    header = signed.history[0].headers["set-cookie"].lower()
    assert "httponly" in header and "samesite=lax" in header


def test_every_form_needs_its_sessions_csrf_token(site: Site) -> None:
    ann = sign_in_with_password(site, "ann")
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
    fresh_window(60.0, 40.0)
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
    anonymous = site.post("/upload", files={"archive": ("b.tar.gz", archive)},
                          allow_redirects=False)
    assert anonymous.status_code == 401 and "sign in" in anonymous.text
    ann = sign_in_with_password(site, "ann")  # a browser's cookie is not enough for the API
    assert ann.post(f"{site.base}/api/submissions", timeout=60,
                    files={"archive": ("b.tar.gz", archive)}).status_code == 401
    assert site.get("/api/bots/nobody-bot").status_code == 404


# -- uploads ---------------------------------------------------------------------------

def zip_of(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, data in entries:
            archive.writestr(info, data)
    return buffer.getvalue()


def zip_link(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def tar_with(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.addfile(_file("bot.toml", MANIFEST.format(name="evil", author="x").encode()),
                    io.BytesIO(MANIFEST.format(name="evil", author="x").encode()))
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data else None)
    return buffer.getvalue()


def _file(name: str, data: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info


def _special(name: str, kind: bytes, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def _bomb() -> bytes:
    """60 MiB of zeros in one file: a few tens of KiB packed."""
    data = bytes(60 * 2**20)
    return tar_with((_file("zeros.bin", data), data))


GOOD_TOML = MANIFEST.format(name="evil", author="x")
BAD_ARCHIVES = {
    "absolute path": (tar_with((_file("/etc/evil", b"x"), b"x")), "absolute path"),
    "escaping path": (tar_with((_file("../evil", b"x"), b"x")), "points out of"),
    "link out": (tar_with((_special("out", tarfile.SYMTYPE, "../../etc/passwd"), b"")),
                 "points out of"),
    "absolute link": (tar_with((_special("abs", tarfile.SYMTYPE, "/etc/passwd"), b"")),
                      "absolute"),
    "hard link out": (tar_with((_special("hard", tarfile.LNKTYPE, "/etc/passwd"), b"")),
                      "absolute path"),
    "device file": (tar_with((_special("dev", tarfile.CHRTYPE), b"")), "device file"),
    "fifo": (tar_with((_special("fifo", tarfile.FIFOTYPE), b"")), "device file or FIFO"),
    "decompression bomb": (_bomb(), "decompression bomb"),
    "too many files": (tar_with(*((_file(f"f{i}", b""), b"") for i in range(2001))),
                       "more than 2000 entries"),
    "too deep": (tar_with((_file("/".join("d" * 17) + "/f", b"x"), b"x")), "deeper than"),
    "zip escaping path": (zip_of([("bot.toml", GOOD_TOML.encode()), ("../evil", b"x")]),
                          "points out of"),
    "zip absolute path": (zip_of([("bot.toml", GOOD_TOML.encode()), ("/evil", b"x")]),
                          "absolute path"),
    "zip link out": (zip_of([("bot.toml", GOOD_TOML.encode()), zip_link("l", "../../x")]),
                     "points out of"),
    "zip bomb": (zip_of([("bot.toml", GOOD_TOML.encode()), ("z", bytes(60 * 2**20))]),
                 "decompression bomb"),
    "no bot.toml": (zip_of([("bot.py", b"print()")]), "no bot.toml"),
    "bad bot.toml": (zip_of([("bot.toml", b'name = "x"\n')]), "'command' is required"),
    "not an archive": (b"just some bytes", "not a readable"),
}


@pytest.mark.parametrize("case", sorted(BAD_ARCHIVES))
def test_each_bad_archive_is_refused_with_its_reason(site: Site, case: str) -> None:
    data, reason = BAD_ARCHIVES[case]
    name = "bot.zip" if case.startswith(("zip", "no ", "bad ", "not ")) else "bot.tar.gz"
    reply = site.post("/api/submissions", site.tokens["bob"],
                      files={"archive": (name, data)})
    assert reply.status_code == 400, (case, reply.text)
    assert reason in reply.json()["error"], (case, reply.json())
    assert site.get("/api/bots/evil").status_code == 404  # nothing kept, no name claimed


def test_an_oversized_archive_is_413(site: Site) -> None:
    reply = site.post("/api/submissions", site.tokens["bob"],
                      files={"archive": ("big.tar.gz", os.urandom(10 * 2**20 + 10))})
    assert reply.status_code == 413 and reply.json()["status"] == 413
    # declared too large: refused before the body is read
    address = urllib.parse.urlsplit(site.base)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=60)
    connection.putrequest("POST", "/api/submissions")
    for header, value in (("Authorization", f"Bearer {site.tokens['bob']}"),
                          ("Content-Type", "multipart/form-data; boundary=x"),
                          ("Content-Length", str(2**40))):
        connection.putheader(header, value)
    connection.endheaders(b"x" * 100)
    assert connection.getresponse().status == 413
    connection.close()


@pytest.fixture(scope="module")
def ann_bot(site: Site, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """ann's bot ``annbot``, submitted with ``arena submit`` and checked."""
    folder = make_bot(tmp_path_factory.mktemp("annbot") / "annbot", "annbot",
                      author="<script>alert('author')</script>")
    proc = arena("submit", str(folder), "--server", site.base, "--token", site.tokens["ann"])
    assert proc.returncode == 0, proc.stderr
    found = re.fullmatch(r"submission (\d+): annbot: queued\n", proc.stdout)
    assert found, proc.stdout
    return wait_status(site.base, site.tokens["ann"], int(found.group(1)))


def test_a_submission_is_built_checked_and_passes(site: Site, ann_bot: dict[str, object]
                                                  ) -> None:
    assert ann_bot["status"] == "passed" and ann_bot["label"] == "annbot@1", ann_bot
    report = ann_bot["report"]
    assert isinstance(report, dict) and report["passed"] and report["checks"][0]["game"] == "five"
    page = eventually(lambda: site.get("/bots/annbot").text, lambda text: "passed check" in text)
    assert "by ann" in page and "passed check" in page
    # XSS through the author field: escaped
    assert "<script>alert('author')" not in page and "&lt;script&gt;" in page


def test_another_user_cannot_touch_anns_bot(site: Site, ann_bot: dict[str, object]) -> None:
    bob = site.tokens["bob"]
    submission = ann_bot["id"]
    assert site.get(f"/api/submissions/{submission}", bob).status_code == 404
    bob_browser = sign_in_with_password(site, "bob")
    assert bob_browser.get(f"{site.base}/submissions/{submission}",
                           timeout=60).status_code == 404
    assert "submissions" not in site.get("/api/bots/annbot", bob).json()
    upload = site.post("/api/submissions", bob, files={"archive": (
        "a.tar.gz", bot_archive("annbot"))})
    assert upload.status_code == 403 and "belongs to another user" in upload.json()["error"]
    retire = site.post("/api/bots/annbot/retire", bob, json={"version": "1"})
    assert retire.status_code == 404
    page = bob_browser.get(f"{site.base}/bots/annbot", timeout=60).text
    assert "Retire" not in page and "only you see the stderr" not in page
    # the check's games: ann's seat views are hers alone
    check = eventually(lambda: site.get("/api/games", params={"bot": "annbot"}).json()["games"],
                       bool)
    assert check, "the check's games are listed"
    game = check[0]
    seat = game["seats"].index("annbot@1")
    assert bob_browser.get(f"{site.base}/games/{game['id']}/seat/{seat}.json",
                           timeout=60).status_code == 404
    assert site.get(f"/games/{game['id']}/seat/{seat}.json").status_code == 404
    ann = sign_in_with_password(site, "ann")
    mine = ann.get(f"{site.base}/games/{game['id']}/seat/{seat}.json", timeout=60)
    assert mine.status_code == 200 and unpack(mine.json()["view"])["seat"] == seat
    # her page offers her seat's view alone
    own = ann.get(f"{site.base}/games/{game['id']}", timeout=60).text
    assert seat_urls(own) == [f"/games/{game['id']}/seat/{s}.json" if label == "annbot@1"
                              else None for s, label in enumerate(game["seats"])]
    # her stderr: shown to her, escaped; never to bob or a spectator
    assert "&lt;script&gt;alert(&#39;stderr&#39;)" in own and "<script>alert('stderr')" not in own
    assert "only the owner sees this" not in bob_browser.get(
        f"{site.base}/games/{game['id']}", timeout=60).text
    assert "only the owner sees this" not in site.get(f"/games/{game['id']}").text
    assert "stderr_tail" not in str(site.get(f"/api/games/{game['id']}").json())


def sign_in_with_password(site: Site, name: str) -> requests.Session:
    """Sign ``name`` in, setting the password with their link the first time."""
    if name not in site.signed:
        site.signed.add(name)
        return set_password(site.base, site.links[name], PASSWORD)
    return sign_in(site.base, name, PASSWORD)


def test_an_uploaded_file_name_is_escaped(site: Site) -> None:
    ann = sign_in_with_password(site, "ann")
    page = ann.get(f"{site.base}/account", timeout=60)
    reply = ann.post(f"{site.base}/upload", timeout=60, data={"csrf": csrf_of(page.text)},
                     files={"archive": ("<b>x</b>.tar.gz", bot_archive("annbot2"))})
    assert reply.ok and "/submissions/" in reply.url
    account = ann.get(f"{site.base}/account", timeout=60).text
    assert "&lt;b&gt;x&lt;/b&gt;.tar.gz" in account and "<b>x</b>" not in account


def test_the_owner_retires_a_version(site: Site, ann_bot: dict[str, object]) -> None:
    reply = site.post("/api/bots/annbot/retire", site.tokens["ann"], json={"version": "1"})
    assert reply.status_code == 200 and reply.json() == {"retired": ["annbot@1"]}
    assert site.get("/api/bots/annbot").json()["versions"][0]["retired"] is True


def ladder_rows(site: Site) -> dict[str, int]:
    """Games per version on the server's leaderboards."""
    pools = site.get("/api/leaderboard").json()["pools"]
    return {row["bot"]: row["games"] for pool in pools for row in pool["rows"]}


def wait_for_games(site: Site, labels: tuple[str, ...], games: int) -> dict[str, int]:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        rows = ladder_rows(site)
        if all(rows.get(label, 0) >= games for label in labels):
            break
        time.sleep(1)
    return rows


def ladders(db: str) -> list[dict[str, object]]:
    store = Store(db)
    try:
        return [t for t in store.tournaments() if t["kind"] == "ladder"]
    finally:
        store.close()


def test_passed_versions_join_the_ladder_which_a_restarted_server_continues(
        tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'ladder.db'}"
    tokens = {name: user_add(db, name)[0] for name in ("ann", "bob")}
    labels = ("annbot@1", "bobbot@1")
    with running_server(db, "--ladder", "five", "--check-games", "2") as base:
        site = Site(base, db, tokens, {})
        ids = []
        for name in ("ann", "bob"):
            reply = site.post("/api/submissions", tokens[name],
                              files={"archive": ("b.tar.gz", bot_archive(f"{name}bot"))})
            assert reply.status_code == 202, reply.text
            ids.append(reply.json()["id"])
        for name, submission in zip(("ann", "bob"), ids, strict=True):
            assert wait_status(base, tokens[name], submission)["status"] == "passed"
        rows = wait_for_games(site, labels, 2)
        assert all(rows.get(label, 0) >= 2 for label in labels), rows
        ladder = [g for g in site.get("/api/games", params={"bot": "annbot"}).json()["games"]
                  if "bobbot@1" in g["seats"]]
        assert ladder and all(g["seed"] is None for g in ladder)  # a running ladder's seeds
        page = site.get(f"/games/{ladder[0]['id']}").text
        assert "shown when the tournament is over" in page
    [first] = ladders(db)
    assert first["status"] == "interrupted"  # its process stopped as Ctrl-C stops it
    played = int(str(first["games_done"]))
    with running_server(db, "--ladder", "five") as base:  # the same leaderboard, continued
        rows = wait_for_games(Site(base, db, tokens, {}), labels, played + 2)
        assert all(rows.get(label, 0) >= played + 2 for label in labels), (played, rows)
    [again] = ladders(db)
    assert again["id"] == first["id"] and int(str(again["games_done"])) > played
    with running_server(db, "--ladder", "five", "--seats", "3"):  # another ladder: 3 seats
        pass
    assert [t["config"]["table_size"] for t in ladders(db)] == [2, 3]  # type: ignore[index]


def arena_processes(db: str, command: str = "ladder") -> list[int]:
    """The processes running ``arena COMMAND`` on ``db``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if command.encode() in words and db.encode() in words:
            found.append(int(entry.name))
    return found


def test_the_ladder_and_checker_processes_die_with_a_killed_server(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'killed.db'}"
    process, _ = start_arena(["serve", "--db", db, "--port", "0", "--sandbox", "none",
                              "--ladder", "five"])
    try:
        deadline = time.monotonic() + 60
        while not arena_processes(db) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert arena_processes(db), f"no ladder process; the server said:\n{log_of(process)}"
        assert arena_processes(db, "check-uploads"), \
            f"no checker process; the server said:\n{log_of(process)}"
        for pid in arena_processes(db) + arena_processes(db, "check-uploads"):
            assert os.getsid(pid) == pid, "not in a session of its own"

        process.kill()  # the server alone, as kill -9 would
        process.wait()
        deadline = time.monotonic() + 60
        while (arena_processes(db) or arena_processes(db, "check-uploads")) and \
                time.monotonic() < deadline:
            time.sleep(0.2)
        assert not arena_processes(db) and not arena_processes(db, "check-uploads")
    finally:
        stop(process)


#: A bot slow to start (its check takes a few seconds), then the sample random bot.
SLOW_BOT = "import time\ntime.sleep(3)\n" + BOT_PY


def test_a_check_cut_short_by_a_killed_server_is_done_by_the_next_one(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'requeue.db'}"
    token, _ = user_add(db, "ann")
    argv = ["serve", "--db", db, "--port", "0", "--sandbox", "none", "--check-games", "2"]
    process, base = start_arena(argv)
    try:
        reply = requests.post(f"{base}/api/submissions", timeout=60,
                              headers={"Authorization": f"Bearer {token}"},
                              files={"archive": ("slow.tar.gz", tar_gz({
                                  "bot.toml": MANIFEST.format(name="slowbot", author="x"),
                                  "bot.py": SLOW_BOT}))})
        assert reply.status_code == 202, reply.text
        submission = reply.json()["id"]
        assert wait_status(str(base), token, submission, ("checking", "passed", "failed"),
                           seconds=120)["status"] == "checking"
        process.kill()  # the server alone, as kill -9 would: its checker dies with it
        process.wait()
    finally:
        stop(process)
    with running_server(db, "--check-games", "2") as base:
        done = wait_status(base, token, submission)
        assert done["status"] == "passed" and done["label"] == "slowbot@1", done




def test_a_private_site_shows_nothing_before_sign_in(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'private.db'}"
    token, _ = user_add(db, "ann")
    with running_server(db, "--private") as base:
        site = Site(base, db, {"ann": token}, {})
        for path in ("/", "/games", "/bots/x", "/games/1", "/account"):
            reply = site.get(path, allow_redirects=False)
            assert reply.status_code == 401 and "private" in reply.text, path
        assert site.get("/api/leaderboard").json() == {
            "error": "this site is private: sign in to see it", "status": 401}
        assert site.get("/signin").status_code == 200
        assert site.get("/api/leaderboard", token).status_code == 200


def test_tokens_are_made_and_revoked_on_the_account_page(site: Site) -> None:
    ann = sign_in_with_password(site, "ann")
    page = ann.get(f"{site.base}/account", timeout=60)
    made = ann.post(f"{site.base}/account/tokens", timeout=60,
                    data={"csrf": csrf_of(page.text), "label": "laptop"})
    token = re.search(r'id="new-token">.*?<code>([^<]+)</code>', made.text)
    assert made.ok and token, made.text
    listed = site.get("/api/tokens", token.group(1)).json()["tokens"]
    mine = next(t for t in listed if t["label"] == "laptop")
    assert site.get("/api/tokens", site.tokens["bob"]).json()["tokens"] != listed
    gone = requests.delete(f"{site.base}/api/tokens/{mine['id']}", timeout=60,
                           headers={"Authorization": f"Bearer {site.tokens['bob']}"})
    assert gone.status_code == 404  # bob cannot revoke ann's token
    revoke = ann.post(f"{site.base}/account/tokens/{mine['id']}/revoke", timeout=60,
                      data={"csrf": csrf_of(made.text)})
    assert revoke.ok
    assert site.get("/api/tokens", token.group(1)).status_code == 401


def test_bad_serve_and_submit_input_is_one_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    for argv, words in ((["serve", "--port", "70000", "--db", db], "--port"),
                        (["serve", "--ladder", "chess", "--db", db], "unknown game"),
                        (["serve", "--ladder-nice", "20", "--db", db], "--ladder-nice"),
                        (["serve", "--ladder", "five", "-j", "0", "--db", db], "--parallel"),
                        (["serve", "--db", "sqlite://"], "in-memory"),
                        (["submit", str(tmp_path / "none"), "--server", "http://127.0.0.1:9",
                          "--token", "t"], "is not a directory"),
                        (["submit", str(make_bot(tmp_path / "b", "b")), "--server",
                          "http://127.0.0.1:9", "--token", "t"], "cannot reach")):
        proc = arena(*argv)
        assert proc.returncode == 2, (argv, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arena: error: ") and words in lines[0], \
            (argv, proc.stderr)
    assert not (tmp_path / "x.db").exists()  # nothing made before the flags were checked


def test_an_id_in_a_path_is_escaped_on_its_error_page(site: Site) -> None:
    reply = site.get("/bots/<img src=x onerror=alert(1)>")
    assert reply.status_code == 404 and "<img" not in reply.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in reply.text


def test_a_failed_build_ends_failed_with_its_reason(site: Site) -> None:
    toml = MANIFEST.format(name="brokenbot", author="x") + \
        'build = "sh -c \'echo main.c: error 1; echo no compiler >&2; exit 7\'"\n'
    reply = site.post("/api/submissions", site.tokens["root"], files={"archive": (
        "broken.tar.gz", tar_gz({"bot.toml": toml, "bot.py": "print()"}))})
    assert reply.status_code == 202 and reply.json()["status"] == "queued"
    done = wait_status(site.base, site.tokens["root"], reply.json()["id"])
    assert done["status"] == "failed" and done["label"] is None, done
    assert "exit status 7" in str(done["message"])
    # the output's last lines, not only its last one
    assert str(done["message"]).endswith("\n  | main.c: error 1\n  | no compiler")
    root = sign_in_with_password(site, "root")
    page = root.get(f"{site.base}/submissions/{done['id']}", timeout=60).text
    assert "status-failed" in page
    assert '<pre class="stderr">  | main.c: error 1\n  | no compiler</pre>' in page


def test_an_uploads_check_runs_its_bots_nicer_than_the_server(site: Site) -> None:
    """A check's bots run at niceness 10: they take mostly the CPU the pages and the
    ladder leave."""
    toml = MANIFEST.format(name="nicebot", author="x")
    bot = "import os, sys\nsys.stderr.write(f'niceness {os.nice(0)}\\n')\nsys.exit(3)\n"
    reply = site.post("/api/submissions", site.tokens["root"], files={"archive": (
        "nice.tar.gz", tar_gz({"bot.toml": toml, "bot.py": bot}))})
    assert reply.status_code == 202, reply.text
    done = wait_status(site.base, site.tokens["root"], reply.json()["id"])
    assert done["status"] == "failed", done
    assert f"niceness {min(19, os.nice(0) + CHECK_NICE)}" in json.dumps(done), done


#: A bot that says which ``arena`` command is the nearest of its ancestors (the
#: process running its referee), then fails its check.
REFEREE_BOT = """\
import os, sys
pid = os.getppid()
while pid > 1:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        words = f.read().split(b"\\0")
    if b"arena" in words:
        sys.stderr.write(f"referee: arena {words[words.index(b'arena') + 1].decode()}\\n")
        if os.path.exists(f"/proc/{pid}/autogroup"):
            with open(f"/proc/{pid}/autogroup") as f:
                sys.stderr.write(f"its session: {f.read().strip()}\\n")
        break
    with open(f"/proc/{pid}/stat") as f:
        pid = int(f.read().rpartition(")")[2].split()[1])
sys.exit(3)
"""


def test_an_uploads_check_runs_outside_the_servers_process(site: Site) -> None:
    """The check's referee runs in the checker process (arena check-uploads), not
    in the server's interpreter, where it would take the pages' and the ladder's
    CPU; the checker's session (its autogroup) is as nice as its processes."""
    reply = site.post("/api/submissions", site.tokens["root"], files={"archive": (
        "referee.tar.gz", tar_gz({"bot.toml": MANIFEST.format(name="refereebot", author="x"),
                                  "bot.py": REFEREE_BOT}))})
    assert reply.status_code == 202, reply.text
    done = wait_status(site.base, site.tokens["root"], reply.json()["id"])
    assert done["status"] == "failed", done
    said = set(re.findall(r"referee: arena ([\w-]+)", json.dumps(done)))
    assert said == {"check-uploads"}, done
    if Path("/proc/self/autogroup").exists():  # its session niced as its processes
        assert set(re.findall(r"its session: \S+ nice (\d+)", json.dumps(done))) == \
            {str(CHECK_NICE)}, done


def test_uploads_are_rate_limited_per_account(site: Site) -> None:
    """Last in the module: eve uses up her uploads for the hour."""
    codes = [site.post("/api/submissions", site.tokens["eve"],
                       files={"archive": ("x.zip", b"not a zip")}).status_code
             for _ in range(31)]
    assert codes[:30] == [400] * 30 and codes[30] == 429
