"""The organiser's commands: what is stored, a game replayed in the terminal,
deleting a tournament and the rules of each game.

``arena rules``, ``arena tournaments``, ``arena games``, ``arena show`` and
``arena delete`` (see docs/cli.md; ``arena --version`` is in :mod:`arena.cli`).
:func:`add_commands` registers them on the ``arena`` parser; each sets its function as ``run``.
Errors are :class:`arena.cli.common.UserError` (one line on stderr, exit 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from arena.cli.common import UserError, mask_passwords, open_store
from arena.games import game_class, game_names
from arena.runner.terminal_view import observation_lines, seat_label
from arena.store.database import DEFAULT_URL, Store, StoredGame
from arena.store.engine import Missing
from arena.store.records import GameRecord

#: Exit status when the organiser answers no (nothing was deleted).
EXIT_DECLINED = 1


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add this module's commands to ``sub`` (the ``arena`` parser's subparsers;
    ``--version`` is :func:`arena.cli.version_text`)."""
    db_help = f"database URL (default {DEFAULT_URL})"

    sub.add_parser("rules", help="list the games and their options").set_defaults(run=cmd_rules)

    t = sub.add_parser("tournaments", help="list the stored tournaments")
    t.add_argument("--db", default=DEFAULT_URL, help=db_help)
    t.set_defaults(run=cmd_tournaments)

    g = sub.add_parser("games", help="list stored games (scores, places, faults)")
    g.add_argument("--tournament", "-t", type=int, metavar="ID", help="only this tournament's")
    g.add_argument("--bot", "-b", metavar="NAME", help="only games this bot played")
    g.add_argument("--limit", type=int, metavar="N", help="only the N most recent")
    g.add_argument("--db", default=DEFAULT_URL, help=db_help)
    g.set_defaults(run=cmd_games)

    s = sub.add_parser("show", help="replay a stored game in the terminal")
    s.add_argument("game_id", type=int, metavar="GAME_ID", help="a game's id (see 'arena games')")
    s.add_argument("--seat", type=int, metavar="N",
                   help="what seat N saw (default: what a spectator saw)")
    s.add_argument("--db", default=DEFAULT_URL, help=db_help)
    s.set_defaults(run=cmd_show)

    d = sub.add_parser("delete", help="delete a tournament and its games")
    d.add_argument("--tournament", "-t", type=int, metavar="ID", required=True,
                   help="the tournament to delete (see 'arena tournaments')")
    d.add_argument("--yes", action="store_true", help="do not ask (needed without a terminal)")
    d.add_argument("--db", default=DEFAULT_URL, help=db_help)
    d.set_defaults(run=cmd_delete)


def cmd_rules(_args: argparse.Namespace) -> int:
    for name in game_names():
        cls = game_class(name)
        print(f"{name} ({cls.min_players}-{cls.max_players} players, "
              f"{cls.score_order} score is better)")
        for spec in cls.all_option_specs():
            print(f"  {spec.name}={spec.default!s:<8} {spec.doc}")
    return 0


def emit(lines: Iterable[str]) -> None:
    """Print ``lines``; a reader that stops early (``| head``) ends the output quietly."""
    try:
        for line in lines:
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would complain once more when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


# -- arena tournaments -----------------------------------------------------------

def cmd_tournaments(args: argparse.Namespace) -> int:
    tournaments = open_store(args.db).tournaments()
    if not tournaments:
        print(f"arena: no tournaments in {mask_passwords(args.db)}", file=sys.stderr)
    emit(tournament_lines(tournaments))
    return 0


def tournament_lines(tournaments: Iterable[dict[str, Any]]) -> list[str]:
    """A header, then per tournament: id, kind, game, status, games stored/total,
    bots, created (UTC, to the minute)."""
    lines = [f"{'id':>4}  {'kind':<10} {'game':<15} {'status':<11} {'games':>11}  "
             f"{'created':<16}  bots"]
    for t in tournaments:
        bots = [bot["name"] for bot in (t["config"] or {}).get("bots", ())]
        created = t["created"][:16].replace("T", " ")
        games = f"{t['games_done']}/{t['total_games']}"
        lines.append(f"{t['id']:>4}  {t['kind']:<10} {t['game']:<15} {t['status']:<11} "
                     f"{games:>11}  {created:<16}  {' '.join(bots)}")
    return lines


# -- arena games -----------------------------------------------------------------

def cmd_games(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, not {args.limit}")
    try:
        store = open_store(args.db)
    except (UserError, Missing) as exc:  # 'arena games' listed the games' rules before
        raise UserError(f"{exc} (the games' rules and options: 'arena rules')") from None
    tournaments = store.tournaments()
    if args.tournament is not None and args.tournament not in {t["id"] for t in tournaments}:
        raise UserError(f"no tournament {args.tournament} in {args.db} "
                        f"(see 'arena tournaments')")
    if args.bot is not None and not any(is_bot(args.bot, bot["name"]) for bot in store.bots()):
        raise UserError(f"no bot {args.bot!r} in {args.db} (see 'arena bot list')")
    games = select_games(store, tournaments, args.tournament, args.bot, args.limit)
    if not games:
        print("arena: no stored games match", file=sys.stderr)
    emit(map(game_line, games))
    return 0


def select_games(store: Store, tournaments: Iterable[dict[str, Any]], tournament: int | None,
                 bot: str | None, limit: int | None) -> list[StoredGame]:
    """The stored games of ``tournament`` (None: any) that ``bot`` (None: any;
    see :func:`is_bot`) played, oldest first; with ``limit`` only that many of
    the most recent."""
    def played(seats: Iterable[str]) -> bool:
        return bot is None or any(is_bot(bot, seat) for seat in seats)

    ids = [t["id"] for t in tournaments if (tournament is None or t["id"] == tournament)
           and any(played(table) for table in t["tables"])]
    games = sorted((game for tid in ids for game in store.scan_games(tid) if played(game.seats)),
                   key=lambda game: game.id)
    return games[-limit:] if limit else games


def is_bot(reference: str, label: str) -> bool:
    """Whether the seat ``label`` is ``reference``: that label, or a version of
    that name (``NAME`` matches ``NAME@2``)."""
    return label == reference or label.startswith(reference + "@")


def game_line(game: StoredGame) -> str:
    """One stored game: id, tournament, game, each seat's bot with its score and
    place, the faults, the decisions."""
    seats = "  ".join(f"{name} {score:g} ({place})" for name, score, place
                      in zip(game.seats, game.scores, game.places, strict=False))
    faults = ", ".join(f"{fault['bot']} {fault['kind']}" for fault in game.faults)
    no_result = " no result" if game.no_result else ""
    return (f"{game.id:>6}  t{game.tournament_id:<4} {game.game:<15} {seats}  "
            f"faults: {faults or '-'}{no_result}  {game.decisions} decisions")


# -- arena show ------------------------------------------------------------------

def cmd_show(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    game = store.game(args.game_id)
    record = store.record(args.game_id) if game is not None else None
    if game is None or record is None:
        raise UserError(f"no game {args.game_id} in {args.db} (see 'arena games')")
    if args.seat is not None and not 0 <= args.seat < len(game.seats):
        raise UserError(f"--seat must be from 0 to {len(game.seats) - 1} "
                        f"(game {game.id} has {len(game.seats)} seats), not {args.seat}")
    emit(replay_lines(game, record, args.seat))
    return 0


def replay_lines(game: StoredGame, record: GameRecord, seat: int | None) -> Iterator[str]:
    """A stored game as ``seat`` (None: a spectator) saw it, replayed through
    its engine as the HTML replay viewer does: per shown step (numbered in the
    view, without gaps), its decisions
    (those the arena played for a faulted seat marked), the events they led
    to, then the viewer's observation; at the end the result."""
    from arena.store.replays import replay, timeline

    names = list(game.seats)
    view = "spectator" if seat is None else seat_label(seat, names)
    seed = "secret" if game.shown_seed is None else game.shown_seed
    yield (f"game {game.id}: {game.game}, tournament {game.tournament_id}, seed {seed}, "
           f"{', '.join(seat_label(s, names) for s in range(len(names)))}; view: {view}")
    replayed = replay(game, record)
    if replayed is None:
        yield "(this record does not replay on this code's engines: decisions and events only)"
    before = None
    # Steps are numbered in the view, 0, 1, ...: the record's own indices would
    # leave gaps where steps the viewer may not see (a claim window) were played.
    for number, position in enumerate(timeline(game, record, seat, replayed), start=-1):
        yield "start" if not position.moves else f"step {number}: " + "; ".join(
            _move_text(move, names, seat) for move in position.moves)
        yield from (f"  * {line}" for line in position.log)
        yield from (f"  * (to you) {line}" for line in position.private)
        if position.observation is not None:
            yield from (f"  {line}" for line in observation_lines(position.observation, names,
                                                                  before))
            before = position.observation
    yield from result_lines(game)


def _move_text(move: list[Any], names: list[str], viewer: int | None) -> str:
    seat, text = move[0], move[1]
    by_arena = " [played by the arena: the seat had faulted]" if len(move) > 2 else ""
    return (f"{seat_label(seat, names, viewer)} {text if text is not None else '(hidden)'}"
            f"{by_arena}")


def result_lines(game: StoredGame) -> list[str]:
    """The end of a game: each seat's score and place, then its faults."""
    lines = ["result:" + (" no result (every seat faulted)" if game.no_result else "")]
    lines += [f"  {seat_label(seat, game.seats)}: score {score:g}, place {place}"
              for seat, (score, place) in enumerate(zip(game.scores, game.places, strict=False))]
    lines += [f"  fault: {seat_label(f['seat'], game.seats)} {f['kind']}: {f['detail']}"
              for f in game.faults]
    return lines


# -- arena delete ----------------------------------------------------------------

def cmd_delete(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    stored = store.tournament(args.tournament)
    if stored is None:
        raise UserError(f"no tournament {args.tournament} in {args.db} "
                        f"(see 'arena tournaments')")
    what = (f"tournament {stored['id']} ({stored['kind']}, {stored['game']}, "
            f"{stored['games_done']} games)")
    if not args.yes:
        if not sys.stdin.isatty():
            raise UserError(f"not deleting {what} without --yes (no terminal to ask on)")
        try:
            answer = input(f"delete {what} from {mask_passwords(args.db)}? [y/N] ").strip().lower()
        except EOFError:
            answer = ""
        if answer not in ("y", "yes"):
            print("arena: nothing deleted", file=sys.stderr)
            return EXIT_DECLINED
    deleted = store.delete_tournament(stored["id"])
    print(f"deleted tournament {stored['id']} and its {deleted} games")
    return 0
