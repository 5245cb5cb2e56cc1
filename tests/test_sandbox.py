"""The sandbox with real bot processes: what a bot can see, its limits, how it dies."""

from __future__ import annotations

import json
import os
import re
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

from arena.runner import cgroups
from arena.runner.process import BotProcess, BotSpec, start_bot_process
from arena.runner.sandbox import Limits, Sandbox, SandboxError, resolve
from tests.marked import bot_processes, wait_gone
from tests.pg import new_database

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
                                  "PYTHONDONTWRITEBYTECODE", "FIVE_ARENA_BOT", "PYTHONPATH"}
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
    report = proc.stdout.split("seccomp filter (EPERM):")[0]  # then the filter's list
    checks = [line for line in report.splitlines() if line.startswith("  ")]
    assert len(checks) >= 9 and all(line.split()[0] == "ok" for line in checks), proc.stdout
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
    assert "setpriv" not in launch.argv and "--unshare-user" in launch.options
    with launch.command() as (argv, fds):
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                               "--", *argv], env=launch.env, cwd=launch.cwd, pass_fds=fds,
                              capture_output=True, text=True, timeout=30, check=False)
    launch.release()
    assert done.returncode == 0, done.stderr
    processes, limit, written, uid = done.stdout.split("\n")[:4]
    assert int(processes) <= 5  # bwrap, sh, ls, grep: not the host's
    assert limit.split()[2:4] == ["12", "12"]
    assert written == "written" and uid == "65534"


# -- cgroups: memory, processes and CPU time per bot (issue 19) ----------------------------

CGROUPED = cgroups.problem() is None
needs_cgroup = pytest.mark.skipif(not CGROUPED, reason=f"no cgroup here: {cgroups.problem()}")


@needs_cgroup
@pytest.mark.parametrize("kind", ["bwrap", "none"])
def test_shared_memory_past_the_limit_faults(tmp_path: Path, kind: str) -> None:
    """RLIMIT_DATA does not count a shared mapping; the bot's cgroup does."""
    command = bot_script(tmp_path, """
        import mmap, sys
        shared = mmap.mmap(-1, 512 << 20, mmap.MAP_SHARED)
        print("mapped", file=sys.stderr, flush=True)
        for offset in range(0, 512 << 20, 4096):
            shared[offset] = 1
        print("survived", file=sys.stderr, flush=True)
    """)
    bot = trio.run(run_to_exit, command, Sandbox(kind, Limits(memory_mb=256), cgroup=True))
    assert "mapped" in bot.stderr.text() and "survived" not in bot.stderr.text()
    assert bot.exit_description() == "killed by signal SIGKILL"
    assert not any(os.path.exists(d) for d in bot.launch.cgroup.dirs)  # type: ignore[union-attr]


@needs_cgroup
def test_the_private_tmp_counts_against_the_memory_limit(tmp_path: Path) -> None:
    command = bot_script(tmp_path, """
        import os, sys
        with open(os.path.join(os.environ["TMPDIR"], "fill"), "wb") as file:
            for _ in range(40):
                file.write(b"x" * (1 << 20))
        print("tmp filled", file=sys.stderr, flush=True)
        heap = bytearray(40 << 20)
        for offset in range(0, len(heap), 4096):
            heap[offset] = 1
        print("survived", file=sys.stderr, flush=True)
    """)
    limits = Limits(memory_mb=64)
    bot = trio.run(run_to_exit, command, Sandbox("bwrap", limits, cgroup=True))
    assert "tmp filled" in bot.stderr.text() and "survived" not in bot.stderr.text()
    # Per process (no cgroup), 40 MiB of heap fits under 64 MiB: the pages of /tmp are free.
    bot = trio.run(run_to_exit, command, Sandbox("bwrap", limits, cgroup=False))
    assert "survived" in bot.stderr.text()


@needs_cgroup
def test_one_process_limit_for_the_whole_bot(tmp_path: Path) -> None:
    """Without namespaces (``none``), RLIMIT_NPROC counts every process of the
    organiser's user; the cgroup counts the bot's own."""
    command = bot_script(tmp_path, FORK_BOMB)
    bot = trio.run(run_to_exit, command, Sandbox("none", Limits(processes=16), cgroup=True))
    text = bot.stderr.text()
    assert int(text.split("stopped after")[1].split()[0]) < 16, text


FORK_BOMB = """
    import os, sys, time
    made = 0
    try:
        while made < 100:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            made += 1
    except OSError as exc:
        pass
    print("stopped after", made, file=sys.stderr, flush=True)
"""


@needs_cgroup
def test_the_cgroup_lives_exactly_as_long_as_its_bot(tmp_path: Path) -> None:
    command = bot_script(tmp_path, """
        import os, sys, time
        if os.fork() == 0:
            os.setsid()
            time.sleep(60)
        print("ready", file=sys.stderr, flush=True)
        time.sleep(60)
    """)

    async def main() -> tuple[list[str], list[int], list[bool]]:
        async with trio.open_nursery() as nursery:
            bot = await start_bot_process(BotSpec("b", command), nursery, BWRAP)
            group = bot.launch.cgroup
            assert group is not None
            with trio.fail_after(10):
                while "ready" not in bot.stderr.text():
                    await trio.sleep(0.02)
            members = group.pids()
            await bot.aclose()
            return list(group.dirs), members, [os.path.exists(d) for d in group.dirs]

    dirs, members, left = trio.run(main)
    assert len(dirs) == (3 if cgroups.host().version == 1 else 1)  # type: ignore[union-attr]
    assert len(members) >= 4  # bwrap outside, its PID 1, the bot, its child
    assert left == [False] * len(dirs)
    deadline = time.monotonic() + 10  # a killed process may still be exiting
    while (alive := [pid for pid in members if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive, [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in alive]


def running(pid: int) -> bool:
    """Whether ``pid`` is alive and not a zombie awaiting its reaper."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] != b"Z"


@needs_cgroup
def test_cpu_time_of_orphans_is_charged(tmp_path: Path) -> None:
    """Workers re-parented inside the sandbox burn CPU: the cgroup charges it
    to the bot, to the stored move times and, under --clock cpu, its clock."""
    burner = f"{sys.executable} {HERE / 'bots' / 'zoo' / 'orphan_burner.py'}"
    play = ["play", "-g", "furious-five", "--seed", "3", "-o", "rounds=1", "--json",
            "--handshake-time", "10", f"random={sys.executable} -m sample_bots.random_bot"]
    proc = arena_cli(*play, f"burner={burner} burn=0.3 wait=2", "--move-time", "10")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)["record"]
    cpu = [time[1] for step, times in zip(record["actions"], record["times"], strict=True)
           for (seat, _), time in zip(step, times, strict=True) if seat == 1 and time]
    assert sum(cpu) >= 2 * 250_000, cpu  # microseconds: two orphans' 0.3 s each
    # Out of CPU time (0.2 s, all of it the orphan's: the bot itself sleeps) before the
    # wall-clock backstop (4 x 0.2 + 1 s); the bot would reply only after 5 s, so a loaded
    # machine that starves the orphan can only delay the fault, never avoid it.
    proc = arena_cli(*play, f"burner={burner} burn=1 wait=5", "--clock", "cpu",
                     "--move-time", "0.2", "--bank-time", "0")
    assert proc.returncode == 3, proc.stderr
    faults = json.loads(proc.stdout)["faults"]
    assert [(f["seat"], f["kind"]) for f in faults] == [(1, "timeout")], faults
    found = re.search(r"\(([\d.]+) s, ([\d.]+) s CPU\)", faults[0]["detail"])
    assert found, faults
    wall, cpu = map(float, found.groups())
    assert cpu >= 0.2 - 0.01 and wall < 4 * 0.2 + 1, faults  # CPU read in 10 ms ticks


def arena_groups() -> set[str]:
    """Names of the bot groups that exist now (in the first hierarchy)."""
    where = cgroups.host()
    assert where is not None
    folder = where.folders[0]
    return {e.name for e in os.scandir(folder) if e.is_dir()} if os.path.isdir(folder) else set()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new database: a SQLite file, or one on a throw-away PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'arena.db'}"
        return
    yield new_database(request.getfixturevalue("postgres_server_url"))


@needs_cgroup
def test_no_cgroup_is_left_after_a_kill_and_a_resume(tmp_path: Path, database_url: str) -> None:
    db = database_url
    # Slow (1 s on each of its first two requests): alive, in its group, when the arena is
    # killed; the resume's two streams wait 4 s, not 8 s as with 2 s.
    hang = f"{sys.executable} {HERE / 'bots' / 'zoo' / 'orphan_burner.py'} burn=0 wait=1"
    argv = [sys.executable, "-m", "arena.cli", "tournament", "-g", "furious-five", "-k", "2",
            "-n", "4", "-o", "rounds=1", "--db", db, "-j", "1", "-b", f"slow={hang}",
            "-b", f"random={sys.executable} -m sample_bots.random_bot"]
    arena = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
                f"-{arena.pid}-" in name for name in arena_groups()):
            time.sleep(0.05)
        mine = {name for name in arena_groups() if f"-{arena.pid}-" in name}
        assert mine, "the arena made no cgroup"
        arena.send_signal(signal.SIGKILL)
        arena.wait()
    finally:
        arena.kill()
        arena.wait()
    assert mine & arena_groups(), "left behind by the kill, as expected of a kill -9"
    stale = {name for name in arena_groups() if cgroups.owner_dead(name)}
    resume = subprocess.Popen([sys.executable, "-m", "arena.cli", "tournament", "--resume",
                               "1", "--db", db, "-j", "1"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        _, stderr = resume.communicate(timeout=120)
    finally:
        resume.kill()  # only if it timed out
        resume.wait()
    assert resume.returncode == 0, stderr
    left = arena_groups()
    assert not mine & left, "the resume did not remove the dead arena's groups"
    # Every group dead before the resume is gone, and the resume's own: not those of arenas
    # another test (on another xdist worker) killed meanwhile.
    assert not {name for name in left
                if name in stale or name.split("-")[1:2] == [str(resume.pid)]}, left


# -- what a bot sees of the host (issue 19) -----------------------------------------------

PEEK = """
    import os, sys
    print("CMDLINE", open("/proc/1/cmdline", "rb").read().replace(b"\\0", b" ").decode(),
          file=sys.stderr)
    print("FDS", sorted(os.listdir("/proc/self/fd")), file=sys.stderr)
    for word in sys.argv[1:]:
        try:
            print("READ", word, open(word).read(), file=sys.stderr)
        except OSError as exc:
            print("REFUSED", word, exc.__class__.__name__, file=sys.stderr)
    for folder in sys.argv[1:]:
        if os.path.isdir(folder):
            print("LIST", folder, sorted(os.listdir(folder)), file=sys.stderr)
    sys.stderr.flush()
"""


def peek(command: str, sandbox: Sandbox = BWRAP, cwd: Path | None = None) -> str:
    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return trio.run(run_to_exit, command, sandbox).stderr.text()
    finally:
        os.chdir(before)


def test_the_sandboxs_own_command_line_is_not_shown(tmp_path: Path) -> None:
    command = bot_script(tmp_path, PEEK)
    text = peek(command)
    cmdline = text.split("CMDLINE ")[1].splitlines()[0]
    assert cmdline.startswith("bwrap --args "), cmdline
    assert "--setenv" not in cmdline and "--ro-bind" not in cmdline and "FIVE_ARENA_BOT" \
        not in cmdline, cmdline
    # Only its stdin, stdout, stderr (and the folder it lists): not bwrap's arguments.
    assert text.split("FDS ")[1].splitlines()[0] == "['0', '1', '2', '3']", text


def test_an_honest_bot_in_its_own_folder_with_the_database(tmp_path: Path) -> None:
    """``python bot.py`` from the bot's folder: its helper module and a data file
    of any suffix are there, the database (named as well) is not."""
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "helper.py").write_text("WORD = 'helped'\n")
    (folder / "weights.bin").write_text("weights")
    for name in ("arena.db", "arena.db-wal"):
        (folder / name).write_text("every hand of every game")
    (folder / "bot.py").write_text(textwrap.dedent(PEEK) + textwrap.dedent("""
        import helper
        print("HELPER", helper.WORD, file=sys.stderr, flush=True)
    """))
    tmp_path.chmod(0o755)
    folder.chmod(0o755)
    hidden = (str(folder / "arena.db"), str(folder / "arena.db-wal"))
    sandbox = Sandbox("bwrap", hidden=hidden)
    # From the folder above (from inside it, it would see only the files named:
    # tests/test_side_channels.py); its files are a private copy under /bot.
    text = peek("python mybot/bot.py mybot/weights.bin mybot/arena.db", sandbox, cwd=tmp_path)
    assert "HELPER helped" in text, text
    assert "READ /bot/mybot/weights.bin weights" in text, text
    assert "REFUSED /bot/mybot/arena.db FileNotFoundError" in text, text
    assert "every hand" not in text


def test_mounts_follow_resolved_paths_and_identities(tmp_path: Path) -> None:
    """A program at ORG/bin/prog gets a copy of ORG/bin, not ORG; a script in a
    folder that holds the organiser's working directory gets only itself; a
    folder reached through a symlink still hides the database."""
    org = tmp_path / "org"
    (org / "bin").mkdir(parents=True)
    (org / "notes.txt").write_text("the organiser's notes")
    (org / "bin" / "prog").write_text("#!/bin/sh\nls /proc/1 >/dev/null; "
                                      f"cat {org}/notes.txt >&2; ls {org} >&2; echo done >&2\n")
    (org / "bin" / "prog").chmod(0o755)
    for folder in (tmp_path, org, org / "bin"):
        folder.chmod(0o755)
    for cwd in (org, tmp_path):
        text = peek(str(org / "bin" / "prog"), cwd=cwd)
        assert "done" in text and "the organiser's notes" not in text, text
        assert "No such file" in text.splitlines()[-2], text  # ORG: not even its path

    (org / "work").mkdir()
    (org / "work").chmod(0o755)
    (org / "bot.py").write_text(textwrap.dedent(PEEK))
    text = peek(f"{sys.executable} ../bot.py {org} /bot", cwd=org / "work")
    assert "LIST /bot ['bot.py']" in text and f"LIST {org}" not in text, text

    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)
    (data / "arena.db").write_text("every hand of every game")
    (data / "bot.py").write_text(textwrap.dedent(PEEK))
    (tmp_path / "link").symlink_to(data)
    sandbox = Sandbox("bwrap", hidden=(str(data / "arena.db"),))
    via_link = tmp_path / "link"
    text = peek(f"{sys.executable} {via_link / 'bot.py'} {via_link / 'arena.db'} "
                f"{data / 'arena.db'} {data}", sandbox)
    assert "every hand" not in text, text
    assert "LIST /bot/data ['bot.py']" in text, text


def test_without_cgroups_the_run_says_so_and_limits_per_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A host where no cgroup can be made (here: none mounted where the arena
    looks): the banner and sandbox-check say MISSING, bots still play under
    the per-process limits."""
    from arena.cli import main

    monkeypatch.setattr(cgroups, "ROOT", str(tmp_path / "no-cgroups"))
    cgroups._found.cache_clear()
    try:
        sandbox = resolve("bwrap")
        assert not sandbox.cgroup and "cgroup MISSING" in sandbox.describe()
        assert main(["sandbox-check"]) == 1
        out = capsys.readouterr().out
        assert "MISSING  cgroup per bot" in out, out
        bot = f"{sys.executable} -m sample_bots.random_bot"
        status = main(["play", "-g", "furious-five", "--seed", "3", "-o", "rounds=1", bot, bot])
        err = capsys.readouterr().err
        assert status == 0, err
        assert err.count("cgroup MISSING") == 1, err
        memory_bot = trio.run(run_to_exit, bot_script(tmp_path, """
            import resource, sys
            print("DATA", resource.getrlimit(resource.RLIMIT_DATA)[0], file=sys.stderr)
        """), sandbox)
        assert f"DATA {Limits().memory_mb << 20}" in memory_bot.stderr.text()
    finally:
        cgroups._found.cache_clear()


UNIFIED = f"{cgroups.ROOT}/unified"


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists(f"{UNIFIED}/cgroup.procs"),
                    reason="needs root and a cgroup v2 hierarchy beside v1 (a hybrid host)")
def test_a_cgroup_v2_group_joins_charges_and_kills(tmp_path: Path) -> None:
    """The v2 side of a group (joining, cpu.stat, cgroup.kill, removal) on the
    hybrid host's unified hierarchy, which offers no controllers here (so bots
    get v1 groups): the limits are v2's only untried part."""
    own = cgroups._own_paths()[""].rstrip("/")
    group = cgroups.BotGroup(2, (f"{UNIFIED}{own}/five-arena-test-{os.getpid()}",))
    os.mkdir(group.dirs[0])
    script = textwrap.dedent("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            time.sleep(60)
        end = time.process_time() + 0.3
        while time.process_time() < end:
            pass
        print("spun", flush=True)
        time.sleep(60)
    """)
    process = subprocess.Popen(cgroups.join_argv(group, [sys.executable, "-c", script]),
                               stdout=subprocess.PIPE)
    fd = os.open(group.cpu_file, os.O_RDONLY)
    try:
        assert process.stdout is not None and process.stdout.readline() == b"spun\n"
        assert len(group.pids()) == 2
        assert group.cpu_seconds(fd) >= 0.29
        group.kill()
        process.wait(timeout=10)
        deadline = time.monotonic() + 10
        while not group.remove() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not os.path.exists(group.dirs[0])
    finally:
        os.close(fd)
        process.kill()
        process.wait()
        group.kill()
        group.remove()
