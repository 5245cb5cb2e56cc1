"""Games drawn as text for a terminal: one viewer's observation, the events it
saw, the legal actions as a numbered menu.

Shared by ``arena show`` (a stored game replayed, from a seat's view or the
spectator's) and ``arena play --human`` (a person's turn).  It draws only what
it is given: an observation already holds exactly what its viewer may see.
Which fields belong to each seat (:attr:`arena.games.base.Game.seat_fields`)
and how an event reads (:func:`arena.games.base.event_text`) are the game's and
the engine's, shared with the HTML replay viewer, so both views agree.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from arena.games import seat_fields
from arena.games.base import event_text

WIDTH = 100
#: Fields drawn in the header and seat lines rather than as table facts.
ENVELOPE = ("game", "seat", "players", "to_move", "phase", "hand", "hand_sizes")
#: Fields that never change during a game (``arena rules`` lists them).
CONSTANT = ("options",)


def value_text(value: Any) -> str:
    """A field's value as short text: cards joined by spaces, ``-`` for nothing."""
    if value is None or value == [] or value == ():
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return " ".join(_item_text(item) for item in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{key} {value_text(item)}" for key, item in value.items())
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _item_text(item: Any) -> str:
    """A list's item: containers bracketed, so that lists of them read apart."""
    if isinstance(item, (list, tuple)):
        return f"[{value_text(item)}]"
    if isinstance(item, Mapping):
        return f"{{{value_text(item)}}}"
    return value_text(item)


def observation_lines(observation: Mapping[str, Any], names: Sequence[str],
                      since: Mapping[str, Any] | None = None) -> list[str]:
    """One viewer's observation: whose turn, a line per seat (its cards, its
    per-seat fields, the viewer's hand), then the table's other fields; with
    ``since`` (the observation before) only those that changed."""
    viewer = observation.get("seat")
    sizes = observation.get("hand_sizes") or []
    per_seat = [name for name in seat_fields(str(observation.get("game")))
                if isinstance(observation.get(name), (list, tuple))]
    to_move = ", ".join(seat_label(seat, names, viewer) for seat in observation.get("to_move", ()))
    lines = [f"{observation.get('phase', '')}; to move: {to_move or '-'}"]
    for seat in range(int(observation.get("players") or len(names))):
        parts = [f"{sizes[seat]} cards"] if seat < len(sizes) else []
        parts += [f"{field} {value_text(observation[field][seat])}" for field in per_seat
                  if seat < len(observation[field])]
        lines.append(f"  {seat_label(seat, names, viewer)}: {', '.join(parts)}")
    if viewer is not None and "hand" in observation:
        lines.append(f"  your hand: {value_text(observation['hand'])}")
    facts = [f"{key} {value_text(value)}" for key, value in observation.items()
             if key not in ENVELOPE and key not in CONSTANT and key not in per_seat
             and (since is None or key not in since or since[key] != value)]
    lines += textwrap.wrap("; ".join(facts), WIDTH, initial_indent="  ",
                           subsequent_indent="  ")
    return lines


def seat_label(seat: int, names: Sequence[str], viewer: int | None = None) -> str:
    """``seat 1 (name)``, with ``you`` for the viewer's own seat."""
    name = names[seat] if 0 <= seat < len(names) else "?"
    return f"seat {seat} ({'you' if seat == viewer else name})"


def event_lines(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """Events as the replay viewer words them, one line each."""
    return [f"  * {event_text(event)}" for event in events]


def menu_lines(legal: Sequence[str]) -> list[str]:
    """The legal actions as a menu numbered from 1, in columns."""
    items = [f"{number:>3}) {action}" for number, action in enumerate(legal, 1)]
    width = max(map(len, items)) + 2
    columns = max(1, WIDTH // width)
    return ["".join(item.ljust(width) for item in items[start : start + columns]).rstrip()
            for start in range(0, len(items), columns)]
