"""Uploads: an archive accepted (unpacked within limits, its bot name claimed for
the uploader) and stored as queued, in the server's process
(:class:`SubmissionQueue`); built and checked by :class:`Checker` in a process of
its own (``arena check-uploads``, which ``arena serve`` starts beside it), so no
build and no check's referee ever runs in the server's interpreter.

The checker checks several submissions at once, each taken in the fair order of
:func:`arena.store.accounts.fair_order` (round-robin by user), each build and
check within its own time limit: one user's slow or endless uploads delay
another's by at most their turn.  A user may have :data:`USER_QUEUE`
submissions queued or being checked.

An unpacked upload waits in ``uploads/<id>/`` until it is stored; submissions
left building or checking by a checker that stopped are queued again when the
next one starts.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.bots.archive import Limits, bot_directory, unpack
from arena.bots.paths import contained
from arena.bots.submit import Builder
from arena.bots.versions import BotError
from arena.store.accounts import Accounts, Submission, User

#: Queued submissions beyond this many are refused (503).
QUEUE_SIZE = 1000
#: Submissions one user may have queued or being checked at once (more: 429).
USER_QUEUE = 3
#: Seconds the checker waits before it looks for a queued submission again.
POLL_SECONDS = 0.5
#: Seconds between renewals of a running check's stamp by its checker.
RENEW_SECONDS = 5.0
#: A submission building or checking whose stamp is this many seconds old lost its
#: checker (a stopped or killed server): any checker queues it again.
ABANDONED_SECONDS = 30.0


def without_folder(message: str, folder: Path, words: str) -> str:
    """``message`` with the server's ``folder`` (as given or resolved) said as
    ``words``, and the paths under it relative to it."""
    for form in {str(folder), str(folder.resolve())}:
        message = message.replace(form + "/", "").replace(form, words)
    return message


class UploadRefused(Exception):
    """An upload refused; the message says why in one line, ``status`` the HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class SubmissionQueue:
    """Accepts uploads into the database's queue (see the module's docstring)."""

    accounts: Accounts
    folder: Path
    limits: Limits = field(default_factory=Limits)

    def accept(self, user: User, data: bytes, filename: str) -> Submission:
        """Unpack an upload, claim its bot name for ``user`` (or check they own
        it) and store it as queued; blocking, in a worker thread.  UploadRefused
        if it is not accepted (429 when the user has :data:`USER_QUEUE` queued or
        being checked, 503 when :data:`QUEUE_SIZE` wait already); nothing is kept
        then."""
        if self.accounts.unfinished_of(user.id) >= USER_QUEUE:
            raise UploadRefused(f"you have {USER_QUEUE} uploads queued or being checked "
                                f"already: upload again once one is done", 429)
        staging = self.folder / f"staging-{uuid.uuid4().hex}"
        try:
            _, manifest = unpack(data, filename, staging, self.limits)
        except BotError as exc:  # said of the archive, not of the server's folders
            raise UploadRefused(without_folder(str(exc), staging, "the archive")) from None
        try:
            if not self.accounts.claim_name(manifest.name, user.id) and not user.admin:
                raise UploadRefused(self.taken(manifest.name, user), 403)
            if self.accounts.queued() >= QUEUE_SIZE:
                submission = self.accounts.add_submission(user.id, manifest.name, filename)
                self.accounts.update_submission(submission.id, "failed",
                                                message="the queue is full: upload again later")
                self.accounts.release_name(manifest.name, user.id)
                raise UploadRefused("the server's queue is full: try again later", 503)
            submission = self.accounts.add_submission(user.id, manifest.name, filename)
            staging.rename(contained(self.folder, str(submission.id)))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return submission

    def taken(self, name: str, user: User) -> str:
        """Why ``user`` may not upload a bot named ``name``, in one line."""
        holder = self.accounts.name_holder(name)
        if holder is not None and holder[0] != name:
            mine = holder[1] == user.id
            return (f"bot name {name!r} differs only in case from {holder[0]!r}, which is "
                    f"{'yours: use that' if mine else 'taken: choose another name'} in "
                    f"bot.toml")
        return f"bot name {name!r} belongs to another user: choose another name in bot.toml"


@dataclass
class Checker:
    """Builds and checks the database's queued submissions, ``checkers`` at once."""

    accounts: Accounts
    builder: Builder
    folder: Path
    checkers: int = 1

    @property
    def per_user(self) -> int:
        """Checks of one user running at once at most: half the checkers, at least
        one, so that one user's endless builds leave the others half of them."""
        return max(1, self.checkers // 2)

    def run(self) -> None:
        """Until stopped: check in ``checkers`` threads (:meth:`work`).  Stopping
        (KeyboardInterrupt here, or a signal that ends the process) waits for no
        build or check: the threads are daemons and end with the process, and with
        them their builds' and bots' processes (their parent-death signal); their
        submissions' stamps age, and after :data:`ABANDONED_SECONDS` any checker
        queues them again (another server's checks on the same database, whose
        stamps it renews, stay its own)."""
        threads = [threading.Thread(target=self.work, name=f"checker-{number}", daemon=True)
                   for number in range(1, self.checkers + 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def work(self) -> None:
        """One checker, for ever: claim the next submission in the fair order
        (:meth:`~arena.store.accounts.Accounts.claim_next`) and check it, or queue
        again the abandoned ones and wait :data:`POLL_SECONDS`."""
        while True:
            try:
                found = self.accounts.claim_next(self.per_user)
                if found is not None:
                    self.process(found.id)
                    continue
                self.accounts.requeue_unfinished(ABANDONED_SECONDS)
            except Exception as exc:  # a database error: say so, and try again
                print(f"arena: {threading.current_thread().name}: {exc}", file=sys.stderr,
                      flush=True)
            time.sleep(POLL_SECONDS)

    def process(self, submission_id: int) -> None:
        """Build and check one claimed submission, its status and each check game
        as it finishes stored as it goes, its stamp renewed meanwhile; a failed one
        gives up its claim on a bot name that has no version stored."""
        done = threading.Event()
        renewer = threading.Thread(target=self.renew, args=(submission_id, done),
                                   name=f"{threading.current_thread().name}-renew", daemon=True)
        renewer.start()
        try:
            self.check(submission_id)
        finally:
            done.set()
            renewer.join()

    def renew(self, submission_id: int, done: threading.Event) -> None:
        """Renew the submission's stamp every :data:`RENEW_SECONDS` until ``done``."""
        while not done.wait(RENEW_SECONDS):
            try:
                self.accounts.renew(submission_id)
            except Exception as exc:  # a database error: the next renewal may do
                print(f"arena: {threading.current_thread().name}: {exc}", file=sys.stderr,
                      flush=True)

    def check(self, submission_id: int) -> None:
        """Build and check one claimed submission (:meth:`process`)."""
        source = contained(self.folder, str(submission_id))
        try:
            directory = bot_directory(source)
        except (BotError, OSError) as exc:
            self.finish(submission_id, "failed", message=str(exc))
            shutil.rmtree(source, ignore_errors=True)
            return
        try:
            outcome = self.builder.run(
                directory,
                lambda status: self.accounts.update_submission(submission_id, status),
                lambda entry: self.accounts.add_progress(submission_id, entry))
            self.finish(submission_id, "passed" if outcome.passed else "failed",
                        label=outcome.label, message=self.scrubbed(outcome.message, source),
                        report=outcome.report)
        except Exception as exc:  # never leave a submission building forever
            self.finish(submission_id, "failed",
                        message=self.scrubbed(f"internal error: {exc}", source))
        # Stopped mid-way (Ctrl-C), the folder stays for the next checker.
        shutil.rmtree(source, ignore_errors=True)

    def finish(self, submission_id: int, status: str, **fields: Any) -> None:
        """Store a submission's final status; a failed one releases its name."""
        self.accounts.update_submission(submission_id, status, **fields)
        found = self.accounts.submission(submission_id)
        if status == "failed" and found is not None:
            self.accounts.release_name(found.base, found.user_id)

    def scrubbed(self, message: str, source: Path) -> str:
        """``message`` without the server's own folders: the upload's is "the
        upload", the bot store's "the bot store"."""
        for folder, words in ((source, "the upload"), (self.builder.bot_store, "the bot store"),
                              (self.folder, "the uploads")):
            message = without_folder(message, folder, words)
        return message
