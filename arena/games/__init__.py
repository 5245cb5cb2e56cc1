"""The games: pure rules, cards and the game loop, and the registry of games
(name -> :class:`~arena.games.base.Game` subclass).

Imports nothing of the arena outside :mod:`arena.games`: no I/O, no trio, no clock.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from arena.games import native

native.install()  # before any engine is imported: the compiled ones, if they match

if TYPE_CHECKING:
    from arena.games.base import Game

_MODULES = {
    "furious-five": "arena.games.furious_five",
    "five": "arena.games.five",
    "five-or-less": "arena.games.five_or_less",
    "five-card-rummy": "arena.games.five_card_rummy",
    "rummy-five": "arena.games.rummy_five",
    "octablitz": "arena.games.octablitz",
}


def game_names() -> list[str]:
    """Names of every game, in a stable order."""
    return list(_MODULES)


def game_class(name: str) -> type[Game]:
    """The Game class called ``name``; raise :class:`OptionError` if unknown."""
    if name not in _MODULES:
        from arena.games.base import OptionError
        raise OptionError(f"unknown game {name!r} (known: {', '.join(_MODULES)})")
    game: type[Game] = importlib.import_module(_MODULES[name]).GAME
    return game


def seat_fields(name: str) -> tuple[str, ...]:
    """Game ``name``'s per-seat observation fields (:attr:`Game.seat_fields`);
    none for a game this code does not know (a record from newer code)."""
    return game_class(name).seat_fields if name in _MODULES else ()


def field_labels(name: str) -> dict[str, str]:
    """Human labels of game ``name``'s observation fields (the common ones, then the
    game's own, :attr:`Game.field_labels`); the common ones only for a game this code
    does not know."""
    from arena.games.base import COMMON_FIELD_LABELS
    own = game_class(name).field_labels if name in _MODULES else {}
    return {**COMMON_FIELD_LABELS, **own}


def make_game(name: str, num_players: int, options: dict[str, Any] | None = None) -> Game:
    """A validated game: unknown game, player count or option raise OptionError."""
    return game_class(name)(num_players, options)
