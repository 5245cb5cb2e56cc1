"""What the server holds while it runs: its settings and the parts every request
handler reaches through ``request.app.state.server``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
from jinja2 import Environment

from arena.server.auth import Hashers
from arena.server.submissions import SubmissionQueue
from arena.server.views import Views
from arena.store.accounts import Accounts
from arena.store.limits import Limit

if TYPE_CHECKING:
    from arena.runner.sandbox import Sandbox

#: Games people play against the ladder's bots in the browser at once, in one
#: server (``arena serve --play-games``); a further start is 429.
PLAY_GAMES = 4
#: Seconds a person has for each move in the browser (``--play-move-time``);
#: then their seat forfeits with a timeout, as a bot's would.
PLAY_MOVE_SECONDS = 300.0


@dataclass(frozen=True)
class PlaySettings:
    """Playing the ladder's bots in the browser (:mod:`arena.server.play`): the
    ladder ``games`` (none: no one can), the seats at a table, the sandbox the
    bots run in (the server's, as its ladders'), how many games at once in
    the server and the person's seconds per move."""

    games: tuple[str, ...] = ()
    seats: int = 2
    sandbox: Sandbox | None = None
    at_once: int = PLAY_GAMES
    move_seconds: float = PLAY_MOVE_SECONDS


@dataclass
class Settings:
    """How the server runs: ``private`` (sign-in needed to see anything),
    ``open_signup`` (anyone may register), the rate limits (counted in the
    database, in fixed windows) and how many passwords are hashed at once."""

    private: bool = False
    open_signup: bool = False
    #: Failed sign-ins (and password changes) per account per minute, each
    #: counted before its password is verified; a right password uncounts it.
    signin_limit: Limit = field(default_factory=lambda: Limit("signin-account", 5, 60.0))
    #: Password attempts (sign-in, password link, password change) per address
    #: per minute.
    password_limit: Limit = field(default_factory=lambda: Limit("password-address", 30, 60.0))
    #: Sign-up attempts per address per hour.
    signup_limit: Limit = field(default_factory=lambda: Limit("signup-address", 20, 3600.0))
    #: Uploads per account, and per address, per hour.
    upload_limit: Limit = field(default_factory=lambda: Limit("upload-account", 30, 3600.0))
    upload_address_limit: Limit = field(default_factory=lambda: Limit("upload-address", 60, 3600.0))
    #: argon2 computations at once (server-wide), more waiting, seconds each waits.
    hashers: Hashers = field(default_factory=lambda: Hashers(at_once=2, waiting=8, wait=5.0))
    play: PlaySettings = field(default_factory=PlaySettings)


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
