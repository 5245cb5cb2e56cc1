"""Typed bot faults: what a bot did wrong, as opposed to an arena error.

A fault is always the bot's: it never propagates out of a table.  The referee
catches :class:`BotFault`, records it with the bot's stderr tail, plays the
seat on with its default action and restarts the bot for the next game.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar


class BotFault(Exception):
    """Base class: the bot broke the rules of engagement."""

    kind: ClassVar[str] = "fault"


class TimeoutFault(BotFault):
    """No valid reply before the deadline (move limit plus remaining bank)."""

    kind = "timeout"


class CrashFault(BotFault):
    """The bot process exited, closed its stdout, or could not be started."""

    kind = "crash"


class IllegalActionFault(BotFault):
    """The bot answered with an index that is not one of the legal actions."""

    kind = "illegal_action"


class ProtocolFault(BotFault):
    """The bot sent bytes that are not a valid message within the limits."""

    kind = "protocol_error"


FAULT_KINDS = (TimeoutFault.kind, CrashFault.kind, IllegalActionFault.kind, ProtocolFault.kind)


@dataclass(frozen=True)
class FaultRecord:
    """A fault as stored with a game."""

    seat: int
    bot: str
    kind: str
    detail: str
    stderr_tail: str
    #: Index of the first action step the arena played for this seat: every
    #: entry of this seat in ``actions[step:]`` is the default action, not the bot's.
    step: int = 0

    def to_dict(self) -> dict[str, object]:
        return {"seat": self.seat, "bot": self.bot, "kind": self.kind,
                "detail": self.detail, "stderr_tail": self.stderr_tail, "step": self.step}


def is_no_result(players: int, faulted_seats: Iterable[int]) -> bool:
    """Whether a game has no result: every seat faulted, so nobody finished it.

    Such a game counts in no rating and no place statistic (its faults still count).
    This is the one definition; ``GameResult`` and ``StoredGame`` derive it from
    their faults.
    """
    return players > 0 and set(range(players)) <= set(faulted_seats)
