"""Rummy-five engine tests: the rulebook's worked example, one table per rule,
claim priority and restrictions, and property tests over random playouts."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, cast

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games import make_game
from arena.games.base import Event, GameNotOverError, IllegalActionError, OptionError, State
from arena.games.cards import rummy_deck
from arena.games.rummy_five import (
    CLAIM,
    NAMES,
    SPECIAL_POINTS,
    RummyFive,
    RummyFiveState,
    completing_cards,
    is_complete,
)
from tests.games.pages import sent
from tests.playout import random_playout, visible_strings

DECK = rummy_deck()
CARD_NAMES = frozenset(NAMES)


# -- helpers ---------------------------------------------------------------------


def observe(state: State, seat: int | None) -> dict[str, Any]:
    """The observation of ``seat`` as a bot receives it (list fields may be tuples)."""
    observation: dict[str, Any] = sent(state.observation(seat))
    return observation


def stacked(hands: Sequence[Sequence[str]], draws: Sequence[str] = (),
            tail: Sequence[str] = ()) -> list[str]:
    """A full first-deal deck: ``hands`` dealt from seat 0 (the first dealer),
    then ``draws`` in drawing order, the unused cards in canonical order, and
    ``tail`` as the last cards of the deck."""
    order = [hand[r] for r in range(4) for hand in hands]
    order += draws
    rest = Counter(DECK) - Counter(order) - Counter(tail)
    assert sum(rest.values()) + len(order) + len(tail) == len(DECK), "too many copies"
    return order + [c for c in NAMES for _ in range(rest[c])] + list(tail)


def make(hands: Sequence[Sequence[str]], draws: Sequence[str] = (), tail: Sequence[str] = (),
         **options: Any) -> RummyFiveState:
    game = RummyFive(len(hands), {"deck": stacked(hands, draws, tail), **options})
    return game.new_state(0)


def do(state: RummyFiveState, seat: int, action: str) -> None:
    assert state.deciding_seats() == (seat,), (state.deciding_seats(), seat, action)
    assert action in state.legal_actions(seat), (action, state.legal_actions(seat))
    state.apply_action(action)


def pass_windows(state: RummyFiveState) -> None:
    while observe(state, 0)["phase"] == "claim":
        state.apply_actions({s: "pass" for s in state.deciding_seats()})


def tsumogiri(state: RummyFiveState, seat: int) -> None:
    """Pass any open claim window, then ``seat`` discards the card it drew."""
    pass_windows(state)
    do(state, seat, "discard " + observe(state, seat)["drawn"])


def events(state: RummyFiveState, kind: str) -> list[dict[str, Any]]:
    return [dict(e.data) for e in state.events if e.kind == kind]


def last(state: RummyFiveState, kind: str) -> dict[str, Any]:
    return events(state, kind)[-1]


def specials_of(hand_end: dict[str, Any]) -> list[str]:
    return [s["name"] for s in hand_end["specials"]]


# -- the rulebook's worked example --------------------------------------------------


def test_rulebook_payment_example() -> None:
    # Carol (seat 0) deals; Ashley (1) and Benjamin (2) call Go; Ashley self-draws
    # a Flush: Go 1 + Covert 1 + Flush ("Unified") 1 = 3 points.
    state = make(
        [["bA", "bC", "rA", "rC"], ["bs", "bs", "bs", "bJ"], ["rJ", "rK", "rL", "rs"]],
        draws=["bL", "rB", "bK", "bB", "bJ"],
    )
    do(state, 0, "discard bL")
    do(state, 1, "go discard rB")
    do(state, 2, "go discard bK")
    assert state.pot == 2 and state.chips == [30, 29, 29]
    do(state, 0, "discard bB")
    do(state, 1, "win")
    end = last(state, "hand_end")
    assert specials_of(end) == ["covert", "flush"]
    assert end["points"] == {"go": 1, "specials": 2, "dealer": 0, "total": 3}
    assert end["pot_won"] == 2
    # Ashley takes the pot of 2; Benjamin pays ceil(3/2) = 2, Carol 2 + 1 as the dealer.
    assert end["payments"] == [-3, 7, -2]
    assert end["chips"] == [27, 36, 27] and end["pot"] == 0
    assert last(state, "win") == {"seat": 1, "how": "self-draw", "card": "bJ", "source": None}
    # The dealer lost: the deal passes left with a fresh count.
    assert last(state, "hand_start")["dealer"] == 1
    assert last(state, "hand_start")["dealer_count"] == 1


# -- hands: pairs, trios, complete hands, one card away ------------------------------

COMPLETE_CASES = [
    (["bs", "bs", "bs", "bJ", "bJ"], True, True),   # set + pair
    (["bA", "bB", "bC", "rs", "rs"], True, True),   # run + pair
    (["rJ", "rK", "rL", "bA", "bA"], True, True),   # J-K-L run
    (["bL", "rL", "rs", "rs", "rs"], True, True),   # L-L pair of different suits
    (["bA", "bB", "rC", "rs", "rs"], False, False),  # run must be one suit
    (["bA", "bA", "bB", "rs", "rs"], False, False),  # A-A-B is no run
    (["bs", "bs", "rs", "bJ", "bJ"], False, False),  # set must be one suit
    (["bs", "rs", "bA", "bB", "bC"], False, False),  # s of two suits are no pair
    (["bB", "bC", "bJ", "rs", "rs"], False, False),  # no wrap/skip runs
    (["bJ", "bJ", "bK", "bK", "bL"], True, False),  # Royals: only where allowed
    (["rJ", "rJ", "rK", "rK", "bL"], False, False),  # Royals must be one suit
]


@pytest.mark.parametrize(("hand", "with_royals", "without_royals"), COMPLETE_CASES)
def test_complete_hands(hand: list[str], with_royals: bool, without_royals: bool) -> None:
    assert is_complete(hand, royals_allowed=True) is with_royals
    assert is_complete(hand, royals_allowed=False) is without_royals


ONE_AWAY_CASES = [
    (["bs", "bs", "bs", "bJ"], True, ["bJ"]),
    (["bs", "bs", "bs", "bL"], True, ["rL"]),  # only one bL exists: it pairs with rL
    (["bs", "bs", "rJ", "rJ"], True, ["bs"]),
    (["bA", "bB", "rs", "rs"], True, ["bC"]),
    (["bA", "bC", "rs", "rs"], True, ["bB"]),
    (["bs", "bs", "bs", "bs"], True, ["bs"]),  # Phalanx; bs x5 exist
    (["bA", "bB", "bC", "bJ"], True, ["bJ"]),
    (["bJ", "bJ", "bK", "bL"], True, ["bK"]),  # Royals ...
    (["bJ", "bJ", "bK", "bL"], False, []),  # ... barred after a call
    (["bA", "bB", "rC", "rs"], True, []),
    (["bs", "bs", "rs", "rs"], True, ["bs", "rs"]),
]


@pytest.mark.parametrize(("hand", "royals", "waits"), ONE_AWAY_CASES)
def test_one_card_away(hand: list[str], royals: bool, waits: list[str]) -> None:
    assert completing_cards(hand, royals) == waits


# -- special combinations ---------------------------------------------------------------

SPECIAL_CASES = [
    # seat 1's four cards, the card it draws on its second turn, its specials
    (["rs", "rs", "rs", "bJ"], "bJ", ["covert"]),
    (["bs", "bs", "bs", "bJ"], "bJ", ["covert", "flush"]),
    (["rA", "rA", "bJ", "bK"], "bL", ["covert", "maneuver"]),
    (["rs", "rs", "rs", "bA"], "bA", ["covert", "hawkeye"]),
    (["rs", "rs", "rs", "bJ"], "rB", None),  # not complete: no win offered
    (["bs", "bs", "bs", "bC"], "bC", ["covert", "flush", "legio"]),
    (["bL", "rL", "rs", "rs"], "rs", ["covert", "testudo"]),
    (["bL", "rL", "bA", "bB"], "bC", ["covert", "maneuver", "wedge"]),
    (["bs", "bs", "bs", "bs"], "bs", ["covert", "flush", "phalanx"]),
    (["bJ", "bJ", "bK", "bL"], "bK", ["covert", "flush", "maneuver", "royals"]),
    (["rA", "rB", "rC", "rs"], "rs", ["covert", "flush"]),
]


def _fillers(avoid: Iterable[str], count: int) -> list[str]:
    """Cards for the other seat, of kinds seat 1 does not use."""
    avoid = set(avoid)
    pool = [c for c in DECK if c not in avoid]
    return pool[-count:]


@pytest.mark.parametrize(("hand", "card", "expected"), SPECIAL_CASES)
def test_special_combinations_on_second_turn(hand: list[str], card: str,
                                             expected: list[str] | None) -> None:
    filler = _fillers([*hand, card], 7)
    state = make([filler[:4], hand], draws=[filler[4], filler[5], filler[6], card])
    tsumogiri(state, 0)
    tsumogiri(state, 1)
    tsumogiri(state, 0)
    pass_windows(state)
    if expected is None:
        assert "win" not in state.legal_actions(1)
        return
    do(state, 1, "win")
    end = last(state, "hand_end")
    assert specials_of(end) == expected
    total = sum(SPECIAL_POINTS[s] for s in expected)
    assert end["points"] == {"go": 0, "specials": total, "dealer": 0, "total": total}
    # Self-draw in a 2-player game: the other player (the dealer) pays all + 1.
    assert end["payments"] == [-total - 1, total + 1]


def test_lightning_dealer_first_turn_with_dealer_point() -> None:
    state = make([["bs", "bs", "bs", "bJ"], ["rA", "rC", "rJ", "rL"]], draws=["bJ"])
    assert state.legal_actions(0)[0] == "win"
    do(state, 0, "win")
    end = last(state, "hand_end")
    assert specials_of(end) == ["covert", "flush", "lightning"]
    assert end["points"] == {"go": 0, "specials": 8, "dealer": 1, "total": 9}
    assert end["payments"] == [9, -9]
    start = last(state, "hand_start")
    assert (start["dealer"], start["dealer_count"]) == (0, 2)


def test_lightning_for_a_non_dealer_first_turn() -> None:
    state = make([["rA", "rC", "rJ", "rL"], ["rs", "rs", "rs", "bJ"], ["bA", "bC", "bK", "rK"]],
                 draws=["bB", "bJ"])
    do(state, 0, "discard bB")
    do(state, 1, "win")
    end = last(state, "hand_end")
    assert specials_of(end) == ["covert", "lightning"]
    # 7 points: each pays ceil(7/2) = 4, the dealer one more.
    assert end["payments"] == [-5, 9, -4]


def test_set_skips_turns_and_bars_lightning() -> None:
    # Seat 0 discards bs; seat 2 calls Set (seat 1 is skipped), discards bK;
    # play continues left of seat 2; seat 1 then wins on its first turn: no Lightning.
    state = make(
        [["rA", "rC", "rJ", "rK"], ["rs", "rs", "rs", "bJ"], ["bs", "bs", "bK", "bB"]],
        draws=["bs", "rL", "bJ"],
    )
    do(state, 0, "discard bs")
    assert state.deciding_seats() == (2,)
    assert state.legal_actions(2) == ("pass", "set bs bs")
    state.apply_actions({2: "set bs bs"})
    assert last(state, "claim") == {"seat": 2, "call": "set", "card": "bs", "source": 0,
                                    "cards": ["bs", "bs"]}
    assert observe(state, 2)["phase"] == "claim_discard"
    assert state.legal_actions(2) == ("discard bB", "discard bK")
    do(state, 2, "discard bK")
    assert observe(state, 0)["exposed"] == [[], [], ["bs", "bs", "bs"]]
    do(state, 0, "discard rL")  # seat 0 plays next: seat 1's turn was skipped
    do(state, 1, "win")
    end = last(state, "hand_end")
    assert specials_of(end) == ["covert"]
    assert end["payments"] == [-2, 3, -1]


def test_covert_only_without_calls_and_royals_barred_after_a_call() -> None:
    # Seat 1 runs on bJ (J-K-L exposed), later holds J-J-K-K-L: no Royals for a caller.
    state = make([["rA", "rC", "rs", "bs"], ["bJ", "bK", "bL", "rs"]],
                 draws=["bJ", "rK", "bK"])
    do(state, 0, "discard bJ")
    assert state.legal_actions(1) == ("pass", "run bK bL")
    state.apply_actions({1: "run bK bL"})
    assert observe(state, 1)["exposed"][1] == ["bJ", "bK", "bL"]
    do(state, 1, "discard rs")
    do(state, 0, "discard rK")
    pass_windows(state)
    legal = state.legal_actions(1)
    assert "win" not in legal
    assert not any(a.startswith("go") for a in legal)  # no Go after one's own Run/Set
    assert observe(state, 1)["hand"] == ["bJ", "bK"]


def test_caller_wins_without_covert() -> None:
    state = make(
        [["rA", "rC", "rJ", "rK"], ["rs", "rs", "rA", "bJ"], ["bs", "bs", "bK", "bB"]],
        draws=["bs", "rL", "rK", "bB"],
    )
    do(state, 0, "discard bs")
    state.apply_actions({2: "set bs bs"})
    do(state, 2, "discard bK")
    do(state, 0, "discard rL")
    do(state, 1, "discard rK")
    do(state, 2, "win")  # bs bs bs + bB bB: a Flush, and Hawkeye (bB)
    end = last(state, "hand_end")
    assert specials_of(end) == ["flush", "hawkeye"]
    assert end["payments"] == [-2, -1, 3]


def test_ambush_self_draw_of_the_last_card() -> None:
    state = make([["bA", "bC", "bJ", "bL"], ["rs", "rs", "rs", "rJ"]], tail=["rJ"])
    for _ in range(11):
        tsumogiri(state, 0)
        tsumogiri(state, 1)
    tsumogiri(state, 0)
    pass_windows(state)
    assert observe(state, 1)["deck_size"] == 0
    do(state, 1, "win")
    end = last(state, "hand_end")
    assert specials_of(end) == ["covert", "flush", "ambush"]
    assert end["payments"] == [-4, 4]


def test_ambush_catch_of_the_last_discard() -> None:
    # Seat 0 waits on rs with no Go and no card special: it may Catch rs only
    # when it is the deal's last discard.
    state = make([["bK", "bK", "rs", "rs"], ["bA", "bC", "bJ", "bL"]],
                 draws=["rJ", "rs", "bB", "rs"], tail=["rs"])
    do(state, 0, "discard rJ")
    pass_windows(state)
    do(state, 1, "discard rs")
    assert state.legal_actions(0) == ("pass", "set rs rs")  # no Catch: no points
    state.apply_actions({0: "pass"})
    for _ in range(10):
        tsumogiri(state, 0)
        tsumogiri(state, 1)
    tsumogiri(state, 0)
    tsumogiri(state, 1)
    assert observe(state, 0)["deck_size"] == 0
    assert state.legal_actions(0) == ("pass", "catch", "set rs rs")
    state.apply_actions({0: "catch"})
    end = last(state, "hand_end")
    assert last(state, "win") == {"seat": 0, "how": "catch", "card": "rs", "source": 1}
    assert specials_of(end) == ["ambush"]
    assert end["points"] == {"go": 0, "specials": 1, "dealer": 1, "total": 2}
    assert end["payments"] == [2, -2]


# -- Go ----------------------------------------------------------------------------------


def test_go_offer_cost_and_lock() -> None:
    state = make([["bs", "bs", "bs", "bJ"], ["rA", "rC", "rJ", "rL"]],
                 draws=["rK", "bB", "bK"])
    legal = state.legal_actions(0)
    # The drawn card first (the default), then the other discards, then the Go discards.
    assert legal == ("discard rK", "discard bs", "discard bJ",
                     "go discard bJ", "go discard rK")
    do(state, 0, "go discard rK")
    assert state.chips == [29, 30] and state.pot == 1
    assert last(state, "discard") == {"seat": 0, "card": "rK", "go": True}
    obs = observe(state, 1)
    assert obs["go"] == [True, False] and obs["pot"] == 1
    tsumogiri(state, 1)
    assert state.legal_actions(0) == ("discard bK",)  # locked: only the drawn card
    do(state, 0, "discard bK")
    assert observe(state, 0)["hand"] == ["bs", "bs", "bs", "bJ"]


def test_no_go_when_not_one_card_away() -> None:
    state = make([["bA", "rC", "rs", "bL"], ["rs", "rs", "rJ", "rJ"]], draws=["bK"])
    assert state.legal_actions(0) == ("discard bK", "discard bA", "discard bL", "discard rs",
                                      "discard rC")


def test_run_and_set_barred_after_go() -> None:
    state = make([["bA", "bC", "rs", "bL"], ["rs", "rs", "rJ", "rJ"]],
                 draws=["bK", "bs", "rs"])
    do(state, 0, "discard bK")
    do(state, 1, "go discard bs")  # keeps rs rs rJ rJ
    assert state.deciding_seats() == (0,)
    do(state, 0, "discard rs")
    # Go: Catch (Go point) but no Set on rs.
    assert state.legal_actions(1) == ("pass", "catch")


# -- claim windows: priority and simultaneity -----------------------------------------


def _catch_vs_set() -> RummyFiveState:
    state = make(
        [["rA", "rC", "rL", "bL"], ["bs", "bs", "rJ", "rK"], ["bA", "bB", "bC", "bs"]],
        draws=["bs"],
    )
    do(state, 0, "discard bs")
    return state


def test_simultaneous_window_catch_beats_set() -> None:
    state = _catch_vs_set()
    assert state.deciding_seats() == (1, 2)
    assert state.legal_actions(1) == ("pass", "set bs bs")
    assert state.legal_actions(2) == ("pass", "catch")  # Flush: a Catch needs no Go
    before = len(state.events)
    obs1 = observe(state, 1)
    assert obs1["phase"] == "claim" and obs1["last_discard"] == {"seat": 0, "card": "bs"}
    state.apply_actions({1: "set bs bs", 2: "catch"})
    new = state.events[before:]
    assert [e.kind for e in new][:2] == ["win", "hand_end"]
    # The losing Set call is never announced.
    assert not any(e.kind == "claim" for e in new)
    end = last(state, "hand_end")
    assert end["winner"] == 2 and specials_of(end) == ["flush"]
    assert end["payments"] == [-2, 0, 2]  # discarder pays 1, +1 as the dealer


def test_simultaneous_window_is_atomic_and_set_wins_when_catch_passes() -> None:
    state = _catch_vs_set()
    before = copy.deepcopy(state.events)
    with pytest.raises(IllegalActionError):
        state.apply_actions({1: "set bs bs"})  # every deciding seat must answer
    with pytest.raises(IllegalActionError):
        state.apply_actions({1: "set bs bs", 2: "run bA bB"})
    assert state.events == before and state.deciding_seats() == (1, 2)
    # A claimant's observation does not depend on what the other decides.
    assert observe(state, 2) == observe(state, 2)
    state.apply_actions({1: "set bs bs", 2: "pass"})
    assert last(state, "claim")["seat"] == 1
    assert observe(state, 2)["catch_barred"] == ["bs"]  # passed a possible Catch


def test_nearest_catch_clockwise_from_the_discarder() -> None:
    # 4 players; seat 2 discards bA; seats 3 and 1 can both Catch (Hawkeye +
    # Maneuver); seat 3 is nearer clockwise from seat 2.
    state = make(
        [["rs", "rs", "bs", "rL"], ["bB", "bC", "rJ", "rJ"], ["bs", "bs", "rC", "bL"],
         ["bB", "bC", "rK", "rK"]],
        draws=["rA", "bJ", "bA"],
    )
    do(state, 0, "discard rA")
    do(state, 1, "discard bJ")
    do(state, 2, "discard bA")
    assert state.deciding_seats() == (3, 1)
    assert state.legal_actions(1) == ("pass", "catch")  # no Run: not the next seat
    state.apply_actions({3: "catch", 1: "catch"})
    end = last(state, "hand_end")
    assert end["winner"] == 3 and specials_of(end) == ["maneuver", "hawkeye"]
    assert end["payments"] == [-1, 0, -2, 3]


def test_nearest_catch_and_catch_over_run() -> None:
    hands = [["rs", "rs", "bs", "bL"], ["bB", "bC", "rJ", "rJ"], ["bB", "bC", "rK", "rK"]]
    state = make(hands, draws=["bA"])
    do(state, 0, "discard bA")
    assert state.legal_actions(1) == ("pass", "catch", "run bB bC")
    assert state.legal_actions(2) == ("pass", "catch")
    state.apply_actions({1: "catch", 2: "catch"})
    assert last(state, "hand_end")["winner"] == 1
    state = make(hands, draws=["bA"])
    do(state, 0, "discard bA")
    state.apply_actions({1: "run bB bC", 2: "catch"})
    assert last(state, "hand_end")["winner"] == 2


def test_nearest_set_wins_and_run_only_for_the_next_seat() -> None:
    state = make([["rA", "rC", "rJ", "rL"], ["bs", "bs", "bK", "rK"], ["bs", "bs", "rB", "bJ"]],
                 draws=["bs"])
    do(state, 0, "discard bs")
    assert state.deciding_seats() == (1, 2)
    state.apply_actions({1: "set bs bs", 2: "set bs bs"})
    assert last(state, "claim")["seat"] == 1
    # Only the next seat may Run: seat 2 holds bB bC but seat 1 is next to seat 0.
    state = make([["rs", "rC", "rJ", "rL"], ["bs", "bK", "rK", "rB"], ["bB", "bC", "rs", "bJ"]],
                 draws=["bA"])
    do(state, 0, "discard bA")
    assert state.deciding_seats() == (1,)  # straight to seat 1's turn: nobody may claim
    assert observe(state, 1)["phase"] == "turn"


# -- Catch restrictions ----------------------------------------------------------------


def test_no_catch_of_a_kind_discarded_earlier() -> None:
    state = make([["bA", "bC", "bJ", "bL"], ["bK", "bK", "rs", "rs"]],
                 draws=["bB", "rs", "rs"])
    do(state, 0, "discard bB")
    do(state, 1, "go discard rs")  # keeps bK bK rs rs, waiting on rs
    do(state, 0, "discard rs")
    # Seat 1 has Go and rs completes it, but it discarded rs itself: not asked.
    assert state.deciding_seats() == (1,)
    assert observe(state, 1)["phase"] == "turn"
    assert "rs" in observe(state, 1)["catch_barred"]


def test_passed_catch_is_barred_until_the_end_of_own_next_turn() -> None:
    state = make(
        [["bA", "bC", "bJ", "bL"], ["bK", "bK", "rs", "rs"], ["rA", "rC", "rJ", "rL"]],
        draws=["rB", "bB", "rs", "rs", "bJ", "rs"],
    )
    do(state, 0, "discard rB")
    do(state, 1, "go discard bB")
    do(state, 2, "discard rs")
    assert state.legal_actions(1) == ("pass", "catch")
    state.apply_actions({1: "pass"})
    assert observe(state, 1)["catch_barred"] == ["bB", "rs"]
    do(state, 0, "discard rs")
    assert state.deciding_seats() == (1,)  # barred: not asked
    do(state, 1, "discard bJ")  # its own next turn ends
    assert observe(state, 1)["catch_barred"] == ["bB", "bJ"]
    do(state, 2, "discard rs")
    assert state.legal_actions(1) == ("pass", "catch")
    state.apply_actions({1: "catch"})
    end = last(state, "hand_end")
    assert end["points"] == {"go": 1, "specials": 0, "dealer": 0, "total": 1}
    assert end["payments"] == [-1, 3, -1]  # pot 1 + discarder 1 + dealer 1


def test_no_catch_without_a_point() -> None:
    state = make([["bA", "bC", "bJ", "bL"], ["bK", "bK", "rs", "rs"]], draws=["rs"])
    do(state, 0, "discard rs")
    assert state.legal_actions(1) == ("pass", "set rs rs")


# -- draws, dealer, game end ------------------------------------------------------------


def test_deal_ends_in_a_draw_and_the_pot_carries_over() -> None:
    # Seat 0 calls Go (one card away, exempt); seat 1 is not one card away and pays.
    state = make([["bs", "bs", "bs", "bJ"], ["rA", "rC", "rJ", "bL"]], draws=["rK"],
                 tail=["bJ"])
    do(state, 0, "go discard rK")
    for _ in range(11):
        tsumogiri(state, 1)
        tsumogiri(state, 0)
    tsumogiri(state, 1)
    pass_windows(state)
    end = last(state, "hand_end")
    assert (end["result"], end["reason"], end["winner"]) == ("draw", "deck", None)
    assert end["one_away"] == [True, False]
    assert end["payments"] == [0, -1] and end["pot"] == 2
    start = last(state, "hand_start")
    assert start == {"deal": 2, "dealer": 0, "dealer_count": 2, "chips": [29, 29], "pot": 2,
                     "deck_size": 24}


def test_one_card_away_counts_seen_copies_and_exposed_trios() -> None:
    # Seat 1 waits on rL only, and rL lies face up in seat 0's discards: still exempt.
    state = make([["rL", "bA", "bC", "rJ"], ["bs", "bs", "bs", "bL"]], draws=["rK"],
                 max_turns=2)
    do(state, 0, "discard rL")
    tsumogiri(state, 1)
    end = last(state, "hand_end")
    assert end["reason"] == "turn_cap" and end["one_away"] == [False, True]
    assert end["payments"] == [-1, 0]


def test_turn_cap_ends_the_deal_as_a_draw() -> None:
    game = RummyFive(3, {"max_turns": 2, "deals": 2})
    state = game.new_state(5)
    for _ in range(2):
        seat = state.deciding_seats()[0]
        tsumogiri(state, seat)
    pass_windows(state)
    end = events(state, "hand_end")[0]
    assert end["reason"] == "turn_cap" and end["result"] == "draw"
    assert sum(end["payments"]) == -end["pot"]


def test_dealer_points_accumulate_over_a_streak() -> None:
    # Deal 1: the dealer wins (count 1 -> 2).  Deal 2 is shuffled: find a seed where
    # a passive opponent lets the dealer win it, and check 2 dealer points.
    hands = [["bs", "bs", "bs", "bJ"], ["rA", "rC", "rJ", "rL"]]
    for seed in range(300):
        state = RummyFive(2, {"deck": stacked(hands, ["bB", "bK", "bJ"])}).new_state(seed)
        do(state, 0, "discard bB")
        do(state, 1, "discard bK")
        do(state, 0, "win")
        assert last(state, "hand_end")["points"]["dealer"] == 1
        assert state.dealer_count == 2
        while len(events(state, "hand_end")) == 1:
            seat = state.deciding_seats()[0]
            legal = state.legal_actions(seat)
            if seat == 0 and legal[0] == "win":
                state.apply_action("win")
            elif observe(state, 0)["phase"] == "claim":
                state.apply_actions({s: "pass" for s in state.deciding_seats()})
            else:
                state.apply_action(legal[1] if legal[0] == "win" else legal[0])
        end = last(state, "hand_end")
        if end["winner"] == 0:
            assert end["points"]["dealer"] == 2
            assert last(state, "hand_start")["dealer_count"] == 3
            return
    pytest.fail("no seed gave the dealer a second win")


def test_dealer_passes_left_after_a_loss_and_the_count_restarts() -> None:
    state = make([["rA", "rC", "rJ", "rL"], ["bs", "bs", "bs", "bJ"]], draws=["bB", "bJ"])
    do(state, 0, "discard bB")
    do(state, 1, "win")
    start = last(state, "hand_start")
    assert (start["dealer"], start["dealer_count"]) == (1, 1)
    assert observe(state, 1)["to_move"] == [1]  # the new dealer plays first


def test_game_ends_when_a_player_runs_out_of_chips() -> None:
    game = RummyFive(2, {"chips": 1, "max_turns": 1, "deals": 5})
    state = game.new_state(1)
    while not state.is_terminal():
        seats = state.deciding_seats()
        state.apply_actions({s: state.legal_actions(s)[0] for s in seats})
    assert min(state.chips) <= 0
    assert events(state, "game_end")[0]["deals_played"] == len(events(state, "hand_end")) < 5


@pytest.mark.parametrize(("players", "deals", "expected"), [(2, 0, 4), (3, 0, 6), (4, 0, 8),
                                                           (2, 3, 3)])
def test_deals_option(players: int, deals: int, expected: int) -> None:
    options = {"max_turns": 1, "deals": deals} if deals else {"max_turns": 1}
    state = RummyFive(players, options).new_state(2)
    assert make_game("rummy-five", players, options).options == state.game.options
    random_playout(state, random.Random(0))
    assert state.deal_no == expected == len(events(state, "hand_end"))
    assert state.reveal()["deals_played"] == expected


def test_chips_option_and_scores() -> None:
    state = RummyFive(3, {"chips": 7, "deals": 1}).new_state(3)
    assert observe(state, 0)["chips"] == [7, 7, 7]
    with pytest.raises(GameNotOverError):
        state.scores()
    random_playout(state, random.Random(1))
    assert sum(state.scores()) + state.pot == 21
    assert state.places() == [1 + sum(o > s for o in state.scores()) for s in state.scores()]


@pytest.mark.parametrize("options", [
    {"deals": -1}, {"chips": 0}, {"max_turns": 0}, {"colour": "red"}, {"deals": "many"},
    {"deck": ["bs"] * 32},
])
def test_invalid_options(options: dict[str, Any]) -> None:
    with pytest.raises(OptionError):
        make_game("rummy-five", 2, options)


@pytest.mark.parametrize("players", [1, 5])
def test_player_count(players: int) -> None:
    with pytest.raises(OptionError):
        make_game("rummy-five", players)


# -- observation and events -----------------------------------------------------------


def test_observation_fields_and_serialisable() -> None:
    state = make([["bs", "bs", "bs", "bJ"], ["rA", "rC", "rJ", "rL"]], draws=["rK"])
    obs = observe(state, 0)
    assert obs["seat"] == 0 and obs["phase"] == "turn" and obs["hand"] == [
        "bs", "bs", "bs", "bJ", "rK"]
    assert obs["drawn"] == "rK" and observe(state, 1)["drawn"] is None
    assert obs["hand_sizes"] == [5, 4] and obs["deck_size"] == 23
    assert obs["deals"] == 4 and obs["dealer"] == 0 and obs["dealer_count"] == 1
    assert obs["turn_number"] == 1 and obs["turns_by_seat"] == [1, 0]
    assert observe(state, 1)["hand"] == ["rA", "rC", "rJ", "rL"]
    raw = state.observation(0)
    assert msgpack.unpackb(msgpack.packb(raw)) == obs
    for value in raw.values():
        assert not isinstance(value, (set, frozenset))


def test_observation_envelope_and_spectator_view() -> None:
    state = make([["bs", "bs", "bs", "bJ"], ["rA", "rC", "rJ", "rL"]], draws=["rK"])
    obs = observe(state, 1)
    assert (obs["game"], obs["seat"], obs["players"], obs["to_move"]) == ("rummy-five", 1, 2, [0])
    for gone in ("num_players", "turn", "turn_count", "turns_taken"):
        assert gone not in obs
    spectator = observe(state, None)
    assert spectator["seat"] is None
    assert set(obs) - set(spectator) == {"hand", "drawn", "catch_barred"}
    assert {k: v for k, v in obs.items() if k in spectator and k != "seat"} == {
        k: v for k, v in spectator.items() if k != "seat"}


def test_rules_page_lists_every_observation_field() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "rules" / "rummy-five.md").read_text()
    table = page.split("## Observation")[1].split("\n## ")[0]
    documented = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    state = make([["bs", "bs", "bs", "bJ"], ["rA", "rC", "rJ", "rL"]], draws=["rK"])
    assert documented == set(observe(state, 1))


def test_scores_are_ints() -> None:
    state = RummyFive(3, {"deals": 1}).new_state(4)
    random_playout(state, random.Random(4))
    assert all(type(score) is int for score in state.scores())


def test_draw_events_show_the_card_to_the_drawer_only() -> None:
    state = make([["bs", "bs", "bs", "bJ"], ["rA", "rC", "rJ", "rL"]], draws=["rK"])
    draws = [e for e in state.events if e.kind == "draw"]
    assert [e.to for e in draws] == [(1,), (0,)]
    assert "card" not in draws[0].data and draws[1].data["card"] == "rK"
    deals = [e for e in state.events if e.kind == "deal"]
    assert [(e.to, e.data["cards"]) for e in deals] == [
        ((0,), ["bs", "bs", "bs", "bJ"]), ((1,), ["rA", "rC", "rJ", "rL"])]


# -- property tests ----------------------------------------------------------------------

REVEALING = ("win", "hand_end")


def _counts(value: object) -> Counter[str]:
    return Counter(s for s in visible_strings(value) if s in CARD_NAMES)


def _table(state: RummyFiveState) -> Counter[str]:
    """Every card not in the stock (what a revealing event may show)."""
    census = state.card_census()
    return Counter(c for place, cs in census.items() if place != "deck" for c in cs)


def _known(state: RummyFiveState, seat: int) -> Counter[str]:
    """What a seat may know: its own hand and every face-up card."""
    census = state.card_census()
    return Counter(c for place, cs in census.items()
                   if place == f"hand {seat}" or place.startswith(("discards", "exposed"))
                   for c in cs)


def _check_event(state: RummyFiveState, event: Event) -> None:
    for seat in range(state.num_players):
        if event.visible_to(seat):
            limit = _table(state) if event.kind in REVEALING else _known(state, seat)
            shown = _counts(dict(event.data))
            assert shown <= limit, (seat, event, shown - limit)


class CheckedEvents(list[Event]):
    """The state's event list, checking each event against what every seat may
    know at the instant it is recorded."""

    def __init__(self, state: RummyFiveState) -> None:
        super().__init__(state.events)
        self.state = state

    def append(self, event: Event) -> None:
        _check_event(self.state, event)
        super().append(event)

    def __iadd__(self, events: Iterable[Event]) -> CheckedEvents:  # type: ignore[override,misc]
        for event in events:
            self.append(event)
        return self


def _check_step(state: RummyFiveState, chips: int) -> None:
    n = state.num_players
    census = state.card_census()
    assert Counter(c for cs in census.values() for c in cs) == Counter(DECK)
    assert sum(state.chips) + state.pot == n * chips
    for seat in range(n):
        obs = observe(state, seat)
        assert obs["hand"] == census[f"hand {seat}"]
        assert obs["discards"] == [census[f"discards {s}"] for s in range(n)]
        assert obs["exposed"] == [census[f"exposed {s}"] for s in range(n)]
        known = _table(state) if state.is_terminal() else _known(state, seat)
        references = ("drawn", "last_discard", "catch_barred")
        main = {k: v for k, v in obs.items() if k not in references}
        assert _counts(main) <= known
        for key in references:
            assert all(known[c] for c in _counts(obs[key]))
    for seat in state.deciding_seats():
        legal = state.legal_actions(seat)
        assert legal and len(set(legal)) == len(legal)
        assert legal[0] in ("pass", "win") or legal[0].startswith("discard")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), deals=st.integers(0, 3),
       chips=st.integers(1, 30), max_turns=st.sampled_from([1, 3, 10, 400]))
def test_random_playouts(seed: int, players: int, deals: int, chips: int,
                         max_turns: int) -> None:
    game = RummyFive(players, {"deals": deals, "chips": chips, "max_turns": max_turns})
    state = game.new_state(seed)
    for event in state.events:
        _check_event(state, event)
    state.events = CheckedEvents(state)
    _check_step(state, chips)
    random_playout(state, random.Random(seed),
                   check=lambda s: _check_step(cast(RummyFiveState, s), chips))
    assert state.is_terminal() and state.deciding_seats() == ()
    assert state.deal_no <= (deals or 2 * players)
    assert state.deal_no == (deals or 2 * players) or min(state.chips) <= 0
    assert sum(state.scores()) + state.pot == players * chips
    hand_ends = [e.data for e in state.events if e.kind == "hand_end"]
    for end in hand_ends:
        if end["result"] == "win":
            assert end["points"]["go"] + end["points"]["specials"] >= 1
            assert sum(end["payments"]) == end["pot_won"]
        else:
            assert all(p in (0, -1) for p in end["payments"])


def _hidden_shuffled(state: RummyFiveState, seat: int, rng: random.Random) -> RummyFiveState:
    """A copy where every card ``seat`` cannot see is redealt among the same places."""
    other = state.clone()
    places = [other.deck] + [other.hands[s] for s in range(state.num_players) if s != seat]
    pool = [k for place in places for k in place]
    rng.shuffle(pool)
    for place in places:
        size = len(place)
        place[:] = pool[:size]
        del pool[:size]
    for s in range(state.num_players):
        if s != seat:
            other.hands[s].sort()
    return other


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4))
def test_observation_independent_of_hidden_cards(seed: int, players: int) -> None:
    state = RummyFive(players).new_state(seed)
    rng = random.Random(seed)
    while not state.is_terminal():
        for seat in state.deciding_seats():
            twin = _hidden_shuffled(state, seat, rng)
            assert observe(twin, seat) == observe(state, seat)
            assert twin.legal_actions(seat) == state.legal_actions(seat)
        seats = state.deciding_seats()
        state.apply_actions({s: rng.choice(state.legal_actions(s)) for s in seats})


def _record(seed: int, players: int, options: dict[str, Any]) -> tuple[Any, ...]:
    state = make_game("rummy-five", players, options).new_state(seed)
    rng = random.Random(seed * 7 + 1)
    actions = []
    while not state.is_terminal():
        seats = state.deciding_seats()
        chosen = {s: rng.choice(state.legal_actions(s)) for s in seats}
        actions.append(chosen)
        state.apply_actions(chosen)
    return ([e.to_dict() for e in state.events], state.scores(), state.reveal(), actions)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4))
def test_determinism(seed: int, players: int) -> None:
    options = {"deals": 2}
    first = _record(seed, players, options)
    assert _record(seed, players, options) == first
    # Replaying the action log alone reproduces the game.
    state = make_game("rummy-five", players, options).new_state(seed)
    for chosen in first[3]:
        state.apply_actions(chosen)
    assert [e.to_dict() for e in state.events] == first[0]
    assert state.scores() == first[1]


def test_reveal_after_the_game() -> None:
    state = RummyFive(2, {"deals": 1}).new_state(9)
    random_playout(state, random.Random(9))
    reveal = state.reveal()
    end = last(state, "hand_end")
    assert reveal["hands"] == end["hands"] and reveal["chips"] == state.chips
    assert last(state, "game_end")["chips"] == state.chips


def test_rules_page_example_is_real() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "rules" / "rummy-five.md").read_text()
    request = json.loads(page.split("```json\n")[1].split("```")[0])
    state = make([["rA", "rC", "rJ", "rL"], ["bs", "bs", "bJ", "bJ"], ["bA", "bB", "rs", "rK"]],
                 draws=["bs"])
    do(state, 0, "discard bs")
    assert request["observation"] == observe(state, 1)
    assert tuple(request["legal"]) == state.legal_actions(1)
    assert request["events"] == [e.to_dict() for e in state.events if e.visible_to(1)]
    state.apply_actions({1: request["legal"][1]})
    end = last(state, "hand_end")
    assert specials_of(end) == ["flush"] and end["payments"] == [-2, 2, 0]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 4))
def test_public_decisions_of_a_window_are_the_announced_claim(seed: int, n: int) -> None:
    """Of a claim window only the claim the engine announces is public; every
    other step is public as it is."""
    rng = random.Random(seed)
    state = RummyFive(n, {"deals": 2}).new_state(seed)
    while not state.is_terminal():
        window = state.phase == CLAIM
        step = [(s, rng.choice(state.legal_actions(s))) for s in state.deciding_seats()]
        before = len(state.events)
        state.apply_actions(dict(step))
        public = RummyFive.public_decisions([list(d) for d in step])
        if not window:
            assert public == step
            continue
        announced = [(e.data["seat"], e.kind) for e in state.events[before:]
                     if e.kind == "claim" or (e.kind == "win" and e.data["how"] == "catch")]
        assert [(s, "claim" if a != "catch" else "win") for s, a in public] == announced


def test_a_claim_window_keeps_private_who_else_is_asked() -> None:
    """A window asks only seats able to claim: each asked seat sees only itself in
    ``to_move``, a spectator no one (being asked tells what a hand holds)."""
    windows = 0
    for seed in range(40):
        state, rng = make_game("rummy-five", 4).new_state(seed), random.Random(seed)
        while not state.is_terminal():
            deciding = state.deciding_seats()
            if state.observation(None)["phase"] == "claim":
                windows += len(deciding) > 1
                assert state.observation(None)["to_move"] == []
                for seat in range(4):
                    seen = state.observation(seat)["to_move"]
                    assert seen == ([seat] if seat in deciding else [])
            else:
                assert state.observation(None)["to_move"] == list(deciding)
            state.apply_actions({s: rng.choice(state.legal_actions(s)) for s in deciding})
    assert windows > 0  # some windows asked several seats at once


def test_kept_waits_are_one_card_away_whenever_a_seat_holds_four() -> None:
    """A drawn deal's ``one_away`` reads the waits each state keeps: they must be
    what one_card_away computes for every seat holding four cards."""
    draws = 0
    for seed in range(30):
        state = cast(RummyFiveState, make_game("rummy-five", 2 + seed % 3).new_state(seed))
        rng = random.Random(seed)
        while not state.is_terminal():
            holding = len(state.events)
            for seat in range(state.num_players):
                if seat != state.current or state.phase == CLAIM:
                    assert bool(state.waits[seat][0]) == state.one_card_away(seat)
            step = {s: rng.choice(state.legal_actions(s)) for s in state.deciding_seats()}
            state.apply_actions(step)
            draws += any(e.kind == "hand_end" and e.data["result"] == "draw"
                         for e in state.events[holding:])
    assert draws > 0
