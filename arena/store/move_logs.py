"""Per-move logs: what each bot wrote to stderr while it thought on each move,
bounded, stored compactly apart from the game's record, and shown to the bot's
owner only (the server's seat views, ``arena report --logs`` for the organiser).

A move's log is what the bot wrote to stderr between the arena's request for
that move and its reply (:meth:`arena.runner.client.BotClient.request` reads the
pipe at both ends, so nothing written before the request or after the reply
counts).  Of each move at most :data:`MOVE_LOG_BYTES` are kept, and of each bot
at most :data:`GAME_LOG_BYTES` a game; what is cut is marked in the text
(:data:`MOVE_CUT`, :data:`GAME_CUT`).  The 4 KiB stderr tail of the game
(``GameRecord.stderr``) is kept besides, as before.

Stored per game per seat that logged anything (``move_logs``): :data:`FORMAT`,
then the seat's entries ``[step, move, text]`` as msgpack, zlib-compressed.
``step`` is the index in the record's ``actions`` of the move's step; ``move``
counts the steps at which the seat decided before it (the arena's default
actions for a faulted seat included), which is how the replay viewer finds the
move's position in the seat's view.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgpack

#: Bytes of stderr kept per move, and per bot per game (all its moves together).
MOVE_LOG_BYTES = 1024
GAME_LOG_BYTES = 64 * 1024
#: How a cut is marked at the end of a move's text.
MOVE_CUT = "\n[... {count} more bytes of this move not kept]"
GAME_CUT = "\n[... the game's log limit of {limit} bytes reached: later moves not kept]"
#: First byte of a stored seat's log: msgpack, zlib-compressed.
FORMAT = b"\x01"
ZLIB_LEVEL = 6

#: One move's log: [step, move, text] (see the module's docstring).
LogEntry = list[int | str]


@dataclass
class SeatLog:
    """One seat's log of one game as it is played, within :data:`GAME_LOG_BYTES`."""

    entries: list[LogEntry] = field(default_factory=list)
    used: int = 0
    full: bool = False

    def add(self, step: int, move: int, data: bytes, cut: int = 0) -> None:
        """Keep ``data`` (what the move wrote, ``cut`` more bytes not kept) as the
        log of ``move``, at ``step``; nothing for a move that wrote nothing."""
        if self.full or not (data or cut):
            return
        room = GAME_LOG_BYTES - self.used
        kept = data[:room]
        self.used += len(kept)
        text = kept.decode("utf-8", errors="replace")
        if len(data) > room:  # the game's budget ends within this move
            self.full = True
            text += GAME_CUT.format(limit=GAME_LOG_BYTES)
        elif cut:
            text += MOVE_CUT.format(count=cut)
        self.entries.append([step, move, text])


def pack(entries: Sequence[LogEntry]) -> bytes:
    """One seat's entries as stored."""
    return FORMAT + zlib.compress(msgpack.packb(list(entries), use_bin_type=True), ZLIB_LEVEL)


def unpack(data: bytes) -> list[LogEntry]:
    """The entries :func:`pack` stored (none from data of an unknown format)."""
    if data[:1] != FORMAT:
        return []
    entries = msgpack.unpackb(zlib.decompress(memoryview(data)[1:]), raw=False)
    return [[int(step), int(move), str(text)] for step, move, text in entries]
