"""Who is asking, and may they: the viewer of a request (a browser session's
cookie or an API bearer token), CSRF tokens on forms, password hashes (argon2,
via argon2-cffi, a few at once: :class:`Hashers`) and the answer to a used-up
rate limit (the limits are counted in the database: :mod:`arena.store.limits`).

A browser session is a random secret in an HttpOnly, SameSite=Lax cookie; the
database keeps only its digest (:class:`arena.store.accounts.Accounts`).
Signing in always opens a new session and closes the one before, so a session
fixed by an attacker before sign-in never becomes signed in.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from arena.store.accounts import Accounts, BrowserSession, User
from arena.store.limits import Limit

T = TypeVar("T")

COOKIE = "arena_session"
#: A signed-out browser's form token (see :func:`set_form_cookie`), and its form.
FORM_COOKIE = "arena_form"
FORM_TOKEN = re.compile(r"[0-9a-f]{64}")
#: Seconds a signed-in browser session lasts at most.
SESSION_SECONDS = 14 * 86400.0
#: Seconds a signed-in browser session lasts unused.
IDLE_SECONDS = 2 * 86400.0
#: Passwords shorter than this are refused.
MIN_PASSWORD = 8

_hasher = PasswordHasher()


def hash_password(password: str) -> str:
    """The argon2id hash stored for ``password``."""
    return _hasher.hash(password)


def password_matches(hashed: str | None, password: str) -> bool:
    """Whether ``password`` is the one ``hashed`` was made from (False if none is set)."""
    if not hashed:
        _hasher.hash(password)  # the same work either way: no timing hint
        return False
    try:
        return _hasher.verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


@dataclass(frozen=True)
class Viewer:
    """Who made a request: the user (None: nobody signed in), the browser session
    (its cookie's secret and state) if any, whether a bearer token said so, and
    a signed-out browser's form token (:data:`FORM_COOKIE`)."""

    user: User | None
    session: BrowserSession | None = None
    secret: str | None = None
    bearer: bool = False
    form_token: str | None = None

    @property
    def csrf(self) -> str:
        """The token this viewer's forms carry and their posts must send back:
        the session's, else the signed-out browser's form cookie ("": none)."""
        return self.session.csrf if self.session else self.form_token or ""

    def may_manage(self, owner_id: int | None) -> bool:
        """Whether this viewer may act for the owner of a bot (the owner, an admin)."""
        return self.user is not None and (
            self.user.admin or (owner_id is not None and owner_id == self.user.id))


def viewer_of(request: Request, accounts: Accounts) -> Viewer:
    """The request's viewer: a bearer token if one is given (a wrong one: 401),
    else the session cookie's (an unknown or expired cookie counts as none)."""
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        user = accounts.token_user(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise HTTPException(401, "invalid or revoked API token")
        return Viewer(user, bearer=True)
    secret = request.cookies.get(COOKIE)
    session = accounts.session(secret, IDLE_SECONDS) if secret else None
    if session is None:
        token = request.cookies.get(FORM_COOKIE, "")
        return Viewer(None, form_token=token if FORM_TOKEN.fullmatch(token) else None)
    return Viewer(session.user, session, secret)


def set_form_cookie(response: Response, request: Request, token: str,
                    seconds: float) -> None:
    """A signed-out browser's form token (``secrets.token_hex(32)``) as its
    cookie for ``seconds``.  Its forms (sign in, sign up, set a password) carry
    the token and their posts must send it back (a double-submit token).  Nothing
    is stored, so a flood of form pages writes nothing; another site can neither
    read the cookie nor make a browser send a field that matches it."""
    response.set_cookie(FORM_COOKIE, token, max_age=int(seconds), httponly=True,
                        samesite="lax", secure=request.url.scheme == "https", path="/")


def set_session_cookie(response: Response, request: Request, secret: str,
                       seconds: float) -> None:
    """The session's cookie, kept by the browser as long as the session lasts."""
    response.set_cookie(COOKIE, secret, max_age=int(seconds), httponly=True,
                        samesite="lax", secure=request.url.scheme == "https", path="/")


def check_csrf(viewer: Viewer, submitted: object) -> None:
    """403 unless the form's ``csrf`` field is the viewer's token (:attr:`Viewer.csrf`)."""
    if not viewer.csrf or not isinstance(submitted, str) or \
            not hmac.compare_digest(submitted.encode(), viewer.csrf.encode()):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the "
                                 "page and try again")


def too_many(limit: Limit, clock: float) -> HTTPException:
    """The 429 of a used-up ``limit``, with Retry-After: when its window ends."""
    wait = limit.retry_after(clock)
    return HTTPException(429, f"too many attempts: try again in {wait} seconds",
                         headers={"Retry-After": str(wait)})


#: Seconds a client asked to wait when too many passwords are being hashed.
BUSY_RETRY = 5


@dataclass
class Hashers:
    """Hashing and verifying passwords (argon2, deliberately costly), at most
    ``at_once`` at a time in the whole server, in worker threads: at most
    ``waiting`` more requests wait for their turn, each at most ``wait``
    seconds; beyond that 429 at once, so a flood of password posts neither
    takes every core nor queues without bound."""

    at_once: int = 2
    waiting: int = 8
    wait: float = 5.0
    _limiter: anyio.CapacityLimiter | None = field(default=None, init=False, repr=False)
    _queued: int = field(default=0, init=False, repr=False)

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)`` (a hash or a verification) in a worker thread when its
        turn comes; 429 if it would wait too long."""
        if self._limiter is None:  # made in the event loop
            self._limiter = anyio.CapacityLimiter(self.at_once)
        if self._queued >= self.at_once + self.waiting:
            raise self.busy()
        self._queued += 1
        try:
            acquired = False
            with anyio.move_on_after(self.wait):
                await self._limiter.acquire()
                acquired = True
            if not acquired:
                raise self.busy()
            try:
                return await anyio.to_thread.run_sync(work, *args)
            finally:
                self._limiter.release()
        finally:
            self._queued -= 1

    @staticmethod
    def busy() -> HTTPException:
        return HTTPException(429, "the server is busy checking passwords: try again in a "
                                  "moment", headers={"Retry-After": str(BUSY_RETRY)})
