"""Uploads: an archive accepted (unpacked within limits, its bot name claimed for
the uploader) and queued; a worker builds and checks each queued submission in
a thread (:class:`arena.bots.submit.Builder`), one at a time, so the server's
event loop never waits for a build or a check.

An unpacked upload waits in ``uploads/<id>/`` until it is stored; submissions
left queued or half-done by a server that stopped are queued again at start.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import trio

from arena.bots.archive import Limits, bot_directory, unpack
from arena.bots.submit import Builder
from arena.bots.versions import BotError
from arena.store.accounts import Accounts, Submission, User

#: Queued submissions waiting beyond this many are refused (503).
QUEUE_SIZE = 1000


class UploadRefused(Exception):
    """An upload refused; the message says why in one line, ``status`` the HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class SubmissionQueue:
    """Accepts uploads and works through them (see the module's docstring)."""

    accounts: Accounts
    builder: Builder
    folder: Path
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        self.send, self._receive = trio.open_memory_channel[int](QUEUE_SIZE)

    def accept(self, user: User, data: bytes, filename: str) -> Submission:
        """Unpack an upload, claim its bot name for ``user`` (or check they own
        it) and store it as queued; blocking, in a worker thread (then
        :meth:`enqueue` it).  UploadRefused if it is not accepted; nothing is
        kept then."""
        staging = self.folder / f"staging-{uuid.uuid4().hex}"
        try:
            _, manifest = unpack(data, filename, staging, self.limits)
        except BotError as exc:  # said of the archive, not of the server's folders
            raise UploadRefused(str(exc).replace(f"{staging}/", "").replace(
                str(staging), "the archive")) from None
        try:
            if not self.accounts.claim_name(manifest.name, user.id) and not user.admin:
                raise UploadRefused(f"bot name {manifest.name!r} belongs to another user: "
                                    f"choose another name in bot.toml", 403)
            submission = self.accounts.add_submission(user.id, manifest.name, filename)
            staging.rename(self.folder / str(submission.id))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return submission

    def enqueue(self, submission: Submission) -> None:
        """Queue an accepted submission for the worker (in the event loop's thread);
        UploadRefused (503) when the queue is full."""
        try:
            self.send.send_nowait(submission.id)
        except trio.WouldBlock:
            self.accounts.update_submission(submission.id, "failed",
                                            message="the queue is full: upload again later")
            raise UploadRefused("the server's queue is full: try again later", 503) from None

    async def run(self) -> None:
        """Build and check queued submissions until cancelled, the ones left
        unfinished by an earlier server first."""
        left = await trio.to_thread.run_sync(
            lambda: self.accounts.submissions(unfinished=True))
        for submission in reversed(left):
            self.send.send_nowait(submission.id)
        async for submission_id in self._receive:
            # Stopping the server does not wait for a build or check under way: the
            # submission is queued again at the next start (its bots die with the arena).
            await trio.to_thread.run_sync(self.process, submission_id, abandon_on_cancel=True)

    def process(self, submission_id: int) -> None:
        """Build and check one submission, its status stored as it goes."""
        source = self.folder / str(submission_id)
        if self.accounts.submission(submission_id) is None:
            return
        try:
            directory = bot_directory(source)
        except (BotError, OSError) as exc:
            self.accounts.update_submission(submission_id, "failed", message=str(exc))
            return
        try:
            outcome = self.builder.run(directory, lambda status: self.accounts.update_submission(
                submission_id, status))
            self.accounts.update_submission(
                submission_id, "passed" if outcome.passed else "failed", label=outcome.label,
                message=outcome.message, report=outcome.report)
        except Exception as exc:  # never leave a submission building forever
            self.accounts.update_submission(submission_id, "failed",
                                            message=f"internal error: {exc}")
        finally:
            shutil.rmtree(source, ignore_errors=True)
