"""The Python bot SDK: write a function (or a :class:`Bot`), call :func:`run`.

::

    from protocol import run

    def choose(observation, legal):
        return 0            # index into legal

    if __name__ == "__main__":
        run(choose, name="first-legal")

:func:`run` owns stdin/stdout: it reads with unbuffered ``os.read`` and a
feeding unpacker (so a message is handled as soon as its bytes arrive), writes
each reply in full at once, and points ``sys.stdout`` *and* file descriptor 1 at
stderr, so a stray ``print`` can never corrupt the protocol stream.
"""

from __future__ import annotations

import os
import sys

from protocol import wire

# Not `typing.TYPE_CHECKING`: a bot's start-up must not pay for importing
# typing (and re), and mypy honours this name too.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    ChooseFunction = Callable[[dict[str, Any], list[str]], int]


class Request:
    """One request to act: reply with an index into :attr:`legal`.

    :attr:`observation`, :attr:`legal`, :attr:`events` and :attr:`time` are the
    request's fields as sent (see docs/protocol.md); missing ones are empty.
    """

    __slots__ = ("events", "id", "legal", "observation", "time")

    def __init__(self, id: int, observation: dict[str, Any], legal: list[str],
                 events: list[dict[str, Any]] | None = None,
                 time: dict[str, Any] | None = None) -> None:
        self.id = id
        self.observation = observation
        self.legal = legal
        self.events = [] if events is None else events
        self.time = {} if time is None else time

    def __repr__(self) -> str:
        return (f"Request(id={self.id!r}, observation={self.observation!r}, "
                f"legal={self.legal!r}, events={self.events!r}, time={self.time!r})")


class Bot:
    """Subclass and override :meth:`choose`; the ``on_*`` hooks are optional."""

    name = "bot"
    version = "0"
    author = ""

    def choose(self, request: Request) -> int:
        raise NotImplementedError

    def answer(self, message: dict[str, Any]) -> int:
        """The index chosen for a ``request`` message (the SDK calls this)."""
        get = message.get
        return self.choose(Request(message["id"], get("observation", {}), get("legal", []),
                                   get("events"), get("time")))

    def on_match_start(self, message: dict[str, Any]) -> None:
        """Called with the ``match_start`` message (game, options, players)."""

    def on_game_start(self, message: dict[str, Any]) -> None:
        """Called with the ``game_start`` message (seat, game number)."""

    def on_game_end(self, message: dict[str, Any]) -> None:
        """Called with the ``game_end`` message (scores, places, reveal)."""


class _FunctionBot(Bot):
    def __init__(self, choose: ChooseFunction, name: str, version: str, author: str) -> None:
        self._choose = choose
        self.name, self.version, self.author = name, version, author

    def choose(self, request: Request) -> int:
        return self._choose(request.observation, request.legal)

    def answer(self, message: dict[str, Any]) -> int:
        # The function needs no Request: one object less per move.
        get = message.get
        return self._choose(get("observation", {}), get("legal", []))


def run(
    bot: Bot | ChooseFunction,
    *,
    name: str | None = None,
    version: str = "0",
    author: str = "",
) -> None:
    """Play on stdin/stdout until the arena ends the match or closes stdin."""
    if not isinstance(bot, Bot):
        bot = _FunctionBot(bot, name or str(getattr(bot, "__name__", "bot")), version, author)
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _Session(bot, out_fd).loop()


class _Session:
    def __init__(self, bot: Bot, out_fd: int) -> None:
        self.bot = bot
        self.out_fd = out_fd
        self.reader = wire.MessageReader(wire.ARENA_LIMITS)
        self.pack = wire.packer()

    def send(self, message: dict[str, Any]) -> None:
        data = self.pack(message)
        written = os.write(self.out_fd, data)
        while written < len(data):  # a pipe may take less at once
            written += os.write(self.out_fd, data[written:])

    def loop(self) -> None:
        reader, handle = self.reader, self.handle
        while chunk := os.read(0, 1 << 16):
            reader.push(chunk)
            while (message := reader.next_message()) is not None:
                if not handle(message):
                    return

    def handle(self, message: dict[str, Any]) -> bool:
        """Answer one message; False when the match is over."""
        kind = message["type"]
        bot = self.bot
        if kind == _REQUEST:  # the common case first
            self.send({"type": _ACTION, "id": message["id"], "index": int(bot.answer(message))})
        elif kind == wire.HELLO:
            cut = wire.HELLO_TEXT_MAX  # what the arena keeps
            self.send({"type": wire.HELLO, "name": str(bot.name)[:cut],
                       "version": str(bot.version)[:cut], "author": str(bot.author)[:cut],
                       "protocol": wire.PROTOCOL_VERSION})
        elif kind == wire.MATCH_START:
            bot.on_match_start(message)
        elif kind == wire.GAME_START:
            bot.on_game_start(message)
        elif kind == wire.GAME_END:
            bot.on_game_end(message)
        elif kind == wire.MATCH_END:
            return False
        return True


_REQUEST, _ACTION = wire.REQUEST, wire.ACTION
