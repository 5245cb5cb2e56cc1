"""The game record (arena/store/records.py) and the one game loop (arena/games/loop.py):
JSON in and out, what a seat and a spectator may see, and no trio in reports."""

from __future__ import annotations

import json
import pickle
import random
import subprocess
import sys

import pytest

from arena.games import game_class, make_game
from arena.games.base import IllegalActionError
from arena.games.loop import bot_choose, default_choose, play, turns
from arena.store import faults
from arena.store.records import FaultRecord, GameRecord, GameResult, forfeit_places


@pytest.mark.parametrize(
    "module", ["reports.render", "arena.store.database", "arena.store.records"])
def test_storage_and_reports_load_no_trio(module: str) -> None:
    code = f"import {module}, sys; assert 'trio' not in sys.modules, 'trio loaded'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def played(game: str, players: int, seed: int, options: dict | None = None) -> GameRecord:
    """A random game as the referee would record it (with made-up move times)."""
    rules = make_game(game, players, options)
    state = rules.new_state(seed)
    rng = random.Random(seed)
    actions = play(state, lambda state, seat: rng.choice(state.legal_actions(seat)))
    times: list[list[list[int] | None]] = [
        [[n, n // 2] for n, _ in enumerate(step)] for step in actions]
    return GameRecord(actions=actions, events=[e.to_dict() for e in state.events],
                      reveal=state.reveal(), times=times,
                      stderr=[f"seat {s} log" for s in range(players)],
                      bot_info=[{"name": f"b{s}", "version": "1", "author": "t"}
                                for s in range(players)],
                      actions_public=rules.actions_public)


def rummy_five_with_a_hidden_window() -> GameRecord:
    """A 3-player rummy-five record with a claim-window step of two seats."""
    for seed in range(200):
        record = played("rummy-five", 3, seed, {"deals": 1})
        if any(len(step) >= 2 for step in record.actions):
            return record
    raise AssertionError("no multi-seat claim window in 200 seeds")


def test_a_record_round_trips_through_json_and_storage_bytes() -> None:
    record = rummy_five_with_a_hidden_window()
    again = GameRecord.from_json(json.loads(json.dumps(record.to_json())))
    assert again == record
    assert GameRecord.unpack(record.pack()) == record


def test_a_record_pickles_as_its_stored_bytes() -> None:
    """What a Dask worker sends back: the packed bytes, not the object graph;
    storing the record read back does not pack it again."""
    record = played("furious-five", 3, 11)
    sent = pickle.dumps(record)
    assert len(sent) < len(record.pack()) + 200
    received = pickle.loads(sent)
    assert received == record
    assert received.pack() is received.pack() and received.pack() == record.pack()


def test_a_record_stored_by_older_code_reads_with_defaults() -> None:
    old = GameRecord.from_json({"actions": [[[0, "draw deck"]]], "events": [], "reveal": {},
                                "stderr": ["", ""], "bot_info": ["junk", {"name": "b"}]})
    assert old.times == [] and old.bot_info == [{}, {"name": "b"}]
    assert old.actions_public is False  # unknown: nothing of the log is shown
    assert old.spectator_view(game_class("five").public_decisions).steps == []


def test_a_seat_sees_its_own_decisions_the_public_ones_and_its_events() -> None:
    record = rummy_five_with_a_hidden_window()
    public = game_class("rummy-five").public_decisions
    hidden = 0
    for seat in range(3):
        view = record.seat_view(seat, public)
        assert view.events == [e for e in record.events if "to" not in e or seat in e["to"]]
        shown = {step.number: step for step in view.steps}
        for number, step in enumerate(record.actions):
            visible = {s for s, _ in public(step)} | {seat}
            expected = [(s, a, record.times[number][i])
                        for i, (s, a) in enumerate(step) if s in visible]
            moves = shown[number].moves if number in shown else []
            assert [(m.seat, m.action, m.time) for m in moves] == expected
            hidden += len(step) - len(expected)
        assert view.reveal == record.reveal and view.bot_info == record.bot_info
    assert hidden, "some seat's claim-window answer is private to it"


def test_a_spectator_sees_public_decisions_and_public_events_only() -> None:
    record = rummy_five_with_a_hidden_window()
    public = game_class("rummy-five").public_decisions
    view = record.spectator_view(public)
    assert view.seat is None
    assert view.events == [e for e in record.events if "to" not in e]
    expected = [(n, public(step)) for n, step in enumerate(record.actions) if public(step)]
    assert [(s.number, [(m.seat, m.action) for m in s.moves]) for s in view.steps] == expected
    assert len(view.steps) < len(record.actions)  # lone window answers are not even shown
    json.dumps(view.to_json())


def test_a_spectator_sees_no_hidden_action_of_octablitz() -> None:
    record = played("octablitz", 3, 4, {"deals": 2})
    assert not record.actions_public
    assert any(a.startswith("down ") for step in record.actions for _, a in step)
    view = record.spectator_view(game_class("octablitz").public_decisions)
    assert view.steps == []
    assert all("to" not in event for event in view.events)
    mine = record.seat_view(1, game_class("octablitz").public_decisions)
    assert {m.seat for step in mine.steps for m in step.moves} == {1}  # its own plays only
    assert all("to" not in event or 1 in event["to"] for event in mine.events)


def test_play_json_is_the_documented_object() -> None:
    record = played("furious-five", 2, 3, {"rounds": 1})
    result = GameResult(seed=3, bots=["a", "b"], scores=[1.0, -1.0], game_places=[1, 2],
                        places=forfeit_places([1, 2], {0}), record=record, ignored=[0, 0],
                        faults=[FaultRecord(0, "a", "crash", "exited", "tail", step=2)],
                        duration=0.123456, decisions=sum(map(len, record.actions)))
    out = json.loads(json.dumps(result.play_json("furious-five", {"rounds": 1})))
    assert list(out) == ["game", "seed", "options", "bots", "scores", "places", "game_places",
                         "faults", "duration", "decisions", "record"]
    assert list(out["record"]) == ["actions", "events", "reveal", "times"]
    assert out["places"] == [2, 1] and out["duration"] == 0.1235
    assert out["faults"] == [{"seat": 0, "bot": "a", "kind": "crash", "detail": "exited",
                              "stderr_tail": "tail", "step": 2}]
    assert out["record"]["actions"] == record.actions


def test_fault_kinds_and_labels_live_with_the_fault_classes() -> None:
    import reports.render as render

    for cls in faults.FAULT_CLASSES:
        assert issubclass(cls, faults.BotFault)
        assert faults.FAULT_LABELS[cls.kind] == cls.label
    assert faults.FAULT_KINDS == ("timeout", "crash", "memory", "illegal_action",
                                  "protocol_error")
    assert render.FAULT_LABELS is faults.FAULT_LABELS


def test_the_loop_logs_every_step_and_replays_exactly() -> None:
    game = make_game("rummy-five", 3, {"deals": 1})
    state = game.new_state(8)
    steps: list[int] = []
    log = play(state, default_choose, lambda s: steps.append(len(s.events)))
    assert state.is_terminal() and len(steps) == len(log)
    again = game.new_state(8)
    for step in log:
        again.apply_actions(dict(step))
    assert [e.to_dict() for e in again.events] == [e.to_dict() for e in state.events]


def test_the_loop_refuses_a_missing_or_illegal_decision() -> None:
    state = make_game("furious-five", 2, {"rounds": 1}).new_state(1)
    with pytest.raises(IllegalActionError):
        for _turn in turns(state):
            pass  # nobody decided
    with pytest.raises(IllegalActionError):
        play(state, bot_choose(lambda _observation, legal: len(legal)))
