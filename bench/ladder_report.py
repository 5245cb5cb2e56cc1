"""The ladder's games per second with its report re-rendered as it runs, against the
same ladder without a report, in the same run (interleaved).

    python bench/ladder_report.py [--seconds 60] [--rounds 2] [--every 50] [-j 2]
                                  [--game furious-five] [--seats 3] [--sandbox auto]

Each round runs, taking turns, ``arena ladder`` of four random sample bots into a
fresh SQLite database: once with ``--no-report`` (the baseline) and once with
``--report-every N`` (the report re-rendered every N games, each replay page from the
views the view builder stored, or computed then).  Games per second are counted in the
database over ``--seconds`` after a warm-up of :data:`WARMUP` s; then the ladder is
stopped with SIGINT, as Ctrl-C would (its closing render is not timed).

Goal (issue 20): the re-rendering ladder at least :data:`GOAL` x the baseline's
games/s (its re-render must not halve them).
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

WARMUP = 15.0
GOAL = 0.5
BOTS = 4


def games(path: Path) -> int:
    """Games stored so far in the database file (0 before it exists)."""
    if not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as connection:
        try:
            return int(connection.execute("SELECT count(*) FROM games").fetchone()[0])
        except sqlite3.OperationalError:  # not created yet
            return 0


def run(work: Path, report_every: int | None, args: argparse.Namespace) -> float:
    """One ladder's games per second over the measured window."""
    folder = Path(tempfile.mkdtemp(dir=work))
    db = folder / "ladder.db"
    argv = [sys.executable, "-m", "arena.cli", "ladder", "-g", args.game, "-k", str(args.seats),
            "--db", f"sqlite:///{db}", "--out", str(folder / "site"), "-j", str(args.jobs),
            "--sandbox", args.sandbox, "--report-minutes", "0"]
    argv += ["--no-report"] if report_every is None else ["--report-every", str(report_every)]
    for bot in range(BOTS):
        argv += ["-b", f"random{bot}=python -m sample_bots.random_bot"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(WARMUP)
        first, started = games(db), time.monotonic()
        time.sleep(args.seconds)
        rate = (games(db) - first) / (time.monotonic() - started)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(120)
        except subprocess.TimeoutExpired:
            process.kill()
    if process.returncode not in (0, 3, 130):
        raise SystemExit(f"arena ladder exited with {process.returncode}: {' '.join(argv)}")
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--every", type=int, default=50, help="--report-every N")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--game", default="furious-five")
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ladder-report-"))
    rates: dict[str, list[float]] = defaultdict(list)
    for _ in range(args.rounds):
        rates["without a report"].append(run(work, None, args))
        rates[f"report every {args.every} games"].append(run(work, args.every, args))
    for label, values in rates.items():
        print(f"{label:<26} {statistics.median(values):6.2f} games/s  "
              f"({', '.join(f'{v:.2f}' for v in values)})")
    base, with_report = (statistics.median(values) for values in rates.values())
    ratio = with_report / base if base else float("nan")
    print(f"ratio {ratio:.2f} (goal: at least {GOAL}); {args.game}, tables of {args.seats}, "
          f"-j {args.jobs}, sandbox {args.sandbox}, {args.seconds:g} s windows, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
