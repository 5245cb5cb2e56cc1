"""Running a tournament's plan on trio: its streams, here or on Dask workers.

A :class:`~arena.runner.plan.Plan` holds a tournament's configuration; its format
(:mod:`arena.formats.schedule`: round robin, gauntlet, match) chooses the tables, and
every table plays ``games_per_table`` games in groups of ``table_size``: one
deal seed, played once per cyclic seat rotation (duplicate deals), so every
bot sits every seat equally often on the same cards.  Every table has its own
deal seeds (:meth:`Plan.deal_seeds`) unless the plan asks for the same deals at
every table.  The tables are stored with the tournament and a resumed
one reads them back (:meth:`Plan.from_stored`).  One stream is played by
:func:`arena.runner.stream.play_stream`.

Each seat rotation of a table is a :class:`Stream`: the games of that rotation,
one per deal in deal order, played on the stream's own bot processes, each bot
keeping one seat.  So no bot process ever plays two games of one deal (it
could remember its old hand, now an opponent's).  Streams run concurrently
(``parallel`` at a time).  Each finished game is committed as it finishes (on
a worker thread, so the event loop never waits on disk; while another process
holds the database's lock it waits and retries), which makes a tournament safe
to interrupt and resume: :func:`run_tournament` skips every game already stored.

A match (:func:`run_match`) plays its two rotations in lanes of pairs and stops
starting new deals once its sequential test (:class:`SequentialTest`) decides.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import trio

from arena.formats.deals import DealSeeds
from arena.formats.schedule import Match, Stream
from arena.runner.claims import RETRY_SECONDS, Claims
from arena.runner.cluster import run_units, units
from arena.runner.plan import Plan
from arena.runner.sandbox import Sandbox
from arena.runner.stream import OnEntrants, play_stream
from arena.stats.match_stats import SequentialTest, points_by_places
from arena.store.database import Store, StoredGame
from arena.store.engine import DatabaseLocked
from arena.store.records import GameResult

if TYPE_CHECKING:
    from distributed import Client

#: Seconds between attempts to save a game while the database is locked.
LOCK_RETRY_SECONDS = 1.0


OnGame = Callable[[GameResult], None]


async def run_tournament(plan: Plan, store: Store, tournament_id: int, *, parallel: int,
                         on_game: OnGame | None = None, sandbox: Sandbox | None = None,
                         client: Client | None = None,
                         retry_seconds: float = RETRY_SECONDS) -> None:
    """Play every game of ``plan`` not yet stored under ``tournament_id``.

    ``parallel`` streams (see :class:`Stream`) run at once in this process, or,
    given a Dask ``client`` (:func:`arena.runner.cluster.open_client`), as units on its
    workers while this process stores what they bring back.  In this process,
    arenas sharing the tournament split its streams (:mod:`arena.runner.claims`;
    ``retry_seconds``: how often to look again at streams another arena holds).
    Cancellation (e.g. Ctrl-C) stops every stream: bots are killed, games in
    flight are dropped, every finished game is already committed.
    """
    done = store.done_games(tournament_id)
    todo: list[tuple[Stream, Sequence[int]]] = [
        (stream, [g for g in stream.games if (stream.table, g) not in done])
        for stream in plan.streams()]
    todo = [(stream, games) for stream, games in todo if games]
    seeds = plan.deal_seeds()
    store_game = game_saver(plan, store, tournament_id, on_game)
    if client is not None:

        await run_units(client, plan, units(todo), seeds, store.private_paths(),
                        lambda unit, number, result: store_game(unit.stream.table, number,
                                                                result))
        return
    sandbox = sandbox or plan.resolve_sandbox(store.private_paths())
    claims = Claims(store, tournament_id, retry_seconds=retry_seconds)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(claims.keep_renewed)
        while held := await play_streams(plan, todo, seeds, sandbox, parallel, store_game,
                                         claims=claims):
            await trio.sleep(claims.retry_seconds)
            todo = held
        nursery.cancel_scope.cancel()


async def play_streams(plan: Plan, todo: Sequence[tuple[Stream, Sequence[int]]],
                       seeds: DealSeeds, sandbox: Sandbox, parallel: int,
                       on_result: Callable[[int, int, GameResult], Awaitable[None]],
                       on_entrants: OnEntrants | None = None, claims: Claims | None = None
                       ) -> list[tuple[Stream, Sequence[int]]]:
    """Play each stream's games (see :func:`play_stream`), ``parallel`` games at
    once in this process: ``await on_result(table, game_number, result)``.  One
    stream more than that starts its bots ahead, while the others play, so
    that a stream's start-up costs no table any time.

    With ``claims`` (arenas sharing a stored tournament, :mod:`arena.runner.claims`),
    each stream is claimed when its turn comes and only its games not stored by
    then are played; the streams other arenas held are returned."""
    streams = trio.CapacityLimiter(max(1, parallel) + 1)
    slots = trio.CapacityLimiter(max(1, parallel))
    held: list[tuple[Stream, Sequence[int]]] = []

    async def run_stream(stream: Stream, games: Sequence[int]) -> None:
        async with streams:
            if claims is not None:
                left = await claims.take(stream, games)
                if left is None:
                    held.append((stream, games))
                    return
                games = left
            try:
                if games:
                    await play_stream(plan, stream, games, seeds, sandbox,
                                      functools.partial(on_result, stream.table),
                                      slots=slots, on_entrants=on_entrants, early=True)
            finally:
                if claims is not None:
                    await claims.release(stream)

    async with trio.open_nursery() as nursery:
        for stream, games in todo:
            nursery.start_soon(run_stream, stream, games)
    return held


def game_saver(plan: Plan, store: Store, tournament_id: int, on_game: OnGame | None
                ) -> Callable[[int, int, GameResult], Awaitable[None]]:
    """``await save(table, game_number, result)``: commit one finished game (on a
    worker thread, one writer at a time, waiting while the database is locked),
    then tell ``on_game``."""
    options = plan.make_game().options
    writer = trio.CapacityLimiter(1)

    async def save(table: int, game_number: int, result: GameResult) -> None:
        await _save(store, functools.partial(store.save_game, tournament_id, table,
                                             game_number, options, result, wait=False),
                    writer)
        if on_game is not None:
            on_game(result)

    return save


def first_bot_points(plan: Plan, seats: Sequence[str], places: Sequence[int],
                     no_result: bool) -> float | None:
    """The points of a match's first bot in one game (1 a win, 1/2 a draw, 0 a
    loss, by places after forfeits), or None for a game without result."""
    if no_result:
        return None
    return points_by_places(places[seats.index(plan.bots[0].name)],
                            places[seats.index(plan.bots[1].name)])


def match_test(plan: Plan, games: Iterable[StoredGame], max_pairs: int | None = None
               ) -> SequentialTest:
    """The sequential test of a match, fed with its stored games."""
    assert isinstance(plan.format, Match)
    k = plan.table_size
    test = SequentialTest(plan.format.sprt, max_pairs or plan.games_per_table // k)
    for game in games:
        test.record(game.number // k, game.number % k,
                    first_bot_points(plan, game.seats, game.places, game.no_result))
    return test


async def run_match(plan: Plan, store: Store, tournament_id: int, test: SequentialTest, *,
                    parallel: int, on_game: OnGame | None = None,
                    sandbox: Sandbox | None = None) -> None:
    """Play a match's pairs until ``test`` decides (or every pair is played).

    ``parallel`` games play at once, spread over ceil(parallel / 2) lanes: each
    lane is the match's two seat rotations, each on its own bot processes,
    playing the lane's deals (every lane-th one) in order.  A deal starts only
    within ``lanes`` deals of the first pair the test still waits for, so each
    lane has one pair in flight and pairs finish about in deal order.  Once the
    test has decided no new deal starts; a deal already started (here or before
    an interruption) is played in both rotations, so no half pair is left.
    Cancellation stops every lane as in :func:`run_tournament`.
    """
    sandbox = sandbox or plan.resolve_sandbox(store.private_paths())
    done = store.done_games(tournament_id)
    k = plan.table_size
    lanes = -(-parallel // k)
    started = {number // k for _, number in done}
    changed = trio.Event()
    seeds = plan.deal_seeds()
    save = game_saver(plan, store, tournament_id, on_game)
    slots = trio.CapacityLimiter(max(1, parallel))

    async def may_start(number: int) -> bool:
        while number // k not in started:
            if test.decided:
                return False
            if number // k < test.next_deal + lanes:
                started.add(number // k)
                return True
            await changed.wait()
        return True

    async def keep(number: int, result: GameResult) -> None:
        nonlocal changed
        await save(0, number, result)
        test.record(number // k, number % k,
                    first_bot_points(plan, result.bots, result.places, result.no_result))
        changed.set()
        changed = trio.Event()

    async with trio.open_nursery() as nursery:
        for stream in plan.streams(lanes):
            # Deals started before an interruption first: a stream waiting for a
            # free lane must never hold up the other half of a pair in flight.
            todo = sorted((g for g in stream.games if (stream.table, g) not in done),
                          key=lambda g: (g // k not in started, g))
            if todo:
                nursery.start_soon(functools.partial(
                    play_stream, plan, stream, todo, seeds, sandbox, keep,
                    may_start=may_start, slots=slots))


async def _save(store: Store, save: Callable[[], object], writer: trio.CapacityLimiter) -> None:
    """Run ``save`` on a worker thread; while the database is locked, wait and retry.

    Each attempt blocks its thread for at most the store's busy timeout and the
    waits in between are trio sleeps, so a Ctrl-C while waiting is prompt.
    """
    while True:
        try:
            await trio.to_thread.run_sync(save, limiter=writer)
            return
        except DatabaseLocked:
            store.notice_locked()
        await trio.sleep(LOCK_RETRY_SECONDS)

