"""The bot zoo (issue 7): every misbehaving bot of ``tests/bots/zoo/`` plays a
real tournament through the ``arena`` CLI, in the bubblewrap sandbox.

For each bot the test checks that the tournament completes with every game
stored, that the right fault is recorded (or, for what the sandbox blocks, that
the attack had no effect and the bot saw it refused), that the other bots never
fault, that no process survives the CLI, and that the arena's own memory stays
bounded while it runs.  The snooping bots report each attempt on stderr, which
the arena stores with every game; the test never relies on that alone: it also
checks the host (token files, its own listening sockets) for traces.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from arena.store.database import Store, StoredGame
from arena.store.records import GameRecord

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ZOO = HERE / "bots" / "zoo"
PY = sys.executable
RANDOM = f"{PY} -m sample_bots.random_bot"
SANDBOX = ("--sandbox", "auto")
MOVE, BANK, HANDSHAKE = 0.5, 1.0, 3.0
ARENA_MEMORY_LIMIT_KB = 400 * 1024
TRACEBACK = "Traceback (most recent call last)"
ZOO_NAME = "zoo"
#: How games and faults name the zoo bot: ``-b zoo=...`` is ad-hoc version 1 (docs/bots.md).
ZOO_LABEL = f"{ZOO_NAME}@1"


def label(name: str) -> str:
    """How the games of a run name the bot given as ``-b NAME=COMMAND``."""
    return f"{name}@1"


# -- running a tournament and reading it back ---------------------------------------------

@dataclass
class Run:
    """A finished CLI tournament and what it stored."""

    returncode: int
    stdout: str
    stderr: str
    peak_rss_kb: int
    markers: list[str]
    tournament: dict
    games: list[StoredGame]
    records: dict[int, GameRecord] = field(default_factory=dict)

    def stderr_of(self, game: StoredGame, name: str) -> str:
        """Everything stored of ``name``'s stderr in ``game``: the record's tail
        and the tails stored with its faults."""
        if label(name) not in game.seats:
            return ""
        seat = game.seats.index(label(name))
        tails = [self.records[game.id].stderr[seat]]
        tails += [f["stderr_tail"] for f in game.faults if f["seat"] == seat]
        return "".join(tails)

    def all_stderr(self, name: str) -> str:
        return "".join(self.stderr_of(g, name) for g in self.games)

    def faults(self, name: str) -> list[tuple[StoredGame, dict]]:
        return [(g, f) for g in self.games for f in g.faults if f["bot"] == label(name)]

    def games_of(self, name: str) -> list[StoredGame]:
        return [g for g in self.games if label(name) in g.seats]

    def describe(self) -> str:
        lines = [f"exit {self.returncode}; arena stderr: {self.stderr[-1500:]!r}"]
        for g in self.games:
            lines.append(f"  table {g.table} game {g.number} {g.seats}: "
                         f"{[(f['bot'], f['kind'], f['detail']) for f in g.faults]}")
        return "\n".join(lines)


def marker() -> str:
    return f"marker=zoo-{uuid.uuid4().hex}"


def processes_with(needle: str) -> list[int]:
    """Pids of every process whose command line contains ``needle``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def assert_nothing_left(markers: list[str]) -> None:
    """No process of the given bots may outlive the CLI (10 s for kills to land: exits
    lag on a busy machine). Strays are killed here so a failing run leaves nothing
    behind either."""
    deadline = time.monotonic() + 10.0
    left: dict[str, list[int]] = {}
    while True:
        left = {m: pids for m in markers if (pids := processes_with(m))}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    details = {m: [_cmdline(p) for p in pids] for m, pids in left.items()}
    for pids in left.values():
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left running after the arena exited: {details}"


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "?"


def vm_hwm_kb(pid: int) -> int:
    """Peak resident memory of ``pid`` itself (not its children), in kB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_tournament(tmp_path: Path, bots: dict[str, str], markers: list[str], *, k: int = 2,
                   n: int = 2, options: tuple[str, ...] = ("rounds=2",), timeout: float = 60,
                   cwd: Path | None = None, db: Path | None = None,
                   handshake: float = HANDSHAKE, sandbox: tuple[str, ...] = SANDBOX) -> Run:
    """Run ``arena tournament`` as a subprocess; check what every run must do.
    ``db`` relative to ``cwd`` is passed as a relative URL (the README's layout)."""
    db_path = (cwd or tmp_path) / db if db is not None else tmp_path / "t.db"
    url = f"sqlite:///{db}" if db is not None else f"sqlite:///{db_path}"
    workdir = cwd or tmp_path / "cwd"
    workdir.mkdir(exist_ok=True)
    argv = [PY, "-m", "arena.cli", "tournament", "-g", "furious-five", "-k", str(k),
            "-n", str(n), "--db", url, "--move-time", str(MOVE), "--bank-time", str(BANK),
            "--handshake-time", str(handshake), "-j", "2", *sandbox]
    for option in options:
        argv += ["-o", option]
    for name, command in bots.items():
        argv += ["-b", f"{name}={command}"]
    out_path, err_path = tmp_path / "cli.out", tmp_path / "cli.err"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                cwd=workdir, start_new_session=True)
        peak = 0
        deadline = time.monotonic() + timeout
        try:
            while proc.poll() is None:
                peak = max(peak, vm_hwm_kb(proc.pid))
                if time.monotonic() > deadline:
                    raise AssertionError(f"the arena did not finish within {timeout} s")
                time.sleep(0.02)
        finally:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                assert_nothing_left(markers)
    stdout, stderr = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
    assert_nothing_left(markers)
    assert proc.returncode in (0, 3), f"exit {proc.returncode}: {stderr[-3000:]}"
    for text in (stdout, stderr):
        assert TRACEBACK not in text and "Exception ignored in" not in text, text[-3000:]
    assert peak < ARENA_MEMORY_LIMIT_KB, f"arena peak RSS {peak} kB"
    store = Store(f"sqlite:///{db_path}")
    try:
        tournaments = store.tournaments()
        assert len(tournaments) == 1, tournaments
        games = list(store.games(tournaments[0]["id"]))
        records = {g.id: record for g in games if (record := store.record(g.id)) is not None}
    finally:
        store.close()
    run = Run(proc.returncode, stdout, stderr, peak, markers, tournaments[0], games, records)
    total = tournaments[0]["total_games"]
    assert total == math.comb(len(bots), k) * n
    assert len(games) == total, run.describe()
    assert tournaments[0]["status"] == "finished", run.describe()
    # Only zoo bots fault; the random bots never do.
    for game in games:
        for fault in game.faults:
            assert not fault["bot"].startswith("random"), run.describe()
    return run


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory everyone may read and write: if a bot cannot see into it,
    the sandbox hid it, not its permissions (bots run as ``nobody``)."""
    path = Path(tempfile.mkdtemp(prefix="zoo-open-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def zoo(script: str, *args: str) -> str:
    return " ".join([PY, str(ZOO / script), *args])


# -- expectations --------------------------------------------------------------------------

Check = Callable[[Run], None]


def faults_every_game(kind: str, needle: str = "") -> Check:
    """The zoo bot faults with ``kind`` exactly once in every game it plays."""
    def check(run: Run) -> None:
        for game in run.games_of(ZOO_NAME):
            mine = [f for f in game.faults if f["bot"] == ZOO_LABEL]
            assert [f["kind"] for f in mine] == [kind], run.describe()
            seat = game.seats.index(ZOO_LABEL)
            assert mine[0]["seat"] == seat
            assert game.places[seat] == len(game.seats), "a faulting bot is placed last"
            assert len(mine[0]["stderr_tail"]) <= 4096
            if needle:
                assert needle in mine[0]["stderr_tail"] + mine[0]["detail"], mine[0]
    return check


def never_faults(run: Run) -> None:
    assert not run.faults(ZOO_NAME), run.describe()


def both(*checks: Check) -> Check:
    def check(run: Run) -> None:
        for c in checks:
            c(run)
    return check


def ignored_replies(run: Run) -> None:
    counted = sum(g.ignored[g.seats.index(ZOO_LABEL)] for g in run.games_of(ZOO_NAME))
    assert counted > 0, "the stale or second replies were not counted"
    for game in run.games:
        for seat, name in enumerate(game.seats):
            if name != ZOO_LABEL:
                assert game.ignored[seat] == 0


def sleep_once(run: Run) -> None:
    faults = run.faults(ZOO_NAME)
    tables = {g.table for g in run.games_of(ZOO_NAME)}
    # The bot sleeps in the first request of game 0: one timeout per table, in game 0.
    assert sorted((g.table, g.number, f["kind"]) for g, f in faults) == \
        sorted((t, 0, "timeout") for t in tables), run.describe()


def exit_between_games(run: Run) -> None:
    for game, fault in run.faults(ZOO_NAME):
        assert fault["kind"] == "crash", run.describe()
        assert game.number != 0, "it plays its first game cleanly"


def stderr_flood(run: Run) -> None:
    never_faults(run)
    for game in run.games_of(ZOO_NAME):
        tail = run.stderr_of(game, ZOO_NAME)
        assert 0 < len(tail) <= 4096 and "blah" in tail


def not_in_stderr(*needles: str) -> Check:
    def check(run: Run) -> None:
        logs = run.all_stderr(ZOO_NAME)
        for needle in needles:
            assert needle not in logs, logs[-3000:]
    return check


def in_stderr(*needles: str) -> Check:
    def check(run: Run) -> None:
        logs = run.all_stderr(ZOO_NAME)
        for needle in needles:
            assert needle in logs, logs[-3000:]
    return check


def check_proc_is_private(run: Run) -> None:
    never_faults(run)
    mark = run.markers[0]
    logs = run.all_stderr(ZOO_NAME)
    summaries = [line for line in logs.splitlines() if "PROC SUMMARY" in line]
    assert summaries, logs[-3000:]
    for line in summaries:
        others = int(line.split("others=")[1].split()[0])
        assert others <= 3, line  # its sandbox's init and its own exec chain at most
    for line in logs.splitlines():
        if "PROC SEEN" in line:
            seen = line.split(": ", 2)[2]
            # Only processes of its own sandbox (their command lines hold its marker).
            assert mark in seen, line
            for stranger in ("random_bot", "arena.cli", "pytest"):
                assert stranger not in seen.replace(str(ZOO), ""), line


@dataclass(frozen=True)
class Case:
    id: str
    script: str
    args: tuple[str, ...] = ()
    check: Check = never_faults
    n: int = 2
    handshake: float = HANDSHAKE
    #: Random bots besides the zoo bot: with 2, a table without the zoo bot
    #: plays while the zoo bot misbehaves at the others.
    others: int = 1


CASES = [
    Case("hang", "hang.py", (), faults_every_game("timeout")),
    Case("sleep_once", "sleep_once.py", (), sleep_once, n=4),
    Case("crash", "crash.py", (), faults_every_game("crash", "about to crash")),
    Case("close_stdout", "close_stdout.py", (), faults_every_game("crash", "closing stdout")),
    Case("exit_between_games", "exit_between_games.py", (), exit_between_games, n=4),
    Case("garbage", "garbage.py", (), faults_every_game("protocol_error")),
    Case("nonmap", "nonmap.py", (), faults_every_game("protocol_error", "map")),
    Case("huge_str32", "huge_claim.py", ("str32",), faults_every_game("protocol_error")),
    Case("huge_bin32_in_action", "huge_claim.py", ("bin32",),
         faults_every_game("protocol_error")),
    Case("huge_array32", "huge_claim.py", ("array32",), faults_every_game("protocol_error")),
    Case("deep_nesting_17", "deep_nesting.py", ("17",), faults_every_game("protocol_error")),
    Case("deep_nesting_100000", "deep_nesting.py", ("100000",),
         faults_every_game("protocol_error")),
    Case("illegal_out_of_range", "illegal.py", ("out_of_range",),
         faults_every_game("illegal_action")),
    Case("illegal_negative", "illegal.py", ("negative",), faults_every_game("illegal_action")),
    Case("illegal_float", "illegal.py", ("float",), faults_every_game("illegal_action")),
    Case("illegal_string", "illegal.py", ("string",), faults_every_game("illegal_action")),
    Case("illegal_bool", "illegal.py", ("bool",), faults_every_game("illegal_action")),
    Case("stale_id", "stale_id.py", (), both(faults_every_game("timeout"), ignored_replies)),
    Case("half_message", "half_message.py", (), faults_every_game("timeout")),
    Case("stdout_flood_random", "stdout_flood.py", ("random",),
         faults_every_game("protocol_error"), others=2),
    Case("stdout_flood_bigstr", "stdout_flood.py", ("bigstr",),
         faults_every_game("protocol_error"), others=2),
    Case("stderr_flood", "stderr_flood.py", (), stderr_flood, others=2),
    Case("reply_twice", "reply_twice.py", (), both(never_faults, ignored_replies)),
    Case("pipe_holder_midgame", "pipe_holder.py", ("midgame",), faults_every_game("crash"),
         others=2),
    Case("pipe_holder_atend", "pipe_holder.py", ("atend",), never_faults, others=2),
    Case("setsid_escapee", "setsid_escapee.py", (), never_faults, others=2),
    Case("sigterm_ignorer", "sigterm_ignorer.py", (), never_faults, others=2),
    # Touching 1 GiB takes seconds on a loaded machine: room to die of the limit.
    Case("memory_hog", "memory_hog.py", (),
         both(faults_every_game("crash", "MemoryError"), not_in_stderr("safety cap")),
         handshake=15, others=2),
    Case("fork_bomb", "fork_bomb.py", (),
         both(never_faults, in_stderr("fork refused"), not_in_stderr("safety cap")), others=2),
    Case("read_proc", "read_proc.py", (), check_proc_is_private, others=2),
    Case("pipe_hijack", "pipe_hijack.py", (),
         both(never_faults, in_stderr("HIJACK none"), not_in_stderr(" OK")), others=2),
    Case("slow_start", "slow_start.py", (), faults_every_game("timeout")),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_zoo_bot_in_a_tournament(case: Case, tmp_path: Path) -> None:
    mark = marker()
    bots = {ZOO_NAME: zoo(case.script, *case.args, mark), "random": RANDOM}
    if case.others == 2:
        bots["random2"] = RANDOM
    run = run_tournament(tmp_path, bots, [mark], n=case.n, handshake=case.handshake)
    assert len(run.games_of(ZOO_NAME)) == case.others * case.n
    case.check(run)


# -- snooping bots: checked on the host, not only by what they say ----------------------------

def host_address() -> str | None:
    """A non-loopback IPv4 address of this machine, if it has one."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # no packet is sent
        address = s.getsockname()[0]
        if not address.startswith("127."):
            return address
    return None


def test_network_is_unreachable(tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp, \
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix:
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("0.0.0.0", 0))
        tcp.listen(16)
        tcp.setblocking(False)
        unix.bind(f"\0zoo-{token}")
        unix.listen(16)
        unix.setblocking(False)
        port = tcp.getsockname()[1]
        mark = marker()
        host = host_address()
        args = [f"port={port}", f"token={token}", mark] + ([f"host={host}"] if host else [])
        bots = {ZOO_NAME: zoo("network.py", *args), "random": RANDOM, "random2": RANDOM}
        run = run_tournament(tmp_path, bots, [mark])
        accepted = []
        for listener in (tcp, unix):
            with contextlib.suppress(BlockingIOError):
                conn, _ = listener.accept()
                accepted.append(conn.recv(200))
                conn.close()
        assert not accepted, f"a bot reached the organiser's sockets: {accepted}"
    never_faults(run)
    logs = run.all_stderr(ZOO_NAME)
    assert f"NET REFUSED 127.0.0.1:{port}" in logs, logs[-3000:]
    assert "NET OK" not in logs, logs[-3000:]


def token_places(tmp_path: Path, token: str, open_dir: Path) -> list[Path]:
    """Every host path where a bot's token file could show up."""
    name = f"zoo-token-{token}"
    dirs = [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), ZOO, REPO, Path("/"),
            Path.home(), tmp_path, tmp_path / "cwd", open_dir]
    return [d / name for d in dirs] + list(tmp_path.rglob(f"{name}*"))


@contextlib.contextmanager
def removing_tokens(tmp_path: Path, token: str, open_dir: Path) -> Iterator[None]:
    try:
        yield
    finally:
        for path in token_places(tmp_path, token, open_dir):
            with contextlib.suppress(OSError):
                path.unlink()


def test_writes_outside_its_directory_leave_no_trace(tmp_path: Path, open_dir: Path) -> None:
    token = uuid.uuid4().hex
    mark = marker()
    home = str(Path.home())
    bots = {ZOO_NAME: zoo("write_outside.py", f"token={token}", f"dir={tmp_path}",
                          f"dir={open_dir}", f"dir={home}", f"dir={ZOO}", f"dir={REPO}",
                          mark),
            "random": RANDOM, "random2": RANDOM}
    with removing_tokens(tmp_path, token, open_dir):
        run = run_tournament(tmp_path, bots, [mark])
        leaked = [str(p) for p in token_places(tmp_path, token, open_dir) if p.exists()]
    assert not leaked, f"the bot wrote outside its sandbox: {leaked}"
    never_faults(run)
    logs = run.all_stderr(ZOO_NAME)
    for folder in (str(ZOO), str(REPO), str(tmp_path), str(open_dir), home):
        assert f"WRITE REFUSED {folder}/zoo-token-{token}" in logs, logs[-3000:]


@pytest.mark.parametrize("how", ["db=PATH", "PATH"])
def test_the_database_is_out_of_reach(how: str, tmp_path: Path, open_dir: Path) -> None:
    db = open_dir / "t.db"  # world-readable: only the sandbox can hide it
    mark = marker()
    # "db=PATH": the bot guesses the path; "PATH": the organiser's command names it.
    arg = f"db={db}" if how == "db=PATH" else str(db)
    Store(f"sqlite:///{db}").close()  # so the command names an existing file
    bots = {ZOO_NAME: zoo("read_db.py", arg, mark), "random": RANDOM, "random2": RANDOM}
    run = run_tournament(tmp_path, bots, [mark], db=db)
    never_faults(run)
    assert_db_refused(run, ZOO_NAME, str(db))


def assert_db_refused(run: Run, name: str, db: str) -> None:
    logs = run.all_stderr(name)
    assert f"DB REFUSED {db}: No such file" in logs or \
        f"DB REFUSED {db}: Permission denied" in logs, logs[-3000:]
    for leak in ("DB OPEN OK", "DB ROWS", "DB QUERY FAILED"):
        assert leak not in logs, logs[-3000:]
    for line in logs.splitlines():
        if "DB LIST OK" in line:  # its own script's folder may be there, not the database
            assert os.path.basename(db) not in line, line


def test_the_database_is_out_of_reach_in_the_readme_layout(tmp_path: Path, open_dir: Path
                                                           ) -> None:
    """The README's layout: ``arena.db`` in the working directory, next to the
    organiser's own ``my_bot.py``; a bot run from there and one run from a
    subdirectory both look for ``./arena.db``, ``../arena.db`` and the path."""
    layout = open_dir
    layout.chmod(0o755)
    shutil.copy(ZOO / "read_db.py", layout / "my_bot.py")
    db = layout / "arena.db"
    marks = [marker(), marker()]
    bots = {"mine": f"{PY} my_bot.py db={db} {marks[0]}",
            ZOO_NAME: zoo("read_db.py", f"db={db}", marks[1]), "random": RANDOM}
    run = run_tournament(tmp_path, bots, marks, cwd=layout, db=Path("arena.db"))
    assert db.exists()
    never_faults(run)
    assert not run.faults("mine"), run.describe()
    for name in ("mine", ZOO_NAME):
        assert_db_refused(run, name, str(db))
        logs = run.all_stderr(name)
        for relative in ("arena.db", "../arena.db"):
            assert f"DB REFUSED {relative}: No such file" in logs, logs[-3000:]


HONEST_BOT = """\
import os, runpy, sys
import helper
print("HELPER OK", helper.WORD, file=sys.stderr)
print("WEIGHTS OK", open(sys.argv[1]).read(), file=sys.stderr)
for name in ("arena.db", "arena.db-wal", os.path.join(os.path.dirname(__file__), "arena.db")):
    try:
        open(name).read()
        print("DB OPEN OK", name, file=sys.stderr)
    except OSError as exc:
        print("DB REFUSED", name, exc.__class__.__name__, file=sys.stderr)
print("LISTED", sorted(os.listdir(os.path.dirname(__file__))), file=sys.stderr, flush=True)
sys.argv = sys.argv[:1]
runpy.run_module("sample_bots.random_bot", run_name="__main__")
"""


def test_an_honest_bot_runs_from_its_own_folder(tmp_path: Path, open_dir: Path) -> None:
    """``python mybot/bot.py mybot/weights.bin`` where the default ``arena.db``
    lies (the run's --db is elsewhere): its helper module and data file (any
    suffix) are beside it in its copy; the database files, the bot store beside
    it and the default report folder are not.  (From inside ``mybot/``, it
    would get only the files it names: tests/test_side_channels.py.)"""
    folder = open_dir / "mybot"
    folder.mkdir()
    (folder / "bot.py").write_text(HONEST_BOT)
    (folder / "helper.py").write_text("WORD = 'helped'\n")
    (folder / "weights.bin").write_text("weights")
    Store(f"sqlite:///{open_dir / 'arena.db'}").close()
    for private in ("arena-bots/other/1", "arena-report"):  # other bots' files, a report
        (open_dir / private).mkdir(parents=True)
        (open_dir / private / "secret.txt").write_text("secret")
    for path in [*open_dir.iterdir(), *folder.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    mark = marker()
    bots = {"mine": f"python mybot/bot.py mybot/weights.bin {mark}", "random": RANDOM}
    run = run_tournament(tmp_path, bots, [mark], cwd=open_dir)
    assert not run.faults("mine"), run.describe()
    logs = run.all_stderr("mine")
    assert "HELPER OK helped" in logs and "WEIGHTS OK weights" in logs, logs[-3000:]
    assert "DB OPEN OK" not in logs and "DB REFUSED arena.db" in logs, logs[-3000:]
    listed = [line for line in logs.splitlines() if line.startswith("LISTED")]
    assert listed and all("'helper.py'" in line and "'arena.db'" not in line and
                          "'arena-bots'" not in line and "'arena-report'" not in line
                          for line in listed), listed


# -- issue 7 part 2: bots cannot talk across games or tables --------------------------------

def test_memory_bots_never_see_a_deal_again(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    marks = [marker() for _ in range(3)]
    bots = {f"memory{i}": zoo("memory_bot.py", f"tag={tag}", marks[i]) for i in range(3)}
    bots["random"] = RANDOM
    try:
        run = run_tournament(tmp_path, bots, marks, k=3, n=6, timeout=90)
    finally:
        for folder in ("/tmp", "/dev/shm", "/var/tmp", str(Path.home())):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, f"zoo-memory-{tag}.txt"))
    assert len(run.games) == 4 * 6
    for game in run.games:
        assert not game.faults, run.describe()
        for seat in range(3):
            assert "SEEN DEAL" not in run.records[game.id].stderr[seat], \
                run.records[game.id].stderr[seat]


def test_token_writer_and_searcher_never_meet(tmp_path: Path, open_dir: Path) -> None:
    token = uuid.uuid4().hex
    marks = [marker(), marker()]
    bots = {"writer": zoo("token_writer.py", f"token={token}", f"dir={open_dir}", marks[0]),
            "searcher": zoo("token_searcher.py", f"dir={open_dir}", marks[1]),
            "random": RANDOM}
    with removing_tokens(tmp_path, token, open_dir):
        run = run_tournament(tmp_path, bots, marks)
        leaked = [str(p) for p in token_places(tmp_path, token, open_dir) if p.exists()]
    # writer and searcher meet at one table and play other tables at the same time
    assert any({"writer@1", "searcher@1"} <= set(g.seats) for g in run.games)
    assert not leaked, f"the token reached the host: {leaked}"
    for game in run.games:
        assert not game.faults, run.describe()
    found = run.all_stderr("searcher")
    assert token not in found, found[-3000:]
    assert "TOKEN WROTE" in run.all_stderr("writer"), "the writer never ran"


# -- the detectors themselves work when nothing separates the bots ---------------------------

def talk(script: str, args: list[str], env: dict[str, str], messages: list[dict]) -> str:
    """Run a zoo bot outside the arena (no sandbox), feed it ``messages`` and
    ``match_end``; its stderr."""
    import msgpack

    data = b"".join(msgpack.packb(m) for m in [*messages, {"type": "match_end"}])
    done = subprocess.run([PY, str(ZOO / script), *args], input=data, capture_output=True,
                          env={**os.environ, **env}, cwd=env["HOME"], timeout=30, check=True)
    return done.stderr.decode()


def deal(game_number: int, hand: list[str]) -> list[dict]:
    return [{"type": "hello", "protocol": 1},
            {"type": "game_start", "game_number": game_number, "seat": 0, "players": 2},
            {"type": "request", "id": 1, "legal": ["draw deck"],
             "observation": {"round": 1, "hand": hand}}]


def test_without_separation_the_memory_bots_do_see_a_deal_again(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    tag = f"tag={uuid.uuid4().hex}"
    hand = ["2c", "5d", "9h", "Js", "Kc"]
    try:
        first = talk("memory_bot.py", [tag], env, deal(0, hand))
        second = talk("memory_bot.py", [tag], env, deal(1, list(reversed(hand))))
    finally:
        for folder in ("/tmp", "/dev/shm"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, f"zoo-memory-{tag[4:]}.txt"))
    assert "SEEN DEAL" not in first
    assert "SEEN DEAL round 1: 2c 5d 9h Js Kc" in second


def test_without_separation_the_searcher_does_find_the_token(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    token = uuid.uuid4().hex
    hello = [{"type": "hello", "protocol": 1}]
    with removing_tokens(tmp_path, token, tmp_path):
        talk("token_writer.py", [f"token={token}"], env, hello)
        found = talk("token_searcher.py", [], env, hello)
    assert f"FOUND TOKEN {token} at {tmp_path}/zoo-token-{token}" in found
