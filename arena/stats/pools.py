"""What ratings are computed on: stored games as tables of (player, place), their
duplicate groups (every seat rotation of one deal at one table), and comparable
pools (same game, options and time control).  Plain data in, plain data out:
nothing here knows of storage."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, overload


class TableResult(Protocol):
    """A finished game as stored (e.g. ``arena.store.database.StoredGame``).

    ``tournament_id``, ``table`` and ``number`` are read when present (see
    :func:`ratable_games`)."""

    @property
    def seats(self) -> Sequence[str]: ...

    @property
    def places(self) -> Sequence[int]: ...

    @property
    def no_result(self) -> bool: ...


@dataclass(frozen=True)
class RatableGame(Sequence[tuple[str, int]]):
    """One table to rate: its ``(player, place)`` seats and its duplicate group.

    It is a sequence of seats, so it can be used wherever a plain list of seats is.
    Games with an equal ``group`` are resampled together; ``None`` is a group of its own.
    """

    seats: tuple[tuple[str, int], ...]
    group: Hashable = None

    @overload
    def __getitem__(self, index: int) -> tuple[str, int]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[str, int]]: ...

    def __getitem__(self, index: int | slice) -> Any:
        return self.seats[index]

    def __len__(self) -> int:
        return len(self.seats)

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self.seats)


def duplicate_group(game: object) -> Hashable:
    """``(tournament_id, table, deal)`` of a stored game, where ``deal = number // len(seats)``
    (the games of one deal are its seat rotations, numbered consecutively); ``None`` (a
    group of its own) for a game without those fields."""
    tournament, table, number = (
        getattr(game, name, None) for name in ("tournament_id", "table", "number"))
    seats = getattr(game, "seats", ())
    if tournament is None or table is None or number is None or not seats:
        return None
    return (tournament, table, int(number) // len(seats))


def ratable_games(games: Iterable[TableResult]) -> list[RatableGame]:
    """The tables to rate, each with its duplicate group (:func:`duplicate_group`): every
    game but those without a result (every seat faulted, so their places say nothing) and
    those of one player only (one bot version in every seat: a player cannot play
    itself; where it holds some seats of a table, those self-pairs are skipped)."""
    return [RatableGame(tuple(zip(game.seats, game.places, strict=True)), duplicate_group(game))
            for game in games
            if not game.no_result and len(set(game.seats)) > 1]


class PooledGame(Protocol):
    """What :func:`pools` reads of a stored game."""

    @property
    def game(self) -> str: ...

    @property
    def options(self) -> Mapping[str, Any]: ...

G = TypeVar("G", bound=PooledGame)


@dataclass(frozen=True, order=True)
class PoolKey:
    """The settings shared by the games of one pool, as canonical JSON (sorted keys)."""

    game: str
    options: str
    time_control: str

    @property
    def settings(self) -> dict[str, Any]:
        """Options and time control as values, for display."""
        return {"options": json.loads(self.options), "time_control": json.loads(self.time_control)}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def pools(games: Iterable[G], time_control: Callable[[G], Any] = lambda game: None
          ) -> dict[PoolKey, list[G]]:
    """Games split into comparable pools: same game, same options, same time control.

    ``time_control(game)`` gives a game's time control (any JSON-able value, e.g. the
    tournament config's ``"time"``); by default every game's is unknown (``None``), so
    time controls are not told apart.  Pools are in key order, games in input order.
    """
    split: dict[PoolKey, list[G]] = defaultdict(list)
    for game in games:
        key = PoolKey(game.game, _canonical(dict(game.options)), _canonical(time_control(game)))
        split[key].append(game)
    return dict(sorted(split.items()))
