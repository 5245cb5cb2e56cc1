"""The registry of games: name -> :class:`~arena.games.base.Game` subclass."""

from __future__ import annotations

from typing import Any

from arena.games.base import Game, OptionError

_MODULES = {
    "furious-five": "arena.games.furious_five",
    "five": "arena.games.five",
    "five-or-less": "arena.games.five_or_less",
    "five-card-rummy": "arena.games.five_card_rummy",
    "rummy-five": "arena.games.rummy_five",
    "octablitz": "arena.games.octablitz",
}


def game_names() -> list[str]:
    """Names of the games that are installed, in a stable order."""
    return [name for name in _MODULES if _load(name) is not None]


def _load(name: str) -> type[Game] | None:
    import importlib

    try:
        module = importlib.import_module(_MODULES[name])
    except ModuleNotFoundError:
        return None
    game_class: type[Game] = module.GAME
    return game_class


def game_class(name: str) -> type[Game]:
    """The Game class called ``name``; raise :class:`OptionError` if unknown."""
    cls = _load(name) if name in _MODULES else None
    if cls is None:
        raise OptionError(f"unknown game {name!r} (known: {', '.join(game_names())})")
    return cls


def make_game(name: str, num_players: int, options: dict[str, Any] | None = None) -> Game:
    """A validated game: unknown game, player count or option raise OptionError."""
    return game_class(name)(num_players, options)
