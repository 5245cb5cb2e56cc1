"""``arena bot add | list | show | retire``, and how ``-b`` picks bot versions for
``arena tournament``, ``match`` and ``play`` (see docs/bots.md)."""

from __future__ import annotations

import argparse
import contextlib
import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.bots.versions import (
    REFERENCE,
    BotError,
    add_bot,
    adhoc_version,
    default_bot_store,
    find_version,
    no_stored_bot,
    read_manifest,
    register,
    spec_of,
)
from arena.cli.common import (
    UserError,
    add_sandbox_flags,
    check_runnable,
    default_name,
    open_store,
    parse_bot,
    sandbox_of,
)
from arena.runner.process import BotSpec
from arena.runner.sandbox import in_directory
from arena.store.database import (
    CHECK_KIND,
    DEFAULT_URL,
    BotVersion,
    Store,
    StoredGame,
    counted_games,
)
from arena.store.engine import Missing, StorageError

_NAMED = re.compile(r"^[A-Za-z0-9_.\-]+=")


# -- -b on the commands that play --------------------------------------------------

@dataclass
class Entrants:
    """The bots of a run: ``-b`` texts resolved to versions (their labels)."""

    specs: list[BotSpec] = field(default_factory=list)
    #: Ad-hoc versions to store before the run (:meth:`register`).
    new: list[BotVersion] = field(default_factory=list)
    #: The name each bot was given by (``-b NAME=...``, or a stored bot's
    #: name) -> its label, for ``--challenger``.
    labels: dict[str, str] = field(default_factory=dict)
    #: The games a stored version's bot.toml lists, by label (ad-hoc ones: none).
    games: dict[str, list[str]] = field(default_factory=dict)

    def check_game(self, game: str) -> None:
        """UserError if a stored bot's bot.toml does not list ``game``: a bot is
        seated only in the games it was written for."""
        for label, games in self.games.items():
            if game not in games:
                raise UserError(f"bot {label!r} does not play {game}: its bot.toml lists "
                                f"{', '.join(games) or 'no game'}")

    def register(self, store: Store) -> None:
        try:
            register(store, self.new)
        except BotError as exc:
            raise UserError(str(exc)) from None

    def label(self, name: str) -> str:
        return self.labels.get(name, name)


def choose_bots(texts: Sequence[str], store: Store | None, *, versioned: bool = True,
                merge_unnamed: bool = False) -> Entrants:
    """Each ``-b`` text as a bot version: ``NAME`` or ``NAME@VERSION`` of a bot in
    ``store``, else a command (``NAME=COMMAND`` or a bare one), with ``versioned``
    an ad-hoc version (``store`` None: of a database yet to be made), else with
    its plain name.  ``merge_unnamed``: unnamed commands are named without their
    seat number (``arena play``), so one program in two seats is one version.
    Nothing is stored yet (see :meth:`Entrants.register`)."""
    chosen = Entrants()
    for index, text in enumerate(texts):
        try:
            stored = find_version(store, text) if store is not None else None
        except BotError as exc:
            raise UserError(str(exc)) from None
        if stored is not None:
            spec = spec_of(stored)
            check_spec(spec)
            chosen.labels[stored.base] = chosen.labels[text] = spec.name
            chosen.specs.append(spec)
            if stored.games is not None:
                chosen.games[spec.name] = list(stored.games)
            continue
        spec = command_or_unknown_bot(text, index, store)
        if not versioned:
            chosen.specs.append(spec)
            continue
        base = spec.name
        if not _NAMED.match(text):  # named after its command: a valid bot name
            unnamed = default_name(spec.argv()) if merge_unnamed else spec.name
            base = re.sub(r"[^A-Za-z0-9_.\-]", "_", unnamed)
        version = adhoc_version(store, base, spec.command, chosen.new)
        if version.added is None and version not in chosen.new:
            chosen.new.append(version)
        chosen.labels[spec.name] = version.label
        chosen.specs.append(BotSpec(version.label, spec.command))
    return chosen


def command_or_unknown_bot(text: str, index: int, store: Store | None) -> BotSpec:
    """``-b TEXT`` that names no stored bot, as a command; a UserError that says both
    (with the stored bots it may be a typo of) if that does not run either."""
    try:
        return parse_bot(text, index)
    except UserError as exc:
        if store is None or REFERENCE.fullmatch(text) is None:
            raise
        base = text.partition("@")[0]
        command = str(exc).removeprefix(f"bot {text!r}: ")
        raise UserError(f"{no_stored_bot(store, base)}, nor a command: {command}") from None


def existing_store(url: str) -> Store | None:
    """The database at ``url`` if it was made (a SQLite file, or another server's),
    to look bots up in; None for one not made yet (no file, an empty file, no arena
    tables), which the command then creates."""
    try:
        return open_store(url)
    except Missing:
        return None


def play_store(url: str | None) -> Store | None:
    """Where ``arena play`` looks bots up: ``--db``, else the default database if it
    exists and opens (without ``--db`` nothing is stored, so a problem there is none)."""
    if url is not None:
        return existing_store(url)
    with contextlib.suppress(UserError, StorageError):
        return existing_store(DEFAULT_URL)
    return None


def _argv(spec: BotSpec) -> list[str]:
    argv = spec.argv()
    return in_directory(argv, spec.directory) if spec.directory else argv


def check_spec(spec: BotSpec) -> None:
    """UserError unless the bot's program (in its directory, if stored) can run."""
    check_runnable(spec.name, _argv(spec), spec.directory)


# -- arena bot ...------------------------------------------------------------------

def register_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``arena bot`` and its subcommands to the arena's parser."""
    bot = sub.add_parser("bot", help="store, list, show and retire bot versions",
                         description="Bots as versioned submissions: see docs/bots.md.")
    bot.set_defaults(run=cmd_bot)
    commands = bot.add_subparsers(dest="bot_command", required=True,
                                  metavar="add|list|show|retire", parser_class=type(bot))
    add = commands.add_parser("add", help="store a bot directory (with bot.toml) as a version")
    add.add_argument("directory", metavar="DIR")
    add.add_argument("--bot-store", metavar="DIR", default=None,
                     help="where stored versions are copied (default: arena-bots/ beside "
                          "the SQLite database; required for another database)")
    add_sandbox_flags(add)
    listing = commands.add_parser("list", help="the stored bot versions")
    listing.add_argument("--all", action="store_true", help="retired versions too")
    show = commands.add_parser("show", help="a version's manifest, files and results")
    show.add_argument("bot", metavar="NAME[@VERSION]")
    retire = commands.add_parser("retire", help="retire a version (every version of NAME "
                                                "when no version is given)")
    retire.add_argument("bot", metavar="NAME[@VERSION]")
    for parser in (add, listing, show, retire):
        parser.add_argument("--db", default=DEFAULT_URL,
                            help=f"database URL (default {DEFAULT_URL})")


def cmd_bot(args: argparse.Namespace) -> int:
    try:
        return {"add": bot_add, "list": bot_list, "show": bot_show,
                "retire": bot_retire}[args.bot_command](args)
    except BotError as exc:
        raise UserError(str(exc)) from None


def bot_add(args: argparse.Namespace) -> int:
    source = Path(args.directory)
    read_manifest(source)  # a bad manifest creates no database
    bot_store = Path(args.bot_store) if args.bot_store else default_bot_store(args.db)
    if bot_store is None:
        raise UserError(f"--bot-store DIR is required with --db {args.db!r} (not a SQLite file)")
    sandbox = sandbox_of(args, args.db)
    store = open_store(args.db, create=True)
    added = add_bot(store, source, bot_store.resolve(), sandbox,
                    functools.partial(check_runnable, modules=False))
    label = added.version.label
    print(f"added {label}" if added.new else f"{label} unchanged")
    return 0


def bot_list(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    versions = [v for v in store.bot_versions() if args.all or not v.retired]
    checks = {t["id"] for t in store.tournaments() if t["kind"] == CHECK_KIND}
    games = list(store.scan_games())
    rated = rated_games(g for g in games if g.tournament_id not in checks)
    checked = rated_games(g for g in games if g.tournament_id in checks)
    rows = [(v.label, ",".join(v.games or ()) or "-", _when(v), "retired" if v.retired else "",
             str(rated.get(v.label, 0)), str(checked.get(v.label, 0))) for v in versions]
    header = ("bot", "games", "added", "retired", "rated games", "check games")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip())
    return 0


def _when(version: BotVersion) -> str:
    return version.added.strftime("%Y-%m-%d %H:%M") if version.added else "-"


def rated_games(games: Iterable[StoredGame]) -> Counter[str]:
    """Games with a result each label played (a label twice at a table counts once);
    ``arena bot list`` counts rated games and check games apart."""
    counts: Counter[str] = Counter()
    for game in counted_games(games):
        counts.update(set(game.seats))
    return counts


def _version(store: Store, text: str) -> BotVersion:
    base, _, version = text.partition("@")
    versions = store.bot_versions(base)
    if not versions:
        raise UserError(f"no stored bot {base!r} (see 'arena bot list')")
    if not version:
        return versions[-1]
    for found in versions:
        if found.version == version:
            return found
    raise UserError(f"bot {base!r} has no version {version!r}")


def bot_show(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    version = _version(store, args.bot)
    label = version.label
    games = [g for g in store.scan_games() if label in g.seats]
    counted = counted_games(games)
    places = [p for g in counted for s, p in zip(g.seats, g.places, strict=True) if s == label]
    faults = Counter(f["kind"] for g in games for f in g.faults if f["bot"] == label)
    lines = [("bot", label), ("retired", "yes" if version.retired else "no"),
             ("author", version.author or "-"), ("games", ", ".join(version.games or ()) or "-"),
             ("added", _when(version)), ("fingerprint", version.fingerprint or "-"),
             ("path", version.directory or "- (ad-hoc: runs where the arena runs)"),
             ("command", version.command), ("build", version.build or "-"),
             ("played", f"{len(games)} games, {len(counted)} with a result"),
             ("average place", f"{sum(places) / len(places):.2f}" if places else "-"),
             ("first places", str(places.count(1))),
             ("faults", ", ".join(f"{k} x{n}" for k, n in faults.most_common()) or "none"),
             ("versions", ", ".join(v.label for v in store.bot_versions(version.base)))]
    for key, value in lines:
        print(f"{key + ':':<14} {value}")
    return 0


def bot_retire(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    base, _, version = args.bot.partition("@")
    target = _version(store, args.bot)
    retired = store.retire_bots(base, version or None)
    if not retired:
        print(f"{target.label if version else base} was retired already")
    for label in retired:
        print(f"retired {label}")
    return 0
