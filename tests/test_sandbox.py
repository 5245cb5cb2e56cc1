"""The sandbox with real bot processes: what a bot can see, its limits, how it dies."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from arena.runner.process import BotProcess, BotSpec, start_bot_process
from arena.runner.sandbox import Limits, Sandbox, SandboxError, resolve
from tests.marked import bot_processes, wait_gone

HERE = Path(__file__).resolve().parent
PROBE = HERE / "bots" / "probe_bot.py"
BWRAP = resolve("bwrap")
NONE = resolve("none")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


async def run_to_exit(command: str, sandbox: Sandbox, timeout: float = 20) -> BotProcess:
    """Start a bot, wait until it exits by itself, close it; the process."""
    async with trio.open_nursery() as nursery:
        bot = await start_bot_process(BotSpec("probe", command), nursery, sandbox)
        with trio.fail_after(timeout):
            await bot.wait()
        await bot.aclose()
    return bot


def probe(sandbox: Sandbox, program: Path, secret: Path, port: int) -> dict[str, object]:
    bot = trio.run(run_to_exit, f"{sys.executable} {program} {secret} {port}", sandbox)
    line = bot.stderr.text().strip().splitlines()[-1]
    report: dict[str, object] = json.loads(line)
    return report


def test_bwrap_hides_the_host(tmp_path: Path, listener: socket.socket) -> None:
    # The database beside the bot's own program, and named on its command line.
    secret = tmp_path / "arena.db"
    secret.write_text("every hand of every game")
    program = tmp_path / "probe_bot.py"
    program.write_text(PROBE.read_text())
    tmp_path.chmod(0o755)  # under root the bot runs as nobody
    sandbox = Sandbox("bwrap", hidden=(str(secret),))
    report = probe(sandbox, program, secret, listener.getsockname()[1])
    assert str(report["read_secret"]).startswith("refused")
    assert str(report["connect"]).startswith("refused")
    with pytest.raises(BlockingIOError):
        listener.accept()
    assert report["write_home"] == "ok: 5"
    assert str(report["write_own_dir"]).startswith("refused")
    assert str(report["write_var_tmp"]).startswith("refused")
    assert report["cwd"] == "/tmp"
    assert len(report["pids"]) <= 3, report["pids"]  # type: ignore[arg-type]
    assert report["uid"] != 0
    assert set(report["env"]) <= {"PATH", "HOME", "TMPDIR", "LANG", "PWD",  # type: ignore[arg-type]
                                  "PYTHONDONTWRITEBYTECODE", "FIVE_ARENA_BOT"}
    limits = Limits()
    assert report["nproc"] == limits.processes
    assert report["data"] == limits.memory_mb << 20
    assert report["nofile"] == limits.open_files
    assert report["core"] == 0
    assert not (tmp_path / "token").exists()


def test_none_still_limits_and_clears(tmp_path: Path, listener: socket.socket,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORGANISER_SECRET", "x")
    secret = tmp_path / "secret"
    secret.write_text("x")
    program = tmp_path / "probe_bot.py"
    program.write_text(PROBE.read_text())
    report = probe(NONE, program, secret, listener.getsockname()[1])
    assert "ORGANISER_SECRET" not in report["env"]  # type: ignore[operator]
    assert report["data"] == Limits().memory_mb << 20
    assert report["core"] == 0
    home = str(report["cwd"])
    assert report["write_home"] == "ok: 5"
    assert not os.path.exists(home), "the private directory outlived the bot"


def test_limits_are_configurable() -> None:
    limits = Limits.parse(["memory_mb=256", "processes=8"])
    assert (limits.memory_mb, limits.processes, limits.open_files) == (256, 8, 256)
    for bad in (["memory=1"], ["processes=0"], ["files"], ["open_files=x"]):
        with pytest.raises(SandboxError):
            Limits.parse(bad)


def bot_script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "bot.py"
    path.write_text(textwrap.dedent(body))
    tmp_path.chmod(0o755)  # under root the bot runs as nobody
    return f"{sys.executable} {path}"


def test_fork_bomb_is_contained(tmp_path: Path) -> None:
    command = bot_script(tmp_path, """
        import os, sys, time
        made = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                made += 1
        except OSError as exc:
            print("stopped after", made, exc, file=sys.stderr, flush=True)
    """)
    sandbox = Sandbox("bwrap", Limits(processes=16))
    bot = trio.run(run_to_exit, command, sandbox)
    text = bot.stderr.text()
    assert "stopped after" in text
    assert int(text.split("stopped after")[1].split()[0]) < 16


def test_memory_hog_dies_alone(tmp_path: Path) -> None:
    command = bot_script(tmp_path, """
        import sys
        hoard = []
        try:
            while True:
                hoard.append(bytearray(16 << 20))
        except MemoryError:
            print("refused at", len(hoard) * 16, "MiB", file=sys.stderr, flush=True)
    """)
    limits = Limits(memory_mb=256)
    for sandbox in (Sandbox("bwrap", limits), Sandbox("none", limits)):
        bot = trio.run(run_to_exit, command, sandbox)
        assert "refused at" in bot.stderr.text()
        assert int(bot.stderr.text().split("refused at")[1].split()[0]) <= 256


ESCAPEE = """
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "{token}"])
        os._exit(0)
    print("ready", flush=True, file=sys.stderr)
    time.sleep(60)
"""


@pytest.mark.parametrize("sandbox", [BWRAP, NONE], ids=["bwrap", "none"])
def test_setsid_double_fork_escapee_dies_with_its_bot(tmp_path: Path, sandbox: Sandbox) -> None:
    token = str(4000 + os.getpid() % 1000 + (sandbox.kind == "none"))
    command = bot_script(tmp_path, ESCAPEE.format(token=token))

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            bot = await start_bot_process(BotSpec("escapee", command), nursery, sandbox)
            with trio.fail_after(10):
                while "ready" not in bot.stderr.text() or not bot_processes(token):
                    await trio.sleep(0.05)
            await bot.aclose()

    trio.run(main)
    assert not wait_gone(token)


def test_bots_die_with_a_killed_arena(tmp_path: Path) -> None:
    token = str(5000 + os.getpid() % 1000)
    command = bot_script(tmp_path, ESCAPEE.format(token=token))
    arena = tmp_path / "organiser.py"
    arena.write_text(textwrap.dedent(f"""
        import trio
        from arena.runner.process import BotSpec, start_bot_process
        from arena.runner.sandbox import resolve

        async def main():
            async with trio.open_nursery() as nursery:
                await start_bot_process(BotSpec("b", {command!r}), nursery, resolve("bwrap"))
                await trio.sleep(60)

        trio.run(main)
    """))
    process = subprocess.Popen([sys.executable, str(arena)])
    try:
        deadline = time.monotonic() + 15
        while not bot_processes(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bot_processes(token), "the bot did not start"
        time.sleep(12)  # outlive trio's idle worker threads: the bot must not die early
        assert bot_processes(token), "the bot died before the arena did"
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert not wait_gone(token)
    finally:
        process.kill()
        process.wait()


def test_cpu_time_of_the_tree(tmp_path: Path) -> None:
    command = bot_script(tmp_path, """
        import os, sys, time
        def spin(seconds):
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
        spin(0.5)
        print("parent spun", file=sys.stderr, flush=True)
        if os.fork() == 0:
            spin(0.5)
            print("child spun", file=sys.stderr, flush=True)
            time.sleep(60)
        time.sleep(60)
    """)

    async def main() -> tuple[float, float, float]:
        async with trio.open_nursery() as nursery:
            bot = await start_bot_process(BotSpec("spin", command), nursery, BWRAP)
            with trio.fail_after(20):
                while "parent spun" not in bot.stderr.text():
                    await trio.sleep(0.02)
                parent = bot.cpu_seconds(refresh=True)
                while "child spun" not in bot.stderr.text():
                    await trio.sleep(0.02)
            both = bot.cpu_seconds(refresh=True)
            await trio.sleep(0.5)
            idle = bot.cpu_seconds(refresh=True)
            await bot.aclose()
            return parent, both, idle

    parent, both, idle = trio.run(main)
    assert parent >= 0.45
    assert both >= parent + 0.45
    assert idle - both < 0.05


def test_bwrap_missing_is_said_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("prlimit", "setpriv"):
        (bin_dir / tool).symlink_to(f"/usr/bin/{tool}")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr("arena.runner.sandbox._BWRAP_PROBLEM", [])
    with pytest.raises(SandboxError, match="bubblewrap is not installed"):
        resolve("bwrap")
    assert resolve("auto").kind == "none"


def arena_cli(*args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CI": "true"}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=120, env=env, check=False)


def test_sandbox_check_reports_every_protection() -> None:
    proc = arena_cli("sandbox-check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checks = [line for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert len(checks) >= 8 and all(line.split()[0] == "ok" for line in checks), proc.stdout
    proc = arena_cli("sandbox-check", "--sandbox", "none")
    assert proc.returncode == 1
    assert "MISSING  no network" in proc.stdout


def test_without_bubblewrap_the_run_says_so(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("prlimit", "setpriv"):
        (bin_dir / tool).symlink_to(f"/usr/bin/{tool}")
    bot = f"{sys.executable} -m sample_bots.random_bot"
    play = ("play", "-g", "furious-five", "--seed", "3", "-o", "rounds=1", bot, bot)
    proc = arena_cli(*play, "--sandbox", "bwrap", path=str(bin_dir))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "arena: error: --sandbox bwrap: bubblewrap is not installed (apt-get install bubblewrap)"]
    proc = arena_cli(*play, path=str(bin_dir))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("arena: WARNING: bots run in NO sandbox") == 1
    proc = arena_cli(*play)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("arena: bots run in bubblewrap sandbox") == 1


def test_the_unprivileged_organisers_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bwrap command line an organiser who is not root gets (its own user
    namespace, no setpriv), run here as nobody."""
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    script = ("ls /proc | grep -c '^[0-9]'; grep 'Max processes' /proc/self/limits; "
              "echo written > $HOME/x && cat $HOME/x; id -u")
    launch = Sandbox("bwrap", Limits(processes=12)).launch(["sh", "-c", script])
    assert "setpriv" not in launch.argv and "--unshare-user" in launch.argv
    done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                           *launch.argv], env=launch.env, cwd=launch.cwd, capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    processes, limit, written, uid = done.stdout.split("\n")[:4]
    assert int(processes) <= 5  # bwrap, sh, ls, grep: not the host's
    assert limit.split()[2:4] == ["12", "12"]
    assert written == "written" and uid == "65534"
