"""Tournaments on trio: the plan, and running it.

A :class:`Plan` holds a tournament's configuration; its format
(:mod:`arena.formats.schedule`: round robin, gauntlet, match) chooses the tables, and
every table plays ``games_per_table`` games in groups of ``table_size``: one
deal seed, played once per cyclic seat rotation (duplicate deals), so every
bot sits every seat equally often on the same cards.  The same deal seeds are
used at every table.  The tables are stored with the tournament and a resumed
one reads them back (:meth:`Plan.from_stored`).

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

import contextlib
import functools
import gc
import json
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from arena.formats.schedule import (
    ConfigError,
    Format,
    Match,
    RoundRobin,
    Stream,
    Table,
    format_from_config,
    seating,
)
from arena.formats.schedule import streams as make_streams
from arena.games import make_game
from arena.games.base import Game
from arena.runner.claims import RETRY_SECONDS, Claims
from arena.runner.client import TimeControl
from arena.runner.process import BotSpec
from arena.runner.referee import Entrant, end_all, match_start_message, play_game, start_early
from arena.runner.sandbox import Limits, Sandbox, resolve
from arena.stats.match_stats import SequentialTest
from arena.store.database import DatabaseLocked, Store, StoredGame
from arena.store.records import GameResult

if TYPE_CHECKING:
    from distributed import Client

#: Seconds between attempts to save a game while the database is locked.
LOCK_RETRY_SECONDS = 1.0
#: The most games a table may play (its deal seeds are drawn up front).
MAX_GAMES_PER_TABLE = 100_000


@dataclass(frozen=True)
class Plan:
    """A tournament's full configuration; everything else derives from it.

    ``format`` chooses the tables (:mod:`arena.formats.schedule`); a plan read back from
    the database carries the tables it stored (``fixed_tables``), so a resumed
    tournament plays exactly the schedule it started with.
    """

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
    format: Format = field(default_factory=RoundRobin)
    #: Bot indices at each table as stored; None: chosen by ``format``.
    fixed_tables: tuple[Table, ...] | None = None

    def resolve_sandbox(self, hidden: Sequence[str] = ()) -> Sandbox:
        """The sandbox this run's bots get (SandboxError if it cannot run here)."""
        return resolve(self.sandbox, self.limits, hidden, self.pass_env)

    def make_game(self) -> Game:
        return make_game(self.game, self.table_size, self.options)

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.bots]

    def validate(self) -> None:
        """Raise ConfigError / OptionError if this plan cannot run."""
        names = self.names
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(f"bot name {duplicates[0]!r} is used twice")
        if len(self.bots) < self.table_size:
            raise ConfigError(
                f"{len(self.bots)} bots cannot fill a table of {self.table_size}")
        self.make_game()
        if self.games_per_table < 1 or self.games_per_table % self.table_size:
            raise ConfigError(
                f"games per table ({self.games_per_table}) must be a positive multiple of the "
                f"table size ({self.table_size}) so every bot sits every seat equally often")
        if self.games_per_table > MAX_GAMES_PER_TABLE:
            raise ConfigError(f"games per table ({self.games_per_table}) must be at most "
                              f"{MAX_GAMES_PER_TABLE}")
        self.format.check(names, self.table_size)

    def tables(self) -> list[Table]:
        """Bot indices at each table, in seat order (rotation 0)."""
        return list(self._tables)

    @functools.cached_property
    def _tables(self) -> tuple[Table, ...]:
        if self.fixed_tables is not None:
            return self.fixed_tables
        return tuple(self.format.tables(self.names, self.table_size, self.seed))

    def deal_seeds(self) -> list[int]:
        rng = random.Random(self.seed)
        return [rng.getrandbits(62) for _ in range(self.games_per_table // self.table_size)]

    def seating(self, table: Sequence[int], game_number: int) -> list[int]:
        """Bot index in each seat for a table's game: a cyclic rotation per game."""
        return seating(table, game_number % self.table_size)

    def deal(self, game_number: int) -> int:
        """Index (into :meth:`deal_seeds`) of the deal a table's game plays."""
        return game_number // self.table_size

    def streams(self, lanes: int = 1) -> list[Stream]:
        """Every table's seat rotations (each split in ``lanes``), table by table."""
        return make_streams(self.tables(), self.games_per_table, lanes)

    @property
    def total_games(self) -> int:
        return len(self._tables) * self.games_per_table

    def to_config(self) -> dict[str, Any]:
        return {"game": self.game, "options": self.options, "table_size": self.table_size,
                "games_per_table": self.games_per_table, "seed": self.seed,
                "bots": [bot_config(b) for b in self.bots],
                "format": self.format.to_config(),
                "time": self.control.to_dict(),
                "sandbox": {"choice": self.sandbox, "limits": asdict(self.limits),
                            "pass_env": list(self.pass_env)}}

    @classmethod
    def from_config(cls, config: dict[str, Any],
                    tables: Sequence[Table] | None = None) -> Plan:
        time = config.get("time", {})
        sandbox = config.get("sandbox", {})
        return cls(game=config["game"], options=dict(config.get("options", {})),
                   table_size=int(config["table_size"]),
                   games_per_table=int(config["games_per_table"]), seed=int(config["seed"]),
                   bots=tuple(BotSpec(b["name"], b["command"], b.get("directory"))
                              for b in config["bots"]),
                   control=TimeControl(**time), sandbox=sandbox.get("choice", "auto"),
                   limits=Limits(**sandbox.get("limits", {})),
                   pass_env=tuple(sandbox.get("pass_env", ())),
                   format=format_from_config(config.get("format")),
                   fixed_tables=None if tables is None else tuple(map(tuple, tables)))

    @classmethod
    def from_stored(cls, stored: dict[str, Any]) -> Plan:
        """The plan of a stored tournament (:meth:`Store.tournament`), with the
        tables it stored: never chosen again, so a resume plays the same schedule
        whatever the code or the format's search would choose today."""
        config = stored["config"]
        index = {b["name"]: i for i, b in enumerate(config["bots"])}
        try:
            tables = [tuple(index[name] for name in table) for table in stored["tables"]]
        except KeyError as exc:
            raise ConfigError(f"tournament {stored['id']} seats bot {exc.args[0]!r}, "
                              f"which its configuration does not name") from None
        return cls.from_config(config, tables)


def bot_config(bot: BotSpec) -> dict[str, str]:
    """How a tournament's configuration stores an entrant."""
    config = {"name": bot.name, "command": bot.command}
    return config if bot.directory is None else {**config, "directory": bot.directory}


def create_tournament(store: Store, plan: Plan, *, kind: str | None = None,
                      extra: Mapping[str, Any] | None = None) -> int:
    """Register the plan's bots, store the tournament and its tables; its id.
    ``kind`` overrides the format's; ``extra`` is added to the stored config."""
    store.register_bots([(b.name, b.command) for b in plan.bots])
    tables = [[plan.bots[i].name for i in table] for table in plan.tables()]
    return store.create_tournament(plan.game, {**plan.to_config(), **(extra or {})}, tables,
                                   plan.total_games, kind=kind or plan.format.kind)


def find_tournament(store: Store, plan: Plan) -> dict[str, Any] | None:
    """The newest stored tournament (:meth:`Store.tournament`) of exactly this
    plan: same kind and configuration, so the same tables and deals; None if
    there is none.  Resuming it, rather than creating another, never stores
    one plan's games twice."""
    wanted = json.loads(json.dumps(plan.to_config()))
    for stored in reversed(store.tournaments()):
        config = {key: value for key, value in (stored["config"] or {}).items()
                  if key != "protections"}  # added by the run (Store.set_protections)
        if stored["kind"] == plan.format.kind and config == wanted:
            return stored
    return None


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
        from arena.runner.cluster import run_units, units

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
                       seeds: Sequence[int], sandbox: Sandbox, parallel: int,
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
    mine = places[seats.index(plan.bots[0].name)]
    theirs = places[seats.index(plan.bots[1].name)]
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


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


#: Receives each finished game of a stream: ``await on_result(game_number, result)``.
OnResult = Callable[[int, GameResult], Awaitable[None]]
#: Receives a stream's entrants (in seat order) once they exist, to read what
#: they saw of their bots' processes (:attr:`arena.runner.referee.Entrant.runs`) later.
OnEntrants = Callable[[Stream, Sequence[Entrant]], None]


async def play_stream(plan: Plan, stream: Stream, games: Sequence[int], seeds: Sequence[int],
                      sandbox: Sandbox, on_result: OnResult, *,
                      may_start: Callable[[int], Awaitable[bool]] | None = None,
                      slots: trio.CapacityLimiter | None = None,
                      on_entrants: OnEntrants | None = None, early: bool = False) -> None:
    """Play ``games`` (game numbers of ``stream``, in order) on the stream's own
    bot processes, one bot per seat, handing each result to ``on_result``.

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
                    result = await play_game(game, seeds[plan.deal(game_number)], entrants,
                                             game_number, plan.control)
                await on_result(game_number, result)
            finished = True
        finally:
            with trio.CancelScope(shield=True):
                await end_all(entrants, finished)
            nursery.cancel_scope.cancel()


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

