"""``arena ladder``: a continuous ladder, its entrants read anew before each
table, its report re-rendered as it goes."""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import trio

from arena.cli.bots import choose_bots, existing_store
from arena.cli.common import (
    DEFAULT_REPORT_DIR,
    EXIT_INTERRUPTED,
    Execution,
    Subparsers,
    UserError,
    add_entrant_flags,
    add_run_flags,
    check_execution,
    execution,
    mask_passwords,
    open_store,
    parse_options,
    report_folder,
    resolve_sandbox,
    resumable,
    time_control,
)
from arena.cli.rerender import Rerender
from arena.cli.running import (
    announce_plan,
    deal_fields,
    play_until_stopped,
    report_tournament,
    resume_plan,
    revealed_deals,
    second_signal_exits,
    stopped_standings,
)
from arena.cli.standings import Printer, add_standings_flag, check_every
from arena.cli.standings import final as final_standings
from arena.formats.schedule import Ladder
from arena.runner.ladder import Entrants, create_ladder, run_ladder
from arena.runner.plan import Plan
from arena.runner.process import BotSpec
from arena.runner.progress import Progress, write_above_bars
from arena.runner.sandbox import Limits, Sandbox
from arena.runner.views import run_view_builder
from arena.store.database import DEFAULT_URL, Store
from arena.store.records import GameResult

#: The most tables ``arena ladder --max-groups`` accepts, and games ``--report-every``.
MAX_GROUPS = 10_000_000

#: Default of ``arena ladder --report-minutes``; the most it accepts (a week).
DEFAULT_REPORT_MINUTES = 10.0

MAX_REPORT_MINUTES = 10080.0


def add_ladder(sub: Subparsers) -> None:
    """``arena ladder``."""
    lad = sub.add_parser("ladder", help="keep playing duplicate groups as entrants come and go",
                         description="A continuous ladder: table after table, each one "
                                     "duplicate group (one deal, every seat rotation), the "
                                     "table picked from the entrants active now so that new "
                                     "entrants play first, nobody waits long and pairs meet "
                                     "equally often; until stopped (Ctrl-C) or --max-groups. "
                                     "See docs/formats.md.")
    add_entrant_flags(lad, "game name (see 'arena rules')",
                       "an entrant besides the stored bots that passed 'arena check-bot', "
                       "repeatable (with --resume: the entrants from now on; default: the "
                       "ladder's entrants given by command)")
    lad.add_argument("--seats", "-k", type=int, default=2, help="players per table (default 2)")
    lad.add_argument("--seed", type=int, default=None,
                     help="KNOWN deals: the seed of the tables' deals and picks, for "
                          "reproducible research (default: secret deals, a secret per "
                          "period of tables, each revealed when its tables are played)")
    lad.add_argument("--max-groups", type=int, default=None, metavar="N",
                     help="stop once the ladder has N tables (default: run until stopped)")
    lad.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    lad.add_argument("--out", default=DEFAULT_REPORT_DIR, help="report folder")
    lad.add_argument("--report-every", type=int, default=0, metavar="N",
                     help="re-render the report every N games (default 0: not by count)")
    lad.add_argument("--report-minutes", type=float, default=DEFAULT_REPORT_MINUTES,
                     metavar="M", help=f"re-render the report every M minutes (default "
                                       f"{DEFAULT_REPORT_MINUTES:g}; 0: not by time)")
    lad.add_argument("--no-report", action="store_true",
                     help="render no report (by default: as it goes, and at the end)")
    lad.add_argument("--resume", type=int, metavar="ID",
                     help="resume ladder ID: its unfinished tables first, then new ones; its "
                          "stored settings (of the other flags only -b, --db, --out, the report, "
                          "parallel and standings flags and --max-groups are taken; the rest "
                          "are refused)")
    add_run_flags(lad)
    add_standings_flag(lad)
    resumable(lad, "bot", "db", "out", "report_every", "report_minutes", "no_report",
              "parallel", "workers", "cluster", "max_groups", "standings_every")
    lad.set_defaults(run=cmd_ladder)


def cmd_ladder(args: argparse.Namespace) -> int:
    _check_ladder_flags(args)
    check_every(args.standings_every)
    check_execution(args)
    known = existing_store(args.db)
    given = choose_bots(args.bot, known)
    bots = tuple(given.specs)
    if args.resume is not None:
        store, plan, sandbox = resume_plan(args, "ladder")
        given.check_game(plan.game)
        entrants = list(bots or (bot for bot in plan.bots if bot.directory is None))
        folder = None if args.no_report else report_folder(args.out)
    else:
        if not args.game:
            raise UserError("--game is required (see 'arena rules')")
        given.check_game(args.game)
        if known is not None:  # the stored bots that may play it now
            from arena.bots.versions import active_entrants

            labels = {bot.name for bot in bots}
            bots += tuple(bot for bot in active_entrants(known, args.game)
                          if bot.name not in labels)
        plan = Plan(game=args.game, bots=bots, table_size=args.seats,
                    games_per_table=args.seats, options=parse_options(args.option),
                    **deal_fields(args.seed), control=time_control(args), sandbox=args.sandbox,
                    limits=Limits.parse(args.limit), pass_env=tuple(args.pass_env),
                    format=Ladder())
        plan.validate()
        entrants = list(given.specs)
        sandbox = resolve_sandbox(plan.sandbox, plan.limits, plan.pass_env, args.db,
                                  args.out)
        folder = None if args.no_report else report_folder(args.out)
        store = known or open_store(args.db, create=True)
    given.register(store)
    announce_plan(sandbox, plan)
    with execution(args) as run:
        tid = args.resume if args.resume is not None else create_ladder(store, plan)
        return _run_ladder(store, plan, tid, run, sandbox,
                           ladder_entrants(store, plan.game, entrants, say_above_progress),
                           folder, args)

def ladder_entrants(store: Store, game: str, given: Sequence[BotSpec],
                    say: Callable[[str], None] | None = None) -> Entrants:
    """Who may play the ladder's next table: the ``-b`` bots, and the newest
    version of every stored bot that plays ``game``, is not retired and passed
    ``arena check-bot`` in it (read anew each time, so ``arena bot add``,
    ``check-bot`` and ``bot retire`` take effect while it runs).  The first time,
    and whenever that changes, ``say`` hears who joined, who left and who is
    left out and why (:func:`entrant_lines`)."""
    from arena.bots.versions import entrant_status

    names = {bot.name for bot in given}
    said: list[tuple[list[str], dict[str, str]]] = []

    def entrants() -> list[BotSpec]:
        stored, left_out = entrant_status(store, game)
        active = [*given, *(bot for bot in stored if bot.name not in names)]
        now = ([bot.name for bot in active], left_out)
        if say is not None and (not said or said[-1] != now):
            for line in entrant_lines(game, said[-1] if said else None, now, names):
                say(line)
            said[:] = [now]
        return active

    return entrants

def entrant_lines(game: str, before: tuple[list[str], dict[str, str]] | None,
                  now: tuple[list[str], dict[str, str]], given: Iterable[str]) -> list[str]:
    """What changed among a ladder's entrants (all of them the first time):
    ``before`` and ``now`` are (the active labels, the left-out labels with why)."""
    active, left_out = now
    if before is None:
        shown = [f"{name} (-b)" if name in given else name for name in active]
        lines = [f"arena: ladder entrants in {game}: {', '.join(shown) or 'none'}"]
        out = left_out
    else:
        joined = [name for name in active if name not in before[0]]
        gone = [name for name in before[0] if name not in active]
        lines = [f"arena: ladder: joined: {', '.join(joined)}"] if joined else []
        lines += [f"arena: ladder: left: {', '.join(gone)}"] if gone else []
        out = {label: why for label, why in left_out.items() if before[1].get(label) != why}
    if out:
        lines.append("arena: ladder: left out: " + "; ".join(
            f"{label} ({why})" for label, why in sorted(out.items())))
    return lines

def say_above_progress(message: str) -> None:
    """A line on stderr that does not break a progress bar."""
    write_above_bars(message)

def _check_ladder_flags(args: argparse.Namespace) -> None:
    if args.max_groups is not None and not 1 <= args.max_groups <= MAX_GROUPS:
        raise UserError(f"--max-groups must be from 1 to {MAX_GROUPS}, not {args.max_groups}")
    if not 0 <= args.report_every <= MAX_GROUPS:
        raise UserError(f"--report-every must be from 0 to {MAX_GROUPS} games, "
                        f"not {args.report_every}")
    if not (math.isfinite(args.report_minutes) and
            0 <= args.report_minutes <= MAX_REPORT_MINUTES):
        raise UserError(f"--report-minutes must be from 0 to {MAX_REPORT_MINUTES:g} (a week), "
                        f"not {args.report_minutes!r}")

def _run_ladder(store: Store, plan: Plan, tournament_id: int, run: Execution, sandbox: Sandbox,
                entrants: Entrants, folder: Path | None, args: argparse.Namespace) -> int:
    """Play the ladder until stopped or ``--max-groups``, re-rendering its report."""
    done = len(store.done_games(tournament_id))
    groups = args.max_groups
    progress = Progress(groups * plan.table_size if groups else None, done)
    reports = None if folder is None else Rerender(
        store, folder, games=args.report_every, minutes=args.report_minutes,
        say=progress.write)
    printer = Printer(store, tournament_id, args.standings_every, progress.write)
    started = time.monotonic()
    print(f"arena: ladder {tournament_id}: {plan.game}, tables of {plan.table_size}, "
          f"{done} games stored so far", file=sys.stderr)

    def on_game(result: GameResult) -> None:
        progress(result)
        printer.count()
        if reports is not None:
            reports.count()

    async def work() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_view_builder, store.url, tournament_id)
            nursery.start_soon(printer.keep_fresh)
            if reports is not None:
                nursery.start_soon(reports.keep_fresh)
            await run_ladder(plan, store, tournament_id, entrants, parallel=run.parallel,
                             max_groups=groups, on_game=on_game, sandbox=sandbox,
                             client=run.client, on_wait=progress.write)
            nursery.cancel_scope.cancel()

    stopped = play_until_stopped(store, tournament_id, sandbox, progress, work)
    if stopped is not None:
        with second_signal_exits():
            stopped_standings(store, tournament_id)
            if reports is not None:
                reports.render()
            again = f" --max-groups {groups}" if groups else ""
            print(f"arena: interrupted; {len(store.done_games(tournament_id))} games stored; "
                  f"resume with 'arena ladder --resume {tournament_id} "
                  f"--db {mask_passwords(store.url)}{again}'", file=sys.stderr)
        return EXIT_INTERRUPTED
    if reports is not None:
        reports.render()
    store.set_status(tournament_id, "finished")
    for line in revealed_deals(store, tournament_id):
        print(line, file=sys.stderr)
    final_standings(store, tournament_id)
    return report_tournament(store, plan, tournament_id, progress.played,
                              time.monotonic() - started)
