"""Plays games between bot processes: the only place where rules meet bots.

:class:`Entrant` owns one bot's process across the games of a match (started
once, restarted only after a fault).  :func:`play_game` runs one game: at each
step every deciding seat is asked concurrently (a trio nursery, each request
with its own deadline), so a slow bot never delays another seat's clock, and
the engine receives all decisions of a step together.

Fault policy: a faulting bot forfeits the game (faulting seats share last
place), its process is killed at once, its seat plays on with the default
action so the others' game completes, and the fault is recorded with the bot's
stderr tail and the first action step played for it.  A game in which every
seat faulted has no result (:func:`arena.store.records.is_no_result`).  The game
loop itself is :func:`arena.games.loop.turns`, shared with every sync playout.

What each bot wrote to stderr during each of its moves is kept per seat, within
the bounds of :mod:`arena.store.move_logs` (``GameResult.move_logs``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import trio

from arena.games.base import Game, State, seat_view
from arena.games.loop import Step, Turn, turns
from arena.runner.client import BotClient, BotInfo, Clock, TimeControl
from arena.runner.process import BotProcess, BotSpec, start_bot_process
from arena.runner.sandbox import Sandbox
from arena.store.faults import BotFault
from arena.store.move_logs import SeatLog
from arena.store.records import FaultRecord, GameRecord, GameResult, StepTimes, forfeit_places
from protocol import wire


class SeatClient(Protocol):
    """Who plays a seat, as the referee asks it: a bot process's
    :class:`BotClient`, or a person at the terminal (:mod:`arena.runner.human`)."""

    #: Unsolicited messages ignored so far.
    ignored: int
    #: The last move's (wall, CPU) seconds.
    last_move: tuple[float, float]

    async def request(self, observation: dict[str, Any], legal: Sequence[str],
                      events: Sequence[Mapping[str, Any]], clock: Clock) -> int: ...

    async def notify(self, message: dict[str, Any], timeout: float) -> None: ...


@dataclass
class BotRun:
    """One process of a bot, as its :class:`Entrant` saw it: how long it took
    from being started to answering ``hello`` (None if it never did, then
    ``failure`` says why), and its peak memory read at its end (None: not
    measured, e.g. it had exited already)."""

    startup: float | None
    failure: str = ""
    peak_memory_kb: int | None = None


class Entrant:
    """One bot at a table: its process and protocol client, started lazily.

    :attr:`runs` keeps a :class:`BotRun` per process started (two clock reads
    at its start, a few /proc reads at its end)."""

    def __init__(self, spec: BotSpec, control: TimeControl, match_start: dict[str, Any],
                 nursery: trio.Nursery, sandbox: Sandbox | None = None) -> None:
        self.spec = spec
        self.control = control
        self.match_start = match_start
        self.nursery = nursery
        self.sandbox = sandbox
        self.process: BotProcess | None = None
        self.client: SeatClient | None = None
        self.info = BotInfo()
        self.runs: list[BotRun] = []
        #: Why a start ahead of the first game failed (see :func:`start_early`):
        #: raised once, by the next :meth:`ensure_started`.
        self.start_fault: BotFault | None = None
        #: Set by :meth:`stop` when the process it stopped was killed at its
        #: memory limit: the fault to record, whatever the bot seemed to do.
        self.memory_fault: BotFault | None = None

    async def ensure_started(self) -> SeatClient:
        """A connected client: start, handshake and announce the match if needed."""
        if self.client is not None:
            return self.client
        if self.start_fault is not None:
            fault, self.start_fault = self.start_fault, None
            raise fault
        started = time.monotonic()
        try:
            self.process = await start_bot_process(self.spec, self.nursery, self.sandbox)
            client = BotClient(self.process)
            self.info = await client.handshake(self.control.handshake)
        except BotFault as exc:
            self.runs.append(BotRun(None, f"{exc.kind}: {exc}"))
            raise
        self.runs.append(BotRun(time.monotonic() - started))
        await client.notify(self.match_start, self.control.handshake)
        self.client = client
        return client

    def stderr_tail(self) -> str:
        return self.process.stderr.take() if self.process is not None else ""

    async def stop(self) -> str:
        """Kill the bot (if running); return the stderr tail it left."""
        tail = ""
        self.memory_fault = None
        if self.process is not None:
            self._note_memory()
            await self.process.aclose()
            self.memory_fault = self.process.memory_fault()
            tail = self.process.stderr.take()
        self.process = None
        self.client = None
        return tail

    def _note_memory(self) -> None:
        """Record the peak memory of the bot's process, once, while it lives."""
        if self.runs and self.runs[-1].peak_memory_kb is None and self.process is not None:
            self.runs[-1].peak_memory_kb = self.process.peak_memory_kb()

    async def end_match(self) -> None:
        """Tell a healthy bot the match is over, give it a moment, then stop it."""
        if self.client is not None:
            self._note_memory()
            with trio.move_on_after(1.0):
                try:
                    await self.client.notify({"type": wire.MATCH_END}, 1.0)
                    assert self.process is not None
                    await self.process.wait()
                except BotFault:
                    pass
        await self.stop()


class _Table:
    """The per-game bookkeeping of :func:`play_game`."""

    def __init__(self, state: State, entrants: Sequence[Entrant], control: TimeControl) -> None:
        self.state = state
        self.entrants = entrants
        self.clocks = [Clock(control) for _ in entrants]
        self.cursors = [0] * len(entrants)
        self.faults: list[FaultRecord] = []
        self.faulted: set[int] = set()
        self.tails = [""] * len(entrants)
        self.ignored = [0] * len(entrants)
        self.actions: list[Step] = []
        self.times: list[StepTimes] = []
        #: Per seat, its moves' stderr, and the steps at which it decided so far.
        self.logs = [SeatLog() for _ in entrants]
        self.asked = [0] * len(entrants)
        # state.events[i].to_dict(), each made once: for every seat's
        # requests and for the record.
        self._event_dicts: list[dict[str, Any]] = []

    async def fault(self, seat: int, exc: BotFault) -> None:
        entrant = self.entrants[seat]
        if entrant.client is not None:
            self.ignored[seat] += entrant.client.ignored
        tail = self.tails[seat] + await entrant.stop()
        exc = entrant.memory_fault or exc
        self.tails[seat] = ""
        self.faulted.add(seat)
        # From the step being decided on, the arena plays this seat's default action.
        self.faults.append(FaultRecord(seat, entrant.spec.name, exc.kind, str(exc), tail,
                                       step=len(self.actions)))

    def event_dicts(self) -> list[dict[str, Any]]:
        """Every event so far, as a dict (shared: treat it as frozen)."""
        dicts, events = self._event_dicts, self.state.events
        if len(dicts) < len(events):
            dicts.extend(event.to_dict() for event in events[len(dicts):])
        return dicts

    def new_events(self, seat: int) -> list[Mapping[str, Any]]:
        """The events ``seat`` may see that it has not been sent yet."""
        dicts = self.event_dicts()
        start = self.cursors[seat]
        self.cursors[seat] = len(dicts)
        return seat_view(dicts[start:], seat)

    async def decide(self, seat: int, decisions: dict[int, str]) -> list[int] | None:
        """Ask ``seat`` (or play its default action once it faulted); its
        move's [wall, CPU] microseconds, or None when the bot did not decide."""
        state = self.state
        legal = state.legal_actions(seat)
        client = self.entrants[seat].client
        move, step = self.asked[seat], len(self.actions)
        self.asked[seat] += 1
        if seat not in self.faulted and client is not None:
            try:
                index = await client.request(state.observation(seat), legal,
                                             self.new_events(seat), self.clocks[seat])
            except BotFault as exc:
                self.logs[seat].add(step, move, *move_log(client))
                await self.fault(seat, exc)
            else:
                self.logs[seat].add(step, move, *move_log(client))
                decisions[seat] = legal[index]
                wall, cpu = client.last_move
                return [round(wall * 1e6), round(cpu * 1e6)]
        decisions[seat] = state.default_action(seat)
        return None

    async def decide_all(self, turn: Turn) -> None:
        """Ask every deciding seat of ``turn`` at once; record the step's move times."""
        seats = turn.seats
        if len(seats) == 1:
            self.times.append([await self.decide(seats[0], turn.decisions)])
            return
        times: list[list[int] | None] = [None] * len(seats)

        async def decide(i: int) -> None:
            times[i] = await self.decide(seats[i], turn.decisions)

        async with trio.open_nursery() as nursery:
            for i in range(len(seats)):
                nursery.start_soon(decide, i)
        self.times.append(times)


def move_log(client: SeatClient) -> tuple[bytes, int]:
    """What the last move wrote to stderr (``BotClient.last_log``); nothing for a
    seat client without a stderr (a person's)."""
    return getattr(client, "last_log", NO_LOG)


NO_LOG = (b"", 0)


async def play_game(game: Game, seed: int, entrants: Sequence[Entrant], game_number: int,
                    control: TimeControl) -> GameResult:
    """Play one game; ``entrants[seat]`` plays ``seat``.  Never raises a BotFault."""
    started = time.monotonic()
    state = game.new_state(seed)
    table = _Table(state, entrants, control)
    failed = await start_all(entrants)
    for seat, entrant in enumerate(entrants):
        try:
            if seat in failed:
                raise failed[seat]
            client = await entrant.ensure_started()
            await client.notify({"type": wire.GAME_START, "game_number": game_number,
                                 "seat": seat, "players": game.num_players}, control.handshake)
        except BotFault as exc:
            await table.fault(seat, exc)
    decisions_made = 0
    for turn in turns(state, table.actions):
        await table.decide_all(turn)
        decisions_made += len(turn.seats)
    scores = state.scores()
    game_places = state.places()
    places = forfeit_places(game_places, table.faulted)
    reveal = state.reveal()
    for seat, entrant in enumerate(entrants):
        if seat in table.faulted or entrant.client is None:
            continue
        try:
            await entrant.client.notify({"type": wire.GAME_END, "game_number": game_number,
                                         "scores": scores, "places": places,
                                         "game_places": game_places, "reveal": reveal,
                                         "events": table.new_events(seat)},
                                        control.handshake)
        except BotFault as exc:
            await table.fault(seat, exc)
    for seat, entrant in enumerate(entrants):
        if entrant.client is not None:
            table.ignored[seat] += entrant.client.ignored
            entrant.client.ignored = 0
        table.tails[seat] += entrant.stderr_tail()
    record = GameRecord(
        actions=table.actions, events=list(table.event_dicts()), reveal=reveal,
        times=table.times, stderr=table.tails,
        bot_info=[{"name": e.info.name, "version": e.info.version, "author": e.info.author}
                  for e in entrants],
        actions_public=game.actions_public)
    return GameResult(
        seed=seed, bots=[e.spec.name for e in entrants], scores=scores,
        game_places=game_places, places=places, faults=table.faults, record=record,
        ignored=table.ignored, duration=time.monotonic() - started, decisions=decisions_made,
        move_logs=[log.entries for log in table.logs])


async def start_all(entrants: Sequence[Entrant]) -> dict[int, BotFault]:
    """Start every entrant not running yet, all at once (their start-ups and
    handshakes overlap, instead of costing a table their sum); the fault of
    each seat that could not start (its process, if any, is left to
    :meth:`Entrant.stop`)."""
    failed: dict[int, BotFault] = {}

    async def start(seat: int, entrant: Entrant) -> None:
        try:
            await entrant.ensure_started()
        except BotFault as exc:
            failed[seat] = exc

    async with trio.open_nursery() as nursery:
        for seat, entrant in enumerate(entrants):
            if entrant.client is None:
                nursery.start_soon(start, seat, entrant)
    return failed


async def start_early(entrants: Sequence[Entrant]) -> None:
    """:func:`start_all` ahead of the first game (while other tables play): a
    seat that could not start is faulted at that game, as if it had failed
    then, and is not started twice for it."""
    for seat, fault in (await start_all(entrants)).items():
        entrants[seat].start_fault = fault


async def end_all(entrants: Sequence[Entrant], finished: bool = True) -> None:
    """End every entrant's match at once: after a finished match
    :meth:`Entrant.end_match` (tell the bot, give it a moment, stop it), else
    :meth:`Entrant.stop` (kill it).  Callers shield this from cancellation."""
    async with trio.open_nursery() as nursery:
        for entrant in entrants:
            nursery.start_soon(entrant.end_match if finished else entrant.stop)


def match_start_message(game: Game, games: int) -> dict[str, Any]:
    """The ``match_start`` message: the public options only, never the deck."""
    return {"type": wire.MATCH_START, "game": game.name, "options": game.public_options(),
            "players": game.num_players, "games": games}


#: Makes a seat's entrant from (spec, control, match_start, nursery, sandbox):
#: :class:`Entrant` for a bot.
EntrantFactory = Callable[[BotSpec, TimeControl, dict[str, Any], trio.Nursery, Sandbox | None],
                          Entrant]


async def play_single_game(game: Game, seed: int, specs: Sequence[BotSpec],
                           control: TimeControl, sandbox: Sandbox | None = None,
                           factories: Mapping[int, EntrantFactory] | None = None) -> GameResult:
    """A one-game match: start ``specs[seat]`` for each seat (confined by
    ``sandbox``, default :func:`arena.runner.process.default_sandbox`), play, end the
    match.  ``factories`` makes the entrant of some seats (a person's, say).
    Every bot is stopped before this returns, also on cancellation."""
    match_start = match_start_message(game, 1)
    makers = factories or {}
    async with trio.open_nursery() as nursery:
        entrants = [makers.get(seat, Entrant)(spec, control, match_start, nursery, sandbox)
                    for seat, spec in enumerate(specs)]
        try:
            return await play_game(game, seed, entrants, 0, control)
        finally:
            with trio.CancelScope(shield=True):
                await end_all(entrants)
