"""Replay pages (reports/replay.py), without a browser: what each viewer's data holds,
checked against the engines, what the spectator's page may never hold, and its size."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jinja2 import Template

from arena.games import field_labels, game_class, game_names, make_game
from arena.games.base import State
from arena.games.loop import play
from arena.store.database import Store, StoredGame
from arena.store.records import GameRecord, GameResult
from arena.store.replays import (
    Position,
    ReplayData,
    decode,
    decode_seat,
    replay,
    replay_data,
    timeline,
    unpack,
    views,
)
from reports.render import render_report
from reports.replay import seat_file, write_replay
from tests.replay_page import page_facts, payload, seat_files

XSS = "<script>alert(1)</script>"
#: Each game at a table size that plays a typical game quickly.
PLAYERS = {"furious-five": 3, "five": 3, "five-or-less": 3, "five-card-rummy": 3,
           "rummy-five": 3, "octablitz": 4}
#: Options that keep a random game short.
OPTIONS: dict[str, dict[str, Any]] = {"five-or-less": {"max_hands": 3}}
#: The replay of a typical furious-five game, page and every seat file, at most.
PAGE_LIMIT = 100_000
WINDOW_VERBS = {"pass", "catch", "run", "set"}
CARD = re.compile(r"^(?:[A2-9TJQK][cdhs]|X|[br][sABCJKL])$")


@dataclass(frozen=True)
class Played:
    """A game played with random legal moves, as the store would hold it."""

    name: str
    seed: int
    options: dict[str, Any]
    result: GameResult

    def stored(self, faults: list[dict[str, Any]] | None = None) -> StoredGame:
        r = self.result
        return StoredGame(id=1, tournament_id=1, table=0, number=0, game=self.name,
                          seed=self.seed, options=self.options, seats=r.bots, scores=r.scores,
                          places=r.places, game_places=r.game_places, faults=faults or [],
                          duration=r.duration, decisions=r.decisions, ignored=r.ignored)


def played(name: str, players: int, seed: int, options: dict[str, Any] | None = None,
           bots: list[str] | None = None) -> Played:
    options = options or {}
    game = make_game(name, players, options)
    state = game.new_state(seed)
    rng = random.Random(seed)
    actions = play(state, lambda s, seat: rng.choice(s.legal_actions(seat)))
    record = GameRecord(actions=actions, events=_plain([e.to_dict() for e in state.events]),
                        reveal=_plain(state.reveal()), stderr=[""] * players,
                        actions_public=game.actions_public)
    places = state.places()
    return Played(name, seed, options, GameResult(
        seed=seed, bots=bots or [f"bot{seat}" for seat in range(players)], scores=state.scores(),
        game_places=places, places=places, faults=[], record=record, ignored=[0] * players,
        duration=0.5, decisions=sum(map(len, actions))))


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def engine_states(game: Played) -> Iterator[State]:
    """The game's state before each step, then its final state (one state object,
    played on: use each before asking for the next)."""
    state = make_game(game.name, len(game.result.bots), game.options).new_state(game.seed)
    yield state
    for step in game.result.actions:
        state.apply_actions({seat: action for seat, action in step})
        yield state


def positions(game: Played, viewer: int | None) -> list[Position]:
    """``viewer``'s replay of ``game``."""
    return timeline(game.stored(), game.result.record, viewer,
                    replay(game.stored(), game.result.record))


def observations(game: Played, viewer: int | None) -> list[dict[str, Any]]:
    return [_plain(state.observation(viewer)) for state in engine_states(game)]


@pytest.fixture(scope="module", params=game_names())
def game(request: pytest.FixtureRequest) -> Played:
    name = request.param
    return played(name, PLAYERS[name], seed=11, options=OPTIONS.get(name))


# -- every viewer sees exactly its observations ---------------------------------------
def test_the_pages_data_decodes_to_the_spectators_observations(game: Played) -> None:
    data = replay_data(game.stored(), game.result.record)
    spectator = data.spectator
    states = decode(spectator["steps"], spectator["keys"])
    _assert_seen(game, None, states)
    assert [_moves(step) for step in spectator["steps"]] == [
        p.moves for p in positions(game, None)]


def test_every_observation_field_has_a_human_label(game: Played) -> None:
    data = replay_data(game.stored(), game.result.record)
    labels = data.spectator["labels"]
    assert labels == field_labels(game.name)
    assert set(data.spectator["keys"]) <= set(labels), game.name  # every viewer's fields
    for key in data.spectator["keys"]:
        assert labels[key] and "_" not in labels[key] and labels[key][0].isupper()


def test_each_seat_file_decodes_to_what_that_seat_saw(game: Played) -> None:
    data = replay_data(game.stored(), game.result.record)
    for seat, seat_data in enumerate(data.seats):
        assert seat_data["seat"] == seat
        states = decode_seat(seat_data["steps"], data.spectator["steps"], data.spectator["keys"])
        _assert_seen(game, seat, states)


def _assert_seen(game: Played, viewer: int | None, states: list[dict[str, Any]]) -> None:
    """Each decoded state is the viewer's observation after its position's steps
    (whose turn may only leave seats out, unless the viewer is among them), and
    every step is covered once, in order."""
    engine = observations(game, viewer)
    replayed = positions(game, viewer)
    assert len(states) == len(replayed)
    assert [k for p in replayed for k in p.steps] == list(range(len(game.result.actions)))
    for position, state in zip(replayed, states, strict=True):
        seen = engine[position.steps.stop]
        assert _without_turn(state) == _without_turn(seen)
        assert set(state["to_move"]) <= set(seen["to_move"])
        if viewer is not None and viewer in seen["to_move"]:
            assert state["to_move"] == seen["to_move"]  # exactly what the seat was sent
    assert states[-1] == engine[-1]  # the end, as everyone saw it


def _without_turn(observation: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in observation.items() if key != "to_move"}


def _moves(step: list[Any]) -> list[Any]:
    return step[0] if step else []


# -- what the spectator's page never holds ---------------------------------------------
def test_the_spectators_page_never_shows_a_card_before_it_is_public(
        game: Played, tmp_path: Path) -> None:
    """Every card the page's data names at a position was public by then: in the
    spectator's observation, a public event or a public decision; the rest of the
    page names only cards of the end-of-game reveal."""
    html = _render(game, tmp_path)[0].read_text()
    packed = payload(html)
    data = unpack(packed)
    public = _public_cards_by_state(game)
    states = decode(data["steps"], data["keys"])
    for position, step, state in zip(positions(game, None), data["steps"], states, strict=True):
        shown = _cards([step, state])
        assert shown <= public[position.steps.stop], (position.steps, shown)
    reveal = _cards(game.result.record.reveal)
    assert _cards(data["reveal"]) <= reveal
    assert set(re.findall(r"\b\w+\b", html.replace(packed, ""))) & _all_cards(game) <= reveal
    assert "replaySeat" not in html  # no seat's view is ever inlined


def _all_cards(game: Played) -> set[str]:
    return set(make_game(game.name, len(game.result.bots), game.options).deck())


def _public_cards_by_state(game: Played) -> list[set[str]]:
    """Per state (after k steps), every card a spectator could have seen by then."""
    public = game_class(game.name).public_decisions
    seen: set[str] = set()
    out = []
    emitted = 0
    for k, state in enumerate(engine_states(game)):
        seen |= _cards(state.observation(None))
        seen |= _cards([dict(e.data) for e in state.events[emitted:] if e.to is None])
        emitted = len(state.events)
        if k:
            seen |= _cards([action for _, action in public(game.result.actions[k - 1])])
        out.append(set(seen))
    return out


def _cards(value: Any) -> set[str]:
    """Every card name in ``value``'s strings (texts split at spaces)."""
    if isinstance(value, str):
        return {word for word in value.split(" ") if CARD.match(word)}
    if isinstance(value, list | tuple):
        return set().union(*map(_cards, value)) if value else set()
    if isinstance(value, dict):
        return _cards(list(value.values()))
    return set()


# -- games with private decisions -------------------------------------------------------
def test_octablitz_shows_every_play_by_who_played_and_its_public_events() -> None:
    game = played("octablitz", 3, seed=5)
    spectator = positions(game, None)
    assert len(spectator) == len(game.result.actions) + 1
    for position, step in zip(spectator[1:], game.result.actions, strict=True):
        (seat, text), = position.moves
        assert [seat] == [s for s, _ in step] and text.startswith("play ")
        assert step[0][1] not in text  # the action names its cards, face down too
        assert not any(line.startswith("down_cards") for line in position.log)
    assert sum(any(line.startswith("play ") for line in p.log) for p in spectator) \
        == len(game.result.actions)
    own = positions(game, 1)
    assert [m for p in own for m in p.moves if m[0] == 1 and m[1] is not None]


def test_claim_window_answers_stay_private_and_each_seat_sees_its_own() -> None:
    game = _rummy_five_with_passed_claims()
    actions = game.result.actions
    windows = [k for k, step in enumerate(actions)
               if all(action.split()[0] in WINDOW_VERBS for _, action in step)]
    spectator = positions(game, None)
    shown = [m[1] for p in spectator for m in p.moves]
    assert "pass" not in shown
    won = sum(1 for k in windows
              if any(action != "pass" for _, action in actions[k]))
    assert len(spectator) == len(actions) - len(windows) + won + 1
    for p in spectator:  # whose turn never names a seat asked in a window
        assert p.observation is not None
        assert p.observation["phase"] != "claim" or p.observation["to_move"] == []
    for seat in range(3):
        own = positions(game, seat)
        answers = [m[1] for p in own for m in p.moves if m[0] == seat]
        assert answers.count("pass") == sum(
            1 for k in windows for s, a in actions[k] if s == seat and a == "pass")


def _rummy_five_with_passed_claims() -> Played:
    for seed in range(200):
        game = played("rummy-five", 3, seed, {"deals": 1})
        steps = game.result.actions
        if any(a == "pass" for step in steps for _, a in step) and any(
                e["kind"] == "claim" for e in game.result.record.events):
            return game
    raise AssertionError("no deal with a passed claim in 200 seeds")


def test_moves_the_arena_played_for_a_faulted_seat_are_marked() -> None:
    game = played("five", 2, seed=3)
    fault = {"seat": 1, "bot": "bot1", "kind": "crash", "detail": "", "stderr_tail": ""}
    marked = timeline(game.stored([{**fault, "step": 4}]), game.result.record, None, None)
    flags = [(k, m[0], len(m) > 2) for p in marked for k, m in zip(p.steps, p.moves, strict=False)]
    assert all(flag == (seat == 1 and k >= 4) for k, seat, flag in flags)
    assert any(flag for *_, flag in flags)
    old = timeline(game.stored([fault]), game.result.record, None, None)  # no step: unmarked
    assert not any(len(m) > 2 for p in old for m in p.moves)


# -- pages ------------------------------------------------------------------------------
def _render(game: Played, tmp_path: Path) -> tuple[Path, int]:
    """The replay page of ``game``, stored and rendered as ``arena report`` does, and its id."""
    store = Store(f"sqlite:///{tmp_path}/a.db")
    bots = game.result.bots
    store.register_bots([(bot, bot) for bot in bots])
    tid = store.create_tournament(game.name, {}, [bots], total_games=1)
    gid = store.save_game(tid, 0, 0, game.options, game.result)
    render_report(store, tmp_path / "site", bootstrap=0)
    return tmp_path / "site" / f"game-{gid}.html", gid




def test_a_long_furious_five_replay_is_small(tmp_path: Path) -> None:
    game = next(g for g in (played("furious-five", 3, seed) for seed in range(100))
                if 850 <= g.result.decisions <= 1000)
    page, gid = _render(game, tmp_path)
    seat_files = [page.parent / seat_file(gid, seat) for seat in range(3)]
    total = page.stat().st_size + sum(path.stat().st_size for path in seat_files)
    assert total <= PAGE_LIMIT, f"{game.result.decisions} decisions: {total} bytes"
    html = page.read_text()
    assert '<script src="replay.js">' in html and "replaySeat" not in html


def test_untrusted_names_are_escaped_and_seat_files_hold_their_seat(tmp_path: Path) -> None:
    game = played("five", 2, seed=1, bots=[XSS, "plain"])
    page, gid = _render(game, tmp_path)
    html = page.read_text()
    assert XSS not in html and "&lt;script&gt;" in html
    data = unpack(payload(html))
    assert page_facts(html)["bots"] == [XSS, "plain"] and "bots" not in data
    assert seat_files(html) == [seat_file(gid, 0), seat_file(gid, 1)]
    for seat, name in enumerate(seat_files(html)):
        text = (page.parent / name).read_text()
        assert text.startswith('replaySeat("') and unpack(text[12:-4])["seat"] == seat


def test_a_record_that_does_not_replay_shows_its_public_decisions_and_events() -> None:
    record = GameRecord(actions=[[[0, "draw deck g201"]], [[1, "drop 5h"]]],
                        events=[{"kind": "note", "text": "PUBLIC201"},
                                {"kind": "deal", "cards": ["SECRETCARD"], "to": [0]}],
                        actions_public=True)
    game = played("five", 2, seed=1).stored()
    data: ReplayData = replay_data(game, record)
    assert not data.replayed
    text = json.dumps(data.spectator)
    assert "draw deck g201" in text and "PUBLIC201" in text and "SECRETCARD" not in text
    positions: list[Position] = timeline(game, record, 0, None)
    assert "deal cards SECRETCARD" in positions[0].private


def test_seat_views_are_written_only_when_asked(tmp_path: Path) -> None:
    game = played("five", 2, seed=1)
    page = Template('<script id="replay-page">{{ {"seat_files": seat_files} | tojson }}</script>')
    for seat_views in (True, False):
        out = tmp_path / str(seat_views)
        out.mkdir()
        stored = game.stored()
        path = write_replay(page, out, stored, views(stored, game.result.record), {},
                            seat_views=seat_views)
        files = sorted(p.name for p in out.iterdir() if p != path)
        assert files == ([seat_file(1, 0), seat_file(1, 1)] if seat_views else [])
        assert seat_files(path.read_text()) == files
