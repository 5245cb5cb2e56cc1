"""A bench script's baseline from another source tree, in the same run.

The script runs itself again in a child process whose ``PYTHONPATH`` starts
with the other tree (``--baseline-tree DIR``, for example today's main from
``git -C /work/main archive REV | tar -x -C DIR``), so ``arena`` is that tree's
code; the child is pinned to the same CPU and runs one slice at a time when the
parent asks, so the slices of both trees interleave.  Time is each process's
own CPU time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence

#: Runs whole units (games, playouts) for ``budget`` CPU seconds; returns
#: (work done, units, CPU seconds used).
Slice = Callable[[float], tuple[int, int, float]]

SERVE_FLAG = "--serve-slices"


class TreeWorker:
    """This script in a child process on ``tree``'s code, serving named slices."""

    def __init__(self, tree: str, script: str, args: Sequence[str]) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [os.path.abspath(tree), *filter(None, [os.environ.get("PYTHONPATH")])])}
        self.process = subprocess.Popen(
            [sys.executable, script, SERVE_FLAG, *args], env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.where = self._ask({"where": True})["arena"]

    def _ask(self, message: Mapping[str, object]) -> dict[str, object]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the baseline process ended (its stderr says why)")
        answer: dict[str, object] = json.loads(line)
        return answer

    def slice(self, name: str) -> Slice:
        """Run ``name``'s slices in the child."""
        def run(budget: float) -> tuple[int, int, float]:
            got = self._ask({"run": name, "budget": budget})
            return int(got["work"]), int(got["units"]), float(got["cpu"])  # type: ignore[arg-type]
        return run

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def serve(slices: Mapping[str, Slice]) -> None:
    """The child's loop: one JSON request a line on stdin, one answer a line."""
    import arena

    for line in sys.stdin:
        request = json.loads(line)
        if request.get("where"):
            answer: dict[str, object] = {"arena": os.path.dirname(arena.__file__ or "")}
        else:
            work, units, cpu = slices[request["run"]](request["budget"])
            answer = {"work": work, "units": units, "cpu": cpu}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
