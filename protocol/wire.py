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

import gc
from collections import deque
from itertools import compress

import msgpack

# Not `typing.TYPE_CHECKING`: a bot's start-up must not pay for importing
# typing (and re), and mypy honours this name too.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

PROTOCOL_VERSION = 1
#: Characters the arena keeps of a hello's name, version and author.
HELLO_TEXT_MAX = 200

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


class Limits:
    """Bounds on one incoming message.

    (A plain class, not a dataclass: importing :mod:`dataclasses` would add
    4 ms to every Python bot's start-up.)
    """

    __slots__ = ("max_container_len", "max_depth", "max_message_bytes", "max_str_len")

    def __init__(self, max_message_bytes: int = 64 * 1024, max_container_len: int = 4096,
                 max_str_len: int = 16 * 1024, max_depth: int = 16) -> None:
        if max_depth < 1:
            raise ValueError("max_depth must be at least 1: a message is a map")
        self.max_message_bytes = max_message_bytes
        self.max_container_len = max_container_len
        self.max_str_len = max_str_len
        self.max_depth = max_depth

    def __repr__(self) -> str:
        return (f"Limits(max_message_bytes={self.max_message_bytes}, "
                f"max_container_len={self.max_container_len}, "
                f"max_str_len={self.max_str_len}, max_depth={self.max_depth})")


#: msgpack's C unpacker refuses values nested deeper than this by itself
#: (StackError): a limit this high costs the reader nothing.
MSGPACK_MAX_DEPTH = 1024
#: What the arena accepts from a bot: replies are tiny.
BOT_LIMITS = Limits()
#: What a bot accepts from the arena: observations can be larger; nesting is
#: left to msgpack, which spares every message the depth check.
ARENA_LIMITS = Limits(max_message_bytes=8 * 1024 * 1024, max_container_len=1 << 20,
                      max_str_len=1 << 20, max_depth=MSGPACK_MAX_DEPTH)


def pack(message: dict[str, Any]) -> bytes:
    """Encode one message."""
    data: bytes = msgpack.packb(message, use_bin_type=True)
    return data


def packer() -> Callable[[dict[str, Any]], bytes]:
    """A function like :func:`pack` for one thread's use, which keeps its
    ``msgpack.Packer`` and buffer (0.15 us a message instead of 0.45)."""
    return msgpack.Packer(use_bin_type=True).pack


class MessageReader:
    """Turns a byte stream into messages, enforcing :class:`Limits`.

    :meth:`push` queues bytes; :meth:`next_message` parses one message at a
    time, so a caller can stop reading a stream as soon as it has seen enough
    (:meth:`feed` does both).  Complete messages are parsed by msgpack's C
    unpacker; the bytes of a message that is still incomplete are walked by
    :class:`_HeaderWalk`, so a header that declares more than the limits
    allow is refused at once instead of being waited for.
    """

    def __init__(self, limits: Limits = BOT_LIMITS) -> None:
        self.limits = limits
        self._inbox: deque[bytes | memoryview] = deque()
        self._fed = 0
        #: Size in bytes of the message :meth:`next_message` last returned.
        self.last_size = 0
        # Stream offset where the message being read began (tell() moves on
        # inside a partly read message, so it cannot serve for this).
        self._message_start = 0
        # The slice last given to the unpacker, until its partial message is walked.
        self._slice: bytes | memoryview | None = None
        self._slice_start = 0
        self._walk = _HeaderWalk(limits)
        # Whether the reader checks the depth itself (else msgpack does).
        self._checks_depth = limits.max_depth < MSGPACK_MAX_DEPTH
        self._unpacker = msgpack.Unpacker(
            raw=False,
            strict_map_key=False,
            # A backstop only: msgpack enforces it loosely; the reader is exact.
            max_buffer_size=2 * limits.max_message_bytes,
            max_str_len=limits.max_str_len,
            max_bin_len=limits.max_str_len,
            max_array_len=limits.max_container_len,
            max_map_len=limits.max_container_len,
            max_ext_len=_MAX_EXT_LEN,
        )

    def push(self, data: bytes) -> None:
        """Queue bytes; nothing is parsed until :meth:`next_message`."""
        if data:
            self._inbox.append(data)

    def pending(self) -> bool:
        """Whether bytes are queued that :meth:`next_message` has not consumed."""
        return bool(self._inbox) or self._unpacker.tell() != self._fed

    def next_message(self) -> dict[str, Any] | None:
        """The next complete message, or None when the queued bytes hold no
        more.  Raises :class:`ProtocolViolation` as soon as the bytes break a
        limit, even inside a message that is not complete yet."""
        unpacker = self._unpacker
        while True:
            if unpacker.tell() == self._fed:
                # Every byte fed so far is in a message already returned (the
                # common case): feed the next slice, or stop, without asking
                # the unpacker (which would raise StopIteration).
                if not self._inbox:
                    return None
                self._feed_slice()
            try:
                value = next(unpacker)
            except StopIteration:
                self._walk_partial()
                if not self._inbox:
                    return None
                self._feed_slice()
                continue
            except (ValueError, msgpack.ExtraData, msgpack.FormatError,
                    msgpack.StackError, TypeError) as exc:
                raise ProtocolViolation(f"malformed msgpack: {exc}") from None
            start = self._message_start
            end = self._message_start = unpacker.tell()
            self.last_size = size = end - start
            if size > self.limits.max_message_bytes:
                raise self._too_large()
            if type(value) is not dict or type(value.get("type")) is not str:
                raise _not_a_message(value)
            if self._checks_depth and any(map(_IS_CONTAINER, map(type, value.values()))):
                self._check_depth(value, start, end)  # (a map of scalars is one deep)
            return value

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add bytes; return every complete message they finish."""
        self.push(data)
        messages: list[dict[str, Any]] = []
        while (message := self.next_message()) is not None:
            messages.append(message)
        return messages

    def _feed_slice(self) -> None:
        # Slices no larger than the limit: a flood is caught after at most one
        # slice beyond it, never by one giant allocation.
        limit = self.limits.max_message_bytes
        chunk = self._inbox.popleft()
        if len(chunk) > limit:
            view = memoryview(chunk)
            self._inbox.appendleft(view[limit:])
            chunk = view[:limit]
        try:
            self._unpacker.feed(chunk)
        except msgpack.BufferFull:
            raise self._too_large() from None
        self._slice, self._slice_start = chunk, self._fed
        self._fed += len(chunk)

    def _walk_partial(self) -> None:
        """Check the incomplete message's bytes from the last slice."""
        if self._slice is None:
            return
        data, start = self._slice, self._slice_start
        self._slice = None
        if self._fed - self._message_start > self.limits.max_message_bytes:
            raise self._too_large()
        if self._message_start >= start:
            # The incomplete message began in this slice: walk it afresh.
            self._walk.reset()
            data = memoryview(data)[self._message_start - start :]
        if data:
            self._walk.walk(data)

    def _too_large(self) -> ProtocolViolation:
        return ProtocolViolation(f"message larger than {self.limits.max_message_bytes} bytes")

    def _check_depth(self, value: dict[str, Any], start: int, end: int) -> None:
        """Check the nesting of the message parsed from stream bytes ``start:end``."""
        limit = self.limits.max_depth
        data, offset = self._slice, self._slice_start
        if data is not None and start >= offset:
            # No copy when the message is the whole slice (one message per read).
            message = bytes(data[start - offset : end - offset])
            headers = len(message.translate(None, _NOT_CONTAINER_LEADS))
        else:
            headers = end - start  # it began in an earlier slice, whose bytes are gone
        if not _nests_within(value, limit, headers):
            raise ProtocolViolation(f"message nested deeper than {limit}")


def _not_a_message(value: Any) -> ProtocolViolation:
    if type(value) is not dict:
        return ProtocolViolation(f"a message must be a map, got {type(value).__name__}"
                                 f"{_text_hint(value)}")
    return ProtocolViolation("a message must have a string 'type'")


def _text_hint(value: Any) -> str:
    """A hint when a bot's output starts like text: printable ASCII is a msgpack
    integer (``h`` is 104), the usual sign of a ``print`` to stdout."""
    if type(value) is int and (0x20 <= value < 0x7F or value in (0x09, 0x0A, 0x0D)):
        return (f" (byte {chr(value)!r}: the bot seems to have written text to stdout; "
                f"stdout carries msgpack only, write logs to stderr)")
    return ""


# Kinds of msgpack values, by what their header declares.
_SCALAR, _BYTES, _EXT, _ARRAY, _MAP, _UNUSED = range(6)


def _lead_table() -> tuple[tuple[int, int, int], ...]:
    """For each first byte of a value: its kind, the width of the length field
    that follows (0: none), and the length when the first byte holds it (for
    scalars: the bytes that follow it; for fixext: the data length)."""
    leads = [(_SCALAR, 0, 0)] * 256
    for lead in range(0x80, 0x90):
        leads[lead] = (_MAP, 0, lead & 0x0F)
    for lead in range(0x90, 0xA0):
        leads[lead] = (_ARRAY, 0, lead & 0x0F)
    for lead in range(0xA0, 0xC0):
        leads[lead] = (_BYTES, 0, lead & 0x1F)
    leads[0xC1] = (_UNUSED, 0, 0)
    for lead, width in ((0xC4, 1), (0xC5, 2), (0xC6, 4), (0xD9, 1), (0xDA, 2), (0xDB, 4)):
        leads[lead] = (_BYTES, width, 0)
    for lead, width in ((0xC7, 1), (0xC8, 2), (0xC9, 4)):
        leads[lead] = (_EXT, width, 0)
    for lead, size in ((0xCA, 4), (0xCB, 8), (0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8),
                       (0xD0, 1), (0xD1, 2), (0xD2, 4), (0xD3, 8)):
        leads[lead] = (_SCALAR, 0, size)
    for lead, size in ((0xD4, 1), (0xD5, 2), (0xD6, 4), (0xD7, 8), (0xD8, 16)):
        leads[lead] = (_EXT, 0, size)
    for lead, kind, width in ((0xDC, _ARRAY, 2), (0xDD, _ARRAY, 4), (0xDE, _MAP, 2),
                              (0xDF, _MAP, 4)):
        leads[lead] = (kind, width, 0)
    return tuple(leads)


_LEADS = _lead_table()
#: The values that are one byte long: fixints, nil, false and true.
_ONE_BYTE_VALUES = bytes(lead for lead in range(256) if _LEADS[lead] == (_SCALAR, 0, 0))
#: How many bytes :meth:`_HeaderWalk._skip_run` looks at in one go.
_RUN_WINDOW = 4096
#: Every byte but the first bytes of non-empty containers' headers (fixmap and
#: fixarray of 1 to 15 items, array 16/32, map 16/32).
_NOT_CONTAINER_LEADS = bytes(
    lead for lead in range(256)
    if not (0x81 <= lead <= 0x8F or 0x91 <= lead <= 0x9F or 0xDC <= lead <= 0xDF))
#: Ext types are not part of the protocol (the unpacker refuses any data in one).
_MAX_EXT_LEN = 0


class _HeaderWalk:
    """Walks the headers of one incomplete message, resumably, and checks each
    declared length against :class:`Limits` as soon as its header is complete.

    It never looks inside a string's body (it skips it), so its work is one
    step per value, and each byte of a message is walked at most once however
    the message is cut into reads.
    """

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.reset()

    def reset(self) -> None:
        """Start afresh at the first byte of a message."""
        #: The start of a header cut off by the end of the data so far.
        self._head = b""
        #: Bytes of the current value's body still to come.
        self._skip = 0
        #: Values still owed by each open container; [0] is the message itself.
        self._open = [1]
        self._owed = 1
        #: Bytes of the message walked so far (headers and skipped bodies).
        self._walked = 0

    def walk(self, data: bytes | memoryview) -> None:
        """Walk the next bytes of the message; raise on the first violation."""
        if self._head:
            data = self._head + bytes(data)
            self._head = b""
        at, end = 0, len(data)
        while at < end:
            if self._skip:
                step = min(self._skip, end - at)
                self._skip -= step
                self._walked += step
                at += step
                continue
            if self._owed == 0:
                self.reset()
            kind, width, length = _LEADS[data[at]]
            if kind == _SCALAR and length == 0 and len(self._open) > 1:
                at = self._skip_run(data, at)
                continue
            if end - at <= width:
                self._head = bytes(data[at:])
                return
            if width:
                length = int.from_bytes(data[at + 1 : at + 1 + width], "big")
            at += 1 + width
            self._walked += 1 + width
            self._value(kind, length)

    def _skip_run(self, data: bytes | memoryview, at: int) -> int:
        """Skip a run of one-byte values (small integers, nil, booleans) at C
        speed, up to the end of the innermost open container (or a window's
        worth: the walk comes back for more); return where the walk goes on."""
        opened = self._open
        window = bytes(data[at : at + min(opened[-1], _RUN_WINDOW)])
        run = len(window) - len(window.lstrip(_ONE_BYTE_VALUES))
        opened[-1] -= run
        self._owed -= run
        self._walked += run
        while len(opened) > 1 and opened[-1] == 0:
            opened.pop()
        return at + run

    def _value(self, kind: int, length: int) -> None:
        limits = self.limits
        opened = self._open
        if len(opened) == 1 and kind != _MAP:
            raise ProtocolViolation("a message must be a map")
        opened[-1] -= 1
        self._owed -= 1
        if kind == _SCALAR:
            self._skip = length
        elif kind == _BYTES:
            if length > limits.max_str_len:
                raise ProtocolViolation(
                    f"a string of {length} bytes exceeds the limit of {limits.max_str_len}")
            self._skip = length
        elif kind == _EXT:
            if length > _MAX_EXT_LEN:
                raise ProtocolViolation("malformed msgpack: ext types are not allowed")
            self._skip = length + 1
        elif kind == _UNUSED:
            raise ProtocolViolation("malformed msgpack: unused byte 0xc1")
        else:
            if length > limits.max_container_len:
                raise ProtocolViolation(f"a container of {length} items exceeds the limit "
                                        f"of {limits.max_container_len}")
            if len(opened) > limits.max_depth:
                raise ProtocolViolation(f"message nested deeper than {limits.max_depth}")
            items = 2 * length if kind == _MAP else length
            opened.append(items)
            self._owed += items
        while len(opened) > 1 and opened[-1] == 0:
            opened.pop()
        # Every value still owed takes at least one byte.
        least = self._walked + self._skip + self._owed
        if least > limits.max_message_bytes:
            raise ProtocolViolation(f"message larger than {limits.max_message_bytes} bytes "
                                    f"(its headers declare at least {least})")


_IS_CONTAINER = frozenset((dict, list)).__contains__


def _nests_within(value: Any, limit: int, headers: int) -> bool:
    """Whether ``value`` nests at most ``limit`` deep (a scalar is 0 deep), given
    that it holds at most ``headers`` non-empty maps and arrays, itself included
    (:meth:`MessageReader._check` counts the bytes that could be their headers).

    Level by level, each level in a few C calls: :func:`gc.get_referents`
    lists the values of all its maps and the items of all its arrays at once
    (a dict's or list's traversal visits every one), and the containers among
    them are picked out without a Python step per value.  (Map keys are never
    containers: msgpack refuses unhashable keys.)  Every level but the last
    holds a non-empty container, so below ``depth`` levels at most one more
    than the non-empty containers not yet seen remain: the walk stops as soon
    as those cannot reach past ``limit`` (usually before the first level,
    which makes the common case one C-speed count of the message's bytes).
    """
    depth = 0
    level = [value] if _IS_CONTAINER(type(value)) else []
    while level and depth + headers + 1 > limit:
        depth += 1
        if depth > limit:
            return False
        headers -= len(level) - level.count([]) - level.count({})
        children = gc.get_referents(*level)
        level = list(compress(children, map(_IS_CONTAINER, map(type, children))))
    return True
