"""The Five Arena wire format: a bare msgpack stream, one map per message.

Every message is a map with a string ``"type"``.  Unknown keys are ignored by
both sides, so fields can be added without breaking old bots.  See
``docs/protocol.md`` for every message with an example.

:class:`MessageReader` is the one place where incoming bytes become messages.
It enforces hard limits (message size, container lengths, nesting) so that a
peer cannot make the reader allocate without bound; a violation raises
:class:`ProtocolViolation`, which the arena turns into a protocol fault of the
bot that sent it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgpack

PROTOCOL_VERSION = 1

# Message types, arena -> bot.
HELLO = "hello"
MATCH_START = "match_start"
GAME_START = "game_start"
REQUEST = "request"
GAME_END = "game_end"
MATCH_END = "match_end"
# Message types, bot -> arena (the bot answers HELLO with HELLO).
ACTION = "action"


class ProtocolViolation(Exception):
    """The peer sent bytes that are not a valid message within the limits."""


@dataclass(frozen=True)
class Limits:
    """Bounds on one incoming message."""

    max_message_bytes: int = 64 * 1024
    max_container_len: int = 4096
    max_str_len: int = 16 * 1024
    max_depth: int = 16


#: What the arena accepts from a bot: replies are tiny.
BOT_LIMITS = Limits()
#: What a bot accepts from the arena: observations can be larger.
ARENA_LIMITS = Limits(max_message_bytes=8 * 1024 * 1024, max_container_len=1 << 20,
                      max_str_len=1 << 20, max_depth=32)


def pack(message: dict[str, Any]) -> bytes:
    """Encode one message."""
    data: bytes = msgpack.packb(message, use_bin_type=True)
    return data


class MessageReader:
    """Turns a byte stream into messages, enforcing :class:`Limits`."""

    def __init__(self, limits: Limits = BOT_LIMITS) -> None:
        self.limits = limits
        self._fed = 0
        # Stream offset where the message being read began (tell() moves on
        # inside a partly read message, so it cannot serve for this).
        self._message_start = 0
        self._unpacker = msgpack.Unpacker(
            raw=False,
            strict_map_key=False,
            # A backstop only: msgpack enforces it loosely; feed() is exact.
            max_buffer_size=2 * limits.max_message_bytes,
            max_str_len=limits.max_str_len,
            max_bin_len=limits.max_str_len,
            max_array_len=limits.max_container_len,
            max_map_len=limits.max_container_len,
            max_ext_len=0,
        )

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add bytes; return every complete message they finish."""
        messages: list[dict[str, Any]] = []
        limit = self.limits.max_message_bytes
        # Feed in slices no larger than the limit so a flood is caught after
        # at most one slice beyond it, never by one giant allocation.
        for start in range(0, len(data), limit):
            chunk = data[start : start + limit]
            try:
                self._unpacker.feed(chunk)
            except msgpack.BufferFull:
                raise self._too_large() from None
            self._fed += len(chunk)
            messages.extend(self._drain())
            if self._fed - self._message_start > limit:
                raise self._too_large()
        return messages

    def _too_large(self) -> ProtocolViolation:
        return ProtocolViolation(f"message larger than {self.limits.max_message_bytes} bytes")

    def _drain(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while True:
            try:
                value = next(self._unpacker)
            except StopIteration:
                return out
            except (ValueError, msgpack.ExtraData, msgpack.FormatError,
                    msgpack.StackError, TypeError) as exc:
                raise ProtocolViolation(f"malformed msgpack: {exc}") from None
            end = self._unpacker.tell()
            if end - self._message_start > self.limits.max_message_bytes:
                raise self._too_large()
            self._message_start = end
            out.append(self._check(value))

    def _check(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ProtocolViolation(f"a message must be a map, got {type(value).__name__}")
        if not isinstance(value.get("type"), str):
            raise ProtocolViolation("a message must have a string 'type'")
        if _depth(value, self.limits.max_depth) > self.limits.max_depth:
            raise ProtocolViolation(f"message nested deeper than {self.limits.max_depth}")
        return value


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of ``value``, stopping early once past ``limit``."""
    if limit < 0:
        return 1
    if isinstance(value, dict):
        children: Any = list(value.keys()) + list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return 0
    return 1 + max((_depth(c, limit - 1) for c in children), default=0)
