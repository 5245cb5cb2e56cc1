"""One stream on trio: the games of one seat rotation of one block of a table's deals,
in deal order, on the stream's own bot processes (each bot keeps one seat, so no
process plays two games of one deal).  Every process has ended when
:func:`play_stream` returns, so the next stream of its chain (the same deals in
another rotation or at another table) never overlaps it.  The same unit of work
in the arena's own process and on Dask workers (:mod:`arena.runner.cluster`)."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import TypeVar

import trio

from arena.formats.deals import DealSeeds
from arena.formats.schedule import Stream
from arena.runner.plan import Plan
from arena.runner.referee import Entrant, end_all, match_start_message, play_game, start_early
from arena.runner.sandbox import Sandbox
from arena.store.records import GameResult

#: Receives each finished game of a stream: ``await on_result(game_number, result)``.
OnResult = Callable[[int, GameResult], Awaitable[None]]

#: Receives a stream's entrants (in seat order) once they exist, to read what
#: they saw of their bots' processes (:attr:`arena.runner.referee.Entrant.runs`) later.
OnEntrants = Callable[[Stream, Sequence[Entrant]], None]


async def play_stream(plan: Plan, stream: Stream, games: Sequence[int], seeds: DealSeeds,
                      sandbox: Sandbox, on_result: OnResult, *,
                      may_start: Callable[[int], Awaitable[bool]] | None = None,
                      slots: trio.CapacityLimiter | None = None,
                      on_entrants: OnEntrants | None = None, early: bool = False) -> None:
    """Play ``games`` (game numbers of ``stream``, in order) on the stream's own
    bot processes, one bot per seat, on the deals ``seeds`` gives (by the stream's
table and the game's deal), handing each result to ``on_result``.

    Before each game, ``may_start(game_number)`` (if given) may end the stream
    early; each game holds one of ``slots`` (if given) while it plays;
    ``on_entrants`` (if given) is shown the stream's entrants.  The bots
    are started for these games (with ``early``, at once, before the first
    game's slot: :func:`arena.runner.referee.start_early`) and killed when they end;
    on cancellation they are killed at once and the game in flight is dropped.
    """
    freeze_long_lived_objects()
    game = plan.make_game()
    match_start = match_start_message(game, len(games))
    async with trio.open_nursery() as nursery:
        entrants = [Entrant(plan.bots[i], plan.control, match_start, nursery, sandbox)
                    for i in stream.seating]
        if on_entrants is not None:
            on_entrants(stream, entrants)
        finished = False
        try:
            if early:
                await start_early(entrants)
            for game_number in games:
                if may_start is not None and not await may_start(game_number):
                    break
                async with slots or contextlib.nullcontext():
                    seed = seeds.seed(stream.table, plan.deal(game_number))
                    result = await play_game(game, seed, entrants, game_number, plan.control)
                await on_result(game_number, result)
            finished = True
        finally:
            with trio.CancelScope(shield=True):
                await end_all(entrants, finished)
            nursery.cancel_scope.cancel()

T = TypeVar("T")


async def in_order(items: Iterable[T] | AsyncIterator[T], run: Callable[[T], Awaitable[None]],
                   at_once: int) -> None:
    """``await run(item)`` for each item (chains, a ladder's groups), ``at_once``
    at a time, started in the order given (so tables and a match's deals make
    progress in order); an async iterator is asked for its next item only
    once a place is free.  Cancellation cancels every run."""
    running = trio.Semaphore(at_once)
    upcoming = items if isinstance(items, AsyncIterator) else _aiter(items)

    async def run_one(item: T) -> None:
        try:
            await run(item)
        finally:
            running.release()

    async with trio.open_nursery() as nursery:
        while True:
            await running.acquire()
            try:
                item = await anext(upcoming)
            except StopAsyncIteration:
                break
            nursery.start_soon(run_one, item)


async def _aiter(items: Iterable[T]) -> AsyncIterator[T]:
    for item in items:
        yield item


_frozen: list[bool] = []


def freeze_long_lived_objects() -> None:
    """Once per process, before its first table: leave every object alive now
    (modules, classes, the plan, the database's metadata) out of the garbage
    collector's scans.  Tables allocate many short-lived containers, so
    collections are frequent, and scanning these long-lived objects at each
    one took about 7% of the table runner's CPU (bench/throughput.py)."""
    if not _frozen:
        _frozen.append(True)
        gc.freeze()
