"""The server's HTML pages: leaderboards, bot pages, game lists, replays (seat
views for their bots' owners), signing in and up, the account page, uploads.

Every form carries the session's CSRF token, checked before anything else.
Handlers without a form are plain functions, which Starlette runs in worker
threads (they read the database); the form handlers await the form, then do
their blocking work through ``run_in_threadpool``.
"""

from __future__ import annotations

import functools
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route

from arena.bots.versions import NAME, NAME_RULE
from arena.games import game_names
from arena.server.auth import (
    COOKIE,
    MIN_PASSWORD,
    SESSION_SECONDS,
    Viewer,
    check_csrf,
    hash_password,
    password_matches,
    set_form_cookie,
    set_session_cookie,
    too_many,
)
from arena.server.boards import boards, games_of
from arena.server.botpage import (
    head_to_head,
    own_faults,
    own_games,
    time_chart,
    timed_history,
    when_text,
)
from arena.server.common import (
    TEMPLATES,
    bot_url,
    cached,
    own_move_logs,
    own_submission,
    owned_seats,
    read_archive,
    server_of,
    viewer,
)
from arena.server.submissions import UploadRefused
from arena.server.views import PAGE_ROWS
from arena.store.accounts import PASSWORD, AccountError, Accounts, User
from arena.store.database import CHECK_KIND
from arena.store.limits import Limit
from reports.render import latest_checks
from reports.replay import TEMPLATES as REPORT_TEMPLATES

#: Files under /static/ (:data:`~arena.server.common.ASSETS`): the stylesheet the
#: report writes (one for both) and its replay viewer; the server's live-page
#: poller, leaderboard filter and browser game (:mod:`arena.server.play`).
STATIC = {"style.css": REPORT_TEMPLATES / "style.css",
          "replay.js": REPORT_TEMPLATES / "replay.js",
          **{name: TEMPLATES / name for name in ("live.js", "board.js", "play.js")}}
#: Static files are the same for everyone: kept, and asked again each time.
STATIC_HEADERS = {"Cache-Control": "no-cache"}
#: Seconds a signed-out browser's form token (its cookie) lasts.
SIGNED_OUT_SECONDS = 3600.0
#: Faults with their stderr shown on an owner's bot page.
FAULTS_SHOWN = 20


def render(request: Request, who: Viewer, name: str, status: int = 200, *,
           live: bool = False, **context: Any) -> HTMLResponse:
    """A page from the server's templates; ``live``: it updates itself."""
    server = server_of(request)
    stamp = server.views.snapshot().stamp_text if live else None
    page = server.templates.get_template(name).render(
        viewer=who, open_signup=server.settings.open_signup, stamp=stamp,
        csrf=who.csrf, **context)
    return HTMLResponse(page, status)


def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC:
        raise HTTPException(404, f"no file {name!r}")
    return FileResponse(STATIC[name], headers=STATIC_HEADERS)


# -- what everyone sees ----------------------------------------------------------------

def leaderboard(request: Request, who: Viewer) -> Response:
    server = server_of(request)
    snap = server.views.snapshot()
    tabs = games_of(snap)
    game = request.query_params.get("game") or (tabs[0] if tabs else None)
    if game is not None and game not in tabs:
        raise HTTPException(404, f"no leaderboard of {game[:40]!r}")
    checking = server.accounts.submissions(unfinished=True)
    added = {v.label: v.added for v in server.accounts.store.bot_versions()}
    own = set(server.accounts.owned(who.user.id)) if who.user else set()
    shown = boards(snap, game, owner_names(server.accounts), own, added) if game else []
    return render(request, who, "leaderboard.html", live=True, active="leaderboard",
                  tabs=tabs, game=game, boards=shown, checking=checking,
                  running=[t for t in snap.tournaments.values() if t["status"] == "running"
                           and t["kind"] != CHECK_KIND])


def owner_names(accounts: Accounts) -> Callable[[str], str]:
    """A base name's owner as the leaderboard shows it (each looked up once)."""
    @functools.cache
    def name(base: str) -> str:
        owner_id = accounts.owner(base)
        user = accounts.user(owner_id) if owner_id is not None else None
        return user.name if user else "organiser"
    return name


def bot(request: Request, who: Viewer) -> Response:
    server = server_of(request)
    base = request.path_params["base"]
    versions = server.accounts.store.bot_versions(base)
    owner_id = server.accounts.owner(base)
    if not versions and owner_id is None:
        raise HTTPException(404, f"no bot {base!r}")
    snap = server.views.snapshot()
    labels = {v.label for v in versions}
    ratings: dict[str, list[Any]] = {}
    for s, row in snap.rows(labels):
        ratings.setdefault(row.bot, []).append((s, row))
    checks = latest_checks(snap.tournaments.values()).latest
    passed = {label for label in labels
              if checks.get(label) and all(c.get("passed") for c in checks[label])}
    manage = who.may_manage(owner_id)
    games = snap.filtered(bot=base)
    owner = server.accounts.user(owner_id) if owner_id is not None else None
    pools = {s.anchor: s.title for s, _ in snap.rows(labels)}
    order = [v.label for v in versions]
    history = []
    for anchor, title in pools.items():
        points = timed_history(snap, anchor, labels)
        history.append((title, [(when_text(t), elo) for t, elo in points],
                        time_chart(points, order)))
    return render(request, who, "bot.html", live=True, base=base, versions=versions,
                  history=history, owner=owner.name if owner else None, ratings=ratings,
                  passed=passed, manage=manage, games=own_games(snap, base, games[:PAGE_ROWS]),
                  faults=own_faults(games, labels, FAULTS_SHOWN),
                  head_to_head=head_to_head(snap, order), bases=snap.bases,
                  submissions=server.accounts.submissions(bases=[base]) if manage else [])


def _int_param(request: Request, name: str) -> int | None:
    text = request.query_params.get(name, "").strip()
    if not text:
        return None
    if not text.isdigit() or len(text) > 12:
        raise HTTPException(400, f"{name} must be a whole number, not {text[:40]!r}")
    return int(text)


def game_filters(request: Request) -> tuple[dict[str, Any], int]:
    """The games list's filters (bot, game, tournament) and page number."""
    game = request.query_params.get("game") or None
    if game is not None and game not in game_names():
        raise HTTPException(400, f"unknown game {game[:40]!r}")
    filters = {"bot": request.query_params.get("bot") or None, "game": game,
               "tournament": _int_param(request, "tournament")}
    return filters, _int_param(request, "page") or 0


def games(request: Request, who: Viewer) -> Response:
    filters, page = game_filters(request)
    found = server_of(request).views.snapshot().filtered(**filters)
    shown = found[page * PAGE_ROWS:(page + 1) * PAGE_ROWS]

    def link(number: int) -> str:
        return "/games?" + urlencode({**{k: v for k, v in filters.items() if v is not None},
                                      "page": number})

    return render(request, who, "games.html", live=True, active="games", games=shown,
                  total=len(found), page=page, more=len(found) > (page + 1) * PAGE_ROWS,
                  link=link, game_names=game_names(), **filters)


def game(request: Request, who: Viewer) -> Response:
    server = server_of(request)
    game_id = request.path_params["game_id"]
    replayed = server.views.replay(game_id)
    if replayed is None:
        raise HTTPException(404, f"no game {game_id}")
    stored, views = replayed
    snap = server.views.snapshot()
    own = owned_seats(request, who, stored.seats, snap.bases)
    # one entry a seat, null for a seat the viewer may not see: the picker offers the others
    urls = [seat_url(game_id, seat) if seat in own else None
            for seat in range(len(stored.seats))] if own else []
    faulted: dict[int, list[str]] = {}
    for fault in stored.faults:
        faulted.setdefault(fault["seat"], []).append(fault["kind"])
    return render(request, who, "game.html", active="games", g=stored, own_seats=own,
                  move_logs=own_move_logs(request, game_id, own),
                  seed_shown=snap.finished(stored.tournament_id), replayed=views.replayed,
                  data=views.spectator, seat_urls=urls, bases=snap.bases, faulted=faulted,
                  stderr=views.context["stderr"], reveal=views.context["reveal"],
                  events=views.context["events"])


def seat_url(game_id: int, seat: int) -> str:
    """Where a seat's view of a game is fetched (:func:`seat_view`)."""
    return f"/games/{game_id}/seat/{seat}.json"


def seat_view(request: Request) -> Response:
    """One seat's view of a game, for the owner of the bot in that seat or an admin
    (else 404): JSON ``{"game": ID, "seat": N, "view": PACKED, "logs": [[STEP, MOVE,
    TEXT], ...]}``, the view packed as the replay page's (deflated JSON in base64),
    the seat's per-move stderr (:mod:`arena.store.move_logs`), never stored (no-store, as
    every response that does not say otherwise).  JSON, not a script, so that
    no page of another site can run it with the viewer's cookie."""
    who = viewer(request)
    server = server_of(request)
    game_id, seat = request.path_params["game_id"], request.path_params["seat"]
    replayed = server.views.replay(game_id)
    if replayed is None:
        raise HTTPException(404, f"no game {game_id}")
    stored, views = replayed
    if seat not in owned_seats(request, who, stored.seats, server.views.snapshot().bases) \
            or seat >= len(views.seats):
        raise HTTPException(404, f"no seat view {seat} of game {game_id}")
    logs = own_move_logs(request, game_id, [seat]).get(seat, [])
    return JSONResponse({"game": game_id, "seat": seat, "view": views.seats[seat],
                         "logs": logs})


# -- signing in, up and out ----------------------------------------------------------------

def _with_session(request: Request, who: Viewer, name: str, **context: Any) -> Response:
    """A form page; a browser with neither a session nor a form token gets a new
    form token (:func:`~arena.server.auth.set_form_cookie`: nothing is stored), so
    that the form carries one."""
    if who.csrf:
        return render(request, who, name, **context)
    token = secrets.token_hex(32)
    page = render(request, replace(who, form_token=token), name, **context)
    set_form_cookie(page, request, token, SIGNED_OUT_SECONDS)
    return page


def signin_page(request: Request) -> Response:
    return _with_session(request, viewer(request, public=True), "signin.html")


def _signed_in(request: Request, who: Viewer, user: User, to: str = "/account") -> Response:
    """Close the old session, open a new one for ``user`` (no session fixation)."""
    accounts = server_of(request).accounts
    if who.secret:
        accounts.close_session(who.secret)
    secret = accounts.open_session(user.id, SESSION_SECONDS)
    response = RedirectResponse(to, 303)
    set_session_cookie(response, request, secret, SESSION_SECONDS)
    return response


def _address(request: Request) -> str:
    return f"address:{request.client.host if request.client else '?'}"


async def take(request: Request, *events: tuple[Limit, str]) -> None:
    """Count one event of each (limit, subject) in the database, before the work
    it limits; 429 (nothing counted) if any limit is used up."""
    refused = await run_in_threadpool(server_of(request).accounts.limits.take, *events)
    if refused is not None:
        raise too_many(refused, time.time())


async def verify(request: Request, account: str, user: User | None, password: str) -> bool:
    """Whether ``password`` is ``user``'s, with a failed attempt counted for
    ``account`` (and one of the address's password attempts) before it is
    verified, so no number of concurrent guesses gets past the limit; a right
    password (or none verified: the server was busy) is uncounted for the account."""
    server = server_of(request)
    counted = (server.settings.signin_limit, account)
    await take(request, counted, (server.settings.password_limit, _address(request)))
    try:
        matches = await server.settings.hashers.run(
            password_matches, user.password if user else None, password)
    except HTTPException:  # too busy: nothing was verified
        await run_in_threadpool(server.accounts.limits.give_back, *counted)
        raise
    if matches:
        await run_in_threadpool(server.accounts.limits.give_back, *counted)
    return user is not None and matches


async def signin(request: Request) -> Response:
    form = await request.form()
    who = await run_in_threadpool(viewer, request, public=True)
    check_csrf(who, form.get("csrf"))
    name, password = str(form.get("name", ""))[:200], str(form.get("password", ""))
    user = await run_in_threadpool(server_of(request).accounts.user_named, name)
    if not await verify(request, f"account:{name}", user, password):
        return render(request, who, "signin.html", 400, message="wrong name or password")
    assert user is not None
    if user.disabled:
        return render(request, who, "signin.html", 403,
                      message="this account is disabled: ask the organiser")
    return await run_in_threadpool(_signed_in, request, who, user)


def signup_page(request: Request) -> Response:
    if not server_of(request).settings.open_signup:
        raise HTTPException(404, "sign-up is closed: ask the organiser for an account")
    return _with_session(request, viewer(request, public=True), "signup.html",
                         min_password=MIN_PASSWORD)


async def signup(request: Request) -> Response:
    server = server_of(request)
    if not server.settings.open_signup:
        raise HTTPException(404, "sign-up is closed: ask the organiser for an account")
    form = await request.form()
    who = await run_in_threadpool(viewer, request, public=True)
    check_csrf(who, form.get("csrf"))
    await take(request, (server.settings.signup_limit, _address(request)))
    name, password = str(form.get("name", "")), str(form.get("password", ""))
    problem = account_problem(name, password)
    if problem is None and \
            await run_in_threadpool(server.accounts.user_named, name) is not None:
        problem = f"user {name!r} exists already"  # said before any hashing
    if problem is None:
        hashed = await server.settings.hashers.run(hash_password, password)
        try:
            user = await run_in_threadpool(partial(server.accounts.add_user, name,
                                                   password=hashed))
        except AccountError as exc:
            problem = str(exc)
        else:
            return await run_in_threadpool(_signed_in, request, who, user)
    return render(request, who, "signup.html", 400, message=problem,
                  min_password=MIN_PASSWORD)


def account_problem(name: str, password: str) -> str | None:
    """Why a new account's name or password is refused, None if they are fine."""
    if not NAME.fullmatch(name):
        return f"a name is {NAME_RULE}"
    if len(password) < MIN_PASSWORD:
        return f"a password has at least {MIN_PASSWORD} characters"
    return None


def password_page(request: Request) -> Response:
    who = viewer(request, public=True)
    token = request.path_params["token"]
    if server_of(request).accounts.token_user(token, PASSWORD) is None:
        raise HTTPException(404, "this link is unknown or was used already")
    return _with_session(request, who, "password.html", token=token,
                         min_password=MIN_PASSWORD)


async def set_password(request: Request) -> Response:
    form = await request.form()
    who = await run_in_threadpool(viewer, request, public=True)
    check_csrf(who, form.get("csrf"))
    server = server_of(request)
    await take(request, (server.settings.password_limit, _address(request)))
    token, password = request.path_params["token"], str(form.get("password", ""))
    if await run_in_threadpool(server.accounts.token_user, token, PASSWORD) is None:
        raise HTTPException(404, "this link is unknown or was used already")
    if len(password) < MIN_PASSWORD:
        return render(request, who, "password.html", 400, token=token,
                      min_password=MIN_PASSWORD,
                      message=f"a password has at least {MIN_PASSWORD} characters")
    hashed = await server.settings.hashers.run(hash_password, password)
    user = await run_in_threadpool(server.accounts.use_password_link, token, hashed)
    if user is None:
        raise HTTPException(404, "this link is unknown or was used already")
    return await run_in_threadpool(_signed_in, request, who, user)


async def signout(request: Request) -> Response:
    form = await request.form()
    who = await run_in_threadpool(viewer, request, public=True)
    check_csrf(who, form.get("csrf"))
    if who.secret:
        await run_in_threadpool(server_of(request).accounts.close_session, who.secret)
    response = RedirectResponse("/", 303)
    response.delete_cookie(COOKIE, path="/")
    return response


# -- the account, uploads, submissions --------------------------------------------------

def _signed_in_viewer(request: Request) -> Viewer:
    who = viewer(request)
    if who.user is None:
        raise HTTPException(401, "sign in first")
    return who


def account(request: Request, new_token: str | None = None, *, status: int = 200,
            message: str | None = None, notice: str | None = None) -> Response:
    who = viewer(request)
    if who.user is None:
        return RedirectResponse("/signin", 303)
    accounts = server_of(request).accounts
    return render(request, who, "account.html", status, live=True, active="account",
                  owned=accounts.owned(who.user.id), new_token=new_token,
                  submissions=accounts.submissions(user_id=who.user.id),
                  tokens=accounts.tokens(who.user.id), message=message, notice=notice,
                  min_password=MIN_PASSWORD)


async def change_password(request: Request) -> Response:
    """The account page's password change: the old password verified as a
    sign-in is (and limited so), the new one stored, the user's other sessions
    ended."""
    form = await request.form()
    who = await run_in_threadpool(_signed_in_viewer, request)
    check_csrf(who, form.get("csrf"))
    assert who.user is not None
    old, new = str(form.get("old", "")), str(form.get("new", ""))
    if len(new) < MIN_PASSWORD:
        return await run_in_threadpool(partial(
            account, request, status=400,
            message=f"a password has at least {MIN_PASSWORD} characters"))
    if not await verify(request, f"account:{who.user.name}", who.user, old):
        return await run_in_threadpool(partial(account, request, status=400,
                                               message="wrong password"))
    accounts = server_of(request).accounts
    hashed = await server_of(request).settings.hashers.run(hash_password, new)
    await run_in_threadpool(accounts.set_password, who.user.id, hashed)
    await run_in_threadpool(accounts.end_sessions, who.user.id, who.secret)
    return await run_in_threadpool(partial(
        account, request, notice="Your password was changed; your other sessions "
                                 "were signed out."))


async def signout_everywhere(request: Request) -> Response:
    """End every session of the user, this one too (their API tokens stay)."""
    form = await request.form()
    who = await run_in_threadpool(_signed_in_viewer, request)
    check_csrf(who, form.get("csrf"))
    assert who.user is not None
    await run_in_threadpool(server_of(request).accounts.end_sessions, who.user.id)
    response = RedirectResponse("/signin", 303)
    response.delete_cookie(COOKIE, path="/")
    return response


async def new_token(request: Request) -> Response:
    form = await request.form()
    who = await run_in_threadpool(_signed_in_viewer, request)
    check_csrf(who, form.get("csrf"))
    assert who.user is not None
    secret = await run_in_threadpool(server_of(request).accounts.issue_token, who.user.id,
                                     label=str(form.get("label", "")))
    return await run_in_threadpool(account, request, secret)


async def revoke_token(request: Request) -> Response:
    form = await request.form()
    who = await run_in_threadpool(_signed_in_viewer, request)
    check_csrf(who, form.get("csrf"))
    assert who.user is not None
    token_id = request.path_params["token_id"]
    if not await run_in_threadpool(server_of(request).accounts.revoke_token, who.user.id,
                                   token_id):
        raise HTTPException(404, f"no token {token_id}")
    return RedirectResponse("/account", 303)


async def upload(request: Request) -> Response:
    server = server_of(request)
    limit = server.queue.limits.archive_bytes
    form = await request.form(max_files=1, max_fields=5)
    who = await run_in_threadpool(_signed_in_viewer, request)
    check_csrf(who, form.get("csrf"))
    return await accept_upload(request, who, form.get("archive"), limit, "/submissions/{}")


async def accept_upload(request: Request, who: Viewer, field: object, limit: int,
                        to: str | None) -> Response:
    """Rate-limit, read and queue an upload; a redirect to ``to`` (with the
    submission's id), or with ``to`` None the submission as JSON (202)."""
    server = server_of(request)
    assert who.user is not None
    await take(request, (server.settings.upload_limit, f"account:{who.user.id}"),
               (server.settings.upload_address_limit, _address(request)))
    data, filename = await read_archive(field, limit)
    try:
        submission = await run_in_threadpool(server.queue.accept, who.user, data, filename)
    except UploadRefused as exc:
        raise HTTPException(exc.status, str(exc)) from None
    if to is not None:
        return RedirectResponse(to.format(submission.id), 303)
    return JSONResponse({"id": submission.id, "bot": submission.base,
                         "status": submission.status}, 202)


def submission(request: Request) -> Response:
    who = viewer(request)
    found = own_submission(request, who, request.path_params["submission_id"])
    position = server_of(request).accounts.queue_positions().get(found.id)
    return render(request, who, "submission.html", live=True, active="account", sub=found,
                  bot_url=bot_url(found.base),
                  queue=None if position is None else f"{ordinal(position)} in the queue")


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st."""
    suffix = "th" if number % 100 in (11, 12, 13) else \
        {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


async def retire(request: Request) -> Response:
    form = await request.form()
    who = await run_in_threadpool(viewer, request)
    check_csrf(who, form.get("csrf"))
    base = request.path_params["base"]
    await run_in_threadpool(retire_version, request, who, base, str(form.get("version", "")))
    return RedirectResponse(f"/bots/{base}", 303)


def retire_version(request: Request, who: Viewer, base: str, version: str) -> list[str]:
    """Retire a version of ``base`` (all with ``version`` ""), if ``who`` may; else 404."""
    accounts = server_of(request).accounts
    versions = accounts.store.bot_versions(base)
    if not who.may_manage(accounts.owner(base)) or not versions or \
            (version and all(v.version != version for v in versions)):
        raise HTTPException(404, f"no bot {base}@{version}" if version else f"no bot {base!r}")
    return accounts.store.retire_bots(base, version or None)


def routes() -> list[Route]:
    return [
        Route("/", cached(leaderboard)),
        Route("/static/{name}", static),
        Route("/bots/{base}", cached(bot)),
        Route("/bots/{base}/retire", retire, methods=["POST"]),
        Route("/games", cached(games)),
        Route("/games/{game_id:int}", cached(game, replay=True)),
        Route("/games/{game_id:int}/seat/{seat:int}.json", seat_view),
        Route("/signin", signin_page),
        Route("/signin", signin, methods=["POST"]),
        Route("/signup", signup_page),
        Route("/signup", signup, methods=["POST"]),
        Route("/password/{token}", password_page),
        Route("/password/{token}", set_password, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Route("/account", account),
        Route("/account/tokens", new_token, methods=["POST"]),
        Route("/account/password", change_password, methods=["POST"]),
        Route("/account/signout-everywhere", signout_everywhere, methods=["POST"]),
        Route("/account/tokens/{token_id:int}/revoke", revoke_token, methods=["POST"]),
        Route("/upload", upload, methods=["POST"]),
        Route("/submissions/{submission_id:int}", submission),
    ]
