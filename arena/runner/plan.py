"""A tournament's plan: its full configuration (game, bots, format, deals, time
control, sandbox), from which the tables, streams and deal seeds derive; storing a
new tournament from it (with its deal secret) and finding a stored one of exactly
this plan."""

from __future__ import annotations

import contextlib
import functools
import json
import random
import secrets
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from arena.formats.deals import (
    SECRET_BYTES,
    DealSeeds,
    KeyedDeals,
    ListedDeals,
    commitment,
    known_key,
    schedule_seed,
    secret_key,
)
from arena.formats.schedule import (
    Chain,
    Format,
    RoundRobin,
    Stream,
    deal_block,
    fixed_order,
    format_from_config,
    seating,
)
from arena.formats.schedule import chains as make_chains
from arena.formats.schedule import streams as make_streams
from arena.formats.tables import ConfigError, Table
from arena.games import make_game
from arena.games.base import Game
from arena.runner.client import TimeControl
from arena.runner.process import BotSpec
from arena.runner.sandbox import Limits, Sandbox, resolve
from arena.stats.rotation_learning import order_block, rotation_order
from arena.store.database import Store
from arena.store.records import GameResult

if TYPE_CHECKING:
    pass


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
    #: An explicit ``--seed`` (known deals), or None: the deals come from ``secret``.
    seed: int | None = 1
    control: TimeControl = field(default_factory=TimeControl)
    #: ``--sandbox`` choice (auto, bwrap, none), resolved on each run.
    sandbox: str = "auto"
    limits: Limits = field(default_factory=Limits)
    pass_env: tuple[str, ...] = ()
    format: Format = field(default_factory=RoundRobin)
    #: Bot indices at each table as stored; None: chosen by ``format``.
    fixed_tables: tuple[Table, ...] | None = None
    #: The deal secret (hex, :func:`new_secret`) when ``seed`` is None; never in the config.
    secret: str | None = field(default=None, repr=False)
    #: The same deals at every table (``--same-deals``: only for trusted bots).
    same_deals: bool = False
    #: Stored before deals were keyed: the same deals at every table, drawn by
    #: ``random.Random(seed)`` (kept so such a tournament resumes on its deals).
    legacy_deals: bool = False
    #: The order of a block's seat rotations is drawn from its first deal
    #: (:func:`~arena.stats.rotation_learning.rotation_order`; stored in the config
    #: as ``"rotation_order": {"block": deals per block}``); False: stored before it was,
    #: played in rotation order (kept so such a tournament resumes as it began).
    drawn_order: bool = True
    #: The deal seeds of a ladder's table, given (never in the config): the table
    #: plays these rather than its key's.
    listed_deals: tuple[int, ...] | None = None

    def resolve_sandbox(self, hidden: Sequence[str] = ()) -> Sandbox:
        """The sandbox this run's bots get (SandboxError if it cannot run here)."""
        return resolve(self.sandbox, self.limits, hidden, self.pass_env)

    def make_game(self) -> Game:
        return make_game(self.game, self.table_size, self.options)

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.bots]

    def validate(self, *, seated_later: bool = False) -> None:
        """Raise ConfigError / OptionError if this plan cannot run (``seated_later``:
        a stored ladder's, whose entrants are read before each table, so it may
        have fewer bots than a table now and waits for more)."""
        if (self.seed is None) == (self.secret is None):
            raise ConfigError("a plan has either a known seed or a deal secret")
        names = self.names
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ConfigError(f"bot name {duplicates[0]!r} is used twice")
        if len(self.bots) < self.table_size and not seated_later:
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
        return tuple(self.format.tables(self.names, self.table_size, self.schedule_seed))

    @property
    def schedule_seed(self) -> int:
        """The seed of the format's choices (tables, a ladder's picks): the known
        seed, else one derived from the secret."""
        return self.seed if self.seed is not None else schedule_seed(self.key)

    @property
    def key(self) -> bytes:
        """The key every deal seed derives from (:mod:`arena.formats.deals`)."""
        if self.secret is not None:
            return secret_key(self.secret)
        assert self.seed is not None
        return known_key(self.seed)

    def deal_seeds(self) -> DealSeeds:
        """The one source of this plan's deal seeds: ``deal_seeds().seed(table, deal)``
        (see :mod:`arena.formats.deals`)."""
        if self.listed_deals is not None:
            return ListedDeals(self.listed_deals)
        if self.legacy_deals:
            rng = random.Random(self.seed)
            return ListedDeals(tuple(rng.getrandbits(62)
                                     for _ in range(self.games_per_table // self.table_size)))
        return KeyedDeals(self.key, shared=self.same_deals)

    def seating(self, table: Sequence[int], game_number: int) -> list[int]:
        """Bot index in each seat for a table's game: a cyclic rotation per game."""
        return seating(table, game_number % self.table_size)

    def deal(self, game_number: int) -> int:
        """Index (into :meth:`deal_seeds`) of the deal a table's game plays."""
        return game_number // self.table_size

    @property
    def block(self) -> int:
        """Deals per block (:data:`~arena.formats.schedule.DEAL_BLOCK`; a match's
        :data:`~arena.formats.schedule.MATCH_BLOCK`)."""
        return deal_block(self.format.kind)

    def streams(self) -> list[Stream]:
        """Every table's blocks of deals, each in its seat rotations in the order
        they play (:meth:`block_order`), table by table."""
        return make_streams(self.tables(), self.games_per_table, self.block,
                            self.block_order if self.drawn_order else fixed_order)

    def block_order(self, table: int, first_deal: int, k: int) -> tuple[int, ...]:
        """The order in which a table's block of deals starting at ``first_deal``
        plays its ``k`` seat rotations: drawn from that deal's seed."""
        return rotation_order(self.deal_seeds().seed(table, first_deal), k)

    def chains(self) -> list[Chain]:
        """Every stream, in chains of those that share a deal
        (:func:`arena.formats.schedule.chains`): a deal is its seed, and with a
        stacked ``deck`` option every game shares its first hand, so every
        stream is in one chain."""
        seeds = self.deal_seeds()
        stacked = self.options.get("deck") is not None

        def deals(stream: Stream) -> set[object]:
            if stacked:
                return {"stacked deck"}
            return {seeds.seed(stream.table, self.deal(g)) for g in stream.games}

        return make_chains(self.streams(), deals)

    @property
    def total_games(self) -> int:
        return len(self._tables) * self.games_per_table

    def to_config(self) -> dict[str, Any]:
        """The stored configuration: public (the secret is stored apart, see
        :func:`create_tournament`)."""
        deals = {} if self.legacy_deals else {
            "deals": "known" if self.secret is None else "secret",
            "same_deals": self.same_deals}
        order = {"rotation_order": {"block": self.block}} if self.drawn_order else {}
        return {"game": self.game, "options": self.options, "table_size": self.table_size,
                "games_per_table": self.games_per_table, "seed": self.seed, **deals, **order,
                "bots": [bot_config(b) for b in self.bots],
                "format": self.format.to_config(),
                "time": self.control.to_dict(),
                "sandbox": {"choice": self.sandbox, "limits": asdict(self.limits),
                            "pass_env": list(self.pass_env)}}

    @classmethod
    def from_config(cls, config: dict[str, Any], tables: Sequence[Table] | None = None,
                    secret: str | None = None) -> Plan:
        """The plan a configuration stored (``secret``: its deal secret, if secret)."""
        if config.get("deals") == "secret" and secret is None:
            raise ConfigError("this tournament's deal secret is not stored")
        seed = config.get("seed")
        time = config.get("time", {})
        sandbox = config.get("sandbox", {})
        return cls(game=config["game"], options=dict(config.get("options", {})),
                   table_size=int(config["table_size"]),
                   games_per_table=int(config["games_per_table"]),
                   seed=None if seed is None else int(seed),
                   secret=secret if config.get("deals") == "secret" else None,
                   same_deals=bool(config.get("same_deals", False)),
                   legacy_deals="deals" not in config,
                   drawn_order=order_block(config) is not None,
                   bots=tuple(BotSpec(b["name"], b["command"], b.get("directory"))
                              for b in config["bots"]),
                   control=TimeControl(**time), sandbox=sandbox.get("choice", "auto"),
                   limits=Limits(**sandbox.get("limits", {})),
                   pass_env=tuple(sandbox.get("pass_env", ())),
                   format=format_from_config(config.get("format")),
                   fixed_tables=None if tables is None else tuple(map(tuple, tables)))

    @classmethod
    def from_stored(cls, stored: dict[str, Any], secret: str | None = None) -> Plan:
        """The plan of a stored tournament (:meth:`Store.tournament`), with the
        tables it stored: never chosen again, so a resume plays the same schedule
        whatever the code or the format's search would choose today; ``secret``:
        its stored deal secret (:meth:`Store.deal_secret`), so it plays the same deals."""
        config = stored["config"]
        index = {b["name"]: i for i, b in enumerate(config["bots"])}
        try:
            tables = [tuple(index[name] for name in table) for table in stored["tables"]]
        except KeyError as exc:
            raise ConfigError(f"tournament {stored['id']} seats bot {exc.args[0]!r}, "
                              f"which its configuration does not name") from None
        return cls.from_config(config, tables, secret)


def new_secret() -> str:
    """A fresh deal secret from the operating system (64 hex digits)."""
    return secrets.token_hex(SECRET_BYTES)


def bot_config(bot: BotSpec) -> dict[str, str]:
    """How a tournament's configuration stores an entrant."""
    config = {"name": bot.name, "command": bot.command}
    return config if bot.directory is None else {**config, "directory": bot.directory}


def store_single_game(store: Store, game: str, options: Mapping[str, Any],
                      full_options: dict[str, Any], bots: Sequence[BotSpec],
                      result: GameResult, *, kind: str = "play",
                      extra: Mapping[str, Any] | None = None) -> int:
    """Store one game played outside any tournament (``arena play --db``, a
    person's game in the browser) as a finished one-game tournament of ``kind``
    (``extra`` added to its config); the game's id.  An error leaves the
    tournament "failed", never "running"."""
    store.register_bots([(b.name, b.command) for b in bots])
    config = {"game": game, "options": dict(options), "bots": [bot_config(b) for b in bots],
              **(extra or {})}
    tid = store.create_tournament(game, config, [[b.name for b in bots]], 1, kind=kind)
    with finishing(store, tid):
        game_id = store.save_game(tid, 0, 0, full_options, result)
    return game_id


@contextlib.contextmanager
def finishing(store: Store, tournament_id: int) -> Iterator[None]:
    """Store a tournament's games in the block: then it is "finished"; if the
    block raises, "failed", never left "running"."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            store.set_status(tournament_id, "failed", wait=False)
        raise
    store.set_status(tournament_id, "finished")


def create_tournament(store: Store, plan: Plan, *, kind: str | None = None,
                      extra: Mapping[str, Any] | None = None) -> int:
    """Register the plan's bots, store the tournament and its tables; its id.
    ``kind`` overrides the format's; ``extra`` is added to the stored config."""
    store.register_bots([(b.name, b.command) for b in plan.bots])
    tables = [[plan.bots[i].name for i in table] for table in plan.tables()]
    return store.create_tournament(plan.game, {**plan.to_config(), **(extra or {})}, tables,
                                   plan.total_games, kind=kind or plan.format.kind,
                                   secret=sealed_secret(plan))


def sealed_secret(plan: Plan) -> tuple[str, str] | None:
    """The plan's secret and its commitment, as the store keeps them; None for known deals."""
    return None if plan.secret is None else (plan.secret, commitment(plan.secret))


def find_tournament(store: Store, plan: Plan,
                    same: Callable[[Any], Any] = lambda config: config
                    ) -> dict[str, Any] | None:
    """The newest stored tournament (:meth:`Store.tournament`) of exactly this
    plan: same kind and configuration (compared as ``same(config)``), so the
    same tables and deals; None if there is none.  Resuming it, rather than
    creating another, never stores one plan's games twice."""
    wanted = same(json.loads(json.dumps(plan.to_config())))
    for stored in reversed(store.tournaments()):
        config = {key: value for key, value in (stored["config"] or {}).items()
                  if key != "protections"}  # added by the run (Store.set_protections)
        if stored["kind"] == plan.format.kind and same(config) == wanted:
            return stored
    return None
