"""A tournament's plan: its full configuration (game, bots, format, deals, time
control, sandbox), from which the tables, streams and deal seeds derive; storing a
new tournament from it and finding a stored one of exactly this plan."""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from arena.formats.schedule import Format, RoundRobin, Stream, format_from_config, seating
from arena.formats.schedule import streams as make_streams
from arena.formats.tables import ConfigError, Table
from arena.games import make_game
from arena.games.base import Game
from arena.runner.client import TimeControl
from arena.runner.process import BotSpec
from arena.runner.sandbox import Limits, Sandbox, resolve
from arena.store.database import Store

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
