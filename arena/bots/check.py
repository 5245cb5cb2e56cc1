"""``arena check-bot``: a bot's check-up before it plays for rating.

:func:`check_bot` plays the bot against the sample random bot (as many copies
as the game needs) in every seat rotation of a few duplicate groups of each
game, through the tournament runner, the sandbox and the time control of any
tournament (:func:`arena.runner.tournament.play_streams`), and sums up what a bot
author needs to know in a :class:`CheckReport`: the handshake and start-up
time, every fault with its stderr tail, protocol hygiene (stray output,
oversized messages), move times against the time control, and peak memory.

A game's check passes when the bot did not fault in any of its games and the
99th percentile of its move times, on the clock the time control charges
(wall or CPU), is within the free move time (``--move-time``): a bot that
needs its bank on more than one move in a hundred fails.

With a store, each game's check is kept as a tournament of kind
:data:`arena.store.database.CHECK_KIND`: its games like any others, the game's check
in its config (``check``); no leaderboard or rating counts these games.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import trio

from arena.formats.schedule import Stream
from arena.games import game_class
from arena.runner.client import TimeControl
from arena.runner.plan import Plan, create_tournament, finishing
from arena.runner.process import BotSpec, default_sandbox
from arena.runner.referee import BotRun, Entrant
from arena.runner.sandbox import Sandbox, resolve
from arena.runner.tournament import play_streams
from arena.store.database import CHECK_KIND, Store
from arena.store.faults import FAULT_LABELS
from arena.store.records import GameResult, move_time_percentiles, seat_move_times

#: Duplicate groups per game by default: every seat rotation twice.
DEFAULT_GROUPS = 2
#: The opponents: the sample random bot.
OPPONENT_MODULE = "random_bot"
#: Words in a protocol fault's detail that mean a message over the size limits
#: (see :mod:`protocol.wire`); any other protocol fault is stray output.
OVERSIZED_WORDS = ("larger than", "exceeds the limit", "nested deeper")
#: Lines of a fault's stderr tail shown in the plain-words report (JSON has all):
#: enough for a compiler's or interpreter's whole complaint, not only its last line.
TAIL_LINES = 30

#: Told of each check game as it finishes (see :func:`game_progress`).
OnGame = Callable[[dict[str, Any]], None]


class CheckTooLong(Exception):
    """The check's games took longer than its limit (its bots were stopped)."""


@dataclass
class Percentiles:
    """Move times in milliseconds over ``moves`` moves."""

    moves: int
    p50: float
    p90: float
    p99: float
    max: float

    @classmethod
    def of(cls, times: Sequence[Sequence[int]]) -> tuple[Percentiles | None, Percentiles | None]:
        """(wall, CPU) of [wall, CPU] microsecond move times; (None, None) for no move."""
        found = move_time_percentiles(times)
        if found is None:
            return None, None
        wall, cpu = (cls(len(times), *(round(value, 3) for value in column))
                     for column in found)
        return wall, cpu


@dataclass
class CheckFault:
    """One fault of the checked bot: in which game (number) and seat, what and its
    stderr tail."""

    kind: str
    label: str
    game_number: int
    seat: int
    detail: str
    stderr_tail: str


@dataclass
class GameCheck:
    """The check of one game: see the module's docstring for ``passed``."""

    game: str
    table_size: int
    games: int
    passed: bool
    #: Why it did not pass, in words (empty when it passed).
    reasons: list[str]
    #: Processes started, their start-up times (start to ``hello``, ms), failures.
    starts: int
    startup_ms: list[float]
    handshake_limit_ms: float
    handshake_failures: list[str]
    #: What the bot said about itself in ``hello``: name, version, author.
    hello: dict[str, str]
    faults: list[CheckFault]
    #: Messages that were not the awaited reply, ignored (within the limits).
    ignored_messages: int
    #: Protocol faults: bytes that are not messages, or too many unsolicited ones.
    stray_output: list[str]
    #: Protocol faults: a message over the size, length or depth limits.
    oversized: list[str]
    clock: str
    move_limit_ms: float
    wall_ms: Percentiles | None
    cpu_ms: Percentiles | None
    #: Moves past the free move time, which spent the bank.
    moves_over_limit: int
    #: Peak resident memory of the bot's processes (KiB), None: not measured.
    peak_memory_kb: int | None
    memory_limit_mb: int
    #: The stored check's tournament, with a store.
    tournament_id: int | None = None


@dataclass
class CheckReport:
    """The whole check: the bot, the conditions, one :class:`GameCheck` per game."""

    bot: str
    command: str
    control: dict[str, Any]
    sandbox: str
    checks: list[GameCheck] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict (``passed`` included)."""
        return {**asdict(self), "passed": self.passed}

    def text(self) -> list[str]:
        """The report in plain words, a line each."""
        lines = [f"bot {self.bot!r}: {self.command}",
                 f"time control: move {self.control['move']:g} s, bank "
                 f"{self.control['bank']:g} s, handshake {self.control['handshake']:g} s, "
                 f"{self.control['clock']} clock", f"sandbox: {self.sandbox}"]
        for check in self.checks:
            lines += game_text(check)
        lines.append(f"result: {'PASSED' if self.passed else 'FAILED'}")
        return lines


# -- running --------------------------------------------------------------------------------

def check_bot(spec: BotSpec, games: Sequence[str], *, control: TimeControl | None = None,
              sandbox: Sandbox | None = None, games_per_type: int | None = None,
              parallel: int = 1, seed: int = 1, options: dict[str, Any] | None = None,
              store: Store | None = None, on_game: OnGame | None = None,
              seconds: float | None = None) -> CheckReport:
    """Check ``spec`` in each of ``games`` (see the module's docstring).

    ``games_per_type``: games per game, a multiple of its table size (default
    :data:`DEFAULT_GROUPS` duplicate groups); ``options`` apply to every game;
    ``parallel`` seat rotations play at once.  Raises ConfigError or GameError
    for a game, option or number it cannot play, before any bot starts.  With
    ``store``, each game's check is stored once all are played (an interrupted
    check stores nothing).  ``on_game(entry)`` (in a worker thread, so it may
    block) is told of each game as it finishes (:func:`game_progress`).  The
    games of all ``games`` may take ``seconds`` together (None: no limit): then
    they are cancelled, their bots killed, and CheckTooLong is raised."""
    control = control or TimeControl()
    if sandbox is None:  # the store's database is never shown to a bot
        sandbox = resolve("auto", hidden=store.private_paths()) if store else default_sandbox()
    plans = [check_plan(spec, game, control, sandbox, games_per_type, seed, options)
             for game in games]
    for plan in plans:
        plan.validate()
    try:
        played = trio.run(_play, plans, sandbox, parallel, on_game,
                          math.inf if seconds is None else seconds)
    except trio.TooSlowError:
        raise CheckTooLong(f"the check took longer than {seconds:g} s") from None
    report = CheckReport(spec.name, spec.command, control.to_dict(), sandbox.describe())
    for plan, (results, runs) in zip(plans, played, strict=True):
        check = summarize(plan, results, runs, sandbox)
        if store is not None:
            check.tournament_id = store_check(store, plan, check, results, sandbox)
        report.checks.append(check)
    return report


def check_plan(spec: BotSpec, game: str, control: TimeControl, sandbox: Sandbox,
               games_per_type: int | None, seed: int = 1,
               options: dict[str, Any] | None = None) -> Plan:
    """One table: the bot (index 0) and random bots, every seat rotation."""
    from sample_bots import command

    size = max(2, game_class(game).min_players)
    names = [name for name in ("random", "random-opponent") if name != spec.name][:1]
    names += [f"{names[0]}-{i + 2}" for i in range(size - 2)]
    opponents = tuple(BotSpec(name, command(OPPONENT_MODULE)) for name in names)
    return Plan(game=game, bots=(spec, *opponents), table_size=size,
                games_per_table=games_per_type or DEFAULT_GROUPS * size, seed=seed,
                options=dict(options or {}),
                control=control, sandbox=sandbox.kind, limits=sandbox.limits,
                pass_env=sandbox.pass_env)


Played = tuple[dict[int, GameResult], list[BotRun]]


async def _play(plans: Sequence[Plan], sandbox: Sandbox, parallel: int,
                on_game: OnGame | None, seconds: float) -> list[Played]:
    """Every plan's games, plan after plan, within ``seconds`` (else TooSlowError,
    once the cancelled games' bots are killed)."""
    with trio.fail_after(seconds):
        return [await _play_one(plan, sandbox, parallel, on_game) for plan in plans]


def game_progress(plan: Plan, number: int, result: GameResult) -> dict[str, Any]:
    """One finished check game as a submission's progress shows it: the game, its
    number, the checked bot's seat, score and place, and its faults' kinds."""
    seat = result.bots.index(plan.bots[0].name)
    return {"game": plan.game, "number": number, "seat": seat,
            "score": result.scores[seat], "place": result.places[seat],
            "faults": [f.kind for f in result.faults if f.seat == seat]}


async def _play_one(plan: Plan, sandbox: Sandbox, parallel: int,
                    on_game: OnGame | None = None) -> Played:
    """A plan's games by number, and the runs of the checked bot's processes;
    ``on_game`` told of each as it finishes."""
    results: dict[int, GameResult] = {}
    entrants: list[Entrant] = []

    def keep(stream: Stream, seated: Sequence[Entrant]) -> None:
        entrants.append(seated[stream.seating.index(0)])

    async def on_result(_table: int, number: int, result: GameResult) -> None:
        results[number] = result
        if on_game is not None:
            await trio.to_thread.run_sync(on_game, game_progress(plan, number, result))

    await play_streams(plan, plan.chains(), plan.deal_seeds(), sandbox, parallel, on_result,
                       on_entrants=keep)
    return results, [run for entrant in entrants for run in entrant.runs]


def store_check(store: Store, plan: Plan, check: GameCheck, results: dict[int, GameResult],
                sandbox: Sandbox) -> int:
    """Store one game's check as a finished tournament of kind "check"; its id."""
    config = {"check": {**asdict(check), "bot": plan.bots[0].name,
                        "command": plan.bots[0].command}}
    tid = create_tournament(store, plan, kind=CHECK_KIND, extra=config)
    with finishing(store, tid):
        store.set_protections(tid, sandbox.describe())
        options = plan.make_game().options
        for number in sorted(results):
            store.save_game(tid, 0, number, options, results[number])
    return tid


# -- summing up -----------------------------------------------------------------------------

def summarize(plan: Plan, results: dict[int, GameResult], runs: Sequence[BotRun],
              sandbox: Sandbox) -> GameCheck:
    """The check of one game from its results and the bot's process runs."""
    name, control = plan.bots[0].name, plan.control
    faults = [CheckFault(f.kind, FAULT_LABELS.get(f.kind, f.kind), number, f.seat, f.detail,
                         f.stderr_tail)
              for number, result in sorted(results.items()) for f in result.faults
              if f.bot == name]
    protocol = [f.detail for f in faults if f.kind == "protocol_error"]
    oversized = [d for d in protocol if any(word in d for word in OVERSIZED_WORDS)]
    times = _move_times(name, results.values())
    wall, cpu = Percentiles.of(times)
    charged = cpu if control.clock == "cpu" else wall
    limit_ms = control.move * 1000
    column = 1 if control.clock == "cpu" else 0
    peaks = [run.peak_memory_kb for run in runs if run.peak_memory_kb is not None]
    check = GameCheck(
        game=plan.game, table_size=plan.table_size, games=len(results), passed=False,
        reasons=[], starts=len(runs),
        startup_ms=[round(run.startup * 1000, 1) for run in runs if run.startup is not None],
        handshake_limit_ms=control.handshake * 1000,
        handshake_failures=[run.failure for run in runs if run.startup is None],
        hello=_hello(name, results.values()), faults=faults,
        ignored_messages=sum(r.ignored[r.bots.index(name)] for r in results.values()),
        stray_output=[d for d in protocol if d not in oversized], oversized=oversized,
        clock=control.clock, move_limit_ms=limit_ms, wall_ms=wall, cpu_ms=cpu,
        moves_over_limit=sum(t[column] > limit_ms * 1000 for t in times),
        peak_memory_kb=max(peaks) if peaks else None, memory_limit_mb=sandbox.limits.memory_mb)
    check.reasons = _reasons(check, charged)
    check.passed = not check.reasons
    return check


def _move_times(name: str, results: Iterable[GameResult]) -> list[list[int]]:
    """The bot's [wall, CPU] microseconds of every move it made."""
    times: list[list[int]] = []
    for result in results:
        seat = result.bots.index(name)
        times += seat_move_times(result.record, len(result.bots))[seat]
    return times


def _hello(name: str, results: Iterable[GameResult]) -> dict[str, str]:
    """What the bot said about itself in its handshake (the first game that has it)."""
    for result in results:
        info = result.bot_info[result.bots.index(name)]
        if any(info.values()):
            return dict(info)
    return {"name": "", "version": "", "author": ""}


def _reasons(check: GameCheck, charged: Percentiles | None) -> list[str]:
    reasons = []
    if check.faults:
        reasons.append(f"{len(check.faults)} fault(s)")
    if charged is not None and charged.p99 > check.move_limit_ms:
        reasons.append(f"p99 move time {charged.p99:g} ms ({check.clock}) is over the "
                       f"{check.move_limit_ms:g} ms move time")
    if charged is None and not check.faults:
        reasons.append("it made no move")
    return reasons


# -- plain words ----------------------------------------------------------------------------

def game_text(check: GameCheck) -> list[str]:
    """One game's check in plain words."""
    verdict = "passed" if check.passed else "FAILED: " + "; ".join(check.reasons)
    lines = [f"{check.game}: {check.games} games against the random bot, "
             f"{check.table_size} seats: {verdict}",
             "  handshake: " + _handshake_text(check)]
    if any(check.hello.values()):
        hello = check.hello
        words = [hello["name"] or "?", hello["version"]] + \
            (["by", hello["author"]] if hello["author"] else [])
        lines.append("  says it is: " + " ".join(word for word in words if word))
    lines += _faults_text(check)
    lines.append("  stray output: " + _count_text(check.stray_output, check.ignored_messages))
    lines.append("  oversized messages: "
                 + (f"{len(check.oversized)}: {check.oversized[0]}" if check.oversized else "none"))
    lines.append("  move time: " + _times_text(check))
    limit = f" (limit {check.memory_limit_mb} MB per process)"
    lines.append("  memory: " + (f"peak {check.peak_memory_kb / 1024:.0f} MB{limit}"
                                 if check.peak_memory_kb is not None else "not measured"))
    if check.tournament_id is not None:
        lines.append(f"  stored as tournament {check.tournament_id}")
    return lines


def _handshake_text(check: GameCheck) -> str:
    if check.handshake_failures:
        return (f"FAILED in {len(check.handshake_failures)} of {check.starts} starts: "
                f"{check.handshake_failures[0]}")
    if not check.startup_ms:
        return "not reached"
    low, high = min(check.startup_ms), max(check.startup_ms)
    spread = f"{low:.0f} ms" if len(check.startup_ms) == 1 else \
        f"{low:.0f}-{high:.0f} ms over {len(check.startup_ms)} starts"
    return f"ok (start-up {spread}; limit {check.handshake_limit_ms:.0f} ms)"


def _faults_text(check: GameCheck) -> list[str]:
    if not check.faults:
        return ["  faults: none"]
    counts: dict[str, int] = {}
    for fault in check.faults:
        counts[fault.label] = counts.get(fault.label, 0) + 1
    lines = ["  faults: " + ", ".join(f"{label} x{n}" for label, n in counts.items())]
    shown: set[str] = set()
    for fault in check.faults:
        lines.append(f"    game {fault.game_number}, seat {fault.seat}: {fault.label.lower()}: "
                     f"{fault.detail}")
        tail = [line for line in fault.stderr_tail.splitlines() if line.strip()][-TAIL_LINES:]
        if tail and fault.stderr_tail in shown:
            lines.append("      (the same stderr as above)")
            continue
        shown.add(fault.stderr_tail)
        lines += [f"      stderr| {line}" for line in tail] or ["      (no stderr)"]
    return lines


def _count_text(faults: Sequence[str], ignored: int) -> str:
    words = [f"{len(faults)} fault(s): {faults[0]}"] if faults else []
    if ignored:
        words.append(f"{ignored} unsolicited message(s) ignored")
    return "; ".join(words) or "none"


def _times_text(check: GameCheck) -> str:
    def ms(value: float) -> str:
        return f"{value:.1f} ms" if value < 10 else f"{value:.0f} ms"

    parts = []
    for clock, times in (("wall", check.wall_ms), ("CPU", check.cpu_ms)):
        if times is not None:
            parts.append(f"{clock} p50 {ms(times.p50)}, p90 {ms(times.p90)}, p99 "
                         f"{ms(times.p99)}, max {ms(times.max)}")
    if not parts:
        return "no moves"
    over = f"; {check.moves_over_limit} over it, spending the bank" \
        if check.moves_over_limit else ""
    moves = check.wall_ms.moves if check.wall_ms else 0
    return (f"{'; '.join(parts)} of {ms(check.move_limit_ms)} ({check.clock} clock, "
            f"{moves} moves{over})")
