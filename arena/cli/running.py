"""Running a stored tournament, match or ladder from the command line: until it
ends or a signal stops it, its status kept in the database, the resume hint and
the closing lines."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Any, NoReturn

import trio

from arena.cli.bots import check_spec
from arena.cli.common import (
    EXIT_FAULT,
    EXIT_INTERRUPTED,
    Execution,
    UserError,
    announce,
    check_resume_flags,
    check_seed,
    is_interrupt,
    mask_passwords,
    open_store,
    resolve_sandbox,
)
from arena.cli.standings import Printer
from arena.cli.standings import final as final_standings
from arena.formats.deals import commitment
from arena.formats.schedule import Gauntlet, Match
from arena.formats.tables import ConfigError, balance
from arena.runner.plan import Plan, new_secret
from arena.runner.progress import Progress, write_above_bars
from arena.runner.sandbox import Sandbox, remove_own_scratch
from arena.runner.tournament import run_match, run_tournament
from arena.runner.views import run_view_builder
from arena.stats.match_stats import SequentialTest
from arena.store.database import Store, StoredGame
from arena.store.engine import StorageError
from arena.store.records import GameResult

#: The signals that stop a run (a tournament, a match, a ladder) as Ctrl-C does.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


async def until_signal(work: Callable[[], Awaitable[None]],
                       signals: Sequence[int] = (signal.SIGTERM, signal.SIGHUP)) -> int | None:
    """Run ``work()`` (a tournament, a match, a ladder, the server); the first of
    ``signals`` stops it as Ctrl-C would, a second one exits at once
    (:func:`exit_at_once`).  Returns the signal number that stopped it, or None."""
    stopped: int | None = None
    playing = trio.CancelScope()
    async with trio.open_nursery() as nursery:
        async def watch() -> None:
            nonlocal stopped
            with trio.open_signal_receiver(*signals) as received:
                async for signum in received:
                    if stopped is not None:
                        exit_at_once()
                    stopped = signum
                    playing.cancel()
                    write_above_bars("arena: stopping: every bot is ended and every finished "
                                     "game kept (again to exit at once)")

        nursery.start_soon(watch)
        with playing:
            await work()
        nursery.cancel_scope.cancel()
    return stopped

def exit_at_once(*_: object) -> NoReturn:
    """The second Ctrl-C or SIGTERM: exit now, as ``kill -9`` would (the bots and the
    local workers die with the arena; every stored game was committed whole)."""
    os.write(2, b"arena: interrupted again: exiting at once\n")
    remove_own_scratch()  # the bots die with the arena (pdeathsig); their folders go too
    os._exit(EXIT_INTERRUPTED)

@contextlib.contextmanager
def second_signal_exits() -> Iterator[None]:
    """While the closing lines of a stopped run are computed: another Ctrl-C or
    SIGTERM exits at once."""
    previous = {signum: signal.signal(signum, exit_at_once) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

def play_until_stopped(store: Store, tournament_id: int, sandbox: Sandbox,
                        progress: Progress, work: Callable[[], Awaitable[None]]) -> int | None:
    """Run ``work()`` on trio for a stored tournament, its status kept up to date;
    the signal that stopped it (Ctrl-C, SIGTERM, SIGHUP), or None once it ends."""
    try:
        store.set_status(tournament_id, "running")
        store.set_protections(tournament_id, sandbox.describe())
        stopped = trio.run(until_signal, work, STOP_SIGNALS)
    except BaseException as exc:
        if not is_interrupt(exc):
            progress.close()
            mark_failed(store, tournament_id)
            raise storage_error(exc) from None
        stopped = signal.SIGINT
    progress.close()
    if stopped is not None:
        # One bounded attempt: a Ctrl-C must not wait for another process's lock.
        with contextlib.suppress(StorageError):
            store.set_status(tournament_id, "interrupted", wait=False)
    return stopped

def stopped_standings(store: Store, tournament_id: int) -> None:
    """The standings (a match's with its test) of a run stopped by a signal, on
    stderr, as cutechess prints them on Ctrl-C; a line instead if they cannot be
    computed (nothing stored yet, the database gone)."""
    if not store.done_games(tournament_id):
        print("arena: no game finished yet: no standings", file=sys.stderr)
        return
    try:
        final_standings(store, tournament_id)
    except (StorageError, UserError) as exc:
        print(f"arena: no standings: {exc}", file=sys.stderr)

def run_plan(store: Store, plan: Plan, tournament_id: int, run: Execution,
              sandbox: Sandbox, test: SequentialTest | None = None, *,
              every: int | None = None) -> int:
    """Play a stored tournament or match to its end (or a signal), printing its
    standings every ``every`` games (:class:`arena.cli.standings.Printer`) and at
    the end; its exit status."""
    done = len(store.done_games(tournament_id))
    # A match ends when its test decides: its most games (--max-pairs) are no total.
    progress = Progress(plan.total_games if test is None else None, done)
    printer = Printer(store, tournament_id, every, progress.write)
    started = time.monotonic()

    def on_game(result: GameResult) -> None:
        progress(result)
        printer.count()

    async def play() -> None:
        if test is None:
            await run_tournament(plan, store, tournament_id, parallel=run.parallel,
                                 on_game=on_game, sandbox=sandbox, client=run.client)
        else:
            await run_match(plan, store, tournament_id, test, parallel=run.parallel,
                            on_game=on_game, sandbox=sandbox)

    async def work() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_view_builder, store.url, tournament_id)
            nursery.start_soon(printer.keep_fresh)
            await play()
            nursery.cancel_scope.cancel()

    if play_until_stopped(store, tournament_id, sandbox, progress, work) is not None:
        with second_signal_exits():
            stopped_standings(store, tournament_id)
            stored = len(store.done_games(tournament_id))
            command = "match" if isinstance(plan.format, Match) else "tournament"
            print(f"arena: interrupted; {stored}/{plan.total_games} games stored; resume "
                  f"with 'arena {command} --resume {tournament_id} "
                  f"--db {mask_passwords(store.url)}'", file=sys.stderr)
        return EXIT_INTERRUPTED
    store.set_status(tournament_id, "finished")
    for line in revealed_deals(store, tournament_id):
        print(line, file=sys.stderr)
    final_standings(store, tournament_id, match=test is None)
    return report_tournament(store, plan, tournament_id, progress.played,
                              time.monotonic() - started)

def deal_fields(seed: int | None) -> dict[str, Any]:
    """A new plan's deal fields: the known ``--seed``, or (none given) a fresh secret."""
    check_seed(seed)
    return {"seed": seed} if seed is not None else {"seed": None, "secret": new_secret()}


def announce_plan(sandbox: Sandbox, plan: Plan) -> None:
    """Say, as a run starts, what protects the players and where its deals come from."""
    announce(sandbox)
    print(describe_deals(plan), file=sys.stderr)


def describe_deals(plan: Plan) -> str:
    """One line saying where the deals come from: the commitment to a secret, or
    known deals (and the same deals at every table, if so)."""
    same = (", the same deals at every table (--same-deals: UNSAFE with untrusted bots)"
            if plan.same_deals or plan.legacy_deals else "")
    if plan.secret is None:
        return (f"arena: deals: KNOWN deals (--seed {plan.seed}): anyone can compute them; "
                f"for reproducible research, not for untrusted bots{same}")
    return (f"arena: deals: secret, committed to sha256 {commitment(plan.secret)} (the secret "
            f"is revealed when it is finished: docs/formats.md#secret-deals){same}")

def revealed_deals(store: Store, tournament_id: int) -> list[str]:
    """The closing lines naming a finished tournament's revealed secrets."""
    stored = store.tournament(tournament_id) or {}
    return [f"arena: deals revealed: secret {deals['secret']} (from table "
            f"{deals['first_table']}; its sha256 is the commitment {deals['commitment']})"
            for deals in stored.get("deals", ()) if deals["secret"] is not None]

def mark_failed(store: Store, tournament_id: int) -> None:
    """After an unexpected error: never leave the tournament "running"."""
    with contextlib.suppress(Exception):
        store.set_status(tournament_id, "failed", wait=False)

def storage_error(exc: BaseException) -> BaseException:
    """A StorageError (or a ladder's ConfigError: an entrant renamed mid-run) that
    trio wrapped in exception groups, unwrapped so that it is reported in one line;
    any other exception as it is."""
    leaves = [exc]
    while len(leaves) == 1 and isinstance(leaves[0], BaseExceptionGroup):
        leaves = list(leaves[0].exceptions)
    one_line = len(leaves) == 1 and isinstance(leaves[0], StorageError | ConfigError)
    return leaves[0] if one_line else exc

def report_tournament(store: Store, plan: Plan, tournament_id: int, played: int,
                       elapsed: float) -> int:
    """The closing lines of ``arena tournament`` (``played``: the games this arena
    played, not the ones other arenas sharing the tournament did); its exit
    status (3 if a bot faulted)."""
    games = list(store.games(tournament_id))
    faults = sum(len(game.faults) for game in games)
    no_result = sum(game.no_result for game in games)
    without = f" ({no_result} without result: every seat faulted)" if no_result else ""
    print(f"{plan.format.kind} {tournament_id}: {len(games)} games "
          f"({played} played in {elapsed:.1f}s), {faults} faults{without}, "
          f"stored in {mask_passwords(store.url)}", file=sys.stderr)
    for line in fault_summary(games):
        print(line, file=sys.stderr)
    return EXIT_FAULT if faults else 0

def fault_summary(games: Iterable[StoredGame]) -> list[str]:
    """One line per bot that faulted in ``games``: how often, of which kind, and
    the last line of stderr its faults left."""
    kinds: dict[str, Counter[str]] = {}
    last: dict[str, str] = {}
    for game in games:
        for fault in game.faults:
            kinds.setdefault(fault["bot"], Counter())[fault["kind"]] += 1
            lines = [line for line in fault["stderr_tail"].splitlines() if line.strip()]
            if lines:
                last[fault["bot"]] = lines[-1].strip()[:200]
    summary = []
    for bot, counts in sorted(kinds.items()):
        tally = ", ".join(f"{kind} x{count}" for kind, count in counts.most_common())
        tail = f"last stderr line: {last[bot]!r}" if bot in last else "no stderr"
        summary.append(f"arena: bot {bot!r} faulted: {tally}; {tail}")
    return summary

def resume_plan(args: argparse.Namespace, command: str) -> tuple[Store, Plan, Sandbox]:
    """The stored tournament ``--resume ID`` names, if ``arena COMMAND`` plays its
    kind: its store, its plan with the stored tables, and its sandbox."""
    store = open_store(args.db)
    stored = store.tournament(args.resume)
    if stored is None or stored["kind"] not in RESUMED_BY:
        raise UserError(f"no tournament {args.resume} in {args.db}")
    if RESUMED_BY[stored["kind"]] != command:
        raise UserError(f"tournament {args.resume} is a {stored['kind']}: resume it with "
                        f"'arena {RESUMED_BY[stored['kind']]} --resume {args.resume}'")
    check_resume_flags(args)
    if stored["status"] == "finished" and command != "ladder":  # a ladder may go on
        raise UserError(f"{stored['kind']} {args.resume} is finished: nothing to resume "
                        f"(its standings: 'arena standings -t {args.resume} --db "
                        f"{mask_passwords(args.db)}')")
    try:
        plan = Plan.from_stored(stored, store.deal_secret(args.resume))
    except ConfigError as exc:
        raise UserError(f"tournament {args.resume} cannot be resumed: {exc}") from None
    plan.validate(seated_later=command == "ladder")
    for bot in plan.bots:
        check_spec(bot)
    sandbox = resolve_sandbox(plan.sandbox, plan.limits, plan.pass_env, args.db)
    return store, plan, sandbox

#: Which command resumes a stored tournament of each kind.
RESUMED_BY = {"tournament": "tournament", "gauntlet": "tournament", "match": "match",
              "ladder": "ladder"}

def describe_schedule(plan: Plan) -> str:
    """One line saying which tables a tournament plays and how even they are."""
    tables = plan.tables()
    if isinstance(plan.format, Gauntlet):
        return (f"arena: gauntlet: {len(plan.format.challengers)} challenger(s) at "
                f"{len(tables)} tables of {plan.table_size}")
    possible = math.comb(len(plan.bots), plan.table_size)
    if len(tables) == possible:
        return f"arena: round robin: every combination, {len(tables)} tables"
    spread = balance(tables, len(plan.bots))
    return (f"arena: round robin: {len(tables)} of {possible} tables, balanced: tables per "
            f"bot within {spread.tables_per_bot}, meetings per pair within "
            f"{spread.tables_per_pair}")
