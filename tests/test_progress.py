"""The progress display when the output is not a terminal: plain lines."""

from __future__ import annotations

import io

from arena.runner.progress import Progress
from arena.store.records import FaultRecord, GameRecord, GameResult


def result(decisions: int, *faults: str) -> GameResult:
    return GameResult(seed=1, bots=["a", "b"], scores=[1, 0], game_places=[1, 2],
                      places=[1, 2], ignored=[0, 0], duration=0.1, decisions=decisions,
                      record=GameRecord(),
                      faults=[FaultRecord(0, "a", kind, "", "") for kind in faults])


def test_piped_output_gets_periodic_lines_with_faults_by_kind() -> None:
    out = io.StringIO()
    progress = Progress(total=4, done=1, out=out, every=0.0)
    progress(result(100, "timeout"))
    progress(result(50, "timeout", "crash"))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[-1].startswith("arena: 3/4 games (75%), ")
    assert "moves/s" in lines[-1] and "ETA " in lines[-1]
    assert lines[-1].endswith("faults: 1 crash, 2 timeout")
    progress(result(10))
    progress.close()
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("arena: 4/4 games (100%)") and "ETA" not in last


def test_lines_are_spaced_out_and_a_final_line_closes() -> None:
    out = io.StringIO()
    progress = Progress(total=10, out=out, every=3600.0)
    for _ in range(5):
        progress(result(10))
    assert out.getvalue() == ""
    progress.close()
    assert len(out.getvalue().splitlines()) == 1
    assert out.getvalue().startswith("arena: 5/10 games (50%)")
    assert "faults: none" in out.getvalue()
