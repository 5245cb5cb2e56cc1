"""Replay views computed once and stored: the view builder process beside a run, the
report copying stored views (and computing, then storing, those missing or of an older
format), deleting them with their tournament.  Real SQLite files, a real builder process."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import trio
from sqlalchemy import func, select, update

from arena.runner.views import run_view_builder
from arena.store.database import RECORDS, VIEWS, Store
from arena.store.records import GameRecord
from arena.store.replays import VIEWS_FORMAT, ReplayViews, views
from arena.store.view_jobs import load_views
from reports.render import render_report
from tests.replay_page import page_data, page_facts
from tests.test_replay_viewer import played

GAMES = 6


def _store(tmp_path: Path) -> tuple[Store, int, list[int]]:
    """A database of :data:`GAMES` stored five games (no views yet)."""
    store = Store(f"sqlite:///{tmp_path}/a.db")
    games = [played("five", 3, seed) for seed in range(GAMES)]
    bots = games[0].result.bots
    store.register_bots([(bot, bot) for bot in bots])
    tid = store.create_tournament("five", {}, [bots], total_games=GAMES)
    ids = [store.save_game(tid, 0, number, game.options, game.result)
           for number, game in enumerate(games)]
    return store, tid, ids


def _stored_views(store: Store) -> dict[int, int]:
    with store.engine.connect() as connection:
        return {game_id: form for game_id, form in connection.execute(
            select(VIEWS.c.game_id, VIEWS.c.format))}


def test_the_view_builder_process_computes_each_stored_games_views(tmp_path: Path) -> None:
    store, tid, ids = _store(tmp_path)
    assert store.without_views(VIEWS_FORMAT, tid) == ids

    async def until_built() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: run_view_builder(store.url, tid, start_after=0))
            with trio.fail_after(120):
                while store.without_views(VIEWS_FORMAT, tid):
                    await trio.sleep(0.2)
            nursery.cancel_scope.cancel()

    trio.run(until_built)
    assert _stored_views(store) == dict.fromkeys(ids, VIEWS_FORMAT)
    for game in store.games(tid):
        stored = ReplayViews.load(dict(store.replay_views([game.id], VIEWS_FORMAT))[game.id])
        record = store.record(game.id)
        assert record is not None and stored == ReplayViews.load(views(game, record).dump())


def test_a_report_copies_stored_views_and_never_replays_their_records(tmp_path: Path) -> None:
    store, tid, ids = _store(tmp_path)
    load_views(store, list(store.games(tid)))  # computed and stored
    assert _stored_views(store) == dict.fromkeys(ids, VIEWS_FORMAT)
    nonsense = GameRecord(actions=[[[0, "no such action"]]], stderr=[""] * 3).pack()
    with store.engine.begin() as connection:  # records that would not replay any more
        connection.execute(update(RECORDS).values(data=nonsense))
    render_report(store, tmp_path / "site", bootstrap=0)
    for gid in ids:
        html = (tmp_path / "site" / f"game-{gid}.html").read_text()
        assert page_facts(html)["bots"] == ["bot0", "bot1", "bot2"] and 'id="viewer"' in html


def test_a_report_computes_and_stores_missing_and_outdated_views(tmp_path: Path) -> None:
    store, tid, ids = _store(tmp_path)
    load_views(store, list(store.games(tid))[:2])
    with store.engine.begin() as connection:
        connection.execute(update(VIEWS).where(VIEWS.c.game_id == ids[0])
                           .values(format=VIEWS_FORMAT - 1, data=b"older code's"))
    assert store.without_views(VIEWS_FORMAT, tid) == [ids[0], *ids[2:]]
    render_report(store, tmp_path / "site", bootstrap=0)
    assert _stored_views(store) == dict.fromkeys(ids, VIEWS_FORMAT)
    assert all(page_data((tmp_path / "site" / f"game-{gid}.html").read_text())["steps"]
               for gid in ids)


def test_deleting_a_tournament_deletes_its_views(tmp_path: Path) -> None:
    store, tid, _ = _store(tmp_path)
    load_views(store, list(store.games(tid)))
    assert store.delete_tournament(tid) == GAMES
    with store.engine.connect() as connection:
        assert connection.scalar(select(func.count()).select_from(VIEWS)) == 0


#: An arena in a process of its own: the view builder of tournament ``argv[2]`` of
#: the database ``argv[1]`` beside it, until killed.
_ARENA = """
import sys, trio
from arena.runner.views import run_view_builder
trio.run(lambda: run_view_builder(sys.argv[1], int(sys.argv[2]), start_after=0))
"""


def _view_builders(parent: int) -> list[int]:
    """The view builders that process ``parent`` started (by their command line)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError, ValueError):
            continue
        if b"arena.store.view_builder" in argv and str(parent).encode() in argv \
                and state != "Z":
            found.append(int(proc.name))
    return found


def test_the_view_builder_dies_with_an_arena_killed_by_sigkill(tmp_path: Path) -> None:
    store, tid, _ = _store(tmp_path)
    arena = subprocess.Popen([sys.executable, "-c", _ARENA, store.url, str(tid)],
                             stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _view_builders(arena.pid):
            assert time.monotonic() < deadline and arena.poll() is None, "no view builder"
            time.sleep(0.01)
    finally:
        arena.kill()  # as kill -9: nothing of the arena's runs after this
        arena.wait()
    # at once, however far it got (its imports take a second of CPU, more at nice 19)
    deadline = time.monotonic() + 20
    while _view_builders(arena.pid):
        assert time.monotonic() < deadline, "the view builder outlived its arena"
        time.sleep(0.05)
