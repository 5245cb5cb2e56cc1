"""The competition server under load, beside the ladder, on this machine (loopback only).

    python bench/server_load.py [--clients 200] [--uploads 10] [--seconds 20]
                                [--rounds 2] [--sandbox auto] [--ladder-flags '-j 2']
                                [--beside]

Set-up: a fresh SQLite database; three bots uploaded to ``arena serve`` and
checked (the ladder's entrants); a few ladder games so every page has content.
Then ``--rounds`` rounds, each taking turns (interleaved):

* baseline: ``arena ladder -g five -k 2`` alone on the database for ``--seconds``:
  the ladder's games per second;
* server: ``arena serve --ladder five`` (``--beside``: ``arena serve`` and an
  ``arena ladder`` process) on the same database with ``--clients``
  concurrent clients (threads, one keep-alive session each) browsing the
  leaderboard, bot pages, game lists and replays for ``--seconds``, plus
  ``--uploads`` uploads spread over the first half: requests per second, p50/p99
  latency per page kind, errors (goal 0), and the ladder's games per second
  (goal: at most 20% below the baseline's); p99 of cached pages goal < 250 ms.

Games per second are counted in the database between the start and the end of the
measured window (after a warm-up), so start-up costs are not counted.  The
clients run on this machine too, and take CPU from both the server and the ladder.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.store.database import Store
from tests.server import bot_archive, start_arena, stop, user_add, wait_status

WARMUP = 5.0
#: Page kinds whose repeated requests are served from the server's caches.
CACHED = ("leaderboard", "bot", "replay", "api")
GOAL_P99_MS = 250.0
GOAL_LADDER = 0.8


def ladder_games(url: str) -> int:
    """Games stored so far in the newest ladder."""
    store = Store(url)
    try:
        ladders = [t for t in store.tournaments() if t["kind"] == "ladder"]
        return ladders[-1]["games_done"] if ladders else 0
    finally:
        store.close()


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of one process so far, its children not counted."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Window:
    """The measured window: the ladder's games/s, the arena process's CPU s/s
    (the server's, or the lone ladder's), the bench's own CPU s/s (the clients)."""

    games: float
    arena_cpu: float
    client_cpu: float


def window(url: str, seconds: float, pid: int, during: threading.Event | None = None
           ) -> Window:
    """What the newest ladder and process ``pid`` did over ``seconds`` after the warm-up."""
    time.sleep(WARMUP)
    if during is not None:
        during.set()
    first, started = ladder_games(url), time.monotonic()
    cpu, client = cpu_seconds(pid), time.process_time()
    time.sleep(seconds)
    wall = time.monotonic() - started
    return Window((ladder_games(url) - first) / wall, (cpu_seconds(pid) - cpu) / wall,
                  (time.process_time() - client) / wall)


class Load:
    """Clients browsing a server, their latencies and errors by page kind."""

    def __init__(self, base: str, paths: dict[str, list[str]]) -> None:
        self.base, self.paths = base, paths
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.lock = threading.Lock()

    def client(self, until: float, seed: int) -> None:
        rng = random.Random(seed)
        session = requests.Session()
        while time.monotonic() < until:
            kind = rng.choice(list(self.paths))
            path = rng.choice(self.paths[kind])
            began = time.perf_counter()
            try:
                ok = session.get(self.base + path, timeout=30).status_code == 200
            except requests.RequestException:
                ok = False
            elapsed = time.perf_counter() - began
            with self.lock:
                self.times[kind].append(elapsed)
                self.errors[kind] += not ok

    def upload(self, token: str, name: str, at: float) -> None:
        time.sleep(max(0.0, at - time.monotonic()))
        began = time.perf_counter()
        try:
            reply = requests.post(f"{self.base}/api/submissions", timeout=60,
                                  headers={"Authorization": f"Bearer {token}"},
                                  files={"archive": (f"{name}.tar.gz", bot_archive(name))})
            ok = reply.status_code == 202
        except requests.RequestException:
            ok = False
        with self.lock:
            self.times["upload"].append(time.perf_counter() - began)
            self.errors["upload"] += not ok


def pages(base: str) -> dict[str, list[str]]:
    games = requests.get(f"{base}/api/games", timeout=60).json()["games"]
    ids = [g["id"] for g in games][:30]
    return {"leaderboard": ["/"], "bot": ["/bots/b1", "/bots/b2", "/bots/b3"],
            "games": ["/games", "/games?bot=b1", "/games?game=five&page=1"],
            "replay": [f"/games/{i}" for i in ids], "api": ["/api/leaderboard"]}


def served_round(url: str, folder: Path, args: argparse.Namespace, token: str,
                 round_number: int) -> tuple[Window, Load, float]:
    """One server round: the ladder's games/s, the load, its wall seconds.  With
    ``--beside``, the ladder is an ``arena ladder`` process beside the server."""
    ladder = None if not args.beside else start_arena(ladder_argv(url, args))[0]
    server, base = start_arena(["serve", "--db", url, "--port", "0", "--sandbox",
                                args.sandbox, "--check-games", "2",
                                "--bot-store", str(folder / "bots"),
                                *([] if args.beside else ["--ladder", "five",
                                                          *args.ladder_flags.split()])])
    assert base is not None
    try:
        time.sleep(1.0)
        load = Load(base, pages(base))
        measuring = threading.Event()
        result: list[Window] = []
        counter = threading.Thread(target=lambda: result.append(
            window(url, args.seconds, server.pid, measuring)))  # the server's CPU
        counter.start()
        measuring.wait()
        began = time.monotonic()
        until = began + args.seconds
        with ThreadPoolExecutor(args.clients + args.uploads) as pool:
            for i in range(args.clients):
                pool.submit(load.client, until, i)
            for i in range(args.uploads):
                pool.submit(load.upload, token, f"up{round_number}x{i}",
                            began + args.seconds / 2 * i / max(1, args.uploads))
        counter.join()
        return result[0], load, time.monotonic() - began
    finally:
        stop(server)
        if ladder is not None:
            stop(ladder)


def ladder_argv(url: str, args: argparse.Namespace) -> list[str]:
    return ["ladder", "-g", "five", "-k", "2", "--db", url, "--sandbox", args.sandbox,
            "--no-report", *args.ladder_flags.split()]


def baseline_round(url: str, args: argparse.Namespace) -> Window:
    ladder, _ = start_arena(ladder_argv(url, args))
    try:
        return window(url, args.seconds, ladder.pid)
    finally:
        stop(ladder)


def set_up(url: str, folder: Path, sandbox: str) -> str:
    """Three checked bots; a user's token for the uploads."""
    token, _ = user_add(url, "bench")
    server, base = start_arena(["serve", "--db", url, "--port", "0", "--sandbox", sandbox,
                                "--check-games", "2", "--bot-store", str(folder / "bots")])
    assert base is not None
    try:
        for name in ("b1", "b2", "b3"):
            reply = requests.post(f"{base}/api/submissions", timeout=60,
                                  headers={"Authorization": f"Bearer {token}"},
                                  files={"archive": (f"{name}.tar.gz", bot_archive(name))})
            status = wait_status(base, token, reply.json()["id"])
            assert status["status"] == "passed", status
    finally:
        stop(server)
    return token


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000


def report(load: Load, seconds: float) -> list[str]:
    total = sum(len(t) for t in load.times.values())
    lines = [f"  {total / seconds:8.1f} requests/s, errors "
             f"{sum(load.errors.values())} of {total}"]
    for kind, times in sorted(load.times.items()):
        lines.append(f"  {kind:12s} {len(times):6d} requests  p50 {percentile(times, .5):7.1f} ms"
                     f"  p99 {percentile(times, .99):7.1f} ms  errors {load.errors[kind]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--uploads", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--ladder-flags", default="-j 2",
                        help="where the ladder plays, the same in both runs (default '-j 2'; "
                             "e.g. '-j 2 --workers 2': on two Dask worker processes)")
    parser.add_argument("--beside", action="store_true",
                        help="the ladder as an 'arena ladder' process beside the server "
                             "instead of 'arena serve --ladder'")
    args = parser.parse_args()
    if not (1 <= args.clients <= 1000 and 0 <= args.uploads <= 50 and
            1 <= args.seconds <= 600 and 1 <= args.rounds <= 10):
        parser.error("--clients 1..1000, --uploads 0..50, --seconds 1..600, --rounds 1..10")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = f"sqlite:///{folder / 'arena.db'}"
        token = set_up(url, folder, args.sandbox)
        print(f"{args.clients} clients, {args.uploads} uploads, {args.seconds:g} s per round, "
              f"{os.cpu_count()} CPUs, sandbox {args.sandbox}, ladder {args.ladder_flags}"
              f"{', beside the server' if args.beside else ', in the server'}")
        for number in range(args.rounds):
            alone = baseline_round(url, args)
            served, load, seconds = served_round(url, folder, args, token, number)
            ratio = served.games / alone.games if alone.games else float("nan")
            print(f"round {number + 1}: ladder alone {alone.games:.2f} games/s, beside the "
                  f"server {served.games:.2f} games/s (ratio {ratio:.2f}, goal >= {GOAL_LADDER})")
            requests_done = sum(len(t) for t in load.times.values())
            included = "" if args.beside else "its ladder included: "
            print(f"  CPU s/s: the lone ladder's process {alone.arena_cpu:.2f}; the server's "
                  f"process {served.arena_cpu:.2f} ({included}"
                  f"{served.arena_cpu * seconds / max(1, requests_done) * 1000:.2f} ms per "
                  f"request at most); the clients (this process) {served.client_cpu:.2f}")
            print("\n".join(report(load, seconds)))
            cached = [t for kind in CACHED for t in load.times.get(kind, [])]
            if cached:
                print(f"  cached pages p99 {percentile(cached, .99):.1f} ms "
                      f"(goal < {GOAL_P99_MS:g}), median of all "
                      f"{statistics.median(cached) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
