"""Running a continuous ladder: pick a table, store it, play its duplicate group; again.

A ladder is a stored tournament of kind ``ladder`` whose tables grow as it
plays.  Before each table it asks ``entrants()`` who is active now (so entrants
join and retire while it runs), picks the table (:func:`arena.formats.ladder.pick_table`),
stores it (:meth:`Store.append_table`), then plays the table's duplicate group:
its own deal (:meth:`LadderTables.deal_seed`: keyed by the secret of the table's
period, :mod:`arena.formats.deals`), once per cyclic seat rotation,
each rotation a stream on its own bot processes (as every tournament table,
:func:`arena.runner.stream.play_stream`; on a Dask cluster, the same streams), the
rotations one after another, every process of one ended before the next starts
(deal isolation, as in :mod:`arena.runner.tournament`), each game stored under the
unique key (table, deal 0, rotation) as it finishes.

A table is stored before its games are played, so after an interruption
(Ctrl-C, a kill) :func:`run_ladder` first finishes the tables with games
missing, then picks new ones; a game is never stored twice.  Without a known
seed each period of :data:`~arena.formats.deals.LADDER_PERIOD` tables has its own
secret, stored (its commitment published) when the period's first table is
picked and revealed once every table of the period is played.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from arena.formats.deals import (
    LADDER_PERIOD,
    commitment,
    period_of,
    period_tables,
)
from arena.formats.ladder import LadderState, legacy_deal_seed, pick_table, table_rng
from arena.formats.schedule import Chain, Ladder
from arena.formats.tables import ConfigError
from arena.runner.cluster import cluster_slots, run_chains
from arena.runner.plan import Plan, bot_config, new_secret, sealed_secret
from arena.runner.process import BotSpec
from arena.runner.sandbox import Sandbox
from arena.runner.stream import in_order
from arena.runner.tournament import OnGame, game_saver, play_streams, remaining
from arena.store.database import Store
from arena.store.records import GameResult

if TYPE_CHECKING:
    from distributed import Client

#: Who may play now; asked before each table is picked.
Entrants = Callable[[], Sequence[BotSpec]]
#: Seconds between two looks at the entrants while too few are active to fill a table.
ENTRANTS_POLL_SECONDS = 5.0


@dataclass(frozen=True)
class Group:
    """One ladder table's duplicate group: the table's number, its bots in seat
    order (rotation 0), its deal seed and the rotations still to play."""

    number: int
    bots: tuple[BotSpec, ...]
    seed: int
    rotations: tuple[int, ...]

    def plan(self, ladder: Plan) -> Plan:
        """The ladder's settings for this table alone (game ``r`` is rotation ``r``),
        on its deal (which draws the order of its rotations)."""
        return dataclasses.replace(ladder, bots=self.bots,
                                   fixed_tables=(tuple(range(len(self.bots))),),
                                   listed_deals=(self.seed,))


def create_ladder(store: Store, plan: Plan) -> int:
    """Store a new ladder (no tables yet) with the plan's settings and first
    entrants; its id."""
    if not isinstance(plan.format, Ladder) or plan.games_per_table != plan.table_size:
        raise ConfigError("a ladder plays one duplicate group per table (format Ladder)")
    store.register_bots([(b.name, b.command) for b in plan.bots])
    return store.create_tournament(plan.game, plan.to_config(), [], 0, kind=Ladder.kind,
                                   secret=sealed_secret(plan))


class LadderTables:
    """A stored ladder's tables: the picker's state, the bots it has seated (by
    name), the groups with games missing, and the next table, picked and stored."""

    def __init__(self, plan: Plan, store: Store, tournament_id: int, entrants: Entrants,
                 on_wait: Callable[[str], None] | None = None) -> None:
        stored = store.tournament(tournament_id)
        if stored is None:
            raise ConfigError(f"no ladder {tournament_id}")
        self.plan, self.store, self.tournament_id = plan, store, tournament_id
        self.entrants, self.on_wait = entrants, on_wait
        self.stored: list[list[str]] = stored["tables"]
        self.state = LadderState.of(self.stored)
        self.known = {bot.name: bot for bot in plan.bots}
        #: Secrets by period; the tables of each period not played to the end yet.
        self.secrets: dict[int, str] = {} if plan.secret is None else {0: plan.secret}
        self.unplayed: dict[int, set[int]] = {}
        self.sealed = [period_of(d["first_table"]) for d in stored.get("deals", ())
                       if d["secret"] is None]

    def deal_seed(self, number: int) -> int:
        """The deal seed of table ``number``: from the secret of its period (stored
        now if it is the period's first table), else from the known seed."""
        if self.plan.legacy_deals:
            assert self.plan.seed is not None
            return legacy_deal_seed(self.plan.seed, number)
        if self.plan.secret is None:
            return self.plan.deal_seeds().seed(number, 0)  # the known seed's
        period = period_of(number)
        if period not in self.secrets:
            first, secret = period * LADDER_PERIOD, new_secret()
            self.secrets[period] = (self.store.deal_secret(self.tournament_id, first) or
                                    self.store.add_deal_secret(self.tournament_id, first,
                                                               secret, commitment(secret)))
        period_plan = dataclasses.replace(self.plan, secret=self.secrets[period])
        return period_plan.deal_seeds().seed(number, 0)

    async def played(self, group: Group) -> None:
        """Count ``group`` as played to its end; reveal its period's secret if that
        was the period's last table still to play."""
        period = period_of(group.number)
        self.unplayed.setdefault(period, set()).discard(group.number)
        for period in self._finished_periods():
            await trio.to_thread.run_sync(self.store.reveal_deal_secret, self.tournament_id,
                                          period * LADDER_PERIOD, abandon_on_cancel=True)

    def _finished_periods(self) -> list[int]:
        """The sealed periods whose tables are all picked and played (no longer sealed)."""
        finished = [period for period in self.sealed if not self.unplayed.get(period) and
                    self.state.tables > period_tables(period)[-1]]
        self.sealed = [period for period in self.sealed if period not in finished]
        return finished

    def unfinished(self) -> list[Group]:
        """The stored tables with games still to play, in table order."""
        done = self.store.done_games(self.tournament_id)
        k = self.plan.table_size
        groups = []
        for number, names in enumerate(self.stored):
            missing = tuple(r for r in range(k) if (number, r) not in done)
            if missing:
                unknown = [name for name in names if name not in self.known]
                if unknown:
                    raise ConfigError(f"ladder {self.tournament_id} seats bot {unknown[0]!r}, "
                                      f"which its configuration does not name")
                groups.append(Group(number, tuple(self.known[name] for name in names),
                                    self.deal_seed(number), missing))
                self.unplayed.setdefault(period_of(number), set()).add(number)
        for period in self._finished_periods():  # played to the end before an interruption
            self.store.reveal_deal_secret(self.tournament_id, period * LADDER_PERIOD)
        return groups

    def active(self) -> dict[str, BotSpec]:
        """The entrants now, by name; ConfigError for a name given twice or a
        name this ladder knows with another command (a new program needs a new name)."""
        active: dict[str, BotSpec] = {}
        for bot in self.entrants():
            known = self.known.get(bot.name, bot)
            if bot.name in active:
                raise ConfigError(f"bot name {bot.name!r} is used twice")
            if known.command != bot.command:
                raise ConfigError(f"bot {bot.name!r} plays in ladder {self.tournament_id} as "
                                  f"{known.command!r}; a changed program needs a new name")
            active[bot.name] = bot
        return active

    async def next_group(self) -> Group:
        """Pick the next table from the entrants active now (waiting while they are
        too few to fill it) and store it; its group."""
        k, waited = self.plan.table_size, False
        while len(active := self.active()) < k:
            if self.on_wait is not None and not waited:
                self.on_wait(f"arena: ladder {self.tournament_id}: {len(active)} active "
                             f"entrant(s), {k} needed for a table: waiting for more")
            waited = True
            await trio.sleep(ENTRANTS_POLL_SECONDS)
        number = self.state.tables
        names = pick_table(self.state, list(active), k,
                           table_rng(self.plan.schedule_seed, number))
        new = [active[name] for name in names if name not in self.known]
        seed = 0

        def store_table() -> None:
            nonlocal seed
            seed = self.deal_seed(number)
            if new:
                self.store.register_bots([(bot.name, bot.command) for bot in new])
            self.store.append_table(self.tournament_id, number, names, games=k,
                                    configs=[bot_config(bot) for bot in new])

        await trio.to_thread.run_sync(store_table, abandon_on_cancel=True)
        self.known.update((bot.name, bot) for bot in new)
        self.state.add(names)
        self.unplayed.setdefault(period_of(number), set()).add(number)
        if self.plan.secret is not None and period_of(number) not in self.sealed:
            self.sealed.append(period_of(number))
        return Group(number, tuple(active[name] for name in names), seed, tuple(range(k)))


async def run_ladder(plan: Plan, store: Store, tournament_id: int, entrants: Entrants, *,
                     parallel: int, max_groups: int | None = None,
                     on_game: OnGame | None = None, sandbox: Sandbox | None = None,
                     client: Client | None = None,
                     on_wait: Callable[[str], None] | None = None) -> None:
    """Play ladder ``tournament_id`` until cancelled, or until it has ``max_groups``
    tables (counting those stored before): first its stored tables' missing games,
    then new tables, one duplicate group each.

    ``parallel`` games play at once in this process, or, given a Dask ``client``,
    on its workers, each of another group (a group's rotations play one after
    another).  A table is picked when a group slot frees (``parallel`` of them,
    and one more here, whose bots start while the others play), so an entrant
    added meanwhile is in the very next pick or the one after.  Cancellation works as in
    :func:`arena.runner.tournament.run_tournament`.
    """
    tables = LadderTables(plan, store, tournament_id, entrants, on_wait)
    save = game_saver(plan, store, tournament_id, on_game)
    if client is None:
        sandbox = sandbox or plan.resolve_sandbox(store.private_paths())
        play = functools.partial(_play_here, plan, sandbox, save,
                                 trio.CapacityLimiter(max(1, parallel)))
        groups = max(1, parallel) + 1
    else:
        play = functools.partial(_play_on_cluster, client, plan, store.private_paths(), save)
        groups = cluster_slots(client)

    async def play_group(group: Group) -> None:
        await play(group)
        await tables.played(group)

    async def upcoming() -> AsyncIterator[Group]:
        for group in tables.unfinished():
            yield group
        while max_groups is None or tables.state.tables < max_groups:
            yield await tables.next_group()

    await in_order(upcoming(), play_group, groups)


#: Stores one finished game: ``await save(table, game_number, result)``.
Save = Callable[[int, int, GameResult], Awaitable[None]]


async def _play_here(plan: Plan, sandbox: Sandbox, save: Save, slots: trio.CapacityLimiter,
                     group: Group) -> None:
    """A group's missing rotations in this process, one after another, each on its
    own bot processes."""
    table = group.plan(plan)
    await play_streams(table, _todo(table, group), table.deal_seeds(), sandbox, 1,
                       _saver(save, group), slots=slots)


async def _play_on_cluster(client: Client, plan: Plan, hidden: tuple[str, ...], save: Save,
                           group: Group) -> None:
    """A group's missing rotations on the cluster's workers, one after another."""
    table = group.plan(plan)
    await run_chains(client, table, _todo(table, group), table.deal_seeds(), hidden,
                     _saver(save, group))


def _todo(table: Plan, group: Group) -> list[Chain]:
    """The group's chain (its rotations share its deal), cut to its missing rotations."""
    done = {(0, g) for g in range(table.table_size) if g not in group.rotations}
    return remaining(table.chains(), done)


def _saver(save: Save, group: Group) -> Save:
    """Save a group's game under the ladder's table number."""
    return lambda _table, number, result: save(group.number, number, result)
