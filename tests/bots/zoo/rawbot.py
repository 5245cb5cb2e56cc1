"""Raw msgpack plumbing shared by the test bots (not a bot itself).

The bots under ``tests/bots`` misbehave on the wire on purpose, so they do not
use the :mod:`protocol` SDK; this module holds only what they all repeat:
reading messages from stdin, writing one message per ``os.write`` to stdout,
and a :func:`serve` loop with hooks.  Unbuffered: every write reaches the pipe
at once, in exactly the bytes given.

It lives in ``tests/bots/zoo`` because a sandboxed bot sees only its script's
folder: zoo bots import it directly, the bots of ``tests/bots`` (whose folder,
``zoo`` included, is visible to them) add ``zoo`` to ``sys.path`` first.

A typical bot: ``serve("zoo-crash", after(2, crash))`` answers hello with its
name, plays two requests and then calls ``crash(request)`` instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import msgpack

#: A decoded message from the arena.
Message = dict[str, Any]
#: What :func:`serve` calls with a message.
Handler = Callable[[Message], object]


def messages() -> Iterator[Message]:
    """The arena's messages from stdin, in order, until end of input."""
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        yield from unpacker


def send(obj: object) -> None:
    """Pack ``obj`` and write it to stdout in a single ``os.write``."""
    os.write(1, msgpack.packb(obj))


def hello(name: object, **extra: object) -> None:
    """Answer the handshake: ``{"type": "hello", "name": name, **extra}``."""
    send({"type": "hello", "name": name, **extra})


def action(request_id: object, index: object = 0) -> Message:
    """An action message (not sent): ``{"type": "action", "id": ..., "index": ...}``."""
    return {"type": "action", "id": request_id, "index": index}


def play(request: Message, index: object = 0) -> None:
    """Answer ``request`` with ``index`` (by default 0, the first legal action)."""
    send(action(request["id"], index))


def log(line: str) -> None:
    """Write ``line`` and a newline to stderr, flushed."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def after(plays: int, misbehave: Handler) -> Handler:
    """A request handler that plays the first ``plays`` requests legally, then
    calls ``misbehave(request)`` instead of answering every later one."""
    count = 0

    def handle(request: Message) -> None:
        nonlocal count
        count += 1
        if count > plays:
            misbehave(request)
        else:
            play(request)

    return handle


def also_at(numbers: set[int], extra: Handler) -> Handler:
    """A request handler that plays every request legally, first calling
    ``extra(request)`` at the requests numbered in ``numbers`` (from 1)."""
    count = 0

    def handle(request: Message) -> None:
        nonlocal count
        count += 1
        if count in numbers:
            extra(request)
        play(request)

    return handle


def serve(name: str | None, on_request: Handler = play, *, version: str | None = None,
          **hooks: Handler) -> None:
    """Answer the arena until ``match_end`` or end of input, then return.

    ``hello`` is answered with ``name`` and ``version`` if given (or not at
    all if ``name`` is None: then the ``hello`` hook answers, see :func:`hello`).  ``on_request``
    handles every request and must answer it (by default :func:`play`).
    ``hooks`` maps other message types (``hello``, ``match_start``,
    ``game_start``, ``game_end``, ``match_end``) to a function called with
    the message first: before the answer to ``hello``, before returning at
    ``match_end``.
    """
    for msg in messages():
        kind = msg.get("type")
        if kind in hooks:
            hooks[kind](msg)
        if kind == "hello" and name is not None:
            hello(name, **({} if version is None else {"version": version}))
        elif kind == "request":
            on_request(msg)
        elif kind == "match_end":
            return
