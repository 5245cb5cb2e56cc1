"""Furious Five: the rulebook's examples, one table per rule, properties."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import make_game
from arena.games.base import GameNotOverError, IllegalActionError, OptionError, State
from arena.games.cards import CARD_ORDER, canonical, standard_deck
from arena.games.furious_five import (
    TARGET_ROUND_CAP,
    FuriousFive,
    FuriousFiveState,
    drawable_cards,
    hand_total,
    legal_drops,
    settle,
    turn_start_drops,
)
from sample_bots.greedy_furious_five import choose
from tests.games.pages import assert_example_is_engine_output, numbers, sent
from tests.playout import random_playout, visible_strings

ALL_CARDS = frozenset(standard_deck())


# -- helpers ------------------------------------------------------------------
def stacked(
    num_players: int, hands: Mapping[int, Sequence[str]], stock: Sequence[str] = ()
) -> list[str]:
    """A first-round deck dealing ``hands`` (5 cards each, missing seats get
    unused cards) with ``stock`` on top of the deck, top card first."""
    used = [c for h in hands.values() for c in h] + list(stock)
    spare = iter(c for c in standard_deck() if c not in used)
    full = {s: list(hands.get(s) or [next(spare) for _ in range(5)]) for s in range(num_players)}
    first = 1 % num_players
    order = [full[(first + k) % num_players][i] for i in range(5) for k in range(num_players)]
    return order + list(stock) + list(spare)


def new(
    num_players: int = 2,
    hands: Mapping[int, Sequence[str]] | None = None,
    stock: Sequence[str] = (),
    seed: int = 7,
    **options: Any,
) -> FuriousFiveState:
    if hands is not None or stock:
        options["deck"] = stacked(num_players, hands or {}, stock)
    return FuriousFive(num_players, options).new_state(seed)


def play(state: State, *actions: str) -> None:
    for action in actions:
        state.apply_action(action)


def kinds(state: State) -> list[str]:
    return [e.kind for e in state.events]


def last(state: State, kind: str) -> dict[str, Any]:
    return next(e.to_dict() for e in reversed(state.events) if e.kind == kind)


def drops(hand: list[str], ace_high: bool = False) -> set[str]:
    return {" ".join(cards) for _kind, cards in legal_drops(hand, ace_high)}


def low_caller(**options: Any) -> FuriousFiveState:
    """Two players; seat 1 holds Ac As 2s (total 4) at the start of its 2nd turn;
    seat 0 holds Qc Qd Jc 3c (total 38)."""
    state = new(2, {1: ["As", "2s", "9c", "9d", "9h"], 0: ["Kc", "Kd", "Qc", "Qd", "Jc"]},
                stock=["Ac", "3c"], **options)
    play(state, "drop 9c 9d 9h", "draw deck", "drop Kc Kd", "draw deck")
    return state


# -- settlement: the seed's three examples and the formulas ---------------------
def test_seed_example_1_caller_strictly_lowest() -> None:
    outcome, receivers, deltas = settle([3, 9, 10, 7], caller=0)
    assert (outcome, receivers, deltas) == ("caller_wins", [0], [17, -6, -7, -4])


def test_seed_example_2_caller_fails_pays_lowest() -> None:
    outcome, receivers, deltas = settle([6, 3, 7, 9], caller=0)
    assert (outcome, receivers, deltas) == ("caller_fails", [1], [-13, 13, 0, 0])


def test_seed_example_3_caller_ties_for_lowest() -> None:
    outcome, receivers, deltas = settle([4, 4, 8], caller=0)
    assert (outcome, receivers, deltas) == ("caller_fails", [1], [-4, 4, 0])


@pytest.mark.parametrize(
    ("totals", "caller", "split", "receivers", "deltas"),
    [
        ([9, 2, 5], 1, False, [1], [-7, 10, -3]),
        ([3, 4], 0, False, [0], [1, -1]),
        # others tie for lowest: first clockwise from the caller (seat 3 -> 4 -> 0 -> 1)
        ([2, 2, 9, 4, 6], 3, False, [0], [13, 0, 0, -13, 0]),
        ([2, 2, 9, 4, 6], 3, True, [0, 1], [7, 6, 0, -13, 0]),
        ([5, 3, 9, 3], 2, True, [3, 1], [0, 4, -8, 4]),
        ([5, 3, 9, 3], 0, True, [1, 3], [-8, 4, 0, 4]),
        ([3, 3, 3, 3], 0, True, [1, 2, 3], [0, 0, 0, 0]),
        ([4, 1, 1, 1], 1, True, [2, 3], [0, -3, 2, 1]),
    ],
)
def test_settlement_table(
    totals: list[int], caller: int, split: bool, receivers: list[int], deltas: list[int]
) -> None:
    _outcome, got_receivers, got = settle(totals, caller, split)
    assert got_receivers == receivers
    assert got == deltas
    assert sum(got) == 0


@given(
    st.lists(st.integers(0, 65), min_size=2, max_size=5),
    st.integers(0, 4),
    st.booleans(),
)
def test_settlement_is_zero_sum_and_only_the_caller_pays_on_failure(
    totals: list[int], caller: int, split: bool
) -> None:
    caller %= len(totals)
    outcome, receivers, deltas = settle(totals, caller, split)
    assert sum(deltas) == 0
    others = [t for j, t in enumerate(totals) if j != caller]
    if totals[caller] < min(others):
        assert outcome == "caller_wins"
        assert all(deltas[j] == totals[caller] - totals[j] for j in range(len(totals))
                   if j != caller)
    else:
        assert outcome == "caller_fails"
        assert all(d >= 0 for j, d in enumerate(deltas) if j != caller)
        assert {j for j, d in enumerate(deltas) if d > 0} <= set(receivers)
        assert all(totals[j] == min(others) for j in receivers)
        shares = [deltas[j] for j in receivers]
        assert max(shares) - min(shares) <= 1


# -- dealing and turn order -----------------------------------------------------
def test_stacked_deal_one_at_a_time_from_the_player_left_of_dealer() -> None:
    deck = standard_deck()
    state = FuriousFive(3, {"deck": deck}).new_state(0)
    # seat 1 starts: it gets cards 0, 3, 6, 9, 12; seat 2 gets 1, 4, ...; seat 0 gets 2, 5, ...
    assert state.hands[1] == canonical(deck[0:15:3])
    assert set(state.hands[2]) == set(deck[1:15:3])
    assert set(state.hands[0]) == set(deck[2:15:3])
    assert state.deck[-1] == deck[15]
    assert (state.dealer, state.turn, state.deciding_seats()) == (0, 1, (1,))
    start = state.events[0].to_dict()
    assert start == {"kind": "hand_start", "round": 1, "dealer": 0, "first": 1,
                     "chips": [0, 0, 0]}


def test_dealer_rotates_left_each_round_and_left_of_dealer_starts() -> None:
    state = new(3, max_turns=1, rounds=4)
    seen = []
    while not state.is_terminal():
        seen.append((state.round, state.dealer, state.turn))
        state.apply_action(state.default_action(state.turn))
    assert [s for s in seen if s[0] <= 4][::2] == [(1, 0, 1), (2, 1, 2), (3, 2, 0), (4, 0, 1)]


def test_turns_pass_clockwise() -> None:
    state = new(4)
    order = []
    for _ in range(8):
        order.append(state.turn)
        state.apply_action(state.default_action(state.turn))
    assert order == [1, 1, 2, 2, 3, 3, 0, 0]


# -- the rulebook's one-turn walkthrough ---------------------------------------
def test_one_turn_walkthrough() -> None:
    state = new(2, {1: ["Ac", "2d", "3h", "5s", "5d"]})
    assert state.observation(1)["hand_points"] == 16
    legal = state.legal_actions(1)
    assert set(legal) == {"drop Ac 2d 3h", "drop 5d 5s"}  # no call at 16, no single
    play(state, "drop Ac 2d 3h")
    assert state.legal_actions(1) == ("draw deck",)  # no table drop on the very first turn
    play(state, "draw deck")
    assert len(state.hands[1]) == 3
    assert state.observation(0)["live_drop"] == [
        {"kind": "straight", "cards": ["Ac", "2d", "3h"]}
    ]
    play(state, state.legal_actions(0)[0])
    # seat 0 may take the straight's lowest or highest card, not the middle one
    assert state.legal_actions(0) == ("draw deck", "draw Ac", "draw 3h")


# -- drops ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hand", "ace_high", "expected"),
    [
        (["5c", "5d", "9h", "Js", "Kc"], False, {"5c 5d"}),
        (["5c", "5d", "5h", "Js", "Kc"], False,
         {"5c 5d", "5c 5h", "5d 5h", "5c 5d 5h"}),
        (["4c", "4d", "4h", "4s", "Kc"], False,
         {"4c 4d", "4c 4h", "4c 4s", "4d 4h", "4d 4s", "4h 4s",
          "4c 4d 4h", "4c 4d 4s", "4c 4h 4s", "4d 4h 4s", "4c 4d 4h 4s"}),
        (["3c", "4d", "5h", "6s", "7c"], False,
         {"3c 4d 5h", "4d 5h 6s", "5h 6s 7c", "3c 4d 5h 6s", "4d 5h 6s 7c",
          "3c 4d 5h 6s 7c"}),
        (["4c", "4d", "5h", "6s", "Kc"], False, {"4c 4d", "4c 5h 6s", "4d 5h 6s"}),
        (["Ac", "2d", "3h", "9s", "Kc"], False, {"Ac 2d 3h"}),
        (["Ac", "2d", "3h", "9s", "Kc"], True, {"Ac 2d 3h"}),
        # no pair and no straight: every single is legal
        (["2c", "4d", "6h", "8s", "Tc"], False, {"2c", "4d", "6h", "8s", "Tc"}),
        # Q-K-A only with ace_high, and the ace is listed last
        (["Ac", "5d", "9h", "Qs", "Kc"], False, {"Ac", "5d", "9h", "Qs", "Kc"}),
        (["Ac", "5d", "9h", "Qs", "Kc"], True, {"Qs Kc Ac"}),
        (["Ac", "9h", "Jd", "Qs", "Kc"], True, {"Jd Qs Kc", "Qs Kc Ac", "Jd Qs Kc Ac"}),
        # never wrap K-A-2
        (["Ac", "2d", "5h", "8s", "Kc"], True, {"Ac", "2d", "5h", "8s", "Kc"}),
        (["Ac", "2d", "Tc", "Js", "Kc"], True, {"Ac", "2d", "Tc", "Js", "Kc"}),
        # a single card left
        (["7h"], False, {"7h"}),
        (["2c", "2d"], False, {"2c 2d"}),
    ],
)
def test_legal_drops_table(hand: list[str], ace_high: bool, expected: set[str]) -> None:
    assert drops(hand, ace_high) == expected


def test_drops_listed_highest_points_first_and_call_last() -> None:
    state = new(2, {1: ["3c", "4d", "5h", "5s", "Kc"]})
    assert state.legal_actions(1) == (
        "drop 3c 4d 5h", "drop 3c 4d 5s", "drop 5h 5s",
    )
    caller = low_caller()
    assert caller.legal_actions(1) == ("drop Ac As", "call")
    assert caller.default_action(1) == "drop Ac As"


def test_drop_moves_cards_and_is_public() -> None:
    state = new(2, {1: ["3c", "4d", "5h", "5s", "Kc"]})
    play(state, "drop 5h 5s")
    assert state.hands[1] == ["3c", "4d", "Kc"]
    assert state.phase == "draw"
    assert last(state, "drop") == {"kind": "drop", "seat": 1, "combo": "pair",
                                   "cards": ["5h", "5s"]}
    with pytest.raises(IllegalActionError):
        state.apply_action("drop 3c 4d 5h")  # one drop per turn without multi_drop


def test_illegal_actions_rejected_without_change() -> None:
    state = new(2, {1: ["3c", "4d", "5h", "5s", "Kc"]})
    before = state.observation(1)
    for bad in ["drop Kc", "call", "draw deck", "drop 5h", "drop 5s 5h", "pass"]:
        with pytest.raises(IllegalActionError):
            state.apply_action(bad)
    with pytest.raises(IllegalActionError):
        state.apply_actions({0: "drop 5h 5s"})
    assert state.observation(1) == before
    assert state.legal_actions(0) == ()


# -- calling --------------------------------------------------------------------
def test_call_below_five_wins_and_settles() -> None:
    state = low_caller()
    assert state.observation(1)["can_call"] is True
    assert state.hands[0] == ["3c", "Jc", "Qc", "Qd"]
    play(state, "call")
    end = last(state, "hand_end")
    assert end["reason"] == "call" and end["caller"] == 1
    assert end["totals"] == [38, 4]
    assert end["hands"] == [["3c", "Jc", "Qc", "Qd"], ["Ac", "As", "2s"]]
    assert end["outcome"] == "caller_wins"
    assert end["deltas"] == [-34, 34] and state.chips == [-34, 34]
    assert state.round == 2 and kinds(state)[-3:] == ["hand_start", "deal", "deal"]


@pytest.mark.parametrize(
    ("call_at_five", "stock_top", "total", "may_call"),
    [
        (False, "Ac", 4, True),
        (False, "2c", 5, False),
        (True, "2c", 5, True),
        (True, "3c", 6, False),
    ],
)
def test_call_threshold(call_at_five: bool, stock_top: str, total: int, may_call: bool) -> None:
    state = new(2, {1: ["As", "2s", "9c", "9d", "9h"], 0: ["Kc", "Kd", "Qc", "Qd", "Jc"]},
                stock=[stock_top, "4c"], call_at_five=call_at_five)
    play(state, "drop 9c 9d 9h", "draw deck", "drop Kc Kd", "draw deck")
    obs = state.observation(1)
    assert obs["hand_points"] == total
    assert obs["call_limit"] == (5 if call_at_five else 4)
    assert obs["can_call"] is may_call
    assert ("call" in state.legal_actions(1)) is may_call
    assert state.legal_actions(1)[0] != "call"


def test_call_only_at_turn_start() -> None:
    state = low_caller()
    play(state, "drop Ac As")
    assert "call" not in state.legal_actions(1)
    assert state.observation(1)["can_call"] is False


def test_failed_call_in_play_pays_lowest_clockwise() -> None:
    # seat 1 calls at 4 while seat 0 sits at 3: seat 1 pays (4 - 3) to seat 0
    state = new(2, {1: ["As", "2s", "9c", "9d", "9h"], 0: ["Kc", "Kd", "Ks", "Kh", "2c"]},
                stock=["Ac", "Ad"])
    play(state, "drop 9c 9d 9h", "draw deck", "drop Kc Kd Kh Ks", "draw deck")
    assert state.hands[0] == ["Ad", "2c"]
    play(state, "call")
    end = last(state, "hand_end")
    assert (end["outcome"], end["receivers"], end["deltas"]) == ("caller_fails", [0], [1, -1])


@pytest.mark.parametrize(
    ("split_fail", "deltas"), [(False, [0, -33, 33, 0]), (True, [16, -33, 17, 0])]
)
def test_failed_call_with_tied_lowest_in_play(split_fail: bool, deltas: list[int]) -> None:
    # 4 players: seat 1 calls at 4, seats 2 and 0 hold 3 each, seat 3 holds 35.
    hands = {
        1: ["5c", "6d", "7h", "8s", "9c"],
        2: ["6c", "7d", "8h", "9s", "Tc"],
        3: ["Kc", "Kd", "Ks", "Qc", "Qd"],
        0: ["7c", "8d", "9h", "Ts", "Jc"],
    }
    state = new(4, hands, stock=["4c", "3c", "Jh", "3d"], split_fail=split_fail)
    play(state, "drop 5c 6d 7h 8s 9c", "draw deck")
    play(state, "drop 6c 7d 8h 9s Tc", "draw deck")
    play(state, "drop Kc Kd Ks", "draw deck")
    play(state, "drop 7c 8d 9h Ts Jc", "draw deck")
    assert state.totals == [3, 4, 3, 35]
    play(state, "call")
    end = last(state, "hand_end")
    assert end["outcome"] == "caller_fails"
    assert end["receivers"] == ([2, 0] if split_fail else [2])
    assert end["deltas"] == deltas and state.chips == deltas


# -- drawing --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("live", "expected"),
    [
        ([("straight", ("3c", "4d", "5h"))], ["3c", "5h"]),
        ([("straight", ("3c", "4d", "5h", "6s", "7c"))], ["3c", "7c"]),
        ([("straight", ("Qs", "Kc", "Ac"))], ["Ac", "Qs"]),
        ([("pair", ("5h", "5s"))], ["5h", "5s"]),
        ([("trips", ("5c", "5h", "5s"))], ["5c", "5h", "5s"]),
        ([("quads", ("5c", "5d", "5h", "5s"))], ["5c", "5d", "5h", "5s"]),
        ([("single", ("Kd",))], ["Kd"]),
        ([], []),
        ([("pair", ("9c", "9d")), ("straight", ("2c", "3d", "4h", "5s"))],
         ["2c", "5s", "9c", "9d"]),
    ],
)
def test_drawable_cards_table(live: list[tuple[str, tuple[str, ...]]], expected: list[str]) -> None:
    assert drawable_cards(live) == expected


def test_draw_from_live_drop_then_previous_drop_to_graveyard() -> None:
    state = new(2, {1: ["3c", "4d", "5h", "5s", "Kc"], 0: ["8c", "8d", "9h", "Ts", "2c"]},
                stock=["Qd", "Qh"])
    play(state, "drop 3c 4d 5h", "draw deck")
    assert state.legal_actions(0)[0] == "drop 8c 9h Ts"
    play(state, "drop 8d 9h Ts")
    assert state.legal_actions(0) == ("draw deck", "draw 3c", "draw 5h")
    play(state, "draw 3c")
    assert state.hands[0] == ["2c", "3c", "8c"]
    assert state.graveyard == ("4d", "5h")
    assert state.live == [("straight", ("8d", "9h", "Ts"))]
    draw = last(state, "draw")
    assert draw == {"kind": "draw", "seat": 0, "source": "drop", "card": "3c",
                    "buried": ["4d", "5h"]}
    # the live drop is the one at the start of the turn: seat 1 may draw from 8-9-T
    play(state, "drop 5s")
    assert state.legal_actions(1) == ("draw deck", "draw 8d", "draw Ts")


def test_deck_draw_is_private() -> None:
    state = new(2, {1: ["3c", "4d", "5h", "5s", "Kc"]}, stock=["Qd"])
    play(state, "drop 3c 4d 5h", "draw deck")
    public = [e for e in state.events if e.kind == "draw"][-1]
    private = [e for e in state.events if e.kind == "draw_card"][-1]
    assert public.to is None and "card" not in public.data
    assert private.to == (1,) and private.data["card"] == "Qd"
    assert "Qd" in state.hands[1] and "Qd" not in visible_strings(state.observation(0))


def test_reshuffle_when_deck_empty_keeps_live_drop() -> None:
    state = new(2, seed=3, max_turns=400)
    while "reshuffle" not in kinds(state):
        assert not state.is_terminal()
        seat = state.turn
        if state.phase == "draw" and not state.deck:
            live = [c for _k, cards in state.live for c in cards]
            drop = [c for _k, cards in state.drop for c in cards]
            grave = sorted(state.graveyard)
            state.apply_action("draw deck")
            assert kinds(state)[-3:] == ["reshuffle", "draw", "draw_card"]
            assert last(state, "reshuffle")["cards"] == len(grave)
            assert sorted([*state.deck, state.events[-1].data["card"]]) == grave
            assert not set(live) & set(state.deck)
            assert [c for _k, cards in state.live for c in cards] == drop
            break
        action = state.default_action(seat)
        state.apply_action(action)


def test_first_turn_draws_from_deck_only() -> None:
    state = new(3)
    play(state, state.default_action(1))
    assert state.legal_actions(1) == ("draw deck",)
    assert state.observation(1)["live_drop"] == []


# -- multi_drop -----------------------------------------------------------------
def test_multi_drop_further_drops_after_draws() -> None:
    hands = {1: ["3c", "4d", "5h", "9s", "9c"], 0: ["Jc", "Jd", "Qh", "Qs", "2c"]}
    state = new(2, hands, stock=["Kd", "Kh"], multi_drop=True)
    play(state, "drop 3c 4d 5h")
    assert state.legal_actions(1) == ("draw deck", "drop 9c 9s")
    play(state, "drop 9c 9s")
    assert state.hands[1] == [] and state.legal_actions(1) == ("draw deck",)
    play(state, "draw deck")
    assert state.live == [("straight", ("3c", "4d", "5h")), ("pair", ("9c", "9s"))]
    play(state, "drop Qh Qs")
    assert state.legal_actions(0) == (
        "draw deck", "draw 3c", "draw 5h", "draw 9c", "draw 9s", "drop Jc Jd",
    )
    play(state, "drop Jc Jd", "draw 9s")
    assert state.hands[0] == ["2c", "9s"]
    assert sorted(state.graveyard) == ["3c", "4d", "5h", "9c"]
    obs = state.observation(1)
    assert obs["live_drop"] == [{"kind": "pair", "cards": ["Qh", "Qs"]},
                                {"kind": "pair", "cards": ["Jc", "Jd"]}]


def test_without_multi_drop_no_further_drops() -> None:
    hands = {1: ["3c", "4d", "5h", "9s", "9c"]}
    state = new(2, hands)
    play(state, "drop 3c 4d 5h")
    assert state.legal_actions(1) == ("draw deck",)


def test_multi_drop_never_offers_an_extra_single() -> None:
    state = new(2, {1: ["2c", "4d", "6h", "8s", "Tc"]}, multi_drop=True)
    play(state, "drop Tc")
    assert state.legal_actions(1) == ("draw deck",)


# -- turn cap, rounds, target ---------------------------------------------------
def test_turn_cap_ends_round_without_chips() -> None:
    state = new(3, max_turns=3, rounds=2)
    for _ in range(6):
        state.apply_action(state.default_action(state.turn))
    end = last(state, "hand_end")
    assert end["reason"] == "turn_cap" and end["outcome"] == "no_result"
    assert end["deltas"] == [0, 0, 0] and end["caller"] is None
    assert state.chips == [0, 0, 0] and state.round == 2 and state.dealer == 1


def test_rounds_option_ends_game() -> None:
    state = new(2, max_turns=2, rounds=3)
    random_playout(state, random.Random(1))
    assert state.round == 3 and kinds(state).count("hand_end") == 3
    assert kinds(state)[-1] == "game_end"
    assert state.deciding_seats() == () and state.observation(0)["phase"] == "over"


def test_target_option_ends_after_round_reaching_target() -> None:
    state = low_caller(target=34, rounds=1)
    play(state, "call")
    assert state.is_terminal() and state.scores() == [-34.0, 34.0]
    state = low_caller(target=35)
    play(state, "call")
    assert not state.is_terminal() and state.round == 2


def test_target_safety_cap() -> None:
    state = new(2, max_turns=1, target=5)
    while not state.is_terminal():
        state.apply_action(state.default_action(state.turn))
    assert state.round == TARGET_ROUND_CAP and state.chips == [0, 0]


# -- options ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {"bogus": 1},
        {"rounds": 0},
        {"rounds": 1001},
        {"target": -1},
        {"ace_high": "maybe"},
        {"multi_drop": 3},
        {"max_turns": 0},
        {"deck": standard_deck()[:51]},
        {"deck": [*standard_deck()[:51], "X"]},
    ],
)
def test_invalid_options(options: dict[str, Any]) -> None:
    with pytest.raises(OptionError):
        FuriousFive(2, options)


@pytest.mark.parametrize("players", [1, 6])
def test_player_count(players: int) -> None:
    with pytest.raises(OptionError):
        FuriousFive(players)


def test_option_defaults_and_registry() -> None:
    game = make_game("furious-five", 3, {"ace_high": "true", "rounds": "4"})
    assert isinstance(game, FuriousFive)
    assert game.options == {
        "rounds": 4, "target": 0, "ace_high": True, "multi_drop": False,
        "call_at_five": False, "split_fail": False, "max_turns": 400, "deck": None,
    }
    obs = game.new_state(1).observation(0)
    assert obs["options"] == {k: v for k, v in game.options.items() if k != "deck"}


# -- results and views ------------------------------------------------------------
def test_scores_and_places_only_when_over() -> None:
    state = new(3)
    with pytest.raises(GameNotOverError):
        state.scores()
    state = low_caller(rounds=1)
    play(state, "call")
    assert state.scores() == [-34.0, 34.0] and state.places() == [2, 1]
    assert state.reveal() == {"rounds": 1, "hands": [["3c", "Jc", "Qc", "Qd"],
                              ["Ac", "As", "2s"]], "totals": [38, 4], "chips": [-34, 34]}
    assert last(state, "game_end") == {"kind": "game_end", "rounds": 1,
                                       "chips": [-34, 34], "places": [2, 1]}


def test_equal_chips_share_place() -> None:
    state = new(3, max_turns=1, rounds=1)
    while not state.is_terminal():
        state.apply_action(state.default_action(state.turn))
    assert state.places() == [1, 1, 1]


def test_observation_fields() -> None:
    state = new(3, {1: ["3c", "4d", "5h", "5s", "Kc"]}, stock=["Qd"])
    play(state, "drop 3c 4d 5h")
    obs = sent(state.observation(1))
    assert obs == {
        "game": "furious-five", "seat": 1, "players": 3, "to_move": [1],
        "phase": "draw", "round": 1, "dealer": 0,
        "turn_number": 1, "hand": ["5s", "Kc"], "hand_points": 18, "hand_sizes": [5, 2, 5],
        "chips": [0, 0, 0], "can_call": False, "call_limit": 4, "live_drop": [],
        "live_drop_seat": None, "drop": [{"kind": "straight", "cards": ["3c", "4d", "5h"]}],
        "graveyard": [], "deck_size": 37, "options": obs["options"],
    }
    play(state, "draw deck")
    obs2 = sent(state.observation(2))
    assert obs2["to_move"] == [2] and obs2["turn_number"] == 2 and obs2["live_drop_seat"] == 1
    assert obs2["hand_sizes"] == [5, 3, 5] and obs2["deck_size"] == 36
    spectator = sent(state.observation(None))
    assert spectator["seat"] is None and spectator["to_move"] == [2]
    assert spectator == {key: value for key, value in obs2.items()
                         if key not in ("seat", "hand", "hand_points", "can_call")} | {"seat": None}


def test_numbers_are_ints() -> None:
    """Every integral number in observations, events, reveal and scores is an int."""
    state = new(3, rounds=2, seed=5)
    seen: list[Any] = []
    while not state.is_terminal():
        seat = state.turn
        seen += numbers(state.observation(seat)) + numbers(state.observation(None))
        state.apply_action(state.legal_actions(seat)[-1])
    seen += numbers([e.to_dict() for e in state.events]) + numbers(state.reveal())
    seen += numbers(state.scores())
    assert seen and all(type(n) is int for n in seen)


# -- properties -------------------------------------------------------------------
def ref_settle(totals: list[int], caller: int, split: bool) -> list[int]:
    """The seed's formulas, written out independently."""
    n = len(totals)
    c = totals[caller]
    deltas = [0] * n
    if all(c < totals[j] for j in range(n) if j != caller):
        for j in range(n):
            if j != caller:
                deltas[j] -= totals[j] - c
                deltas[caller] += totals[j] - c
        return deltas
    low = min(totals[j] for j in range(n) if j != caller)
    clockwise = [(caller + k) % n for k in range(1, n)]
    tied = [j for j in clockwise if totals[j] == low]
    lump = sum(totals[j] - low for j in range(n) if j != tied[0])
    deltas[caller] -= lump
    payees = tied if split else tied[:1]
    for k in range(lump):
        deltas[payees[k % len(payees)]] += 1
    return deltas


def public_cards(state: FuriousFiveState) -> set[str]:
    locs = state.card_locations()
    return set(locs["live_drop"]) | set(locs["drop"]) | set(locs["graveyard"])


def check_conservation(state: FuriousFiveState) -> None:
    everything = [c for cards in state.card_locations().values() for c in cards]
    assert len(everything) == 52 and set(everything) == ALL_CARDS
    for seat, hand in enumerate(state.hands):
        drawing = seat == state.turn and state.phase == "draw"
        assert (0 if drawing else 1) <= len(hand) <= 5
    assert state.totals == [hand_total(h) for h in state.hands]


class Checker:
    """Per-step invariants of a random playout, including the leak check."""

    def __init__(self, state: FuriousFiveState) -> None:
        self.seen = 0
        self.allowed = self._allowed(state)
        self.options = state.game.options
        self.hand_ends = 0

    @staticmethod
    def _allowed(state: FuriousFiveState) -> list[set[str]]:
        table = public_cards(state)
        return [table | set(h) for h in state.hands]

    def __call__(self, state: State) -> None:
        assert isinstance(state, FuriousFiveState)
        check_conservation(state)
        assert sum(state.chips) == 0
        after = self._allowed(state)
        for seat in range(state.num_players):
            obs = state.observation(seat)
            shown = {s for s in visible_strings(obs) if s in ALL_CARDS}
            assert shown <= after[seat], (seat, shown - after[seat])
            assert obs["hand"] == canonical(obs["hand"])
            assert obs["hand_points"] == hand_total(obs["hand"])
        new_events = state.events[self.seen:]
        # A seat may see its own cards of a hand that ended in this step.
        ended: dict[int, set[str]] = {}
        for event in new_events:
            if event.kind == "hand_end":
                for seat, hand in enumerate(event.data["hands"]):
                    ended.setdefault(seat, set()).update(hand)
        for event in new_events:
            if event.kind == "hand_end":  # public by design: every hand is revealed
                self._check_hand_end(event.to_dict())
                continue
            for seat in range(state.num_players):
                if event.visible_to(seat):
                    shown = {s for s in visible_strings(event.to_dict()) if s in ALL_CARDS}
                    ok = after[seat] | self.allowed[seat] | ended.get(seat, set())
                    assert shown <= ok, (event, seat)
        self.seen = len(state.events)
        self.allowed = after

    def _check_hand_end(self, end: dict[str, Any]) -> None:
        self.hand_ends += 1
        assert end["totals"] == [hand_total(h) for h in end["hands"]]
        if end["reason"] == "turn_cap":
            assert end["deltas"] == [0] * len(end["totals"])
            return
        limit = 5 if self.options["call_at_five"] else 4
        assert end["totals"][end["caller"]] <= limit
        assert end["deltas"] == ref_settle(end["totals"], end["caller"],
                                           self.options["split_fail"])


option_sets = st.fixed_dictionaries(
    {
        "ace_high": st.booleans(),
        "multi_drop": st.booleans(),
        "call_at_five": st.booleans(),
        "split_fail": st.booleans(),
        "rounds": st.integers(1, 2),
        "max_turns": st.sampled_from([400, 60, 3]),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(2, 5), option_sets)
def test_random_playouts(seed: int, players: int, options: dict[str, Any]) -> None:
    state = FuriousFive(players, options).new_state(seed)
    checker = Checker(state)
    checker(state)
    random_playout(state, random.Random(seed), checker)
    assert state.is_terminal()
    assert checker.hand_ends == options["rounds"]
    assert sum(state.scores()) == 0
    assert state.scores() == state.chips and all(type(c) is int for c in state.scores())
    final = state.events[-1].to_dict()
    assert final["kind"] == "game_end" and final["chips"] == state.chips


def replay(seed: int, players: int, options: dict[str, Any], actions: list[str]) -> State:
    state = FuriousFive(players, options).new_state(seed)
    for action in actions:
        state.apply_action(action)
    return state


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 5), option_sets)
def test_determinism(seed: int, players: int, options: dict[str, Any]) -> None:
    state = FuriousFive(players, options).new_state(seed)
    log: list[str] = []
    rng = random.Random(seed ^ 0x5EED)
    while not state.is_terminal():
        action = rng.choice(state.legal_actions(state.turn))
        log.append(action)
        state.apply_action(action)
    again = replay(seed, players, options, log)
    assert [e.to_dict() for e in again.events] == [e.to_dict() for e in state.events]
    assert again.scores() == state.scores() and again.reveal() == state.reveal()


def test_stacked_deck_only_stacks_the_first_round() -> None:
    deck = standard_deck()
    a = FuriousFive(2, {"deck": deck, "max_turns": 1}).new_state(1)
    b = FuriousFive(2, {"deck": deck, "max_turns": 1}).new_state(2)
    assert a.hands == b.hands
    play(a, a.default_action(1), "draw deck")
    play(b, b.default_action(1), "draw deck")
    assert a.round == b.round == 2 and a.hands != b.hands


def test_rules_page_example_is_the_engine_output() -> None:
    """The example request in docs/rules/furious-five.md is real engine output."""
    state = FuriousFive(3, {"rounds": 5}).new_state(2024)
    assert_example_is_engine_output(
        "furious-five", state, lambda _, o, legal: choose(o, legal))


@given(st.lists(st.sampled_from(sorted(ALL_CARDS)), max_size=5, unique=True), st.booleans())
def test_turn_start_drops_are_the_legal_drops_in_order(cards: list[str], ace_high: bool) -> None:
    """The table-driven drops are legal_drops() sorted by the rule: highest
    point total first, ties card by card in canonical order."""
    hand = canonical(cards)
    ranked = sorted(legal_drops(hand, ace_high),
                    key=lambda d: (-hand_total(d[1]), [CARD_ORDER[c] for c in d[1]]))
    assert turn_start_drops(hand, ace_high) == ["drop " + " ".join(d[1]) for d in ranked]
