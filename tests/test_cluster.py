"""Tournaments on a Dask cluster of worker processes (distributed.LocalCluster)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from distributed import Client, LocalCluster

from arena.runner.cluster import local_layout
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.tournament import run_tournament
from arena.store.database import Store
from arena.store.records import GameResult
from tests.marked import bot_command, stored_keys, wait_gone


def plan_of(command: str, games_per_table: int) -> Plan:
    bots = tuple(BotSpec(f"r{i}", command) for i in range(3))
    return Plan(game="furious-five", bots=bots, table_size=2,
                games_per_table=games_per_table, options={"rounds": 2}, sandbox="none")


def new_tournament(tmp_path: Path, games_per_table: int) -> tuple[Plan, Store, int]:
    plan = plan_of(bot_command(tmp_path / "bots"), games_per_table)
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    return plan, store, create_tournament(store, plan)


@pytest.fixture
def cluster() -> Iterator[Client]:
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                      dashboard_address=None, silence_logs=40) as local, Client(local) as client:
        yield client


def test_local_layout_leaves_the_bots_a_cpu() -> None:
    assert local_layout(8, cpus=2) == (1, 8) and local_layout(1, 4) == (1, 1)
    assert local_layout(8, cpus=8) == (4, 2) and local_layout(3, cpus=16) == (3, 1)


def test_tournament_on_local_cluster_stores_exactly_the_schedule(
        tmp_path: Path, cluster: Client) -> None:
    plan, store, tournament = new_tournament(tmp_path, 4)
    results: list[GameResult] = []
    trio.run(lambda: run_tournament(plan, store, tournament, parallel=4,
                                    on_game=results.append, client=cluster))
    expected = {(t, g) for t in range(3) for g in range(4)}
    assert sorted(stored_keys(tmp_path / "a.db")) == sorted(expected)
    assert len(results) == 12 and not any(r.faults for r in results)
    assert wait_gone(str(tmp_path / "bots")) == []


def test_a_worker_killed_mid_table_only_means_its_games_run_again(
        tmp_path: Path, cluster: Client) -> None:
    plan, store, tournament = new_tournament(tmp_path, 16)
    workers = list(cluster.run(os.getpid).values())
    killed: list[int] = []

    def on_game(result: GameResult) -> None:
        if not killed:  # the first game is back: tables are in flight on both workers
            os.kill(workers[0], signal.SIGKILL)
            killed.append(workers[0])

    trio.run(lambda: run_tournament(plan, store, tournament, parallel=4, on_game=on_game,
                                    client=cluster))
    keys = stored_keys(tmp_path / "a.db")
    assert killed and len(keys) == len(set(keys))
    assert set(keys) == {(t, g) for t in range(3) for g in range(16)}
    assert workers[0] not in cluster.run(os.getpid).values()
    assert wait_gone(str(tmp_path / "bots")) == []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def dask_cluster(workers: int) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A Dask scheduler and ``workers`` worker processes, as an organiser starts them
    (``dask scheduler``, ``dask worker``): its address and the worker command's
    process; both stopped at the end.  The scheduler takes a port of its own and
    says it in its scheduler file: a port chosen before it binds may be taken
    meanwhile by another test's cluster."""
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder) / "scheduler.json"
        quiet = subprocess.DEVNULL
        scheduler = subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", "0",
                                      "--scheduler-file", str(where), "--no-dashboard"],
                                     stdout=quiet, stderr=quiet)
        worker = None
        try:
            address = scheduler_address(where, scheduler)
            worker = subprocess.Popen(["dask", "worker", address, "--nthreads", "2",
                                       "--nworkers", str(workers), "--no-dashboard"],
                                      stdout=quiet, stderr=quiet)
            yield address, worker
        finally:
            for process in (worker, scheduler):
                if process is not None:
                    process.terminate()
                    process.wait(timeout=30)


def scheduler_address(where: Path, scheduler: subprocess.Popen[bytes]) -> str:
    """The address the scheduler wrote to its file, once it has (within 120 s)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and scheduler.poll() is None:
        with contextlib.suppress(OSError, ValueError, KeyError):
            return str(json.loads(where.read_text())["address"])
        time.sleep(0.1)
    raise AssertionError(f"the Dask scheduler wrote no address (exit {scheduler.poll()})")


def arena_cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def tournament_args(tmp_path: Path, *more: str) -> list[str]:
    command = bot_command(tmp_path / "bots")
    return ["tournament", "-g", "furious-five", "-o", "rounds=2", "-k", "2", "-n", "4",
            "--sandbox", "none", "--db", f"sqlite:///{tmp_path / 'a.db'}",
            *[f"-b=r{i}={command}" for i in range(3)], *more]


def test_unreachable_scheduler_is_one_line(tmp_path: Path) -> None:
    proc = arena_cli(*tournament_args(tmp_path, "--cluster", f"tcp://127.0.0.1:{free_port()}"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "arena: error: cannot reach the Dask scheduler at tcp://127.0.0.1:")
    assert "Traceback" not in proc.stderr


def test_tournament_on_a_running_dask_scheduler_and_worker(tmp_path: Path) -> None:
    with dask_cluster(workers=1) as (address, worker):
        proc = arena_cli(*tournament_args(tmp_path, "--cluster", address))
        assert proc.returncode == 0, proc.stderr
        expected = [(t, g) for t in range(3) for g in range(4)]
        assert sorted(stored_keys(tmp_path / "a.db")) == expected
        assert worker.poll() is None  # the arena leaves the cluster's workers running
        assert wait_gone(str(tmp_path / "bots")) == []


def test_ctrl_c_stops_a_local_cluster_run_in_one_line(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "arena.cli",
            *tournament_args(tmp_path, "-j", "2", "--workers", "2")]
    argv[argv.index("-n") + 1] = "200"
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not stored_keys(tmp_path / "a.db"):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole group
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    assert "arena: interrupted; " in stderr
    assert wait_gone(str(tmp_path / "bots")) == []


def stored_actions(db: Path) -> dict[tuple[int, int], list]:
    """(table, game number) -> the game's recorded actions, for every stored game."""
    store = Store(f"sqlite:///{db}")
    tid = store.tournaments()[-1]["id"]
    actions = {}
    for game in store.games(tid):
        record = store.record(game.id)
        assert record is not None and not game.faults
        actions[game.table, game.number] = record.actions
    return actions


def test_stateful_bots_play_the_same_games_here_on_local_workers_and_on_a_cluster(
        tmp_path: Path) -> None:
    """The sample bots with --strength keep their random state from game to game:
    the same games in the arena's own process, on a local cluster (--workers 2)
    and on a running scheduler, since the unit of work is the same stream (12
    deals per table: blocks of 8 and 4) on the same processes everywhere."""
    greedy = f"{sys.executable} -m sample_bots.greedy_furious_five --strength 0.5"
    run = ["tournament", "-g", "furious-five", "-o", "rounds=1", "-k", "2", "-n", "24",
           "--seed", "5", "--sandbox", "none", "--move-time", "30", "--bank-time", "300",
           *[f"-b=g{i}={greedy} --seed {i}" for i in range(3)]]
    games = {}
    with dask_cluster(workers=2) as (address, _):
        for name, where in (("here", ["-j", "2", "--workers", "1"]),
                            ("local", ["-j", "2", "--workers", "2"]),
                            ("cluster", ["--cluster", address])):
            db = tmp_path / f"{name}.db"
            proc = arena_cli(*run, *where, "--db", f"sqlite:///{db}")
            assert proc.returncode == 0, proc.stderr
            games[name] = stored_actions(db)
    assert len(games["here"]) == 3 * 24
    assert games["local"] == games["here"]
    assert games["cluster"] == games["here"]
