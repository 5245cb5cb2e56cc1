"""Who meets whom, in which seats, on which deals: the tournament formats.

A format (:class:`RoundRobin`, :class:`Gauntlet`, :class:`Match`; a
:class:`Ladder` picks its tables as it plays, see :mod:`arena.formats.ladder`) answers one
question, behind one small interface (:class:`Format`): which tables of
``seats`` bots does a tournament play.  Everything after that is common to all
formats: every table plays its own deals (:mod:`arena.formats.deals`), each deal
once per cyclic seat rotation (a duplicate group).  A table's deals are split into
blocks of :data:`DEAL_BLOCK`; one rotation of one block is a :class:`Stream`, played
on its own bot processes (:func:`streams`), and streams that share a deal form a
:class:`Chain`, played one stream after another (:func:`chains`): the deal
isolation rule.

Which tables a round robin or a gauntlet chooses is :mod:`arena.formats.tables`.

Pure and deterministic from its seed: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from arena.formats.tables import ConfigError, Table, gauntlet_tables, round_robin
from arena.stats.match_stats import Sprt

#: Default of ``--max-tables``: every combination up to this many tables.
DEFAULT_MAX_TABLES = 200
#: The largest ``--max-tables`` accepted.
MAX_TABLES_LIMIT = 10_000
#: Deals in one block of a table: each seat rotation plays a block on its own bot
#: processes, the block's rotations one after another (:func:`chains`).  It is
#: the unit of work everywhere (here and on Dask workers) so stateful bots play
#: the same games wherever they run; a match uses :data:`MATCH_BLOCK`.
DEAL_BLOCK = 8
#: Deals in one block of a match: small, since a pair counts for its sequential
#: test only once the block's second rotation has played it.
MATCH_BLOCK = 2


# -- formats ----------------------------------------------------------------------------

class Format(Protocol):
    """A tournament format: which tables a tournament of these entrants plays."""

    #: Stored as the tournament's kind (the report shows it).
    kind: ClassVar[str]

    def tables(self, names: Sequence[str], seats: int, seed: int) -> list[Table]:
        """Bot indices (into ``names``) at each table, in seat order."""
        ...

    def check(self, names: Sequence[str], seats: int) -> None:
        """ConfigError if these entrants cannot play this format."""
        ...

    def to_config(self) -> dict[str, Any]:
        """What a stored tournament records about its format."""
        ...


def _check_max_tables(max_tables: int) -> None:
    if not 1 <= max_tables <= MAX_TABLES_LIMIT:
        raise ConfigError(f"--max-tables must be from 1 to {MAX_TABLES_LIMIT}, not {max_tables}")


@dataclass(frozen=True)
class RoundRobin:
    """Every combination of the entrants while there are at most ``max_tables``,
    else a balanced choice (:func:`round_robin`)."""

    max_tables: int = DEFAULT_MAX_TABLES
    kind: ClassVar[str] = "tournament"

    def tables(self, names: Sequence[str], seats: int, seed: int) -> list[Table]:
        return round_robin(len(names), seats, self.max_tables, seed)

    def check(self, names: Sequence[str], seats: int) -> None:
        _check_max_tables(self.max_tables)

    def to_config(self) -> dict[str, Any]:
        return {"name": "round-robin", "max_tables": self.max_tables}


@dataclass(frozen=True)
class Gauntlet:
    """Each table seats one of the ``challengers`` and ``seats - 1`` bots of the
    field (every other entrant): :func:`gauntlet_tables`."""

    challengers: tuple[str, ...]
    max_tables: int = DEFAULT_MAX_TABLES
    kind: ClassVar[str] = "gauntlet"

    def tables(self, names: Sequence[str], seats: int, seed: int) -> list[Table]:
        index = {name: i for i, name in enumerate(names)}
        field = [i for i, name in enumerate(names) if name not in self.challengers]
        return gauntlet_tables([index[c] for c in self.challengers], field, seats,
                               self.max_tables, seed)

    def check(self, names: Sequence[str], seats: int) -> None:
        _check_max_tables(self.max_tables)
        unknown = [c for c in self.challengers if c not in names]
        if unknown:
            raise ConfigError(f"--challenger {unknown[0]!r} is not one of the bots "
                              f"({', '.join(names)})")
        twice = sorted({c for c in self.challengers if self.challengers.count(c) > 1})
        if twice:
            raise ConfigError(f"--challenger {twice[0]!r} is given twice")
        field = len(names) - len(self.challengers)
        if field < seats - 1:
            raise ConfigError(f"a gauntlet at tables of {seats} needs at least {seats - 1} "
                              f"field bots besides the challengers, not {field}")
        if self.max_tables < len(self.challengers):
            raise ConfigError(f"--max-tables ({self.max_tables}) must be at least the number "
                              f"of challengers ({len(self.challengers)})")

    def to_config(self) -> dict[str, Any]:
        return {"name": "gauntlet", "challengers": list(self.challengers),
                "max_tables": self.max_tables}


@dataclass(frozen=True)
class Match:
    """Two bots at one table of two, in pairs of games (one deal, seats swapped)
    until the sequential test ``sprt`` decides (see
    :class:`arena.stats.match_stats.SequentialTest`)."""

    sprt: Sprt = field(default_factory=Sprt)
    kind: ClassVar[str] = "match"

    def tables(self, names: Sequence[str], seats: int, seed: int) -> list[Table]:
        return [(0, 1)]

    def check(self, names: Sequence[str], seats: int) -> None:
        if len(names) != 2 or seats != 2:
            raise ConfigError(f"a match is two bots at a table of two, not {len(names)} "
                              f"bots at {seats}")
        problem = self.sprt.problem()
        if problem:
            raise ConfigError(problem)

    def to_config(self) -> dict[str, Any]:
        return {"name": "match", "sprt": self.sprt.to_dict()}


@dataclass(frozen=True)
class Ladder:
    """A continuous ladder: no tables up front; it picks one at a time as it plays
    (:mod:`arena.formats.ladder`) and stores each as it goes."""

    kind: ClassVar[str] = "ladder"

    def tables(self, names: Sequence[str], seats: int, seed: int) -> list[Table]:
        return []

    def check(self, names: Sequence[str], seats: int) -> None:
        pass

    def to_config(self) -> dict[str, Any]:
        return {"name": "ladder"}


def deal_block(kind: str) -> int:
    """Deals per block of a tournament of this kind: :data:`MATCH_BLOCK` for a
    match, else :data:`DEAL_BLOCK`."""
    return MATCH_BLOCK if kind == Match.kind else DEAL_BLOCK


def format_from_config(config: dict[str, Any] | None) -> Format:
    """The format a stored tournament recorded (a round robin when it recorded none)."""
    config = config or {}
    name = config.get("name", "round-robin")
    if name == "gauntlet":
        return Gauntlet(tuple(config["challengers"]),
                        int(config.get("max_tables", DEFAULT_MAX_TABLES)))
    if name == "match":
        return Match(Sprt.from_dict(config["sprt"]))
    if name == "ladder":
        return Ladder()
    return RoundRobin(int(config.get("max_tables", DEFAULT_MAX_TABLES)))


# -- streams and chains -----------------------------------------------------------------

@dataclass(frozen=True)
class Stream:
    """One seat rotation of one block of one table's deals: a match on its own bot
    processes.

    ``seating`` is the bot index in each seat (fixed for the whole stream),
    ``games`` the table's game numbers it plays, one per deal, in deal order,
    ``block`` the index of the table's block of deals they belong to.
    """

    table: int
    rotation: int
    seating: tuple[int, ...]
    games: tuple[int, ...]
    block: int = 0


#: Streams that share a deal, in the order they play, one after another: every
#: bot process of one has ended before the next one's first starts.
Chain = tuple[Stream, ...]


def seating(table: Sequence[int], rotation: int) -> list[int]:
    """Bot index in each seat of a table in one cyclic seat rotation."""
    k = len(table)
    return [table[(seat + rotation) % k] for seat in range(k)]


#: The order of a block's seat rotations: ``order(table, first_deal, k)``.
RotationOrder = Callable[[int, int, int], Sequence[int]]


def fixed_order(table: int, first_deal: int, k: int) -> Sequence[int]:
    """Rotations 0, 1, ..., k-1: the order of tournaments stored before it was drawn."""
    return range(k)


def streams(tables: Sequence[Table], games_per_table: int,
            block: int = DEAL_BLOCK, order: RotationOrder = fixed_order) -> list[Stream]:
    """Every table's blocks of ``block`` deals, each block's seat rotations in
    the ``order`` they play (given the table, the block's first deal and the
    table size), table by table.  Game ``g`` of a table plays deal ``g // k`` in
    rotation ``g % k``; every stream plays each of its block's deals once."""
    out = []
    for number, table in enumerate(tables):
        k = len(table)
        deals = games_per_table // k
        for index, first in enumerate(range(0, deals, block)):
            last = min(first + block, deals)
            for rotation in order(number, first, k):
                out.append(Stream(number, rotation, tuple(seating(table, rotation)),
                                  tuple(d * k + rotation for d in range(first, last)), index))
    return out


def chains(streams: Sequence[Stream],
           deals: Callable[[Stream], Iterable[Hashable]]) -> list[Chain]:
    """The streams grouped so that two streams sharing a deal (``deals(stream)``:
    what identifies each deal it plays), directly or through others, are in
    one chain; streams keep their order within a chain, and chains come in
    order of (block, table) of their first stream, so every table makes
    progress early.  Streams of different chains share no deal, so chains may
    play at once; those of one chain play one after another."""
    parent = list(range(len(streams)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[Hashable, int] = {}
    for i, stream in enumerate(streams):
        for deal in deals(stream):
            j = owner.setdefault(deal, i)
            parent[root(i)] = root(j)
    groups: dict[int, list[Stream]] = {}
    for i, stream in enumerate(streams):
        groups.setdefault(root(i), []).append(stream)
    return sorted((tuple(group) for group in groups.values()),
                  key=lambda chain: (chain[0].block, chain[0].table))


def chain_name(chain: Chain) -> str:
    """What names a chain (in claims): ``"TABLE/BLOCK"`` of its first stream."""
    return f"{chain[0].table}/{chain[0].block}"
