"""What each viewer of a finished game saw, step by step: the replay viewer's data,
computed once per game and stored (``replay_views``), so that a report with a
replay of every game only copies it into pages.

A game's stored actions are replayed through its engine
(``make_game(...).new_state(seed)``, then ``apply_actions`` per step), and at
every step one *viewer* is shown: a spectator (``state.observation(None)``) or
one seat (``state.observation(seat)``).

Where the line is drawn
-----------------------
The spectator's view holds the spectator observations, the public decisions
(:meth:`Game.public_decisions`; a step with none is left out, merged into the
position before it, since even being asked can tell something about a hand) and
the public events: nothing any seat held privately.  Each seat's view is kept
apart, on top of the spectator's: what that seat saw besides (its hand and other
private fields, its own decisions, the events shown to it).  Whoever serves a
seat's view decides who may see it (a report's seat files, the server's owners).

Where an action can name face-down cards (``Game.actions_public`` False:
octablitz), every step is still shown, by who played and the public events of
the play.  A record that does not replay exactly on this code's engines (a
database written by other code) shows its decisions and events without the table.

Views are encoded compactly (see "compact encoding" below): per position only
the observation fields that changed, growing lists as the appended items,
field names once, the whole deflated and base64-encoded (``replay.js``
inflates it with the browser's ``DecompressionStream``).

:data:`VIEWS_FORMAT` names this code's encoding: a stored view of another format
is computed again (:func:`views`), never shown.  Nothing here depends on the
seed being shown: a sealed game's views hold no seed (pages add it when revealed).
"""

from __future__ import annotations

import base64
import json
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import msgpack

from arena.games import field_labels, game_class, make_game, seat_fields
from arena.games.base import Game, GameError, Observation, event_text
from arena.games.loop import Step
from arena.store.records import GameRecord, PublicDecisions

#: The encoding of stored views: bump it when what :func:`views` computes changes
#: (the engines' observations, the encoding, the page context), so that views
#: stored by older code are computed again rather than shown.
VIEWS_FORMAT = 1

#: A shown decision: [seat, text] or [seat, text, 1] when the arena played it
#: for a faulted seat; text None where the viewer may know who decided, not what.
Move = list[Any]
#: An event as a viewer's log shows it: the seats it is for (None: public), its text.
LogLine = tuple[tuple[int, ...] | None, str]


@dataclass(slots=True)
class Position:
    """One point of a viewer's replay: the decisions just shown, the events
    they led to (public ones in ``log``, the viewer's private ones in
    ``private``), and the viewer's observation afterwards (None: not replayed)."""

    #: The record steps this position covers (its shown step, then hidden ones).
    steps: range
    moves: list[Move]
    log: list[str]
    private: list[str]
    observation: Observation | None


@dataclass(frozen=True)
class Replayed:
    """A stored game replayed through its engine: per state (``k``: after ``k``
    steps) each viewer's observation (index 0 the spectator, ``1 + seat`` a
    seat), and per step the events it emitted (index 0: those before the first
    step) and what its public events say each seat did (for hidden actions)."""

    observations: list[list[Observation]]
    events: list[list[LogLine]]
    plays: list[dict[int, str]]


@dataclass(frozen=True)
class ReplayData:
    """A page's embedded data (the spectator's view) and each seat's file's."""

    spectator: dict[str, Any]
    seats: list[dict[str, Any]]
    #: Whether the record replayed, so that the table can be drawn.
    replayed: bool


class StoredFacts(Protocol):
    """What views need of a stored game (:class:`arena.store.database.StoredGame`)."""

    @property
    def game(self) -> str: ...
    @property
    def options(self) -> dict[str, Any]: ...
    @property
    def seed(self) -> int: ...
    @property
    def seats(self) -> list[str]: ...
    @property
    def faults(self) -> list[dict[str, Any]]: ...


@dataclass(frozen=True)
class ReplayViews:
    """A game's replay as stored: whether its record replayed, the spectator's view
    and each seat's (each :func:`pack`-ed, as ``replay.js`` reads it), and what its
    page shows besides the viewer (:func:`replay_context`)."""

    replayed: bool
    spectator: str
    seats: list[str]
    context: dict[str, Any]

    def dump(self) -> bytes:
        """The stored bytes (msgpack; the views as their deflated bytes, not base64; the
        context deflated too: a long game's public events take more than its views)."""
        context = zlib.compress(msgpack.packb(self.context), 6)
        return msgpack.packb([self.replayed, base64.b64decode(self.spectator),
                              [base64.b64decode(seat) for seat in self.seats], context])

    @classmethod
    def load(cls, data: bytes) -> ReplayViews:
        """The views :meth:`dump` stored."""
        replayed, spectator, seats, context = msgpack.unpackb(data)
        return cls(replayed, _base64(spectator), [_base64(seat) for seat in seats],
                   msgpack.unpackb(zlib.decompress(context), strict_map_key=False))


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def views(game: StoredFacts, record: GameRecord) -> ReplayViews:
    """Compute a game's :class:`ReplayViews` from its stored record."""
    replayed = replay(game, record)
    data = _replay_data(game, record, replayed)
    return ReplayViews(data.replayed, pack(data.spectator),
                       [pack(seat) for seat in data.seats] if data.replayed else [],
                       replay_context(game, record, replayed=data.replayed,
                                      texts=_public_texts(replayed)))


def replay_context(game: StoredFacts, record: GameRecord, *, replayed: bool = False,
                   texts: Sequence[str] | None = None) -> dict[str, Any]:
    """What a replay page shows besides the viewer: the bots' stderr tails and
    handshake info, the faults by seat, the end-of-game reveal, and as text
    (for a record that does not replay) the spectator's decisions (``steps``:
    per shown step, (seat, bot, action, played by the arena)) and public events.
    ``texts``: the public events' :func:`event_text` in order, if known (a replay's)."""
    seats = len(game.seats)
    # The organiser publishes the bots' own stderr tails, to help their authors.  A seat
    # whose record holds none shows its fault's tail (the one its fault box shows).
    stderr = record.stderr + [""] * (seats - len(record.stderr))
    for fault in game.faults:
        if not stderr[fault["seat"]] and fault.get("stderr_tail"):
            stderr[fault["seat"]] = fault["stderr_tail"]
    bot_info = record.bot_info + [{}] * (seats - len(record.bot_info))
    faulted = defaultdict(list)
    for fault in game.faults:
        faulted[fault["seat"]].append(fault["kind"])
    names = dict(enumerate(game.seats))
    steps = [[(move[0], names.get(move[0], "?"), move[1], len(move) > 2)
              for move in position.moves if move[1] is not None]
             for position in ([] if replayed else timeline(game, record, None, None)[1:])]
    steps = [step for step in steps if step]
    shown = sum(map(len, steps))
    public = [event for event in record.events if "to" not in event]
    if texts is None or len(texts) != len(public):
        texts = [event_text(event) for event in public]
    # An event's text without its kind: what follows the kind (event_text's first word).
    return {"stderr": stderr, "faulted": dict(faulted), "bot_info": bot_info,
            "reveal": record.reveal, "steps": steps,
            "events": [(kind := event.get("kind", ""), text[len(str(kind)):].strip())
                       for event, text in zip(public, texts, strict=True)],
            "hidden_actions": bool(record.actions) and not steps,
            "private_decisions": bool(steps) and shown < sum(map(len, record.actions))}


def pack(data: Any) -> str:
    """``data`` as replay.js reads it: compact JSON, deflated (raw), base64."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    return base64.b64encode(deflate.compress(text) + deflate.flush()).decode("ascii")


def unpack(text: str) -> Any:
    """The data :func:`pack` packed."""
    return json.loads(zlib.decompress(base64.b64decode(text), -15))


# -- what each viewer saw ---------------------------------------------------------------

def replay_data(game: StoredFacts, record: GameRecord) -> ReplayData:
    """The spectator's view of a game and each seat's view on top of it,
    encoded for ``replay.js`` (see :func:`encode` and :func:`encode_seat`)."""
    return _replay_data(game, record, replay(game, record))


def _replay_data(game: StoredFacts, record: GameRecord, replayed: Replayed | None
                 ) -> ReplayData:
    """:func:`replay_data` of a game already replayed (``replayed``: :func:`replay`)."""
    published = _published(game, record)
    spectator = timeline(game, record, None, replayed, published)
    seats = [timeline(game, record, seat, replayed, published)
             for seat in range(len(game.seats))]
    keys = _keys([spectator, *seats])
    page = encode(spectator, keys)
    return ReplayData(
        spectator={"game": game.game, "keys": keys,
                   "seat_fields": list(seat_fields(game.game)),
                   "labels": field_labels(game.game),
                   "reveal": record.reveal, "steps": page},
        seats=[{"seat": seat, "steps": encode_seat(view, spectator, page, keys)}
               for seat, view in enumerate(seats)],
        replayed=replayed is not None)


def timeline(game: StoredFacts, record: GameRecord, viewer: int | None,
             replayed: Replayed | None,
             public_steps: tuple[bool, list[list[tuple[int, str]]]] | None = None
             ) -> list[Position]:
    """What ``viewer`` (a seat, or None for a spectator) saw of the game, position by position.

    A step is shown to the viewer if it made one of the step's decisions or one
    is public, or if the game's actions are hidden altogether (then every step
    is shown, by who decided and the public events).  A step not shown is merged
    into the position before it.  Whose turn it is lists only the deciding seats
    the viewer may know of, except at the viewer's own decisions, where the
    observation is exactly what the seat was sent.  ``replayed`` is the game
    replayed (:func:`replay`); without it the positions hold no observation.
    ``public_steps``: :func:`_published`, if known (the same for every viewer).
    """
    hidden, published = public_steps or _published(game, record)
    steps = record.actions
    own = [viewer is not None and any(int(seat) == viewer for seat, _ in step)
           for step in steps]
    shown = [k for k in range(len(steps)) if hidden or own[k] or published[k]]
    arena_from = arena_default_from(game.faults)
    positions = []
    for start, end in zip([-1, *shown], [*shown, len(steps)], strict=True):
        plays = replayed.plays[start] if hidden and replayed is not None and start >= 0 \
            else {}
        moves = [] if start < 0 else _moves(steps[start], start, published[start], hidden,
                                            viewer, arena_from, plays)
        observation = None
        if replayed is None:
            lines = _log_lines(record.events) if start < 0 else []
        else:
            lines = replayed.events[end] if end == start + 1 else [
                line for k in range(start + 1, end + 1) for line in replayed.events[k]]
            observation = replayed.observations[end][0 if viewer is None else 1 + viewer]
            if end < len(steps) and not own[end]:
                observation = _to_move_known(observation, steps[end], published[end], hidden)
        public, private = _split(lines, viewer)
        positions.append(Position(range(max(start, 0), end), moves, public, private,
                                  observation))
    return positions


def _split(lines: Sequence[LogLine], viewer: int | None) -> tuple[list[str], list[str]]:
    """The public lines' texts, and those of the private ones shown to ``viewer``."""
    public, private = [], []
    for to, text in lines:
        if to is None:
            public.append(text)
        elif viewer in to:
            private.append(text)
    return public, private


def _to_move_known(observation: Observation, step: Step, published: list[tuple[int, str]],
                   hidden: bool) -> Observation:
    """``observation`` with whose turn it is cut to the deciding seats of ``step`` that
    anyone may know of."""
    to_move = observation["to_move"]
    if not to_move:
        return observation
    known = _known_deciders(step, published, hidden)
    for seat in to_move:
        if seat not in known:
            return {**observation, "to_move": [seat for seat in to_move if seat in known]}
    return observation


def _published(game: StoredFacts, record: GameRecord
               ) -> tuple[bool, list[list[tuple[int, str]]]]:
    """Whether the game's actions are hidden altogether, and each step's public
    decisions (:meth:`Game.public_decisions`)."""
    cls = _game_class(game.game)
    hidden = cls is None or not _actions_public(cls, record)
    public: PublicDecisions = cls.public_decisions if cls is not None else _none_public
    return hidden, [public(step) for step in record.actions]


def _actions_public(cls: type[Game], record: GameRecord) -> bool:
    return cls.actions_public and record.actions_public


def _public_texts(replayed: Replayed | None) -> list[str] | None:
    """The public events' texts of a replayed game, in order."""
    if replayed is None:
        return None
    return [text for step in replayed.events for to, text in step if to is None]


def replay(game: StoredFacts, record: GameRecord) -> Replayed | None:
    """Replay a stored game through its engine; None if it does not replay
    exactly (an unknown game or option, an illegal action, other events than
    the stored ones: a record of other code).  What its public events say each seat
    did (``plays``) is worked out only where the actions are hidden (it is shown only
    there)."""
    try:
        state = make_game(game.game, len(game.seats), dict(game.options)).new_state(game.seed)
        viewers = [None, *range(len(game.seats))]
        raw = [state.observation(v) for v in viewers]
        observations = [[_plain(observation) for observation in raw]]
        events = [[e.to_dict() for e in state.events]]
        frozen: _Frozen = {}
        for step in record.actions:
            seen = len(state.events)
            state.apply_actions({int(seat): str(action) for seat, action in step})
            before, raw = raw, [state.observation(v) for v in viewers]
            observations.append([_plain_since(*views, frozen) for views in zip(
                raw, before, observations[-1], strict=True)])
            events.append([e.to_dict() for e in state.events[seen:]])
    except (GameError, ValueError, TypeError):
        return None
    if record.events and not _same_events(events, record.events):
        return None
    cls = _game_class(game.game)
    hidden = cls is None or not _actions_public(cls, record)
    return Replayed(observations, [_log_lines(step) for step in events],
                    [_plays(step) for step in events[1:]] if hidden else [])


def _same_events(replayed: list[list[dict[str, Any]]], stored: list[Any]) -> bool:
    """Whether the replay's events (per step) are the stored ones: compared as they are
    first (a tuple never equals a list), in JSON's types only where that differs."""
    flat = [event for step in replayed for event in step]
    return flat == stored or _plain(flat) == stored


def _plays(events: Iterable[Mapping[str, Any]]) -> dict[int, str]:
    """Per seat, the first public event of a step that names it, as text (its seat left out)."""
    plays: dict[int, str] = {}
    for event in events:
        seat = event.get("seat")
        if "to" not in event and isinstance(seat, int) and seat not in plays:
            plays[seat] = event_text({k: v for k, v in event.items() if k != "seat"})
    return plays


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """``value`` in JSON's types, as stored (tuples become lists)."""
    kind = type(value)
    if kind is list or kind is tuple:
        return [item if type(item) in _SCALARS else _plain(item) for item in value]
    if kind is dict:
        return {key: item if type(item) in _SCALARS else _plain(item)
                for key, item in value.items()}
    return value


#: Per replay, the plain copy of each immutable value met, by its id (the value kept
#: alive beside it, so that its id is not reused).
_Frozen = dict[int, tuple[Any, Any]]


def _plain_since(observation: Observation, before: Observation,
                 plain_before: Observation, frozen: _Frozen | None = None) -> Observation:
    """:func:`_plain` of ``observation``, sharing the values of ``plain_before``
    (the plain ``before``, the previous observation) that did not change: a long
    game's thousands of observations then hold few objects of their own, and
    converting them costs little.  ``frozen``: the plain copies of immutable values
    already converted (an engine hands the same tuples to every viewer, step after
    step), shared in turn, so that every viewer's observations hold the same objects."""
    memo: _Frozen = {} if frozen is None else frozen
    get = before.get
    # The fields that are the very objects they were and cannot have changed (scalars,
    # immutable values met before) keep their plain copies: only the others are looked at.
    changed = [key for key, value in observation.items()
               if value is not get(key, _MISSING) or (type(value) not in _SCALARS
                                                       and id(value) not in memo)]
    if len(changed) < len(observation) and list(observation) == list(before):
        out = dict(plain_before)
        for key in changed:
            out[key] = _plain_field(observation[key], before.get(key, _MISSING),
                                    plain_before.get(key), memo)
        return out
    out = {}
    for key, value in observation.items():
        out[key] = _plain_field(value, before.get(key, _MISSING), plain_before.get(key), memo)
    return out


def _plain_field(value: Any, old: Any, plain_old: Any, memo: _Frozen) -> Any:
    """:func:`_plain` of an observation's field, ``old`` its value before (``plain_old``
    that one's plain copy, shared if it did not change)."""
    if type(value) in _SCALARS:  # most fields: nothing to convert or share
        return value
    known = memo.get(id(value))
    if known is not None:
        return known[1]
    if old is not value and old == value:
        return plain_old
    if old is value and not _frozen(value):
        # The very same object is unchanged only if it cannot change: a game may
        # hand out a list it then changes in place.
        return _plain(value)
    plain = _plain(value)
    if type(value) is tuple and (old is value or _frozen(value)):
        memo[id(value)] = (value, plain)
    return plain


_MISSING = object()


def _frozen(value: Any) -> bool:
    if type(value) in _SCALARS:
        return True
    if type(value) is not tuple:
        return False
    for item in value:  # noqa: SIM110 - a loop, not all(): runs for every field of every step
        if type(item) not in _SCALARS and not _frozen(item):
            return False
    return True


def _log_lines(events: Iterable[Mapping[str, Any]]) -> list[LogLine]:
    return [(tuple(e["to"]) if "to" in e else None, event_text(e)) for e in events]


def _game_class(name: str) -> type[Game] | None:
    try:
        return game_class(name)
    except GameError:
        return None


def _none_public(_step: Sequence[Sequence[Any]]) -> list[tuple[int, str]]:
    return []


def _known_deciders(step: Step, published: list[tuple[int, str]], hidden: bool) -> list[int]:
    """The seats deciding ``step`` that anyone may know of (``published``: its public
    decisions)."""
    if hidden:  # every step is shown: who plays is public, what is not
        return [int(seat) for seat, _ in step]
    return [seat for seat, _ in published]


def _moves(step: Step, number: int, published: list[tuple[int, str]], hidden: bool,
           viewer: int | None, arena_from: Mapping[int, int],
           plays: Mapping[int, str]) -> list[Move]:
    """The decisions of step ``number`` that ``viewer`` may see (``published``: its
    public ones), marked where
    the arena played for a faulted seat.  Where the actions are hidden, another
    seat's decision reads as what the public events say it did (``plays``;
    None if they do not say)."""
    seen = {seat for seat, _ in published}
    moves: list[Move] = []
    for seat, action in step:
        seat = int(seat)
        if seat == viewer or seat in seen or hidden:
            text = str(action) if seat == viewer or seat in seen else plays.get(seat)
            by_arena = number >= arena_from.get(seat, number + 1)
            moves.append([seat, text, 1] if by_arena else [seat, text])
    return moves


def arena_default_from(faults: Iterable[Mapping[str, Any]]) -> dict[int, int]:
    """Per faulted seat, the first action step the arena played for it: a
    fault's ``step`` (absent or None in older records: nothing is marked)."""
    first: dict[int, int] = {}
    for fault in faults:
        step = fault.get("step")
        if isinstance(step, int):
            seat = fault["seat"]
            first[seat] = min(step, first.get(seat, step))
    return first


# -- compact encoding (replay.js decodes it) ---------------------------------------------
#
# A page's steps are [moves, delta, log] per position.  A delta lists changes
# of the observation as pairs: [k, value] sets field keys[k]; [-k - 1, items]
# appends items to the list in field keys[k].  A seat file's steps are
# [p, moves, delta, log] per position of the seat's view: p is the page's
# position it follows.  Moving to it applies the page's deltas up to p, then
# the seat's; moves 0 are the page's at p; the log holds the seat's private
# events, shown after the page's at p where the position starts the page's p
# (p greater than the previous one's; a seat's own hidden decision does not).
# Trailing empty fields are left out.

Delta = list[Any]


def diff(before: Mapping[str, Any], after: Mapping[str, Any], keys: Mapping[str, int]) -> Delta:
    """The delta turning observation ``before`` into ``after`` (a field that
    disappears is set to None)."""
    out: Delta = []
    get = before.get
    # The very objects they were (shared: unchanged) are passed over at C speed.
    for name in [name for name, value in after.items() if value is not get(name, _MISSING)]:
        value, old = after[name], get(name, _MISSING)
        if value == old:
            continue
        if (type(value) is list and type(old) is list and 0 < len(old) < len(value)
                and value[:len(old)] == old):
            out += [-keys[name] - 1, value[len(old):]]
        else:
            out += [keys[name], value]
    if len(before) != len(after) or before.keys() != after.keys():
        for name in before.keys() - after.keys():
            out += [keys[name], None]
    return out


def apply(state: Mapping[str, Any], delta: Delta, keys: Sequence[str]) -> dict[str, Any]:
    """``state`` with ``delta`` applied (as replay.js does)."""
    out = dict(state)
    for index in range(0, len(delta), 2):
        code, value = delta[index], delta[index + 1]
        if code < 0:
            name = keys[-code - 1]
            current = out.get(name)
            out[name] = (current if isinstance(current, list) else []) + value
        else:
            out[keys[code]] = value
    return out


def encode(positions: Sequence[Position], keys: Sequence[str]) -> list[list[Any]]:
    """A viewer's positions as a page's steps."""
    index = {name: k for k, name in enumerate(keys)}
    steps: list[list[Any]] = []
    state: Mapping[str, Any] = {}
    for position in positions:
        target = position.observation or {}
        steps.append(_trim([position.moves, diff(state, target, index), position.log]))
        state = target
    return steps


def encode_seat(positions: Sequence[Position], page: Sequence[Position],
                page_steps: Sequence[Sequence[Any]], keys: Sequence[str]) -> list[list[Any]]:
    """A seat's positions as a seat file's steps, on top of the page's
    (``page``: the spectator's positions, ``page_steps`` their :func:`encode`)."""
    index = {name: k for k, name in enumerate(keys)}
    starts = {p.steps.start: number for number, p in enumerate(page) if number}
    steps: list[list[Any]] = []
    state: dict[str, Any] = {}
    done = -1  # the page's position applied last
    for number, position in enumerate(positions):
        aligned = 0 if number == 0 else starts.get(position.steps.start)
        follows = done if aligned is None else aligned
        for p in range(done + 1, follows + 1):
            state = apply(state, _field(page_steps[p], 1), keys)
        done = follows
        moves = 0 if aligned is not None and position.moves == page[follows].moves \
            else position.moves
        target = position.observation or {}
        steps.append(_trim([follows, moves, diff(state, target, index), position.private]))
        state = dict(target)
    return steps


def decode(steps: Sequence[Sequence[Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """The observations a page's steps encode (for tests; replay.js does the same)."""
    states: list[dict[str, Any]] = []
    state: dict[str, Any] = {}
    for step in steps:
        state = apply(state, _field(step, 1), keys)
        states.append(state)
    return states


def decode_seat(steps: Sequence[Sequence[Any]], page_steps: Sequence[Sequence[Any]],
                keys: Sequence[str]) -> list[dict[str, Any]]:
    """The observations a seat file's steps encode on top of the page's."""
    states: list[dict[str, Any]] = []
    state: dict[str, Any] = {}
    done = -1
    for step in steps:
        follows = _field(step, 0) or 0
        for p in range(done + 1, follows + 1):
            state = apply(state, _field(page_steps[p], 1), keys)
        done = follows
        state = apply(state, _field(step, 2), keys)
        states.append(state)
    return states


def _field(entry: Sequence[Any], index: int) -> Any:
    return entry[index] if index < len(entry) else []


def _trim(entry: list[Any]) -> list[Any]:
    """``entry`` without its trailing empty fields."""
    while entry and (entry[-1] == [] or (type(entry[-1]) is int and entry[-1] == 0)):
        entry.pop()
    return entry


def _keys(views: Iterable[Sequence[Position]]) -> list[str]:
    """Every observation field of the views, in order of first appearance."""
    keys: dict[str, None] = {}
    for view in views:
        for position in view:
            keys.update(dict.fromkeys(position.observation or {}))
    return list(keys)
