"""``arena serve`` (the competition server, its uploads' builds and checks in a
child process, optionally ladders in child processes), ``arena check-uploads``
(that child), ``arena user add`` (an account, its API token and a one-time link to
set its password), ``arena user reset / disable / enable / tokens`` (an account's
lifecycle) and ``arena submit`` (pack a bot directory, upload it, print
its version and status).  See docs/server.md."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from arena.bots.submit import Builder
from arena.bots.versions import SKIPPED_DIRS, SKIPPED_SUFFIXES, default_bot_store, read_manifest
from arena.cli.common import (
    EXIT_FAULT,
    Subparsers,
    UserError,
    add_parallel_flags,
    add_sandbox_flags,
    announce,
    check_execution,
    mask_passwords,
    open_store,
    sandbox_of,
)
from arena.cli.running import until_signal
from arena.games import game_class, game_names
from arena.runner.process import own_module_argv, set_autogroup_nice
from arena.store.accounts import PASSWORD, AccountError, Accounts, User
from arena.store.database import DEFAULT_URL, Store

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000
#: How much nicer than the server its ladders run (``arena serve --ladder-nice``).
DEFAULT_LADDER_NICE = 0
#: The niceness of the uploads' checker process (and of its session's autogroup):
#: its referee takes what the pages and the ladders leave.
CHECK_NICE = 10
#: The server's interpreter switches threads at least this often (Python's default
#: is 5 ms): a snapshot computed in a worker thread holds the interpreter lock for
#: a while, and every request's steps in the event loop wait for it.
SWITCH_SECONDS = 0.0005
#: Seconds ``arena submit --wait`` polls a submission's status at most.
WAIT_SECONDS = 1800.0
#: Seconds an upload's build may take, and its check's games together, by default
#: (``--build-time``, ``--check-time``): an upload's author waits for them, and
#: every other upload of theirs behind them.
BUILD_TIME, CHECK_TIME = 120.0, 300.0
#: Seconds either of them may be set to at most.
MAX_TIME = 3600.0
#: Checks run at once at most (``--checkers``).
MAX_CHECKERS = 64


def default_checkers() -> int:
    """How many checks run at once by default: half the cores, at least two (a
    check's referee and bots take about a core; the pages and ladders the rest)."""
    return max(2, (os.cpu_count() or 1) // 2)


def add_serve(sub: Subparsers) -> None:
    """``arena serve``, ``arena check-uploads``, ``arena user ...`` and ``arena submit``."""
    srv = sub.add_parser("serve", help="the competition server: accounts, uploads, live "
                                       "leaderboards and replays (docs/server.md)",
                         description="Serves the site and its HTTP API with Hypercorn on "
                                     "trio; --ladder GAME also runs that game's ladder, "
                                     "'arena ladder' in a child process on the same "
                                     "database. See docs/server.md.")
    srv.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    add_create_flag(srv)
    srv.add_argument("--host", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    srv.add_argument("--port", type=int, default=DEFAULT_PORT,
                     help=f"port (default {DEFAULT_PORT}; 0: any free one)")
    srv.add_argument("--ladder", action="append", default=[], metavar="GAME",
                     help="also run GAME's ladder ('arena ladder' in a child process, "
                          "continuing this database's unfinished one), repeatable")
    srv.add_argument("--seats", "-k", type=int, default=2,
                     help="players per ladder table (default 2)")
    srv.add_argument("--ladder-nice", type=int, default=DEFAULT_LADDER_NICE, metavar="N",
                     help=f"the ladders' niceness, 0 to 19 (default {DEFAULT_LADDER_NICE});"
                          f" uploads' builds and checks run at {CHECK_NICE} (docs/server.md)")
    srv.add_argument("--open-signup", action="store_true", help="anyone may register")
    srv.add_argument("--private", action="store_true",
                     help="only signed-in users see anything")
    srv.add_argument("--behind-proxy", action="store_true",
                     help="trust one reverse proxy's X-Forwarded-For/-Proto (for the "
                          "client's address in rate limits, https for Secure cookies)")
    srv.add_argument("--bot-store", metavar="DIR", default=None,
                     help="where submitted versions are stored (default: arena-bots/ beside "
                          "the SQLite database; required for another database)")
    srv.add_argument("--check-games", type=int, default=None, metavar="N",
                     help="games per game in an upload's check (default: check-bot's)")
    srv.add_argument("--play-games", type=int, default=None, metavar="N",
                     help="games people play against the ladders' bots in the browser at "
                          "once, 0 to 64 (default 4; 0: none)")
    srv.add_argument("--play-move-time", type=float, default=None, metavar="SECONDS",
                     help="a person's time per move in the browser (default 300)")
    add_checker_flags(srv)
    add_sandbox_flags(srv)
    add_parallel_flags(srv)  # the ladders' tables: in their processes, or on Dask workers
    srv.set_defaults(run=cmd_serve)

    checks = sub.add_parser("check-uploads", help="build and check a server's queued "
                                                  "uploads (arena serve runs it)",
                            description="Builds and checks the database's queued uploads, "
                                        "several at once, round-robin by user, until "
                                        "stopped; 'arena serve' runs it in a child process.")
    checks.add_argument("--db", default=DEFAULT_URL,
                        help=f"database URL (default {DEFAULT_URL})")
    checks.add_argument("--bot-store", metavar="DIR", required=True,
                        help="where versions are stored (uploads wait in DIR-uploads)")
    checks.add_argument("--check-games", type=int, default=None, metavar="N",
                        help="games per game in a check (default: check-bot's)")
    add_checker_flags(checks)
    add_sandbox_flags(checks)
    checks.set_defaults(run=cmd_check_uploads)

    add_user_commands(sub)

    submit = sub.add_parser("submit", help="upload a bot directory to a competition server")
    submit.add_argument("directory", metavar="DIR")
    submit.add_argument("--server", required=True, metavar="URL",
                        help="the server, e.g. https://arena.example.org")
    submit.add_argument("--token", required=True, metavar="T", help="your API token")
    submit.add_argument("--wait", action="store_true",
                        help="wait until it passed or failed its check")
    submit.set_defaults(run=cmd_submit)


def add_checker_flags(parser: argparse.ArgumentParser) -> None:
    """``--checkers``, ``--build-time`` and ``--check-time``: how the uploads' checker
    checks (docs/server.md, Submitting a bot)."""
    parser.add_argument("--checkers", type=int, default=default_checkers(), metavar="N",
                        help=f"uploads checked at once, 1 to {MAX_CHECKERS} (default "
                             f"{default_checkers()}: half the cores, at least 2)")
    parser.add_argument("--build-time", type=float, default=BUILD_TIME, metavar="SECONDS",
                        help=f"an upload's build is killed after this long (default "
                             f"{BUILD_TIME:g})")
    parser.add_argument("--check-time", type=float, default=CHECK_TIME, metavar="SECONDS",
                        help=f"an upload's check games are stopped after this long, all "
                             f"together (default {CHECK_TIME:g})")


def checker_flags(args: argparse.Namespace) -> None:
    """UserError, in one line, for a checker flag out of its range."""
    if not 1 <= args.checkers <= MAX_CHECKERS:
        raise UserError(f"--checkers must be from 1 to {MAX_CHECKERS}, not {args.checkers}")
    for flag, value in (("--build-time", args.build_time), ("--check-time", args.check_time)):
        if not 1 <= value <= MAX_TIME:
            raise UserError(f"{flag} must be from 1 to {MAX_TIME:g} seconds, not {value:g}")


# -- arena serve -----------------------------------------------------------------------

def cmd_serve(args: argparse.Namespace) -> int:
    from arena.server.app import create_app, keep_fresh, serve
    from arena.server.state import Settings
    from arena.server.submissions import SubmissionQueue

    if not 0 <= args.port <= 65535:
        raise UserError(f"--port must be from 0 to 65535, not {args.port}")
    unknown = [game for game in args.ladder if game not in game_names()]
    if unknown:
        raise UserError(f"unknown game {unknown[0]!r} (games: {', '.join(game_names())})")
    check_games_flag(args)
    checker_flags(args)
    if not 0 <= args.ladder_nice <= 19:
        raise UserError(f"--ladder-nice must be from 0 to 19, not {args.ladder_nice}")
    if args.ladder:
        check_execution(args)
    sandbox = sandbox_of(args, args.db)
    plans = [ladder_plan(args, game) for game in dict.fromkeys(args.ladder)]
    play = play_settings(args, sandbox)
    store = open_store(args.db, create=True, create_flag=create_flag(args))
    bot_store = Path(args.bot_store) if args.bot_store else default_bot_store(args.db)
    if bot_store is None:  # not a SQLite file: nothing was made
        raise UserError(f"--bot-store DIR is required with --db {args.db!r} (not a SQLite file)")
    bot_store = bot_store.resolve()
    accounts = Accounts(store)
    queue = SubmissionQueue(accounts, uploads_folder(bot_store))
    app: Any = create_app(accounts, queue, Settings(private=args.private,
                                                    open_signup=args.open_signup,
                                                    play=play))
    if args.behind_proxy:
        from hypercorn.middleware import ProxyFixMiddleware

        app = ProxyFixMiddleware(app, mode="legacy", trusted_hops=1)
    announce(sandbox)
    children: list[ChildProcess] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            bound = await nursery.start(serve, app, args.host, args.port)
            # Pages first, then the ladders; a check is short and its author waits.
            children.append(ChildProcess.start("the uploads' checker",
                                               check_uploads_argv(args, bot_store),
                                               CHECK_NICE))
            for plan in plans:
                children.append(start_ladder(store, plan, args))
            for child in children:
                nursery.start_soon(child.watch)
            print(f"arena: serving {mask_passwords(args.db)} on {', '.join(bound)}",
                  file=sys.stderr, flush=True)
            nursery.start_soon(keep_fresh, app_views(app))

    try:
        sys.setswitchinterval(SWITCH_SECONDS)
        stopped = trio.run(until_signal, main)  # Ctrl-C raises; SIGTERM, SIGHUP return
    except BaseException as exc:
        stop_children(children, interrupted=isinstance(exc, KeyboardInterrupt))
        raise
    stop_children(children, interrupted=False)
    print(f"arena: server stopped{f' by signal {stopped}' if stopped else ''}", file=sys.stderr)
    return 0


def add_create_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--create", action="store_true",
                        help="make the database if it does not exist (without it: only when "
                             "its folder holds no other database, *.db, so a typo in --db "
                             "is refused)")


def create_flag(args: argparse.Namespace) -> str | None:
    """``--create`` for :func:`arena.cli.common.open_store` unless it was given."""
    return None if args.create else "--create"


def play_settings(args: argparse.Namespace, sandbox: Any) -> Any:
    """How people play the ladders' bots in the browser: ``--ladder``'s games at
    its ``--seats``, in the server's sandbox; UserError for a flag out of range."""
    from arena.server.state import PLAY_GAMES, PLAY_MOVE_SECONDS, PlaySettings

    at_once = PLAY_GAMES if args.play_games is None else args.play_games
    if not 0 <= at_once <= 64:
        raise UserError(f"--play-games must be from 0 to 64, not {at_once}")
    seconds = PLAY_MOVE_SECONDS if args.play_move_time is None else args.play_move_time
    if not 1 <= seconds <= 86400:
        raise UserError(f"--play-move-time must be from 1 to 86400 seconds, not {seconds:g}")
    return PlaySettings(games=tuple(dict.fromkeys(args.ladder)) if at_once else (),
                        seats=args.seats, sandbox=sandbox, at_once=at_once,
                        move_seconds=seconds)


def check_games_flag(args: argparse.Namespace) -> None:
    if args.check_games is not None and not 1 <= args.check_games <= 1000:
        raise UserError(f"--check-games must be from 1 to 1000, not {args.check_games}")


def uploads_folder(bot_store: Path) -> Path:
    """Where accepted uploads wait for their build (made if missing): beside the bot store."""
    uploads = bot_store.parent / (bot_store.name + "-uploads")
    uploads.mkdir(parents=True, exist_ok=True)
    return uploads


def check_uploads_argv(args: argparse.Namespace, bot_store: Path) -> list[str]:
    """``arena check-uploads`` with the server's database, bot store, checker,
    check and sandbox flags."""
    return own_module_argv(
        "arena", "check-uploads", "--db", args.db, "--bot-store", str(bot_store),
        "--sandbox", args.sandbox, "--checkers", str(args.checkers),
        f"--build-time={args.build_time!r}", f"--check-time={args.check_time!r}",
        *(["--check-games", str(args.check_games)] if args.check_games else []),
        *(f"--limit={limit}" for limit in args.limit),
        *(f"--pass-env={name}" for name in args.pass_env))


# -- arena check-uploads -----------------------------------------------------------------

def cmd_check_uploads(args: argparse.Namespace) -> int:
    from arena.server.submissions import Checker

    check_games_flag(args)
    checker_flags(args)
    sandbox = sandbox_of(args, args.db)
    store = open_store(args.db)
    bot_store = Path(args.bot_store).resolve()
    Checker(Accounts(store), Builder(store, bot_store, sandbox,
                                     games_per_type=args.check_games,
                                     build_seconds=args.build_time,
                                     check_seconds=args.check_time),
            uploads_folder(bot_store), args.checkers).run()
    return 0


def app_views(app: Any) -> Any:
    """The views of ``create_app``'s application (inside a proxy middleware, if any)."""
    inner = getattr(app, "app", app)
    return inner.state.server.views


def ladder_plan(args: argparse.Namespace, game: str) -> Any:
    """A new ladder of ``game`` among the stored bots that passed their check
    (none yet: its entrants are read before every table), with secret deals."""
    from arena.cli.running import deal_fields
    from arena.formats.schedule import Ladder
    from arena.runner.plan import Plan
    from arena.runner.sandbox import Limits

    if not game_class(game).min_players <= args.seats <= game_class(game).max_players:
        raise UserError(f"--seats {args.seats} does not fit {game}")
    return Plan(game=game, bots=(), table_size=args.seats, games_per_table=args.seats,
                format=Ladder(), sandbox=args.sandbox, limits=Limits.parse(args.limit),
                pass_env=tuple(args.pass_env), **deal_fields(None))


def server_ladder(store: Store, plan: Any) -> tuple[int, bool]:
    """The ladder ``arena serve --ladder GAME`` plays: the newest unfinished ladder
    of the plan's game at tables of its size on this database, so a restarted
    server keeps one leaderboard; else a new one.  Its id, and whether it is new."""
    from arena.runner.ladder import create_ladder

    for stored in reversed(store.tournaments()):
        if stored["kind"] == "ladder" and stored["game"] == plan.game and \
                stored["status"] != "finished" and \
                stored["config"].get("table_size") == plan.table_size:
            return stored["id"], False
    return create_ladder(store, plan), True


#: Seconds a child process has to stop on its own after SIGINT (passed on from a
#: Ctrl-C), then after SIGTERM, before it is killed.
CHILD_STOP_SECONDS = (5.0, 30.0)


@dataclass
class ChildProcess:
    """A part of the server in a child process on the same database (a ladder,
    the uploads' checker), so its referee and the web server never wait for each
    other's interpreter.  It runs in a session of its own: where Linux shares the
    CPU between sessions first (autogroups), the server's work is then not taken
    from its share.  Its output is the server's; it gets SIGTERM if the server
    dies (``setpriv --pdeathsig``)."""

    name: str
    process: subprocess.Popen[bytes]

    @classmethod
    def start(cls, name: str, argv: list[str], nice: int) -> ChildProcess:
        """Start ``argv`` ``nice`` nicer than the server, in a session of its own
        (its scheduler autogroup, where Linux has them, as nice)."""
        if nice:
            argv = ["nice", "-n", str(nice), *argv]
        if shutil.which("setpriv"):
            argv = ["setpriv", "--pdeathsig", "TERM", "--", *argv]
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
        if nice:
            set_autogroup_nice(process.pid, nice)
        return cls(name, process)

    async def watch(self) -> None:
        """Say so if the process stops while the server goes on."""
        code = await trio.to_thread.run_sync(self.process.wait, abandon_on_cancel=True)
        print(f"arena: {self.name} stopped (exit status {code}); the server goes on",
              file=sys.stderr, flush=True)


def start_ladder(store: Store, plan: Any, args: argparse.Namespace) -> ChildProcess:
    """The server's ladder of ``plan``'s game: ``arena ladder --resume ID``."""
    tournament_id, new = server_ladder(store, plan)
    argv = own_module_argv(
        "arena", "ladder", "--resume", str(tournament_id), "--db", args.db, "--no-report",
        "-j", str(args.parallel),
        *(["--workers", str(args.workers)] if args.workers is not None else []),
        *(["--cluster", args.cluster] if args.cluster is not None else []))
    ladder = ChildProcess.start(f"ladder {tournament_id} of {plan.game}", argv,
                                args.ladder_nice)
    print(f"arena: {ladder.name} ({'new' if new else 'continued'}) in process "
          f"{ladder.process.pid}", file=sys.stderr, flush=True)
    return ladder


def stop_children(children: list[ChildProcess], *, interrupted: bool) -> None:
    """Stop the child processes: SIGINT if the server was ``interrupted`` (a Ctrl-C
    at the terminal does not reach their sessions), then SIGTERM; kill those that
    do not stop in time."""
    running = [child.process for child in children if child.process.poll() is None]
    for wait, signum in zip(CHILD_STOP_SECONDS, (signal.SIGINT, signal.SIGTERM), strict=True):
        if signum == signal.SIGINT and not interrupted:
            continue
        for process in running:
            if process.poll() is None:
                process.send_signal(signum)
        deadline = time.monotonic() + wait
        for process in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
    for process in running:
        if process.poll() is None:
            process.kill()
            process.wait()


# -- arena user ----------------------------------------------------------------------------

def add_user_commands(sub: Subparsers) -> None:
    """``arena user add / reset / disable / enable / tokens``."""
    user = sub.add_parser("user", help="server accounts: arena user add/reset/disable/"
                                       "enable/tokens NAME",
                          description="The competition server's accounts (docs/server.md).")
    commands = user.add_subparsers(dest="user_command", required=True,
                                   metavar="{add,reset,disable,enable,tokens}",
                                   parser_class=type(user))
    url_help = "the server's address as users reach it, for the link"
    default_url = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
    add = commands.add_parser("add", help="create an account: prints its API token and a "
                                          "one-time link to set its password")
    add.add_argument("--admin", action="store_true", help="an admin manages every bot")
    add_create_flag(add)
    add.set_defaults(run=cmd_user_add)
    reset = commands.add_parser("reset", help="print a new one-time link to set the user's "
                                              "password (their older unused links revoked)")
    reset.set_defaults(run=cmd_user_reset)
    disable = commands.add_parser("disable", help="end the user's sessions, revoke their "
                                                  "tokens and refuse their sign-ins (their "
                                                  "bots stay)")
    disable.set_defaults(run=cmd_user_disable)
    enable = commands.add_parser("enable", help="let a disabled user sign in again")
    enable.set_defaults(run=cmd_user_enable)
    tokens = commands.add_parser("tokens", help="list the user's API tokens, or revoke "
                                                "them all")
    tokens.add_argument("--revoke-all", action="store_true",
                        help="revoke every API token of the user")
    tokens.set_defaults(run=cmd_user_tokens)
    for command in (add, reset, disable, enable, tokens):
        command.add_argument("name", metavar="NAME")
        command.add_argument("--db", default=DEFAULT_URL,
                             help=f"database URL (default {DEFAULT_URL})")
    for command in (add, reset):
        command.add_argument("--url", default=default_url, help=url_help)


def check_user_name(name: str) -> None:
    """UserError unless ``name`` is a possible user name."""
    from arena.bots.versions import NAME, NAME_RULE

    if not NAME.fullmatch(name):
        raise UserError(f"a user name is {NAME_RULE}, not {name[:80]!r}")


def existing_user(args: argparse.Namespace) -> tuple[Accounts, User]:
    """The accounts of ``--db`` (an existing database) and the user ``NAME``;
    UserError if there is no such user."""
    check_user_name(args.name)
    accounts = Accounts(open_store(args.db))
    user = accounts.user_named(args.name)
    if user is None:
        raise UserError(f"no user {args.name!r} in {mask_passwords(args.db)}")
    return accounts, user


def password_url(args: argparse.Namespace, secret: str) -> str:
    return f"{args.url.rstrip('/')}/password/{secret}"


def cmd_user_reset(args: argparse.Namespace) -> int:
    accounts, user = existing_user(args)
    link = accounts.password_link(user.id)
    print(f"user {user.name}{' (disabled: enable them first)' if user.disabled else ''}")
    print(f"set a password (once): {password_url(args, link)}")
    return 0


def cmd_user_disable(args: argparse.Namespace) -> int:
    accounts, user = existing_user(args)
    accounts.set_disabled(user.id, True)
    print(f"user {user.name} disabled: signed out everywhere, every token and password "
          f"link revoked, sign-ins refused; their bots stay")
    return 0


def cmd_user_enable(args: argparse.Namespace) -> int:
    accounts, user = existing_user(args)
    accounts.set_disabled(user.id, False)
    print(f"user {user.name} enabled: they may sign in again (revoked tokens stay revoked; "
          f"'arena user reset' gives a new password link)")
    return 0


def cmd_user_tokens(args: argparse.Namespace) -> int:
    accounts, user = existing_user(args)
    if args.revoke_all:
        print(f"revoked {accounts.revoke_tokens(user.id)} API token(s) of user {user.name}")
        return 0
    listed = accounts.tokens(user.id)
    if not listed:
        print(f"user {user.name} has no API tokens")
    for token in listed:
        created = token.created.strftime("%Y-%m-%d %H:%M") if token.created else "?"
        print(f"{token.id:>6}  {created}  {'revoked' if token.revoked else 'valid  '}  "
              f"{token.label}")
    return 0


def cmd_user_add(args: argparse.Namespace) -> int:
    check_user_name(args.name)
    accounts = Accounts(open_store(args.db, create=True, create_flag=create_flag(args)))
    try:
        user = accounts.add_user(args.name, admin=args.admin)
    except AccountError as exc:
        raise UserError(str(exc)) from None
    token = accounts.issue_token(user.id, label="arena user add")
    link = accounts.issue_token(user.id, PASSWORD)
    print(f"user {user.name}{' (admin)' if user.admin else ''}")
    print(f"api token: {token}")
    print(f"set a password (once): {password_url(args, link)}")
    return 0


# -- arena submit --------------------------------------------------------------------------

def pack(directory: Path) -> bytes:
    """The bot directory as a .tar.gz (``.git``, ``__pycache__``, ``*.pyc`` left out)."""
    def skip(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        parts = Path(info.name).parts
        if any(part in SKIPPED_DIRS for part in parts) or info.name.endswith(SKIPPED_SUFFIXES):
            return None
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(directory.iterdir()):
            tar.add(path, arcname=path.name, filter=skip)
    return buffer.getvalue()


def cmd_submit(args: argparse.Namespace) -> int:
    """Upload; with ``--wait`` follow the submission to its end (:func:`follow`).
    Exit status: 0 accepted (``--wait``: passed), 3 failed its check, 4 still
    unfinished after :data:`WAIT_SECONDS`, 2 refused or unreachable."""
    import requests

    directory = Path(args.directory)
    manifest = read_manifest(directory)  # a bad bot.toml is caught before uploading
    if not args.server.startswith(("http://", "https://")):
        raise UserError(f"--server must be an http:// or https:// URL, not {args.server!r}")
    base = args.server.rstrip("/")
    headers = {"Authorization": f"Bearer {args.token}"}
    try:
        reply = requests.post(f"{base}/api/submissions", headers=headers, timeout=120,
                              files={"archive": (f"{manifest.name}.tar.gz", pack(directory))})
    except requests.RequestException as exc:
        raise UserError(f"cannot reach {base}: {exc}") from None
    body = _json(reply)
    if not reply.ok:
        raise UserError(f"the server refused it ({reply.status_code}): "
                        f"{body.get('error', reply.reason)}")
    say(_status_line(body))
    if not args.wait:
        return 0
    body = follow(base, headers, body)
    if body["status"] not in FINAL:
        print(f"arena: submission {body['id']} is still {body['status']} after "
              f"{WAIT_SECONDS:.0f} s: see {base}/submissions/{body['id']}", file=sys.stderr)
        return EXIT_UNFINISHED
    say(_status_line(body))
    if body.get("bot_url"):
        say(f"bot page: {base}{body['bot_url']}")
    return 0 if body["status"] == "passed" else EXIT_FAULT


#: The statuses a submission ends in.
FINAL = ("passed", "failed")
#: ``arena submit --wait``'s exit status when it gave up waiting.
EXIT_UNFINISHED = 4
#: Seconds between two looks at a submission, and how long the server may stay
#: unreachable meanwhile (a restart) before ``--wait`` gives up.
POLL_SECONDS, UNREACHABLE_SECONDS = 1.0, 60.0


def say(line: str) -> None:
    print(line, flush=True)


def follow(base: str, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    """Poll a submission until it ends (or :data:`WAIT_SECONDS`), printing each
    change once (:func:`progress_lines`); its last JSON."""
    import requests

    deadline = time.monotonic() + WAIT_SECONDS
    seen: dict[str, Any] = {"status": body.get("status"), "queue_position": None, "games": 0}
    failing_since: float | None = None
    while body.get("status") not in FINAL and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        try:
            reply = requests.get(f"{base}/api/submissions/{body['id']}", headers=headers,
                                 timeout=30)
        except requests.RequestException as exc:
            failing_since = failing_since or time.monotonic()
            if time.monotonic() - failing_since > UNREACHABLE_SECONDS:
                raise UserError(f"cannot reach {base}: {exc}") from None
            continue
        failing_since = None
        if not reply.ok:
            raise UserError(f"the server answered {reply.status_code}: "
                            f"{_json(reply).get('error', reply.reason)}")
        body = _json(reply)
        for line in progress_lines(seen, body):
            say(line)
    return body


def progress_lines(seen: dict[str, Any], body: dict[str, Any]) -> list[str]:
    """What changed in a submission since ``seen`` (updated): its place in the
    queue, its status, each check game finished since, as lines to print."""
    lines = []
    position = body.get("queue_position")
    if position is not None and position != seen["queue_position"]:
        lines.append(f"  queued: number {position} in the queue")
    seen["queue_position"] = position
    progress = body.get("progress") or []
    if len(progress) < seen["games"]:  # checked again (its checker stopped): anew
        seen["games"] = 0
    status = body.get("status")
    if status != seen["status"] and status not in FINAL:
        lines.append(f"  {status}")
    seen["status"] = status
    for entry in progress[seen["games"]:]:
        faults = ", ".join(entry.get("faults") or []) or "no faults"
        lines.append(f"  {entry.get('game')} game {entry.get('number')} "
                     f"(seat {entry.get('seat')}): score {entry.get('score')}, "
                     f"place {entry.get('place')}, {faults}")
    seen["games"] = len(progress)
    return lines


def _status_line(body: dict[str, Any]) -> str:
    return (f"submission {body['id']}: {body.get('label') or body['bot']}: {body['status']}"
            + (f" ({body['message']})" if body.get("message") else ""))


def _json(reply: Any) -> dict[str, Any]:
    try:
        body = reply.json()
    except ValueError:
        return {"error": reply.text[:200]}
    return body if isinstance(body, dict) else {}
