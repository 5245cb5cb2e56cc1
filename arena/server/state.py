"""What the server holds while it runs: its settings and the parts every request
handler reaches through ``request.app.state.server``."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
from jinja2 import Environment

from arena.server.auth import RateLimit
from arena.server.submissions import SubmissionQueue
from arena.server.views import Views
from arena.store.accounts import Accounts


@dataclass
class Settings:
    """How the server runs: ``private`` (sign-in needed to see anything),
    ``open_signup`` (anyone may register), the rate limits."""

    private: bool = False
    open_signup: bool = False
    #: Failed sign-ins per account, and per address, per minute.
    signin_limit: RateLimit = field(default_factory=lambda: RateLimit(5, 60.0))
    signin_address_limit: RateLimit = field(default_factory=lambda: RateLimit(20, 60.0))
    #: Uploads per account, and per address, per hour.
    upload_limit: RateLimit = field(default_factory=lambda: RateLimit(30, 3600.0))
    upload_address_limit: RateLimit = field(default_factory=lambda: RateLimit(60, 3600.0))


@dataclass
class Server:
    """The parts of a running server."""

    accounts: Accounts
    views: Views
    queue: SubmissionQueue
    settings: Settings
    templates: Environment
    #: The threads that draw kept pages anew (:func:`arena.server.common.drawers`).
    drawers: anyio.CapacityLimiter | None = None
