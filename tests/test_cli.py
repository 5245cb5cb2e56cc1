"""The ``arena`` command as users run it: real processes, real SQLite."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.cli import LOCKED_MESSAGE, main
from arena.games import game_class, make_game
from arena.store.database import Store
from arena.store.records import FaultRecord, GameRecord, GameResult
from sample_bots import HEURISTICS

HERE = Path(__file__).resolve().parent
RANDOM = f"{sys.executable} -m sample_bots.random_bot"
GREEDY = f"{sys.executable} -m sample_bots.greedy_furious_five"
BAD_BOT = HERE / "bots" / "bad_bot.py"


def arena(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)


def arena_here(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess:
    """``arena ARGS`` run by the CLI's own main in this process, returned as :func:`arena`
    returns it: for quick commands whose output a test reads (a process of their own
    costs more than the command)."""
    try:
        status = main(list(args))
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["arena", *args], status, out, err)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("arena: error: ")
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_play_json_reports_scores_places_and_record(capsys: pytest.CaptureFixture[str]) -> None:
    proc = arena_here(capsys, "play", "--game", "furious-five", "--seed", "42",
                      "--option", "rounds=2", "--json", f"a={RANDOM}", f"b={GREEDY}")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["game"] == "furious-five" and out["seed"] == 42
    assert out["bots"] == ["a", "b"]
    assert len(out["scores"]) == 2 and len(out["places"]) == 2
    assert sum(out["scores"]) == 0  # chips are zero-sum
    assert sorted(out["places"]) in ([1, 2], [1, 1])
    assert out["record"]["actions"] and out["record"]["events"]
    assert out["faults"] == []


def test_play_is_deterministic_for_a_seed_with_deterministic_bots(
        capsys: pytest.CaptureFixture[str]) -> None:
    runs = [arena_here(capsys, "play", "-g", "furious-five", "--seed", "5", "--json",
                       GREEDY, GREEDY)
            for _ in range(2)]
    outs = [json.loads(p.stdout) for p in runs]
    times = [out["record"].pop("times") for out in outs]  # measured, so never equal
    assert [len(t) for t in times] == [len(out["record"]["actions"]) for out in outs]
    assert outs[0]["record"] == outs[1]["record"]
    assert outs[0]["scores"] == outs[1]["scores"]


def test_play_reports_a_fault_with_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    proc = arena_here(capsys, "play", "-g", "furious-five", "--seed", "1", "--json",
                      f"bad={sys.executable} {BAD_BOT} illegal 2", RANDOM)
    assert proc.returncode == 3
    out = json.loads(proc.stdout)
    assert [f["kind"] for f in out["faults"]] == ["illegal_action"]
    assert out["places"][0] == 2
    # It answered 2 requests; from its 3rd decision on the arena played for it.
    own_steps = [i for i, step in enumerate(out["record"]["actions"])
                 if any(seat == 0 for seat, _ in step)]
    assert out["faults"][0]["step"] == own_steps[2]
    assert "illegal_action" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["play", "-g", "no-such-game", RANDOM, RANDOM], ["unknown game", "no-such-game"]),
        (["play", "-g", "furious-five", "-o", "bogus=1", RANDOM, RANDOM], ["bogus"]),
        (["play", "-g", "furious-five", "-o", "rounds=zero", RANDOM, RANDOM], ["rounds"]),
        (["play", "-g", "furious-five", "-o", "deck=Ah,2h", RANDOM, RANDOM], ["deck"]),
        (["play", "-g", "furious-five", "./no/such/bot.py"], ["no/such/bot.py"]),
        (["play", "-g", "furious-five", RANDOM], ["furious-five is for 2-5 players"]),
        (["play", "-g", "furious-five", "--db", "nope://x", RANDOM, RANDOM], ["nope://x"]),
        (["play", "-g", "five", "--frobnicate", RANDOM], ["frobnicate"]),
        (["tournament", "-g", "furious-five", "-b", f"a={RANDOM}"], ["cannot fill a table"]),
        (["tournament", "-g", "furious-five", "-b", f"a={RANDOM}", "-b", f"b={RANDOM}",
          "-n", "3"], ["multiple of the table size"]),
        (["tournament", "-g", "furious-five", "-b", f"a={RANDOM}", "-b", f"a={RANDOM}"],
         ["used twice"]),
        (["tournament", "--resume", "99", "--db", "sqlite:///{tmp}/x.db"], ["no database file"]),
        (["report", "--db", "postgresql+nosuchdriver://u@h/db"], ["nosuchdriver"]),
        (["report", "--db", "sqlite:////nonexistent-dir/sub/x.db"], ["no database file", "x.db"]),
    ],
)
def test_bad_input_is_one_clear_line(args: list[str], needles: list[str], tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert_one_line_error(arena(*args, cwd=tmp_path), *needles)


@pytest.fixture
def existing_db(tmp_path: Path) -> Path:
    """A database holding one finished game (with a fault)."""
    path = tmp_path / "existing.db"
    store = Store(f"sqlite:///{path}")
    store.register_bots([("a", RANDOM), ("b", RANDOM)])
    tid = store.create_tournament("furious-five", {"game": "furious-five"}, [["a", "b"]], 1)
    store.save_game(tid, 0, 0, {}, GameResult(
        seed=5, bots=["a", "b"], scores=[1.0, -1.0], game_places=[1, 2], places=[2, 1],
        faults=[FaultRecord(0, "a", "crash", "exited", "oops", step=3)],
        record=GameRecord(stderr=["", ""]), ignored=[0, 0], duration=0.1))
    store.set_status(tid, "finished")
    store.close()
    return path


def dump(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return list(conn.iterdump())


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["tournament", "-g", "furious-five", "-b", f"a={RANDOM}", "-b", f"b={RANDOM}",
          "--db", "sqlite://"], ["in-memory"]),
        (["play", "-g", "furious-five", "--db", "sqlite:///:memory:", RANDOM, RANDOM],
         ["in-memory"]),
        (["report", "--db", "{url}", "--out", "{path}"], ["existing file"]),
        (["report", "--db", "{url}", "--out", "/proc/arena-report"], ["cannot write the report"]),
        (["report", "--db", "{url}", "--out", "{path}/sub"], ["cannot write the report"]),
        (["tournament", "-g", "furious-five", "-b", f"a={RANDOM}", "-b", f"b={RANDOM}",
          "--move-time", "nan", "--db", "{url}"], ["--move-time", "nan"]),
        (["play", "-g", "furious-five", "--move-time", "inf", "--db", "{url}", RANDOM, RANDOM],
         ["--move-time", "inf"]),
        (["play", "-g", "furious-five", "--bank-time", "1e308", "--db", "{url}", RANDOM, RANDOM],
         ["--bank-time", "86400"]),
        (["play", "-g", "furious-five", "--handshake-time", "-1", "--db", "{url}", RANDOM,
          RANDOM], ["--handshake-time"]),
        (["play", "-g", "furious-five", "--seed", str(2**64), "--db", "{url}", RANDOM, RANDOM],
         ["--seed", str(2**64)]),
        (["play", "-g", "furious-five", "--seed", str(2**63), "--db", "{url}", RANDOM, RANDOM],
         ["--seed"]),
        (["play", "-g", "furious-five", "--seed", "-1", "--db", "{url}", RANDOM, RANDOM],
         ["--seed", "-1"]),
        (["tournament", "-g", "furious-five", "--seed", "-5", "-b", f"a={RANDOM}",
          "-b", f"b={RANDOM}", "--db", "{url}"], ["--seed"]),
        (["tournament", "-g", "furious-five", "-b", f"a={sys.executable} missing.py",
          "-b", f"b={RANDOM}", "--db", "{url}"], ["'a'", "missing.py", "does not exist"]),
        (["play", "-g", "furious-five", "--db", "{url}", f"{sys.executable} missing.py", RANDOM],
         ["missing.py", "does not exist"]),
        (["play", "-g", "furious-five", "--db", "{url}", RANDOM,
          f"{sys.executable} {BAD_BOT} crash 3 --model=x ./no/such/weights"],
         ["./no/such/weights"]),
    ],
)
def test_bad_input_changes_no_stored_data(args: list[str], needles: list[str],
                                          existing_db: Path, tmp_path: Path) -> None:
    before = dump(existing_db)
    args = [a.replace("{url}", f"sqlite:///{existing_db}").replace("{path}", str(existing_db))
            for a in args]
    assert_one_line_error(arena(*args, cwd=tmp_path), *needles)
    assert dump(existing_db) == before
    created = {p.name for p in tmp_path.iterdir()} - {"existing.db-wal", "existing.db-shm"}
    assert created == {"existing.db"}  # no other database, no report folder


def test_report_does_not_create_a_missing_database(tmp_path: Path) -> None:
    proc = arena("report", "--db", f"sqlite:///{tmp_path / 'typo.db'}", "--out",
                 str(tmp_path / "out"), cwd=tmp_path)
    assert_one_line_error(proc, "typo.db")
    assert list(tmp_path.iterdir()) == []


def test_tournament_summarises_faults_and_exits_3(tmp_path: Path) -> None:
    proc = arena("tournament", "-g", "furious-five", "-o", "rounds=3", "-n", "2",
                 "-b", f"bad={sys.executable} {BAD_BOT} crash 3", "-b", f"ok={RANDOM}",
                 "--db", f"sqlite:///{tmp_path / 'arena.db'}", cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    summary = [line for line in proc.stderr.splitlines() if line.startswith("arena: bot ")]
    assert summary == ["arena: bot 'bad@1' faulted: crash x2; "
                       "last stderr line: 'bad_bot: about to crash'"]


def wait_for(predicate: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def tournament_exists(path: Path) -> bool:
    try:
        with sqlite3.connect(path, timeout=0.1) as conn:
            return conn.execute("select count(*) from tournaments").fetchone()[0] > 0
    except sqlite3.OperationalError:
        return False


def start_tournament(tmp_path: Path, err: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "arena.cli", "tournament", "-g", "furious-five",
           "-b", f"a={RANDOM}", "-b", f"b={GREEDY}", "-b", f"c={RANDOM}", "-n", "4",
           "-o", "rounds=1", "-j", "1", "--db", f"sqlite:///{tmp_path / 'arena.db'}"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err.open("w"), text=True,
                            stdin=subprocess.DEVNULL, cwd=tmp_path)


def hold_exclusive_lock(path: Path, seconds: float, locked: threading.Event,
                        stored: list[int], release: threading.Event | None = None) -> None:
    """Hold the database's exclusive lock for ``seconds``, or until ``release`` is set."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    stored.append(conn.execute("select count(*) from games").fetchone()[0])
    locked.set()
    (release or threading.Event()).wait(seconds)
    conn.execute("COMMIT")
    conn.close()


def test_tournament_waits_while_another_process_holds_the_database_lock(
        tmp_path: Path) -> None:
    path, err = tmp_path / "arena.db", tmp_path / "stderr"
    proc = start_tournament(tmp_path, err)
    wait_for(lambda: tournament_exists(path))
    locked, stored, release = threading.Event(), list[int](), threading.Event()
    holder = threading.Thread(target=hold_exclusive_lock,
                              args=(path, 60, locked, stored, release))
    holder.start()
    try:  # held until the arena says it waits (at most 60 s), not a fixed 5 s
        wait_for(lambda: LOCKED_MESSAGE in err.read_text() or proc.poll() is not None)
    finally:
        release.set()
        holder.join()
    proc.wait(timeout=120)
    text = err.read_text()
    assert proc.returncode == 0, text
    assert stored[0] < 12, "the lock came too late to matter"
    assert LOCKED_MESSAGE in text.splitlines() and "Traceback" not in text
    with sqlite3.connect(path) as conn:
        assert conn.execute("select count(*) from games").fetchone()[0] == 12
        assert conn.execute("select status from tournaments").fetchone()[0] == "finished"


def test_an_interrupt_while_waiting_for_the_lock_exits_with_the_resume_line(
        tmp_path: Path) -> None:
    path, err = tmp_path / "arena.db", tmp_path / "stderr"
    proc = start_tournament(tmp_path, err)
    wait_for(lambda: tournament_exists(path))
    locked, stored, release = threading.Event(), list[int](), threading.Event()
    holder = threading.Thread(target=hold_exclusive_lock,
                              args=(path, 60, locked, stored, release))
    holder.start()
    try:
        wait_for(lambda: LOCKED_MESSAGE in err.read_text())
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)  # while the lock is still held (60 s)
        text = err.read_text()
        assert proc.returncode == 130, text
        assert "resume with 'arena tournament --resume 1" in text and "Traceback" not in text
        assert holder.is_alive(), "the lock was released before the arena stopped"
    finally:
        proc.kill()
        release.set()
        holder.join()
    done = arena("tournament", "--resume", "1", "--db", f"sqlite:///{path}", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(path) as conn:
        assert conn.execute("select count(*) from games").fetchone()[0] == 12


def test_rules_lists_every_game_with_options() -> None:
    proc = arena("rules")
    assert proc.returncode == 0
    for name in ("furious-five", "max_turns", "deck"):
        assert name in proc.stdout


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_then_resume_completes_without_losing_games(
    signum: signal.Signals, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    cmd = [sys.executable, "-m", "arena.cli", "tournament", "-g", "furious-five",
           "-b", f"a={RANDOM}", "-b", f"b={GREEDY}", "-b", f"c={RANDOM}", "-n", "20",
           "-o", "rounds=3", "-j", "1", "--db", db]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    stored = 0
    while time.monotonic() < deadline and stored < 3:
        time.sleep(0.2)
        try:
            with sqlite3.connect(tmp_path / "arena.db") as conn:
                stored = conn.execute("select count(*) from games").fetchone()[0]
        except sqlite3.OperationalError:
            stored = 0
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "resume with" in err and "Traceback" not in err
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        before = conn.execute("select count(*) from games").fetchone()[0]
        status = conn.execute("select status from tournaments").fetchone()[0]
    assert 3 <= before < 60 and status == "interrupted"
    done = arena("tournament", "--resume", "1", "--db", db)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "arena.db") as conn:
        after = conn.execute("select count(*) from games").fetchone()[0]
        pairs = conn.execute("select count(distinct table_id || '-' || number) from games")
        distinct = pairs.fetchone()[0]
        status = conn.execute("select status from tournaments").fetchone()[0]
    assert after == distinct == 60 and status == "finished"


@pytest.mark.parametrize("game", sorted(HEURISTICS))
def test_play_json_works_for_every_game_with_the_sample_bots(
        game: str, capsys: pytest.CaptureFixture[str]) -> None:
    players = max(2, game_class(game).min_players)
    bots = [f"heuristic={sys.executable} -m sample_bots.{HEURISTICS[game]}"]
    bots += [f"random{i}={RANDOM}" for i in range(players - 1)]
    proc = arena_here(capsys, "play", "-g", game, "--seed", "99", "--json", *bots)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["game"] == game and out["bots"][0] == "heuristic"
    assert len(out["scores"]) == len(out["places"]) == players
    assert min(out["places"]) == 1 and out["faults"] == []
    assert out["record"]["actions"] and out["decisions"] > 0
    # The printed record replays to the printed result.
    state = make_game(game, players, out["options"]).new_state(out["seed"])
    for step in out["record"]["actions"]:
        state.apply_actions({seat: action for seat, action in step})
    assert state.is_terminal()
    assert state.scores() == out["scores"] and state.places() == out["places"]
