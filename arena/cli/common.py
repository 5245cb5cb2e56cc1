"""What the command groups share: bad input as one line, exit statuses,
checks of flags, opening the database, the report folder, the run flags
(where games run, the time control, the sandbox)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import itertools
import math
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from arena.bots.versions import NAME, NAME_RULE
from arena.runner.client import CLOCKS, TimeControl
from arena.runner.cluster import local_layout, open_client
from arena.runner.process import BotSpec
from arena.runner.progress import write_above_bars
from arena.runner.sandbox import SANDBOX_CHOICES, Limits, Sandbox, path_arguments, resolve
from arena.runner.views import running_builders
from arena.store.database import DEFAULT_URL, Store
from arena.store.engine import database_file, new_database, private_paths, sqlite_database

if TYPE_CHECKING:
    from distributed import Client

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

LOCKED_MESSAGE = "arena: database is locked by another process; retrying"

_NAMED = re.compile(r"^([A-Za-z0-9_.\-]+)=(.+)$", re.S)
#: The type of ``ArgumentParser.add_subparsers()``: each command group adds its commands to it.
Subparsers = argparse._SubParsersAction


class UserError(Exception):
    """Bad input from the command line; printed as one line."""

class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        fail(f"{message} (see '{self.prog} --help')")

def is_interrupt(exc: BaseException) -> bool:
    """True for KeyboardInterrupt, also when trio wrapped it in exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return all(is_interrupt(e) for e in exc.exceptions)
    return isinstance(exc, KeyboardInterrupt)

def os_error_line(exc: BaseException) -> str | None:
    """One line for an operating system's refusal (a read-only or full folder, a
    name too long, a missing permission), also inside trio's exception groups:
    what was refused and the path, shortened; None for any other exception."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if not isinstance(exc, OSError):
        return None
    paths = [os.fsdecode(p) if isinstance(p, str | bytes) else str(p)
             for p in (exc.filename, exc.filename2) if p is not None]
    shown = " -> ".join(repr(shorten(path)) for path in paths)
    return f"{exc.strerror or type(exc).__name__}{f': {shown}' if shown else ''}"

def shorten(text: str, most: int = 100) -> str:
    """``text``, its middle cut out if longer than ``most`` characters."""
    return text if len(text) <= most else f"{text[:most // 2]}...{text[-most // 2:]}"

def fail(message: str, status: int = EXIT_USAGE) -> NoReturn:
    print(f"arena: error: {mask_passwords(message)}", file=sys.stderr)
    raise SystemExit(status)

#: ``scheme://user:PASSWORD@``: the password of a database URL in any text.
_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s'\"]*:)([^@\s'\"]+)(@)")

def mask_passwords(text: str) -> str:
    """``text`` with the password of every URL in it written as ``***`` (as
    SQLAlchemy shows a URL), so that no output shows a database's password."""
    return _PASSWORD.sub(r"\1***\3", text)


# -- argument helpers ----------------------------------------------------------

def parse_bot(text: str, index: int | None) -> BotSpec:
    """``name=command`` or a bare command (named after its program or script,
    then ``-index`` unless ``index`` is None)."""
    match = _NAMED.match(text)
    name, command = (match.group(1), match.group(2)) if match else (None, text)
    if name is not None and not NAME.fullmatch(name):
        raise UserError(f"bot {shorten(text)!r}: {shorten(name)!r} is not a bot name: "
                        f"NAME=COMMAND takes {NAME_RULE}")
    if not command.strip():
        raise UserError(f"bot {text!r} has an empty command")
    spec = BotSpec(name or "", command)
    try:
        argv = spec.argv()
    except ValueError as exc:
        raise UserError(f"bot {text!r}: cannot split command: {exc}") from None
    if not argv:
        raise UserError(f"bot {text!r} has an empty command")
    try:
        check_runnable(name or text, argv)
    except UserError:
        if match is None and _bad_name(text):
            raise UserError(f"bot {text!r}: {text.partition('=')[0]!r} is not a bot name: "
                            f"NAME=COMMAND takes letters, digits, '_', '.' and '-' (the "
                            f"arena gives versions, NAME@N, itself)") from None
        raise
    if name is None:
        name = default_name(argv) + ("" if index is None else f"-{index}")
    return BotSpec(name, command)

def _bad_name(text: str) -> bool:
    """Whether ``text``, which is no NAME=COMMAND, reads as one with a bad name
    (``a b=cmd``, ``a@1=cmd``) rather than as a command with an ``=`` in it."""
    name, sep, _ = text.partition("=")
    return bool(sep and name.strip()) and os.sep not in name and not name.startswith("-")

def check_runnable(label: str, argv: Sequence[str], directory: str | None = None, *,
                   modules: bool = True) -> None:
    """UserError unless ``argv``'s program can be run and every file it names exists
    (and, with ``modules``, the module a Python bot runs with ``-m`` is found from
    its ``directory``, default here), so that a typo fails now rather than as a
    crash in every game."""
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
    module = python_module(argv) if modules else None
    if module is not None and not module_found(argv[0], module, directory):
        raise UserError(f"bot {label!r}: {argv[0]} finds no module {module!r} "
                        f"(python -m {module}: No module named {module})")

def python_module(argv: Sequence[str]) -> str | None:
    """The module of ``python [options] -m MODULE ...``, else None."""
    if not Path(argv[0]).name.startswith("python"):
        return None
    for word, after in itertools.pairwise(argv[1:]):
        if word == "-m":
            return after
        if not word.startswith("-") or word == "-c":
            return None  # a script or -c: no module
    return None

@functools.lru_cache(maxsize=256)
def module_found(python: str, module: str, directory: str | None = None) -> bool:
    """Whether ``python`` (the bot's interpreter, run in the bot's ``directory``,
    default here) finds ``module``; True when that cannot be asked (the run will say)."""
    probe = ("import importlib.util, sys\n"
             "try:\n    found = importlib.util.find_spec(sys.argv[1]) is not None\n"
             "except (ImportError, ValueError):\n    found = False\n"
             "sys.exit(0 if found else 1)")
    try:
        done = subprocess.run([python, "-c", probe, module], capture_output=True,
                              cwd=directory, timeout=MODULE_PROBE_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return True
    return done.returncode != 1

#: The longest a bot's interpreter may take to say whether it finds a module.
MODULE_PROBE_SECONDS = 30.0

def default_name(argv: Sequence[str]) -> str:
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

def time_control(args: argparse.Namespace) -> TimeControl:
    """The run's time control; UserError for a time out of range, and for one no
    bot could keep (no time to start, or none to move)."""
    for flag in ("move_time", "bank_time", "handshake_time"):
        check_seconds(f"--{flag.replace('_', '-')}", getattr(args, flag))
    if args.handshake_time == 0:
        raise UserError("--handshake-time must be more than 0 seconds: no bot starts in no time")
    if args.move_time + args.bank_time == 0:
        raise UserError("--move-time and --bank-time are both 0: no bot could make a move "
                        "in time; give either some seconds")
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

def open_store(url: str, *, create: bool = False, create_flag: str | None = None) -> Store:
    """The database at ``url``, announcing on stderr when it waits for another
    process's lock.  The one policy on making databases: refuses an in-memory SQLite
    database (it would store nothing); without ``create``, a database not made yet
    (no file, an empty file, no arena tables: :class:`arena.store.engine.Missing`, one
    line naming the URL) and creates nothing; with ``create``, makes it and says so
    once on stderr.  ``create_flag`` (``--create``, not given): makes a new SQLite
    file only if its folder holds no other database (``*.db``), so that a typo in
    ``--db`` is not a new, empty database."""
    database = sqlite_database(url)
    if database in ("", ":memory:"):
        raise UserError(f"--db {url!r} is an in-memory database, which would store nothing; "
                        f"name a file, e.g. {DEFAULT_URL}")
    if create and create_flag is not None:
        _refuse_a_typo(url, create_flag)
    store = Store(url, on_locked=_say_locked, create=create)
    if store.created:
        _CREATED.append((store, url))
    return store


#: Databases this command made (:func:`open_store`), said or discarded when it ends.
_CREATED: list[tuple[Store, str]] = []


def settle_created(succeeded: bool) -> None:
    """When a command ends: say once on stderr which databases it made; a failed
    command's new database that holds nothing (no tournament, no bot) is deleted
    instead, so that bad input leaves no file behind and stays one line (one that
    holds something stays, unsaid: the failure's own lines, such as the resume
    command of an interrupted run, come last)."""
    while _CREATED:
        store, url = _CREATED.pop()
        path = database_file(url)
        if succeeded:
            print(f"arena: created a new database {mask_passwords(url)}", file=sys.stderr)
        elif path is not None and _holds_nothing(store):
            store.close()
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(path + suffix).unlink(missing_ok=True)


def _holds_nothing(store: Store) -> bool:
    """Whether every table but Alembic's stamp is empty (no tournament, bot, user,
    session, submission...: a failed ``serve`` on a new database keeps its sign-ups)."""
    import sqlalchemy

    try:
        with store.engine.connect() as connection:
            names = sqlalchemy.inspect(connection).get_table_names()
            return not any(
                connection.execute(sqlalchemy.text(f'SELECT 1 FROM "{name}" LIMIT 1')).first()
                for name in names if name != "alembic_version")
    except Exception:  # a database that cannot be read: keep it
        return False

def _refuse_a_typo(url: str, flag: str) -> None:
    """UserError if ``url`` is a SQLite file not made yet beside other databases."""
    path = database_file(url)
    if path is None or new_database(url) is None:
        return
    others = sorted(str(p.name) for p in Path(path).parent.glob("*.db")
                    if p.is_file() and str(p) != path and p.stat().st_size > 0)
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise UserError(f"no arena database at {url} ({new_database(url)}), and its folder "
                        f"holds other databases ({shown}): a typo in --db? Give {flag} to "
                        f"make a new one")

def _say_locked() -> None:
    builders = running_builders()
    if not builders:
        write_above_bars(LOCKED_MESSAGE)
        return
    pids = ", ".join(str(pid) for pid in sorted(builders))
    write_above_bars(LOCKED_MESSAGE.replace(
        "another process", f"another process (perhaps this run's own view builder, pid "
                           f"{pids}, storing replay views at a low priority)"))

def report_folder(out: str, *, export: bool = False) -> Path:
    """The report's (or the export's) folder if it may be written: absent, empty or an
    earlier one of this tool (:func:`reports.folders.check_target`); creates nothing
    (the report or export is written beside it and renamed into place); UserError if not."""
    from reports.folders import EXPORT_MARKER, REPORT_MARKER, FolderError, check_target

    try:
        return check_target(out, EXPORT_MARKER if export else REPORT_MARKER,
                            "export" if export else "report")
    except FolderError as exc:
        raise UserError(str(exc)) from None

def add_parallel_flags(parser: argparse.ArgumentParser) -> None:
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

def check_parallel(parallel: int) -> None:
    """UserError unless ``-j`` is from 1 to :data:`MAX_PARALLEL`."""
    if not 1 <= parallel <= MAX_PARALLEL:
        raise UserError(f"--parallel must be between 1 and {MAX_PARALLEL}, not {parallel}")

def check_execution(args: argparse.Namespace) -> None:
    """UserError for bad ``-j``, ``--workers`` or ``--cluster``, before anything is
    printed or started: a scheduler address that is not ``tcp://HOST:PORT`` or
    that nothing answers at (found in at most :data:`CLUSTER_PROBE_SECONDS`)."""
    check_parallel(args.parallel)
    if args.workers is not None and args.cluster is not None:
        raise UserError("--workers is for a local cluster; with --cluster the scheduler's "
                        "workers play (start as many as you want there)")
    if args.workers is not None and not 1 <= args.workers <= args.parallel:
        raise UserError(f"--workers must be between 1 and --parallel ({args.parallel}), "
                        f"not {args.workers}")
    if args.cluster is not None:
        probe_scheduler(args.cluster)

#: How long ``--cluster`` may take to answer a connection before the run starts.
CLUSTER_PROBE_SECONDS = 5.0

def probe_scheduler(address: str) -> None:
    """UserError unless ``address`` is a Dask address that accepts a connection
    (the full handshake is Dask's, when the run starts)."""
    from distributed.comm import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address, strict=True)
        host, port = parse_host_port(location)
    except ValueError as exc:
        raise UserError(f"--cluster {address!r} is not a scheduler address like "
                        f"tcp://HOST:8786 ({exc})") from None
    if scheme not in ("tcp", "tls"):
        return  # inproc:// and others: left to Dask
    try:
        socket.create_connection((host, port), timeout=CLUSTER_PROBE_SECONDS).close()
    except OSError as exc:
        raise UserError(f"cannot reach the Dask scheduler at {address}: "
                        f"{exc.strerror or exc or 'timed out'}") from None

@contextlib.contextmanager
def execution(args: argparse.Namespace) -> Iterator[Execution]:
    """The run's :class:`Execution` from ``-j``, ``--workers`` and ``--cluster``
    (checked by :func:`check_execution` first); a local cluster is shut down (its
    workers and their bots with it) on exit."""
    workers = args.workers or local_layout(args.parallel)[0]
    if args.cluster is None and workers == 1:
        yield Execution(args.parallel)
        return
    with open_client(args.parallel, args.cluster, workers) as client:
        yield Execution(args.parallel, client)

def add_time_flags(parser: argparse.ArgumentParser) -> None:
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

def add_sandbox_flags(parser: argparse.ArgumentParser) -> None:
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

def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """Where games run, their time control and the sandbox (tournament, ladder)."""
    add_parallel_flags(parser)
    add_time_flags(parser)
    add_sandbox_flags(parser)

def resolve_sandbox(choice: str, limits: Limits, pass_env: Sequence[str],
                    db_url: str | None, report: str | None = None) -> Sandbox:
    """The sandbox for this run.  The database (the default one too), its bot
    store and the report folders (the default one, and ``report``) are never
    shown to a bot, even beside its program."""
    hidden = {*private_paths(DEFAULT_URL), *(private_paths(db_url) if db_url else ()),
              *(os.path.abspath(folder) for folder in (DEFAULT_REPORT_DIR, report) if folder)}
    return resolve(choice, limits, sorted(hidden), pass_env)

def announce(sandbox: Sandbox) -> None:
    """Say once, as a run starts, what protects the players from each other."""
    warning = "" if sandbox.kind == "bwrap" else "WARNING: "
    print(f"arena: {warning}bots run in {sandbox.describe()}", file=sys.stderr)

def sandbox_of(args: argparse.Namespace, db_url: str | None) -> Sandbox:
    return resolve_sandbox(args.sandbox, Limits.parse(args.limit), args.pass_env, db_url)

def add_game_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", "-g", required=True, help="game name (see 'arena rules')")
    parser.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                        help="game option, repeatable (e.g. rounds=5, deck=Ah,2c,...)")

def add_entrant_flags(parser: argparse.ArgumentParser, game_help: str, bot_help: str) -> None:
    """-g, -o and -b of a command that also resumes (so -g is not required)."""
    parser.add_argument("--game", "-g", help=game_help)
    parser.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                        help="game option, repeatable")
    parser.add_argument("--bot", "-b", action="append", default=[], metavar="NAME=COMMAND",
                        help=bot_help)

def resumable(parser: argparse.ArgumentParser, *kept: str) -> None:
    """Mark ``parser``'s command as one that resumes (``--resume ID``) with its
    stored settings: every flag but ``kept`` (by dest) is then refused by
    :func:`check_resume_flags` rather than silently ignored."""
    ignored = {action.dest: (action.option_strings[0], action.default)
               for action in parser._actions
               if action.option_strings and action.dest not in (*kept, "help", "resume")}
    parser.set_defaults(ignored_on_resume=ignored)

def check_resume_flags(args: argparse.Namespace) -> None:
    """With ``--resume``: UserError for a flag the stored settings replace."""
    if args.resume is None:
        return
    for dest, (flag, default) in args.ignored_on_resume.items():
        if getattr(args, dest) != default:
            raise UserError(f"{flag} cannot be changed when resuming: --resume "
                            f"{args.resume} plays with the stored settings")

