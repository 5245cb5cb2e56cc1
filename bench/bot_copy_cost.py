"""What the private copy of a bot's files costs each bot process (issue 28
point 3): start-up to ``hello`` under bubblewrap with the copy (the default)
and without it (the same files bound read-only, the baseline), measured
interleaved in one run, pinned to one CPU, for the sample bots' folder and the
Python, JavaScript and C starter kits, each as a stored version's directory.

    taskset -c 1 python bench/bot_copy_cost.py [--starts 15] [--cpu 1]

A kit whose toolchain is missing here (node and npm, cc and msgpack-c) is left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from arena.bots.starter import new_bot
from arena.runner.client import BotClient
from arena.runner.process import BotSpec, start_bot_process
from arena.runner.sandbox import Sandbox, resolve

REPO = Path(__file__).resolve().parent.parent


def bots(root: Path) -> dict[str, BotSpec]:
    """Each measured bot as a stored version would run: a directory and its command."""
    samples = root / "samples"
    shutil.copytree(REPO / "sample_bots", samples / "sample_bots",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "protocol", samples / "protocol",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = {"sample bots": BotSpec("samples", "python -m sample_bots.random_bot", str(samples))}
    for language, command, build in (("python", "python bot.py", None),
                                     ("javascript", "node bot.js", None),
                                     ("c", "./bot", "cc -O2 -std=c11 -o bot bot.c -lmsgpackc")):
        folder = root / f"kit_{language}"
        try:
            new_bot(folder, language)
            if build:
                subprocess.run(build.split(), cwd=folder, check=True, capture_output=True)
        except Exception as exc:  # a missing toolchain: left out, said so
            print(f"{language} kit left out: {exc}", file=sys.stderr)
            continue
        out[f"{language} kit"] = BotSpec(language, command, str(folder))
    for path in root.rglob("*"):
        path.chmod(path.stat().st_mode | 0o055)  # under root the bot runs as nobody
    root.chmod(0o755)
    return out


async def start_up(spec: BotSpec, sandbox: Sandbox) -> float:
    """Seconds from spawning the bot to its hello."""
    async with trio.open_nursery() as nursery:
        began = time.perf_counter()
        bot = await start_bot_process(spec, nursery, sandbox)
        try:
            await BotClient(bot).handshake(30)
            return time.perf_counter() - began
        finally:
            await bot.aclose()


async def measure(specs: dict[str, BotSpec], starts: int) -> dict[tuple[str, str], list[float]]:
    copy = resolve("bwrap")
    kinds = {"bind": dataclasses.replace(copy, private_copy=False), "copy": copy}
    out: dict[tuple[str, str], list[float]] = {}
    for _ in range(starts):
        for name, spec in specs.items():
            for kind, sandbox in kinds.items():
                out.setdefault((name, kind), []).append(await start_up(spec, sandbox))
    return out


def size(folder: str) -> tuple[int, int]:
    files = [p for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink()]
    return len(files), sum(p.stat().st_size for p in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=15)
    parser.add_argument("--cpu", type=int, default=1, help="the CPU to pin to")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    with tempfile.TemporaryDirectory(prefix="copy-cost-") as root:
        specs = bots(Path(root))
        out = trio.run(measure, specs, args.starts)
        print(f"pinned to CPU {args.cpu}; {args.starts} starts of each, interleaved; "
              f"start-up to hello, median (ms); bind = no copy, the baseline")
        print(f"{'bot':16}{'files':>7}{'KiB':>9}{'bind':>9}{'copy':>9}{'ratio':>8}{'extra':>9}")
        for name, spec in specs.items():
            files, total = size(str(spec.directory))
            bind = statistics.median(out[name, "bind"]) * 1e3
            copy = statistics.median(out[name, "copy"]) * 1e3
            print(f"{name:16}{files:>7}{total >> 10:>9}{bind:>9.1f}{copy:>9.1f}"
                  f"{copy / bind:>7.2f}x{copy - bind:>+9.1f}")


if __name__ == "__main__":
    main()
