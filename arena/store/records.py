"""The shape of a finished game, in one place: what the referee produces, the
store keeps, ``arena play --json`` prints and the report shows.

* :class:`GameResult`: the outcome (scores, places, faults, timing) and its
  :class:`GameRecord`.
* :class:`GameRecord`: the organiser's full record (every action, every event,
  the reveal, move times, the bots' stderr tails); JSON in and out, and the
  :class:`RecordView` of one seat or of a spectator.
* :class:`FaultRecord`: a fault as stored with a game.

Plain data: no trio, nothing of the runner, so storage and reports load
without it.
"""

from __future__ import annotations

import gc
import json
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack

from arena.games.base import Action, competition_places, seat_view
from arena.games.loop import Step

#: Per step, per deciding seat (as in ``actions``): the move's [wall, CPU] time
#: in microseconds, or None where the arena played for a faulted seat.
StepTimes = list[list[int] | None]
#: Which decisions of a recorded step everyone may see (``Game.public_decisions``).
PublicDecisions = Callable[[Sequence[Sequence[Any]]], list[tuple[int, Action]]]
#: The keys of the ``record`` object of ``arena play --json`` (a stable contract).
PLAY_JSON_RECORD_KEYS = ("actions", "events", "reveal", "times")
#: First byte of :meth:`GameRecord.pack`'s format: msgpack, zlib-compressed.
#: Older code stored zlib-compressed JSON, which starts with 0x78.
PACKED_MSGPACK = b"\x01"
#: zlib level of stored records.  On full 3-seat furious-five records (50-70 KB
#: of msgpack; bench/store_cost.py's game): level 1 0.27 ms, 1.31x the bytes of
#: the older JSON format; 3 0.34 ms, 1.10x; 5 0.68 ms, 1.00x; 6 0.86 ms, 0.97x.
#: 3 keeps the whole save well inside its 2 ms CPU budget.
RECORD_ZLIB_LEVEL = 3


def is_no_result(players: int, faulted_seats: Iterable[int]) -> bool:
    """Whether a game has no result: every seat faulted, so nobody finished it.

    Such a game counts in no rating and no place statistic (its faults still count).
    This is the one definition; ``GameResult`` and ``StoredGame`` derive it from
    their faults.
    """
    return players > 0 and set(range(players)) <= set(faulted_seats)


def forfeit_places(game_places: Sequence[int], faulted: set[int]) -> list[int]:
    """Places after forfeits: faulting seats share last place; the others keep
    their order from the game among themselves.  When every seat faulted (no
    result) every seat is last, so that no reader mistakes it for a shared win."""
    clean = [seat for seat in range(len(game_places)) if seat not in faulted]
    ranked = competition_places([game_places[s] for s in clean], "lower")
    last = len(clean) + 1 if clean else len(game_places)
    places = [last] * len(game_places)
    for seat, place in zip(clean, ranked, strict=True):
        places[seat] = place
    return places


@dataclass(frozen=True)
class FaultRecord:
    """A fault as stored with a game (``kind`` is a ``BotFault.kind``)."""

    seat: int
    bot: str
    kind: str
    detail: str
    stderr_tail: str
    #: Index of the first action step the arena played for this seat: every
    #: entry of this seat in ``actions[step:]`` is the default action, not the bot's.
    step: int = 0

    def to_dict(self) -> dict[str, object]:
        return {"seat": self.seat, "bot": self.bot, "kind": self.kind,
                "detail": self.detail, "stderr_tail": self.stderr_tail, "step": self.step}


@dataclass(frozen=True)
class Move:
    """One shown decision: who, what, and the move's [wall, CPU] time in
    microseconds (None where the arena played, or in records without times)."""

    seat: int
    action: Action
    time: list[int] | None = None


@dataclass(frozen=True)
class ShownStep:
    """A step as one viewer sees it.  ``number`` is its index in the full
    record's ``actions`` (what a fault's ``step`` counts), since hidden steps
    are left out."""

    number: int
    moves: list[Move]


@dataclass(frozen=True)
class RecordView:
    """What one seat (``seat``) or a spectator (``seat`` None) may see of a game:
    the seat's own decisions and the public ones, the events visible to it, the
    end-of-game reveal and who the bots say they are."""

    seat: int | None
    steps: list[ShownStep]
    events: list[dict[str, Any]]
    reveal: dict[str, Any]
    bot_info: list[dict[str, str]]

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat,
                "steps": [{"step": s.number, "moves": [[m.seat, m.action, m.time]
                                                       for m in s.moves]} for s in self.steps],
                "events": self.events, "reveal": self.reveal, "bot_info": self.bot_info}


@dataclass
class GameRecord:
    """The organiser's full record of one game, as stored (:meth:`pack`).

    ``actions`` replayed on the seed and options reproduce the game exactly;
    they name hidden choices too, so show a player or spectator only its
    :meth:`seat_view` or :meth:`spectator_view`.
    """

    actions: list[Step] = field(default_factory=list)
    #: Every event (``Event.to_dict()``); one with ``to`` is visible to those seats only.
    events: list[dict[str, Any]] = field(default_factory=list)
    reveal: dict[str, Any] = field(default_factory=dict)
    times: list[StepTimes] = field(default_factory=list)
    #: Per seat, the tail of the bot's stderr from this game.
    stderr: list[str] = field(default_factory=list)
    #: Per seat, the bot's ``name``, ``version``, ``author`` from its handshake.
    bot_info: list[dict[str, str]] = field(default_factory=list)
    #: Whether the action log may be shown publicly (see ``Game.actions_public``).
    actions_public: bool = True
    #: The bytes this record was unpacked from: a record read back is never
    #: changed, so storing it again (a game a Dask worker sent) need not re-pack it.
    _packed: bytes | None = field(default=None, repr=False, compare=False)

    # -- JSON in and out ------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The stored JSON object."""
        return {"actions": self.actions, "events": self.events, "reveal": self.reveal,
                "stderr": self.stderr, "bot_info": self.bot_info,
                "actions_public": self.actions_public, "times": self.times}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameRecord:
        """A record from its JSON object, also as older code stored it (keys
        missing; no ``actions_public``, which then counts as False: hide them)."""
        return cls(actions=list(data.get("actions") or []),
                   events=list(data.get("events") or []),
                   reveal=dict(data.get("reveal") or {}),
                   times=list(data.get("times") or []),
                   stderr=[str(tail) for tail in data.get("stderr") or []],
                   bot_info=[info if isinstance(info, dict) else {}
                             for info in data.get("bot_info") or []],
                   actions_public=bool(data.get("actions_public", False)))

    def pack(self) -> bytes:
        """The stored bytes: :data:`PACKED_MSGPACK`, then the JSON object as
        msgpack, zlib-compressed at :data:`RECORD_ZLIB_LEVEL`."""
        if self._packed is not None:
            return self._packed
        data = msgpack.packb(self.to_json(), use_bin_type=True)
        return PACKED_MSGPACK + zlib.compress(data, RECORD_ZLIB_LEVEL)

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (to and from Dask workers) as its packed bytes: a tenth of the
        # size of its pickled objects, and a third of the CPU to load.
        return (GameRecord.unpack, (self.pack(),))

    @classmethod
    def unpack(cls, data: bytes) -> GameRecord:
        """A record from :meth:`pack`'s bytes, or from the zlib-compressed JSON
        that older code stored (a zlib stream starts with 0x78, never 0x01)."""
        # Decoding builds tens of thousands of small containers, none in a cycle:
        # collecting garbage meanwhile would triple the CPU it takes.
        enabled = gc.isenabled()
        gc.disable()
        try:
            if data[:1] == PACKED_MSGPACK:
                raw = zlib.decompress(memoryview(data)[1:])
                record = cls.from_json(msgpack.unpackb(raw, raw=False, strict_map_key=False))
                record._packed = bytes(data)
                return record
            return cls.from_json(json.loads(zlib.decompress(data)))
        finally:
            if enabled:
                gc.enable()

    # -- views ------------------------------------------------------------------
    def seat_view(self, seat: int, public: PublicDecisions) -> RecordView:
        """What ``seat`` may see: its own decisions and the public ones
        (``public`` is the game's ``public_decisions``), the events visible to it."""
        return self._view(seat, public)

    def spectator_view(self, public: PublicDecisions) -> RecordView:
        """What anyone may see: the public decisions and the public events only;
        a step with no public decision is left out altogether (even being asked
        can tell something about a hand)."""
        return self._view(None, public)

    def _view(self, seat: int | None, public: PublicDecisions) -> RecordView:
        steps = []
        for number, step in enumerate(self.actions):
            shown = {s for s, _ in public(step)} if self.actions_public else set()
            if seat is not None:
                shown.add(seat)
            times = self.times[number] if number < len(self.times) else []
            moves = [Move(int(s), str(action), times[i] if i < len(times) else None)
                     for i, (s, action) in enumerate(step) if s in shown]
            if moves:
                steps.append(ShownStep(number, moves))
        return RecordView(seat=seat, steps=steps,
                          events=[dict(event) for event in seat_view(self.events, seat)],
                          reveal=self.reveal, bot_info=self.bot_info)


#: Percentiles of move time that a bot page and a bot check show (100: the slowest move).
MOVE_TIME_PERCENTILES = (50, 90, 99, 100)


def move_time_percentiles(times: Sequence[Sequence[int]]
                          ) -> tuple[list[float], list[float]] | None:
    """The :data:`MOVE_TIME_PERCENTILES` of [wall, CPU] microsecond move times (as
    :func:`seat_move_times` gives them), in milliseconds: (wall, CPU); None for no move."""
    if not times:
        return None
    import numpy as np  # here, not at the top: the CLI starts without numpy

    values = np.asarray(times, dtype=np.float64) / 1000.0
    wall, cpu = (np.percentile(values[:, column], MOVE_TIME_PERCENTILES).tolist()
                 for column in (0, 1))
    return wall, cpu


def seat_move_times(record: GameRecord, seats: int) -> list[list[list[int]]]:
    """Per seat, the [wall, CPU] microseconds of each of its moves in the record (moves
    without a time, the arena's for a faulted seat, left out)."""
    per_seat: list[list[list[int]]] = [[] for _ in range(seats)]
    for step, step_times in zip(record.actions, record.times, strict=False):
        for (seat, _), spent in zip(step, step_times or (), strict=False):
            if spent is not None and 0 <= seat < seats:
                per_seat[seat].append(spent)
    return per_seat


@dataclass
class GameResult:
    """Everything stored about one finished game: its outcome and its record."""

    seed: int
    bots: list[str]
    scores: list[float]
    game_places: list[int]
    places: list[int]
    faults: list[FaultRecord]
    record: GameRecord
    #: Per seat, unsolicited messages the arena ignored.
    ignored: list[int]
    duration: float
    decisions: int = 0
    #: Per seat, its moves' stderr (:mod:`arena.store.move_logs`): stored apart from
    #: the record, shown to the bot's owner only.
    move_logs: list[list[list[Any]]] = field(default_factory=list)

    @property
    def no_result(self) -> bool:
        """Every seat faulted: the game counts in no rating or place statistic."""
        return is_no_result(len(self.bots), {f.seat for f in self.faults})

    # Shortcuts to the record's fields most often read.
    @property
    def actions(self) -> list[Step]:
        return self.record.actions

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.record.events

    @property
    def times(self) -> list[StepTimes]:
        return self.record.times

    @property
    def stderr(self) -> list[str]:
        return self.record.stderr

    @property
    def bot_info(self) -> list[dict[str, str]]:
        return self.record.bot_info

    def play_json(self, game: str, options: dict[str, Any]) -> dict[str, Any]:
        """The ``arena play --json`` object, a stable contract (see README)."""
        record = self.record.to_json()
        return {
            "game": game, "seed": self.seed, "options": options, "bots": self.bots,
            "scores": self.scores, "places": self.places, "game_places": self.game_places,
            "faults": [f.to_dict() for f in self.faults],
            "duration": round(self.duration, 4), "decisions": self.decisions,
            "record": {key: record[key] for key in PLAY_JSON_RECORD_KEYS},
        }
