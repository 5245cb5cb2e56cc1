"""``arena new-bot DIR --lang LANG [--game GAME ...]``: a starter kit (see
docs/bots.md#starter-kits; the kits themselves in :mod:`arena.bots.starter`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.bots.starter import LANGUAGES, new_bot
from arena.cli.common import Subparsers, UserError, shorten


def add_new_bot(sub: Subparsers) -> None:
    """``arena new-bot``."""
    n = sub.add_parser("new-bot", help="write a starter kit: a bot that plays a random legal "
                                       "move, its SDK, bot.toml and a README",
                       description="Writes a new bot directory (named after DIR) that already "
                                   "plays a random legal move: bot.toml, a README, the SDK for "
                                   "the language and the bot to make your own. DIR must not "
                                   "exist or be empty. See docs/bots.md#starter-kits.")
    n.add_argument("directory", metavar="DIR", help="the new bot's directory; its name is the "
                                                    "bot's")
    n.add_argument("--lang", "-l", required=True, choices=list(LANGUAGES),
                   help="the kit's language")
    n.add_argument("--game", "-g", action="append", default=[], metavar="GAME",
                   help="a game it plays, repeatable (see 'arena rules'; default: every game)")
    n.set_defaults(run=cmd_new_bot)


def cmd_new_bot(args: argparse.Namespace) -> int:
    try:
        written = new_bot(Path(args.directory), args.lang, args.game)
    except OSError as exc:  # a read-only or full folder, a name too long: nothing is left
        raise UserError(f"cannot write the bot into {shorten(args.directory)!r}: "
                        f"{exc.strerror or exc}") from None
    print(f"wrote {args.directory}: {', '.join(written)}")
    print(f"next: read {Path(args.directory) / 'README.md'}")
    print("to train a policy locally first: docs/lab.md (every game as a PettingZoo environment)")
    return 0
