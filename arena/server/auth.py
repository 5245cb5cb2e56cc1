"""Who is asking, and may they: the viewer of a request (a browser session's
cookie or an API bearer token), CSRF tokens on forms, password hashes (argon2,
via argon2-cffi) and rate limits on sign-ins and uploads.

A browser session is a random secret in an HttpOnly, SameSite=Lax cookie; the
database keeps only its digest (:class:`arena.store.accounts.Accounts`).
Signing in always opens a new session and closes the one before, so a session
fixed by an attacker before sign-in never becomes signed in.
"""

from __future__ import annotations

import hmac
import time
from collections import defaultdict, deque
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from arena.store.accounts import Accounts, BrowserSession, User

COOKIE = "arena_session"
#: Seconds a browser session lasts.
SESSION_SECONDS = 14 * 86400.0
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
    (its cookie's secret and state) if any, and whether a bearer token said so."""

    user: User | None
    session: BrowserSession | None = None
    secret: str | None = None
    bearer: bool = False

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
    session = accounts.session(secret) if secret else None
    if session is None:
        return Viewer(None)
    return Viewer(session.user, session, secret)


def set_session_cookie(response: Response, request: Request, secret: str) -> None:
    response.set_cookie(COOKIE, secret, max_age=int(SESSION_SECONDS), httponly=True,
                        samesite="lax", secure=request.url.scheme == "https", path="/")


def check_csrf(viewer: Viewer, submitted: object) -> None:
    """403 unless the form's ``csrf`` field is the viewer's session's token."""
    if viewer.session is None or not isinstance(submitted, str) or \
            not hmac.compare_digest(submitted.encode(), viewer.session.csrf.encode()):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the "
                                 "page and try again")


class RateLimit:
    """At most ``count`` events per ``seconds`` for each key (an account, an
    address); kept in memory, per server process."""

    def __init__(self, count: int, seconds: float) -> None:
        self.count, self.seconds = count, seconds
        self._events: dict[str, deque[float]] = defaultdict(deque)

    def _recent(self, key: str) -> deque[float]:
        events = self._events[key]
        while events and events[0] < time.monotonic() - self.seconds:
            events.popleft()
        return events

    def blocked(self, *keys: str) -> bool:
        """Whether any key has used up its events."""
        return any(len(self._recent(key)) >= self.count for key in keys)

    def add(self, *keys: str) -> None:
        for key in keys:
            self._recent(key).append(time.monotonic())

    def refuse_if_blocked(self, *keys: str) -> None:
        """429 (with Retry-After) if any key has used up its events."""
        if self.blocked(*keys):
            raise HTTPException(429, "too many attempts: wait a minute and try again",
                                headers={"Retry-After": str(int(self.seconds))})
