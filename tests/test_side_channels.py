"""Red team, issue 28: what one bot process leaves in kernel state carries
nothing to a later process of the same bot (a later rotation of a deal).

Real bots (``tests/bots/side_channel/``) in the real bubblewrap sandbox, two
processes one after the other, as two rotations of one deal are; each channel
is also shown working where the sandbox does not close it (``--sandbox
none``), so that a test that passes is not one that could not fail.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

import protocol
from arena.games import make_game
from arena.runner import cgroups
from arena.runner.client import TimeControl
from arena.runner.process import BotProcess, BotSpec, start_bot_process
from arena.runner.referee import play_single_game
from arena.runner.sandbox import Limits, Sandbox, editable_traces

HERE = Path(__file__).resolve().parent
BOTS = HERE / "bots" / "side_channel"
PY = sys.executable
BWRAP = Sandbox("bwrap", cgroup=cgroups.problem() is None)
NONE = Sandbox("none")
TRIALS = 20
SLOTS = 8  # cache_bot.SLOTS: chance is 1 in 8


def stored_bot(tmp_path: Path, *scripts: str, data_mb: int = 0) -> Path:
    """A bot directory like a stored version's: the scripts, and ``data.bin``
    of random bytes (flushed to disk) when ``data_mb`` is given."""
    folder = tmp_path / "bot"
    folder.mkdir()
    for script in scripts:
        shutil.copy(BOTS / script, folder / script)
    if data_mb:
        with open(folder / "data.bin", "wb") as file:
            file.write(random.randbytes(data_mb << 20))
            file.flush()
            os.fsync(file.fileno())
    for path in (tmp_path, folder, *folder.iterdir()):
        path.chmod(0o755)  # under root the bot runs as nobody
    return folder


async def run_to_exit(spec: BotSpec, sandbox: Sandbox) -> BotProcess:
    async with trio.open_nursery() as nursery:
        bot = await start_bot_process(spec, nursery, sandbox)
        with trio.fail_after(60):
            await bot.wait()
        await bot.aclose()
    return bot


def stderr_of(command: str, sandbox: Sandbox, directory: Path | None = None) -> str:
    spec = BotSpec("red", command, str(directory) if directory else None)
    return trio.run(run_to_exit, spec, sandbox).stderr.text()


def guesses_right(folder: Path, sandbox: Sandbox) -> int:
    """Trials in which a process read back the slot an earlier one encoded."""
    right = 0
    for _ in range(TRIALS):
        secret = random.randrange(SLOTS)
        # Cold to start with, as memory pressure would leave it (a bot in the
        # sandbox cannot evict it itself: seccomp refuses fadvise).
        fd = os.open(folder / "data.bin", os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        stderr_of(f"python cache_bot.py encode {secret}", sandbox, folder)
        text = stderr_of("python cache_bot.py decode", sandbox, folder)
        guess = int(text.split("GUESS ")[1].split()[0])
        right += guess == secret
    return right


def test_the_page_cache_carries_nothing_to_a_later_process(tmp_path: Path) -> None:
    """(i) One process warms one page of its own (cold) file, the next times
    plain reads of each candidate page.  With the file shared (``none``, or
    bubblewrap without the private copy) that finds the page almost every
    time; from the private copy under ``/bot``, no better than chance (1 in 8:
    at most 8 of 20 right, which chance exceeds with a probability below 1 in
    2000)."""
    folder = stored_bot(tmp_path, "cache_bot.py", data_mb=8)
    for control in (NONE, dataclasses.replace(BWRAP, private_copy=False)):
        shared = guesses_right(folder, control)
        assert shared >= 16, f"the control channel did not work ({shared}/{TRIALS})"
    private = guesses_right(folder, BWRAP)
    assert private <= 8, f"{private}/{TRIALS} right through the sandbox"


def counters(sandbox: Sandbox, folder: Path) -> dict[str, Any]:
    text = stderr_of("python counter_bot.py read", sandbox, folder)
    read: dict[str, Any] = json.loads(text.strip().splitlines()[-1])
    return read


def test_machine_wide_counters_are_constant_between_processes(tmp_path: Path) -> None:
    """(ii) Between two reading processes, a third allocates, faults pages,
    creates files and dentries and spins: every counter file reads the same,
    /sys is not there at all, and meminfo shows the bot's own limit.  The
    same files outside the sandbox move."""
    folder = stored_bot(tmp_path, "counter_bot.py")
    before = counters(BWRAP, folder)
    stderr_of("python counter_bot.py move", BWRAP, folder)
    after = counters(BWRAP, folder)
    assert before == after, {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    assert before["/proc/vmstat"]["size"] == 0 and before["/proc/diskstats"]["size"] == 0
    assert all("refused" in before[path] for path in before if path.startswith("/sys"))
    assert before["/proc/meminfo"]["head"] == f"MemTotal:        {Limits().memory_mb << 10} kB"
    assert before["cpu lines"] == os.cpu_count()  # runtimes that count CPUs there still can

    outside = counters(NONE, folder)
    stderr_of("python counter_bot.py move", NONE, folder)
    moved = counters(NONE, folder)
    assert outside["/proc/vmstat"] != moved["/proc/vmstat"]
    assert outside["/proc/sys/fs/dentry-state"] != moved["/proc/sys/fs/dentry-state"]


def mount_report(command: str, paths: list[Path], directory: Path | None = None
                 ) -> dict[str, Any]:
    """What mount_bot.py saw: ``organiser_lines`` are the lines of its mount
    tables that name one of ``paths`` (given to it in hex)."""
    needles = " ".join(f"hex:{str(path).encode().hex()}" for path in paths)
    text = stderr_of(f"{command} {needles}", BWRAP, directory)
    report: dict[str, Any] = json.loads(text.splitlines()[-1])
    assert report["lines"] > 10  # it did read its mount tables
    return report


def test_the_mount_table_shows_no_organiser_path(tmp_path: Path) -> None:
    """(iii) A stored bot's files are at /bot, not at the bot store's path, and
    the arena's packages (here from its checkout, installed in editable mode)
    at /arena/python, a copy: its mount table names neither the store nor the
    checkout, and the installation's hooks that name the checkout read empty."""
    folder = stored_bot(tmp_path, "mount_bot.py")
    checkout = Path(protocol.__file__).resolve().parents[1]
    report = mount_report("python mount_bot.py", [tmp_path, checkout], folder)
    assert report["cwd"] == "/bot" and report["argv"] == ["/bot/mount_bot.py"]
    assert report["beside"] == ["mount_bot.py"]
    assert report["organiser_lines"] == []
    assert report["protocol"] == "/arena/python/protocol/__init__.py"
    assert sorted(report["traces"]) == list(editable_traces())
    assert set(report["traces"].values()) <= {0}


COPY_AND_DIE = """
import os, signal, sys
from arena.runner.sandbox import packages_copy
print(packages_copy()[0], flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_packages_copy_of_a_killed_arena_is_removed_by_the_next(tmp_path: Path) -> None:
    """Each arena process copies the editable packages once; a normal exit
    deletes its copy, and a copy whose process was killed (no exit handler
    ran) is deleted by the next arena process that makes one, while a copy of
    a live process is kept."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}

    def copy(how: str) -> Path:
        done = subprocess.run([sys.executable, "-c", COPY_AND_DIE, how], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        return Path(done.stdout.strip()).parent

    killed = copy("kill")
    assert killed.is_dir() and killed.parent == tmp_path
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as live:
        living = tmp_path / f"arena-python-{live.pid}-x"
        living.mkdir()
        ended = copy("exit")
        live.kill()
    assert not killed.exists() and not ended.exists()
    assert living.is_dir()


def test_an_adhoc_bot_in_the_working_directory_sees_only_its_named_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """(iii) ``python mount_bot.py weights.bin`` run where the organiser works
    (the database, notes beside it): the bot gets those two files alone, a
    hint once, and no path of the working directory in its mount table."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(BOTS / "mount_bot.py", work / "mount_bot.py")
    for name in ("weights.bin", "notes.txt", "arena.db"):
        (work / name).write_text(name)
    for path in (tmp_path, work, *work.iterdir()):
        path.chmod(0o755)
    monkeypatch.chdir(work)
    for _ in range(2):
        report = mount_report("python mount_bot.py weights.bin", [work])
        assert report["beside"] == ["mount_bot.py", "weights.bin"], report["beside"]
        assert report["argv"] == ["/bot/mount_bot.py", "/bot/weights.bin"]
        assert report["organiser_lines"] == []
    hints = [line for line in capsys.readouterr().err.splitlines() if "folder of its own" in line]
    assert len(hints) == 1, hints


@pytest.mark.skipif(cgroups.problem() is not None, reason=f"no cgroup: {cgroups.problem()}")
def test_a_memory_hog_is_a_memory_fault(tmp_path: Path) -> None:
    """(iv) A bot killed by its cgroup at the memory limit (shared memory, which
    RLIMIT_DATA does not count) is a ``memory`` fault naming the limit."""
    folder = stored_bot(tmp_path, "shared_memory_hog.py")
    sandbox = Sandbox("bwrap", Limits(memory_mb=128), cgroup=True)
    hog = BotSpec("hog", "python shared_memory_hog.py", str(folder))
    honest = BotSpec("random", f"{PY} -m sample_bots.random_bot")
    game = make_game("five", 2)
    control = TimeControl(handshake=20.0, move=5.0, bank=10.0)
    result = trio.run(play_single_game, game, 7, [hog, honest], control, sandbox)
    assert [(f.seat, f.kind) for f in result.faults] == [(0, "memory")], result.faults
    assert result.faults[0].detail == "killed at its memory limit of 128 MiB"
    assert "safety cap" not in result.faults[0].stderr_tail
