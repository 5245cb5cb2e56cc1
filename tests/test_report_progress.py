"""The report's progress lines (reports/progress.py): said as the render goes,
held back while it is young, so a quick or failing report prints none."""

from __future__ import annotations

import io
import time

from reports.progress import PREFIX, Progress


def test_a_young_render_holds_its_lines_then_says_them_at_once() -> None:
    out = io.StringIO()
    progress = Progress(out, quiet=0.3)
    progress.say("reading the stored games")
    assert out.getvalue() == ""
    time.sleep(0.35)
    progress.say("12 replay pages to write")
    assert out.getvalue().splitlines() == [PREFIX + "reading the stored games",
                                           PREFIX + "12 replay pages to write"]
    progress.done()
    assert out.getvalue().splitlines()[-1].startswith(PREFIX + "done in ")


def test_a_quick_render_says_nothing() -> None:
    out = io.StringIO()
    progress = Progress(out, quiet=60.0)
    progress.say("reading the stored games")
    progress.begin()
    progress.count("replays", 5, 5)
    progress.done()
    assert out.getvalue() == ""


def test_counts_come_every_few_seconds_and_at_the_end() -> None:
    out = io.StringIO()
    progress = Progress(out, every=3600.0, quiet=0.0)
    progress.begin()
    for done in range(1, 11):
        progress.count("replays", done, 10)
    lines = out.getvalue().splitlines()
    assert lines == [PREFIX + lines[0][len(PREFIX):]] and "replays 10/10 (100%)" in lines[0]
