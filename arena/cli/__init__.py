"""The ``arena`` command: one module per command group, all on :mod:`arena.cli.common`.

Exit status: 0; 2 for bad input, with one line on stderr (``arena: error:
...``) and nothing stored changed; 3 when a bot faulted (``arena play``, and
``arena tournament`` and ``arena demo`` when any bot faulted in the tournament:
one line per fault or per faulting bot on stderr) or failed ``arena
check-bot`` (its report says why); 130 after Ctrl-C (or
SIGTERM/SIGHUP), once every finished game is stored and every bot is killed.

This package is the top layer: it may import every other part of the arena and
the site (``reports``); nothing imports it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import sqlalchemy.exc

from arena.bots.versions import BotError
from arena.cli import (
    admin,
    bots,
    check,
    ladder,
    newbot,
    play,
    report,
    serve,
    standings,
    tournament,
)
from arena.cli.common import (
    EXIT_INTERRUPTED,
    LOCKED_MESSAGE,
    Parser,
    UserError,
    fail,
    is_interrupt,
    os_error_line,
)
from arena.formats.tables import ConfigError
from arena.games.base import GameError
from arena.runner.cluster import ClusterError
from arena.runner.sandbox import SandboxError
from arena.store.database import DEFAULT_URL
from arena.store.engine import StorageError

__all__ = ["LOCKED_MESSAGE", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``arena`` parser: every command sets its function as ``run``."""
    parser = Parser(prog="arena", description="Five Arena: tournaments for card-game bots.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    tournament.add_tournament(sub)
    tournament.add_match(sub)
    ladder.add_ladder(sub)
    play.add_play(sub)
    report.add_report(sub)
    play.add_demo(sub)
    play.add_sandbox_check(sub)
    report.add_export(sub)
    check.add_check_bot(sub)
    standings.add_standings(sub)
    admin.add_commands(parser, sub)  # rules, tournaments, games, show, delete, --version
    bots.register_commands(sub)  # bot add, list, show, retire
    newbot.add_new_bot(sub)
    serve.add_serve(sub)  # serve, user add, submit
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``arena ARGV``; its exit status."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except (UserError, ConfigError, GameError, StorageError, SandboxError, ClusterError,
            BotError) as exc:
        fail(str(exc))
    except BaseException as exc:
        if is_interrupt(exc):
            print("arena: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        refused = os_error_line(exc)
        if refused is not None:
            fail(refused)
        damaged = database_error(exc)
        if damaged is None:
            raise
        fail(f"cannot use the database {getattr(args, 'db', None) or DEFAULT_URL}: "
             f"{damaged} (a damaged file: restore it from a backup; sqlite3's .recover "
             f"may save what is left)")


def database_error(exc: BaseException) -> str | None:
    """The driver's first line if ``exc`` (also inside trio's exception groups) is
    the database refusing a query (a damaged SQLite file: "database disk image is
    malformed"), else None."""
    if isinstance(exc, BaseExceptionGroup):
        found = {database_error(e) for e in exc.exceptions}
        return found.pop() if len(found) == 1 else None
    if isinstance(exc, sqlalchemy.exc.DatabaseError):
        text = str(exc.orig) if exc.orig is not None else str(exc)
        return (text.strip().splitlines() or ["database error"])[0]
    return None
