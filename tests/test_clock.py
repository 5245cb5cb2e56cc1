"""The move clock with real bots: wall and CPU time per move, and the CPU clock."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import trio

from arena.games import make_game
from arena.runner.client import TimeControl
from arena.runner.process import BotSpec
from arena.runner.referee import play_single_game

SPENDER = Path(__file__).resolve().parent / "bots" / "spender_bot.py"
RANDOM = BotSpec("random", f"{sys.executable} -m sample_bots.random_bot")
GAME = make_game("furious-five", 2, {"rounds": 1, "max_turns": 6})


def spender(mode: str, seconds: float) -> BotSpec:
    return BotSpec(f"{mode}-{seconds}", f"{sys.executable} {SPENDER} {mode} {seconds}")


def seat0_times(result: object) -> list[list[int]]:
    steps = result.times  # type: ignore[attr-defined]
    actions = result.actions  # type: ignore[attr-defined]
    return [t for step, times in zip(actions, steps, strict=True)
            for (seat, _), t in zip(step, times, strict=True) if seat == 0 and t is not None]


def test_every_move_stores_wall_and_cpu_time() -> None:
    control = TimeControl(move=5, bank=5)
    result = trio.run(play_single_game, GAME, 3, [spender("spin", 0.05), RANDOM], control)
    assert result.faults == []
    times = seat0_times(result)
    assert times and all(len(t) == 2 for t in times)
    assert len(result.times) == len(result.actions)
    # CPU is read in 10 ms ticks: exact in sum, coarse per move.
    cpu = sum(t[1] for t in times) / 1e6
    wall = sum(t[0] for t in times) / 1e6
    assert 0.8 * 0.05 * len(times) <= cpu <= wall + 0.05
    # With the wall clock, the CPU time is read from the process's CPU clock:
    # exact for each move (the bot spins 50 ms of its own CPU time per move).
    assert all(50_000 <= cpu_us <= wall_us + 1_000 for wall_us, cpu_us in times), times


def test_cpu_clock_does_not_charge_waiting() -> None:
    """A bot that sleeps past its limit uses no CPU: late on the wall clock,
    on time on the CPU clock."""
    bot = spender("sleep", 0.5)
    wall = trio.run(play_single_game, GAME, 3, [bot, RANDOM],
                    TimeControl(move=0.2, bank=0.2))
    assert [f.kind for f in wall.faults] == ["timeout"]
    cpu = trio.run(play_single_game, GAME, 3, [bot, RANDOM],
                   TimeControl(move=0.2, bank=0.2, clock="cpu"))
    assert cpu.faults == []


def test_cpu_clock_times_out_a_bot_that_computes_too_long() -> None:
    """Caught by the CPU check: when the move ends, the bot has used its whole CPU
    allowance (0.2 s).  Told apart from the wall backstop (4 x 0.2 s + 1 s) by the
    CPU spent, not by the wall time, which a loaded machine stretches."""
    result = trio.run(play_single_game, GAME, 3, [spender("spin", 5), RANDOM],
                      TimeControl(move=0.1, bank=0.1, clock="cpu"))
    assert [f.kind for f in result.faults] == ["timeout"]
    found = re.search(r"\(([\d.]+) s, ([\d.]+) s CPU\)", result.faults[0].detail)
    assert found, result.faults[0].detail
    wall, cpu = map(float, found.groups())
    assert cpu >= 0.2 - 0.01, result.faults[0].detail  # CPU read in 10 ms ticks
    assert wall >= cpu - 0.05


def test_cpu_clock_wall_backstop() -> None:
    """A bot that never answers and uses no CPU still ends at the backstop."""
    result = trio.run(play_single_game, GAME, 3, [spender("sleep", 60), RANDOM],
                      TimeControl(move=0.1, bank=0.1, clock="cpu"))
    assert [f.kind for f in result.faults] == ["timeout"]


def test_wall_clock_records_the_cpu_used_since_the_previous_reply() -> None:
    """With the wall clock, the CPU is read once a move, at its end: a bot that
    thinks between its moves (here 0.1 s of CPU after each reply, while its
    opponent sleeps 2 s, time enough on a loaded machine) shows that CPU in its
    next move's figure.  Only CPU time is compared: a loaded machine stretches
    wall times, never a process's CPU time."""
    control = TimeControl(move=5, bank=5)
    result = trio.run(play_single_game, GAME, 3,
                      [spender("ponder", 0.1), spender("sleep", 2.0)], control)
    assert result.faults == []
    times = seat0_times(result)
    assert len(times) >= 3
    assert times[0][1] < 50_000  # a process's first move: from its request on
    thought = [times[i][1] for i in after_thinking(result)]
    assert len(thought) >= 2, times
    # The thinking shows in a move after it: the first after the opponent's sleep...
    assert max(thought) >= 100_000, times
    # ...and none is lost: every reply but the last two started 0.1 s of thinking
    # that is in some later move's figure.  Which one is the scheduler's: when the
    # bot moves twice in a row, two thinking threads and the one that replies share
    # the interpreter lock, and the second reply may come only after they spun.
    assert sum(cpu_us for _, cpu_us in times[1:]) >= 0.95 * 100_000 * (len(times) - 2), times


def after_thinking(result: object) -> list[int]:
    """Indexes (among seat 0's moves) of the moves that came right after a move of
    seat 1, but for seat 0's first: those that follow a reply and the
    opponent's sleep (a seat may move twice in a row, with no time in between)."""
    seats = [seat for step in result.actions for seat, _ in step]  # type: ignore[attr-defined]
    mine = [i for i, seat in enumerate(seats) if seat == 0]
    return [n for n, i in enumerate(mine) if n > 0 and seats[i - 1] == 1]
