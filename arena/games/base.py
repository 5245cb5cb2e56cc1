"""The interface every Five Arena game implements.

A game is pure rules: no I/O, no clock, no concurrency, deterministic from a
seed.  The shape follows OpenSpiel: a :class:`Game` holds the parameters (number
of players and validated options) and makes :class:`State` objects; a state says
who must decide now, what each deciding seat may do and see, and moves on when
the decisions are applied.

Conventions shared by all games:

* Seats are numbered ``0 .. n-1``; "clockwise" / "left" is ``seat + 1 (mod n)``.
* An *action* is a short string (``"draw deck"``, ``"drop 5h 5c"``); each game
  documents its grammar in ``docs/rules/<game>.md``.  Bots answer with the index
  of an action in the list of legal actions they were sent.  A state gives
  them as a tuple, the same object for the whole step.
* An *observation* is a msgpack/JSON-friendly dict holding only what that seat
  may see at that moment; the spectator's observation (seat ``None``) holds
  only what every player and onlooker may see.
* *Events* are appended to :attr:`State.events` as the game goes; each is public
  or visible to some seats only.  Per-seat views of a game record are the events
  visible to that seat, so an event must never show a card to a seat that may
  not see it.
* Several seats may have to decide at once (the claim windows of rummy-five);
  they are decided together by :meth:`State.apply_actions`, and no deciding seat
  sees another's decision before the window closes.
"""

from __future__ import annotations

import copy
import json
import operator
import random
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, NamedTuple, Self, cast, final

from mypy_extensions import mypyc_attr

Action = str
Observation = dict[str, Any]
ScoreOrder = Literal["higher", "lower"]

DEFAULT_MAX_TURNS = 400


#: Human labels of the observation fields most games share (the envelope, turns,
#: hands, chips), for the viewers; a game's :attr:`Game.field_labels` add its own.
COMMON_FIELD_LABELS: Mapping[str, str] = {
    "game": "Game", "seat": "Seat", "players": "Players", "to_move": "To move",
    "phase": "Phase", "round": "Round", "deal": "Deal", "deals": "Deals",
    "dealer": "Dealer", "first_player": "First player", "hand_number": "Hand",
    "turn_number": "Turn", "max_turns": "Turn limit", "max_hands": "Hand limit",
    "limit": "Point limit", "target": "Target", "options": "Options",
    "hand": "Hand", "hand_sizes": "Cards in hand", "hand_points": "Hand points",
    "deck_size": "Cards in the deck", "drawn": "Card drawn", "taken": "Taken",
    "known_cards": "Known cards", "totals": "Totals", "chips": "Chips",
}


class GameError(Exception):
    """Base class of errors raised by game rules."""


class OptionError(GameError, ValueError):
    """An option is unknown or its value is invalid; the message names it."""


class IllegalActionError(GameError, ValueError):
    """An action was applied that is not legal for that seat now."""


class GameNotOverError(GameError):
    """Final scores or places were asked for before the game ended."""


class Event(NamedTuple):
    """Something that happened, for the game record.

    ``to`` is ``None`` for a public event, else the seats that may see it.
    Treat ``data`` as frozen: events are shared between a state and its clones.
    """

    kind: str
    data: Mapping[str, Any]
    to: tuple[int, ...] | None = None

    def visible_to(self, seat: int) -> bool:
        return self.to is None or seat in self.to

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, **self.data}
        if self.to is not None:
            out["to"] = list(self.to)
        return out


_tuple_new: Final = tuple.__new__
#: ``(seat,)`` for each seat: a state's deciding seats or an event's ``to`` while
#: one seat decides or sees (shared tuples, not one made per turn).
SEAT_ONLY: Final[tuple[tuple[int], ...]] = tuple((seat,) for seat in range(16))


def new_event(kind: str, data: dict[str, Any], to: tuple[int, ...] | None = None) -> Event:
    """``Event(kind, data, to)`` without the NamedTuple's interpreted ``__new__``
    (engines make events on every decision)."""
    return _tuple_new(Event, (kind, data, to))


#: Placeholder keys, as many as an observation adds to a game's public fields
#: (its private fields and the envelope): see :func:`with_room`.
_ROOM: Final[dict[str, None]] = {f"room{i}": None for i in range(6)}


def with_room(fields: Observation) -> Observation:
    """``fields`` with room in its table for the keys each observation adds:
    a game's observation copies its public fields and adds its own, a copy keeps
    its original's table, and a table that must grow is rebuilt, on every
    observation.  Keys added then deleted leave their room (and the order of the
    others as it was)."""
    fields.update(_ROOM)
    for key in _ROOM:
        del fields[key]
    return fields


def seat_view(events: Iterable[Mapping[str, Any]], seat: int | None) -> list[Mapping[str, Any]]:
    """The stored events (``Event.to_dict()`` form) that ``seat`` may see;
    ``seat=None`` is a spectator, who sees public events only."""
    return [e for e in events if "to" not in e or (seat is not None and seat in e["to"])]


def event_text(event: Mapping[str, Any]) -> str:
    """A stored event as a short line, as every viewer words it: its kind, then
    its fields (``to`` and empty ones left out; lists of names joined by spaces)."""
    parts = [str(event.get("kind", ""))]
    for key, value in event.items():
        if key in ("kind", "to") or value is None or value is False or value in ("", [], {}):
            continue
        parts.append(key if value is True else f"{key} {_value_text(value)}")
    return " ".join(parts)


def _value_text(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return value
    if kind is int:  # json.dumps's text, without its cost (a replay words every event)
        return str(value)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return " ".join(value)
    if isinstance(value, str):
        return value
    if (kind is list or kind is tuple) and all(type(item) is int for item in value):
        return f"[{','.join(map(str, value))}]"
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


OptionKind = Literal["int", "bool", "str", "cards"]


@dataclass(frozen=True)
class OptionSpec:
    """One option a game accepts: its type, default, bounds and meaning."""

    name: str
    kind: OptionKind
    default: Any
    doc: str
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] | None = None

    def parse(self, raw: Any) -> Any:
        """Convert ``raw`` (a typed value, or a string from the command line)
        to this option's type and check its bounds; raise :class:`OptionError`.
        ``None`` stands for "unset" in options whose default is ``None``."""
        if raw is None and self.default is None:
            return None
        value = self._convert(raw)
        if self.kind == "int":
            if self.minimum is not None and value < self.minimum:
                raise OptionError(f"option {self.name}={value} is below the minimum {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise OptionError(f"option {self.name}={value} is above the maximum {self.maximum}")
        if self.choices is not None and value not in self.choices:
            raise OptionError(
                f"option {self.name}={value!r} is not one of {', '.join(self.choices)}"
            )
        return value

    def _convert(self, raw: Any) -> Any:
        name = self.name
        if self.kind == "int":
            if isinstance(raw, bool):
                raise OptionError(f"option {name} takes a whole number, not {raw!r}")
            if isinstance(raw, int):
                return raw
            if isinstance(raw, str):
                try:
                    return int(raw.strip())
                except ValueError:
                    pass
            raise OptionError(f"option {name} takes a whole number, not {raw!r}")
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise OptionError(f"option {name} takes true or false, not {raw!r}")
        if self.kind == "cards":
            if isinstance(raw, str):
                cards = raw.replace(",", " ").split()
            elif isinstance(raw, (list, tuple)) and all(isinstance(c, str) for c in raw):
                cards = list(raw)
            else:
                raise OptionError(f"option {name} takes a list of cards, not {raw!r}")
            return tuple(cards)
        if not isinstance(raw, str):
            raise OptionError(f"option {name} takes a string, not {raw!r}")
        return raw


COMMON_OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "max_turns",
        "int",
        DEFAULT_MAX_TURNS,
        "turn cap per hand; a hand reaching it ends as the game's no-result hand",
        minimum=1,
    ),
    OptionSpec(
        "deck",
        "cards",
        None,
        "stack the first hand's deck: every card of the game's deck, top card first",
    ),
)


def _number(value: float) -> int | float:
    """An integral score as an ``int`` (so it travels as an integer), else as is
    (typed ``int | float``: compiled, a ``float`` result would be made a float)."""
    return int(value) if float(value).is_integer() else value


def competition_places(scores: Sequence[float], order: ScoreOrder) -> list[int]:
    """Places 1 = best from scores; equal scores share a place (1, 1, 3)."""
    sign = -1 if order == "higher" else 1
    keys = [sign * s for s in scores]
    return [1 + sum(1 for other in keys if other < k) for k in keys]


def elimination_places(out_in_hand: Sequence[int | None], totals: Sequence[float]) -> list[int]:
    """Standings of the elimination games (five, five-or-less): players still in
    (``None``) rank above everyone out, a later elimination (higher hand number)
    above an earlier one; within a group a lower total ranks higher; equal
    (group, total) share a place."""
    # Still in = out after every hand: one int comparison, no float("-inf") per key.
    after_all = 1 + max([out for out in out_in_hand if out is not None], default=0)
    outs = [after_all if out is None else out for out in out_in_hand]
    places = []
    for seat, out in enumerate(outs):
        total = totals[seat]
        place = 1
        for other, other_out in enumerate(outs):
            if other_out > out or (other_out == out and totals[other] < total):
                place += 1
        places.append(place)
    return places


_ATOMIC: frozenset[type] = frozenset({int, float, str, bool, type(None), bytes})
#: The attributes :class:`State` itself sets; :meth:`State.clone` copies them.
_BASE_ATTRIBUTES = frozenset({"game", "num_players", "seed", "_rng", "_rng_holders", "events",
                              "_legal_cache", "_undo", "_game_name", "_hides_to_move"})


def _fresh_copy(value: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of ``value`` for :meth:`State.clone`, several times faster
    than :func:`copy.deepcopy` on the lists, dicts and tuples of strings and
    numbers a state is made of.  ``memo`` keeps objects shared between
    attributes shared in the copy, as deepcopy does."""
    cls = type(value)
    if cls in _ATOMIC:
        return value
    flat = _ATOMIC.issuperset  # flat(map(type, items)): items hold no container
    if cls is tuple and flat(map(type, value)):
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    out: Any
    # A state holds no cycles, so a container enters memo once its copy is built.
    if cls is list:
        out = value.copy() if flat(map(type, value)) else [
            _fresh_copy(item, memo) for item in value]
    elif cls is dict:
        out = value.copy() if flat(map(type, value.values())) else {
            key: _fresh_copy(item, memo) for key, item in value.items()}
    elif cls is tuple:  # holds containers: copied only if one of them is
        items = [_fresh_copy(item, memo) for item in value]
        out = value if all(map(operator.is_, items, value)) else tuple(items)
    elif cls is random.Random:
        out = _copy_random(value)
    elif _frozen_dataclass(cls):
        return value  # immutable (the games' hold strings, numbers, tuples): shared
    else:
        return copy.deepcopy(value, memo)
    memo[id(value)] = out
    return out


def _frozen_dataclass(cls: type) -> bool:
    """Whether ``cls`` is a frozen dataclass (compiled, deepcopy cannot copy one:
    mypyc's ``__setstate__`` assigns its fields, which a frozen class refuses)."""
    params = getattr(cls, "__dataclass_params__", None)
    return bool(params is not None and params.frozen)


def _copy_random(rng: random.Random) -> random.Random:
    """An independent copy of ``rng`` (deepcopy copies its 625 words of
    state one by one, ~100 us; this ~50 us)."""
    out = random.Random.__new__(random.Random)
    out.setstate(rng.getstate())
    return out


# Compiled with mypyc (arena/games/native.py): classes outside the group may subclass
# these (a test's or a benchmark's game), and copy, pickle and clone make instances
# without calling __init__, as in pure Python ("serializable"). Every engine's
# subclass also allows interpreted subclasses: mypyc gives a compiled subclass of a
# serializable class an empty tp_init, so Five(3) called from Python would skip
# __init__ (mypyc/mypyc#979, open in mypy 2.4); allowing them makes tp_init call it.
@mypyc_attr(allow_interpreted_subclasses=True, serializable=True)
class Game(ABC):
    """A game's parameters; makes states.

    Subclasses set the class attributes and implement :meth:`deck` and
    :meth:`new_state`.  Options are validated here once, so states can trust
    ``self.options``.
    """

    name: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    score_order: ClassVar[ScoreOrder]
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()
    #: False when an action can name a card other seats may never see
    #: (octablitz's face-down plays): then only events may be shown publicly.
    actions_public: ClassVar[bool] = True
    #: Observation fields with one entry per seat, which the viewers (the
    #: replay page, ``arena play --human``) show with each seat; ``hand_sizes``
    #: and the viewer's own hand always are.
    seat_fields: ClassVar[tuple[str, ...]] = ()
    #: Human labels of this game's own observation fields, for the viewers
    #: (:func:`arena.games.field_labels` adds the :data:`COMMON_FIELD_LABELS`).
    field_labels: ClassVar[Mapping[str, str]] = {}

    def __init__(self, num_players: int, options: Mapping[str, Any] | None = None) -> None:
        if not self.min_players <= num_players <= self.max_players:
            raise OptionError(
                f"{self.name} is for {self.min_players}-{self.max_players} players, "
                f"not {num_players}"
            )
        self.num_players = num_players
        self.options: dict[str, Any] = self._validate(dict(options or {}))

    @classmethod
    def all_option_specs(cls) -> tuple[OptionSpec, ...]:
        return cls.option_specs + COMMON_OPTIONS

    def _validate(self, raw: dict[str, Any]) -> dict[str, Any]:
        specs = {spec.name: spec for spec in self.all_option_specs()}
        unknown = sorted(set(raw) - set(specs))
        if unknown:
            raise OptionError(
                f"unknown option {unknown[0]!r} for {self.name} "
                f"(known: {', '.join(sorted(specs))})"
            )
        values = {name: spec.default for name, spec in specs.items()}
        for name, value in raw.items():
            values[name] = specs[name].parse(value)
        # deck() may depend on other options (five's jokers), so set them first.
        self.options = values
        if values.get("deck") is not None:
            self._check_deck(values["deck"])
        self.check_options(values)
        return values

    def _check_deck(self, cards: tuple[str, ...]) -> None:
        expected = Counter(self.deck())
        given = Counter(cards)
        if given != expected:
            missing = sorted((expected - given).elements())
            extra = sorted((given - expected).elements())
            detail = []
            if missing:
                detail.append("missing " + " ".join(missing[:5]))
            if extra:
                detail.append("unexpected " + " ".join(extra[:5]))
            raise OptionError(
                f"option deck must hold exactly the {len(expected)} cards of the {self.name} "
                f"deck for {self.num_players} players ({'; '.join(detail)})"
            )

    def check_options(self, values: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Cross-option checks; raise :class:`OptionError`.  Default: none."""

    @abstractmethod
    def deck(self) -> list[str]:
        """Every card of this game's deck for ``num_players``, in a fixed order."""

    @abstractmethod
    def new_state(self, seed: int) -> State:
        """The initial state of a game shuffled from ``seed``."""

    @classmethod
    def public_decisions(cls, step: Sequence[Sequence[Any]]) -> list[tuple[int, Action]]:
        """The decisions of one recorded step (``[seat, action]`` pairs in
        :meth:`State.deciding_seats` order) that every player and spectator
        may see; a public replay shows only these.

        Default: all of them, or none when :attr:`actions_public` is False.  A
        game with private decisions (rummy-five's claim-window answers)
        publishes only what the step's public events show; a step with no
        public decision must not be shown at all, since even being asked can
        tell something about a hand.
        """
        return [(int(seat), str(action)) for seat, action in step] if cls.actions_public else []

    def public_options(self) -> dict[str, Any]:
        """Options a bot may be told: all but the stacked deck."""
        return {k: v for k, v in self.options.items() if k != "deck"}


@mypyc_attr(allow_interpreted_subclasses=True, serializable=True)
class State(ABC):
    """A game in progress.

    The base owns the public contract and enforces it the same way for every
    game; a game implements the protected hooks (``_legal_actions``, ``_apply``,
    ``_observation``, ``_scores`` and optionally ``_places`` and ``_copy_into``)
    plus :meth:`deciding_seats` and :meth:`is_terminal`.

    * :meth:`legal_actions` is ``()`` for a seat that does not decide now, else
      a non-empty tuple whose first action is the seat's default; it is built
      once per step and shared, so callers get the same immutable object.
    * :meth:`apply_actions` validates every decision against those tuples and
      changes nothing when one is wrong (:class:`IllegalActionError`).
    * :meth:`scores` and :meth:`places` raise :class:`GameNotOverError` until
      the game ends.
    * :meth:`observation` with ``seat=None`` is the spectator's view: public
      information only.
    * :meth:`clone` is an independent copy that plays on identically.
    """

    def __init__(self, game: Game, seed: int) -> None:
        self.game = game
        self.num_players = game.num_players
        self.seed = seed
        self._rng = random.Random(seed)
        #: How many states hold ``_rng`` (a one-item list shared by them): a
        #: clone shares its RNG until one of them draws (see :attr:`rng`).
        self._rng_holders = [1]
        self.events: list[Event] = []
        self._legal_cache: dict[int, tuple[Action, ...]] = {}
        #: The states before each :meth:`push` not yet undone, oldest first.
        self._undo: list[State] = []
        # Read by every observation: compiled, class attributes are looked up the
        # generic way, these instance copies directly.
        self._game_name = game.name
        self._hides_to_move = self._private_to_move

    @property
    def rng(self) -> random.Random:
        """This state's RNG (deals, reshuffles).  A clone shares it with its
        original until either draws: copying the Mersenne Twister's 625 words
        costs more than the rest of a clone, and most searches end their
        playouts before the next deal."""
        holders = self._rng_holders
        if holders[0] > 1:  # shared: take a private copy of the unchanged state
            holders[0] -= 1
            self._rng = _copy_random(self._rng)
            self._rng_holders = [1]
        return self._rng

    # -- hooks a game implements -------------------------------------------
    @abstractmethod
    def deciding_seats(self) -> tuple[int, ...]:
        """Seats that must decide now, in clockwise priority order; () when over."""

    @abstractmethod
    def is_terminal(self) -> bool:
        """Whether the game is over (then no seat decides)."""

    @abstractmethod
    def _legal_actions(self, seat: int) -> Sequence[Action]:
        """The legal actions of ``seat``, which decides now: never empty, no
        duplicates, the first one the seat's deterministic default."""

    @abstractmethod
    def _apply(self, actions: Mapping[int, Action]) -> None:
        """Apply already-validated decisions of every deciding seat."""

    @abstractmethod
    def _observation(self, seat: int | None) -> Observation:
        """What ``seat`` may see now (``None``: a spectator, public facts only)."""

    @abstractmethod
    def _scores(self) -> list[float]:
        """Final score of each seat; called only once the game is over."""

    #: True when the game overrides :meth:`_to_move_seen_by` (saves a call per observation).
    _private_to_move: ClassVar[bool] = False

    def _to_move_seen_by(self, seat: int | None) -> list[int]:
        """The deciding seats that ``seat`` (``None``: a spectator) may know of,
        the envelope's ``to_move``.  Default: all of them.  A game in which
        being asked tells something about a hand (a claim window that asks
        only the seats able to claim) shows fewer."""
        return [*self.deciding_seats()]

    def _places(self) -> list[int]:
        """Final places; called only once the game is over.  Default: by score."""
        return competition_places(self._scores(), self.game.score_order)

    #: Attributes a game's :meth:`_copy_into` shares with the original
    #: because the game only ever replaces them, never changes them in place
    #: (``tests/games/test_contract.py`` checks that every other mutable
    #: object is the copy's own); ``name[*]``: only the items of a list.
    _clone_shares: ClassVar[frozenset[str]] = frozenset()

    def _copy_into(self, other: Self) -> None:
        """Set each of the game's own attributes on ``other`` (a new state, or
        one being undone) to a copy of this state's.

        Default: every attribute the base does not own, copied deeply (see
        :func:`_fresh_copy`).  A game overrides it with a copy field by field,
        several times cheaper; a field it forgets fails ``test_contract``.
        """
        memo: dict[int, Any] = {id(self.game): self.game}
        # __getstate__: vars(self) in pure Python; compiled, the native attributes.
        for name, value in cast(dict[str, Any], self.__getstate__()).items():
            if name not in _BASE_ATTRIBUTES:
                setattr(other, name, _fresh_copy(value, memo))

    # -- the public contract -------------------------------------------------
    @final
    def legal_actions(self, seat: int) -> tuple[Action, ...]:
        """The legal actions of ``seat``: ``()`` unless it decides now, else a
        non-empty tuple whose first action is the seat's default."""
        legal = self._legal_cache.get(seat)
        if legal is None:
            if seat not in self.deciding_seats():
                return ()
            legal = self._legal_cache[seat] = tuple(self._legal_actions(seat))
            if not legal:
                raise AssertionError(f"{self.game.name}: deciding seat {seat} has no action")
        return legal

    @final
    def default_action(self, seat: int) -> Action:
        """The action a deciding seat plays when its bot does not answer."""
        return self.legal_actions(seat)[0]

    @final
    def apply_actions(self, actions: Mapping[int, Action]) -> None:
        """Apply one decision per deciding seat; raise :class:`IllegalActionError`
        (and change nothing) if a seat is missing, extra, or its action illegal."""
        if not isinstance(actions, dict):  # compiled, a dict's get is a direct call
            actions = dict(actions)
        deciding = self.deciding_seats()
        if len(deciding) == 1 == len(actions):  # the common case, checked without a loop
            seat = deciding[0]
            legal = self._legal_cache.get(seat) or self.legal_actions(seat)
            if actions.get(seat) in legal:
                try:
                    self._apply(actions)
                finally:
                    self._legal_cache.clear()
                return
        if len(actions) != len(deciding):
            raise IllegalActionError(
                f"decisions for seats {sorted(actions)} but seats {list(deciding)} decide")
        for seat in deciding:
            action = actions.get(seat)
            if action is None or action not in self.legal_actions(seat):
                if action is None:
                    raise IllegalActionError(
                        f"decisions for seats {sorted(actions)} but seats {list(deciding)} "
                        f"decide")
                raise IllegalActionError(f"seat {seat} may not {action!r} now")
        try:
            self._apply(actions)
        finally:
            self._legal_cache.clear()

    @final
    def apply_action(self, action: Action) -> None:
        """Apply the decision of the single deciding seat."""
        deciding = self.deciding_seats()
        if len(deciding) != 1:
            raise IllegalActionError(f"{len(deciding)} seats decide now, use apply_actions")
        self.apply_actions({deciding[0]: action})

    @final
    def push(self, actions: Mapping[int, Action]) -> None:
        """:meth:`apply_actions`, remembering the state before it for :meth:`undo`.

        For searches that walk a tree of decisions on one state (expectimax,
        minimax on a determinised deal): ``push`` a child, evaluate it,
        ``undo``.  A push keeps a :meth:`clone` of the state before it (the
        games' rules have no inverse: a reshuffle cannot be taken back) and an
        undo copies it back (:meth:`_copy_into`), so a push and its undo cost
        two copies besides the decision.  An illegal push raises
        :class:`IllegalActionError` and remembers nothing.
        """
        before = self.clone()
        self.apply_actions(actions)
        self._undo.append(before)

    @final
    def undo(self) -> None:
        """Back to the state before the last :meth:`push` not yet undone
        (:class:`GameError` if there is none).  Playing on after it is as if
        that push had never been made; a clone's history starts empty."""
        if not self._undo:
            raise GameError(f"{self.game.name}: nothing to undo")
        before = self._undo.pop()
        if before._rng_holders is self._rng_holders:
            self._rng_holders[0] -= 1  # the snapshot's hold on the shared RNG ends with it
        else:
            self._rng, self._rng_holders = before._rng, before._rng_holders
        self.events = before.events
        self._legal_cache = before._legal_cache
        before._copy_into(self)

    @final
    def observation(self, seat: int | None) -> Observation:
        """What ``seat`` may see now, never a card hidden from it; ``seat=None``
        is the spectator view: public information only (hand sizes, piles,
        scores, whose turn, phase), never a card any seat holds privately."""
        if seat is not None and not 0 <= seat < self.num_players:
            raise GameError(f"no seat {seat} in a {self.num_players}-player game")
        observation = self._observation(seat)
        # The envelope every game shares (docs/protocol.md, "Observations").
        observation["game"] = self._game_name
        observation["seat"] = seat
        observation["players"] = self.num_players
        observation["to_move"] = (self._to_move_seen_by(seat) if self._hides_to_move
                                  else list(self.deciding_seats()))
        return observation

    @final
    def scores(self) -> list[float]:
        """Final score of each seat (chips or points, see ``game.score_order``);
        :class:`GameNotOverError` before the end."""
        if not self.is_terminal():
            raise GameNotOverError(f"{self.game.name}: the game is not over")
        return [_number(score) for score in self._scores()]

    @final
    def places(self) -> list[int]:
        """Final place of each seat, 1 = best, equal results share a place;
        :class:`GameNotOverError` before the end."""
        if not self.is_terminal():
            raise GameNotOverError(f"{self.game.name}: the game is not over")
        return self._places()

    def reveal(self) -> dict[str, Any]:
        """What every player may see when the game ends (default: nothing more)."""
        return {}

    @final
    def clone(self) -> Self:
        """A cheap independent copy to search from: playing on it leaves this
        state alone, and it plays on exactly as this state would (same RNG).

        It shares the game and the events recorded so far (immutable) and the
        RNG until either state draws from it (see :attr:`rng`); everything
        else is copied, the base's attributes here and the game's by its
        :meth:`_copy_into`.  ``bench/playouts.py`` measures it (a few
        microseconds compiled, less than a decision): a search clones once per
        playout.  The clone's :meth:`undo` history starts empty."""
        other = type(self).__new__(type(self))
        other.game = self.game
        other.num_players = self.num_players
        other.seed = self.seed
        other._rng = self._rng
        self._rng_holders[0] += 1  # both hold self._rng until one draws (see rng)
        other._rng_holders = self._rng_holders
        other.events = self.events[:]
        other._legal_cache = self._legal_cache.copy()  # tuples of strings
        other._undo = []
        other._game_name = self._game_name
        other._hides_to_move = self._hides_to_move
        self._copy_into(other)
        return other

    # -- helpers for games ---------------------------------------------------
    def emit(self, kind: str, /, to: Sequence[int] | None = None, **data: Any) -> None:
        """Record an event, public unless ``to`` names the seats that may see it."""
        self.events.append(new_event(kind, data, None if to is None else tuple(to)))
