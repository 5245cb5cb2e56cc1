"""Running a tournament's plan on trio: its chains of streams, here or on Dask workers.

A :class:`~arena.runner.plan.Plan` holds a tournament's configuration; its format
(:mod:`arena.formats.schedule`: round robin, gauntlet, match) chooses the tables, and
every table plays ``games_per_table`` games in groups of ``table_size``: one
deal seed, played once per cyclic seat rotation (duplicate deals), so every
bot sits every seat equally often on the same cards.  Every table has its own
deal seeds (:meth:`Plan.deal_seeds`) unless the plan asks for the same deals at
every table.  The tables are stored with the tournament and a resumed
one reads them back (:meth:`Plan.from_stored`).  One stream is played by
:func:`arena.runner.stream.play_stream`.

Deal isolation: *two processes that play the same deal in different games
(another seat rotation, another table) are never alive at the same time, and
nothing a process can write outlives it* (its private /tmp goes with it).  A
table's deals are split into blocks; one seat rotation of one block is a
:class:`Stream`, played on its own bot processes, each bot keeping one seat
(:func:`arena.runner.stream.play_stream`), and the streams that share a deal form a
:class:`Chain` (:meth:`Plan.chains`), played one stream after another, every
process of one ended before the next one's bots start.  Parallelism comes from
different chains: other tables' blocks (when tables have their own deals) and
other blocks.  Opponents within one game are alive together, as they must be.

``parallel`` games play at once; each finished game is committed as it finishes
(on a worker thread, so the event loop never waits on disk; while another
process holds the database's lock it waits and retries), which makes a
tournament safe to interrupt and resume: :func:`run_tournament` skips every
game already stored.

A match (:func:`run_match`) plays its blocks the same way and stops starting
new deals once its sequential test (:class:`SequentialTest`) decides.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import trio

from arena.formats.deals import DealSeeds
from arena.formats.schedule import Chain, Match
from arena.runner.claims import RETRY_SECONDS, Claims
from arena.runner.cluster import run_chains
from arena.runner.plan import Plan
from arena.runner.sandbox import Sandbox
from arena.runner.stream import OnEntrants, in_order, play_stream
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

    ``parallel`` games (each of its own chain, see :class:`Chain`) play at once
    in this process, or, given a Dask ``client``
    (:func:`arena.runner.cluster.open_client`), the chains' streams play on its
    workers while this process stores what they bring back.  In this process,
    arenas sharing the tournament split its chains (:mod:`arena.runner.claims`;
    ``retry_seconds``: how often to look again at chains another arena holds).
    Cancellation (e.g. Ctrl-C) stops every stream: bots are killed, games in
    flight are dropped, every finished game is already committed.
    """
    todo = remaining(plan.chains(), store.done_games(tournament_id))
    seeds = plan.deal_seeds()
    store_game = game_saver(plan, store, tournament_id, on_game)
    if client is not None:
        await run_chains(client, plan, todo, seeds, store.private_paths(), store_game)
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


def remaining(chains: Sequence[Chain], done: set[tuple[int, int]]) -> list[Chain]:
    """The chains with each stream's games cut to those not in ``done`` ((table,
    game number) pairs); a chain with none left is dropped."""
    todo = [tuple(dataclasses.replace(s, games=tuple(g for g in s.games
                                                     if (s.table, g) not in done))
                  for s in chain) for chain in chains]
    return [chain for chain in todo if any(s.games for s in chain)]


async def play_streams(plan: Plan, chains: Sequence[Chain], seeds: DealSeeds,
                       sandbox: Sandbox, parallel: int,
                       on_result: Callable[[int, int, GameResult], Awaitable[None]],
                       on_entrants: OnEntrants | None = None, claims: Claims | None = None,
                       slots: trio.CapacityLimiter | None = None) -> list[Chain]:
    """Play each chain's streams one after another (each on its own bot
    processes, :func:`play_stream`, all of them ended before the next starts),
    ``parallel`` games at once in this process: ``await on_result(table,
    game_number, result)``.  One chain more than that starts its next stream's
    bots ahead, while the others play, so that start-ups cost no table any
    time; it shares no deal with anything alive, being another chain.

    With ``claims`` (arenas sharing a stored tournament, :mod:`arena.runner.claims`),
    each chain is claimed when its turn comes and only its games not stored by
    then are played; the chains other arenas held are returned.  ``slots``
    (default: ``parallel`` of them) may be shared with other callers."""
    slots = slots or trio.CapacityLimiter(max(1, parallel))
    held: list[Chain] = []

    async def run_chain(chain: Chain) -> None:
        if claims is not None:
            left = await claims.take(chain)
            if left is None:
                held.append(chain)
                return
            chain = left
        try:
            for stream in chain:
                if stream.games:
                    await play_stream(plan, stream, stream.games, seeds, sandbox,
                                      functools.partial(on_result, stream.table),
                                      slots=slots, on_entrants=on_entrants, early=True)
        finally:
            if claims is not None:
                await claims.release(chain)

    await in_order(chains, run_chain, max(1, parallel) + 1)
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

    The match's deals come in blocks of :data:`~arena.formats.schedule.MATCH_BLOCK`;
    each block is a chain: its first seat rotation on its own bot processes,
    then, once they ended, its second rotation on new ones, on exactly the deals
    the first played (so no half pair is left).  ``parallel`` games play at
    once, each of another block (and one block more starts its bots ahead).
    Once the test has decided no new deal starts; a deal already started (here
    or before an interruption) is played in both rotations, deals started
    before an interruption first.  Cancellation stops every block as in
    :func:`run_tournament`.
    """
    sandbox = sandbox or plan.resolve_sandbox(store.private_paths())
    done = store.done_games(tournament_id)
    k = plan.table_size
    started = {number // k for _, number in done}
    seeds = plan.deal_seeds()
    save = game_saver(plan, store, tournament_id, on_game)
    slots = trio.CapacityLimiter(max(1, parallel))

    async def may_start(number: int) -> bool:
        if number // k not in started:
            if test.decided:
                return False
            started.add(number // k)
        return True

    async def keep(number: int, result: GameResult) -> None:
        await save(0, number, result)
        test.record(number // k, number % k,
                    first_bot_points(plan, result.bots, result.places, result.no_result))

    def missing(games: Iterable[int], new: bool) -> list[int]:
        """Games not stored, of deals started (and, if ``new``, not yet started),
        those started first."""
        return sorted((g for g in games if (0, g) not in done
                       and (new or g // k in started)),
                      key=lambda g: (g // k not in started, g))

    async def play_block(chain: Chain) -> None:
        first, *rest = chain
        todo = missing(first.games, new=not test.decided)
        if todo:
            await play_stream(plan, first, todo, seeds, sandbox, keep,
                              may_start=may_start, slots=slots, early=True)
        for stream in rest:
            if todo := missing(stream.games, new=False):
                await play_stream(plan, stream, todo, seeds, sandbox, keep,
                                  slots=slots, early=True)

    # Blocks with deals started before an interruption first: no half pair waits.
    chains = sorted(plan.chains(), key=lambda chain: not any(
        g // k in started for g in chain[0].games))
    await in_order(chains, play_block, max(1, parallel) + 1)


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

