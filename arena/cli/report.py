"""``arena report`` (the static HTML site) and ``arena export`` (CSV, JSON, PGN)."""

from __future__ import annotations

import argparse
import sys

from arena.cli.common import DEFAULT_REPORT_DIR, Subparsers, UserError, open_store, report_folder
from arena.store.database import DEFAULT_URL


def add_report(sub: Subparsers) -> None:
    """``arena report``."""
    r = sub.add_parser("report", help="render the HTML report from a database")
    r.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    r.add_argument("--out", default=DEFAULT_REPORT_DIR, help="output folder")
    r.add_argument("--max-replays", type=non_negative, default=None, metavar="N",
                   help="replays for the most recent N games only (default: every game)")
    r.add_argument("--logs", action="store_true",
                   help="put each seat's per-move stderr in its seat view file (for the "
                        "organiser: never publish such a report)")
    r.set_defaults(run=cmd_report)


def add_export(sub: Subparsers) -> None:
    """``arena export``."""
    x = sub.add_parser("export", help="write stored results as CSV, JSON and PGN")
    x.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    x.add_argument("--out", default="arena-export", help="output folder (default arena-export)")
    x.add_argument("--format", "-f", action="append", choices=("csv", "json", "pgn"),
                   dest="formats", help="csv, json or pgn (repeat; default: all three)")
    x.add_argument("--tournament", "-t", type=int, default=None, metavar="ID",
                   help="only this tournament's games")
    x.set_defaults(run=cmd_export)


def cmd_report(args: argparse.Namespace) -> int:
    from reports.progress import Progress
    from reports.render import render_report

    folder = report_folder(args.out)
    store = open_store(args.db)
    index = render_report(store, folder, max_replays=args.max_replays, logs=args.logs,
                          progress=Progress(sys.stderr))
    print(index.resolve())
    return 0


def non_negative(text: str) -> int:
    """An argparse type: a whole number 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative: give 0 or more")
    return value


def cmd_export(args: argparse.Namespace) -> int:
    from reports.export import FORMATS, export

    folder = report_folder(args.out, export=True)
    store = open_store(args.db)
    try:
        paths = export(store, folder, formats=args.formats or FORMATS,
                       tournament=args.tournament)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    for path in paths:
        print(path.resolve())
    return 0
