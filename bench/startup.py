"""What ``arena`` costs before it does anything: CPU time of ``arena --version``,
``arena --help``, a 2-game and a 12-game tournament (start, schema check, games of
random bots, closing standings), beside another source tree (by default today's
main, unpacked at /tmp/base_main), in interleaved rounds.

    python bench/startup.py [--rounds 5] [--baseline-tree /tmp/base_main]

Each command runs as ``python -m arena ...`` with ``PYTHONPATH`` at one tree, in a
fresh folder.  CPU time is the user + system time of the finished child and its
descendants (``resource.getrusage(RUSAGE_CHILDREN)``): for the tournament, its
bots too; "arena's own" is the arena process alone (its ``RUSAGE_SELF`` at exit,
read by a wrapper around its ``main``), the fixed cost the bots do not add.
Medians over the rounds; the ratio is this tree's over the baseline's.  CPU time,
not wall time, so a busy machine changes it less (caches and frequency still do).
Bytecode is cached as an installed arena's is (pip writes it; Python on first use),
in a folder of the bench's own (``PYTHONPYCACHEPREFIX``, so neither tree is
written to), warmed by one uncounted run of each command per tree: without it,
under ``PYTHONDONTWRITEBYTECODE``, every run would also compile each of the
arena's modules from source (about 0.2 s of a tournament's CPU), a cost no user's
arena pays twice.
The goals (issue 29) are printed beside: ``--version`` and ``--help`` under 0.15 s,
a small tournament's fixed cost (the arena's own CPU: start, schema check, closing
standings) under 0.5 s.  The fixed cost is the 2-game tournament's own CPU less its
two games, each priced from a 12-game tournament's (the same bots): what is left
would be a tournament of no games.  "floor" is a Python process that imports only
the libraries a run needs (SQLAlchemy with its SQLite dialect, numpy, trio) and
exits: the part of the fixed cost that is not the arena's own code.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
RANDOM = f"{sys.executable} -m sample_bots.random_bot"

#: Runs ``arena ARGS`` by its ``main``, then prints its own CPU seconds on stderr.
WRAPPER = """
import resource, sys
if sys.argv[1:] == ["FLOOR"]:  # the libraries a run cannot do without, and nothing else
    import numpy, sqlalchemy.dialects.sqlite, trio
    own = resource.getrusage(resource.RUSAGE_SELF)
    print(f"OWN-CPU {own.ru_utime + own.ru_stime:.4f}", file=sys.stderr)
    sys.exit(0)
from arena.cli import main
try:
    status = main(sys.argv[1:])
except SystemExit as exc:
    status = exc.code
own = resource.getrusage(resource.RUSAGE_SELF)
print(f"OWN-CPU {own.ru_utime + own.ru_stime:.4f}", file=sys.stderr)
sys.exit(status)
"""

#: Each command's goal in CPU seconds, and which figure it is measured on.
GOALS: dict[str, tuple[float | None, str]] = {
    "arena --version": (0.15, "all"),
    "arena --help": (0.15, "all"),
    "2-game tournament": (0.5, "arena own"),
}
#: The goal of a small tournament's fixed cost: the arena's own CPU less its games'.
FIXED_GOAL = 0.5



def tournament(games: int) -> list[str]:
    return ["tournament", "-g", "five", "-k", "2", "-n", str(games), "-j", "1",
            "--sandbox", "none", "-b", f"a={RANDOM}", "-b", f"b={RANDOM}",
            "--db", "sqlite:///t.db"]


COMMANDS: dict[str, list[str]] = {
    "arena --version": ["--version"],
    "arena --help": ["--help"],
    "2-game tournament": tournament(2),
    "12-game tournament": tournament(12),
    "floor: libraries only": ["FLOOR"],
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(tree: Path, args: list[str], pycache: Path) -> tuple[float, float]:
    """(CPU seconds of ``arena ARGS`` and its descendants, of the arena process alone),
    its bytecode cached under ``pycache``."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(pycache)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        before = children_cpu()
        done = subprocess.run([sys.executable, "-c", WRAPPER, *args], cwd=folder, env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              check=False, timeout=600)
        total = children_cpu() - before
    if done.returncode != 0:
        raise SystemExit(f"startup: {tree}: arena {' '.join(args)} failed: "
                         f"{done.stderr.strip()[-500:]}")
    own = [float(line.split()[1]) for line in done.stderr.splitlines()
           if line.startswith("OWN-CPU ")]
    return total, own[-1]


def run_rounds(trees: dict[str, Path], rounds: int, caches: Path
               ) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """Every command on every tree, ``rounds`` times interleaved, after an uncounted
    run of each that fills the tree's bytecode cache (a folder under ``caches``)."""
    pycache = {tree: caches / str(number) for number, tree in enumerate(trees)}
    for argv in COMMANDS.values():
        for tree, path in trees.items():
            measure(path, argv, pycache[tree])
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {
        (tree, name): [] for tree in trees for name in COMMANDS}
    for number in range(rounds):
        order = list(trees.items()) if number % 2 == 0 else list(reversed(trees.items()))
        for name, argv in COMMANDS.items():
            for tree, path in order:
                samples[tree, name].append(measure(path, argv, pycache[tree]))
        print(f"round {number + 1}/{rounds} done", file=sys.stderr)
    return samples


def fixed_cost(samples: dict[tuple[str, str], list[tuple[float, float]]], tree: str
               ) -> float:
    """The arena's own CPU of a tournament of no games: the 2-game tournament's less
    its two games, each priced at a tenth of what the 12-game one costs more."""
    two, twelve = (statistics.median(s[1] for s in samples[tree, name])
                   for name in ("2-game tournament", "12-game tournament"))
    return two - 2 * (twelve - two) / 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline-tree", type=Path, default=Path("/tmp/base_main"))
    args = parser.parse_args()
    if not (args.baseline_tree / "arena").is_dir():
        raise SystemExit(f"startup: no source tree at {args.baseline_tree} (make one with "
                         f"git -C /work/main archive REV | tar -x -C DIR)")
    trees = {"this tree": HERE, "baseline": args.baseline_tree}
    with tempfile.TemporaryDirectory() as caches:
        samples = run_rounds(trees, args.rounds, Path(caches))
    print(f"CPU seconds, median of {args.rounds} interleaved rounds "
          f"(baseline: {args.baseline_tree})")
    print(f"{'command':<22} {'this tree':>10} {'baseline':>10} {'ratio':>7}   "
          f"{'arena own':>9} {'baseline':>9} {'ratio':>7}   goal")
    for name in COMMANDS:
        new, old = (samples["this tree", name], samples["baseline", name])
        total_new, total_old = (statistics.median(s[0] for s in x) for x in (new, old))
        own_new, own_old = (statistics.median(s[1] for s in x) for x in (new, old))
        goal, figure = GOALS.get(name, (None, ""))
        measured = own_new if figure == "arena own" else total_new
        verdict = f"< {goal:g} s ({figure}): {'met' if measured < goal else 'NOT met'}" \
            if goal is not None else ""
        print(f"{name:<22} {total_new:>10.3f} {total_old:>10.3f} {total_new / total_old:>7.2f}"
              f"   {own_new:>9.3f} {own_old:>9.3f} {own_new / own_old:>7.2f}   {verdict}")
    fixed_new, fixed_old = (fixed_cost(samples, tree) for tree in ("this tree", "baseline"))
    print(f"{'fixed cost (no games)':<22} {'':>10} {'':>10} {'':>7}   {fixed_new:>9.3f} "
          f"{fixed_old:>9.3f} {fixed_new / fixed_old:>7.2f}   < {FIXED_GOAL:g} s "
          f"(arena own): {'met' if fixed_new < FIXED_GOAL else 'NOT met'}")

if __name__ == "__main__":
    main()
