"""Replay pages: one page per replayed game, built from its stored record.

:func:`write_replays` writes them for :func:`reports.render.render_report`;
:func:`replay_context` is what one page shows of a stored record.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Template

from arena.games import game_class
from arena.games.base import OptionError
from arena.records import GameRecord, PublicDecisions
from arena.storage import Store, StoredGame

#: Records loaded from the store at once.
RECORD_BATCH = 500


def write_replays(template: Template, store: Store, out_dir: Path,
                  games: Sequence[StoredGame], replayed: set[int],
                  tournaments: Sequence[dict[str, Any]], common: dict[str, Any]) -> None:
    """Write ``game-<id>.html`` into ``out_dir`` for every game of ``games``
    whose id is in ``replayed``, each linking to its tournament's previous and
    next replayed game; ``common`` is the context every page gets."""
    names = {t["id"]: f"#{t['id']} {t['game']}" for t in tournaments}
    protections = {t["id"]: (t["config"] or {}).get("protections") for t in tournaments}
    todo = list(_neighbours([g for g in games if g.id in replayed]))
    for start in range(0, len(todo), RECORD_BATCH):
        chunk = todo[start : start + RECORD_BATCH]
        records = dict(store.records([game.id for game, _, _ in chunk]))
        for game, previous, following in chunk:
            _write_replay(template, out_dir, game, records.get(game.id) or GameRecord(), previous,
                          following, names, {**common,
                                             "protections": protections.get(game.tournament_id)})


def _write_replay(template: Template, out_dir: Path, game: StoredGame, record: GameRecord,
                  previous: int | None, following: int | None, names: dict[int, str],
                  common: dict[str, Any]) -> None:
    context = {"active": "tournaments", "g": game, "tournament": names.get(game.tournament_id),
               "previous": previous, "following": following, **replay_context(game, record),
               **common}
    (out_dir / f"game-{game.id}.html").write_text(template.render(context), encoding="utf-8")


def _neighbours(games: Sequence[StoredGame]) -> Iterator[
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


def replay_context(game: StoredGame, record: GameRecord) -> dict[str, Any]:
    """What a replay page shows from a stored record: its spectator view
    (:meth:`GameRecord.spectator_view`: public decisions and events, the
    reveal), moves the arena played for a faulted seat marked, and stderr."""
    seats = game.seats
    names = {seat: bot for seat, bot in enumerate(seats)}
    view = record.spectator_view(public_decisions(game.game))
    arena_from = arena_default_from(game.faults)
    # formatted here rather than by template filters: replay pages hold most of the text
    steps = [[(move.seat, names.get(move.seat, "?"), move.action,
               step.number >= arena_from.get(move.seat, step.number + 1))
              for move in step.moves] for step in view.steps]
    events = [(event.get("kind", ""), _event_text(event)) for event in view.events]
    # The organiser publishes the bots' own stderr tails, to help their authors.
    stderr = record.stderr + [""] * (len(seats) - len(record.stderr))
    bot_info = view.bot_info + [{}] * (len(seats) - len(view.bot_info))
    faulted = defaultdict(list)
    for fault in game.faults:
        faulted[fault["seat"]].append(fault["kind"])
    shown = sum(len(step) for step in steps)
    return {"steps": steps, "events": events, "reveal": view.reveal,
            "hidden_actions": bool(record.actions) and not steps,
            "private_decisions": bool(steps) and shown < sum(map(len, record.actions)),
            "stderr": stderr, "faulted": dict(faulted), "bot_info": bot_info}


def _event_text(event: dict[str, Any]) -> str:
    return ", ".join(f"{key}: {value if isinstance(value, str) else json.dumps(value)}"
                     for key, value in event.items() if key != "kind")


def public_decisions(game: str) -> PublicDecisions:
    """The game's :meth:`Game.public_decisions`; none for a game this code
    does not know (a database written by other code)."""
    try:
        return game_class(game).public_decisions
    except OptionError:
        return lambda _step: []


def arena_default_from(faults: Iterable[dict[str, Any]]) -> dict[int, int]:
    """Per faulted seat, the first action step the arena played for it: a
    fault's ``step`` (absent or None in older records: nothing is marked)."""
    first: dict[int, int] = {}
    for fault in faults:
        step = fault.get("step")
        if isinstance(step, int):
            seat = fault["seat"]
            first[seat] = min(step, first.get(seat, step))
    return first
