"""The one game loop: who decides, ask them, apply the decisions, log the step.

Everything that plays a game to its end goes through :func:`turns`: the sync
:func:`play` (tests, benchmarks, a bot's own rollouts) and the referee, which
asks bots concurrently and so drives :func:`turns` from async code::

    for turn in turns(state, log):
        for seat in turn.seats:          # the referee asks them all at once
            turn.decisions[seat] = ...
    # here the state is terminal and ``log`` holds every step

Pure like the games: no I/O, no clock, no concurrency.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from arena.games.base import Action, GameError, IllegalActionError, Observation, State

#: One recorded step: ``[seat, action]`` per deciding seat, in
#: :meth:`State.deciding_seats` order (the stored and ``--json`` shape).
Step = list[list[Any]]
#: Decides for one seat from the whole state (tests, benchmarks).
Choose = Callable[[State, int], Action]
#: Decides as a bot does: from its observation and legal actions, an index.
BotChoose = Callable[[Observation, list[Action]], int]


class Turn:
    """One step of a game: the seats that decide now and, once the driver has
    filled it in, each one's decision.  No deciding seat sees another's
    decision: all are applied together when the driver moves on."""

    __slots__ = ("decisions", "seats")

    def __init__(self, seats: tuple[int, ...]) -> None:
        self.seats = seats
        self.decisions: dict[int, Action] = {}


def turns(state: State, log: list[Step] | None = None) -> Iterator[Turn]:
    """Yield a :class:`Turn` per step until ``state`` is over; when the driver
    asks for the next one, apply the turn's decisions (IllegalActionError if a
    seat is missing or its action illegal) and append the step to ``log``."""
    while not state.is_terminal():
        turn = Turn(_deciding(state))
        yield turn
        _step(state, turn.seats, turn.decisions, log)


def _deciding(state: State) -> tuple[int, ...]:
    """The seats that decide now in a game that is not over (never none)."""
    seats = state.deciding_seats()
    if not seats:
        raise GameError(f"{state.game.name}: the game is not over but no seat decides")
    return seats


def _step(state: State, seats: tuple[int, ...], decisions: dict[int, Action],
          log: list[Step] | None) -> None:
    """Apply one step's decisions and append the step to ``log``."""
    state.apply_actions(decisions)
    if log is not None:
        if len(seats) == 1:  # nearly every step: no comprehension frame
            seat = seats[0]
            log.append([[seat, decisions[seat]]])
        else:
            log.append([[seat, decisions[seat]] for seat in seats])


def play(state: State, choose: Choose,
         after_step: Callable[[State], None] | None = None) -> list[Step]:
    """Play ``state`` to its end, ``choose(state, seat)`` deciding for each
    deciding seat (every seat of a claim window sees the same state), calling
    ``after_step(state)`` after each step.  Returns the action log."""
    log: list[Step] = []
    if after_step is None:  # the playouts' loop: the steps of turns() without its generator
        while not state.is_terminal():  # compiled, a direct call (a bound one is generic)
            seats = _deciding(state)
            if len(seats) == 1:
                seat = seats[0]
                _step(state, seats, {seat: choose(state, seat)}, log)
            else:
                _step(state, seats, {seat: choose(state, seat) for seat in seats}, log)
        return log
    for turn in turns(state, log):
        if log:
            after_step(state)  # turns() applied the previous step before yielding this one
        for seat in turn.seats:
            turn.decisions[seat] = choose(state, seat)
    if log:
        after_step(state)
    return log


def by_seat(chooses: Sequence[Choose]) -> Choose:
    """One :data:`Choose` from one per seat: ``chooses[seat]`` decides for ``seat``."""
    return lambda state, seat: chooses[seat](state, seat)


def as_sent(value: Any) -> Any:
    """``value`` as a bot decodes it from the wire: tuples become lists (an
    engine may hand out tuples; msgpack and JSON carry arrays)."""
    if isinstance(value, dict):
        return {key: as_sent(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_sent(item) for item in value]
    return value


def bot_choose(bot: BotChoose) -> Choose:
    """A :data:`Choose` from a bot's ``choose(observation, legal) -> index``
    (the SDK's signature): the bot sees only its observation, in the shape it
    would decode from the wire, and an index out of range is an
    :class:`IllegalActionError`."""
    def choose(state: State, seat: int) -> Action:
        legal = list(state.legal_actions(seat))
        index = bot(as_sent(state.observation(seat)), legal)
        if not 0 <= index < len(legal):
            raise IllegalActionError(f"seat {seat} chose index {index} of {len(legal)}")
        return legal[index]

    return choose


def default_choose(state: State, seat: int) -> Action:
    """Every seat plays its default action (the first legal one)."""
    return state.default_action(seat)
