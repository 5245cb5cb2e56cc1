"""The ``arena`` command: one module per command group, all on :mod:`arena.cli.common`.

Exit status: 0; 2 for bad input, with one line on stderr (``arena: error:
...``) and nothing stored changed; 3 when a bot faulted (``arena play``, and
``arena tournament`` and ``arena demo`` when any bot faulted in the tournament:
one line per fault or per faulting bot on stderr) or failed ``arena
check-bot`` (its report says why); 130 after Ctrl-C (or
SIGTERM/SIGHUP), once every finished game is stored and every bot is killed.

This package is the top layer: it may import every other part of the arena and
the site (``reports``); nothing imports it.

Only the command's own module is imported (:data:`COMMANDS`): the command groups
import SQLAlchemy, trio, numpy and the rest, about a second of CPU that
``arena --version``, ``arena --help`` and a mistyped command do without
(``tests/test_startup.py`` checks).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, cast

__all__ = ["COMMANDS", "LOCKED_MESSAGE", "build_parser", "main", "version_text"]

#: The distribution's name, for its version number.
PACKAGE = "five-arena"


@dataclass(frozen=True)
class Command:
    """Where a command is registered: ``arena.cli.MODULE.REGISTER(subparsers)``, and
    its line in ``arena --help`` (a test checks it is the one the module registers)."""

    module: str
    register: str
    help: str


#: Every command, in ``arena --help``'s order.
COMMANDS: dict[str, Command] = {
    "tournament": Command("tournament", "add_tournament",
                          "run (or resume) a round robin or a gauntlet"),
    "match": Command("tournament", "add_match",
                     "two bots in pairs of games until an SPRT decides"),
    "ladder": Command("ladder", "add_ladder",
                      "keep playing duplicate groups as entrants come and go"),
    "play": Command("play", "add_play", "play one game between bots and print the result"),
    "report": Command("report", "add_report", "render the HTML report from a database"),
    "demo": Command("play", "add_demo", "demo tournament of the sample bots, then the report"),
    "sandbox-check": Command("play", "add_sandbox_check",
                             "show which bot protections work on this machine"),
    "export": Command("report", "add_export", "write stored results as CSV, JSON and PGN"),
    "check-bot": Command("check", "add_check_bot",
                         "check a bot against the random bot before it plays for rating"),
    "standings": Command("standings", "add_standings",
                         "the standings of a stored tournament or pool"),
    "rules": Command("admin", "add_commands", "list the games and their options"),
    "tournaments": Command("admin", "add_commands", "list the stored tournaments"),
    "games": Command("admin", "add_commands", "list stored games (scores, places, faults)"),
    "show": Command("admin", "add_commands", "replay a stored game in the terminal"),
    "delete": Command("admin", "add_commands", "delete a tournament and its games"),
    "bot": Command("bots", "register_commands", "store, list, show and retire bot versions"),
    "new-bot": Command("newbot", "add_new_bot",
                       "write a starter kit: a bot that plays a random legal move, its SDK, "
                       "bot.toml and a README"),
    "serve": Command("serve", "add_serve",
                     "the competition server: accounts, uploads, live leaderboards and "
                     "replays (docs/server.md)"),
    "check-uploads": Command("serve", "add_serve",
                             "build and check a server's queued uploads (arena serve runs it)"),
    "user": Command("serve", "add_serve",
                    "server accounts: arena user add/reset/disable/enable/tokens NAME"),
    "submit": Command("serve", "add_serve", "upload a bot directory to a competition server"),
}

#: The errors that are bad input (one line, exit 2), by module: only a loaded
#: module's class can have been raised, so none is imported to check.
USER_ERRORS = (
    ("arena.cli.common", "UserError"),
    ("arena.formats.tables", "ConfigError"),
    ("arena.games.base", "GameError"),
    ("arena.store.engine", "StorageError"),
    ("arena.runner.sandbox", "SandboxError"),
    ("arena.runner.cluster", "ClusterError"),
    ("arena.bots.versions", "BotError"),
)


def __getattr__(name: str) -> Any:
    if name == "LOCKED_MESSAGE":
        from arena.cli.common import LOCKED_MESSAGE
        return LOCKED_MESSAGE
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def version_text() -> str:
    """``arena VERSION (database schema REVISION)``, then which engines run
    (compiled or pure Python: :func:`arena.games.native.status`)."""
    from importlib.metadata import PackageNotFoundError, version

    from arena.games.native import status
    from arena.store.revision import HEAD_REVISION
    try:
        number = version(PACKAGE)
    except PackageNotFoundError:
        number = "unknown (not installed)"
    return f"arena {number} (database schema {HEAD_REVISION})\n{status()}"


class _VersionAction(argparse.Action):
    """``--version``: the text is made only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> NoReturn:
        print(version_text())
        parser.exit()


class _TopParser(argparse.ArgumentParser):
    """The parser without any command's module: its errors are
    :class:`arena.cli.common.Parser`'s, loaded only to print one."""

    def error(self, message: str) -> NoReturn:
        from arena.cli.common import Parser
        Parser.error(cast(Parser, self), message)


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs (its first word that is not a flag), or None for
    none or an unknown one, or when ``--help`` comes first."""
    for word in argv:
        if word in ("-h", "--help"):
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def build_parser(command: str | None = None, *, every: bool = False) -> argparse.ArgumentParser:
    """The ``arena`` parser: every command sets its function as ``run``. With
    ``command``, only its module is imported, to register it (and the other
    commands it registers); with ``every``, all (for tests and docs); else each
    command is one line of ``--help``."""
    parser_class: type[argparse.ArgumentParser] = _TopParser
    if command is not None or every:
        from arena.cli.common import Parser
        parser_class = Parser
    parser = parser_class(prog="arena", description="Five Arena: tournaments for card-game bots.")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", parser_class=parser_class)
    for name, entry in COMMANDS.items():
        if name in sub.choices:
            continue  # registered with another command of its module
        if every or name == command:
            register: Callable[[Any], None] = getattr(
                importlib.import_module(f"arena.cli.{entry.module}"), entry.register)
            register(sub)
        elif command is None:
            sub.add_parser(name, help=entry.help, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``arena ARGV``; its exit status."""
    words = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_named(words))
    args, extra = parser.parse_known_args(words)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.error(f"no command: one of {', '.join(COMMANDS)}")
    try:
        status: int = args.run(args)
    except BaseException as exc:
        settle_created(succeeded=False)
        if isinstance(exc, user_errors()):
            from arena.cli.common import fail
            fail(str(exc))
        from arena.cli.common import EXIT_INTERRUPTED, fail, is_interrupt, os_error_line
        if is_interrupt(exc):
            print("arena: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        refused = os_error_line(exc)
        if refused is not None:
            fail(refused)
        damaged = database_error(exc)
        if damaged is None:
            raise
        from arena.store.database import DEFAULT_URL
        fail(f"cannot use the database {getattr(args, 'db', None) or DEFAULT_URL}: "
             f"{damaged} (a damaged file: restore it from a backup; sqlite3's .recover "
             f"may save what is left)")
    settle_created(succeeded=status == 0)
    return status


def settle_created(succeeded: bool) -> None:
    """:func:`arena.cli.common.settle_created`, if a command opened a database."""
    common = sys.modules.get("arena.cli.common")
    if common is not None:
        common.settle_created(succeeded)


def user_errors() -> tuple[type[BaseException], ...]:
    """The classes of :data:`USER_ERRORS` whose modules are loaded."""
    return tuple(getattr(sys.modules[module], name) for module, name in USER_ERRORS
                 if module in sys.modules)


def database_error(exc: BaseException) -> str | None:
    """The driver's first line if ``exc`` (also inside trio's exception groups) is
    the database refusing a query (a damaged SQLite file: "database disk image is
    malformed"), else None."""
    if isinstance(exc, BaseExceptionGroup):
        found = {database_error(e) for e in exc.exceptions}
        return found.pop() if len(found) == 1 else None
    sqlalchemy_exc = sys.modules.get("sqlalchemy.exc")
    if sqlalchemy_exc is not None and isinstance(exc, sqlalchemy_exc.DatabaseError):
        text = str(exc.orig) if exc.orig is not None else str(exc)
        return (text.strip().splitlines() or ["database error"])[0]
    return None
