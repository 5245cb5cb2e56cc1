"""A real ``arena serve`` for the tests: started as a process on a free port of
127.0.0.1 (``--port 0``; the port read from its first line), stopped with it."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import requests

T = TypeVar("T")

#: A bot that plays as the sample random bot, from its own directory.
BOT_PY = """\
import runpy, sys
sys.stderr.write("<script>alert('stderr')</script> only the owner sees this\\n")
sys.argv = sys.argv[:1]
runpy.run_module("sample_bots.random_bot", run_name="__main__")
"""
MANIFEST = """\
name = "{name}"
command = "python bot.py"
games = ["five"]
author = "{author}"
"""
SERVING = re.compile(r"arena: serving \S+ on (http://\S+)")


def arena(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True,
                          text=True, timeout=timeout, check=False)


def played_database(folder: Path, games: int = 2) -> str:
    """A SQLite database in ``folder`` (its URL) holding a finished tournament of
    ``games`` games of five between the organiser's bots ``org1`` and ``org2``
    (random bots, no sandbox). Known deals and one seed for both bots: every deal is
    played from both seats by the same player, so neither bot wins every game and
    both have a finite rating."""
    db = f"sqlite:///{folder / 'arena.db'}"
    random_bot = f"env RANDOM_BOT_SEED=7 {sys.executable} -m sample_bots.random_bot"
    played = arena("tournament", "-g", "five", "-k", "2", "-n", str(games), "--seed", "1",
                   "--sandbox",
                   "none", "-j", "1", "-b", f"org1={random_bot}", "-b", f"org2={random_bot}",
                   "--db", db)
    assert played.returncode == 0, played.stderr
    return db


def make_bot(folder: Path, name: str, author: str = "Ada") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(MANIFEST.format(name=name, author=author))
    (folder / "bot.py").write_text(BOT_PY)
    return folder


def tar_gz(files: dict[str, bytes | str]) -> bytes:
    """A .tar.gz of regular files given as name -> content."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def bot_archive(name: str, author: str = "Ada") -> bytes:
    return tar_gz({"bot.toml": MANIFEST.format(name=name, author=author), "bot.py": BOT_PY})


#: The stderr lines read so far of each process :func:`start_arena` started, by pid.
LOGS: dict[int, list[str]] = {}


def log_of(process: subprocess.Popen[str]) -> str:
    """What a process :func:`start_arena` started has written to stderr so far."""
    return "".join(LOGS.get(process.pid, []))


def start_arena(argv: Sequence[str], cwd: Path | None = None
                ) -> tuple[subprocess.Popen[str], str | None]:
    """``arena ARGV`` in its own session (in folder ``cwd``: as the ``arena``
    command runs, the working directory off ``sys.path``), its log drained (a full
    pipe never blocks it; :func:`log_of` reads it); for ``arena serve`` once it
    serves, with its base URL."""
    process = subprocess.Popen([sys.executable, "-P", "-m", "arena", *argv], text=True,
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               start_new_session=True, env={**os.environ}, cwd=cwd)
    assert process.stderr is not None
    lines = LOGS[process.pid] = []
    try:
        deadline = time.monotonic() + 60
        while argv[0] == "serve" and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                raise AssertionError("arena serve stopped:\n" + "".join(lines))
            lines.append(line)
            found = SERVING.search(line)
            if found:
                threading.Thread(target=lines.extend, args=(process.stderr,),
                                 daemon=True).start()
                return process, found.group(1)
        if argv[0] == "serve":
            raise AssertionError("arena serve did not start:\n" + "".join(lines))
    except BaseException:
        stop(process)
        raise
    threading.Thread(target=lines.extend, args=(process.stderr,), daemon=True).start()
    return process, None


def stop(process: subprocess.Popen[str]) -> None:
    """Ctrl-C to the process's session (its ladder processes too); killed if it
    does not end within 40 s."""
    with contextlib.suppress(ProcessLookupError):  # nothing of it is left
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=40)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def running_server(db: str, *flags: str, bot_store: Path | None = None,
                   cwd: Path | None = None) -> Iterator[str]:
    """``arena serve --db DB FLAGS`` on a free port (in folder ``cwd``); yields its
    base URL."""
    argv = ["serve", "--db", db, "--port", "0", "--sandbox", "none", *flags]
    if bot_store is not None:
        argv += ["--bot-store", str(bot_store)]
    process, base = start_arena(argv, cwd)
    assert base is not None
    try:
        yield base
    except BaseException:  # what the server said, beside the failure
        sys.stderr.write(f"arena serve's log:\n{log_of(process)}")
        raise
    finally:
        stop(process)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has no CSRF field"
    return found.group(1)


def sign_in(base: str, name: str, password: str) -> requests.Session:
    """A browser-like session signed in as ``name``."""
    session = requests.Session()
    page = session.get(f"{base}/signin", timeout=30)
    reply = session.post(f"{base}/signin", timeout=30, data={
        "csrf": csrf_of(page.text), "name": name, "password": password})
    assert reply.ok and reply.url.endswith("/account"), reply.text
    return session


def set_password(base: str, link: str, password: str) -> requests.Session:
    """Use a one-time link to set the password; the signed-in session."""
    session = requests.Session()
    page = session.get(link.replace("http://127.0.0.1:8000", base), timeout=30)
    assert page.ok, page.text
    reply = session.post(page.url, data={"csrf": csrf_of(page.text), "password": password},
                         timeout=30)
    assert reply.ok and reply.url.endswith("/account"), reply.text
    return session


def user_add(db: str, name: str, *flags: str) -> tuple[str, str]:
    """``arena user add``: the user's API token and password link."""
    proc = arena("user", "add", name, "--db", db, *flags)
    assert proc.returncode == 0, proc.stderr
    token = re.search(r"api token: (\S+)", proc.stdout)
    link = re.search(r"set a password \(once\): (\S+)", proc.stdout)
    assert token and link, proc.stdout
    return token.group(1), link.group(1)


def eventually(fetch: Callable[[], T], ok: Callable[[T], bool], seconds: float = 30) -> T:
    """``fetch()`` again until ``ok`` holds of it or ``seconds`` passed; the last one.
    The server's pages and lists come from a snapshot of the database that follows
    it a second or two behind (docs/server.md)."""
    deadline = time.monotonic() + seconds
    found = fetch()
    while not ok(found) and time.monotonic() < deadline:
        time.sleep(0.5)
        found = fetch()
    return found


def fresh_window(seconds: float = 60.0, margin: float = 20.0) -> None:
    """Wait, if need be, until the server's fixed rate-limit windows of ``seconds``
    (:mod:`arena.store.limits`) have ``margin`` seconds left, so that a burst of
    requests a test counts falls in one window."""
    left = seconds - time.time() % seconds
    if left < margin:
        time.sleep(left + 0.1)


def wait_status(base: str, token: str, submission: int, final: Sequence[str] = (
        "passed", "failed"), seconds: float = 240) -> dict[str, object]:
    """Poll a submission until it reaches a final status; its JSON."""
    deadline = time.monotonic() + seconds
    while True:
        body: dict[str, object] = requests.get(
            f"{base}/api/submissions/{submission}", timeout=30,
            headers={"Authorization": f"Bearer {token}"}).json()
        if body.get("status") in final or time.monotonic() > deadline:
            return body
        time.sleep(1)
