"""Replay pages: each replayed game drawn as a table you can step through.

What each viewer saw is computed once per game from its record and stored
(:mod:`arena.store.replays`, which says where the line between a spectator and a
seat is drawn); a page only copies it.

``game-<id>.html`` is the public replay page.  It embeds the **spectator's view
only**; nothing any seat held privately is in its HTML or data.  Each seat's view
is a separate file, ``game-<id>-seat<N>.js``, which the page's seat selector loads
(a ``<script>`` element, which works from ``file://``) only when that seat is
chosen; the page lists its bots and the seat files it may load in
``<script id="replay-page">``.  (The server's replay page, which shares
``replay.js``, lists instead the URLs of the JSON seat views its viewer may fetch,
as ``seat_urls``: a server must never answer private data as a script.)
The organiser decides whether seat views are published:
``write_replays(..., seat_views=False)`` writes none, and the selector then offers
the spectator only.  A report folder holding seat files shows every seat's hidden
cards to whoever opens them: publish one only once its games are over, or render it
without seat views.  One shared ``replay.js`` per report; its styles are a section of the one
stylesheet, ``style.css``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Template

from arena.store.database import StoredGame
from arena.store.replays import ReplayViews

TEMPLATES = Path(__file__).parent / "templates"
#: The files every replay page shares, copied once into the report folder.
ASSETS = ("replay.js",)


def write_replay(template: Template, out_dir: Path, game: StoredGame, views: ReplayViews,
                 page: dict[str, Any], *, seat_views: bool = True,
                 logs: Mapping[int, Sequence[Any]] | None = None) -> Path:
    """Write one game's replay page (and with ``seat_views`` its seat files)
    into ``out_dir`` from its stored ``views``; ``page`` is the template's context;
    ``logs``: per seat, its per-move stderr, put in its seat file (never the page).
    Returns the page.

    A record that does not replay gets a page listing its public decisions and
    events instead of the viewer, and no seat files."""
    context = {**page, **views.context, "replayed": views.replayed}
    if views.replayed:
        seat_files = [seat_file(game.id, seat) for seat in range(len(views.seats))] \
            if seat_views else []
        for number, (name, seat) in enumerate(zip(seat_files, views.seats, strict=False)):
            log = (logs or {}).get(number)
            (out_dir / name).write_text(seat_script(seat, log), encoding="utf-8")
        context.update(data=views.spectator, seat_files=seat_files)
    path = out_dir / f"game-{game.id}.html"
    path.write_text(template.render(context), encoding="utf-8")
    return path


def seat_file(game_id: int, seat: int) -> str:
    """The name of the file holding one seat's view of a game."""
    return f"game-{game_id}-seat{seat}.js"


def seat_script(packed: str, logs: Sequence[Any] | None = None) -> str:
    """The script that shows one seat's (packed) view in the replay viewer, with
    its per-move stderr if given."""
    if logs:
        return f'replaySeat("{packed}", {json.dumps(logs, separators=(",", ":"))});\n'
    return f'replaySeat("{packed}");\n'


def neighbours(games: Sequence[StoredGame]) -> Iterator[
        tuple[StoredGame, int | None, int | None]]:
    """Each game with the ids of the previous and next replayed game of its tournament."""
    groups: dict[int, list[StoredGame]] = defaultdict(list)
    for game in games:
        groups[game.tournament_id].append(game)
    for group in groups.values():
        for index, game in enumerate(group):
            previous = group[index - 1].id if index > 0 else None
            following = group[index + 1].id if index + 1 < len(group) else None
            yield game, previous, following
