"""Bots as versioned submissions (docs/bots.md): manifests, fingerprints, ``arena bot
add | list | show | retire``, stored and ad-hoc versions playing through the real CLI
with real bot processes, the sandbox showing a stored bot its directory read-only, and
the migration of a database made before versions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, text

from arena.bots.versions import (
    BotError,
    active_entrants,
    adhoc_fingerprint,
    fingerprint,
    read_manifest,
)
from arena.cli import main
from arena.runner.sandbox import bwrap_problem
from arena.store.database import Store
from arena.store.engine import HEAD_REVISION, alembic_config
from reports.render import render_report
from tests.test_storage import new_tournament, result, revision

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
QUICK = ("-g", "furious-five", "-o", "rounds=1", "-n", "2", "--sandbox", "none", "-j", "1")
#: A bot that reads its own data file (relative: it starts in its directory), may try
#: to write beside it, then plays as the random bot.
BOT_PY = """\
import pathlib, runpy, sys
assert pathlib.Path("data.txt").read_text() == "hello\\n"
if "--write" in sys.argv:
    pathlib.Path("written.txt").write_text("x")
sys.argv = sys.argv[:1]
runpy.run_module("sample_bots.random_bot", run_name="__main__")
"""
MANIFEST = """\
name = "{name}"
command = "python bot.py {flags}"
games = ["furious-five", "five"]
author = "Ada"
{extra}
"""


def make_bot(folder: Path, name: str = "reader", flags: str = "", extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(MANIFEST.format(name=name, flags=flags, extra=extra))
    (folder / "bot.py").write_text(BOT_PY)
    (folder / "data.txt").write_text("hello\n")
    return folder


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``arena ARGS`` in this process: (exit status, stdout, stderr)."""
    try:
        status = main(list(args))
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(name="db")
def db_fixture(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'arena.db'}"


def seats(db: str) -> list[list[str]]:
    store = Store(db)
    try:
        return [game.seats for game in store.games()]
    finally:
        store.close()


# -- manifests and fingerprints ----------------------------------------------------------

@pytest.mark.parametrize(("toml", "needle"), [
    ('command = "x"\ngames = ["five"]', "'name' is required"),
    ('name = "a b"\ncommand = "x"\ngames = ["five"]', "is not 1 to 64 letters"),
    ('name = "a"\ngames = ["five"]', "'command' is required"),
    ('name = "a"\ncommand = "x"', "'games' is required"),
    ('name = "a"\ncommand = "x"\ngames = ["chess"]', "unknown game 'chess'"),
    ('name = "a"\ncommand = "x"\ngames = ["five"]\ncolour = 1', "unknown field 'colour'"),
    ('name = "a"\ncommand = "x \'y"\ngames = ["five"]', "cannot split"),
    ('name = "a"\ncommand = "x"\ngames = ["five"]\nversion = 2', "'version' must be a string"),
    ("name = ", "not valid TOML"),
])
def test_a_bad_manifest_is_one_line_and_stores_nothing(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], toml: str,
        needle: str) -> None:
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "bot.toml").write_text(toml)
    status, _, err = run(capsys, "bot", "add", str(tmp_path / "bot"), "--db", db)
    assert status == 2 and needle in err and err.count("\n") == 1, err
    assert err.startswith("arena: error: ") and "bot.toml" in err
    assert not (tmp_path / "arena.db").exists() and not (tmp_path / "arena-bots").exists()


@pytest.mark.parametrize("command", [
    "python bot.py ../notes.txt", "python ../outside.py", "python bot.py ../../..",
    "./link.py", "{outside}/outside.py"])
def test_a_stored_bots_command_names_only_its_own_files(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str], command: str) -> None:
    (tmp_path / "notes.txt").write_text("the organiser's notes")
    (tmp_path / "outside.py").write_text("print('outside')")
    folder = make_bot(tmp_path / "bot")
    (folder / "link.py").symlink_to(tmp_path / "outside.py")
    toml = MANIFEST.format(name="reader", flags="", extra="")
    (folder / "bot.toml").write_text(toml.replace('"python bot.py "',
                                                  repr(command.format(outside=tmp_path))))
    status, _, err = run(capsys, "bot", "add", str(folder), "--db", db)
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith("arena: error: bot reader@1: its command names ") and \
        "outside its own directory" in err
    assert not (tmp_path / "arena-bots").exists() or not any((tmp_path / "arena-bots").iterdir())
    # Its own files, by any name, are fine.
    (folder / "bot.toml").write_text(toml.replace('"python bot.py "', '"python ./bot.py data.txt"'))
    status, _, err = run(capsys, "bot", "add", str(folder), "--db", db)
    assert status == 0, err


def test_a_directory_without_manifest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BotError, match=r"has no bot\.toml"):
        read_manifest(tmp_path)


def test_fingerprints_follow_the_content_only(tmp_path: Path) -> None:
    first, second = make_bot(tmp_path / "one"), make_bot(tmp_path / "two")
    (second / "__pycache__").mkdir()
    (second / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"cache")
    (second / ".git").mkdir()
    (second / ".git" / "HEAD").write_text("ref")
    assert fingerprint(first) == fingerprint(second)
    (second / "data.txt").write_text("hello!\n")
    assert fingerprint(first) != fingerprint(second)
    (second / "data.txt").write_text("hello\n")
    (second / "data.txt").rename(second / "other.txt")
    assert fingerprint(first) != fingerprint(second)
    script = tmp_path / "s.py"
    script.write_text("print(1)")
    before = adhoc_fingerprint(f"python {script}")
    assert adhoc_fingerprint(f"python {script}") == before != adhoc_fingerprint(
        f"python {script} --fast")
    script.write_text("print(2)")
    assert adhoc_fingerprint(f"python {script}") != before


# -- arena bot add | list | show | retire ----------------------------------------------

def test_add_list_show_retire(tmp_path: Path, db: str,
                              capsys: pytest.CaptureFixture[str]) -> None:
    source = make_bot(tmp_path / "src")
    assert run(capsys, "bot", "add", str(source), "--db", db)[:2] == (0, "added reader@1\n")
    assert run(capsys, "bot", "add", str(source), "--db", db)[:2] == (
        0, "reader@1 unchanged\n")
    copy = tmp_path / "arena-bots" / "reader" / "1"
    assert (copy / "data.txt").read_text() == "hello\n"
    assert not (copy / "bot.py").stat().st_mode & 0o222  # read-only
    (source / "data.txt").write_text("hello\n\n")
    assert run(capsys, "bot", "add", str(source), "--db", db)[1] == "added reader@2\n"

    status, out, _ = run(capsys, "bot", "list", "--db", db)
    lines = out.splitlines()
    assert status == 0 and lines[0].split()[:3] == ["bot", "games", "added"]
    assert [line.split()[0] for line in lines[1:]] == ["reader@1", "reader@2"]
    assert lines[1].split()[1] == "furious-five,five" and lines[1].split()[-1] == "0"

    status, out, _ = run(capsys, "bot", "show", "reader", "--db", db)
    shown = dict(line.split(":", 1) for line in out.splitlines())
    assert status == 0 and shown["bot"].strip() == "reader@2"
    assert shown["path"].strip() == str(tmp_path / "arena-bots" / "reader" / "2")
    assert shown["fingerprint"].strip() == fingerprint(source)
    assert shown["author"].strip() == "Ada" and shown["command"].strip() == "python bot.py"

    assert run(capsys, "bot", "retire", "reader@1", "--db", db)[1] == "retired reader@1\n"
    assert "reader@1" not in run(capsys, "bot", "list", "--db", db)[1]
    listed = run(capsys, "bot", "list", "--all", "--db", db)[1].splitlines()
    assert "retired" in listed[1] and "retired" not in listed[2]
    assert run(capsys, "bot", "retire", "reader", "--db", db)[1] == "retired reader@2\n"
    status, _, err = run(capsys, "tournament", *QUICK, "-b", "reader", "-b", f"r={RANDOM}",
                         "--db", db)
    assert status == 2 and "every version of bot 'reader' is retired" in err


def test_a_version_given_in_the_manifest_never_changes(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    source = make_bot(tmp_path / "src", extra='version = "1.0"')
    assert run(capsys, "bot", "add", str(source), "--db", db)[1] == "added reader@1.0\n"
    (source / "data.txt").write_text("changed\n")
    status, _, err = run(capsys, "bot", "add", str(source), "--db", db)
    assert status == 2 and "reader@1.0 is stored already with other content" in err


def test_a_failed_build_stores_nothing(tmp_path: Path, db: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    build = ("build = \"sh -c 'for n in $(seq 40); do echo line $n; done; "
             "echo missing header >&2; exit 3'\"")
    source = make_bot(tmp_path / "src", extra=build)
    status, _, err = run(capsys, "bot", "add", str(source), "--db", db, "--sandbox", "none")
    first, *output = err.splitlines()
    assert status == 2 and first.startswith("arena: error: bot reader")
    assert "failed with exit status 3; its output's last 30 lines:" in first
    # the whole complaint in the order printed, stdout and stderr, not only its last line
    assert output == [f"  | line {n}" for n in range(12, 41)] + ["  | missing header"]
    assert not (tmp_path / "arena-bots" / "reader" / "1").exists()
    assert run(capsys, "bot", "list", "--db", db)[1].splitlines()[1:] == []


def test_a_mistyped_stored_bot_is_named_with_the_closest_stored_ones(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "bot", "add", str(make_bot(tmp_path / "src")), "--db", db)[0] == 0
    for args, said in [
        (["tournament", "-g", "five", "-b", "readr", "-b", "reader"],
         "no stored bot 'readr' (did you mean 'reader'?), nor a command: cannot run 'readr'"),
        (["check-bot", "-b", "raeder@1"], "no stored bot 'raeder' (did you mean 'reader'?)"),
        (["tournament", "-g", "five", "-b", "zzz@1", "-b", "reader"],
         "no stored bot 'zzz' (see 'arena bot list')"),
    ]:
        status, _, err = run(capsys, *args, "--db", db)
        assert status == 2 and err.count("\n") == 1 and said in err, err


def test_a_copy_already_in_the_bot_store_is_never_replaced(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "arena-bots" / "reader" / "1"  # e.g. another database's version
    other.mkdir(parents=True)
    (other / "bot.py").write_text("theirs")
    status, _, err = run(capsys, "bot", "add", str(make_bot(tmp_path / "src")), "--db", db)
    assert status == 2 and "exists already in the bot store" in err
    assert [p.name for p in other.iterdir()] == ["bot.py"]
    assert (other / "bot.py").read_text() == "theirs"
    assert run(capsys, "bot", "list", "--db", db)[1].splitlines()[1:] == []


def test_the_build_runs_in_the_copy_and_its_output_is_kept(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    source = make_bot(tmp_path / "src", extra="build = \"sh -c 'echo built > made.txt'\"")
    assert run(capsys, "bot", "add", str(source), "--db", db)[0] == 0
    assert (tmp_path / "arena-bots" / "reader" / "1" / "made.txt").read_text() == "built\n"
    assert not (source / "made.txt").exists()


def test_bad_bot_references_are_one_line(tmp_path: Path, db: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "bot", "add", str(make_bot(tmp_path / "src")), "--db", db)
    for args, needle in [
            (("tournament", *QUICK, "-b", "reader@7", "-b", f"r={RANDOM}"), "no version '7'"),
            (("tournament", *QUICK, "-b", "ghost@1", "-b", f"r={RANDOM}"), "no stored bot"),
            (("bot", "show", "ghost"), "no stored bot 'ghost'"),
            (("bot", "retire", "reader@9"), "no version '9'")]:
        status, _, err = run(capsys, *args, "--db", db)
        assert status == 2 and needle in err and err.count("\n") == 1, (args, err)
    status, _, err = run(capsys, "bot", "add", str(tmp_path / "src"),
                         "--db", "postgresql://nobody@nowhere/db")
    assert status == 2 and "--bot-store DIR is required" in err


# -- playing versions ----------------------------------------------------------------------

def test_a_stored_bot_plays_under_its_label(tmp_path: Path, db: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "bot", "add", str(make_bot(tmp_path / "src")), "--db", db)
    status, _, err = run(capsys, "tournament", *QUICK, "-b", "reader", "-b", f"r={RANDOM}",
                         "--db", db)
    assert status == 0, err
    assert sorted(seats(db)) == [["r@1", "reader@1"], ["reader@1", "r@1"]]
    status, out, _ = run(capsys, "play", "-g", "furious-five", "-o", "rounds=1", "--seed", "2",
                         "--sandbox", "none", "--db", db, "reader@1", f"r={RANDOM}")
    assert status == 0 and out.startswith("seat 0: reader@1")
    store = Store(db)
    try:
        assert active_entrants(store, "five") == []  # not checked yet
        assert [s.name for s in active_entrants(store, "five", checked=False)] == ["reader@1"]
        assert active_entrants(store, "octablitz", checked=False) == []
    finally:
        store.close()


def test_ad_hoc_versions_are_reused_until_their_files_change(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "mine.py"
    script.write_text("import runpy\nrunpy.run_module('sample_bots.random_bot', "
                      "run_name='__main__')\n")
    bots = ("-b", f"mine={sys.executable} {script}", "-b", f"r={RANDOM}")
    assert run(capsys, "tournament", *QUICK, *bots, "--db", db)[0] == 0
    assert run(capsys, "tournament", *QUICK, *bots, "--db", db)[0] == 0
    script.write_text(script.read_text() + "# faster now\n")
    assert run(capsys, "tournament", *QUICK, *bots, "--db", db)[0] == 0
    assert [sorted(s) for s in seats(db)[::2]] == [["mine@1", "r@1"], ["mine@1", "r@1"],
                                                    ["mine@2", "r@1"]]
    assert run(capsys, "bot", "list", "--db", db)[1].count("mine@") == 2


def test_play_db_stores_one_program_in_two_seats_as_one_version(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "play", "-g", "furious-five", "-o", "rounds=2", "--seed", "4",
                         "--sandbox", "none", "--db", db, RANDOM, RANDOM)
    assert status == 0 and out.count("random_bot@1") == 2
    assert seats(db) == [["random_bot@1", "random_bot@1"]]
    store = Store(db)
    try:
        assert [b["name"] for b in store.bots()] == ["random_bot@1"]
        index = render_report(store, tmp_path / "report")  # copes with a self-pair
        assert "random_bot@1" in index.read_text()
    finally:
        store.close()


@pytest.mark.skipif(bwrap_problem() is not None, reason="needs bubblewrap")
def test_the_sandbox_shows_a_stored_bot_its_directory_read_only(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "bot", "add", str(make_bot(tmp_path / "w", "writer", "--write")), "--db", db)
    run(capsys, "bot", "add", str(make_bot(tmp_path / "r", "reader")), "--db", db)
    status, _, err = run(capsys, "tournament", "-g", "furious-five", "-o", "rounds=1", "-n", "2",
                         "-j", "1", "--sandbox", "bwrap", "-b", "writer", "-b", "reader",
                         "--db", db)
    assert status == 3, err
    faulted = [line for line in err.splitlines() if line.startswith("arena: bot ")]
    assert faulted == ["arena: bot 'writer@1' faulted: crash x2; last stderr line: "
                       "\"OSError: [Errno 30] Read-only file system: 'written.txt'\""]
    assert not (tmp_path / "arena-bots" / "writer" / "1" / "written.txt").exists()


# -- the migration -------------------------------------------------------------------------

def test_a_database_at_r0002_keeps_its_results_as_unversioned_bots(db: str) -> None:
    store = Store(db)
    tid = new_tournament(store)
    store.save_game(tid, 0, 0, {}, result())
    store.close()
    engine = create_engine(db)
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0002")
        connection.execute(text("UPDATE bots SET version = '0.9' WHERE name = 'a'"))
    engine.dispose()
    assert revision(db) == "0002"
    store = Store(db)
    try:
        assert revision(db) == HEAD_REVISION
        (game,) = store.games()
        assert game.seats == ["a", "b", "c"] and game.faults[0]["bot"] == "a"
        versions = {v.label: v for v in store.bot_versions()}
        assert list(versions) == ["a", "b", "c"]
        assert (versions["a"].base, versions["a"].version, versions["a"].reported) == (
            "a", "", "0.9")
        assert store.next_bot_version("a") == "1"
    finally:
        store.close()


def ladder_tables(db: str) -> list[list[str]]:
    store = Store(db)
    try:
        return [table for t in store.tournaments() if t["kind"] == "ladder"
                for table in t["tables"]]
    finally:
        store.close()


def test_a_ladder_takes_the_stored_versions_that_passed_their_check(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Stored bots join a ladder once ``arena check-bot`` passed them in its game,
    and leave it when retired; read anew before every table."""
    for name in ("alpha", "beta", "gamma"):
        status, _, err = run(capsys, "bot", "add", str(make_bot(tmp_path / name, name)),
                             "--db", db)
        assert status == 0, err
    quick = ("-o", "rounds=1", "--sandbox", "none", "--db", db)
    for name in ("alpha", "beta"):
        status, out, err = run(capsys, "check-bot", "-b", name, "-g", "furious-five", *quick)
        assert status == 0 and "PASSED" in out, err
    ladder = ("ladder", "-g", "furious-five", "-k", "2", "-j", "1", "--no-report", *quick)
    status, _, err = run(capsys, *ladder, "--max-groups", "2")
    assert status == 0, err
    assert [sorted(table) for table in ladder_tables(db)] == [["alpha@1", "beta@1"]] * 2
    assert run(capsys, "bot", "retire", "beta", "--db", db)[0] == 0
    status, _, err = run(capsys, "check-bot", "-b", "gamma", "-g", "furious-five", *quick)
    assert status == 0, err
    status, _, err = run(capsys, "ladder", "--resume", "3", "--max-groups", "4", "-j", "1",
                         "--no-report", "--db", db)
    assert status == 0, err
    assert [sorted(table) for table in ladder_tables(db)[2:]] == [["alpha@1", "gamma@1"]] * 2


def test_version_against_version_match_and_the_versions_on_a_bot_page(
        tmp_path: Path, db: str, capsys: pytest.CaptureFixture[str]) -> None:
    """'Is v2 better than v1?': the SPRT match between two stored versions of
    one bot, and each version's page lists both with their ratings."""
    source = make_bot(tmp_path / "src")
    assert run(capsys, "bot", "add", str(source), "--db", db)[1] == "added reader@1\n"
    with (source / "bot.py").open("a") as script:
        script.write("# version 2\n")
    assert run(capsys, "bot", "add", str(source), "--db", db)[1] == "added reader@2\n"
    status, out, err = run(capsys, "match", "-g", "furious-five", "-o", "rounds=1",
                           "--sandbox", "none", "-j", "1", "--max-pairs", "2",
                           "-b", "reader@2", "-b", "reader@1", "--db", db)
    assert status == 0, err
    assert out.startswith("match 1: reader@2 vs reader@1, furious-five:")
    assert sorted(map(sorted, seats(db))) == [["reader@1", "reader@2"]] * 4
    store = Store(db)
    try:
        index = render_report(store, tmp_path / "report", bootstrap=10)
    finally:
        store.close()
    (page,) = index.parent.glob("bot-reader-2-*.html")
    html = page.read_text()
    versions = html[html.index('id="versions"'):]
    versions = versions[:versions.index("</section>")]
    assert "reader@1" in versions and "reader@2" in versions
