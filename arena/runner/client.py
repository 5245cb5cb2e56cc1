"""The arena's side of the wire protocol: one :class:`BotClient` per bot process.

Every call either returns what the bot said or raises a :class:`BotFault`;
nothing a bot sends can raise anything else.  Cancellation (from an outer
scope) propagates as usual.

Time: deadlines are absolute ``trio.current_time()`` values; a call that misses
one raises :class:`TimeoutFault`.  A move's clock runs from just before its
request is written until its reply has been read.  Each move's wall time and
CPU time are measured (:class:`MoveTimer`, the one place that sets a move's
deadline and charges its time); with ``TimeControl.clock == "cpu"`` the move
limit and bank are charged in the CPU time of the bot's whole process tree,
checked while the bot thinks, and a wall-clock backstop
(:data:`WALL_BACKSTOP_FACTOR` times the CPU allowance) still applies.  The
bot process's watchdog (:meth:`BotProcess.watch`) ends a move that runs out
of time, so a move costs no cancel scope; the handshake and notifications,
rarer, have one each.

Work: one bot must not cost another bot any time, and all tables share one
event loop.  So the arena reads a bot's stdout only while it awaits a reply
from it (between requests, whatever the bot writes stays in its own pipe and
blocks only the bot), parses one message at a time, stops at the first
violation, counts every message that is not the awaited reply (more than
:data:`MAX_IGNORED` messages or :data:`MAX_IGNORED_BYTES` bytes of them per
reply is a protocol fault), and yields to the other tables at every read
(:meth:`BotProcess.receive` waits first) and after every ignored message.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio

from arena.runner.process import BotProcess
from arena.store.faults import CrashFault, IllegalActionFault, ProtocolFault, TimeoutFault
from protocol import wire

#: Messages a bot may send while one reply is awaited, besides that reply
#: (stale replies, unknown types, anything left over from before the request),
#: and their total size; beyond either is a protocol fault.
MAX_IGNORED = 16
MAX_IGNORED_BYTES = wire.BOT_LIMITS.max_message_bytes
#: Request ids are drawn at random from 1..MAX_REQUEST_ID, which a JavaScript
#: number holds exactly (2^53 - 1).
MAX_REQUEST_ID = 2**53 - 1
#: With the CPU clock, a move may take this many times its CPU allowance in wall
#: time (a bot that sleeps spends no CPU), plus one second.
WALL_BACKSTOP_FACTOR = 4
#: With the CPU clock, how often at least the arena looks at a thinking bot's CPU.
CPU_CHECK_SECONDS = 0.05
CLOCKS = ("wall", "cpu")


_ID_BATCH = 64
_ids: list[int] = []


def new_request_id() -> int:
    """A fresh random request id: a bot cannot answer a request before it arrives.

    Drawn from the operating system's random source, 64 at a time: the top 53
    bits of a random 64-bit number, 0 refused, are uniform in 1..MAX_REQUEST_ID."""
    if not _ids:
        numbers = struct.unpack(f"<{_ID_BATCH}Q", os.urandom(8 * _ID_BATCH))
        _ids.extend(n >> 11 for n in numbers if n >> 11)
    return _ids.pop()


@dataclass
class BotInfo:
    """What the bot said about itself in the handshake."""

    name: str = ""
    version: str = ""
    author: str = ""


@dataclass
class TimeControl:
    """Time limits, in seconds.  A move may use ``move`` seconds for free;
    beyond that it spends the per-game ``bank``; a move that exhausts the bank
    is a timeout.  ``clock`` says what is charged: wall time, or the CPU time of
    the bot's process tree (so a busy machine never makes an honest bot late)."""

    handshake: float = 10.0
    move: float = 1.0
    bank: float = 10.0
    clock: str = "wall"

    def to_dict(self) -> dict[str, Any]:
        return {"handshake": self.handshake, "move": self.move, "bank": self.bank,
                "clock": self.clock}


@dataclass
class Clock:
    """One seat's remaining bank for the current game."""

    control: TimeControl
    bank: float = field(init=False)

    def __post_init__(self) -> None:
        self.bank = self.control.bank
        self._message: dict[str, Any] = {}
        self._message_bank = math.nan

    def spend(self, elapsed: float) -> None:
        """Take the time beyond the free move time from the bank (down to 0)."""
        beyond = elapsed - self.control.move
        if beyond > 0.0:
            self.bank = self.bank - beyond if beyond < self.bank else 0.0

    def as_message(self) -> dict[str, Any]:
        """The request's ``time`` (the same dict while the bank is unchanged)."""
        if self._message_bank != self.bank:
            self._message = {"move_ms": int(self.control.move * 1000),
                             "bank_ms": int(self.bank * 1000), "clock": self.control.clock}
            self._message_bank = self.bank
        return self._message


class MoveTimer:
    """One move's clock: its deadlines while the bot thinks, then its wall and
    CPU time, charged to the seat's :class:`Clock` by :meth:`finish`.

    The CPU time it measures depends on what is charged.  With the CPU clock:
    the bot's whole process tree, reaped children included, from /proc
    (:meth:`BotProcess.cpu_seconds`), read at the start, at every check and at
    the end.  With the wall clock, where the CPU time is only recorded: that of
    the bot's live processes, to the nanosecond, from their CPU clocks
    (:meth:`BotProcess.live_cpu_seconds`, a tenth of the cost), read once a
    move, at its end: ``since`` is the reading at the end of the bot's
    previous move, so a move's CPU time is what the bot used since its previous
    reply (thinking between moves included); reading at both ends cost about
    8% of the arena's CPU per move.
    """

    __slots__ = ("allowance", "clock", "cpu_mode", "end_cpu", "looked", "now", "read_cpu",
                 "start", "start_cpu", "wall_deadline")

    def __init__(self, clock: Clock, process: BotProcess, since: float | None = None) -> None:
        self.clock = clock
        self.cpu_mode = cpu_mode = clock.control.clock == "cpu"
        self.read_cpu = read_cpu = process.cpu_seconds if cpu_mode else process.live_cpu_seconds
        # trio.current_time() without its per-call checks (a third of the cost).
        self.now = now = trio.lowlevel.current_clock().current_time
        self.allowance = allowance = clock.control.move + clock.bank
        self.start = start = now()
        self.start_cpu = read_cpu() if cpu_mode or since is None else since
        self.looked = False
        #: No move lasts past this, whatever the clock.
        self.wall_deadline = start + (WALL_BACKSTOP_FACTOR * allowance + 1 if cpu_mode
                                      else allowance)

    def next_check(self) -> float:
        """When to look again at whether the bot is out of time."""
        if not self.cpu_mode:
            return self.wall_deadline
        if self.looked:
            left = self.allowance - (self.read_cpu() - self.start_cpu)
        else:  # asked at the start (by the watchdog): nothing used yet
            self.looked = True
            left = self.allowance
        return min(self.wall_deadline, self.now() + max(CPU_CHECK_SECONDS, left))

    def out_of_time(self) -> bool:
        if self.now() >= self.wall_deadline:
            return True
        return self.cpu_mode and self.read_cpu() - self.start_cpu >= self.allowance

    def finish(self) -> tuple[float, float]:
        """Charge the move to the clock; its (wall, CPU) seconds.  The CPU
        reading it ends with is :attr:`end_cpu`."""
        wall = self.now() - self.start
        self.end_cpu = end_cpu = self.read_cpu()
        cpu = end_cpu - self.start_cpu
        if cpu < 0.0:  # a process of the bot ended during the move
            cpu = 0.0
        self.clock.spend(cpu if self.cpu_mode else wall)
        return wall, cpu


class BotClient:
    """Speaks the protocol to one bot process."""

    def __init__(self, process: BotProcess) -> None:
        self.process = process
        self.reader = wire.MessageReader(wire.BOT_LIMITS)
        self.info = BotInfo()
        #: Messages ignored so far (stale or unknown replies, other types, and
        #: anything already received when a request was written).
        self.ignored = 0
        # Ignored while the current reply is awaited: messages, bytes.
        self._ignored_now = 0
        self._ignored_bytes_now = 0
        self._pack = wire.packer()
        #: The last move's (wall, CPU) seconds.
        self.last_move = (0.0, 0.0)
        #: What the bot wrote to stderr during the last move (between the request
        #: and the reply: :mod:`arena.store.move_logs`), and how many bytes more.
        self.last_log: tuple[bytes, int] = (b"", 0)
        # The bot's CPU reading at the end of its last move (see MoveTimer).
        self._cpu_mark: float | None = None

    async def send(self, message: dict[str, Any], deadline: float) -> None:
        """Write one message; a bot that stops reading its stdin cannot block
        the table past ``deadline``."""
        with trio.move_on_at(deadline):
            await self.process.send(self._pack(message))
            return
        raise TimeoutFault("did not read its input before the deadline")

    async def handshake(self, timeout: float) -> BotInfo:
        """Send ``hello`` and wait for the bot's ``hello``."""
        deadline = trio.current_time() + timeout
        await self._discard_received()
        await self.send({"type": wire.HELLO, "protocol": wire.PROTOCOL_VERSION}, deadline)
        with trio.move_on_at(deadline):
            message = await self._await_hello()
            self.info = BotInfo(_text(message.get("name")), _text(message.get("version")),
                                _text(message.get("author")))
            self.process.cpu_seconds(refresh=True)  # find the bot's processes once, now
            return self.info
        raise TimeoutFault("no hello before the deadline")

    async def request(
        self,
        observation: dict[str, Any],
        legal: Sequence[str],
        events: Sequence[Mapping[str, Any]],
        clock: Clock,
    ) -> int:
        """Ask for an action; return the chosen index into ``legal``.

        Spends the seat's clock.  Raises TimeoutFault, IllegalActionFault,
        ProtocolFault or CrashFault.
        """
        request_id = new_request_id()
        self._ignored_now = self._ignored_bytes_now = 0
        self.last_log = (b"", 0)
        if self.reader.pending():
            await self._discard_received()
        data = self._pack({"type": wire.REQUEST, "id": request_id, "observation": observation,
                           "legal": legal, "events": events, "time": clock.as_message()})
        process = self.process
        process.take_move_log()  # written before the request: not this move's
        timer = MoveTimer(clock, process, self._cpu_mark)
        written = False
        process.watch(timer)  # the watchdog ends the move if it runs out of time
        try:
            if (sent := process.write(data)) < len(data):  # the pipe is full
                await process.send(memoryview(data)[sent:])
            written = True
            index = (await self._await_reply(request_id)).get("index")
            if not process.timed_out:
                return index if type(index) is int and 0 <= index < len(legal) else \
                    _action_index(index, legal)
        except CrashFault:
            if not process.timed_out:
                raise
        finally:
            process.unwatch()
            self.last_move = timer.finish()
            self._cpu_mark = timer.end_cpu
            self.last_log = process.take_move_log()
        if not written:
            raise TimeoutFault("did not read its input before the deadline")
        wall, cpu = self.last_move
        raise TimeoutFault(f"no reply before the deadline ({wall:.2f} s, {cpu:.2f} s CPU)")

    async def notify(self, message: dict[str, Any], timeout: float) -> None:
        """Send a message that needs no answer, within ``timeout`` seconds."""
        await self.send(message, trio.current_time() + timeout)

    async def _discard_received(self) -> None:
        """Ignore every message received before a request is written: a reply
        counts only if it was sent after its request."""
        self._ignored_now = self._ignored_bytes_now = 0
        while self._parse_next() is not None:
            await self._ignore()

    async def _await_hello(self) -> dict[str, Any]:
        """Read until the bot's ``hello`` arrives; ignore every other message."""
        while (message := await self._next_message())["type"] != wire.HELLO:
            await self._ignore()
        return message

    async def _await_reply(self, request_id: int) -> dict[str, Any]:
        """Read until the reply to ``request_id`` arrives: an ``action`` that
        echoes it exactly (an integer, not 17.0 or "17"); ignore every other
        message."""
        reader, process = self.reader, self.process
        while True:
            # _next_message and _parse_next, inlined: the hot path.
            try:
                while (message := reader.next_message()) is None:
                    reader.push(await process.receive())
            except wire.ProtocolViolation as exc:
                raise ProtocolFault(str(exc)) from None
            reply_id = message.get("id")
            if (type(reply_id) is int and reply_id == request_id
                    and message["type"] == wire.ACTION):
                return message
            await self._ignore()

    async def _next_message(self) -> dict[str, Any]:
        while (message := self._parse_next()) is None:
            # receive() is a trio checkpoint: other tables run between reads.
            self.reader.push(await self.process.receive())
        return message

    def _parse_next(self) -> dict[str, Any] | None:
        try:
            return self.reader.next_message()
        except wire.ProtocolViolation as exc:
            raise ProtocolFault(str(exc)) from None

    async def _ignore(self) -> None:
        self.ignored += 1
        self._ignored_now += 1
        self._ignored_bytes_now += self.reader.last_size
        if self._ignored_now > MAX_IGNORED or self._ignored_bytes_now > MAX_IGNORED_BYTES:
            raise ProtocolFault(f"more than {MAX_IGNORED} messages or {MAX_IGNORED_BYTES} bytes "
                                f"that are not the awaited reply (unsolicited, stale or unknown)")
        await trio.lowlevel.checkpoint()


def _action_index(index: object, legal: Sequence[str]) -> int:
    """``index`` if it is a valid index into ``legal``; else IllegalActionFault."""
    if not isinstance(index, int) or isinstance(index, bool):
        raise IllegalActionFault(f"action index {index!r} is not an integer")
    if not 0 <= index < len(legal):
        raise IllegalActionFault(f"action index {index} out of range 0..{len(legal) - 1}")
    return index


def _text(value: object, limit: int = wire.HELLO_TEXT_MAX) -> str:
    return str(value)[:limit] if value is not None else ""
