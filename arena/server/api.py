"""The server's JSON API under ``/api/`` (documented in docs/server.md).

Reads take a bearer token or a browser session; every write takes a bearer
token only (``Authorization: Bearer T``), so no other site can make a
signed-in browser write through the API (no CSRF).
"""

from __future__ import annotations

import math
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.server.auth import Viewer
from arena.server.common import (
    bot_url,
    cached,
    own_move_logs,
    own_submission,
    owned_seats,
    server_of,
    viewer,
)
from arena.server.pages import (
    PAGE_ROWS,
    accept_upload,
    game_filters,
    retire_version,
)
from arena.store.accounts import Submission
from arena.store.database import StoredGame


def _bearer(request: Request) -> Viewer:
    who = viewer(request)
    if not who.bearer or who.user is None:
        raise HTTPException(401, "this needs an API token: Authorization: Bearer TOKEN")
    return who


def live(request: Request, who: Viewer) -> Response:
    """What changed, for live pages: a stamp that changes whenever something is stored."""
    return JSONResponse({"stamp": server_of(request).views.snapshot().stamp_text})


def leaderboard(request: Request, who: Viewer) -> Response:
    snap = server_of(request).views.snapshot()
    return JSONResponse({"pools": [
        {"pool": s.anchor, "title": s.title, "games": s.games,
         "rows": [{"bot": row.bot, "base": snap.bases.get(row.bot, row.bot), "rank": row.rank,
                   "elo": row.rating.estimate if row.rating and math.isfinite(row.rating.estimate)
                   else None, "elo_text": row.elo,
                   "games": row.tally.games, "average_place": row.tally.average_place,
                   "faults": sum(row.faults)} for row in s.board]}
        for s in snap.sections]})


def game_json(game: StoredGame, seed_shown: bool, own: list[int]) -> dict[str, Any]:
    """A game as the API shows it: the seed only once its tournament is over, the
    faults' stderr only for the viewer's own seats."""
    return {"id": game.id, "tournament": game.tournament_id, "game": game.game,
            "table": game.table, "number": game.number,
            "seed": game.seed if seed_shown else None, "seats": game.seats,
            "scores": game.scores, "places": game.places, "duration": game.duration,
            "faults": [{**{k: v for k, v in f.items() if k != "stderr_tail"},
                        **({"stderr_tail": f["stderr_tail"]} if f["seat"] in own else {})}
                       for f in game.faults]}


def games(request: Request, who: Viewer) -> Response:
    filters, page = game_filters(request)
    snap = server_of(request).views.snapshot()
    found = snap.filtered(**filters)
    return JSONResponse({"total": len(found), "page": page, "games": [
        game_json(g, snap.finished(g.tournament_id), [])
        for g in found[page * PAGE_ROWS:(page + 1) * PAGE_ROWS]]})


def game(request: Request, who: Viewer) -> Response:
    server = server_of(request)
    found = server.accounts.store.game(request.path_params["game_id"])
    if found is None:
        raise HTTPException(404, f"no game {request.path_params['game_id']}")
    snap = server.views.snapshot()
    own = owned_seats(request, who, found.seats, snap.bases)
    logs = own_move_logs(request, found.id, own)
    return JSONResponse({**game_json(found, snap.finished(found.tournament_id), own),
                         "own_seats": own,
                         **({"move_logs": {str(seat): logs.get(seat, []) for seat in own}}
                            if own else {})})


def bot(request: Request) -> Response:
    who = viewer(request)
    accounts = server_of(request).accounts
    base = request.path_params["base"]
    versions = accounts.store.bot_versions(base)
    owner_id = accounts.owner(base)
    if not versions and owner_id is None:
        raise HTTPException(404, f"no bot {base!r}")
    body: dict[str, Any] = {"bot": base, "versions": [
        {"label": v.label, "version": v.version, "author": v.author, "games": v.games,
         "retired": v.retired} for v in versions]}
    if who.may_manage(owner_id):
        places = accounts.queue_positions()
        body["submissions"] = [submission_json(s, places.get(s.id))
                               for s in accounts.submissions(bases=[base])]
    return JSONResponse(body)


def submission_json(found: Submission, queue_position: int | None) -> dict[str, Any]:
    """A submission as the API shows it: its place in the checkers' queue (None
    unless queued), its check's games so far, its report once checked, and once
    passed the path of its bot's page (``bot_url``; None before)."""
    return {"id": found.id, "bot": found.base, "filename": found.filename,
            "status": found.status, "label": found.label, "message": found.message,
            "queue_position": queue_position, "progress": found.progress or [],
            "report": found.report,
            "bot_url": bot_url(found.base) if found.status == "passed" else None}


def submission(request: Request) -> Response:
    who = viewer(request)
    found = own_submission(request, who, request.path_params["submission_id"])
    return JSONResponse(submission_json(
        found, server_of(request).accounts.queue_positions().get(found.id)))


async def submit(request: Request) -> Response:
    """``POST /api/submissions``: a multipart upload with the archive as ``archive``."""
    who = await run_in_threadpool(_bearer, request)
    limit = server_of(request).queue.limits.archive_bytes
    form = await request.form(max_files=1, max_fields=5)
    return await accept_upload(request, who, form.get("archive"), limit, None)


async def retire(request: Request) -> Response:
    """``POST /api/bots/{base}/retire`` with ``{"version": V}`` (none: every version)."""
    who = await run_in_threadpool(_bearer, request)
    try:
        body = await request.json()
    except ValueError:
        body = {}
    version = body.get("version", "") if isinstance(body, dict) else ""
    if not isinstance(version, str):
        raise HTTPException(400, "version must be a string")
    retired = await run_in_threadpool(retire_version, request, who,
                                      request.path_params["base"], version)
    return JSONResponse({"retired": retired})


def tokens(request: Request) -> Response:
    who = _bearer(request)
    assert who.user is not None
    return JSONResponse({"tokens": [
        {"id": t.id, "label": t.label, "revoked": t.revoked, "created": t.created.isoformat()}
        for t in server_of(request).accounts.tokens(who.user.id)]})


def revoke(request: Request) -> Response:
    who = _bearer(request)
    assert who.user is not None
    token_id = request.path_params["token_id"]
    if not server_of(request).accounts.revoke_token(who.user.id, token_id):
        raise HTTPException(404, f"no token {token_id}")
    return JSONResponse({"revoked": token_id})


async def not_found(request: Request) -> Response:
    raise HTTPException(404, f"no such API endpoint: {request.url.path}")


def routes() -> list[Route]:
    return [
        Route("/api/live", cached(live)),
        Route("/api/leaderboard", cached(leaderboard)),
        Route("/api/games", cached(games)),
        Route("/api/games/{game_id:int}", cached(game)),
        Route("/api/bots/{base}", bot),
        Route("/api/bots/{base}/retire", retire, methods=["POST"]),
        Route("/api/submissions", submit, methods=["POST"]),
        Route("/api/submissions/{submission_id:int}", submission),
        Route("/api/tokens", tokens),
        Route("/api/tokens/{token_id:int}", revoke, methods=["DELETE"]),
        Route("/api/{rest:path}", not_found, methods=["GET", "POST", "PUT", "DELETE"]),
    ]
