"""``arena tournament`` (round robin, gauntlet) and ``arena match`` (an SPRT
head-to-head)."""

from __future__ import annotations

import argparse
import os
import sys

from arena.cli.bots import choose_bots, existing_store
from arena.cli.common import (
    EXIT_INTERRUPTED,
    Execution,
    Subparsers,
    UserError,
    add_entrant_flags,
    add_run_flags,
    add_sandbox_flags,
    add_time_flags,
    check_execution,
    check_parallel,
    execution,
    open_store,
    parse_options,
    resolve_sandbox,
    resumable,
    time_control,
)
from arena.cli.running import (
    announce_plan,
    deal_fields,
    describe_schedule,
    resume_plan,
    run_plan,
)
from arena.cli.standings import add_standings_flag, check_every, match_verdict
from arena.formats.schedule import DEFAULT_MAX_TABLES, Gauntlet, Match, RoundRobin
from arena.games import make_game
from arena.games.base import GameError
from arena.runner.plan import MAX_GAMES_PER_TABLE, Plan, create_tournament
from arena.runner.sandbox import Limits, Sandbox
from arena.runner.tournament import match_test
from arena.stats.match_stats import SPRT_MODELS, Sprt
from arena.store.database import DEFAULT_URL, Store

#: Default of ``arena match --max-pairs``.
DEFAULT_MAX_PAIRS = 5000


def add_tournament(sub: Subparsers) -> None:
    """``arena tournament``."""
    t = sub.add_parser("tournament", help="run (or resume) a round robin or a gauntlet",
                       description="Every table of -k bots plays -n games: each deal "
                                   "once per seat rotation, each table its own secret deals "
                                   "(see --seed, --same-deals). A round "
                                   "robin plays every combination of the bots while there "
                                   "are at most --max-tables, else a balanced choice; with "
                                   "--challenger, a gauntlet: every table seats one "
                                   "challenger and k-1 other bots. See docs/formats.md.")
    add_entrant_flags(t, "game name (see 'arena rules')", "an entrant, repeatable")
    t.add_argument("--table-size", "-k", type=int, default=2, help="players per table (default 2)")
    t.add_argument("--games", "-n", type=int, default=None,
                   help="games per table, a multiple of the table size (default 2 x table size)")
    t.add_argument("--max-tables", type=int, default=DEFAULT_MAX_TABLES, metavar="N",
                   help=f"most tables: every combination of the bots while there are at most "
                        f"N, else N or a few fewer, balanced so every bot plays equally often "
                        f"and every pair meets equally often, within one (default "
                        f"{DEFAULT_MAX_TABLES}; per gauntlet, shared by the challengers)")
    t.add_argument("--challenger", action="append", default=[], metavar="NAME",
                   help="a gauntlet: every table seats one challenger (a bot's name, "
                        "repeatable) and k-1 bots of the rest, the field; challengers never "
                        "meet")
    t.add_argument("--seed", type=int, default=None,
                   help="KNOWN deals: the seed of the deal seeds and the balanced schedule, "
                        "for reproducible research (default: secret deals from a fresh "
                        "secret, revealed when the tournament is finished)")
    t.add_argument("--same-deals", action="store_true",
                   help="the same deals at every table (default: each table its own). "
                        "UNSAFE with untrusted bots: copies of one bot at two tables hold "
                        "the same cards at once and can tell each other")
    t.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    t.add_argument("--resume", type=int, metavar="ID",
                   help="resume tournament ID from the database: its stored tables and "
                        "settings (other flags but --db, --parallel, --workers, --cluster "
                        "are refused)")
    add_run_flags(t)
    add_standings_flag(t)
    resumable(t, "db", "parallel", "workers", "cluster", "standings_every")
    t.set_defaults(run=cmd_tournament)


def add_match(sub: Subparsers) -> None:
    """``arena match``."""
    m = sub.add_parser("match", help="two bots in pairs of games until an SPRT decides",
                       description="Two bots play pairs of games (one deal, seats swapped) "
                                   "until a sequential probability ratio test accepts H0 "
                                   "(elo <= elo0) or H1 (elo >= elo1), or --max-pairs pairs "
                                   "are played. See docs/formats.md.")
    add_entrant_flags(m, "game name (see 'arena rules'), for two players",
                       "one of the two bots (give -b twice); Elo is the first one's")
    defaults = Sprt()
    m.add_argument("--elo0", type=float, default=defaults.elo0,
                   help=f"H0: the first bot is at most this much better (default "
                        f"{defaults.elo0:g}; normalized Elo with the default model)")
    m.add_argument("--elo1", type=float, default=defaults.elo1,
                   help=f"H1: the first bot is at least this much better (default "
                        f"{defaults.elo1:g})")
    m.add_argument("--alpha", type=float, default=defaults.alpha,
                   help=f"chance of accepting H1 when H0 holds (default {defaults.alpha:g})")
    m.add_argument("--beta", type=float, default=defaults.beta,
                   help=f"chance of accepting H0 when H1 holds (default {defaults.beta:g})")
    m.add_argument("--sprt-model", default=defaults.model, choices=SPRT_MODELS,
                   help="normalized (default): fastchess's generalized SPRT on pairs, "
                        "bounds in normalized Elo; logistic: the same in logistic Elo; "
                        "bayesian: cutechess's SPRT game by game (BayesElo draw model)")
    m.add_argument("--max-pairs", type=int, default=DEFAULT_MAX_PAIRS, metavar="N",
                   help=f"stop after N pairs without a verdict (default {DEFAULT_MAX_PAIRS})")
    m.add_argument("--seed", type=int, default=None,
                   help="KNOWN deals: the seed of the deal seeds, for reproducible research "
                        "(default: secret deals, revealed when the match is finished)")
    m.add_argument("--parallel", "-j", type=int, default=os.cpu_count() or 1,
                   help="games played at once, in this process (default: CPU count)")
    m.add_argument("--db", default=DEFAULT_URL, help=f"database URL (default {DEFAULT_URL})")
    m.add_argument("--resume", type=int, metavar="ID",
                   help="resume match ID: the test is recomputed from its stored games "
                        "(other flags but --db and --parallel are refused)")
    add_time_flags(m)
    add_sandbox_flags(m)
    add_standings_flag(m)
    resumable(m, "db", "parallel", "standings_every")
    m.set_defaults(run=cmd_match)


def cmd_tournament(args: argparse.Namespace) -> int:
    check_every(args.standings_every)
    check_execution(args)
    if args.resume is not None:
        store, plan, sandbox = resume_plan(args, "tournament")
        announce_plan(sandbox, plan)
        with execution(args) as run:
            return run_plan(store, plan, args.resume, run, sandbox,
                            every=args.standings_every)
    if not args.game:
        raise UserError("--game is required (see 'arena rules')")
    known = existing_store(args.db)
    entrants = choose_bots(args.bot, known)
    entrants.check_game(args.game)
    bots = tuple(entrants.specs)
    games = args.games if args.games is not None else 2 * args.table_size
    form = (Gauntlet(tuple(map(entrants.label, args.challenger)), args.max_tables)
            if args.challenger else RoundRobin(args.max_tables))
    plan = Plan(game=args.game, bots=bots, table_size=args.table_size, games_per_table=games,
                options=parse_options(args.option), control=time_control(args),
                sandbox=args.sandbox, limits=Limits.parse(args.limit),
                pass_env=tuple(args.pass_env), format=form, same_deals=args.same_deals,
                **deal_fields(args.seed))
    plan.validate()
    sandbox = resolve_sandbox(plan.sandbox, plan.limits, plan.pass_env, args.db)
    store = known or open_store(args.db, create=True)
    entrants.register(store)
    announce_plan(sandbox, plan)
    print(describe_schedule(plan), file=sys.stderr)
    with execution(args) as run:
        return run_plan(store, plan, create_tournament(store, plan), run, sandbox,
                        every=args.standings_every)

def cmd_match(args: argparse.Namespace) -> int:
    check_every(args.standings_every)
    check_parallel(args.parallel)
    run = Execution(args.parallel)
    if args.resume is not None:
        store, plan, sandbox = resume_plan(args, "match")
        announce_plan(sandbox, plan)
        test = match_test(plan, store.games(args.resume))
    else:
        store, plan, sandbox = new_match(args)
        tid = create_tournament(store, plan)
        test = match_test(plan, ())
    tid = args.resume if args.resume is not None else tid
    status = run_plan(store, plan, tid, run, sandbox, test, every=args.standings_every)
    if status != EXIT_INTERRUPTED:
        played = len(store.done_games(tid)) // 2
        for line in match_verdict(plan, tid, test, played):
            print(line)
    return status

def new_match(args: argparse.Namespace) -> tuple[Store, Plan, Sandbox]:
    """A new match's store, plan and sandbox from the command line (UserError,
    ConfigError or GameError before anything is stored)."""
    if not args.game:
        raise UserError("--game is required (see 'arena rules')")
    known = existing_store(args.db)
    entrants = choose_bots(args.bot, known)
    entrants.check_game(args.game)
    bots = tuple(entrants.specs)
    if len(bots) != 2:
        raise UserError(f"a match needs exactly two bots (-b A=COMMAND -b B=COMMAND), "
                        f"not {len(bots)}")
    if not 1 <= args.max_pairs <= MAX_GAMES_PER_TABLE // 2:
        raise UserError(f"--max-pairs must be from 1 to {MAX_GAMES_PER_TABLE // 2}, "
                        f"not {args.max_pairs}")
    options = parse_options(args.option)
    try:
        make_game(args.game, 2, options)
    except GameError as exc:
        raise UserError(f"a match is for two players: {exc}") from None
    sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta, args.sprt_model)
    plan = Plan(game=args.game, bots=bots, table_size=2, games_per_table=2 * args.max_pairs,
                options=options, **deal_fields(args.seed), control=time_control(args),
                sandbox=args.sandbox, limits=Limits.parse(args.limit),
                pass_env=tuple(args.pass_env), format=Match(sprt))
    plan.validate()
    sandbox = resolve_sandbox(plan.sandbox, plan.limits, plan.pass_env, args.db)
    store = known or open_store(args.db, create=True)
    entrants.register(store)
    announce_plan(sandbox, plan)
    return store, plan, sandbox
