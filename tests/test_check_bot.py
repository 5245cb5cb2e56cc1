"""``arena check-bot`` with real bots: the random bot passes; the zoo's crashing,
hanging, garbage-writing, oversized, illegal, slow-starting and slow-moving bots
fail with the right words; ``--json``; ``--db`` stores checks that no leaderboard
counts and the bot's page shows; bad input is one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import trio

from arena.bots.check import CheckReport, check_bot
from arena.runner.client import TimeControl
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.tournament import run_tournament
from arena.store.database import CHECK_KIND, Store
from reports.export import export
from reports.render import bot_page, render_report
from tests.test_cli import RANDOM, arena, assert_one_line_error

HERE = Path(__file__).resolve().parent
ZOO = HERE / "bots" / "zoo"
SPENDER = HERE / "bots" / "spender_bot.py"
PY = sys.executable
#: One round of furious-five: about 50 decisions a game.
FAST = {"rounds": "1"}
FAST_FLAGS = ("-g", "furious-five", "-o", "rounds=1", "--move-time", "0.5", "--bank-time", "0.5",
              "--handshake-time", "3")
CONTROL = TimeControl(handshake=3, move=0.5, bank=0.5)


def check(command: str, control: TimeControl = CONTROL, games: int = 2,
          **options: str) -> CheckReport:
    """Check ``command`` in furious-five: one duplicate group, short games."""
    return check_bot(BotSpec("bot", command), ["furious-five"], control=control,
                     games_per_type=games, parallel=2, options={**FAST, **options})


def test_the_random_bot_passes_with_every_measure() -> None:
    report = check(RANDOM, games=4)
    assert report.passed, report.text()
    (game,) = report.checks
    assert (game.game, game.table_size, game.games) == ("furious-five", 2, 4)
    assert game.faults == [] and game.reasons == [] and game.handshake_failures == []
    assert game.starts == 2 and len(game.startup_ms) == 2  # one process per seat rotation
    assert all(0 < ms < 3000 for ms in game.startup_ms)
    assert game.hello["name"] == "random"
    assert game.wall_ms is not None and game.cpu_ms is not None and game.wall_ms.moves > 20
    assert game.wall_ms.p50 <= game.wall_ms.p99 <= game.wall_ms.max < 500
    assert game.peak_memory_kb is not None and 2_000 < game.peak_memory_kb < 1024 * 1024
    text = "\n".join(report.text())
    for words in ("furious-five: 4 games against the random bot, 2 seats: passed",
                  "handshake: ok (start-up ", "faults: none", "stray output: none",
                  "oversized messages: none", "move time: wall p50 ", "of 500 ms (wall clock",
                  "memory: peak ", "result: PASSED"):
        assert words in text, text


@pytest.mark.parametrize(("command", "kind", "words"), [
    (f"{PY} {ZOO / 'crash.py'}", "crash",
     ["crash: exited with code 3", "stderr| zoo crash: about to crash"]),
    (f"{PY} {ZOO / 'hang.py'}", "timeout",
     ["timeout: no reply before the deadline", "stderr| zoo hang: hanging now"]),
    (f"{PY} {ZOO / 'illegal.py'} out_of_range", "illegal_action",
     ["illegal: action index", "out of range"]),
    (f"{PY} {ZOO / 'garbage.py'}", "protocol_error",
     ["stray output: 2 fault(s): malformed msgpack", "oversized messages: none"]),
    (f"{PY} {ZOO / 'huge_claim.py'} bin32", "protocol_error",
     ["oversized messages: 2: a string of", "exceeds the limit", "stray output: none"]),
])
def test_a_misbehaving_bot_fails_with_its_fault_in_words(command: str, kind: str,
                                                         words: list[str]) -> None:
    control = TimeControl(handshake=3, move=0.2, bank=0.2)
    report = check(command, control)
    assert not report.passed
    (game,) = report.checks
    assert [f.kind for f in game.faults] == [kind, kind]  # once in each seat
    assert sorted(f.seat for f in game.faults) == [0, 1]
    assert game.reasons == ["2 fault(s)"]
    text = "\n".join(report.text())
    assert "FAILED: 2 fault(s)" in text and "result: FAILED" in text
    for needle in words:
        assert needle in text, text


def test_a_bot_that_never_says_hello_fails_its_handshake() -> None:
    report = check(f"{PY} {ZOO / 'slow_start.py'}", TimeControl(handshake=0.5, move=0.5, bank=0))
    (game,) = report.checks
    assert not report.passed and game.startup_ms == []
    assert game.handshake_failures and game.handshake_failures[0].startswith("timeout: no hello")
    assert "handshake: FAILED in 2 of 2 starts: timeout: no hello" in "\n".join(report.text())


def test_a_bot_slower_than_the_move_time_fails_on_its_p99_without_a_fault() -> None:
    report = check(f"{PY} {SPENDER} sleep 0.03", TimeControl(handshake=3, move=0.01, bank=30),
                   max_turns="10")
    (game,) = report.checks
    assert game.faults == [] and not game.passed
    assert game.wall_ms is not None and game.wall_ms.p99 > 10
    assert game.moves_over_limit == game.wall_ms.moves
    assert game.reasons[0].startswith("p99 move time ") and "over the 10 ms move time" in \
        game.reasons[0]


def test_cli_plain_words_and_exit_status() -> None:
    proc = arena("check-bot", *FAST_FLAGS, "-b", f"mine={RANDOM}")
    assert proc.returncode == 0, proc.stderr
    assert "bot 'mine': " in proc.stdout and "result: PASSED" in proc.stdout
    assert "handshake: ok (start-up " in proc.stdout and "faults: none" in proc.stdout


def test_db_stores_checks_that_no_leaderboard_counts(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store(url)
    plan = Plan(game="furious-five", bots=(BotSpec("mine", RANDOM), BotSpec("other", RANDOM)),
                table_size=2, games_per_table=2, options=FAST)
    trio.run(lambda: run_tournament(plan, store, create_tournament(store, plan), parallel=2))
    proc = arena("check-bot", *FAST_FLAGS, "--json", "-b", f"mine={PY} {ZOO / 'crash.py'}",
                 "--db", url)
    assert proc.returncode == 3, proc.stderr
    assert_json_shape(json.loads(proc.stdout), "mine@1")  # stored: as a version
    passed = check_bot(BotSpec("mine@1", RANDOM), ["furious-five"], control=CONTROL,
                       parallel=2, options=FAST, store=store)
    assert passed.passed and passed.checks[0].tournament_id == 3

    checks = store.checks("mine@1")
    assert [c["tournament_id"] for c in checks] == [3, 2] and checks[0]["passed"]
    assert not checks[1]["passed"] and checks[1]["faults"][0]["kind"] == "crash"
    assert store.checks("other") == []
    stored = store.tournament(3)
    assert stored is not None and stored["kind"] == CHECK_KIND
    assert stored["status"] == "finished" and stored["games_done"] == 4
    seats = [game.seats.index("mine@1") for game in store.games(3)]
    assert sorted(seats) == [0, 0, 1, 1]  # every seat, every deal

    index = render_report(store, tmp_path / "report", bootstrap=10)
    page = index.read_text()
    assert "2 games in 1\ntournament," in page and "2 bot checks" in page
    assert "furious-five <small>2 games · 2 bots</small>" in page
    mine = (index.parent / bot_page("mine@1")).read_text()
    latest = mine[mine.index('id="checks"'):mine.index('id="faults"')]
    assert "passed" in latest and "failed" not in latest and "tournament-3.html" in latest
    assert "No faults." in mine  # the failed check's crashes count nowhere
    (pgn,) = export(store, tmp_path / "export", formats=["pgn"])
    assert pgn.read_text().count("[ArenaGame ") == 2  # the rated games' pairs only


def assert_json_shape(report: dict, bot: str = "mine") -> None:
    """``--json`` of a check of the crashing bot ``bot`` in furious-five."""
    assert set(report) == {"bot", "command", "control", "sandbox", "checks", "passed"}
    assert report["bot"] == bot and report["passed"] is False
    (game,) = report["checks"]
    assert game["game"] == "furious-five" and game["passed"] is False and game["games"] == 4
    assert {f["kind"] for f in game["faults"]} == {"crash"} and len(game["faults"]) == 4
    assert "zoo crash: about to crash" in game["faults"][0]["stderr_tail"]
    assert {"startup_ms", "handshake_failures", "hello", "stray_output", "oversized",
            "ignored_messages", "wall_ms", "cpu_ms", "move_limit_ms", "clock",
            "moves_over_limit", "peak_memory_kb", "memory_limit_mb", "tournament_id"} <= set(game)
    assert set(game["wall_ms"]) == {"moves", "p50", "p90", "p99", "max"}
    assert game["tournament_id"] == 2


@pytest.mark.parametrize(("args", "needles"), [
    (["-g", "nope", "-b", RANDOM], ["unknown game 'nope'"]),
    (["-g", "five", "-b", f"{PY} {HERE / 'no_such_bot.py'}"], ["does not exist"]),
    (["-g", "five", "-n", "3", "-b", RANDOM], ["multiple of the table size (2)"]),
    (["-g", "five", "-o", "colour=red", "-b", RANDOM], ["colour"]),
    (["-g", "five", "-b", RANDOM, "-b", RANDOM], ["one bot"]),
])
def test_bad_input_is_one_line_and_stores_nothing(args: list[str], needles: list[str],
                                                  tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    assert_one_line_error(arena("check-bot", *args, "--db", f"sqlite:///{db}"), *needles)
    assert not db.exists()
