"""The competition server under load, beside its ladder, on this machine (loopback only).

    python bench/server_load.py [--clients 200] [--uploads 10] [--seconds 20]
                                [--think 1.0] [--rounds 2] [--sandbox auto]
                                [--ladder-flags '-j 2'] [--serve-flags '--ladder-nice 5']

Set-up: a fresh SQLite database; three bots uploaded to ``arena serve`` and
checked (the ladder's entrants); a few ladder games so every page has content.
Then ``--rounds`` rounds, each taking turns (interleaved):

* baseline: ``arena ladder -g five -k 2`` alone on the database for ``--seconds``:
  the ladder's games per second;
* server: ``arena serve --ladder five`` (its ladder an ``arena ladder`` child
  process continuing the database's ladder) with ``--clients`` concurrent
  clients browsing the leaderboard, bot pages, game lists and replays for
  ``--seconds``, plus ``--uploads`` uploads spread over the first half (each by
  a user of its own, as a user may have only a few queued at once):
  requests per second, p50/p99 latency per page kind, errors (goal 0), and the
  ladder's games per second (goal: at most 20% below the baseline's); p99 of
  cached pages goal < 250 ms.

The clients are asynchronous, in this one process (trio and h11: one keep-alive
HTTP/1.1 connection each, 200 connections open at once), so that the load costs
little CPU; each waits a random 0 to 2 x ``--think`` seconds between two pages,
as a person reading them would (``--think 0``: back to back, a saturation test in
which latency is the number of clients over the server's rate).  They share the
machine with the server and the ladder: their CPU is printed too.  Uploads use
``requests`` in threads.

Each window also prints the CPU seconds per second of the arena's parts (the
lone ladder's or the server's process, the ladder's processes, the uploads'
builds and checks), read from /proc every 0.25 s (a process living less than
that is missed).

Games per second and requests are counted between the start and the end of the
measured window, after a warm-up in which the clients browse already (the
server's first drawing of each page is not counted).
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
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import h11
import requests
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.store.accounts import Accounts
from arena.store.database import Store
from tests.server import bot_archive, start_arena, stop, user_add, wait_status

WARMUP = 5.0
#: Page kinds whose repeated requests are served from the server's caches.
CACHED = ("leaderboard", "bot", "games", "replay", "api")
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


#: Seconds between two readings of /proc by :class:`Sampler`.
SAMPLE_SECONDS = 0.25


class Sampler:
    """CPU seconds of every process descending from ``root`` (and of ``root``), by
    part: the root process itself, the ladder's processes (``arena ladder`` and
    its descendants), and the rest (the uploads' builds and checks: their bots,
    and a checker process if any), read from /proc every :data:`SAMPLE_SECONDS`
    in a thread (a process living less than that is missed)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, float] = {}
        self.totals: dict[str, float] = defaultdict(float)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def part(self, pid: int, parents: dict[int, int], argv: dict[int, bytes]) -> str | None:
        """Which part of the root's tree ``pid`` is in (None: not in it)."""
        if pid == self.root:
            return "arena process"
        part = "ladder" if b"\0ladder\0" in argv.get(self.root, b"") else \
            "uploads' builds and checks"
        while pid != self.root:
            if b"\0ladder\0" in argv.get(pid, b""):
                part = "ladder"
            pid = parents.get(pid, 0)
            if pid <= 1:
                return None
        return part

    def sample(self) -> None:
        parents: dict[int, int] = {}
        argv: dict[int, bytes] = {}
        cpu: dict[int, float] = {}
        tick = os.sysconf("SC_CLK_TCK")
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
                argv[int(entry.name)] = b"\0" + (entry / "cmdline").read_bytes()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
        for pid, seconds in cpu.items():
            part = self.part(pid, parents, argv)
            if part is not None:  # a process first seen counts from 0: it is new
                self.totals[part] += seconds - self.seen.get(pid, 0.0)
                self.seen[pid] = seconds

    def run(self) -> None:
        while not self.stopping.wait(SAMPLE_SECONDS):
            self.sample()

    def start(self) -> None:
        self.sample()  # what the processes alive now used before is not counted
        self.totals.clear()
        self.began = time.monotonic()
        self.thread.start()

    def stop(self) -> dict[str, float]:
        """CPU s/s of each part since :meth:`start`."""
        self.stopping.set()
        self.thread.join()
        self.sample()
        wall = time.monotonic() - self.began
        return {part: seconds / wall for part, seconds in sorted(self.totals.items())}


@dataclass
class Window:
    """The measured window: the ladder's games/s, the arena process's CPU s/s
    (the server's, or the lone ladder's), the bench's own CPU s/s (the clients)."""

    games: float
    arena_cpu: float
    client_cpu: float
    #: CPU s/s of the arena process's parts (:class:`Sampler`).
    parts: dict[str, float]


class Meter:
    """What the newest ladder and process ``pid`` did from :meth:`start` to :meth:`end`."""

    def __init__(self, url: str, pid: int) -> None:
        self.url, self.pid = url, pid

    def start(self) -> None:
        self.games, self.began = ladder_games(self.url), time.monotonic()
        self.cpu, self.client = cpu_seconds(self.pid), time.process_time()
        self.sampler = Sampler(self.pid)
        self.sampler.start()

    def end(self) -> Window:
        wall = time.monotonic() - self.began
        parts = self.sampler.stop()
        return Window((ladder_games(self.url) - self.games) / wall,
                      (cpu_seconds(self.pid) - self.cpu) / wall,
                      (time.process_time() - self.client) / wall,
                      parts)


#: Errors of one request: the connection refused, reset or closed, a bad reply, too slow.
REQUEST_ERRORS = (OSError, trio.BrokenResourceError, trio.ClosedResourceError,
                  trio.TooSlowError, h11.ProtocolError)


class Load:
    """Clients browsing a server, their latencies and errors by page kind."""

    def __init__(self, base: str, paths: dict[str, list[str]], think: float) -> None:
        self.base, self.paths, self.think = base, paths, think
        address = urlsplit(base)
        self.host, self.port = address.hostname or "127.0.0.1", address.port or 80
        self.times: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.measuring = False

    async def client(self, until: float, seed: int) -> None:
        """One browser: a keep-alive connection (opened again if it fails)."""
        rng = random.Random(seed)
        await trio.sleep(rng.uniform(0, 2 * self.think))
        stream: trio.SocketStream | None = None
        connection = h11.Connection(h11.CLIENT)
        while time.monotonic() < until:
            kind = rng.choice(list(self.paths))
            path = rng.choice(self.paths[kind])
            began = time.perf_counter()
            try:
                with trio.fail_after(30):
                    if stream is None:
                        stream = await trio.open_tcp_stream(self.host, self.port)
                        connection = h11.Connection(h11.CLIENT)
                    ok = await self.get(stream, connection, path) == 200
                connection.start_next_cycle()
            except REQUEST_ERRORS:
                ok = False
                if stream is not None:
                    await stream.aclose()
                stream = None
            if self.measuring:  # a request of the warm-up is not counted
                self.times[kind].append(time.perf_counter() - began)
                self.errors[kind] += not ok
            await trio.sleep(rng.uniform(0, 2 * self.think))
        if stream is not None:
            await stream.aclose()

    async def get(self, stream: trio.SocketStream, connection: h11.Connection,
                  path: str) -> int:
        """GET ``path``, its body read whole; the status."""
        await stream.send_all(connection.send(h11.Request(
            method="GET", target=path, headers=[("Host", self.host)])) +
            (connection.send(h11.EndOfMessage()) or b""))
        status = 0
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                connection.receive_data(data)
                if not data and connection.their_state is not h11.DONE:
                    raise trio.BrokenResourceError("the server closed the connection")
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.EndOfMessage):
                return status

    def upload(self, token: str, name: str, archive: bytes) -> None:
        """One upload (blocking: ``requests``, in a thread), counted whenever it ends."""
        began = time.perf_counter()
        try:
            reply = requests.post(f"{self.base}/api/submissions", timeout=60,
                                  headers={"Authorization": f"Bearer {token}"},
                                  files={"archive": (f"{name}.tar.gz", archive)})
            ok = reply.status_code == 202
        except requests.RequestException:
            ok = False
        self.times["upload"].append(time.perf_counter() - began)
        self.errors["upload"] += not ok

    async def run(self, args: argparse.Namespace, tokens: list[str], round_number: int,
                  meter: Meter) -> tuple[Window, float]:
        """The warm-up (the clients browsing already), then the measured window:
        its figures and wall seconds.  The bench's own work (the archives, the
        meter's database reads) stays out of the clients' event loop, or its
        stalls would count as the server's latency."""
        names = [f"up{round_number}x{i}" for i in range(args.uploads)]
        archives = [bot_archive(name) for name in names]
        until = time.monotonic() + WARMUP + args.seconds
        async with trio.open_nursery() as nursery:
            for i in range(args.clients):
                nursery.start_soon(self.client, until, i)
            await trio.sleep(WARMUP)
            self.measuring = True
            await trio.to_thread.run_sync(meter.start)
            began = time.monotonic()
            for i, (token, name, archive) in enumerate(zip(tokens, names, archives,
                                                           strict=True)):
                nursery.start_soon(self.upload_at, began + args.seconds / 2 * i /
                                   max(1, args.uploads), token, name, archive)
            await trio.sleep(args.seconds)
            window = await trio.to_thread.run_sync(meter.end)
            self.measuring = False
        return window, time.monotonic() - began

    async def upload_at(self, at: float, token: str, name: str, archive: bytes) -> None:
        await trio.sleep(max(0.0, at - time.monotonic()))
        await trio.to_thread.run_sync(self.upload, token, name, archive)


def pages(base: str) -> dict[str, list[str]]:
    games = requests.get(f"{base}/api/games", timeout=60).json()["games"]
    ids = [g["id"] for g in games][:30]
    return {"leaderboard": ["/"], "bot": ["/bots/b1", "/bots/b2", "/bots/b3"],
            "games": ["/games", "/games?bot=b1", "/games?game=five&page=1"],
            "replay": [f"/games/{i}" for i in ids], "api": ["/api/leaderboard"]}


def served_round(url: str, folder: Path, args: argparse.Namespace, tokens: list[str],
                 round_number: int) -> tuple[Window, Load, float]:
    """One server round: the ladder's games/s, the load, its wall seconds."""
    server, base = start_arena(["serve", "--db", url, "--port", "0", "--sandbox",
                                args.sandbox, "--check-games", "2",
                                "--bot-store", str(folder / "bots"), "--ladder", "five",
                                *args.ladder_flags.split(), *args.serve_flags.split()])
    assert base is not None
    try:
        time.sleep(1.0)
        load = Load(base, pages(base), args.think)
        window, seconds = trio.run(load.run, args, tokens, round_number,
                                   Meter(url, server.pid))  # the server's CPU
        return window, load, seconds
    finally:
        stop(server)


def ladder_argv(url: str, args: argparse.Namespace) -> list[str]:
    return ["ladder", "-g", "five", "-k", "2", "--db", url, "--sandbox", args.sandbox,
            "--no-report", *args.ladder_flags.split()]


def baseline_round(url: str, args: argparse.Namespace) -> Window:
    ladder, _ = start_arena(ladder_argv(url, args))
    try:
        time.sleep(WARMUP)
        meter = Meter(url, ladder.pid)
        meter.start()
        time.sleep(args.seconds)
        return meter.end()
    finally:
        stop(ladder)


def set_up(url: str, folder: Path, sandbox: str, uploads: int) -> list[str]:
    """Three checked bots; the tokens of a user for each of a round's uploads."""
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
    return [user_add(url, f"uploader{i}")[0] for i in range(uploads)]


def upload_statuses(url: str, round_number: int, uploads: int) -> str:
    """How far the round's uploads got by the time its server stopped."""
    store = Store(url)
    try:
        found = Accounts(store).submissions(
            bases=[f"up{round_number}x{i}" for i in range(uploads)])
    finally:
        store.close()
    counts = Counter(submission.status for submission in found)
    said = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    ended = [(s.updated - s.created).total_seconds() for s in found
             if s.status in ("passed", "failed")]
    if ended:
        said += (f"; upload to its end {statistics.median(ended):.1f} s median, "
                 f"{max(ended):.1f} s at most")
    return said


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
    parser.add_argument("--serve-flags", default="",
                        help="more flags of 'arena serve' (e.g. '--ladder-nice 0')")
    parser.add_argument("--think", type=float, default=1.0,
                        help="mean seconds a client waits between two pages (default 1; "
                             "0: back to back)")
    args = parser.parse_args()
    if not (1 <= args.clients <= 1000 and 0 <= args.uploads <= 50 and
            1 <= args.seconds <= 600 and 1 <= args.rounds <= 10 and 0 <= args.think <= 60):
        parser.error("--clients 1..1000, --uploads 0..50, --seconds 1..600, --rounds 1..10, "
                     "--think 0..60")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = f"sqlite:///{folder / 'arena.db'}"
        tokens = set_up(url, folder, args.sandbox, args.uploads)
        print(f"{args.clients} clients (think {args.think:g} s), {args.uploads} uploads, "
              f"{args.seconds:g} s per round, {os.cpu_count()} CPUs, sandbox {args.sandbox}, "
              f"ladder {args.ladder_flags}{' ' + args.serve_flags if args.serve_flags else ''}"
              f"; load average before "
              f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
        for number in range(args.rounds):
            alone = baseline_round(url, args)
            served, load, seconds = served_round(url, folder, args, tokens, number)
            ratio = served.games / alone.games if alone.games else float("nan")
            print(f"round {number + 1}: ladder alone {alone.games:.2f} games/s, beside the "
                  f"server {served.games:.2f} games/s (ratio {ratio:.2f}, goal >= {GOAL_LADDER})")
            requests_done = sum(len(t) for t in load.times.values())
            print(f"  CPU s/s: the lone ladder's process {alone.arena_cpu:.2f}; the server's "
                  f"process {served.arena_cpu:.2f} ("
                  f"{served.arena_cpu * seconds / max(1, requests_done) * 1000:.2f} ms per "
                  f"request); the clients (this process) {served.client_cpu:.2f}")
            for label, window in (("alone", alone), ("beside the server", served)):
                print(f"  CPU s/s {label}: " + ", ".join(
                    f"{name} {value:.2f}" for name, value in window.parts.items()))
            print("\n".join(report(load, seconds)))
            if args.uploads:
                print(f"  the round's uploads when its server stopped: "
                      f"{upload_statuses(url, number, args.uploads)} (unfinished ones are "
                      f"checked by the next server)")
            cached = [t for kind in CACHED for t in load.times.get(kind, [])]
            if cached:
                print(f"  cached pages p99 {percentile(cached, .99):.1f} ms "
                      f"(goal < {GOAL_P99_MS:g}), median of all "
                      f"{statistics.median(cached) * 1000:.1f} ms")
        print(f"load average after {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
