"""Typed bot faults: what a bot did wrong, as opposed to an arena error.

A fault is always the bot's: it never propagates out of a table.  The referee
catches :class:`BotFault`, records it with the bot's stderr tail, plays the
seat on with its default action and restarts the bot for the next game.
Plain exceptions (no trio): storage and reports use the kinds and labels.
A fault as stored is an :class:`arena.store.records.FaultRecord`.
"""

from __future__ import annotations

from typing import ClassVar


class BotFault(Exception):
    """Base class: the bot broke the rules of engagement."""

    #: Stored with the game (``FaultRecord.kind``).
    kind: ClassVar[str] = "fault"
    #: What reports call it.
    label: ClassVar[str] = "Fault"


class TimeoutFault(BotFault):
    """No valid reply before the deadline (move limit plus remaining bank)."""

    kind = "timeout"
    label = "Timeout"


class CrashFault(BotFault):
    """The bot process exited, closed its stdout, or could not be started."""

    kind = "crash"
    label = "Crash"


class MemoryFault(BotFault):
    """The bot was killed at its memory limit (its cgroup's out-of-memory kill)."""

    kind = "memory"
    label = "Memory"


class IllegalActionFault(BotFault):
    """The bot answered with an index that is not one of the legal actions."""

    kind = "illegal_action"
    label = "Illegal"


class ProtocolFault(BotFault):
    """The bot sent bytes that are not a valid message within the limits."""

    kind = "protocol_error"
    label = "Protocol"


#: The standard faults, in the order reports list them.
FAULT_CLASSES: tuple[type[BotFault], ...] = (TimeoutFault, CrashFault, MemoryFault,
                                             IllegalActionFault, ProtocolFault)
FAULT_KINDS = tuple(cls.kind for cls in FAULT_CLASSES)
#: Column headings and short names of fault kinds (``kind`` itself for others).
FAULT_LABELS = {cls.kind: cls.label for cls in FAULT_CLASSES}
