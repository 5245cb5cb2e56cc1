"""Paths built from user data (issue 27): a bot name or version that is no
folder name (``..@arena`` once landed beside the database, where the server's
children imported it), a package planted in the server's working directory,
links a build leaves that lead out of the version, names that differ only in
case, a failed first upload that kept its name, server paths in messages.

Real ``arena serve`` processes on 127.0.0.1, real uploads built and checked."""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
import trio

from arena.bots.archive import ArchiveError, unpack
from arena.bots.paths import PathEscape, contained, escaping_links
from arena.bots.versions import NAME_LENGTH, BotError, Manifest
from arena.runner.process import BotProcess, BotSpec, start_bot_process
from arena.runner.sandbox import Sandbox
from tests.server import (
    BOT_PY,
    arena,
    bot_archive,
    log_of,
    played_database,
    running_server,
    start_arena,
    stop,
    tar_gz,
    user_add,
    wait_status,
)
from tests.test_sandbox import bot_script

#: What a planted package does when imported: leaves this file in the working directory.
PLANTED = "import os\nopen(os.path.join(os.getcwd(), 'PLANTED'), 'a').write(str(os.getpid()))\n"


@dataclass
class Site:
    base: str
    folder: Path
    db: str
    tokens: dict[str, str]

    def upload(self, who: str, archive: bytes) -> requests.Response:
        return requests.post(f"{self.base}/api/submissions", timeout=60,
                             headers={"Authorization": f"Bearer {self.tokens[who]}"},
                             files={"archive": ("bot.tar.gz", archive)})


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A server whose working directory is its database's folder, as an organiser
    runs it (``arena serve`` there, the bot store beside the database)."""
    folder = tmp_path_factory.mktemp("paths")
    db = played_database(folder)
    tokens = {name: user_add(db, name)[0] for name in ("ann", "bob")}
    with running_server(db, "--check-games", "2", cwd=folder) as base:
        yield Site(base, folder, db, tokens)


def manifest(name: str, version: str = "", build: str = "") -> str:
    return (f'name = "{name}"\ncommand = "python bot.py"\ngames = ["five"]\n'
            + (f'version = "{version}"\n' if version else "")
            + (f'build = "{build}"\n' if build else ""))


# -- names and versions ------------------------------------------------------------------

def test_dot_dot_at_arena_is_refused_and_lands_nothing_outside_the_store(site: Site) -> None:
    before = set(os.listdir(site.folder))
    reply = site.upload("ann", tar_gz({"bot.toml": manifest("..", "arena"), "bot.py": BOT_PY,
                                       "__init__.py": PLANTED, "__main__.py": PLANTED}))
    if reply.status_code == 202:  # accepted: wait for its check, then look
        wait_status(site.base, site.tokens["ann"], reply.json()["id"])
    assert not (site.folder / "arena").exists()
    assert set(os.listdir(site.folder)) - before <= {"arena-bots", "arena-bots-uploads",
                                                     "arena.db-wal", "arena.db-shm"}
    assert reply.status_code == 400, reply.text
    assert "name '..' is not 1 to 64 letters" in reply.json()["error"]


@pytest.mark.parametrize("name,version", [
    (".", "1"), ("ok", ".."), ("ok", "."), (".hidden", "1"), ("-dash", "1"), ("_under", "1"),
    ("a" * (NAME_LENGTH + 1), "1"), ("ok", "v" * (NAME_LENGTH + 1)), ("ok", "-1")])
def test_names_and_versions_that_are_no_folder_names_are_refused(
        site: Site, name: str, version: str) -> None:
    reply = site.upload("ann", tar_gz({"bot.toml": manifest(name, version), "bot.py": BOT_PY}))
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert "starting with a letter or digit" in error and "\n" not in error


def test_the_name_rule_admits_ordinary_names() -> None:
    for name in ("a", "Hog", "my-bot_2.0", "9lives", "a" * NAME_LENGTH):
        assert Manifest.parse({"name": name, "command": "x", "games": ["five"],
                               "version": name}, "bot.toml").name == name
    with pytest.raises(BotError):
        Manifest.parse({"name": "..", "command": "x", "games": ["five"]}, "bot.toml")


def test_contained_keeps_every_path_inside_its_root(tmp_path: Path) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "inside").mkdir()
    (root / "out").symlink_to(tmp_path)
    assert contained(root, "bot", "1") == root.resolve() / "bot" / "1"
    assert contained(root, "inside") == root.resolve() / "inside"
    for parts in ((".."), ("..", "arena"), ("bot", ".."), ("/etc",), ("a/../../x",),
                  ("out", "x"), ("",), (".",), ("a\0b",)):
        with pytest.raises(PathEscape):
            contained(root, *parts)


def test_escaping_links_are_found_and_inner_ones_kept(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "real.py").write_text("")
    (tmp_path / "inner.py").symlink_to("lib/real.py")
    (tmp_path / "lib" / "up").symlink_to("../..")
    (tmp_path / "passwd").symlink_to("/etc/passwd")
    (tmp_path / "self").symlink_to(str(tmp_path / "lib" / "real.py"))  # absolute, inside
    (tmp_path / "root").symlink_to(".")
    assert escaping_links(tmp_path) == ["lib/up", "passwd", "root"]


# -- the server's children and its working directory ----------------------------------------

def test_a_restarted_server_imports_nothing_planted_in_its_working_directory(
        site: Site) -> None:
    planted = site.folder / "arena"
    planted.mkdir()
    (planted / "__init__.py").write_text(PLANTED)
    (planted / "__main__.py").write_text(PLANTED)
    try:
        process, base = start_arena(["serve", "--db", site.db, "--port", "0", "--sandbox",
                                     "none", "--check-games", "2", "--ladder", "five"],
                                    cwd=site.folder)
        assert base is not None
        try:
            # A check done by its checker, a table by its ladder: both children ran.
            reply = site.upload("ann", bot_archive("planted-probe"))
            assert reply.status_code == 202, reply.text
            done = wait_status(base, site.tokens["ann"], reply.json()["id"])
            assert done["status"] == "passed", (json.dumps(done), log_of(process))
            assert "ladder" in log_of(process)
        finally:
            stop(process)
        assert not (site.folder / "PLANTED").exists(), log_of(process)
    finally:
        for path in planted.iterdir():
            path.unlink()
        planted.rmdir()


# -- what a build leaves -------------------------------------------------------------------

@pytest.mark.parametrize("link", ["/etc/passwd", "../../../..", "../../outside"])
def test_a_build_that_leaves_a_link_out_of_the_version_is_refused(
        tmp_path: Path, link: str) -> None:
    bot = tmp_path / "linker"
    bot.mkdir()
    (bot / "lib").mkdir()
    (bot / "bot.py").write_text(BOT_PY)
    (bot / "bot.toml").write_text(manifest("linker", build=f"ln -s {link} lib/leak"))
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    added = arena("bot", "add", str(bot), "--db", db, "--sandbox", "none")
    assert added.returncode == 2, added.stdout + added.stderr
    assert added.stderr.strip().splitlines() == [
        "arena: error: bot linker@1: the build left a link 'lib/leak' that leads outside the "
        "bot's folder"]
    assert not any((tmp_path / "arena-bots").rglob("*.py"))
    listed = arena("bot", "list", "--db", db)
    assert "linker" not in listed.stdout


def test_a_build_may_leave_links_inside_the_version(tmp_path: Path) -> None:
    bot = tmp_path / "inner"
    bot.mkdir()
    (bot / "bot.py").write_text(BOT_PY)
    (bot / "bot.toml").write_text(manifest("inner", build="ln -s bot.py alias.py"))
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    added = arena("bot", "add", str(bot), "--db", db, "--sandbox", "none")
    assert added.returncode == 0, added.stderr


# -- names between users ---------------------------------------------------------------------

def test_names_that_differ_only_in_case_are_one_name(site: Site) -> None:
    first = site.upload("ann", bot_archive("Hog"))
    assert first.status_code == 202, first.text
    for who, name in (("bob", "hog"), ("bob", "HOG"), ("ann", "hog"), ("ann", "ORG1")):
        reply = site.upload(who, bot_archive(name))
        assert reply.status_code == 403, (who, name, reply.text)
        assert "differs only in case" in reply.json()["error"] or name == "ORG1"
    wait_status(site.base, site.tokens["ann"], first.json()["id"])


def test_a_failed_first_upload_keeps_no_claim_on_its_name(site: Site) -> None:
    failing = tar_gz({"bot.toml": manifest("freebie", build="false"), "bot.py": BOT_PY})
    reply = site.upload("ann", failing)
    assert reply.status_code == 202, reply.text
    assert wait_status(site.base, site.tokens["ann"], reply.json()["id"])["status"] == "failed"
    taken = site.upload("bob", bot_archive("freebie"))
    assert taken.status_code == 202, taken.text
    assert wait_status(site.base, site.tokens["bob"], taken.json()["id"])["status"] == "passed"
    again = site.upload("ann", bot_archive("freebie"))
    assert again.status_code == 403


def test_the_checkers_messages_show_no_server_paths(site: Site) -> None:
    archive = tar_gz({"bot.toml": 'name = "wanderer"\ncommand = "python /etc/passwd"\n'
                                  'games = ["five"]\n', "bot.py": BOT_PY})
    reply = site.upload("ann", archive)
    assert reply.status_code == 202, reply.text
    done = wait_status(site.base, site.tokens["ann"], reply.json()["id"])
    assert done["status"] == "failed"
    message = str(done["message"])
    assert "outside its own directory" in message
    assert str(site.folder) not in message and "uploads" not in message, message


# -- the sandbox ---------------------------------------------------------------------------------

async def run_in_directory(command: str, directory: Path) -> BotProcess:
    """A bot started in its own directory, as a stored version is, run to its exit."""
    async with trio.open_nursery() as nursery:
        bot = await start_bot_process(BotSpec("probe", command, str(directory)), nursery,
                                      Sandbox("bwrap"))
        with trio.fail_after(20):
            await bot.wait()
        await bot.aclose()
    return bot


def test_a_sandboxed_bots_stderr_starts_with_its_own_words(tmp_path: Path) -> None:
    command = bot_script(tmp_path, "import sys\nsys.stderr.write('mine\\n')\n")
    bot = trio.run(run_in_directory, command, tmp_path)
    assert bot.stderr.text() == "mine\n"


def test_a_zip_link_that_escapes_through_an_earlier_link_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.toml", manifest("chained"))
        archive.writestr("sub/keep", "")
        for name, target in (("lib/a", "../sub"), ("lib/a/b", "../..")):
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)  # lib/a/b is sub/b: its ../.. leaves the folder
    with pytest.raises(ArchiveError, match="'lib/a/b' points out of the bot's folder"):
        unpack(buffer.getvalue(), "bot.zip", tmp_path / "unpacked")
    assert not (tmp_path / "unpacked").exists()
