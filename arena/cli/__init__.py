"""The ``arena`` command: tournament, play, report, demo, games, check-bot.

Exit status: 0; 2 for bad input, with one line on stderr (``arena: error:
...``) and nothing stored changed; 3 when a bot faulted (``arena play``, and
``arena tournament`` and ``arena demo`` when any bot faulted in the tournament:
one line per fault or per faulting bot on stderr) or failed ``arena
check-bot`` (its report says why); 130 after Ctrl-C (or
SIGTERM/SIGHUP), once every finished game is stored and every bot is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import trio
from tqdm import tqdm

from arena.bots.versions import BotError
from arena.cli.rerender import Rerender
from arena.formats.schedule import DEFAULT_MAX_TABLES, Gauntlet, Ladder, Match, RoundRobin, balance
from arena.games import game_class, make_game
from arena.games.base import GameError
from arena.runner.client import CLOCKS, TimeControl
from arena.runner.cluster import ClusterError, local_layout, open_client
from arena.runner.ladder import Entrants, create_ladder, run_ladder
from arena.runner.process import BotSpec
from arena.runner.progress import Progress
from arena.runner.referee import EntrantFactory, play_single_game
from arena.runner.sandbox import (
    SANDBOX_CHOICES,
    Limits,
    Sandbox,
    SandboxError,
    path_arguments,
    resolve,
)
from arena.runner.tournament import (
    MAX_GAMES_PER_TABLE,
    ConfigError,
    Plan,
    bot_config,
    create_tournament,
    find_tournament,
    match_test,
    run_match,
    run_tournament,
)
from arena.stats.match_stats import SPRT_MODELS, SequentialTest, Sprt, summarize_pairs
from arena.store.database import (
    DEFAULT_URL,
    StorageError,
    Store,
    StoredGame,
    private_paths,
    sqlite_database,
)
from arena.store.records import GameResult

DEFAULT_REPORT_DIR = "arena-report"
EXIT_USAGE = 2
EXIT_FAULT = 3
EXIT_INTERRUPTED = 130
#: The longest time limit accepted (--move-time etc.), in seconds: one day.
MAX_SECONDS = 86400.0
#: Deal seeds are stored as signed 64-bit integers.
MAX_SEED = 2**63 - 1
#: Most tables at once (each holds a process per seat).
MAX_PARALLEL = 1024
#: Default of ``arena match --max-pairs``.
DEFAULT_MAX_PAIRS = 5000
#: The most tables ``arena ladder --max-groups`` accepts, and games ``--report-every``.
MAX_GROUPS = 10_000_000
#: Default of ``arena ladder --report-minutes``; the most it accepts (a week).
DEFAULT_REPORT_MINUTES = 10.0
MAX_REPORT_MINUTES = 10080.0

if TYPE_CHECKING:
    from distributed import Client
LOCKED_MESSAGE = "arena: database is locked by another process; retrying"
_NAMED = re.compile(r"^([A-Za-z0-9_.\-]+)=(.+)$", re.S)


class UserError(Exception):
    """Bad input from the command line; printed as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see '{self.prog} --help')")


def is_interrupt(exc: BaseException) -> bool:
    """True for KeyboardInterrupt, also when trio wrapped it in exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return all(is_interrupt(e) for e in exc.exceptions)
    return isinstance(exc, KeyboardInterrupt)


def _fail(message: str, status: int = EXIT_USAGE) -> NoReturn:
    print(f"arena: error: {message}", file=sys.stderr)
    raise SystemExit(status)


# -- argument helpers ----------------------------------------------------------

def parse_bot(text: str, index: int | None) -> BotSpec:
    """``name=command`` or a bare command (named after its program or script,
    then ``-index`` unless ``index`` is None)."""
    match = _NAMED.match(text)
    name, command = (match.group(1), match.group(2)) if match else (None, text)
    if not command.strip():
        raise UserError(f"bot {text!r} has an empty command")
    spec = BotSpec(name or "", command)
    try:
        argv = spec.argv()
    except ValueError as exc:
        raise UserError(f"bot {text!r}: cannot split command: {exc}") from None
    if not argv:
        raise UserError(f"bot {text!r} has an empty command")
    check_runnable(name or text, argv)
    if name is None:
        name = _default_name(argv) + ("" if index is None else f"-{index}")
    return BotSpec(name, command)


def check_runnable(label: str, argv: Sequence[str]) -> None:
    """UserError unless ``argv``'s program can be run and every file it names exists,
    so that a typo fails now rather than as a crash in every game."""
    program = argv[0]
    if shutil.which(program) is None:
        if os.sep not in program:
            why = "not on PATH"
        elif not os.path.exists(program):
            why = "file not found"
        else:
            why = "not an executable file: chmod +x it, or name its interpreter first"
        raise UserError(f"bot {label!r}: cannot run {program!r} ({why})")
    for word in path_arguments(argv):
        if not os.path.exists(word):
            raise UserError(f"bot {label!r}: {word!r} does not exist (file not found)")


def _default_name(argv: Sequence[str]) -> str:
    """A readable name for an unnamed bot: the module after ``-m``, else the
    first script argument (``./my_bot.py`` -> ``my_bot``), else the program."""
    if "-m" in argv[:-1]:
        return argv[argv.index("-m") + 1].rsplit(".", 1)[-1]
    for word in argv[1:]:
        if not word.startswith("-") and (os.sep in word or os.path.exists(word)):
            return Path(word).stem
    return Path(argv[0]).stem


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"option {pair!r} is not key=value")
        options[key.strip()] = value
    return options


def _time_control(args: argparse.Namespace) -> TimeControl:
    for flag in ("move_time", "bank_time", "handshake_time"):
        check_seconds(f"--{flag.replace('_', '-')}", getattr(args, flag))
    return TimeControl(handshake=args.handshake_time, move=args.move_time, bank=args.bank_time,
                       clock=args.clock)


def check_seconds(flag: str, value: float) -> None:
    """UserError unless ``value`` is a finite time from 0 to :data:`MAX_SECONDS`."""
    if not (math.isfinite(value) and 0 <= value <= MAX_SECONDS):
        raise UserError(f"{flag} must be a number of seconds from 0 to {MAX_SECONDS:g} "
                        f"(one day), not {value!r}")


def check_seed(seed: int | None) -> None:
    """UserError unless ``seed`` (if given) is from 0 to :data:`MAX_SEED`."""
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise UserError(f"--seed must be from 0 to 2^63 - 1 ({MAX_SEED}), not {seed}")


def open_store(url: str, *, existing: bool = False) -> Store:
    """The database at ``url``, announcing on stderr when it waits for another
    process's lock.  Refuses an in-memory SQLite database (it would store
    nothing) and, with ``existing``, a SQLite file that does not exist (rather
    than create an empty one)."""
    database = sqlite_database(url)
    if database in ("", ":memory:"):
        raise UserError(f"--db {url!r} is an in-memory database, which would store nothing; "
                        f"name a file, e.g. {DEFAULT_URL}")
    if existing and database and not database.startswith("file:") and \
            not Path(database).is_file():
        raise UserError(f"no database file {database!r} (--db {url!r})")
    return Store(url, on_locked=_say_locked)


def _say_locked() -> None:
    tqdm.write(LOCKED_MESSAGE, file=sys.stderr)


def report_folder(out: str) -> Path:
    """The report's folder, created if needed; UserError if it cannot be written."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--out {out!r} is an existing file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UserError(f"cannot write the report into {out!r}: {exc.strerror or exc}") from None
    return folder


def _add_parallel_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--parallel", "-j", type=int, default=os.cpu_count() or 1,
                        help="tables (a table's seat rotations) played at once "
                             "(default: CPU count)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="worker processes on this machine, a local Dask cluster "
                             "(default: one per two CPUs, at most --parallel; "
                             "1 plays in this process)")
    parser.add_argument("--cluster", metavar="tcp://HOST:PORT", default=None,
                        help="play on the workers of this running Dask scheduler "
                             "(see the README)")


@dataclass(frozen=True)
class Execution:
    """Where a run's tables play: here (``client`` None) or on Dask workers."""

    parallel: int
    client: Client | None = None


@contextlib.contextmanager
def execution(args: argparse.Namespace) -> Iterator[Execution]:
    """The run's :class:`Execution` from ``-j``, ``--workers`` and ``--cluster``;
    a local cluster is shut down (its workers and their bots with it) on exit."""
    if not 1 <= args.parallel <= MAX_PARALLEL:
        raise UserError(f"--parallel must be between 1 and {MAX_PARALLEL}, not {args.parallel}")
    if args.workers is not None and not 1 <= args.workers <= args.parallel:
        raise UserError(f"--workers must be between 1 and --parallel ({args.parallel}), "
                        f"not {args.workers}")
    workers = args.workers or local_layout(args.parallel)[0]
    if args.cluster is None and workers == 1:
        yield Execution(args.parallel)
        return
    with open_client(args.parallel, args.cluster, workers) as client:
        yield Execution(args.parallel, client)


def _add_time_flags(parser: argparse.ArgumentParser) -> None:
    defaults = TimeControl()
    parser.add_argument("--move-time", type=float, default=defaults.move, metavar="SECONDS",
                        help=f"free time per move (default {defaults.move})")
    parser.add_argument("--bank-time", type=float, default=defaults.bank, metavar="SECONDS",
                        help=f"extra time per game, spent past the move time "
                             f"(default {defaults.bank})")
    parser.add_argument("--clock", default=defaults.clock, choices=CLOCKS,
                        help="what the move time and bank measure: wall time (default) or "
                             "the CPU time of the bot's processes (fair on a busy machine)")
    parser.add_argument("--handshake-time", type=float, default=defaults.handshake,
                        metavar="SECONDS", help=f"time to start and answer hello "
                                                f"(default {defaults.handshake})")


def _add_sandbox_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sandbox", default="auto", choices=SANDBOX_CHOICES,
                        help="how bots are confined: bwrap (bubblewrap, required), none, or "
                             "auto (bwrap when it works here; default)")
    parser.add_argument("--limit", action="append", default=[], metavar="NAME=NUMBER",
                        help="a bot resource limit, repeatable: "
                             + ", ".join(f"{f.name} (default {f.default})"
                                         for f in dataclasses.fields(Limits)))
    parser.add_argument("--pass-env", action="append", default=[], metavar="NAME",
                        help="pass the organiser's environment variable NAME to bots, "
                             "repeatable (bots get a cleared environment)")


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    """Where games run, their time control and the sandbox (tournament, ladder)."""
    _add_parallel_flags(parser)
    _add_time_flags(parser)
    _add_sandbox_flags(parser)


def resolve_sandbox(choice: str, limits: Limits, pass_env: Sequence[str],
                    db_url: str | None) -> Sandbox:
    """The sandbox for this run.  The database (the default one too) is never
    shown to a bot, even beside its program."""
    hidden = {*private_paths(DEFAULT_URL), *(private_paths(db_url) if db_url else ())}
    return resolve(choice, limits, sorted(hidden), pass_env)


def announce(sandbox: Sandbox) -> None:
    """Say once, as a run starts, what protects the players from each other."""
    warning = "" if sandbox.kind == "bwrap" else "WARNING: "
    print(f"arena: {warning}bots run in {sandbox.describe()}", file=sys.stderr)


def _sandbox_of(args: argparse.Namespace, db_url: str | None) -> Sandbox:
    return resolve_sandbox(args.sandbox, Limits.parse(args.limit), args.pass_env, db_url)


def _add_game_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", "-g", required=True, help="game name (see 'arena rules')")
    parser.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                        help="game option, repeatable (e.g. rounds=5, deck=Ah,2c,...)")


def _add_entrant_flags(parser: argparse.ArgumentParser, game_help: str, bot_help: str) -> None:
    """-g, -o and -b of a command that also resumes (so -g is not required)."""
    parser.add_argument("--game", "-g", help=game_help)
    parser.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                        help="game option, repeatable")
    parser.add_argument("--bot", "-b", action="append", default=[], metavar="NAME=COMMAND",
                        help=bot_help)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arena", description="Five Arena: tournaments for card-game bots.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    t = sub.add_parser("tournament", help="run (or resume) a round robin or a gauntlet",
                       description="Every table of -k bots plays -n games: one deal per "
                                   "seat rotation, the same deals at every table. A round "
                                   "robin plays every combination of the bots while there "
                                   "are at most --max-tables, else a balanced choice; with "
                                   "--challenger, a gauntlet: every table seats one "
                                   "challenger and k-1 other bots. See docs/formats.md.")
    _add_entrant_flags(t, "game name (see 'arena rules')", "an entrant, repeatable")
    t.add_argument("--table-size", "-k", type=int, default=2, help="players per table (default 2)")
    t.add_argument("--games", "-n", type=int, default=None,
                   help="games per table, a multiple of the table size (default 2 x table size)")
    t.add_argument("--max-tables", type=int, default=DEFAULT_MAX_TABLES, metavar="N",
                   help=f"most tables: every combination of the bots while there are at most "
                        f"N, else N or a few fewer, balanced so every bot plays equally often "
                        f"and every pair meets equally often, within one (default "
                        f"{DEFAULT_MAX_TABLES}; per gauntlet, shared by the challengers)")
    t.add_argument("--challenger", action="append", default=[], metavar="NAME",
                   help="a gauntlet: every table seats one challenger (a bot's name, "
                        "repeatable) and k-1 bots of the rest, the field; challengers never "
                        "meet")
    t.add_argument("--seed", type=int, default=1,
                   help="seed of the deal seeds and the balanced schedule (default 1)")
    t.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    t.add_argument("--resume", type=int, metavar="ID",
                   help="resume tournament ID from the database: its stored tables and "
                        "settings (other flags but --db, --parallel, --workers, --cluster "
                        "are ignored)")
    _add_run_flags(t)

    m = sub.add_parser("match", help="two bots in pairs of games until an SPRT decides",
                       description="Two bots play pairs of games (one deal, seats swapped) "
                                   "until a sequential probability ratio test accepts H0 "
                                   "(elo <= elo0) or H1 (elo >= elo1), or --max-pairs pairs "
                                   "are played. See docs/formats.md.")
    _add_entrant_flags(m, "game name (see 'arena rules'), for two players",
                       "one of the two bots (give -b twice); Elo is the first one's")
    defaults = Sprt()
    m.add_argument("--elo0", type=float, default=defaults.elo0,
                   help=f"H0: the first bot is at most this much better (default "
                        f"{defaults.elo0:g}; normalized Elo with the default model)")
    m.add_argument("--elo1", type=float, default=defaults.elo1,
                   help=f"H1: the first bot is at least this much better (default "
                        f"{defaults.elo1:g})")
    m.add_argument("--alpha", type=float, default=defaults.alpha,
                   help=f"chance of accepting H1 when H0 holds (default {defaults.alpha:g})")
    m.add_argument("--beta", type=float, default=defaults.beta,
                   help=f"chance of accepting H0 when H1 holds (default {defaults.beta:g})")
    m.add_argument("--sprt-model", default=defaults.model, choices=SPRT_MODELS,
                   help="normalized (default): fastchess's generalized SPRT on pairs, "
                        "bounds in normalized Elo; logistic: the same in logistic Elo; "
                        "bayesian: cutechess's SPRT game by game (BayesElo draw model)")
    m.add_argument("--max-pairs", type=int, default=DEFAULT_MAX_PAIRS, metavar="N",
                   help=f"stop after N pairs without a verdict (default {DEFAULT_MAX_PAIRS})")
    m.add_argument("--seed", type=int, default=1, help="seed of the deal seeds (default 1)")
    m.add_argument("--parallel", "-j", type=int, default=os.cpu_count() or 1,
                   help="games played at once, in this process (default: CPU count)")
    m.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    m.add_argument("--resume", type=int, metavar="ID",
                   help="resume match ID: the test is recomputed from its stored games "
                        "(other flags but --db and --parallel are ignored)")
    _add_time_flags(m)
    _add_sandbox_flags(m)

    lad = sub.add_parser("ladder", help="keep playing duplicate groups as entrants come and go",
                         description="A continuous ladder: table after table, each one "
                                     "duplicate group (one deal, every seat rotation), the "
                                     "table picked from the entrants active now so that new "
                                     "entrants play first, nobody waits long and pairs meet "
                                     "equally often; until stopped (Ctrl-C) or --max-groups. "
                                     "See docs/formats.md.")
    _add_entrant_flags(lad, "game name (see 'arena rules')",
                       "an entrant besides the stored bots that passed 'arena check-bot', "
                       "repeatable (with --resume: the entrants from now on; default: the "
                       "ladder's entrants given by command)")
    lad.add_argument("--seats", "-k", type=int, default=2, help="players per table (default 2)")
    lad.add_argument("--seed", type=int, default=1,
                     help="seed of the tables' deals and picks (default 1)")
    lad.add_argument("--max-groups", type=int, default=None, metavar="N",
                     help="stop once the ladder has N tables (default: run until stopped)")
    lad.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    lad.add_argument("--out", default=DEFAULT_REPORT_DIR, help="report folder")
    lad.add_argument("--report-every", type=int, default=0, metavar="N",
                     help="re-render the report every N games (default 0: not by count)")
    lad.add_argument("--report-minutes", type=float, default=DEFAULT_REPORT_MINUTES,
                     metavar="M", help=f"re-render the report every M minutes (default "
                                       f"{DEFAULT_REPORT_MINUTES:g}; 0: not by time)")
    lad.add_argument("--no-report", action="store_true",
                     help="render no report (by default: as it goes, and at the end)")
    lad.add_argument("--resume", type=int, metavar="ID",
                     help="resume ladder ID: its unfinished tables first, then new ones; its "
                          "stored settings (of the other flags only -b, --db, --out, the report "
                          "and parallel flags and --max-groups count)")
    _add_run_flags(lad)

    p = sub.add_parser("play", help="play one game between bots and print the result")
    _add_game_flags(p)
    p.add_argument("bots", nargs="*", metavar="BOT",
                   help="bot command or NAME=COMMAND, in seat order")
    p.add_argument("--bot", "-b", action="append", default=[], dest="more_bots",
                   metavar="NAME=COMMAND", help="a bot, repeatable (after the positional ones)")
    p.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--db", default=None, help="also store the game in this database")
    p.add_argument("--human", type=int, default=None, metavar="SEAT",
                   help="you take seat SEAT at the terminal (the bots fill the other seats "
                        "in order); no time limit for you, q resigns")
    _add_time_flags(p)
    _add_sandbox_flags(p)

    r = sub.add_parser("report", help="render the HTML report from a database")
    r.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    r.add_argument("--out", default=DEFAULT_REPORT_DIR, help="output folder")
    r.add_argument("--max-replays", type=int, default=None,
                   help="write replay pages for the most recent N games only")

    d = sub.add_parser("demo", help="demo tournament of the sample bots, then the report")
    d.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    d.add_argument("--out", default=DEFAULT_REPORT_DIR, help="report folder")
    d.add_argument("--games", "-n", type=int, default=None,
                   help="games per table in every game (default: sized for about a minute)")
    _add_parallel_flags(d)
    _add_sandbox_flags(d)

    c = sub.add_parser("sandbox-check", help="show which bot protections work on this machine")
    c.add_argument("--sandbox", default="auto", choices=SANDBOX_CHOICES)
    c.add_argument("--limit", action="append", default=[], metavar="NAME=NUMBER")

    x = sub.add_parser("export", help="write stored results as CSV, JSON and PGN")
    x.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    x.add_argument("--out", default="arena-export", help="output folder (default arena-export)")
    x.add_argument("--format", "-f", action="append", choices=("csv", "json", "pgn"),
                   dest="formats", help="csv, json or pgn (repeat; default: all three)")
    x.add_argument("--tournament", "-t", type=int, default=None, metavar="ID",
                   help="only this tournament's games")

    k = sub.add_parser("check-bot", help="check a bot against the random bot before it plays "
                                         "for rating",
                       description="Plays the bot against the sample random bot in every seat "
                                   "of a few duplicate deals of each game and reports its "
                                   "handshake, faults, protocol hygiene, move times and memory. "
                                   "Exit status 0 if it passed, 3 if not. See docs/check-bot.md.")
    k.add_argument("--game", "-g", action="append", default=[], metavar="GAME",
                   help="a game to check it in, repeatable (see 'arena rules'; default for "
                        "a stored bot: the games its bot.toml lists)")
    k.add_argument("--bot", "-b", action="append", required=True,
                   metavar="NAME[@VERSION] | NAME=COMMAND",
                   help="the bot: a stored one (see 'arena bot list'), NAME=COMMAND, or a "
                        "COMMAND (named after its program)")
    k.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="game option for every game checked, repeatable")
    k.add_argument("--games", "-n", type=int, default=None, metavar="N",
                   help="games per game, a multiple of its table size (default: 2 deals in "
                        "every seat rotation)")
    k.add_argument("--db", default=None,
                   help="also store the check (a tournament of kind 'check', counted in no "
                        "rating) in this database")
    k.add_argument("--json", action="store_true", help="print the report as one JSON object")
    _add_time_flags(k)
    _add_sandbox_flags(k)

    from arena.cli.admin import add_commands

    add_commands(parser, sub)  # rules, tournaments, games, show, delete, --version
    from arena.cli.bots import register_commands

    register_commands(sub)  # bot add, list, show, retire
    return parser


# -- commands ------------------------------------------------------------------


async def _until_signal(work: Callable[[], Awaitable[None]]) -> int | None:
    """Run ``work()`` (a tournament, a match, a ladder); on SIGTERM or SIGHUP stop
    it as Ctrl-C would.  Returns the signal number that stopped it, or None."""
    stopped: int | None = None
    async with trio.open_nursery() as nursery:
        async def watch() -> None:
            nonlocal stopped
            with trio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                async for signum in signals:
                    stopped = signum
                    nursery.cancel_scope.cancel()
                    return

        nursery.start_soon(watch)
        await work()
        nursery.cancel_scope.cancel()
    return stopped


def _play_until_stopped(store: Store, tournament_id: int, sandbox: Sandbox,
                        progress: Progress, work: Callable[[], Awaitable[None]]) -> int | None:
    """Run ``work()`` on trio for a stored tournament, its status kept up to date;
    the signal that stopped it (Ctrl-C, SIGTERM, SIGHUP), or None once it ends."""
    try:
        store.set_status(tournament_id, "running")
        store.set_protections(tournament_id, sandbox.describe())
        stopped = trio.run(_until_signal, work)
    except BaseException as exc:
        if not is_interrupt(exc):
            progress.close()
            _mark_failed(store, tournament_id)
            raise _storage_error(exc) from None
        stopped = signal.SIGINT
    progress.close()
    if stopped is not None:
        # One bounded attempt: a Ctrl-C must not wait for another process's lock.
        with contextlib.suppress(StorageError):
            store.set_status(tournament_id, "interrupted", wait=False)
    return stopped


def _run_plan(store: Store, plan: Plan, tournament_id: int, run: Execution,
              sandbox: Sandbox, test: SequentialTest | None = None) -> int:
    done = len(store.done_games(tournament_id))
    progress = Progress(plan.total_games, done)
    started = time.monotonic()

    async def work() -> None:
        if test is None:
            await run_tournament(plan, store, tournament_id, parallel=run.parallel,
                                 on_game=progress, sandbox=sandbox, client=run.client)
        else:
            await run_match(plan, store, tournament_id, test, parallel=run.parallel,
                            on_game=progress, sandbox=sandbox)

    if _play_until_stopped(store, tournament_id, sandbox, progress, work) is not None:
        stored = len(store.done_games(tournament_id))
        command = "match" if isinstance(plan.format, Match) else "tournament"
        print(f"arena: interrupted; {stored}/{plan.total_games} games stored; resume with "
              f"'arena {command} --resume {tournament_id} --db {store.url}'", file=sys.stderr)
        return EXIT_INTERRUPTED
    store.set_status(tournament_id, "finished")
    return _report_tournament(store, plan, tournament_id, progress.played,
                              time.monotonic() - started)


def _mark_failed(store: Store, tournament_id: int) -> None:
    """After an unexpected error: never leave the tournament "running"."""
    with contextlib.suppress(Exception):
        store.set_status(tournament_id, "failed", wait=False)


def _storage_error(exc: BaseException) -> BaseException:
    """A StorageError (or a ladder's ConfigError: an entrant renamed mid-run) that
    trio wrapped in exception groups, unwrapped so that it is reported in one line;
    any other exception as it is."""
    leaves = [exc]
    while len(leaves) == 1 and isinstance(leaves[0], BaseExceptionGroup):
        leaves = list(leaves[0].exceptions)
    one_line = len(leaves) == 1 and isinstance(leaves[0], StorageError | ConfigError)
    return leaves[0] if one_line else exc


def _report_tournament(store: Store, plan: Plan, tournament_id: int, played: int,
                       elapsed: float) -> int:
    """The closing lines of ``arena tournament`` (``played``: the games this arena
    played, not the ones other arenas sharing the tournament did); its exit
    status (3 if a bot faulted)."""
    games = list(store.games(tournament_id))
    faults = sum(len(game.faults) for game in games)
    no_result = sum(game.no_result for game in games)
    without = f" ({no_result} without result: every seat faulted)" if no_result else ""
    print(f"{plan.format.kind} {tournament_id}: {len(games)} games "
          f"({played} played in {elapsed:.1f}s), {faults} faults{without}, "
          f"stored in {store.url}", file=sys.stderr)
    for line in fault_summary(games):
        print(line, file=sys.stderr)
    return EXIT_FAULT if faults else 0


def fault_summary(games: Iterable[StoredGame]) -> list[str]:
    """One line per bot that faulted in ``games``: how often, of which kind, and
    the last line of stderr its faults left."""
    kinds: dict[str, Counter[str]] = {}
    last: dict[str, str] = {}
    for game in games:
        for fault in game.faults:
            kinds.setdefault(fault["bot"], Counter())[fault["kind"]] += 1
            lines = [line for line in fault["stderr_tail"].splitlines() if line.strip()]
            if lines:
                last[fault["bot"]] = lines[-1].strip()[:200]
    summary = []
    for bot, counts in sorted(kinds.items()):
        tally = ", ".join(f"{kind} x{count}" for kind, count in counts.most_common())
        tail = f"last stderr line: {last[bot]!r}" if bot in last else "no stderr"
        summary.append(f"arena: bot {bot!r} faulted: {tally}; {tail}")
    return summary


def resume_plan(args: argparse.Namespace, command: str) -> tuple[Store, Plan, Sandbox]:
    """The stored tournament ``--resume ID`` names, if ``arena COMMAND`` plays its
    kind: its store, its plan with the stored tables, and its sandbox."""
    store = open_store(args.db, existing=True)
    stored = store.tournament(args.resume)
    if stored is None or stored["kind"] not in RESUMED_BY:
        raise UserError(f"no tournament {args.resume} in {args.db}")
    if RESUMED_BY[stored["kind"]] != command:
        raise UserError(f"tournament {args.resume} is a {stored['kind']}: resume it with "
                        f"'arena {RESUMED_BY[stored['kind']]} --resume {args.resume}'")
    plan = Plan.from_stored(stored)
    plan.validate()
    from arena.cli.bots import check_spec

    for bot in plan.bots:
        check_spec(bot)
    sandbox = resolve_sandbox(plan.sandbox, plan.limits, plan.pass_env, args.db)
    return store, plan, sandbox


#: Which command resumes a stored tournament of each kind.
RESUMED_BY = {"tournament": "tournament", "gauntlet": "tournament", "match": "match",
              "ladder": "ladder"}


def describe_schedule(plan: Plan) -> str:
    """One line saying which tables a tournament plays and how even they are."""
    tables = plan.tables()
    if isinstance(plan.format, Gauntlet):
        return (f"arena: gauntlet: {len(plan.format.challengers)} challenger(s) at "
                f"{len(tables)} tables of {plan.table_size}")
    possible = math.comb(len(plan.bots), plan.table_size)
    if len(tables) == possible:
        return f"arena: round robin: every combination, {len(tables)} tables"
    spread = balance(tables, len(plan.bots))
    return (f"arena: round robin: {len(tables)} of {possible} tables, balanced: tables per "
            f"bot within {spread.tables_per_bot}, meetings per pair within "
            f"{spread.tables_per_pair}")


def cmd_tournament(args: argparse.Namespace) -> int:
    if args.resume is not None:
        store, plan, sandbox = resume_plan(args, "tournament")
        announce(sandbox)
        with execution(args) as run:
            return _run_plan(store, plan, args.resume, run, sandbox)
    if not args.game:
        raise UserError("--game is required (see 'arena rules')")
    from arena.cli.bots import choose_bots, existing_store

    known = existing_store(args.db)
    entrants = choose_bots(args.bot, known)
    bots = tuple(entrants.specs)
    games = args.games if args.games is not None else 2 * args.table_size
    check_seed(args.seed)
    form = (Gauntlet(tuple(map(entrants.label, args.challenger)), args.max_tables)
            if args.challenger else RoundRobin(args.max_tables))
    plan = Plan(game=args.game, bots=bots, table_size=args.table_size, games_per_table=games,
                options=parse_options(args.option), seed=args.seed, control=_time_control(args),
                sandbox=args.sandbox, limits=Limits.parse(args.limit),
                pass_env=tuple(args.pass_env), format=form)
    plan.validate()
    sandbox = resolve_sandbox(plan.sandbox, plan.limits, plan.pass_env, args.db)
    store = known or open_store(args.db)
    entrants.register(store)
    announce(sandbox)
    print(describe_schedule(plan), file=sys.stderr)
    with execution(args) as run:
        return _run_plan(store, plan, create_tournament(store, plan), run, sandbox)


def cmd_match(args: argparse.Namespace) -> int:
    if not 1 <= args.parallel <= MAX_PARALLEL:
        raise UserError(f"--parallel must be between 1 and {MAX_PARALLEL}, not {args.parallel}")
    run = Execution(args.parallel)
    if args.resume is not None:
        store, plan, sandbox = resume_plan(args, "match")
        announce(sandbox)
        test = match_test(plan, store.games(args.resume))
    else:
        store, plan, sandbox = new_match(args)
        tid = create_tournament(store, plan)
        test = match_test(plan, ())
    tid = args.resume if args.resume is not None else tid
    status = _run_plan(store, plan, tid, run, sandbox, test)
    if status != EXIT_INTERRUPTED:
        played = len(store.done_games(tid)) // 2
        for line in match_verdict(plan, tid, test, played):
            print(line)
    return status


def cmd_ladder(args: argparse.Namespace) -> int:
    from arena.cli.bots import choose_bots, existing_store

    _check_ladder_flags(args)
    known = existing_store(args.db)
    given = choose_bots(args.bot, known)
    bots = tuple(given.specs)
    if args.resume is not None:
        store, plan, sandbox = resume_plan(args, "ladder")
        entrants = list(bots or (bot for bot in plan.bots if bot.directory is None))
        folder = None if args.no_report else report_folder(args.out)
    else:
        if not args.game:
            raise UserError("--game is required (see 'arena rules')")
        check_seed(args.seed)
        if known is not None:  # the stored bots that may play it now
            from arena.bots.versions import active_entrants

            labels = {bot.name for bot in bots}
            bots += tuple(bot for bot in active_entrants(known, args.game)
                          if bot.name not in labels)
        plan = Plan(game=args.game, bots=bots, table_size=args.seats,
                    games_per_table=args.seats, options=parse_options(args.option),
                    seed=args.seed, control=_time_control(args), sandbox=args.sandbox,
                    limits=Limits.parse(args.limit), pass_env=tuple(args.pass_env),
                    format=Ladder())
        plan.validate()
        entrants = list(given.specs)
        sandbox = resolve_sandbox(plan.sandbox, plan.limits, plan.pass_env, args.db)
        store = known or open_store(args.db)
        folder = None if args.no_report else report_folder(args.out)
    given.register(store)
    announce(sandbox)
    with execution(args) as run:
        tid = args.resume if args.resume is not None else create_ladder(store, plan)
        return _run_ladder(store, plan, tid, run, sandbox,
                           ladder_entrants(store, plan.game, entrants), folder, args)


def ladder_entrants(store: Store, game: str, given: Sequence[BotSpec]) -> Entrants:
    """Who may play the ladder's next table: the ``-b`` bots, and the newest
    version of every stored bot that plays ``game``, is not retired and passed
    ``arena check-bot`` in it (read anew each time, so ``arena bot add``,
    ``check-bot`` and ``bot retire`` take effect while it runs)."""
    from arena.bots.versions import active_entrants

    names = {bot.name for bot in given}

    def entrants() -> list[BotSpec]:
        return [*given, *(bot for bot in active_entrants(store, game) if bot.name not in names)]

    return entrants


def _check_ladder_flags(args: argparse.Namespace) -> None:
    if args.max_groups is not None and not 1 <= args.max_groups <= MAX_GROUPS:
        raise UserError(f"--max-groups must be from 1 to {MAX_GROUPS}, not {args.max_groups}")
    if not 0 <= args.report_every <= MAX_GROUPS:
        raise UserError(f"--report-every must be from 0 to {MAX_GROUPS} games, "
                        f"not {args.report_every}")
    if not (math.isfinite(args.report_minutes) and
            0 <= args.report_minutes <= MAX_REPORT_MINUTES):
        raise UserError(f"--report-minutes must be from 0 to {MAX_REPORT_MINUTES:g} (a week), "
                        f"not {args.report_minutes!r}")


def _run_ladder(store: Store, plan: Plan, tournament_id: int, run: Execution, sandbox: Sandbox,
                entrants: Entrants, folder: Path | None, args: argparse.Namespace) -> int:
    """Play the ladder until stopped or ``--max-groups``, re-rendering its report."""
    done = len(store.done_games(tournament_id))
    groups = args.max_groups
    progress = Progress(groups * plan.table_size if groups else None, done)
    reports = None if folder is None else Rerender(
        store, folder, games=args.report_every, minutes=args.report_minutes,
        say=progress.write)
    started = time.monotonic()
    print(f"arena: ladder {tournament_id}: {plan.game}, tables of {plan.table_size}, "
          f"{done} games stored so far", file=sys.stderr)

    def on_game(result: GameResult) -> None:
        progress(result)
        if reports is not None:
            reports.count()

    async def work() -> None:
        async with trio.open_nursery() as nursery:
            if reports is not None:
                nursery.start_soon(reports.keep_fresh)
            await run_ladder(plan, store, tournament_id, entrants, parallel=run.parallel,
                             max_groups=groups, on_game=on_game, sandbox=sandbox,
                             client=run.client, on_wait=progress.write)
            nursery.cancel_scope.cancel()

    stopped = _play_until_stopped(store, tournament_id, sandbox, progress, work)
    if reports is not None:
        reports.render()
    if stopped is not None:
        again = f" --max-groups {groups}" if groups else ""
        print(f"arena: interrupted; {len(store.done_games(tournament_id))} games stored; "
              f"resume with 'arena ladder --resume {tournament_id} --db {store.url}{again}'",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    store.set_status(tournament_id, "finished")
    return _report_tournament(store, plan, tournament_id, progress.played,
                              time.monotonic() - started)


def new_match(args: argparse.Namespace) -> tuple[Store, Plan, Sandbox]:
    """A new match's store, plan and sandbox from the command line (UserError,
    ConfigError or GameError before anything is stored)."""
    if not args.game:
        raise UserError("--game is required (see 'arena rules')")
    from arena.cli.bots import choose_bots, existing_store

    known = existing_store(args.db)
    entrants = choose_bots(args.bot, known)
    bots = tuple(entrants.specs)
    if len(bots) != 2:
        raise UserError(f"a match needs exactly two bots (-b A=COMMAND -b B=COMMAND), "
                        f"not {len(bots)}")
    if not 1 <= args.max_pairs <= MAX_GAMES_PER_TABLE // 2:
        raise UserError(f"--max-pairs must be from 1 to {MAX_GAMES_PER_TABLE // 2}, "
                        f"not {args.max_pairs}")
    check_seed(args.seed)
    options = parse_options(args.option)
    try:
        make_game(args.game, 2, options)
    except GameError as exc:
        raise UserError(f"a match is for two players: {exc}") from None
    sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta, args.sprt_model)
    plan = Plan(game=args.game, bots=bots, table_size=2, games_per_table=2 * args.max_pairs,
                options=options, seed=args.seed, control=_time_control(args),
                sandbox=args.sandbox, limits=Limits.parse(args.limit),
                pass_env=tuple(args.pass_env), format=Match(sprt))
    plan.validate()
    sandbox = resolve_sandbox(plan.sandbox, plan.limits, plan.pass_env, args.db)
    store = known or open_store(args.db)
    entrants.register(store)
    announce(sandbox)
    return store, plan, sandbox


def match_verdict(plan: Plan, tournament_id: int, test: SequentialTest,
                  played: int) -> list[str]:
    """The closing lines of ``arena match`` (stdout): verdict, games, Elo, LLR."""
    sprt = test.sprt
    first, second = (b.name for b in plan.bots)
    counted = test.counted.pairs + test.void
    verdict = {
        "H1": f"H1 accepted: {first} is better than {second} by {sprt.elo1:g} {sprt.unit} "
              f"rather than by {sprt.elo0:g} or less",
        "H0": f"H0 accepted: {first} is not better than {second} by {sprt.elo1:g} "
              f"{sprt.unit}; by {sprt.elo0:g} or less",
        "inconclusive": f"inconclusive: no bound crossed in {test.max_pairs} pairs "
                        f"(--max-pairs)",
        "running": "running: not decided yet"}[test.outcome]
    lines = [f"match {tournament_id}: {first} vs {second}, {plan.game}: {verdict}, "
             f"after {counted} pairs"]
    if played > counted:
        lines.append(f"  {played - counted} more pair(s) were in flight at the stop: "
                     f"finished and stored, not part of the test")
    if test.void:
        lines.append(f"  {test.void} pair(s) without result (every seat faulted) skipped")
    if test.counted.pairs:
        m = summarize_pairs(test.counted)
        lines += [f"  games W {m.wins} D {m.draws} L {m.losses} ({first}'s view), score "
                  f"{m.score:.3f}; pairs by {first}'s points (0, 1/2, 1, 3/2, 2): "
                  f"{' '.join(map(str, test.counted.counts()))}",
                  f"  Elo {m.elo:+.1f} +/- {m.elo_error:.1f}, nElo {m.nelo:+.1f} +/- "
                  f"{m.nelo_error:.1f}, LOS {100 * m.los:.2f}%"]
    bounds = sprt.bounds
    lines.append(f"  LLR {test.llr:.2f} ({bounds.lower:.2f}, {bounds.upper:.2f}) "
                 f"[{sprt.elo0:.2f}, {sprt.elo1:.2f}] {sprt.unit}, {sprt.model} model")
    return lines


def cmd_play(args: argparse.Namespace) -> int:
    texts = args.bots + args.more_bots
    human = args.human
    if human is not None and not 0 <= human <= len(texts):
        raise UserError(f"--human must be a seat from 0 to {len(texts)} (the bots take the "
                        f"other seats), not {human}")
    if human is not None and args.json:
        raise UserError("--json cannot be combined with --human (the terminal is yours)")
    from arena.cli.bots import choose_bots, play_store

    known = play_store(args.db)
    entrants = choose_bots(texts, known, versioned=bool(args.db), merge_unnamed=True)
    bots = list(entrants.specs)
    if not bots:
        raise UserError("no bots given")
    if human is not None:
        from arena.runner.human import HUMAN

        bots.insert(human, HUMAN)
    names = [b.name for b in bots]
    if len(set(names)) != len(names) and not args.db:
        raise UserError("two bots have the same name; name them NAME=COMMAND")
    options = parse_options(args.option)
    game = make_game(args.game, len(bots), options)  # validate before starting bots
    check_seed(args.seed)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(7), "big")
    control = _time_control(args)
    store = (known or open_store(args.db)) if args.db else None
    if store is not None:
        entrants.register(store)
    sandbox = _sandbox_of(args, args.db)
    announce(sandbox)
    try:
        result = trio.run(play_single_game, game, seed, bots, control, sandbox,
                          _human_seat(human, names))
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        print("arena: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if store is not None:
        _store_play(store, args.game, options, game.options, bots, result)
    if args.json:
        print(json.dumps(result.play_json(args.game, game.options)))
    else:
        for seat, name in enumerate(result.bots):
            print(f"seat {seat}: {name:<20} score {result.scores[seat]:>8g}  "
                  f"place {result.places[seat]}")
        print(f"seed {result.seed}, {result.decisions} decisions in {result.duration:.2f}s")
    for fault in result.faults:
        print(f"arena: bot {fault.bot!r} (seat {fault.seat}) {fault.kind}: {fault.detail}",
              file=sys.stderr)
    return EXIT_FAULT if result.faults else 0


def _human_seat(seat: int | None, names: Sequence[str]) -> dict[int, EntrantFactory]:
    """The entrant factory of the person's seat (``arena play --human``), if any."""
    if seat is None:
        return {}
    from arena.runner.human import HumanEntrant

    return {seat: functools.partial(HumanEntrant, names=names)}


def _store_play(store: Store, game: str, options: dict[str, Any], full_options: dict[str, Any],
                bots: Sequence[BotSpec], result: GameResult) -> None:
    """Store an ``arena play`` game as a one-game tournament of kind "play"."""
    store.register_bots([(b.name, b.command) for b in bots])
    config = {"game": game, "options": options, "bots": [bot_config(b) for b in bots]}
    tid = store.create_tournament(game, config, [[b.name for b in bots]], 1, kind="play")
    try:
        store.save_game(tid, 0, 0, full_options, result)
    except BaseException:
        _mark_failed(store, tid)
        raise
    store.set_status(tid, "finished")


def cmd_report(args: argparse.Namespace) -> int:
    from reports.render import render_report

    store = open_store(args.db, existing=True)
    folder = report_folder(args.out)
    index = render_report(store, folder, max_replays=args.max_replays)
    print(index.resolve())
    return 0


def demo_plans(games: int | None, sandbox: Sandbox | None = None) -> list[Plan]:
    """One round robin per game: its heuristic sample bot against the random bot
    (two random bots where a game needs three players)."""
    from sample_bots import HEURISTICS, RANDOM, spec

    plans = []
    for index, (game, module) in enumerate(HEURISTICS.items()):
        table = max(2, game_class(game).min_players)
        randoms = [spec(RANDOM, "random")] + [spec(RANDOM, f"random-{i + 2}")
                                               for i in range(table - 2)]
        per_table = games or DEMO_GAMES[game]
        per_table += -per_table % table
        plans.append(Plan(game=game, bots=(spec(module, module.replace("_", "-")), *randoms),
                          table_size=table, games_per_table=per_table, seed=2026 + index,
                          **_sandbox_fields(sandbox)))
    return plans


def _sandbox_fields(sandbox: Sandbox | None) -> dict[str, Any]:
    if sandbox is None:
        return {}
    return {"sandbox": sandbox.kind, "limits": sandbox.limits, "pass_env": sandbox.pass_env}


def cmd_sandbox_check(args: argparse.Namespace) -> int:
    from arena.runner import sandbox_check

    return sandbox_check.main(args.sandbox, Limits.parse(args.limit))


#: Games per table in the demo, sized so the whole demo takes about a minute.
DEMO_GAMES = {"furious-five": 80, "five": 100, "five-or-less": 24, "five-card-rummy": 48,
              "rummy-five": 80, "octablitz": 36}


def cmd_demo(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    folder = report_folder(args.out)
    sandbox = _sandbox_of(args, args.db)
    announce(sandbox)
    faulted = False
    with execution(args) as run:
        for plan in demo_plans(args.games, sandbox):
            plan.validate()
            # A demo run before (same settings) stored this plan: finish it, or reuse it.
            stored = find_tournament(store, plan)
            if stored is not None and stored["games_done"] >= plan.total_games:
                print(f"demo: {plan.game}: tournament {stored['id']} is stored already",
                      file=sys.stderr)
                continue
            tid = create_tournament(store, plan) if stored is None else stored["id"]
            print(f"demo: {plan.game}: {', '.join(b.name for b in plan.bots)}"
                  f"{'' if stored is None else f' (resuming tournament {tid})'}",
                  file=sys.stderr)
            status = _run_plan(store, plan, tid, run, sandbox)
            if status not in (0, EXIT_FAULT):
                return status
            faulted = faulted or status == EXIT_FAULT
    from reports.render import render_report

    index = render_report(store, folder)
    print(f"report: {index.resolve()}")
    return EXIT_FAULT if faulted else 0


def cmd_check_bot(args: argparse.Namespace) -> int:
    from arena.bots.check import check_bot, check_plan
    from arena.bots.versions import find_version
    from arena.cli.bots import choose_bots, play_store

    if len(args.bot) != 1:
        raise UserError(f"check-bot checks one bot (give -b once), not {len(args.bot)}")
    known = play_store(args.db)
    entrants = choose_bots(args.bot, known, versioned=bool(args.db), merge_unnamed=True)
    stored = find_version(known, args.bot[0]) if known is not None else None
    # Not stored anywhere: named after its program alone, as the report shows it.
    spec = entrants.specs[0] if stored or args.db else parse_bot(args.bot[0], None)
    games = list(dict.fromkeys(args.game or (stored.games if stored else None) or []))
    if not games:
        raise UserError("--game is required for a bot given by its command (see 'arena rules')")
    control = _time_control(args)
    options = parse_options(args.option)
    sandbox = _sandbox_of(args, args.db)
    for game in games:  # bad input fails before anything is stored or started
        check_plan(spec, game, control, sandbox, args.games, options=options).validate()
    store = (known or open_store(args.db)) if args.db else None
    if store is not None:
        entrants.register(store)
    announce(sandbox)
    report = check_bot(spec, games, control=control, sandbox=sandbox,
                       games_per_type=args.games, parallel=os.cpu_count() or 1,
                       options=options, store=store)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print("\n".join(report.text()))
    return 0 if report.passed else EXIT_FAULT


def cmd_export(args: argparse.Namespace) -> int:
    from reports.export import FORMATS, export

    store = open_store(args.db, existing=True)
    folder = report_folder(args.out)
    try:
        paths = export(store, folder, formats=args.formats or FORMATS,
                       tournament=args.tournament)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    for path in paths:
        print(path.resolve())
    return 0


COMMANDS = {"tournament": cmd_tournament, "match": cmd_match, "ladder": cmd_ladder,
            "play": cmd_play,
            "report": cmd_report,
            "demo": cmd_demo, "sandbox-check": cmd_sandbox_check,
            "export": cmd_export, "check-bot": cmd_check_bot}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        # Commands registered elsewhere (arena/cli/admin.py, arena/cli/bots.py) set
        # their function as ``run``.
        return (COMMANDS.get(args.command) or args.run)(args)
    except (UserError, ConfigError, GameError, StorageError, SandboxError, ClusterError,
            BotError) as exc:
        _fail(str(exc))
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        print("arena: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    # ``python -m arena.cli``: run main of the module ``arena.cli``, not of this copy
    # (``__main__``), so that it catches the UserError that arena.cli.admin raises.
    from arena import cli

    sys.exit(cli.main())
