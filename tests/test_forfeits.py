"""Forfeits: faulting seats share last place, all-fault games have no result, and
every fault records the first action step the arena played for its seat."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from arena.games import make_game
from arena.runner.client import TimeControl
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.tournament import run_tournament
from arena.stats.pools import ratable_games
from arena.stats.ratings import rate
from arena.store.database import Store, counted_games
from arena.store.records import FaultRecord, GameRecord, GameResult, forfeit_places, is_no_result

HERE = Path(__file__).resolve().parent
BAD_BOT = HERE / "bots" / "bad_bot.py"
RANDOM = BotSpec("random", f"{sys.executable} -m sample_bots.random_bot")
CONTROL = TimeControl(handshake=10.0, move=2.0, bank=10.0)


def crasher(name: str) -> BotSpec:
    """Crashes at its 4th request, so in every game (each on a fresh process)."""
    return BotSpec(name, f"{sys.executable} {BAD_BOT} crash 3")


@pytest.mark.parametrize(
    ("game_places", "faulted", "places"),
    [
        ([1, 2], set(), [1, 2]),
        ([2, 1], {1}, [1, 2]),
        ([1, 2, 3], {0}, [3, 1, 2]),
        ([1, 2, 3], {0, 1}, [2, 2, 1]),
        ([1, 1, 3], {2}, [1, 1, 3]),
        ([1, 2], {0, 1}, [2, 2]),  # no result: everyone last, nobody first
        ([3, 1, 2], {0, 1, 2}, [3, 3, 3]),
    ],
)
def test_faulting_seats_share_last_place(game_places: list[int], faulted: set[int],
                                         places: list[int]) -> None:
    assert forfeit_places(game_places, faulted) == places


def test_no_result_means_every_seat_faulted() -> None:
    assert is_no_result(2, [0, 1]) and is_no_result(3, {2, 0, 1})
    assert not is_no_result(2, [1]) and not is_no_result(3, [])


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, int]:
    """Two bots that crash in every game, and a random bot: their shared table has
    no result in any game."""
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('forfeits') / 'arena.db'}")
    plan = Plan(game="furious-five", bots=(crasher("crash-a"), crasher("crash-b"), RANDOM),
                table_size=2, games_per_table=2, options={"rounds": 3}, seed=3,
                control=CONTROL)
    tid = create_tournament(store, plan)
    trio.run(lambda: run_tournament(plan, store, tid, parallel=2))
    return store, tid


def test_a_game_where_every_seat_faulted_has_no_result(tournament: tuple[Store, int]) -> None:
    store, tid = tournament
    games = list(store.games(tid))
    assert len(games) == 6
    empty = [g for g in games if g.no_result]
    assert {tuple(sorted(g.seats)) for g in empty} == {("crash-a", "crash-b")}
    assert len(empty) == 2
    for game in empty:
        assert game.places == [2, 2] and len(game.faults) == 2
    for game in games:
        if not game.no_result:
            assert game.places[game.seats.index("random")] == 1
    # Ratings and place statistics skip the no-result games.
    counted = counted_games(games)
    assert counted == [g for g in games if not g.no_result]
    assert len(ratable_games(games)) == 4
    firsts = {bot: sum(g.places[g.seats.index(bot)] == 1 for g in counted if bot in g.seats)
              for bot in ("crash-a", "crash-b", "random")}
    assert firsts == {"crash-a": 0, "crash-b": 0, "random": 4}
    ratings = {r.player: r for r in rate(ratable_games(games), bootstrap=0)}
    assert ratings["crash-a"].games == ratings["crash-b"].games == 2
    assert ratings["random"].estimate > ratings["crash-a"].estimate


def test_a_fault_records_the_first_step_played_for_its_seat(
        tournament: tuple[Store, int]) -> None:
    store, tid = tournament
    for game in store.games(tid):
        record = store.record(game.id)
        assert record is not None
        assert game.faults
        for fault in game.faults:
            seat, step = fault["seat"], fault["step"]
            own_steps = [i for i, s in enumerate(record.actions)
                         if any(entry[0] == seat for entry in s)]
            assert step == own_steps[3]  # the bot answered 3 requests, then crashed
            state = make_game(game.game, len(game.seats), game.options).new_state(game.seed)
            for i, actions in enumerate(record.actions):
                for s, action in actions:
                    if s == seat and i >= step:
                        assert action == state.default_action(s)
                state.apply_actions(dict(actions))


def game_result(fault: FaultRecord) -> GameResult:
    return GameResult(seed=1, bots=["a", "b"], scores=[1.0, -1.0], game_places=[1, 2],
                      places=forfeit_places([1, 2], {fault.seat}), faults=[fault],
                      record=GameRecord(stderr=["", ""]), ignored=[0, 0],
                      duration=0.1)
