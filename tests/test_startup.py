"""What ``arena`` costs before it does anything: ``--version`` and ``--help`` load none
of the heavy libraries (the command groups' modules are imported only for their
command), and the command table that ``--help`` shows is the one the modules register."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import COMMANDS, build_parser

#: Libraries that cost tens to hundreds of milliseconds of CPU to import.
HEAVY = ("sqlalchemy", "trio", "numpy", "scipy", "jinja2", "distributed", "dask",
         "alembic", "tqdm", "msgpack", "starlette", "hypercorn")


#: Runs ``arena ARGS`` by its ``main``, then prints every module it loaded.
PROBE = """
import sys
from arena.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("MODULES", *sorted(sys.modules), file=sys.stderr)
"""


def imported_modules(*args: str, cwd: Path | None = None
                     ) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``arena ARGS`` in a process of its own, and every module it imported."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=cwd)
    listed = [line for line in proc.stderr.splitlines() if line.startswith("MODULES ")]
    assert listed, proc.stderr
    return proc, set(listed[-1].split()[1:])


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_no_heavy_library(flag: str) -> None:
    proc, modules = imported_modules(flag)
    assert proc.returncode == 0, proc.stderr
    assert "arena.cli" in modules  # the probe sees imports at all
    heavy = {name for name in modules if name.split(".")[0] in HEAVY}
    assert not heavy, sorted(heavy)
    if flag == "--version":
        assert proc.stdout.startswith("arena ") and "database schema" in proc.stdout
    else:
        assert all(name in proc.stdout for name in COMMANDS)


#: What a small tournament does not need (a package and its submodules): the closing
#: standings' statistics are numpy's (not its masked arrays), the store is SQLAlchemy
#: Core (the ORM is the server's accounts'), a new SQLite database is made without
#: migrating (nor PostgreSQL's dialect), no bar is drawn off a terminal, no
#: page is rendered, no cluster started, no bot.toml read, no name mistyped.
NOT_FOR_A_TOURNAMENT = ("scipy", "alembic", "mako", "jinja2", "tqdm", "distributed", "dask",
                        "starlette", "hypercorn", "numpy.ma", "sqlalchemy.dialects.postgresql",
                        "tomllib", "difflib", "sqlalchemy.orm", "arena.store.schema")


def within(name: str, packages: tuple[str, ...]) -> bool:
    """Is module ``name`` one of ``packages`` or in one of them?"""
    return any(name == package or name.startswith(package + ".") for package in packages)


def test_a_small_tournament_imports_only_what_it_uses(tmp_path: Path) -> None:
    random_bot = f"{sys.executable} -m sample_bots.random_bot"
    proc, modules = imported_modules(
        "tournament", "-g", "five", "-k", "2", "-n", "2", "-j", "1", "--sandbox", "none",
        "-b", f"a={random_bot}", "-b", f"b={random_bot}",
        "--db", f"sqlite:///{tmp_path / 'new.db'}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "rank" in proc.stderr and "a@1" in proc.stderr  # the closing standings
    assert {"sqlalchemy", "trio", "numpy"} <= {name.split(".")[0] for name in modules}
    needless = {name for name in modules if within(name, NOT_FOR_A_TOURNAMENT)}
    assert not needless, sorted(needless)


def test_a_command_imports_its_own_group_only() -> None:
    proc, loaded = imported_modules("new-bot", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "arena.cli.newbot" in loaded
    assert not {"arena.cli.tournament", "arena.cli.serve", "arena.cli.ladder"} & loaded


def test_the_help_table_is_what_the_modules_register() -> None:
    parser = build_parser(every=True)
    sub = next(action for action in parser._actions
               if isinstance(action, argparse._SubParsersAction))
    registered = {choice.dest: choice.help for choice in sub._choices_actions}
    assert registered == {name: entry.help for name, entry in COMMANDS.items()}


@pytest.mark.parametrize("args,needle", [
    (["--nope"], "unrecognized arguments: --nope"),
    (["--nope", "rules"], "unrecognized arguments: --nope"),
    ([], "no command"),
    (["tournamnt"], "invalid choice: 'tournamnt'"),
])
def test_a_bad_first_word_is_named_on_one_line(args: list[str], needle: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), proc.stderr
    assert needle in lines[0]
