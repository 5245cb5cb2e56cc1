"""The sample bots as entrants: the organiser's side of :mod:`sample_bots`, which
imports nothing of the runner so that a bot starts as fast as the SDK allows."""

from __future__ import annotations

from arena.runner.process import BotSpec
from sample_bots import command


def spec(module: str, name: str | None = None) -> BotSpec:
    """A BotSpec running ``sample_bots.<module>`` with this Python."""
    return BotSpec(name or module, command(module))
