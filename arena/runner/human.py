"""A person at the terminal takes a seat (``arena play --human SEAT``).

:class:`HumanEntrant` stands in for a bot's :class:`~arena.runner.referee.Entrant`:
the referee asks it as it asks a bot, so the other seats are played by real
bot processes under the usual rules.  At each of the person's turns it shows
the seat's observation, the events since the last turn and the legal actions
as a numbered menu (:mod:`arena.runner.terminal_view`), then reads a number from the
terminal; bad input asks again.  The person has no move time limit: their
clock is never charged.  ``q`` or end of input resigns: the seat forfeits, as
a faulted bot does, and the arena plays on for it with the default action.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

import trio

from arena.runner.client import Clock, TimeControl
from arena.runner.process import BotSpec
from arena.runner.referee import Entrant, SeatClient
from arena.runner.sandbox import Sandbox
from arena.runner.terminal_view import event_lines, menu_lines, observation_lines
from arena.store.faults import BotFault
from protocol import wire

#: The name a human seat plays under, and its command as stored.
HUMAN = BotSpec("human", "(a person at the terminal)")
QUIT = ("q", "quit")


class Resigned(BotFault):
    """The person quit (``q`` or end of input): the seat forfeits the game."""

    kind = "resigned"
    label = "Resigned"


class Terminal(SeatClient):
    """Talks to the person: draws their turn, reads their choice."""

    def __init__(self, names: Sequence[str], stdin: TextIO, stdout: TextIO) -> None:
        self.names = names
        self.stdin = stdin
        self.stdout = stdout
        self.ignored = 0
        self.last_move = (0.0, 0.0)

    def say(self, lines: Sequence[str]) -> None:
        self.stdout.write("".join(f"{line}\n" for line in lines))
        self.stdout.flush()

    async def request(self, observation: dict[str, Any], legal: Sequence[str],
                      events: Sequence[Mapping[str, Any]], clock: Clock) -> int:
        """Show the turn, return the index the person chose (no time limit:
        ``clock`` is never charged)."""
        self.say(["", *event_lines(events), *observation_lines(observation, self.names),
                  "your move:", *menu_lines(legal)])
        started = time.monotonic()
        index = await trio.to_thread.run_sync(self.choose, len(legal), abandon_on_cancel=True)
        self.last_move = (time.monotonic() - started, 0.0)
        return index

    def choose(self, count: int) -> int:
        """Read a number from 1 to ``count`` (asking again after anything else)."""
        while True:
            self.stdout.write(f"choose 1-{count} (q resigns): ")
            self.stdout.flush()
            line = self.stdin.readline()
            answer = line.strip().lower()
            if not line or answer in QUIT:
                self.say(["" if line else "(end of input)", "you resign this game"])
                raise Resigned("resigned at the terminal")
            if answer.isdigit() and 1 <= int(answer) <= count:
                return int(answer) - 1
            self.say([f"  {answer!r} is not a choice: type a number from 1 to {count}, "
                      f"or q to resign"])

    async def notify(self, message: dict[str, Any], timeout: float) -> None:
        """Show the start of the game, and at its end what happened since the last turn."""
        if message.get("type") == wire.GAME_START:
            self.say([f"you are seat {message['seat']} of {message['players']}: "
                      f"{', '.join(self.names)}"])
        elif message.get("type") == wire.GAME_END:
            self.say(["", *event_lines(message.get("events", ())), "game over"])


class HumanEntrant(Entrant):
    """An :class:`Entrant` played by a person instead of a process: at the terminal,
    or through ``seat``, another :class:`SeatClient` (a browser's, for
    ``arena serve``: :mod:`arena.server.play`)."""

    def __init__(self, spec: BotSpec, control: TimeControl, match_start: dict[str, Any],
                 nursery: trio.Nursery, sandbox: Sandbox | None = None, *,
                 names: Sequence[str] = (), stdin: TextIO = sys.stdin,
                 stdout: TextIO = sys.stdout, seat: SeatClient | None = None) -> None:
        super().__init__(spec, control, match_start, nursery, sandbox)
        self.terminal = seat if seat is not None else Terminal(names, stdin, stdout)

    async def ensure_started(self) -> SeatClient:
        self.client = self.terminal
        return self.terminal

    async def stop(self) -> str:
        self.client = None
        return ""

    async def end_match(self) -> None:
        self.client = None
