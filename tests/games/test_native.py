"""The engines both ways: compiled with mypyc (``bash setup.sh``) and pure Python
(``ARENA_PURE=1``, and whenever a source changed since it was compiled).

The stored-games replay and the rule and property tests run in a process of
their own each way, the way asserted there (:mod:`tests.games.conftest`); the
compiled way fails, saying to run ``bash setup.sh``, when these sources were not
compiled.  A sandboxed bot that imports the engines gets the compiled ones too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import trio

from arena.games import native, native_build
from arena.runner.process import BotSpec, start_bot_process
from arena.runner.sandbox import resolve
from tests.games.conftest import EXPECT_VARIABLE, engines_in_use

ROOT = Path(__file__).resolve().parents[2]
#: The replay of every stored game, and the rule and property tests of every game.
RULE_TESTS = ["tests/games/test_stored_games.py", "tests/games/test_contract.py",
              "tests/games/test_hidden_info.py", "tests/games/test_golden.py",
              *sorted(str(path.relative_to(ROOT)) for path in (ROOT / "tests/games").glob(
                  "test_*.py") if path.stem.removeprefix("test_") in {
                      "five", "five_or_less", "five_card_rummy", "furious_five",
                      "rummy_five", "octablitz"})]
NOT_BUILT = ("the compiled engines are not built for these sources: run `bash setup.sh` "
             "(it compiles them with mypyc)")




def environment(**env: str) -> dict[str, str]:
    """This process's environment without ``ARENA_PURE`` (the suite may run with
    it), plus ``env``."""
    return {**{k: v for k, v in os.environ.items() if k != native.PURE_VARIABLE}, **env}


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=environment(**env),
                          stdin=subprocess.DEVNULL)


def rule_tests(way: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Every rule test run in a process of its own, its engines asserted to be ``way``."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider",
         *RULE_TESTS], capture_output=True, text=True, timeout=1800, cwd=ROOT,
        stdin=subprocess.DEVNULL, env=environment(**env, **{EXPECT_VARIABLE: way}))


def test_the_rules_hold_in_pure_python() -> None:
    proc = rule_tests("pure", **{native.PURE_VARIABLE: "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout[-500:]


def test_the_rules_hold_compiled() -> None:
    """The suite's own run of the rule tests is the compiled way where the engines run
    compiled in this process (set-up builds them); else they run again compiled in a
    process of their own."""
    assert native.built(), NOT_BUILT
    if engines_in_use() == "compiled":
        return
    proc = rule_tests("compiled")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout, proc.stdout[-500:]


def test_the_compiled_engines_load_and_say_so() -> None:
    assert native.built(), NOT_BUILT
    probe = ("import arena.games as g, arena.games.five\n"
             "from arena.games import native\n"
             "print(native.status()); print(*native.compiled_modules())")
    proc = run_python(probe)
    assert proc.returncode == 0, proc.stderr
    status, modules = proc.stdout.splitlines()
    assert status.startswith("engines: compiled (mypyc"), status
    assert set(modules.split()) == {"arena.games.base", "arena.games.cards",
                                    "arena.games.five"}
    version = subprocess.run([sys.executable, "-m", "arena", "--version"], capture_output=True,
                             text=True, timeout=120, cwd=ROOT, stdin=subprocess.DEVNULL,
                             env=environment())
    assert version.stdout.splitlines()[1].startswith("engines: compiled"), version.stdout


def test_arena_pure_forces_pure_python() -> None:
    proc = run_python("import arena.games.five\nfrom arena.games import native\n"
                      "print(native.status()); print(native.compiled_modules())",
                      **{native.PURE_VARIABLE: "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["engines: pure Python (ARENA_PURE=1)", "[]"]


def test_an_edited_source_runs_pure_python(tmp_path: Path) -> None:
    """A copy of the package whose engine differs by one comment from what was
    compiled: its digest names no compiled group, so nothing compiled is used."""
    assert native.built(), NOT_BUILT
    for top in ("arena", "protocol"):
        shutil.copytree(ROOT / top, tmp_path / top,
                        ignore=shutil.ignore_patterns("__pycache__"))
    edited = tmp_path / "arena" / "games" / "five.py"
    edited.write_text(edited.read_text() + "# edited after compiling\n")
    code = ("import arena.games.five\nfrom arena.games import native\n"
            "print(native.status()); print(native.compiled_modules())")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
                          env=environment(PYTHONPATH=str(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "engines: pure Python (not compiled for these sources: bash setup.sh compiles them)",
        "[]"]


SANDBOXED = textwrap.dedent("""
    import sys
    import arena.games.five
    from arena.games import make_game, native
    from arena.games.loop import default_choose, play
    play(make_game("five", 3).new_state(7), default_choose)
    print(native.status(), *native.compiled_modules(), file=sys.stderr)
""")


async def _sandboxed_stderr(script: Path) -> str:
    async with trio.open_nursery() as nursery:
        bot = await start_bot_process(BotSpec("probe", f"{sys.executable} {script}"),
                                      nursery, resolve("bwrap"))
        with trio.fail_after(60):
            await bot.wait()
        await bot.aclose()
    return bot.stderr.text()


def test_a_sandboxed_bot_imports_the_compiled_engines(tmp_path: Path) -> None:
    assert native.built(), NOT_BUILT
    script = tmp_path / "bot.py"
    script.write_text(SANDBOXED)
    script.chmod(0o644)
    tmp_path.chmod(0o755)
    text = trio.run(_sandboxed_stderr, script).strip().splitlines()[-1]
    assert text.startswith("engines: compiled (mypyc"), text
    assert "arena.games.five" in text.split() and "arena.games.loop" in text.split(), text


@pytest.mark.parametrize("module", native.MODULES)
def test_every_compiled_module_has_its_source(module: str) -> None:
    assert native.source_path(module).is_file()


def test_compiled_engines_made_from_python_run_their_init() -> None:
    """mypyc gives a compiled subclass of a serializable class an empty tp_init
    (mypyc/mypyc#979): each engine's Game and State subclass is marked so that
    Python-level calls still run ``__init__``."""
    assert native.built(), NOT_BUILT
    probe = ("from arena.games import game_class, game_names, make_game, native\n"
             "assert native.compiled_in_use(), native.status()\n"
             "for name in game_names():\n"
             "    game = game_class(name)(3)\n"
             "    state = type(make_game(name, 3).new_state(7))(game, 7)\n"
             "    print(name, game.num_players, state.num_players, state.seed,\n"
             "          state.deciding_seats() != ())\n")
    proc = run_python(probe)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 6 and all(line.endswith(" 3 3 7 True") for line in lines), lines


def test_a_build_prunes_old_groups_but_keeps_recent_ones(tmp_path: Path) -> None:
    """Old groups beyond the newest KEEP go; a group built in the last hours stays
    (another checkout being worked on uses it), as does the new one."""
    now = time.time()
    ages = {"new": 0, "recent-a": 60, "recent-b": 120, "recent-c": 600, "recent-d": 3600,
            "old-a": native_build.RECENT + 60, "old-b": 2 * native_build.RECENT,
            ".staging-old": 2 * 86400, ".staging-young": 60}
    for name, age in ages.items():
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (now - age, now - age))
    native_build._prune(tmp_path, keep=tmp_path / "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".staging-young", "new", "recent-a", "recent-b", "recent-c", "recent-d"]
