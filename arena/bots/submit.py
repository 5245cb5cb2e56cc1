"""A submitted bot directory, from stored version to checked: the same path as
``arena bot add`` (:func:`~arena.bots.versions.add_bot`: fingerprint, version,
sandboxed build, read-only copy) and then ``arena check-bot``
(:func:`~arena.bots.check.check_bot`) in each game its ``bot.toml`` lists, the
check stored, so a passed version joins a ladder at its next table.

:meth:`Builder.run` blocks for as long as the build and the check take (it
starts its own trio loop for the check): the server calls it in a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bots.check import CheckTooLong, OnGame, check_bot
from arena.bots.versions import BUILD_SECONDS, BotError, add_bot, spec_of
from arena.runner.client import TimeControl
from arena.runner.sandbox import Sandbox
from arena.store.database import Store


@dataclass(frozen=True)
class Outcome:
    """How a submission ended: its label (None if never stored), whether it
    passed, why not in one line, and the check report (``CheckReport.to_json``)."""

    label: str | None
    passed: bool
    message: str = ""
    report: dict[str, Any] | None = None


@dataclass(frozen=True)
class Builder:
    """Where submissions are stored and how they are built and checked."""

    store: Store
    bot_store: Path
    sandbox: Sandbox
    control: TimeControl | None = None
    #: Games per game in the check (None: check-bot's default).
    games_per_type: int | None = None
    #: Seconds the build may take, and the check's games all together (None: no limit).
    build_seconds: float = BUILD_SECONDS
    check_seconds: float | None = None

    def run(self, source: Path, on_status: Callable[[str], None],
            on_game: OnGame | None = None) -> Outcome:
        """Store, build and check the bot in ``source``; ``on_status("building")``
        and ``on_status("checking")`` as it gets there, ``on_game(entry)`` as each
        check game finishes (see :func:`~arena.bots.check.check_bot`).  Never
        raises for a bad bot: a failure, a build or check over its limit too
        (killed), is an :class:`Outcome` that did not pass."""
        on_status("building")
        try:
            added = add_bot(self.store, source, self.bot_store, self.sandbox,
                            build_seconds=self.build_seconds)
        except BotError as exc:
            return Outcome(None, False, str(exc))
        version = added.version
        on_status("checking")
        try:
            report = check_bot(spec_of(version), list(version.games or ()),
                               control=self.control, sandbox=self.sandbox,
                               games_per_type=self.games_per_type, store=self.store,
                               on_game=on_game, seconds=self.check_seconds)
        except CheckTooLong as exc:
            return Outcome(version.label, False, str(exc))
        except Exception as exc:  # a game or option the check cannot play
            return Outcome(version.label, False, f"check failed to run: {exc}")
        reasons = [f"{c.game}: {reason}" for c in report.checks for reason in c.reasons]
        return Outcome(version.label, report.passed, "; ".join(reasons)[:2000],
                       report.to_json())
