"""What may be shown of a game's deal while its tournament's deals are secret.

A game is *sealed* while its deal secret is not revealed (see
:mod:`arena.formats.deals`): its tournament is not finished and, for a ladder,
the period of its table is not finished either.  Of a sealed game nothing shown
(report pages, ``arena show``, exports) carries its seed or a stacked ``deck``
option; its replay is still shown, since replays show only what spectators may see.
:class:`arena.store.database.StoredGame` knows whether it is sealed and gives
what may be shown (``shown_seed``, ``shown_options``); :func:`shown_config` does
the same for a stored tournament's configuration.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The option that stacks the first deal (every game that has it: its card order).
DECK_OPTION = "deck"


def without_deck(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` without a stacked deck."""
    return {key: value for key, value in options.items() if key != DECK_OPTION}


def shown_config(tournament: Mapping[str, Any]) -> dict[str, Any]:
    """A stored tournament's configuration as it may be shown: while any of its
    games is sealed (``tournament["sealed"]``), without a stacked deck."""
    config = dict(tournament.get("config") or {})
    if tournament.get("sealed") and isinstance(config.get("options"), dict):
        config["options"] = without_deck(config["options"])
    return config


@dataclass(frozen=True)
class Seals:
    """Which games of one tournament are sealed: none once it is finished; else
    those whose table's secret (the one with the highest first table at or
    below it) is not revealed, or every game where it has no secret."""

    finished: bool
    first_tables: Sequence[int] = ()
    revealed: Sequence[bool] = ()

    def sealed(self, table: int) -> bool:
        if self.finished:
            return False
        index = bisect_right(self.first_tables, table) - 1
        return index < 0 or not self.revealed[index]
