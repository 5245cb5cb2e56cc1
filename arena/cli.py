"""The ``arena`` command: tournament, play, report, demo, games.

Every user error ends with one line on stderr (``arena: error: ...``) and exit
status 2; Ctrl-C ends with status 130 after every finished game is stored and
every bot is killed.  ``arena play`` exits 3 when a bot faulted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import trio
from tqdm import tqdm

from arena.client import TimeControl
from arena.games import game_class, game_names, make_game
from arena.games.base import GameError
from arena.process import BotSpec
from arena.referee import GameResult, play_single_game
from arena.storage import DEFAULT_URL, StorageError, Store
from arena.tournament import ConfigError, Plan, create_tournament, run_tournament

DEFAULT_REPORT_DIR = "arena-report"
EXIT_USAGE = 2
EXIT_FAULT = 3
EXIT_INTERRUPTED = 130
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

def parse_bot(text: str, index: int) -> BotSpec:
    """``name=command`` or a bare command (named after its last word)."""
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
    program = argv[0]
    if shutil.which(program) is None:
        if os.sep not in program:
            why = "not on PATH"
        elif not os.path.exists(program):
            why = "file not found"
        else:
            why = "not an executable file: chmod +x it, or name its interpreter first"
        raise UserError(f"bot {name or text!r}: cannot run {program!r} ({why})")
    if name is None:
        name = f"{_default_name(argv)}-{index}"
    return BotSpec(name, command)


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
        if getattr(args, flag) < 0:
            raise UserError(f"--{flag.replace('_', '-')} must not be negative")
    return TimeControl(handshake=args.handshake_time, move=args.move_time, bank=args.bank_time)


def _add_time_flags(parser: argparse.ArgumentParser) -> None:
    defaults = TimeControl()
    parser.add_argument("--move-time", type=float, default=defaults.move, metavar="SECONDS",
                        help=f"free time per move (default {defaults.move})")
    parser.add_argument("--bank-time", type=float, default=defaults.bank, metavar="SECONDS",
                        help=f"extra time per game, spent past the move time "
                             f"(default {defaults.bank})")
    parser.add_argument("--handshake-time", type=float, default=defaults.handshake,
                        metavar="SECONDS", help=f"time to start and answer hello "
                                                f"(default {defaults.handshake})")


def _add_game_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", "-g", required=True, help="game name (see 'arena games')")
    parser.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                        help="game option, repeatable (e.g. rounds=5, deck=Ah,2c,...)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="arena", description="Five Arena: tournaments for card-game bots.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    t = sub.add_parser("tournament", help="run (or resume) a round-robin tournament")
    t.add_argument("--game", "-g", help="game name (see 'arena games')")
    t.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="game option, repeatable")
    t.add_argument("--bot", "-b", action="append", default=[], metavar="NAME=COMMAND",
                   help="an entrant, repeatable")
    t.add_argument("--table-size", "-k", type=int, default=2, help="players per table (default 2)")
    t.add_argument("--games", "-n", type=int, default=None,
                   help="games per table, a multiple of the table size (default 2 x table size)")
    t.add_argument("--seed", type=int, default=1, help="seed of the deal seeds (default 1)")
    t.add_argument("--parallel", "-j", type=int, default=os.cpu_count() or 1,
                   help="tables played at once (default: CPU count)")
    t.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    t.add_argument("--resume", type=int, metavar="ID",
                   help="resume tournament ID from the database (other flags but --db, "
                        "--parallel are taken from the stored tournament)")
    _add_time_flags(t)

    p = sub.add_parser("play", help="play one game between bots and print the result")
    _add_game_flags(p)
    p.add_argument("bots", nargs="*", metavar="BOT",
                   help="bot command or NAME=COMMAND, in seat order")
    p.add_argument("--bot", "-b", action="append", default=[], dest="more_bots",
                   metavar="NAME=COMMAND", help="a bot, repeatable (after the positional ones)")
    p.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--db", default=None, help="also store the game in this database")
    _add_time_flags(p)

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
    d.add_argument("--parallel", "-j", type=int, default=os.cpu_count() or 1)

    sub.add_parser("games", help="list the games and their options")
    return parser


# -- commands ------------------------------------------------------------------

def cmd_games(_args: argparse.Namespace) -> int:
    for name in game_names():
        cls = game_class(name)
        print(f"{name} ({cls.min_players}-{cls.max_players} players, "
              f"{cls.score_order} score is better)")
        for spec in cls.all_option_specs():
            print(f"  {spec.name}={spec.default!s:<8} {spec.doc}")
    return 0


class _Progress:
    """A tqdm bar fed by finished games."""

    def __init__(self, total: int, done: int) -> None:
        self.faults = 0
        self.bar = tqdm(total=total, initial=done, unit="game", dynamic_ncols=True,
                        disable=None, file=sys.stderr)

    def __call__(self, result: GameResult) -> None:
        self.faults += len(result.faults)
        self.bar.set_postfix(faults=self.faults, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


async def _until_signal(plan: Plan, store: Store, tournament_id: int, parallel: int,
                        progress: _Progress) -> int | None:
    """Run the tournament; on SIGTERM or SIGHUP stop it as Ctrl-C would.
    Returns the signal number that stopped it, or None."""
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
        await run_tournament(plan, store, tournament_id, parallel=parallel, on_game=progress)
        nursery.cancel_scope.cancel()
    return stopped


def _run_plan(store: Store, plan: Plan, tournament_id: int, parallel: int) -> int:
    done = len(store.done_games(tournament_id))
    progress = _Progress(plan.total_games, done)
    store.set_status(tournament_id, "running")
    started = time.monotonic()
    try:
        stopped = trio.run(_until_signal, plan, store, tournament_id, parallel, progress)
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        stopped = signal.SIGINT
    if stopped is not None:
        progress.close()
        store.set_status(tournament_id, "interrupted")
        stored = len(store.done_games(tournament_id))
        print(f"arena: interrupted; {stored}/{plan.total_games} games stored; resume with "
              f"'arena tournament --resume {tournament_id} --db {store.url}'", file=sys.stderr)
        return EXIT_INTERRUPTED
    progress.close()
    store.set_status(tournament_id, "finished")
    elapsed = time.monotonic() - started
    print(f"tournament {tournament_id}: {plan.total_games} games "
          f"({plan.total_games - done} played in {elapsed:.1f}s), {progress.faults} faults, "
          f"stored in {store.url}", file=sys.stderr)
    return 0


def cmd_tournament(args: argparse.Namespace) -> int:
    store = Store(args.db)
    if args.resume is not None:
        stored = store.tournament(args.resume)
        if stored is None or stored["kind"] != "tournament":
            raise UserError(f"no tournament {args.resume} in {args.db}")
        plan = Plan.from_config(stored["config"])
        plan.validate()
        return _run_plan(store, plan, args.resume, args.parallel)
    if not args.game:
        raise UserError("--game is required (see 'arena games')")
    bots = tuple(parse_bot(text, i) for i, text in enumerate(args.bot))
    games = args.games if args.games is not None else 2 * args.table_size
    plan = Plan(game=args.game, bots=bots, table_size=args.table_size, games_per_table=games,
                options=parse_options(args.option), seed=args.seed, control=_time_control(args))
    plan.validate()
    if args.parallel < 1:
        raise UserError("--parallel must be at least 1")
    return _run_plan(store, plan, create_tournament(store, plan), args.parallel)


def play_result_json(game: str, options: dict[str, Any], result: GameResult) -> dict[str, Any]:
    """The documented ``arena play --json`` object (see README)."""
    return {
        "game": game, "seed": result.seed, "options": options, "bots": result.bots,
        "scores": result.scores, "places": result.places, "game_places": result.game_places,
        "faults": [f.to_dict() for f in result.faults],
        "duration": round(result.duration, 4), "decisions": result.decisions,
        "record": {"actions": result.actions, "events": result.events, "reveal": result.reveal},
    }


def cmd_play(args: argparse.Namespace) -> int:
    bots = [parse_bot(text, i) for i, text in enumerate(args.bots + args.more_bots)]
    if not bots:
        raise UserError("no bots given")
    names = [b.name for b in bots]
    if len(set(names)) != len(names):
        raise UserError("two bots have the same name; name them NAME=COMMAND")
    options = parse_options(args.option)
    game = make_game(args.game, len(bots), options)  # validate before starting bots
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(7), "big")
    store = Store(args.db) if args.db else None
    try:
        result = trio.run(play_single_game, game, seed, bots, _time_control(args))
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        print("arena: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if store is not None:
        store.register_bots([(b.name, b.command) for b in bots])
        tid = store.create_tournament(args.game, {"game": args.game, "options": options,
                                                  "bots": [{"name": b.name, "command": b.command}
                                                           for b in bots]},
                                      [names], 1, kind="play")
        store.save_game(tid, 0, 0, game.options, result)
        store.set_status(tid, "finished")
    if args.json:
        print(json.dumps(play_result_json(args.game, game.options, result)))
    else:
        for seat, name in enumerate(result.bots):
            print(f"seat {seat}: {name:<20} score {result.scores[seat]:>8g}  "
                  f"place {result.places[seat]}")
        print(f"seed {result.seed}, {result.decisions} decisions in {result.duration:.2f}s")
    for fault in result.faults:
        print(f"arena: bot {fault.bot!r} (seat {fault.seat}) {fault.kind}: {fault.detail}",
              file=sys.stderr)
    return EXIT_FAULT if result.faults else 0


def cmd_report(args: argparse.Namespace) -> int:
    from reports.render import render_report

    store = Store(args.db)
    index = render_report(store, Path(args.out), max_replays=args.max_replays)
    print(index.resolve())
    return 0


def demo_plans(games: int | None) -> list[Plan]:
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
                          table_size=table, games_per_table=per_table, seed=2026 + index))
    return plans


#: Games per table in the demo, sized so the whole demo takes about a minute.
DEMO_GAMES = {"furious-five": 80, "five": 100, "five-or-less": 24, "five-card-rummy": 48,
              "rummy-five": 80, "octablitz": 36}


def cmd_demo(args: argparse.Namespace) -> int:
    store = Store(args.db)
    for plan in demo_plans(args.games):
        plan.validate()
        tid = create_tournament(store, plan)
        print(f"demo: {plan.game}: {', '.join(b.name for b in plan.bots)}", file=sys.stderr)
        status = _run_plan(store, plan, tid, args.parallel)
        if status:
            return status
    from reports.render import render_report

    index = render_report(store, Path(args.out))
    print(f"report: {index.resolve()}")
    return 0


COMMANDS = {"tournament": cmd_tournament, "play": cmd_play, "report": cmd_report,
            "demo": cmd_demo, "games": cmd_games}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (UserError, ConfigError, GameError, StorageError) as exc:
        _fail(str(exc))
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        print("arena: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
