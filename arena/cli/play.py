"""``arena play`` (one game, a person may take a seat), ``arena demo`` and
``arena sandbox-check``."""

from __future__ import annotations

import argparse
import functools
import json
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from arena.cli.bots import choose_bots, play_store
from arena.cli.common import (
    DEFAULT_REPORT_DIR,
    EXIT_FAULT,
    EXIT_INTERRUPTED,
    Subparsers,
    UserError,
    add_game_flags,
    add_parallel_flags,
    add_sandbox_flags,
    add_time_flags,
    announce,
    check_execution,
    check_seed,
    execution,
    is_interrupt,
    open_store,
    parse_options,
    report_folder,
    sandbox_of,
    time_control,
)
from arena.cli.running import run_plan
from arena.games import game_class, make_game
from arena.runner.plan import Plan, create_tournament, find_tournament, store_single_game
from arena.runner.process import BotSpec
from arena.runner.referee import EntrantFactory, play_single_game
from arena.runner.sandbox import SANDBOX_CHOICES, Limits, Sandbox
from arena.store.database import DEFAULT_URL, Store
from arena.store.records import GameResult


def add_play(sub: Subparsers) -> None:
    """``arena play``."""
    p = sub.add_parser("play", help="play one game between bots and print the result")
    add_game_flags(p)
    p.add_argument("bots", nargs="*", metavar="BOT",
                   help="bot command or NAME=COMMAND, in seat order")
    p.add_argument("--bot", "-b", action="append", default=[], dest="more_bots",
                   metavar="NAME=COMMAND", help="a bot, repeatable (after the positional ones)")
    p.add_argument("--seed", type=int, default=None, help="deal seed (default: random)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--db", default=None, help="also store the game in this database")
    p.add_argument("--human", type=int, default=None, metavar="SEAT",
                   help="you take seat SEAT at the terminal (the bots fill the other seats "
                        "in order); no time limit for you, q resigns")
    add_time_flags(p)
    add_sandbox_flags(p)
    p.set_defaults(run=cmd_play)


def add_demo(sub: Subparsers) -> None:
    """``arena demo``."""
    d = sub.add_parser("demo", help="demo tournament of the sample bots, then the report")
    d.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    d.add_argument("--out", default=DEFAULT_REPORT_DIR, help="report folder")
    d.add_argument("--games", "-n", type=int, default=None,
                   help="games per table in every game (default: sized for about a minute)")
    add_parallel_flags(d)
    add_sandbox_flags(d)
    d.set_defaults(run=cmd_demo)


def add_sandbox_check(sub: Subparsers) -> None:
    """``arena sandbox-check``."""
    c = sub.add_parser("sandbox-check", help="show which bot protections work on this machine")
    c.add_argument("--sandbox", default="auto", choices=SANDBOX_CHOICES)
    c.add_argument("--limit", action="append", default=[], metavar="NAME=NUMBER")
    c.set_defaults(run=cmd_sandbox_check)


def cmd_play(args: argparse.Namespace) -> int:
    texts = args.bots + args.more_bots
    human = args.human
    if human is not None and not 0 <= human <= len(texts):
        raise UserError(f"--human must be a seat from 0 to {len(texts)} (the bots take the "
                        f"other seats), not {human}")
    if human is not None and args.json:
        raise UserError("--json cannot be combined with --human (the terminal is yours)")
    known = play_store(args.db)
    entrants = choose_bots(texts, known, versioned=bool(args.db), merge_unnamed=True)
    entrants.check_game(args.game)
    bots = list(entrants.specs)
    if not bots:
        raise UserError("no bots given")
    if human is not None:
        from arena.runner.human import HUMAN

        bots.insert(human, HUMAN)
    names = [b.name for b in bots]
    if len(set(names)) != len(names) and not args.db:
        raise UserError("two bots have the same name; name them NAME=COMMAND")
    options = parse_options(args.option)
    game = make_game(args.game, len(bots), options)  # validate before starting bots
    check_seed(args.seed)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(7), "big")
    control = time_control(args)
    store = (known or open_store(args.db, create=True)) if args.db else None
    if store is not None:
        entrants.register(store)
    sandbox = sandbox_of(args, args.db)
    announce(sandbox)
    try:
        result = trio.run(play_single_game, game, seed, bots, control, sandbox,
                          _human_seat(human, names))
    except BaseException as exc:
        if not is_interrupt(exc):
            raise
        print("arena: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if store is not None:
        _store_play(store, args.game, options, game.options, bots, result)
    if args.json:
        print(json.dumps(result.play_json(args.game, game.options)))
    else:
        for seat, name in enumerate(result.bots):
            print(f"seat {seat}: {name:<20} score {result.scores[seat]:>8g}  "
                  f"place {result.places[seat]}")
        print(f"seed {result.seed}, {result.decisions} decisions in {result.duration:.2f}s")
    for fault in result.faults:
        print(f"arena: bot {fault.bot!r} (seat {fault.seat}) {fault.kind}: {fault.detail}",
              file=sys.stderr)
    return EXIT_FAULT if result.faults else 0

def _human_seat(seat: int | None, names: Sequence[str]) -> dict[int, EntrantFactory]:
    """The entrant factory of the person's seat (``arena play --human``), if any."""
    if seat is None:
        return {}
    from arena.runner.human import HumanEntrant

    return {seat: functools.partial(HumanEntrant, names=names)}

def _store_play(store: Store, game: str, options: dict[str, Any], full_options: dict[str, Any],
                bots: Sequence[BotSpec], result: GameResult) -> None:
    """Store an ``arena play`` game as a one-game tournament of kind "play"."""
    store_single_game(store, game, options, full_options, bots, result)

#: Games per table in the demo, sized so the whole demo takes about a minute.
DEMO_GAMES = {"furious-five": 80, "five": 100, "five-or-less": 24, "five-card-rummy": 48,
              "rummy-five": 80, "octablitz": 36}

def demo_plans(games: int | None, sandbox: Sandbox | None = None) -> list[Plan]:
    """One round robin per game: its heuristic sample bot against the random bot
    (two random bots where a game needs three players)."""
    from arena.bots.samples import spec
    from sample_bots import HEURISTICS, RANDOM

    plans = []
    for index, (game, module) in enumerate(HEURISTICS.items()):
        table = max(2, game_class(game).min_players)
        randoms = [spec(RANDOM, "random")] + [spec(RANDOM, f"random-{i + 2}")
                                               for i in range(table - 2)]
        per_table = games or DEMO_GAMES[game]
        per_table += -per_table % table
        plans.append(Plan(game=game, bots=(spec(module, module.replace("_", "-")), *randoms),
                          table_size=table, games_per_table=per_table, seed=2026 + index,
                          **_sandbox_fields(sandbox)))
    return plans

def _sandbox_fields(sandbox: Sandbox | None) -> dict[str, Any]:
    if sandbox is None:
        return {}
    return {"sandbox": sandbox.kind, "limits": sandbox.limits, "pass_env": sandbox.pass_env}

def cmd_demo(args: argparse.Namespace) -> int:
    check_execution(args)
    folder = report_folder(args.out)  # a bad --out creates no database
    store = open_store(args.db, create=True)
    sandbox = sandbox_of(args, args.db)
    announce(sandbox)
    faulted = False
    with execution(args) as run:
        for plan in demo_plans(args.games, sandbox):
            plan.validate()
            # A demo run before (same settings) stored this plan: finish it, or reuse it.
            stored = find_tournament(store, plan, same=any_python)
            if stored is not None and stored["games_done"] >= plan.total_games:
                print(f"demo: {plan.game}: tournament {stored['id']} is stored already",
                      file=sys.stderr)
                continue
            tid = create_tournament(store, plan) if stored is None else stored["id"]
            print(f"demo: {plan.game}: {', '.join(b.name for b in plan.bots)}"
                  f"{'' if stored is None else f' (resuming tournament {tid})'}",
                  file=sys.stderr)
            status = run_plan(store, plan, tid, run, sandbox)
            if status not in (0, EXIT_FAULT):
                return status
            faulted = faulted or status == EXIT_FAULT
    from reports.render import render_report

    index = render_report(store, folder)
    print(f"report: {index.resolve()}")
    return EXIT_FAULT if faulted else 0

def any_python(config: Any) -> Any:
    """A demo's stored configuration with each bot's interpreter as plain ``python``:
    the same demo whatever the interpreter's path (``pip install`` may rewrite the
    path in the ``arena`` script)."""
    bots = [{**bot, "command": _any_python_command(bot["command"])}
            for bot in config.get("bots", [])]
    return {**config, "bots": bots}

def _any_python_command(command: str) -> str:
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if argv and Path(argv[0]).name.startswith("python"):
        argv[0] = "python"
    return shlex.join(argv)

def cmd_sandbox_check(args: argparse.Namespace) -> int:
    from arena.runner import sandbox_check

    return sandbox_check.main(args.sandbox, Limits.parse(args.limit))
