"""``arena check-bot``: a bot against the random bot before it plays for rating."""

from __future__ import annotations

import argparse
import json
import os
import sys

from arena.bots.check import check_bot, check_plan
from arena.bots.versions import find_version
from arena.cli.bots import choose_bots, play_store
from arena.cli.common import (
    EXIT_FAULT,
    Subparsers,
    UserError,
    add_sandbox_flags,
    add_time_flags,
    announce,
    mask_passwords,
    open_store,
    parse_bot,
    parse_options,
    sandbox_of,
    time_control,
)


def add_check_bot(sub: Subparsers) -> None:
    """``arena check-bot``."""
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
    add_time_flags(k)
    add_sandbox_flags(k)
    k.set_defaults(run=cmd_check_bot)


def cmd_check_bot(args: argparse.Namespace) -> int:

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
    control = time_control(args)
    options = parse_options(args.option)
    sandbox = sandbox_of(args, args.db)
    for game in games:  # bad input fails before anything is stored or started
        check_plan(spec, game, control, sandbox, args.games, options=options).validate()
    # A stored bot's check goes into the database it came from (ladders read it there).
    store = (known or open_store(args.db, create=True)) if args.db else known if stored else None
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
    if store is not None:
        print(f"arena: check of {spec.name} stored in {mask_passwords(store.url)}",
              file=sys.stderr)
    return 0 if report.passed else EXIT_FAULT
