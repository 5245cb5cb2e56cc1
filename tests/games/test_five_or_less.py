"""Five-or-less: rulebook examples, one table per rule, properties, determinism."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games import make_game
from arena.games.base import GameNotOverError, IllegalActionError, OptionError, State
from arena.games.cards import canonical, standard_deck
from arena.games.five_or_less import (
    POINTS,
    FiveOrLess,
    FiveOrLessState,
    disposals,
    hand_scores,
    hand_total,
    turn_drops,
)
from tests.games.pages import numbers, sent
from tests.playout import random_playout, visible_strings

ALL_CARDS = set(standard_deck())


# -- helpers ----------------------------------------------------------------------
def stacked_deck(n: int, hands: dict[int, list[str]], stack: Sequence[str] = ()) -> list[str]:
    """A first-hand deck dealing ``hands`` (seat -> 5 cards) and then the stack
    (top first); seats not given get the highest remaining cards."""
    used = {c for h in hands.values() for c in h} | set(stack)
    filler = [c for c in reversed(canonical(standard_deck())) if c not in used]
    full = {s: hands.get(s) or [filler.pop(0) for _ in range(5)] for s in range(n)}
    order = [(1 + i) % n for i in range(n)]  # dealer 0, seat 1 first
    deck = [full[s][i] for i in range(5) for s in order]
    deck += stack
    deck += [c for c in standard_deck() if c not in set(deck)]
    return deck


def new(n: int, seed: int = 0, **options: Any) -> FiveOrLessState:
    state = FiveOrLess(n, options).new_state(seed)
    assert isinstance(state, FiveOrLessState)
    return state


def pass_precall(state: FiveOrLessState) -> None:
    """Every seat passes in the pre-call window (every seat is asked)."""
    while state.phase == "precall":
        play(state, "pass")


def at_first_turn(n: int, seed: int = 0, **options: Any) -> FiveOrLessState:
    """A new state after everyone passed in the pre-call window."""
    state = new(n, seed, **options)
    pass_precall(state)
    return state


DEFAULT = "<default>"


def play(state: State, *actions: str) -> None:
    """Apply actions in turn; ``DEFAULT`` stands for the deciding seat's default."""
    for action in actions:
        state.apply_action(state.default_action(seat(state)) if action == DEFAULT else action)


def seat(state: State) -> int:
    (who,) = state.deciding_seats()
    return who


def kinds(state: State) -> list[str]:
    return [e.kind for e in state.events]


def last(state: State, kind: str) -> dict[str, Any]:
    return next(e.to_dict() for e in reversed(state.events) if e.kind == kind)


# Three players, seat 1 first.  Turn 1 (seat 1) drops Kc Kd and draws As -> Ac Ad As 2h = 5.
# Turn 2 (seat 2) drops the run 4c 5c 6c and draws the second stack card -> 2d 2s + it.
# Turn 3 (seat 0) drops Jh Js and draws Qs -> Th Ts Qh Qs = 44.
def three_player_hand(second_draw: str, **options: Any) -> FiveOrLessState:
    hands = {
        1: ["Ac", "Ad", "2h", "Kc", "Kd"],
        2: ["2d", "2s", "4c", "5c", "6c"],
        0: ["Th", "Ts", "Jh", "Js", "Qh"],
    }
    state = at_first_turn(3, deck=stacked_deck(3, hands, ["As", second_draw, "Qs"]), **options)
    play(state, "drop Kc Kd", "draw stack")
    play(state, "drop 4c 5c 6c", "draw stack")
    play(state, "drop Jh Js", "draw stack")
    return state


# -- the rulebook's worked examples -----------------------------------------------------
def test_example_same_rank_two_nines_and_four_queens() -> None:
    legal = {" ".join(d) for d in disposals(["9c", "9h", "Qc", "Qd", "Qh"])}
    assert "9c 9h" in legal
    assert {"Qc Qd", "Qc Qh", "Qd Qh", "Qc Qd Qh"} <= legal
    legal = {" ".join(d) for d in disposals(["9c", "Qc", "Qd", "Qh", "Qs"])}
    assert "Qc Qd Qh Qs" in legal


def test_example_sequence_six_seven_eight_same_suit() -> None:
    state = at_first_turn(2, deck=stacked_deck(2, {1: ["6h", "7h", "8h", "Kc", "Kd"]}))
    assert "drop 6h 7h 8h" in state.legal_actions(1)
    assert "drop 6h 7h" not in state.legal_actions(1)


def test_example_sequence_queen_king_ace_two_wraps() -> None:
    state = at_first_turn(2, deck=stacked_deck(2, {1: ["Qs", "Ks", "As", "2s", "9d"]}))
    legal = state.legal_actions(1)
    assert {"drop Qs Ks As 2s", "drop Qs Ks As", "drop Ks As 2s"} <= set(legal)
    play(state, "drop Qs Ks As 2s", "draw stack")
    assert len(state.hands[1]) == 2


def test_example_dispose_all_cards_still_picks_one() -> None:
    state = at_first_turn(2, deck=stacked_deck(2, {1: ["3c", "4c", "5c", "6c", "7c"]}, ["8d"]))
    play(state, "drop 3c 4c 5c 6c 7c")
    assert state.hands[1] == []
    assert state.phase == "draw" and seat(state) == 1
    assert state.legal_actions(1) == ("draw stack",)
    play(state, "draw stack")
    assert state.hands[1] == ["8d"]
    assert seat(state) == 0


def test_example_may_keep_playing_with_four_points() -> None:
    deck = stacked_deck(2, {1: ["Ac", "Ad", "Ah", "Kc", "Kd"]}, ["As", "Qs"])
    state = at_first_turn(2, deck=deck)
    play(state, "drop Kc Kd", "draw stack", DEFAULT, "draw stack")
    assert state.observation(1)["hand_points"] == 4
    legal = state.legal_actions(1)
    assert legal[-1] == "call" and legal[0] != "call"
    play(state, legal[0])  # not ending is allowed
    assert not state.is_terminal()


def test_example_lowest_caller_scores_zero_others_their_points() -> None:
    state = three_player_hand("2c")  # seat 2 ends on 2c 2d 2s = 6
    assert seat(state) == 1 and "call" in state.legal_actions(1)
    play(state, "call")
    end = last(state, "hand_end")
    assert end["hand_totals"] == [44, 5, 6]
    assert end["winners"] == [1]
    assert end["scores"] == [44, 0, 6]
    assert state.totals == [44, 0, 6]


def test_example_caller_tied_gets_penalty_and_other_wins() -> None:
    state = three_player_hand("Ah")  # seat 2 ends on Ah 2d 2s = 5, three cards
    play(state, "call")
    end = last(state, "hand_end")
    assert end["hand_totals"] == [44, 5, 5]
    assert end["winners"] == [2]
    assert end["scores"] == [44, 25, 0]


def test_example_end_before_first_round_with_fifteen() -> None:
    hands = {1: ["Ac", "2c", "3d", "4h", "5s"], 2: ["6c", "6d", "7h", "8h", "9s"]}
    state = new(3, deck=stacked_deck(3, hands))
    assert state.phase == "precall" and seat(state) == 1
    assert state.legal_actions(1) == ("pass", "call")
    play(state, "call")
    end = last(state, "hand_end")
    assert end["precall"] is True and end["winners"] == [1]
    assert state.totals[1] == 0 and state.totals[2] == 36


def test_example_early_end_penalty_when_someone_has_less() -> None:
    hands = {1: ["Ac", "2c", "3d", "4h", "5s"], 2: ["Ad", "2d", "3c", "4c", "3s"]}
    state = new(3, deck=stacked_deck(3, hands))
    play(state, "call")
    assert last(state, "hand_end")["scores"][1:] == [35, 0]


def test_example_elimination_last_one_standing_wins() -> None:
    # Seats 0 and 2 get the highest cards (Ks Kh Kd Kc Qs = 64, Qh Qd Qc Js Jh = 58).
    state = new(3, limit=40, deck=stacked_deck(3, {1: ["Ac", "2c", "3d", "4h", "5s"]}))
    play(state, "call")
    assert state.is_terminal()
    assert last(state, "hand_end")["eliminated"] == [2, 0]
    assert state.scores() == [64, 0, 58]
    assert state.places() == [3, 1, 2]  # same hand: lower total ranks higher
    assert last(state, "game_end")["places"] == [3, 1, 2]


# -- disposals (table) ------------------------------------------------------------
@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        (["5c"], {"5c"}),
        (["5c", "5h"], {"5c", "5h", "5c 5h"}),
        (["6h", "7h", "8h"], {"6h", "7h", "8h", "6h 7h 8h"}),
        (["6h", "7h", "8d"], {"6h", "7h", "8d"}),
        (["6h", "8h", "9h"], {"6h", "8h", "9h"}),
        (["6h", "7h"], {"6h", "7h"}),
        (["Ks", "As", "2s"], {"Ks", "As", "2s", "Ks As 2s"}),
        (
            ["As", "2s", "Qs", "Ks"],
            {"As", "2s", "Qs", "Ks", "Qs Ks As", "Ks As 2s", "Qs Ks As 2s"},
        ),
        (
            ["As", "2s", "3s", "4s", "5s"],
            {"As", "2s", "3s", "4s", "5s", "As 2s 3s", "As 2s 3s 4s", "As 2s 3s 4s 5s",
             "2s 3s 4s", "2s 3s 4s 5s", "3s 4s 5s"},
        ),
        (
            ["Ah", "2h", "Jh", "Qh", "Kh"],
            {"Ah", "2h", "Jh", "Qh", "Kh", "Jh Qh Kh", "Jh Qh Kh Ah", "Jh Qh Kh Ah 2h",
             "Qh Kh Ah", "Qh Kh Ah 2h", "Kh Ah 2h"},
        ),
        (
            ["7c", "7d", "7h", "8c", "9c"],
            {"7c", "7d", "7h", "8c", "9c", "7c 7d", "7c 7h", "7d 7h", "7c 7d 7h", "7c 8c 9c"},
        ),
    ],
)
def test_disposals_table(hand: list[str], expected: set[str]) -> None:
    found = [" ".join(d) for d in disposals(hand)]
    assert len(found) == len(set(found))
    assert set(found) == expected


def test_four_of_a_kind_gives_every_subset() -> None:
    found = disposals(["Qc", "Qd", "Qh", "Qs", "Kc"])
    assert Counter(len(d) for d in found) == {1: 5, 2: 6, 3: 4, 4: 1}


@settings(max_examples=300, deadline=None)
@given(hand=st.lists(st.sampled_from(standard_deck()), min_size=1, max_size=6, unique=True)
       | st.sampled_from([["Ac", "2c", "Kc"], ["Ac", "Qc", "Kc"], ["Kc", "Ad", "2d"],
                          ["Ac", "2c", "3d", "Kc"], ["2c", "3c", "4c"]]))
def test_turn_drops_are_every_disposal_in_order(hand: list[str]) -> None:
    # The documented order, the slow way: most points, then more cards, then as
    # disposals() lists them (its quick no-set-no-run test must never skip one).
    hand = canonical(hand)
    found = disposals(hand)
    expected = ["drop " + " ".join(cards) for _, cards in sorted(
        enumerate(found), key=lambda item: (-hand_total(item[1]), -len(item[1]), item[0]))]
    assert turn_drops(hand) == expected


def test_turn_legal_order_most_points_first_call_last() -> None:
    state = at_first_turn(2, deck=stacked_deck(2, {1: ["Ac", "Ad", "Ah", "Kc", "Kd"]}, ["As"]))
    legal = state.legal_actions(1)
    assert legal[0] == "drop Kc Kd"
    points = [sum(POINTS[c] for c in a.split()[1:]) for a in legal]
    assert points == sorted(points, reverse=True)
    assert "call" not in legal
    assert state.legal_actions(0) == ()


# -- calling (table) ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("drawn", "below_five", "may_call"),
    [
        ("As", False, True),  # 4
        ("2h", False, True),  # 5
        ("3h", False, False),  # 6
        ("As", True, True),
        ("2h", True, False),
    ],
)
def test_turn_start_call_threshold(drawn: str, below_five: bool, may_call: bool) -> None:
    deck = stacked_deck(2, {1: ["Ac", "Ad", "Ah", "Kc", "Kd"]}, [drawn, "Qs"])
    state = at_first_turn(2, deck=deck, call_below_five=below_five)
    play(state, "drop Kc Kd", "draw stack", DEFAULT, "draw stack")
    assert ("call" in state.legal_actions(1)) is may_call
    assert state.observation(1)["call_max"] == (4 if below_five else 5)


def test_call_only_at_turn_start() -> None:
    deck = stacked_deck(2, {1: ["Ac", "Ad", "Ah", "Kc", "Kd"]}, ["As", "Qs", "2c"])
    state = at_first_turn(2, deck=deck)
    play(state, "drop Kc Kd", "draw stack", DEFAULT, "draw stack")
    play(state, "drop Ac")
    assert "call" not in state.legal_actions(1)


@pytest.mark.parametrize(
    ("seat1", "seat2", "seat0", "may_call"),
    [
        (["Ac", "2c", "3d", "4h", "5s"], ["6c", "6d", "7h", "8h", "9s"], None, [1]),  # 15, 36
        (["Ac", "2c", "3d", "4h", "6s"], ["Ad", "2d", "3c", "4c", "5c"], None, [2]),  # 16, 15
        (["Ac", "2c", "3d", "4h", "5s"], ["Ad", "2d", "3c", "4c", "5c"], None, [1, 2]),
        (["Ac", "2c", "3d", "4h", "5s"], ["Ad", "2d", "3c", "4c", "5c"],
         ["Ah", "2h", "3h", "4d", "5d"], [1, 2, 0]),
        (["9c", "2c", "3d", "4h", "5s"], ["9d", "2d", "3c", "4c", "5c"], None, []),
    ],
)
def test_precall_asks_every_player_in_turn_order(
    seat1: list[str], seat2: list[str], seat0: list[str] | None, may_call: list[int]
) -> None:
    hands = {1: seat1, 2: seat2} | ({0: seat0} if seat0 else {})
    state = new(3, deck=stacked_deck(3, hands))
    seen = []
    while state.phase == "precall":
        who = seat(state)
        seen.append(who)
        assert state.legal_actions(who) == (("pass", "call") if who in may_call else ("pass",))
        assert state.observation(who)["call_max"] == 15
        play(state, "pass")
    assert seen == [1, 2, 0]
    assert state.phase == "turn" and seat(state) == 1 and state.turns == 0
    assert kinds(state).count("pass") == 3


def test_precall_window_reveals_nothing_about_a_hand() -> None:
    """Seat 1 holding 15 (may call) or 16 (may not) looks the same to the others."""
    views = []
    for low, high in (("5s", "6s"), ("6s", "5s")):
        deck = stacked_deck(3, {1: ["Ac", "2c", "3d", "4h", low]}, [high])
        state = new(3, deck=deck)
        view: list[object] = []
        while state.phase == "precall":
            view.append([(state.observation(s), state.legal_actions(s)) for s in (0, 2)])
            play(state, "pass")
        view.append([e.to_dict() for e in state.events if e.visible_to(0) or e.visible_to(2)])
        views.append(view)
    assert views[0] == views[1]


# -- hand scoring (table) -------------------------------------------------------------
@pytest.mark.parametrize(
    ("totals", "sizes", "caller", "scores", "winners"),
    [
        ([10, 5, 7], [5, 3, 4], 1, [10, 0, 7], [1]),  # caller strictly lowest
        ([5, 5, 7], [1, 3, 4], 1, [0, 25, 7], [0]),  # tie goes to the non-caller
        ([5, 5, 7], [4, 1, 4], 1, [0, 25, 7], [0]),  # ... even holding more cards
        ([3, 5, 7], [2, 3, 4], 1, [0, 25, 7], [0]),  # someone lower
        ([4, 5, 4, 9], [3, 2, 2, 5], 1, [4, 25, 0, 9], [2]),  # non-callers tie: fewer cards
        ([4, 5, 4], [2, 2, 2], 1, [0, 25, 0], [0, 2]),  # still tied: all win
        ([None, 5, 9], [0, 3, 4], 1, [None, 0, 9], [1]),  # eliminated seat ignored
        ([15, 12, 20, 13], [5, 5, 5, 5], 3, [15, 0, 20, 33], [1]),  # precall penalty
    ],
)
def test_hand_scores_table(
    totals: list[int | None],
    sizes: list[int],
    caller: int,
    scores: list[int | None],
    winners: list[int],
) -> None:
    assert hand_scores(totals, sizes, caller) == (scores, winners)


def test_fewest_cards_tie_break_in_play() -> None:
    # Four players, seat 1 first; seats 1, 2 and 3 all end on 5 points.
    hands = {
        1: ["Ac", "Ad", "Ah", "Kc", "Kd"],
        2: ["2d", "2s", "4c", "5c", "6c"],
        3: ["3h", "8d", "9d", "Td", "Jd"],
    }
    state = at_first_turn(4, deck=stacked_deck(4, hands, ["2c", "As", "2h", "Qc"]))
    play(state, "drop Kc Kd", "draw stack")  # seat 1: Ac Ad Ah 2c = 5, four cards
    play(state, "drop 4c 5c 6c", "draw stack")  # seat 2: As 2d 2s = 5, three cards
    play(state, "drop 8d 9d Td Jd", "draw stack")  # seat 3: 2h 3h = 5, two cards
    play(state, DEFAULT, "draw stack")  # seat 0: high cards
    play(state, "call")
    end = last(state, "hand_end")
    assert end["hand_totals"][1:] == [5, 5, 5]
    assert end["winners"] == [3]
    assert end["scores"] == [end["hand_totals"][0], 25, 5, 0]


def test_no_result_hand_scores_every_total() -> None:
    state = new(2, max_turns=3)
    for _ in range(3):
        while state.phase == "precall":
            play(state, "pass")
        play(state, state.legal_actions(seat(state))[0], "draw stack")
    end = last(state, "hand_end")
    assert end["reason"] == "no_result" and end["winners"] == [] and end["caller"] is None
    assert end["scores"] == end["hand_totals"]
    assert state.totals == end["hand_totals"]
    assert state.hand_number == 2


# -- picking ------------------------------------------------------------------
def test_pick_choices_previous_disposal_only() -> None:
    hands = {1: ["Ac", "Ad", "2h", "Kc", "Kd"], 0: ["9c", "9d", "Tc", "Td", "Jc"]}
    state = at_first_turn(2, deck=stacked_deck(2, hands, ["As", "Qs", "Qd"]))
    play(state, "drop Kc Kd")
    assert state.legal_actions(1) == ("draw stack",)  # very first turn: no disposal
    play(state, "draw stack")
    assert sent(state.observation(0))["previous_disposal"] == ["Kc", "Kd"]
    play(state, "drop 9c 9d")
    assert state.legal_actions(0) == ("draw stack", "draw Kc", "draw Kd")
    play(state, "draw Kd")
    assert state.hands[0] == ["Tc", "Td", "Jc", "Kd"]
    assert sent(state.observation(1))["known"][0] == ["Kd"]
    assert last(state, "draw") == {"kind": "draw", "seat": 0, "source": "disposal", "card": "Kd"}
    play(state, "drop Ac")
    # Kc went to the older disposals: only seat 0's 9s may be picked now.
    assert state.legal_actions(1) == ("draw stack", "draw 9c", "draw 9d")
    assert sent(state.observation(1))["discards"] == ["Kc"]
    play(state, "draw 9c")
    play(state, "drop Kd")
    assert sent(state.observation(1))["known"][0] == []


def test_stack_draw_events_hide_the_card() -> None:
    state = at_first_turn(2, deck=stacked_deck(2, {1: ["Ac", "Ad", "2h", "Kc", "Kd"]}, ["As"]))
    play(state, "drop Kc Kd", "draw stack")
    public, private = state.events[-2], state.events[-1]
    assert public.to is None and "card" not in public.data
    assert private.kind == "drawn" and private.to == (1,) and private.data["card"] == "As"


def test_reshuffle_keeps_both_live_disposals() -> None:
    state = new(2, seed=3)
    while state.phase == "precall":
        play(state, "pass")
    while state.stack or state.phase != "draw":
        play(state, state.legal_actions(seat(state))[0])  # defaults: drop, then draw stack
    assert state.turns == 42 and "draw stack" in state.legal_actions(seat(state))
    live, dropped, older = list(state.live), list(state.dropped), list(state.discards)
    play(state, "draw stack")
    reshuffle, draw, drawn = state.events[-3:]
    assert reshuffle.kind == "reshuffle" and reshuffle.data["stack_size"] == len(older)
    assert draw.kind == "draw" and drawn.kind == "drawn"
    assert Counter(state.stack) + Counter([drawn.data["card"]]) == Counter(older)
    assert state.discards == live
    assert state.live == canonical(dropped)


# -- game flow, options, standings -------------------------------------------------
def test_dealer_rotates_and_skips_eliminated() -> None:
    state = new(4, max_turns=1, limit=60, seed=11)
    rng = random.Random(0)
    random_playout(state, rng)
    starts = [e.data for e in state.events if e.kind == "hand_start"]
    assert starts[0]["dealer"] == 0 and starts[0]["first"] == 1
    for prev, cur in pairwise(starts):
        active = cur["active"]
        expected = next(
            (prev["dealer"] + k) % 4 for k in range(1, 5) if active[(prev["dealer"] + k) % 4]
        )
        assert cur["dealer"] == expected
        first = next((expected + k) % 4 for k in range(1, 5) if active[(expected + k) % 4])
        assert cur["first"] == first


def test_max_hands_ends_game_and_ranks_by_total() -> None:
    state = new(3, max_hands=1, max_turns=2)
    while not state.is_terminal():
        play(state, state.legal_actions(seat(state))[0])
    assert state.hands_played == 1
    totals = state.scores()
    assert state.places() == [1 + sum(t < mine for t in totals) for mine in totals]
    assert state.events[-1].kind == "game_end"


def _over(totals: list[int], active: list[bool], eliminated: list[list[int]]) -> FiveOrLessState:
    state = new(len(totals))
    state.totals, state.active, state.eliminated = totals, active, eliminated
    state.phase, state.to_move, state._deciding = "over", None, ()
    return state


@pytest.mark.parametrize(
    ("totals", "active", "eliminated", "places"),
    [
        ([210, 50, 230], [False, True, False], [[2, 0]], [2, 1, 3]),
        ([205, 230, 230], [False, False, False], [[0], [1, 2]], [3, 1, 1]),
        ([250, 60, 201, 212], [False, True, False, False], [[0], [2], [3]], [4, 1, 3, 2]),
        ([50, 30, 220, 50], [True, True, False, True], [[2]], [2, 1, 4, 2]),
        ([10, 10], [True, True], [], [1, 1]),
        ([260, 199, 201, 150], [False, True, False, True], [[2], [0]], [3, 2, 4, 1]),
    ],
)
def test_places_table(
    totals: list[int], active: list[bool], eliminated: list[list[int]], places: list[int]
) -> None:
    assert _over(totals, active, eliminated).places() == places


def test_scores_and_places_need_the_end() -> None:
    state = new(2)
    with pytest.raises(GameNotOverError):
        state.scores()
    with pytest.raises(GameNotOverError):
        state.places()


@pytest.mark.parametrize(
    ("n", "options"),
    [
        (1, {}),
        (9, {}),
        (2, {"limit": 0}),
        (2, {"max_hands": 0}),
        (2, {"max_turns": 0}),
        (2, {"call_below_five": "maybe"}),
        (2, {"jokers": 2}),
        (2, {"deck": standard_deck()[:-1]}),
        (2, {"deck": [*standard_deck()[:-1], "X"]}),
    ],
)
def test_bad_options(n: int, options: dict[str, Any]) -> None:
    with pytest.raises(OptionError):
        make_game("five-or-less", n, options)


def test_option_defaults_and_parsing() -> None:
    game = make_game("five-or-less", 4, {"call_below_five": "yes", "limit": "150"})
    assert game.options["call_below_five"] is True and game.options["limit"] == 150
    defaults = make_game("five-or-less", 8).options
    assert defaults["limit"] == 200 and defaults["max_hands"] == 200
    assert defaults["max_turns"] == 400 and defaults["call_below_five"] is False


def test_stacked_deck_deals_from_first_player_and_later_hands_use_rng() -> None:
    deck = standard_deck()
    state = new(3, deck=deck)
    assert state.hands[1] == canonical(deck[0:15:3])
    assert state.hands[2] == canonical(deck[1:15:3])
    assert state.stack[-1] == deck[15]
    assert state.observation(0)["stack_size"] == 52 - 15


def test_illegal_actions_are_refused() -> None:
    state = new(2, deck=stacked_deck(2, {1: ["Ac", "Ad", "2h", "Kc", "Kd"]}))
    for bad in ({1: "drop Ac Ad 2h"}, {0: "drop Kc"}, {1: "draw stack"}, {0: "x", 1: "y"}):
        with pytest.raises(IllegalActionError):
            state.apply_actions(bad)
    assert len(state.events) == 3  # hand_start + 2 deals, nothing applied


def test_observation_fields_and_types() -> None:
    state = three_player_hand("2c")
    obs = sent(state.observation(1))
    assert obs["game"] == "five-or-less" and obs["players"] == 3
    assert obs["seat"] == 1 and obs["phase"] == "turn" and obs["to_move"] == [1]
    assert obs["hand"] == ["Ac", "Ad", "As", "2h"] and obs["hand_points"] == 5
    assert obs["hand_sizes"] == [4, 4, 3] and obs["turn_number"] == 3
    assert obs["previous_disposal"] == ["Jh", "Js"] and obs["previous_player"] == 0
    assert obs["discards"] == ["Kc", "Kd", "4c", "5c", "6c"]
    assert obs["dealer"] == 0 and obs["first_player"] == 1 and obs["hand_number"] == 1
    assert obs["known"] == [[], [], []] and obs["active"] == [True, True, True]
    assert obs["limit"] == 200 and obs["max_turns"] == 400 and obs["max_hands"] == 200
    json.dumps(state.observation(1))
    msgpack.packb(state.observation(1))
    for event in state.events:
        json.dumps(event.to_dict())
    spectator = sent(state.observation(None))
    assert spectator == {key: value for key, value in obs.items()
                         if key not in ("hand", "hand_points")} | {"seat": None}


def test_numbers_are_ints() -> None:
    """Every integral number in observations, events, reveal and scores is an int."""
    state = new(3, 5, limit=60)
    seen: list[Any] = []
    while not state.is_terminal():
        who = seat(state)
        seen += numbers(state.observation(who)) + numbers(state.observation(None))
        state.apply_action(state.legal_actions(who)[-1])
    seen += numbers([e.to_dict() for e in state.events]) + numbers(state.reveal())
    seen += numbers(state.scores())
    assert seen and all(type(n) is int for n in seen)


def test_reveal_shows_last_hand() -> None:
    state = three_player_hand("2c", max_hands=1)
    play(state, "call")
    reveal = state.reveal()
    assert reveal["last_hand"]["hands"][1] == ["Ac", "Ad", "As", "2h"]
    assert reveal["totals"] == [44, 0, 6] and reveal["hands_played"] == 1
    assert state.places() == [3, 1, 2]


# -- properties ---------------------------------------------------------------------
def _ref_places(n: int, totals: list[int], batches: list[list[int]]) -> list[int]:
    out = {s for b in batches for s in b}
    groups: list[list[int]] = []
    for batch in [[s for s in range(n) if s not in out], *reversed(batches)]:
        for t in sorted({totals[s] for s in batch}):
            groups.append([s for s in batch if totals[s] == t])
    places, better = [0] * n, 0
    for group in groups:
        for s in group:
            places[s] = better + 1
        better += len(group)
    return places


def _ref_scores(end: dict[str, Any]) -> list[int | None]:
    totals, caller = end["hand_totals"], end["caller"]
    if caller is None:
        return list(totals)
    live = [s for s, t in enumerate(totals) if t is not None]
    others = [s for s in live if s != caller]
    if all(totals[caller] < totals[s] for s in others):
        return [None if t is None else (0 if s == caller else t) for s, t in enumerate(totals)]
    low = min(totals[s] for s in others)
    fewest = min(len(end["hands"][s]) for s in others if totals[s] == low)
    win = {s for s in others if totals[s] == low and len(end["hands"][s]) == fewest}
    scores: list[int | None] = list(totals)
    for s in win:
        scores[s] = 0
    scores[caller] = totals[caller] + 20
    return scores


class Checker:
    """Per-step invariants: conservation, no leaks, scoring, elimination."""

    def __init__(self, state: FiveOrLessState) -> None:
        self.state = state
        self.seen = 0
        self.totals = [0] * state.num_players
        self.batches: list[list[int]] = []
        self.snapshot()
        self(state)

    def snapshot(self) -> None:
        s = self.state
        public = set(s.discards) | set(s.live) | set(s.dropped)
        public |= {c for k in s.known for c in k}
        self.public = public
        self.hands = [set(h) for h in s.hands]
        self.live = set(s.live)
        self.actor = s.to_move

    def __call__(self, state: State) -> None:
        s = self.state
        n = s.num_players
        assert Counter(s.cards_in_play()) == Counter(ALL_CARDS)
        for who in range(n):
            assert set(s.known[who]) <= set(s.hands[who])
            if not s.active[who] and not s.is_terminal():
                assert not s.hands[who]
            may_see = set(s.hands[who]) | set(s.discards) | set(s.live) | set(s.dropped)
            may_see |= {c for k in s.known for c in k}
            shown = {c for c in visible_strings(s.observation(who)) if c in ALL_CARDS}
            assert shown <= may_see, (who, shown - may_see)
        for event in s.events[self.seen :]:
            self.check_event(event.kind, event.to_dict(), event.to)
        self.seen = len(s.events)
        self.snapshot()

    def check_event(self, kind: str, data: dict[str, Any], to: tuple[int, ...] | None) -> None:
        s = self.state
        cards = {c for c in visible_strings(data) if c in ALL_CARDS}
        if to is not None:
            assert kind in ("deal", "drawn") and to == (data["seat"],)
            return
        if kind == "drop":
            assert cards <= self.hands[data["seat"]]
        elif kind == "draw":
            assert cards <= (self.live if data["source"] == "disposal" else set())
        elif kind == "hand_end":
            self.check_hand_end(data)
        elif kind == "call":
            assert cards == self.hands[data["seat"]]
        else:
            assert not cards, (kind, cards)
        if kind == "game_end":
            assert s.is_terminal()
            assert data["places"] == _ref_places(s.num_players, self.totals, self.batches)

    def check_hand_end(self, end: dict[str, Any]) -> None:
        assert end["scores"] == _ref_scores(end)
        for who, score in enumerate(end["scores"]):
            self.totals[who] += score or 0
        assert end["totals"] == self.totals
        limit = self.state.limit
        playing = [w for w, t in enumerate(end["hand_totals"]) if t is not None]
        out = [w for w in playing if self.totals[w] >= limit]
        assert sorted(end["eliminated"]) == out
        if out:
            self.batches.append(end["eliminated"])


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 8),
    below_five=st.booleans(),
    limit=st.integers(10, 120),
    max_turns=st.integers(1, 80),
    max_hands=st.integers(1, 25),
)
def test_random_playouts_keep_every_invariant(
    seed: int, n: int, below_five: bool, limit: int, max_turns: int, max_hands: int
) -> None:
    state = new(
        n, seed, call_below_five=below_five, limit=limit, max_turns=max_turns, max_hands=max_hands
    )
    checker = Checker(state)
    random_playout(state, random.Random(seed), checker)
    assert state.is_terminal() and state.deciding_seats() == ()
    assert state.scores() == checker.totals
    assert state.places() == _ref_places(n, checker.totals, checker.batches)
    assert state.hands_played <= max_hands
    assert sum(state.active) <= 1 or state.hands_played == max_hands


def _low_seeking_playout(state: FiveOrLessState, rng: random.Random, check: Checker) -> None:
    """Random play biased to shed points and call, so that calls, penalties and
    precalls are frequent."""
    while not state.is_terminal():
        who = seat(state)
        state.observation(who)
        legal = state.legal_actions(who)
        if "call" in legal and rng.random() < 0.7:
            action = "call"
        elif state.phase == "draw" and rng.random() < 0.7:
            action = min(legal, key=lambda a: POINTS.get(a[5:], 7))
        else:
            action = legal[0] if rng.random() < 0.6 else rng.choice(legal)
        state.apply_action(action)
        check(state)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 8),
    below_five=st.booleans(),
    limit=st.integers(20, 300),
    max_hands=st.integers(1, 30),
)
def test_call_heavy_playouts_keep_every_invariant(
    seed: int, n: int, below_five: bool, limit: int, max_hands: int
) -> None:
    state = new(n, seed, call_below_five=below_five, limit=limit, max_hands=max_hands)
    checker = Checker(state)
    _low_seeking_playout(state, random.Random(seed), checker)
    assert state.scores() == checker.totals
    assert state.places() == _ref_places(n, checker.totals, checker.batches)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 8))
def test_default_length_games_end(seed: int, n: int) -> None:
    state = new(n, seed, max_turns=60)
    random_playout(state, random.Random(seed))
    assert state.is_terminal()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 8), below_five=st.booleans())
def test_same_seed_and_actions_replay_bit_for_bit(seed: int, n: int, below_five: bool) -> None:
    options = {"call_below_five": below_five, "limit": 60, "max_turns": 40}
    first = new(n, seed, **options)
    rng = random.Random(seed)
    log = []
    while not first.is_terminal():
        who = seat(first)
        action = rng.choice(first.legal_actions(who))
        log.append(action)
        first.apply_action(action)
    second = new(n, seed, **options)
    for action in log:
        second.apply_action(action)
    assert [e.to_dict() for e in second.events] == [e.to_dict() for e in first.events]
    assert second.scores() == first.scores() and second.places() == first.places()
    assert second.reveal() == first.reveal()


def test_rules_page_example_matches_the_engine() -> None:
    page = (Path(__file__).parents[2] / "docs" / "rules" / "five-or-less.md").read_text()
    request = json.loads(page.split("```json\n")[1].split("```")[0])
    hands = {
        1: ["Ac", "Ad", "2h", "Kc", "Kd"],
        2: ["2d", "2s", "4c", "5c", "6c"],
        0: ["Th", "Ts", "Jh", "Js", "Qh"],
    }
    state = new(3, deck=stacked_deck(3, hands, ["As", "2c", "Qs"]))
    play(state, "pass")
    assert seat(state) == 2
    since = len(state.events)  # seat 2's previous request: its pre-call question
    play(state, "pass", "pass", "drop Kc Kd", "draw stack")
    assert request["observation"] == sent(state.observation(2))
    assert request["legal"] == list(state.legal_actions(2))
    assert request["events"] == [e.to_dict() for e in state.events[since:] if e.visible_to(2)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(sorted(POINTS)), min_size=1, max_size=7, unique=True))
def test_turn_drops_are_the_disposals_most_points_first(cards: list[str]) -> None:
    """The table-driven order is the rule's: most points, then more cards, then
    the order of disposals() (a stable sort)."""
    hand = canonical(cards)
    ranked = sorted(disposals(hand), key=lambda d: (-hand_total(d), -len(d)))
    assert turn_drops(hand) == ["drop " + " ".join(d) for d in ranked]
