"""What the page and API handlers share: the viewer of a request (and the
private site's sign-in rule), the cache of what viewers without a session see
(:func:`cached`), the owner checks that make someone else's bot, game seat or
submission a 404, and reading an uploaded archive within its limit."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.server.auth import COOKIE, Viewer, viewer_of
from arena.server.state import Server
from arena.server.views import Page
from arena.store.accounts import Submission

COOKIE_BYTES = f"{COOKIE}=".encode()

#: The server's own templates (its pages extend ``layout.html``, the report's
#: ``base.html`` with the server's navigation) and scripts.
TEMPLATES = Path(__file__).with_name("templates")
#: Where the pages find the shared stylesheet and scripts (``base.html``'s ``assets``).
ASSETS = "/static/"


def server_of(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


def viewer(request: Request, *, public: bool = False) -> Viewer:
    """The request's viewer; on a private site 401 unless signed in (``public``:
    a page anyone reaches, such as signing in)."""
    server = server_of(request)
    found = viewer_of(request, server.accounts)
    if server.settings.private and not public and found.user is None:
        raise HTTPException(401, "this site is private: sign in to see it")
    return found


#: Headers of a page every viewer without a session gets: kept by browsers and
#: proxies, but asked again each time (answered 304 while its ETag holds); a
#: signed-in viewer's page differs, so it depends on the cookie and the token.
SHARED_HEADERS = {"Cache-Control": "no-cache", "Vary": "Cookie, Authorization"}


def shared(page: Page, if_none_match: str) -> Response:
    """A cached page, or 304 if the client holds it already (``If-None-Match``)."""
    headers = {**SHARED_HEADERS, "ETag": page.etag}
    if page.etag in if_none_match:
        return Response(status_code=304, headers=headers)
    return Response(page.body, media_type=page.media_type, headers=headers)


def page_key(scope: Scope) -> tuple[str, bytes]:
    """What a kept page is found by: its path and query."""
    return scope["path"], scope["query_string"]


class CachedPages:
    """ASGI middleware in front of the routes: a GET without a session cookie or a
    token whose page :func:`cached` keeps, fresh, is answered here, before any
    routing (the cheapest way through the server)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            server: Server = scope["app"].state.server
            snapshot = server.views.current()
            if snapshot is not None and not server.settings.private:
                if_none_match = b""
                for name, value in scope["headers"]:
                    if name == b"authorization" or (name == b"cookie" and COOKIE_BYTES in value):
                        break
                    if name == b"if-none-match":
                        if_none_match = value
                else:
                    page = server.views.pages.get(page_key(scope))
                    if page is not None and page.fresh(snapshot):
                        await shared(page, if_none_match.decode("latin-1"))(scope, receive,
                                                                            send)
                        return
        await self.app(scope, receive, send)


def drawers(server: Server) -> anyio.CapacityLimiter:
    """The worker threads that draw kept pages anew: one, so that after a new
    snapshot (when every kept page is drawn anew) a single thread, not one per
    page, contends with the event loop for the interpreter lock; meanwhile the
    pages are served as they were."""
    if server.drawers is None:  # made in the event loop
        server.drawers = anyio.CapacityLimiter(1)
    return server.drawers


def cached(build: Callable[[Request, Viewer], Response], *, replay: bool = False
           ) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint whose response, for a viewer with no session (who then holds
    no CSRF token and nothing of an owner's), is built once and kept as a
    :class:`~arena.server.views.Page` (``replay``: a game's page, kept while its
    tournament's state holds, else while the snapshot does).  A kept page is
    served in the event loop, with no worker thread and no query; one that is
    no longer fresh is drawn anew by one request, while the others get it as it
    was (a snapshot or two old) instead of drawing it too."""
    def build_in_thread(request: Request) -> Response:
        who = viewer(request)
        if who.user is not None or who.session is not None:
            return build(request, who)
        views = server_of(request).views
        snapshot = views.snapshot()
        key = page_key(request.scope)
        page = views.pages.get(key)
        if page is None or not page.fresh(snapshot):
            response = build(request, who)
            if response.status_code != 200:
                return response
            replayed = views.replay(request.path_params["game_id"]) if replay else None
            tournament = replayed[0].tournament_id if replayed is not None else None
            page = views.pages.put(key, Page.of(bytes(response.body), response.media_type or
                                                "text/html", snapshot, tournament))
        return shared(page, request.headers.get("if-none-match", ""))

    async def endpoint(request: Request) -> Response:
        server = server_of(request)
        snapshot = server.views.current()
        if snapshot is None or server.settings.private or COOKIE in request.cookies or \
                "authorization" in request.headers:
            return await run_in_threadpool(build_in_thread, request)
        pages = server.views.pages
        key = page_key(request.scope)
        page = pages.get(key)
        if page is not None and (page.fresh(snapshot) or key in pages.drawing):
            # stale: another request draws it anew
            return shared(page, request.headers.get("if-none-match", ""))
        pages.drawing.add(key)
        try:
            return await anyio.to_thread.run_sync(build_in_thread, request,
                                                  limiter=drawers(server))
        finally:
            pages.drawing.discard(key)

    return endpoint


def own_submission(request: Request, who: Viewer, submission_id: int) -> Submission:
    """The submission if ``who`` may see it (its uploader, an admin), else 404."""
    found = server_of(request).accounts.submission(submission_id)
    if found is None or not who.may_manage(found.user_id):
        raise HTTPException(404, f"no submission {submission_id}")
    return found


def owned_seats(request: Request, who: Viewer, seats: list[str],
                bases: dict[str, str]) -> list[int]:
    """The seats of a game whose bot ``who`` may manage."""
    if who.user is None:
        return []
    accounts = server_of(request).accounts
    owners = {base: accounts.owner(base) for base in {bases.get(s, s) for s in seats}}
    return [seat for seat, label in enumerate(seats)
            if who.may_manage(owners[bases.get(label, label)])]


def bot_url(base: str) -> str:
    """The path of a bot's page."""
    return f"/bots/{quote(base, safe='')}"


def own_move_logs(request: Request, game_id: int, own: list[int]
                  ) -> dict[int, list[list[Any]]]:
    """The per-move stderr (:mod:`arena.store.move_logs`) of the seats ``own``
    of a game: only ever those :func:`owned_seats` gives, never a spectator's."""
    if not own:
        return {}
    store = server_of(request).accounts.store
    return store.move_logs([game_id], own).get(game_id, {})


async def read_archive(upload: object, limit: int) -> tuple[bytes, str]:
    """The bytes and file name of an uploaded archive field; 400 if it is not a
    file, 413 if larger than ``limit``."""
    if not isinstance(upload, UploadFile):
        raise HTTPException(400, "no archive: send the bot's .tar.gz or .zip as the "
                                 "'archive' file field")
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"the archive is larger than {limit} bytes")
    return data, (upload.filename or "upload")[:200]
