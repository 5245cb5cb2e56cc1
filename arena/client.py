"""The arena's side of the wire protocol: one :class:`BotClient` per bot process.

Every call either returns what the bot said or raises a :class:`BotFault`;
nothing a bot sends can raise anything else.  Deadlines are absolute
``trio.current_time()`` values; a call that misses one raises
:class:`TimeoutFault`.  Cancellation (from an outer scope) propagates as usual.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import trio

from arena.faults import IllegalActionFault, ProtocolFault, TimeoutFault
from arena.process import BotProcess
from protocol import wire


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
    is a timeout."""

    handshake: float = 10.0
    move: float = 1.0
    bank: float = 10.0

    def to_dict(self) -> dict[str, float]:
        return {"handshake": self.handshake, "move": self.move, "bank": self.bank}


@dataclass
class Clock:
    """One seat's remaining bank for the current game."""

    control: TimeControl
    bank: float = field(init=False)

    def __post_init__(self) -> None:
        self.bank = self.control.bank

    def deadline(self, start: float) -> float:
        return start + self.control.move + self.bank

    def spend(self, elapsed: float) -> None:
        self.bank = max(0.0, self.bank - max(0.0, elapsed - self.control.move))

    def as_message(self) -> dict[str, int]:
        return {"move_ms": int(self.control.move * 1000), "bank_ms": int(self.bank * 1000)}


class BotClient:
    """Speaks the protocol to one bot process."""

    def __init__(self, process: BotProcess) -> None:
        self.process = process
        self.reader = wire.MessageReader(wire.BOT_LIMITS)
        self.pending: deque[dict[str, Any]] = deque()
        self.info = BotInfo()
        self.next_id = 1
        #: Replies with a stale or unknown id, and unexpected messages, ignored so far.
        self.ignored = 0

    async def send(self, message: dict[str, Any], deadline: float) -> None:
        """Write one message; a bot that stops reading its stdin cannot block
        the table past ``deadline``."""
        with trio.move_on_at(deadline):
            await self.process.send(wire.pack(message))
            return
        raise TimeoutFault("did not read its input before the deadline")

    async def _next_message(self, deadline: float) -> dict[str, Any]:
        with trio.move_on_at(deadline):
            while not self.pending:
                data = await self.process.receive()
                try:
                    self.pending.extend(self.reader.feed(data))
                except wire.ProtocolViolation as exc:
                    raise ProtocolFault(str(exc)) from None
            return self.pending.popleft()
        raise TimeoutFault("no reply before the deadline")

    async def handshake(self, timeout: float) -> BotInfo:
        """Send ``hello`` and wait for the bot's ``hello``."""
        deadline = trio.current_time() + timeout
        await self.send({"type": wire.HELLO, "protocol": wire.PROTOCOL_VERSION}, deadline)
        while True:
            message = await self._next_message(deadline)
            if message["type"] == wire.HELLO:
                self.info = BotInfo(_text(message.get("name")), _text(message.get("version")),
                                    _text(message.get("author")))
                return self.info
            self.ignored += 1

    async def request(
        self,
        observation: dict[str, Any],
        legal: list[str],
        events: list[dict[str, Any]],
        clock: Clock,
    ) -> int:
        """Ask for an action; return the chosen index into ``legal``.

        Spends the seat's clock.  Raises TimeoutFault, IllegalActionFault,
        ProtocolFault or CrashFault.
        """
        request_id = self.next_id
        self.next_id += 1
        start = trio.current_time()
        deadline = clock.deadline(start)
        try:
            await self.send({"type": wire.REQUEST, "id": request_id, "observation": observation,
                             "legal": legal, "events": events, "time": clock.as_message()},
                            deadline)
            while True:
                message = await self._next_message(deadline)
                if message["type"] != wire.ACTION or message.get("id") != request_id:
                    self.ignored += 1
                    continue
                index = message.get("index")
                if not isinstance(index, int) or isinstance(index, bool):
                    raise IllegalActionFault(f"action index {index!r} is not an integer")
                if not 0 <= index < len(legal):
                    raise IllegalActionFault(
                        f"action index {index} out of range 0..{len(legal) - 1}")
                return index
        finally:
            clock.spend(trio.current_time() - start)

    async def notify(self, message: dict[str, Any], timeout: float) -> None:
        """Send a message that needs no answer, within ``timeout`` seconds."""
        await self.send(message, trio.current_time() + timeout)


def _text(value: object, limit: int = 200) -> str:
    return str(value)[:limit] if value is not None else ""
