"""The competition server's ASGI application (Starlette) and serving it with
Hypercorn's trio worker, in the caller's trio event loop, beside the task that
keeps its snapshot fresh (:func:`keep_fresh`).  Uploads are only accepted and
queued here: ``arena check-uploads`` builds and checks them in another process.

Every error is an HTML page, or under ``/api/`` a JSON body ``{"error": ...,
"status": ...}``, with its status code; never a traceback.  Unknown ids are 404
whether they exist for someone else or not.  Every response carries the
security headers of :mod:`arena.server.headers`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve
from jinja2 import ChoiceLoader, Environment, FileSystemLoader, PrefixLoader
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import ASGIApp

from arena.server import api, guide, pages, play
from arena.server.bodies import BodyLimit
from arena.server.common import ASSETS, TEMPLATES, CachedPages, server_of
from arena.server.headers import SecurityHeaders
from arena.server.state import Server, Settings
from arena.server.submissions import SubmissionQueue
from arena.server.views import GENERATION_SECONDS, MIN_REFRESH, REFRESH_FACTOR, Views
from arena.store.accounts import Accounts
from reports.templating import TEMPLATES as REPORT_TEMPLATES
from reports.templating import environment as report_environment

log = logging.getLogger("arena.server")
#: Seconds a connection may send nothing while the server waits to read from it.
READ_SECONDS = 60


class Site(Starlette):
    """Starlette with :class:`~arena.server.headers.SecurityHeaders` outside its
    whole stack: Starlette's own outermost middleware answers a handler's
    exception with the 500 page, so a middleware in the ``middleware`` list would
    miss that response."""

    def build_middleware_stack(self) -> ASGIApp:
        return SecurityHeaders(super().build_middleware_stack())


def create_app(accounts: Accounts, queue: SubmissionQueue, settings: Settings) -> Starlette:
    """The application over ``accounts``' database; ``queue`` takes uploads (and
    ``arena check-uploads`` beside it checks them).  Run
    :func:`keep_fresh` on its views beside it, or its snapshot never changes."""
    # The report's templates under report/ (the layout, the replay markup, the chart
    # macros), with their filters.
    env = Environment(loader=ChoiceLoader([FileSystemLoader(TEMPLATES), PrefixLoader(
        {"report": FileSystemLoader(REPORT_TEMPLATES)})]), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(report_environment().filters)
    env.globals["assets"] = ASSETS
    app = Site(routes=[*play.routes(), *api.routes(), *pages.routes(), *guide.routes()],
               middleware=[Middleware(BodyLimit, archive_bytes=queue.limits.archive_bytes),
                           Middleware(CachedPages)],
               exception_handlers={HTTPException: http_error, Exception: server_error})
    app.state.server = Server(accounts, Views(accounts.store, accounts), queue, settings, env)
    app.state.plays = play.Plays(settings.play, accounts.store)
    return app


async def keep_fresh(views: Views) -> None:
    """Until cancelled: read the database's generation every
    :data:`~arena.server.views.GENERATION_SECONDS` and recompute the snapshot when
    it changed, at most every :data:`~arena.server.views.MIN_REFRESH` seconds (or
    ten times as long as the last computation took, so that it takes at most a
    tenth of a core), in a worker thread."""
    while True:
        cost = await trio.to_thread.run_sync(views.refresh, abandon_on_cancel=True)
        await trio.sleep(max(MIN_REFRESH, REFRESH_FACTOR * cost) if cost else GENERATION_SECONDS)


def wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/")


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(request, exc.status_code, exc.detail, exc.headers)


async def server_error(request: Request, exc: Exception) -> Response:
    log.exception("error serving %s", request.url.path, exc_info=exc)
    return error_response(request, 500, "internal error: the server's log says more")


def error_response(request: Request, status: int, detail: str,
                   headers: Any = None) -> Response:
    """An error as JSON under ``/api/``, else as an HTML page."""
    if wants_json(request):
        return JSONResponse({"error": detail, "status": status}, status, headers=headers)
    template = server_of(request).templates.get_template("error.html")
    return HTMLResponse(template.render(status=status, detail=detail, viewer=None,
                                        stamp=None), status, headers=headers)


async def serve(app: Any, host: str, port: int, *,
                task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
                shutdown: Callable[[], Awaitable[None]] | None = None) -> None:
    """Serve ``app`` on ``host:port`` with Hypercorn's trio worker until cancelled
    (or ``shutdown`` returns); ``task_status.started`` gets the bound addresses."""
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = "-"
    config.graceful_timeout = 2.0
    config.read_timeout = READ_SECONDS
    await hypercorn_serve(app, config, shutdown_trigger=shutdown,
                          task_status=task_status)
