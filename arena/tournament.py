"""Round-robin tournaments: the schedule, and running it on trio.

Every table of ``table_size`` bots from the entrants plays ``games_per_table``
games.  Games come in groups of ``table_size``: one deal seed, played once per
cyclic seat rotation (duplicate deals), so every bot sits every seat equally
often on the same cards.  The same deal seeds are used at every table.

Each seat rotation of a table is a :class:`Stream`: the games of that rotation,
one per deal in deal order, played on the stream's own bot processes, each bot
keeping one seat.  So no bot process ever plays two games of one deal (it
could remember its old hand, now an opponent's).  Streams run concurrently
(``parallel`` at a time).  Each finished game is committed as it finishes (on
a worker thread, so the event loop never waits on disk; while another process
holds the database's lock it waits and retries), which makes a tournament safe
to interrupt and resume: :func:`run_tournament` skips every game already stored.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from arena.client import TimeControl
from arena.games import make_game
from arena.games.base import Game
from arena.process import BotSpec
from arena.records import GameResult
from arena.referee import Entrant, match_start_message, play_game
from arena.sandbox import Limits, Sandbox, resolve
from arena.storage import DatabaseLocked, Store

if TYPE_CHECKING:
    from distributed import Client

#: Seconds between attempts to save a game while the database is locked.
LOCK_RETRY_SECONDS = 1.0


class ConfigError(ValueError):
    """A tournament configuration that cannot be run; the message says why."""


@dataclass(frozen=True)
class Stream:
    """One seat rotation of one table: a match on its own bot processes.

    ``seating`` is the bot index in each seat (fixed for the whole stream),
    ``games`` the table's game numbers it plays, one per deal, in deal order.
    """

    table: int
    rotation: int
    seating: tuple[int, ...]
    games: tuple[int, ...]


@dataclass(frozen=True)
class Plan:
    """A tournament's full configuration; everything else derives from it."""

    game: str
    bots: tuple[BotSpec, ...]
    table_size: int
    games_per_table: int
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 1
    control: TimeControl = field(default_factory=TimeControl)
    #: ``--sandbox`` choice (auto, bwrap, none), resolved on each run.
    sandbox: str = "auto"
    limits: Limits = field(default_factory=Limits)
    pass_env: tuple[str, ...] = ()

    def resolve_sandbox(self, hidden: Sequence[str] = ()) -> Sandbox:
        """The sandbox this run's bots get (SandboxError if it cannot run here)."""
        return resolve(self.sandbox, self.limits, hidden, self.pass_env)

    def make_game(self) -> Game:
        return make_game(self.game, self.table_size, self.options)

    def validate(self) -> None:
        """Raise ConfigError / OptionError if this plan cannot run."""
        names = [b.name for b in self.bots]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(f"bot name {duplicates[0]!r} is used twice")
        if len(self.bots) < self.table_size:
            raise ConfigError(
                f"{len(self.bots)} bots cannot fill a table of {self.table_size}")
        if self.games_per_table < 1 or self.games_per_table % self.table_size:
            raise ConfigError(
                f"games per table ({self.games_per_table}) must be a positive multiple of the "
                f"table size ({self.table_size}) so every bot sits every seat equally often")
        self.make_game()

    def tables(self) -> list[tuple[int, ...]]:
        """Bot indices at each table: every combination of ``table_size`` entrants."""
        return list(itertools.combinations(range(len(self.bots)), self.table_size))

    def deal_seeds(self) -> list[int]:
        rng = random.Random(self.seed)
        return [rng.getrandbits(62) for _ in range(self.games_per_table // self.table_size)]

    def seating(self, table: Sequence[int], game_number: int) -> list[int]:
        """Bot index in each seat for a table's game: a cyclic rotation per game."""
        k = self.table_size
        rotation = game_number % k
        return [table[(seat + rotation) % k] for seat in range(k)]

    def deal(self, game_number: int) -> int:
        """Index (into :meth:`deal_seeds`) of the deal a table's game plays."""
        return game_number // self.table_size

    def streams(self) -> list[Stream]:
        """Every table's seat rotations, table by table."""
        k = self.table_size
        return [Stream(number, rotation, tuple(self.seating(table, rotation)),
                       tuple(range(rotation, self.games_per_table, k)))
                for number, table in enumerate(self.tables()) for rotation in range(k)]

    @property
    def total_games(self) -> int:
        return len(self.tables()) * self.games_per_table

    def to_config(self) -> dict[str, Any]:
        return {"game": self.game, "options": self.options, "table_size": self.table_size,
                "games_per_table": self.games_per_table, "seed": self.seed,
                "bots": [{"name": b.name, "command": b.command} for b in self.bots],
                "time": self.control.to_dict(),
                "sandbox": {"choice": self.sandbox, "limits": asdict(self.limits),
                            "pass_env": list(self.pass_env)}}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Plan:
        time = config.get("time", {})
        sandbox = config.get("sandbox", {})
        return cls(game=config["game"], options=dict(config.get("options", {})),
                   table_size=int(config["table_size"]),
                   games_per_table=int(config["games_per_table"]), seed=int(config["seed"]),
                   bots=tuple(BotSpec(b["name"], b["command"]) for b in config["bots"]),
                   control=TimeControl(**time), sandbox=sandbox.get("choice", "auto"),
                   limits=Limits(**sandbox.get("limits", {})),
                   pass_env=tuple(sandbox.get("pass_env", ())))


def create_tournament(store: Store, plan: Plan) -> int:
    """Register the plan's bots, store the tournament and its tables; its id."""
    store.register_bots([(b.name, b.command) for b in plan.bots])
    tables = [[plan.bots[i].name for i in table] for table in plan.tables()]
    return store.create_tournament(plan.game, plan.to_config(), tables, plan.total_games)


OnGame = Callable[[GameResult], None]


async def run_tournament(plan: Plan, store: Store, tournament_id: int, *, parallel: int,
                         on_game: OnGame | None = None, sandbox: Sandbox | None = None,
                         client: Client | None = None) -> None:
    """Play every game of ``plan`` not yet stored under ``tournament_id``.

    ``parallel`` streams (see :class:`Stream`) run at once in this process, or,
    given a Dask ``client`` (:func:`arena.cluster.open_client`), as units on its
    workers while this process stores what they bring back.  Cancellation
    (e.g. Ctrl-C) stops every stream: bots are killed, games in flight are
    dropped, every finished game is already committed.
    """
    done = store.done_games(tournament_id)
    todo = [(stream, [g for g in stream.games if (stream.table, g) not in done])
            for stream in plan.streams()]
    todo = [(stream, games) for stream, games in todo if games]
    seeds = plan.deal_seeds()
    store_game = _game_saver(plan, store, tournament_id, on_game)
    if client is not None:
        from arena.cluster import run_units, units

        await run_units(client, plan, units(todo), seeds, store.private_paths(),
                        lambda unit, number, result: store_game(unit.stream.table, number,
                                                                result))
        return
    sandbox = sandbox or plan.resolve_sandbox(store.private_paths())
    limiter = trio.CapacityLimiter(max(1, parallel))

    async def run_stream(stream: Stream, games: list[int]) -> None:
        async with limiter:
            await play_stream(plan, stream, games, seeds, sandbox,
                              functools.partial(store_game, stream.table))

    async with trio.open_nursery() as nursery:
        for stream, games in todo:
            nursery.start_soon(run_stream, stream, games)


def _game_saver(plan: Plan, store: Store, tournament_id: int, on_game: OnGame | None
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


#: Receives each finished game of a stream: ``await on_result(game_number, result)``.
OnResult = Callable[[int, GameResult], Awaitable[None]]


async def play_stream(plan: Plan, stream: Stream, games: Sequence[int], seeds: Sequence[int],
                      sandbox: Sandbox, on_result: OnResult) -> None:
    """Play ``games`` (game numbers of ``stream``, in order) on the stream's own
    bot processes, one bot per seat, handing each result to ``on_result``.

    The bots are started for these games and killed when they end; on
    cancellation they are killed at once and the game in flight is dropped.
    """
    game = plan.make_game()
    match_start = match_start_message(game, len(games))
    async with trio.open_nursery() as nursery:
        entrants = [Entrant(plan.bots[i], plan.control, match_start, nursery, sandbox)
                    for i in stream.seating]
        finished = False
        try:
            for game_number in games:
                result = await play_game(game, seeds[plan.deal(game_number)], entrants,
                                         game_number, plan.control)
                await on_result(game_number, result)
            finished = True
        finally:
            with trio.CancelScope(shield=True):
                for entrant in entrants:
                    await (entrant.end_match() if finished else entrant.stop())
            nursery.cancel_scope.cancel()


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

