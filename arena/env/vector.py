"""A game's observation and legal actions as one fixed-size numeric vector and
an action mask (the encoding is documented in docs/lab.md, "The vector").

Self-contained on purpose (the standard library and numpy only): a trained
bot's directory carries a copy of this file, so the bot encodes what it is sent
exactly as the environment did while it learned, without the arena installed.

The vector is the observation's fields, each by its :data:`SCHEMAS` encoder in
the schema's order, then one slot per possible legal action (the request's
``legal`` list, by index): the action's type one-hot, the cards it names as
counts (and in ``five`` its last card, the one left on top).  The mask has a 1
for each slot that holds a legal action; an agent answers with a slot index,
which is the index into ``legal``, as a bot does on the wire.

For speed the fields are written into a standard-library ``array('f')`` (an
item costs half what a numpy scalar does, with the same float32 rounding), each
distinct action string's slot is encoded once and kept as bytes, and the
vector is joined from those bytes in one copy.  The arena compiles this module
with its engines (arena/games/native.py); a copy runs as it is.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import index as as_int
from typing import Any, SupportsIndex, TypeAlias

import numpy as np

#: What the encoders write into: an ``array('f')``, one float32 per vector item.
Floats: TypeAlias = "array[float]"


class Encoder:
    """Writes one observation field into ``out[at:at + width]``."""

    def width(self, kinds: int, players: int) -> int:
        raise NotImplementedError

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Context:
    """What every encoder needs: the card kinds' indices, the table size and
    the observing seat (seats are written relative to it: 0 is the observer)."""

    index: Mapping[str, int]
    players: int
    seat: int


class Skip(Encoder):
    """Not encoded: the envelope's constants, options fixed for the whole game."""

    def width(self, kinds: int, players: int) -> int:
        return 0

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        return None


class Cards(Encoder):
    """A list of cards: how many of each card kind (one number per kind)."""

    def width(self, kinds: int, players: int) -> int:
        return kinds

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        index = ctx.index
        for card in value or ():
            out[at + index[card]] += 1


CARDS = Cards()


class Card(Encoder):
    """One card or null: one-hot over the card kinds (all zeros for null)."""

    def width(self, kinds: int, players: int) -> int:
        return kinds

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        if value is not None:
            out[at + ctx.index[value]] = 1


@dataclass(frozen=True)
class CardsOf(Encoder):
    """A list of maps: the counts of the cards under ``key`` in all of them."""

    key: str = "cards"

    def width(self, kinds: int, players: int) -> int:
        return kinds

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        index, key = ctx.index, self.key
        for item in value or ():
            for card in item[key] or ():
                out[at + index[card]] += 1


class SeatCards(Encoder):
    """One list of cards per seat: card counts, observer first then clockwise."""

    def width(self, kinds: int, players: int) -> int:
        return kinds * players

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        index, kinds = ctx.index, len(ctx.index)
        for cards in _rotated(value, ctx):
            for card in cards or ():
                out[at + index[card]] += 1
            at += kinds


@dataclass(frozen=True)
class Num(Encoder):
    """A number (null: 0), divided by ``scale``."""

    scale: float = 1.0

    def width(self, kinds: int, players: int) -> int:
        return 1

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        if value is not None:
            out[at] = float(value) / self.scale


@dataclass(frozen=True)
class SeatNums(Encoder):
    """One number (or flag) per seat, divided by ``scale``: observer first."""

    scale: float = 1.0

    def width(self, kinds: int, players: int) -> int:
        return players

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        scale = self.scale
        for number in _rotated(value, ctx):
            out[at] = float(number) / scale
            at += 1


class Seat(Encoder):
    """A seat or null: one-hot over the seats relative to the observer (0 is
    the observer), then one slot for null."""

    def width(self, kinds: int, players: int) -> int:
        return players + 1

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        out[at + (ctx.players if value is None else (value - ctx.seat) % ctx.players)] = 1


class SeatSet(Encoder):
    """A list of seats: a flag per seat relative to the observer."""

    def width(self, kinds: int, players: int) -> int:
        return players

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        for seat in value:
            out[at + (seat - ctx.seat) % ctx.players] = 1


@dataclass(frozen=True)
class Choice(Encoder):
    """A string from a fixed list (null: all zeros): one-hot."""

    values: tuple[str, ...]

    def width(self, kinds: int, players: int) -> int:
        return len(self.values)

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        if value is not None:
            out[at + self.values.index(value)] = 1


@dataclass(frozen=True)
class Fields(Encoder):
    """A map or null: its named fields, each by its own encoder."""

    parts: tuple[tuple[str, Encoder], ...]

    def width(self, kinds: int, players: int) -> int:
        return sum(enc.width(kinds, players) for _, enc in self.parts)

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        if value is None:
            return
        kinds = len(ctx.index)
        for key, enc in self.parts:
            enc.write(out, at, value[key], ctx)
            at += enc.width(kinds, ctx.players)


@dataclass(frozen=True)
class SeatSum(Encoder):
    """A list of maps naming a seat: per seat relative to the observer, the sum
    of ``key`` over the maps whose ``where`` field equals ``equals``."""

    key: str
    where: str
    equals: str

    def width(self, kinds: int, players: int) -> int:
        return players

    def write(self, out: Floats, at: int, value: Any, ctx: Context) -> None:
        for item in value or ():
            if item[self.where] == self.equals:
                out[at + (item["seat"] - ctx.seat) % ctx.players] += item[self.key]


def _rotated(values: Sequence[Any], ctx: Context) -> list[Any]:
    seat = ctx.seat
    return [*values[seat:], *values[:seat]]


SKIP = Skip()
ENVELOPE: dict[str, Encoder] = {"game": SKIP, "seat": SKIP, "players": SKIP, "to_move": SKIP}

#: Per game, every observation field and its encoder, in the vector's order
#: (the envelope is skipped: a seat knows who it is and that it decides).
SCHEMAS: dict[str, dict[str, Encoder]] = {
    "furious-five": {
        **ENVELOPE, "phase": Choice(("start", "draw", "over")), "round": Num(10),
        "dealer": Seat(), "turn_number": Num(100), "hand": Cards(), "hand_points": Num(50),
        "hand_sizes": SeatNums(5), "chips": SeatNums(100), "can_call": Num(),
        "call_limit": Num(5), "live_drop": CardsOf(), "live_drop_seat": Seat(),
        "drop": CardsOf(), "graveyard": Cards(), "deck_size": Num(52), "options": SKIP,
    },
    "five": {
        **ENVELOPE, "phase": Choice(("start", "drop", "over")), "hand": Cards(),
        "hand_points": Num(50), "taken": Card(), "top_discard": Card(), "discard": Cards(),
        "deck_size": Num(54), "hand_sizes": SeatNums(5), "known_cards": SeatCards(),
        "totals": SeatNums(100), "eliminated": SeatNums(), "in_hand": SeatSet(),
        "hand_number": Num(100), "first_player": Seat(), "turn_number": Num(100),
        "limit": SKIP, "max_hands": SKIP, "max_turns": SKIP, "jokers": SKIP,
    },
    "five-or-less": {
        **ENVELOPE, "phase": Choice(("precall", "turn", "draw", "over")), "hand": Cards(),
        "hand_points": Num(50), "hand_number": Num(100), "dealer": Seat(),
        "first_player": Seat(), "turn_number": Num(100), "hand_sizes": SeatNums(5),
        "known": SeatCards(), "totals": SeatNums(100), "active": SeatNums(),
        "stack_size": Num(52), "discards": Cards(), "previous_disposal": Cards(),
        "previous_player": Seat(), "disposal": Cards(), "call_max": Num(15),
        "call_below_five": SKIP, "limit": SKIP, "max_hands": SKIP, "max_turns": SKIP,
    },
    "five-card-rummy": {
        **ENVELOPE, "phase": Choice(("start", "discard", "over")), "hand_number": Num(100),
        "dealer": Seat(), "turn_number": Num(100), "max_turns": SKIP, "hand": Cards(),
        "drawn": Card(), "taken": Card(), "discard_top": Card(), "discard_pile": Cards(),
        "stock_size": Num(52), "hand_sizes": SeatNums(5), "known_cards": SeatCards(),
        "scores": SeatNums(100), "target": SKIP, "max_hands": SKIP,
    },
    "rummy-five": {
        **ENVELOPE, "phase": Choice(("turn", "claim", "claim_discard", "over")),
        "deal": Num(10), "deals": SKIP, "dealer": Seat(), "dealer_count": Num(5),
        "turn_number": Num(30), "max_turns": SKIP, "deck_size": Num(32), "hand": Cards(),
        "drawn": Card(), "hand_sizes": SeatNums(5), "exposed": SeatCards(),
        "discards": SeatCards(), "go": SeatNums(), "called": SeatNums(),
        "turns_by_seat": SeatNums(10), "chips": SeatNums(30), "pot": Num(10),
        "last_discard": Fields((("seat", Seat()), ("card", Card()))),
        "catch_barred": Cards(),
    },
    "octablitz": {
        **ENVELOPE, "phase": Choice(("lead", "follow", "over")), "deal": Num(10),
        "deals": SKIP, "dealer": Seat(), "general": Seat(), "general_wins": Num(3),
        "multiplier": Num(3), "base": SKIP, "chips": SeatNums(30), "hand": Cards(),
        "hand_sizes": SeatNums(10), "trick": Num(10), "leader": Seat(),
        "lead": Fields((("combo", Choice(("single", "multiple", "run"))), ("count", Num(5)))),
        "trick_plays": CardsOf(), "best_seat": Seat(), "last_trick": Num(),
        "must_play_down": Num(), "tricks_won": SeatNums(10), "cards_taken": SeatNums(30),
        "taken": SeatCards(), "out_up": Cards(), "down_counts": SeatNums(30),
        "my_down": Cards(), "turn_number": Num(100), "max_turns": SKIP,
    },
}
#: Fields encoded twice: (field, encoder) after the schema's own.
EXTRA: dict[str, tuple[tuple[str, Encoder], ...]] = {
    # the face-down plays of the trick in progress, per seat (their cards are hidden)
    "octablitz": (("trick_plays", SeatSum("count", "face", "down")),),
}

#: Per game, the action types: an action's words that are not cards, joined
#: by a space ("draw stack", "declare full_set"), in the slot's one-hot order.
ACTION_TYPES: dict[str, tuple[str, ...]] = {
    "furious-five": ("call", "drop", "draw deck", "draw"),
    "five": ("end", "take", "drop"),
    "five-or-less": ("pass", "call", "drop", "draw stack", "draw"),
    "five-card-rummy": (
        "draw stock", "take discard", "discard", *(f"declare {category}" for category in (
            "pair", "two_pairs", "three_of_a_kind", "sequence_3", "full_set", "straight",
            "flush", "full_house", "four_of_a_kind", "sequence_4", "straight_flush",
            "royal_flush"))),
    "rummy-five": ("win", "discard", "go discard", "pass", "catch", "set", "run"),
    "octablitz": ("lead", "up", "down"),
}

#: Per game, the most legal actions one decision can have (the mask's length);
#: each bound is argued in docs/lab.md.
MAX_ACTIONS: dict[str, int] = {
    "furious-five": 32, "five": 36, "five-or-less": 32, "five-card-rummy": 40,
    "rummy-five": 16, "octablitz": 256,
}

#: Games whose action's last card counts apart (five: the card left on top).
LAST_CARD = frozenset({"five"})
#: The most encoded action slots an encoder keeps.
MAX_SLOTS = 50_000


class VectorEncoder:
    """The vector and mask of one game at one table size.

    ``kinds`` are the game's card kinds in a fixed order (the environment
    passes its deck's, in deck order, duplicates removed)."""

    def __init__(self, game: str, players: int, kinds: Sequence[str]) -> None:
        if game not in SCHEMAS:
            raise ValueError(f"no vector encoding for game {game!r}")
        self.game = game
        self.players = players
        self.kinds = tuple(dict.fromkeys(kinds))
        self.index = {card: i for i, card in enumerate(self.kinds)}
        count = len(self.kinds)
        self.fields: list[tuple[str, Encoder, int]] = []
        at = 0
        for name, enc in (*SCHEMAS[game].items(), *EXTRA.get(game, ())):
            self.fields.append((name, enc, at))
            at += enc.width(count, players)
        self.state_size = at
        self.types = {name: i for i, name in enumerate(ACTION_TYPES[game])}
        self.last_card = game in LAST_CARD
        self.slot_size = len(self.types) + count * (2 if self.last_card else 1)
        self.max_actions = MAX_ACTIONS[game]
        self.size = self.state_size + self.max_actions * self.slot_size
        # What encode() reuses: the fields that write something, a context per
        # seat, the zeros it copies and each action string's slot, as bytes.
        self._written = [(name, enc, at) for name, enc, at in self.fields if enc is not SKIP]
        self._contexts = [Context(self.index, players, seat) for seat in range(players)]
        self._zero_state = bytes(4 * self.state_size)
        self._zero_slots = memoryview(bytes(4 * self.max_actions * self.slot_size))
        self._masks = [np.array([1] * n + [0] * (self.max_actions - n), np.int8)
                       for n in range(self.max_actions + 1)]
        self._slots: dict[str, bytes] = {}

    def layout(self) -> list[tuple[str, int, int]]:
        """(field, offset, width) of every encoded field, then of the action slots."""
        count = len(self.kinds)
        rows = [(name, at, width) for name, enc, at in self.fields
                if (width := enc.width(count, self.players))]
        return [*rows, ("legal", self.state_size, self.max_actions * self.slot_size)]

    def encode(self, observation: Mapping[str, Any], legal: Sequence[str],
               seat: SupportsIndex) -> tuple[np.ndarray, np.ndarray]:
        """The vector (float32) and the mask (int8) of ``seat``'s observation and
        legal actions (``legal`` empty: the seat does not decide, all zeros).
        Both are new writable arrays."""
        if len(legal) > self.max_actions:
            raise ValueError(f"{self.game}: {len(legal)} legal actions, more than the "
                             f"{self.max_actions} the encoding allows")
        state = array("f", self._zero_state)
        ctx = self._context(as_int(seat))  # a numpy integer too (compiled, int alone passes)
        for name, enc, at in self._written:
            if name in observation:  # a spectator's view lacks the hand
                enc.write(state, at, observation[name], ctx)
        slots = self._slots
        parts: list[Any] = [state, *[slots.get(action) or self._slot(action) for action in legal]]
        parts.append(self._zero_slots[len(legal) * self.slot_size * 4:])
        vector = np.frombuffer(bytearray().join(parts), np.float32)
        mask = self._masks[len(legal)].copy()
        return vector, mask

    def unknown_fields(self, observation: Mapping[str, Any]) -> list[str]:
        """Fields of ``observation`` the schema does not list (a test checks none)."""
        return sorted(set(observation) - set(SCHEMAS[self.game]))

    def _context(self, seat: int) -> Context:
        if 0 <= seat < self.players:
            return self._contexts[seat]
        return Context(self.index, self.players, seat)

    def _slot(self, action: str) -> bytes:
        """One legal action's slot, kept for the next time: its type one-hot, its
        cards as counts (and in five its last card one-hot)."""
        index, types = self.index, self.types
        out = array("f", bytes(4 * self.slot_size))
        words = action.split()
        cards = [word for word in words if word in index]
        kind = " ".join(word for word in words if word not in index)
        out[types[kind]] = 1
        base = len(types)
        for card in cards:
            out[base + index[card]] += 1
        if self.last_card and cards:
            out[base + len(self.kinds) + index[cards[-1]]] = 1
        if len(self._slots) >= MAX_SLOTS:  # a game meets far fewer distinct actions
            self._slots.clear()
        slot = self._slots[action] = out.tobytes()
        return slot
