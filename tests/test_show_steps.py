"""``arena show`` numbers the steps of each view without gaps: a rummy-five claim
window that a viewer may not see leaves no trace in the numbering (issue 19, 6)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from arena.store.database import Store
from tests.test_cli import arena_here

RANDOM = f"{sys.executable} -m sample_bots.random_bot"


def test_show_numbers_every_view_of_rummy_five_without_gaps(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = f"sqlite:///{tmp_path / 'a.db'}"
    run = arena_here(capsys, "tournament", "-g", "rummy-five", "-k", "3", "-n", "6",
                     "--seed", "3", "--workers", "1", "--sandbox", "none", "-b", f"a={RANDOM}",
                     "-b", f"b={RANDOM}", "-b", f"c={RANDOM}", "--db", db)
    assert run.returncode == 0, run.stderr
    store = Store(db)
    hidden_steps = 0
    games = list(store.games())[:4]
    for game in games:
        record = store.record(game.id)
        assert record is not None
        for view in ([], ["--seat", "0"], ["--seat", "1"], ["--seat", "2"]):
            # In this process (16 views: a process each took 10 s); the CLI's own main.
            shown = arena_here(capsys, "show", str(game.id), *view, "--db", db)
            assert shown.returncode == 0, shown.stderr
            numbers = [int(n) for n in re.findall(r"^step (\d+): ", shown.stdout, re.M)]
            assert numbers and numbers == list(range(len(numbers))), (game.id, view)
            hidden_steps += len(record.actions) - len(numbers)
    # The views left steps out (claim windows), so gaps were possible.
    assert hidden_steps > 0
