"""A signed-in person plays the ladder's bots in the browser.

The person's seat is :class:`~arena.runner.human.HumanEntrant` (``arena play
--human``'s) with a :class:`BrowserSeat` for a terminal: the referee asks it as it
asks a bot, the other seats are the ladder's bots, run as every bot runs (the
server's sandbox, the default time control of ``arena play``), on the game's
default options.  The seat's view (what a bot would be sent: its observation,
the events since its last turn, the legal actions) is published as JSON at
``/api/play/ID``, which waits up to :data:`POLL_SECONDS` for a change
(``?after=VERSION``), and the page's script draws it with the actions as
buttons; a move is posted with the page's CSRF token (``/play/ID/move``) or
through the API with a token.  No answer within the person's move time
(:data:`~arena.server.state.PLAY_MOVE_SECONDS`) forfeits the seat with a
timeout, as a bot's would; so does resigning.

The games run in the server's event loop (a game is a few bot moves per move
of the person: little CPU, unlike a ladder), at most
:data:`~arena.server.state.PLAY_GAMES` at once in the server and one per
person.  A finished game is stored as a one-game tournament of kind
:data:`~arena.store.database.PERSON_KIND`: in no rating or leaderboard, its
replay at ``/games/ID``.  A game in play is its player's alone: anyone else gets
404.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import trio
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from arena.bots.versions import entrant_status
from arena.games import make_game
from arena.runner.client import Clock, TimeControl
from arena.runner.human import HumanEntrant, Resigned
from arena.runner.plan import store_single_game
from arena.runner.process import BotSpec
from arena.runner.referee import play_single_game
from arena.runner.terminal_view import event_lines, observation_lines
from arena.server.auth import Viewer, check_csrf
from arena.server.common import server_of, viewer
from arena.server.pages import render
from arena.server.state import PlaySettings
from arena.store.database import PERSON_KIND, Store
from arena.store.faults import TimeoutFault
from arena.store.records import GameResult
from protocol import wire

log = logging.getLogger("arena.server")

#: The name the person's seat plays under, and its command as stored.
PERSON = BotSpec("human", "(a person in the browser)")
#: Seconds ``/api/play/ID?after=V`` waits for the game to change before it answers.
POLL_SECONDS = 20.0
#: Event lines a game keeps for its page (the latest).
EVENTS_KEPT = 200
#: Finished games kept in memory for their pages (the newest); the stored replay stays.
FINISHED_KEPT = 256
#: The move that resigns.
RESIGN = -1


@dataclass
class LiveGame:
    """A person's game while it is played, and after (until dropped): what their
    page shows.  Changed only in the event loop."""

    id: int
    user_id: int
    game: str
    seat: int
    names: list[str]
    move_seconds: float
    version: int = 0
    status: str = "starting"  # starting, your-move, waiting, over, failed
    turn: int = 0
    observation: dict[str, Any] | None = None
    view: list[str] = field(default_factory=list)
    legal: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    deadline: float | None = None
    result: dict[str, Any] | None = None
    game_id: int | None = None
    changed: trio.Event = field(default_factory=trio.Event)
    answer: int | None = None
    answered: trio.Event = field(default_factory=trio.Event)

    @property
    def running(self) -> bool:
        return self.status not in ("over", "failed")

    def bump(self) -> None:
        """Wake every page waiting for a change."""
        self.version += 1
        self.changed.set()
        self.changed = trio.Event()

    def heard(self, events: Iterable[Mapping[str, Any]]) -> None:
        self.events = [*self.events, *(line.strip() for line in event_lines(events))
                       ][-EVENTS_KEPT:]

    async def wait(self, after: int, seconds: float) -> None:
        """Until the game's version passes ``after``, at most ``seconds``."""
        with trio.move_on_after(seconds):
            while self.version <= after:
                await self.changed.wait()

    def move(self, turn: object, move: object) -> None:
        """The person's answer to turn ``turn``: the index of a legal action, or
        :data:`RESIGN`; 409 when it is not their turn, 400 for an illegal move."""
        if self.status != "your-move" or str(turn) != str(self.turn):
            raise HTTPException(409, "it is not your move (the page shows the game as it is now)")
        try:
            index = int(str(move))
        except ValueError:
            index = len(self.legal)
        if index != RESIGN and not 0 <= index < len(self.legal):
            raise HTTPException(400, f"illegal move {str(move)[:20]!r}: choose an action "
                                     f"from 0 to {len(self.legal) - 1}")
        self.answer = index
        self.answered.set()

    def to_json(self) -> dict[str, Any]:
        """What the page draws."""
        left = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        return {"id": self.id, "game": self.game, "seat": self.seat, "players": self.names,
                "status": self.status, "version": self.version, "turn": self.turn,
                "observation": self.observation, "view": self.view, "legal": self.legal,
                "events": self.events,
                "seconds_left": None if left is None else round(left),
                "result": self.result, "game_id": self.game_id,
                "replay": None if self.game_id is None else f"/games/{self.game_id}"}


class BrowserSeat:
    """The person's seat client (:class:`~arena.runner.referee.SeatClient`): a
    turn is published to :class:`LiveGame` and answered from the browser."""

    def __init__(self, live: LiveGame) -> None:
        self.live = live
        self.ignored = 0
        self.last_move = (0.0, 0.0)

    async def request(self, observation: dict[str, Any], legal: Sequence[str],
                      events: Sequence[Mapping[str, Any]], clock: Clock) -> int:
        """Show the turn; the index the person chose.  TimeoutFault after the
        person's move time, Resigned if they resigned (``clock``, a bot's, is
        not charged)."""
        live, started = self.live, time.monotonic()
        live.heard(events)
        live.turn += 1
        live.observation, live.legal = observation, list(legal)
        live.view = observation_lines(observation, live.names)
        live.answer, live.answered = None, trio.Event()
        live.deadline = started + live.move_seconds
        live.status = "your-move"
        live.bump()
        with trio.move_on_after(live.move_seconds):
            await live.answered.wait()
        live.status, live.deadline, live.legal = "waiting", None, []
        live.bump()
        self.last_move = (time.monotonic() - started, 0.0)
        if live.answer is None:
            raise TimeoutFault(f"no move in {live.move_seconds:g} s in the browser")
        if live.answer == RESIGN:
            raise Resigned("resigned in the browser")
        return live.answer

    async def notify(self, message: dict[str, Any], timeout: float) -> None:
        if message.get("type") == wire.GAME_START:
            self.live.status = "waiting"
            self.live.bump()
        elif message.get("type") == wire.GAME_END:
            self.live.heard(message.get("events", ()))


class Plays:
    """The server's browser games: started, looked up (only by their player),
    limited."""

    def __init__(self, settings: PlaySettings, store: Store) -> None:
        self.settings, self.store = settings, store
        self.games: OrderedDict[int, LiveGame] = OrderedDict()
        self.numbers = itertools.count(1)

    def running(self) -> list[LiveGame]:
        return [g for g in self.games.values() if g.running]

    def of(self, who: Viewer, number: int) -> LiveGame:
        """The game ``number`` if it is ``who``'s, else 404."""
        found = self.games.get(number)
        if found is None or who.user is None or found.user_id != who.user.id:
            raise HTTPException(404, f"no game {number} in play")
        return found

    def check_room(self, user_id: int) -> None:
        """429 if the user has a game running, or the server has its most."""
        mine = [g for g in self.running() if g.user_id == user_id]
        if mine:
            raise HTTPException(429, f"you have a game in play already: /play/{mine[0].id}")
        if len(self.running()) >= self.settings.at_once:
            raise HTTPException(429, f"{self.settings.at_once} games are being played in the "
                                     f"browser: try again in a few minutes",
                                headers={"Retry-After": "60"})

    def start(self, user_id: int, game: str, seat: int, bots: list[BotSpec]) -> LiveGame:
        """Start a game of ``game``: the person at ``seat``, ``bots`` in the other
        seats in order (checked against the limits first)."""
        self.check_room(user_id)
        specs = [*bots[:seat], PERSON, *bots[seat:]]
        live = LiveGame(next(self.numbers), user_id, game, seat, [s.name for s in specs],
                        self.settings.move_seconds)
        live.names[seat] = "you"
        self.games[live.id] = live
        while len(self.games) > FINISHED_KEPT + self.settings.at_once:
            oldest = next(g for g in self.games.values() if not g.running)
            del self.games[oldest.id]
        trio.lowlevel.spawn_system_task(self.play, live, specs, name=f"play {live.id}")
        return live

    async def play(self, live: LiveGame, specs: list[BotSpec]) -> None:
        """Play ``live`` to its end and store it (in a worker thread)."""
        store = self.store
        try:
            rules = make_game(live.game, len(specs), {})
            seed = int.from_bytes(os.urandom(7), "big")
            result = await play_single_game(
                rules, seed, specs, TimeControl(), self.settings.sandbox,
                {live.seat: functools.partial(HumanEntrant, seat=BrowserSeat(live))})
            live.result = result_json(result)
            live.game_id = await trio.to_thread.run_sync(functools.partial(
                store_single_game, store, live.game, {}, rules.options, specs, result,
                kind=PERSON_KIND, extra={"user_id": live.user_id}))
            live.status = "over"
        except Exception:
            log.exception("browser game %d failed", live.id)
            live.status = "failed"
        finally:
            live.deadline, live.legal = None, []
            live.bump()


def result_json(result: GameResult) -> dict[str, Any]:
    """A finished game's scores, places and faults, for the page."""
    return {"scores": result.scores, "places": result.places,
            "faults": [{"seat": f.seat, "kind": f.kind, "detail": f.detail}
                       for f in result.faults]}


def plays_of(request: Request) -> Plays:
    """The server's :class:`Plays` (``create_app`` makes it)."""
    plays: Plays = request.app.state.plays
    return plays


# -- the handlers -------------------------------------------------------------------------

def opponents(request: Request, game: str) -> list[BotSpec]:
    """The bots the ladder of ``game`` plays now (passed their check, newest
    versions); 404 when the server runs no ladder of ``game``."""
    if game not in server_of(request).settings.play.games:
        raise HTTPException(404, f"no ladder of {game[:40]!r} runs here")
    return entrant_status(server_of(request).accounts.store, game)[0]


def chosen(request: Request, game: str, seat: object, names: list[str]
           ) -> tuple[int, list[BotSpec]]:
    """The person's seat and the bots for the others (the first ladder bots when
    ``names`` is empty), checked; 400 for a seat or bot that does not fit."""
    seats = server_of(request).settings.play.seats
    try:
        where = int(str(seat))
    except ValueError:
        where = -1
    if not 0 <= where < seats:
        raise HTTPException(400, f"seat must be from 0 to {seats - 1}")
    found = {bot.name: bot for bot in opponents(request, game)}
    names = names or list(found)[:seats - 1]
    if len(names) != seats - 1:
        raise HTTPException(400, f"a game of {game} here needs {seats - 1} bots beside you "
                                 f"(the ladder has {len(found)})")
    unknown = [name for name in names if name not in found]
    if unknown:
        raise HTTPException(400, f"{unknown[0][:80]!r} does not play the {game} ladder")
    return where, [found[name] for name in names]


async def start(request: Request, who: Viewer, game: str, seat: object,
                names: list[str]) -> LiveGame:
    assert who.user is not None
    plays = plays_of(request)
    plays.check_room(who.user.id)  # before the database is read
    where, bots = await run_in_threadpool(chosen, request, game, seat, names)
    return plays.start(who.user.id, game, where, bots)


async def signed_in(request: Request) -> Viewer:
    who = await run_in_threadpool(viewer, request)
    if who.user is None:
        raise HTTPException(401, "sign in first")
    return who


async def play_page(request: Request) -> Response:
    """Choose a ladder game, its bots and your seat."""
    who = await run_in_threadpool(viewer, request)
    if who.user is None:
        return RedirectResponse("/signin", 303)
    user_id = who.user.id
    running = [g for g in plays_of(request).running() if g.user_id == user_id]
    settings = server_of(request).settings.play

    def draw() -> Response:
        games = [(game, [bot.name for bot in opponents(request, game)])
                 for game in settings.games]
        return render(request, who, "play.html", active="play", games=games,
                      seats=settings.seats, running=running[0] if running else None,
                      move_seconds=settings.move_seconds)

    return await run_in_threadpool(draw)


async def play_form(request: Request) -> Response:
    form = await request.form()
    who = await signed_in(request)
    check_csrf(who, form.get("csrf"))
    live = await start(request, who, str(form.get("game", "")), form.get("seat", ""),
                       [str(name) for name in form.getlist("bot") if name])
    return RedirectResponse(f"/play/{live.id}", 303)


async def game_page(request: Request) -> Response:
    who = await signed_in(request)
    live = plays_of(request).of(who, request.path_params["number"])
    return await run_in_threadpool(functools.partial(
        render, request, who, "play_game.html", active="play", game=live))


async def move_form(request: Request) -> Response:
    """The page's move (its CSRF token in the form); the answer is JSON."""
    form = await request.form()
    try:
        who = await signed_in(request)
        check_csrf(who, form.get("csrf"))
        plays_of(request).of(who, request.path_params["number"]).move(
            form.get("turn"), form.get("move"))
    except HTTPException as exc:
        return JSONResponse({"error": exc.detail, "status": exc.status_code}, exc.status_code)
    return JSONResponse({"ok": True})


async def state_json(request: Request) -> Response:
    """The game as its page draws it; with ``?after=V`` once its version passes
    ``V`` (or after :data:`POLL_SECONDS`)."""
    who = await signed_in(request)
    live = plays_of(request).of(who, request.path_params["number"])
    after = request.query_params.get("after", "")
    if after.lstrip("-").isdigit():
        await live.wait(int(after), POLL_SECONDS)
    return JSONResponse(live.to_json())


async def body_of(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise HTTPException(400, "send a JSON object")
    return body


async def start_json(request: Request) -> Response:
    """``POST /api/play`` ``{"game": G, "seat": N, "bots": [labels]}`` with a token."""
    who = await signed_in(request)
    if not who.bearer:
        raise HTTPException(401, "this needs an API token: Authorization: Bearer TOKEN")
    body = await body_of(request)
    bots = body.get("bots") or []
    if not isinstance(bots, list):
        raise HTTPException(400, "bots is a list of bot labels")
    live = await start(request, who, str(body.get("game", "")), body.get("seat", 0),
                       [str(name) for name in bots])
    return JSONResponse({**live.to_json(), "url": f"/play/{live.id}"}, 201)


async def move_json(request: Request) -> Response:
    """``POST /api/play/ID/move`` ``{"turn": T, "move": INDEX}`` (-1 resigns) with a token."""
    who = await signed_in(request)
    if not who.bearer:
        raise HTTPException(401, "this needs an API token: Authorization: Bearer TOKEN")
    body = await body_of(request)
    plays_of(request).of(who, request.path_params["number"]).move(body.get("turn"),
                                                                   body.get("move"))
    return JSONResponse({"ok": True})


def routes() -> list[Route]:
    """The browser game's pages and API (before the others: /api/ ends in a catch-all)."""
    return [
        Route("/play", play_page),
        Route("/play", play_form, methods=["POST"]),
        Route("/play/{number:int}", game_page),
        Route("/play/{number:int}/move", move_form, methods=["POST"]),
        Route("/api/play", start_json, methods=["POST"]),
        Route("/api/play/{number:int}", state_json),
        Route("/api/play/{number:int}/move", move_json, methods=["POST"]),
    ]
