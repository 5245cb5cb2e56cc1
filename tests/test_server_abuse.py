"""What else an attacker tried against ``arena serve`` (issue 27's "extend the
abuse tests"): bodies larger than any form, declared or chunked without end, to
the pages anyone reaches and to the upload (the server still serves meanwhile);
the sign-in and sign-up pages fetched in a flood, each of which wrote a session
row to the database.  A real server process on 127.0.0.1, real HTTP."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from arena.server.bodies import FORM_BYTES
from tests.server import csrf_of, running_server, user_add

#: More than any form or archive the server takes.
FLOOD = 64 * 2**20


@dataclass
class Site:
    base: str
    token: str
    folder: Path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("abuse")
    db = f"sqlite:///{folder / 'arena.db'}"
    token, _ = user_add(db, "ann")
    with running_server(db, "--open-signup") as base:
        yield Site(base, token, folder)


def chunks(total: int, size: int = 1 << 20, first: bytes = b"") -> Iterator[bytes]:
    """A body sent chunked (no Content-Length): ``first``, then ``total`` bytes."""
    yield first
    sent = 0
    while sent < total:
        yield b"a" * size
        sent += size


def post(url: str, **kw: object) -> requests.Response | None:
    """The reply, or None if the server stopped reading before the client sent it
    all (it may, once it has answered 413: then the client's send stalls, or the
    server closes the connection)."""
    try:
        return requests.post(url, timeout=(10, 10), **kw)  # type: ignore[arg-type]
    except (requests.ConnectionError, requests.Timeout):
        return None


@pytest.mark.parametrize("path", ["/signin", "/signup", "/password/abc", "/signout"])
def test_a_form_larger_than_any_form_is_413(site: Site, path: str) -> None:
    declared = post(site.base + path, data={"name": "a" * (FORM_BYTES + 1)})
    assert declared is not None and declared.status_code == 413, declared
    chunked = post(site.base + path, data=chunks(FLOOD),
                   headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert chunked is None or chunked.status_code == 413
    assert requests.get(site.base + "/", timeout=30).status_code == 200


def test_an_endless_chunked_upload_is_cut_at_the_archive_limit(site: Site) -> None:
    before = rss_of_server(site)
    part = (b'--x\r\nContent-Disposition: form-data; name="archive"; filename="b.tar.gz"'
            b'\r\nContent-Type: application/gzip\r\n\r\n')
    reply = post(site.base + "/api/submissions", data=chunks(FLOOD, first=part),
                 headers={"Authorization": f"Bearer {site.token}",
                          "Content-Type": "multipart/form-data; boundary=x"})
    assert reply is None or reply.status_code == 413
    assert requests.get(site.base + "/", timeout=30).status_code == 200
    assert rss_of_server(site) - before < 40 * 2**20  # it never held the 64 MiB


def test_a_json_body_larger_than_any_is_413(site: Site) -> None:
    reply = post(site.base + "/api/bots/x/retire", data=chunks(FLOOD),
                 headers={"Authorization": f"Bearer {site.token}",
                          "Content-Type": "application/json"})
    assert reply is None or reply.status_code == 413


def rss_of_server(site: Site) -> int:
    """Resident bytes of the ``arena serve`` process listening at the site's port."""
    port = site.base.rsplit(":", 1)[1]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if b"serve" in argv and owns_port(pid, int(port)):
            return int(status.split("VmRSS:")[1].split()[0]) * 1024
    raise AssertionError("no server process found")


def owns_port(pid: str, port: int) -> bool:
    """Whether process ``pid`` holds a listening socket on ``port`` (127.0.0.1)."""
    try:
        sockets = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    except OSError:
        return False
    listening = Path("/proc/net/tcp").read_text().splitlines()[1:]
    for line in listening:
        fields = line.split()
        if fields[3] == "0A" and int(fields[1].split(":")[1], 16) == port and \
                f"socket:[{fields[9]}]" in sockets:
            return True
    return False


def sessions_stored(site: Site) -> int:
    with sqlite3.connect(site.folder / "arena.db") as connection:
        return int(connection.execute("SELECT count(*) FROM sessions").fetchone()[0])


def test_strangers_forms_write_nothing_to_the_database(site: Site) -> None:
    before = sessions_stored(site)
    for _ in range(50):
        for path in ("/signin", "/signup"):
            assert requests.get(site.base + path, timeout=30).status_code == 200
    assert sessions_stored(site) == before
    # The form still carries a token that its post must send back: without it 403.
    browser = requests.Session()
    page = browser.get(site.base + "/signin", timeout=30)
    token = csrf_of(page.text)
    wrong = browser.post(site.base + "/signin", data={"csrf": token, "name": "ann",
                                                      "password": "not hers"}, timeout=30)
    assert wrong.status_code == 400, wrong.text
    for forged in ({"csrf": token}, {"csrf": "0" * 64}, {}):
        other = requests.post(site.base + "/signin", data={**forged, "name": "ann",
                                                           "password": "x"},
                              cookies={} if forged else browser.cookies, timeout=30)
        assert other.status_code == 403, (forged, other.status_code)
    assert sessions_stored(site) == before
