"""Tests of the five engine: rulebook examples, one table per rule, properties."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import make_game
from arena.games.base import GameNotOverError, IllegalActionError, OptionError, State
from arena.games.cards import RANK_ORDINAL, canonical, deal, standard_deck
from arena.games.five import (
    CALL_PENALTY,
    POINTS,
    Five,
    FiveState,
    _group_drops,
    drop_actions,
    hand_scores,
    hand_total,
)
from tests.games.pages import assert_example_is_engine_output, numbers, sent
from tests.playout import random_playout, visible_strings

# -- helpers -----------------------------------------------------------------


def stacked_deck(
    hands: Sequence[Sequence[str]],
    up: str,
    top: Sequence[str] = (),
    jokers: bool = False,
) -> list[str]:
    """A first-hand deck dealing ``hands`` (seat 0 first), turning ``up`` and
    putting ``top`` (top card first) on the deck; the other cards follow."""
    out = [hand[i] for i in range(5) for hand in hands]
    out += [up, *top]
    rest = Counter(standard_deck(2 if jokers else 0)) - Counter(out)
    return out + sorted(rest.elements())


def new_game(
    hands: Sequence[Sequence[str]],
    up: str,
    top: Sequence[str] = (),
    seed: int = 0,
    **options: Any,
) -> FiveState:
    deck = stacked_deck(hands, up, top, bool(options.get("jokers", False)))
    game = make_game("five", len(hands), {"deck": deck, **options})
    state = game.new_state(seed)
    assert isinstance(state, FiveState)
    return state


def play(state: FiveState, *actions: str) -> None:
    for action in actions:
        state.apply_action(action)


def events_of(state: FiveState, kind: str) -> list[dict[str, Any]]:
    return [e.to_dict() for e in state.events if e.kind == kind]


def last_hand_end(state: FiveState) -> dict[str, Any]:
    return events_of(state, "hand_end")[-1]


#: Copies of each card kind in the deck with jokers.
COPIES: Counter[str] = Counter(standard_deck(2))


def is_possible_hand(cards: list[str]) -> bool:
    return not Counter(cards) - COPIES


H_LOW = ["Ac", "2c", "3c", "4c", "5c"]  # 15
H_MID = ["Ad", "2d", "3d", "4d", "6d"]  # 16
H_HIGH = ["Kc", "Kd", "Qc", "Qd", "Jc"]  # 50


# -- cards, options, setup ----------------------------------------------------


@pytest.mark.parametrize(
    ("card", "points"),
    [
        ("Ac", 1),
        ("2d", 2),
        ("5h", 5),
        ("9s", 9),
        ("Tc", 10),
        ("Jd", 10),
        ("Qh", 10),
        ("Ks", 10),
        ("X", 0),
    ],
)
def test_card_points(card: str, points: int) -> None:
    assert POINTS[card] == points


def test_hand_total_range_and_canonical_order() -> None:
    assert hand_total(["Kc", "Kd", "Kh", "Ks", "Qc"]) == 50
    assert hand_total(["X", "X", "Ac"]) == 1
    assert canonical(["Kc", "X", "As", "Ac", "Td"]) == ["X", "Ac", "As", "Td", "Kc"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"jokers": "maybe"}, "jokers"),
        ({"limit": 0}, "limit"),
        ({"max_hands": 0}, "max_hands"),
        ({"max_turns": 0}, "max_turns"),
        ({"colour": 1}, "colour"),
        ({"deck": standard_deck(2)}, "deck"),
        ({"deck": standard_deck(), "jokers": True}, "deck"),
        ({"deck": standard_deck()[:-1]}, "deck"),
    ],
)
def test_invalid_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        make_game("five", 2, options)


@pytest.mark.parametrize("players", [1, 7])
def test_player_count(players: int) -> None:
    with pytest.raises(OptionError):
        make_game("five", players)


def test_option_defaults_and_deck() -> None:
    game = make_game("five", 3)
    assert isinstance(game, Five)
    assert game.options["jokers"] is False
    assert game.options["limit"] == 200
    assert game.options["max_hands"] == 200
    assert game.options["max_turns"] == 400
    assert sorted(game.deck()) == sorted(standard_deck())
    jokers = make_game("five", 3, {"jokers": "true", "deck": standard_deck(2)})
    assert Counter(jokers.deck())["X"] == 2
    assert isinstance(jokers, Five)
    state = jokers.new_state(0)
    assert sum(len(cards) for cards in state.zones().values()) == 54


def test_deal_from_stacked_deck() -> None:
    state = new_game([H_LOW, H_MID, H_HIGH], "9h", top=["8h", "7h"])
    assert state.hands == [H_LOW, H_MID, canonical(H_HIGH)]
    assert state.discard == ["9h"]
    assert state.deck[-2:] == ["7h", "8h"]
    assert len(state.deck) == 52 - 15 - 1
    assert state.deciding_seats() == (0,)
    start = events_of(state, "hand_start")[0]
    assert start["up_card"] == "9h" and start["first_player"] == 0
    deals = events_of(state, "deal")
    assert [(d["seat"], d["to"], d["cards"]) for d in deals] == [
        (seat, [seat], state.hands[seat]) for seat in range(3)
    ]
    play(state, "drop 5c")
    assert state.hands[0] == ["Ac", "2c", "3c", "4c", "8h"]


@pytest.mark.parametrize("players", [2, 3, 6])
def test_deal_matches_shared_deal_helper(players: int) -> None:
    game = make_game("five", players)
    deck = random.Random(players).sample(game.deck(), 52)
    state = Five(players, {"deck": deck}).new_state(0)
    assert isinstance(state, FiveState)
    hands, rest = deal(deck, players, 5, 0)
    assert state.hands == [canonical(h) for h in hands]
    assert state.discard == [rest[-1]]
    assert state.deck == rest[:-1]


# -- legality of each action type ---------------------------------------------


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        (["2c", "5d", "9h", "Jc", "Ks"], ["drop Ks", "drop Jc", "drop 9h", "drop 5d", "drop 2c"]),
        (["5c", "5d", "Kh"], ["drop 5c 5d", "drop 5d 5c", "drop Kh", "drop 5c", "drop 5d"]),
        (["X", "X", "Ac"], ["drop Ac", "drop X X", "drop X"]),
        (["4c", "4d", "4h", "4s", "Ah"], None),
    ],
)
def test_drop_actions(hand: list[str], expected: list[str] | None) -> None:
    actions = drop_actions(hand)
    assert len(set(actions)) == len(actions)
    if expected is not None:
        assert actions == expected
    else:
        # Four of a rank: 4 singles, 6 pairs x 2 tops, 4 trips x 3, 1 quad x 4; plus the ace.
        assert len(actions) == 4 + 12 + 12 + 4 + 1
        assert actions[0] == "drop 4c 4d 4h 4s"
        assert "drop 4c 4d 4s 4h" in actions


@settings(max_examples=200, deadline=None)
@given(
    hand=st.lists(st.sampled_from(sorted(POINTS)), min_size=1, max_size=5).filter(is_possible_hand)
)
def test_drop_actions_match_their_definition(hand: list[str]) -> None:
    hand = canonical(hand)
    actions = drop_actions(hand)
    # The documented order, computed from each rank group's drops the slow way.
    groups = [tuple(cards) for _, cards in itertools.groupby(hand, key=lambda card: card[0])]
    expected = sorted((a for group in groups for a in _group_drops(group)), key=lambda a: (
        -hand_total(a.split()[1:]), -len(a.split()), -RANK_ORDINAL.get(a[5], 0), a))
    assert actions == expected
    assert len(set(actions)) == len(actions)
    for action in actions:
        cards = action.split()[1:]
        assert len({c[0] for c in cards}) == 1 and 1 <= len(cards) <= 4
        assert cards[:-1] == canonical(cards[:-1])
        assert not Counter(cards) - Counter(hand)


def test_turn_start_and_after_take_legal_actions() -> None:
    state = new_game([["2c", "5d", "5h", "Jc", "Ks"], H_MID], "9h")
    legal = state.legal_actions(0)
    assert legal[0] == "drop 5d 5h"  # the most points removed: the default
    assert legal[-2:] == ("take", "end")
    assert state.legal_actions(1) == ()
    play(state, "take")
    assert state.phase == "drop"
    after = state.legal_actions(0)
    assert "take" not in after and "end" not in after
    assert after == legal[:-2]


@pytest.mark.parametrize(
    "action",
    ["drop 5d Jc", "drop 7c", "drop 5d 5h 5s", "drop", "draw deck", "drop 5D", "END"],
)
def test_illegal_actions(action: str) -> None:
    state = new_game([["2c", "5d", "5h", "Jc", "Ks"], H_MID], "9h")
    with pytest.raises(IllegalActionError):
        state.apply_action(action)
    with pytest.raises(IllegalActionError):
        state.apply_actions({1: "end"})


def test_no_end_or_second_take_after_take_and_taken_card_not_droppable() -> None:
    state = new_game([["2c", "5d", "5h", "Jc", "Ks"], H_MID], "5c")
    play(state, "take")
    for action in ("end", "take", "drop 5c", "drop 5c 5d"):
        with pytest.raises(IllegalActionError):
            state.apply_action(action)
    play(state, "drop 5d 5h")
    assert state.hands[0] == ["2c", "5c", "Jc", "Ks"]
    assert state.discard == ["5d", "5h"]
    assert state.taken is None


def test_multi_drop_last_listed_card_is_on_top() -> None:
    state = new_game([["2c", "5d", "5h", "Jc", "Ks"], H_MID], "9h", top=["8h", "7h"])
    play(state, "drop 5h 5d")
    assert state.discard == ["9h", "5h", "5d"]
    assert state.observation(1)["top_discard"] == "5d"
    play(state, "take", "drop 6d")
    assert "5d" in state.hands[1] and "5h" not in state.hands[1]
    assert state.known[1] == ["5d"]
    assert state.discard == ["9h", "5h", "6d"]


def test_drop_without_take_draws_and_hides_the_card() -> None:
    state = new_game([H_LOW, H_MID], "9h", top=["Kh"])
    play(state, "drop 5c")
    drop = events_of(state, "drop")[-1]
    assert drop == {"kind": "drop", "seat": 0, "cards": ["5c"], "drew": True}
    drawn = events_of(state, "drawn")[-1]
    assert drawn == {"kind": "drawn", "seat": 0, "card": "Kh", "to": [0]}
    assert state.hands[0] == ["Ac", "2c", "3c", "4c", "Kh"]
    assert state.known[0] == []
    assert state.turns == 1 and state.deciding_seats() == (1,)


def test_hand_can_shrink_but_never_grow() -> None:
    state = new_game([["Kc", "Kd", "Kh", "Ks", "2c"], H_MID], "9h", top=["8h"])
    play(state, "drop Kc Kd Kh Ks")
    assert state.hands[0] == ["2c", "8h"]
    assert sent(state.observation(1))["hand_sizes"] == [2, 5]


# -- rulebook worked examples -------------------------------------------------


def test_example_drop_nine_take_king_then_drop_both_kings() -> None:
    """Rulebook: if you have a 9 and a king, it might make sense to drop the 9 and pick up
    a king, because you can get rid of both kings next turn."""
    state = new_game(
        [["2c", "3c", "4c", "9c", "Kc"], ["Kd", "Ah", "2h", "3h", "9h"]],
        "Qs",
        top=["5s", "6s", "7s"],
    )
    play(state, "drop Kc")  # seat 0 drops its king
    assert hand_total(state.hands[1]) == 25
    play(state, "take", "drop 9h")  # seat 1 drops its 9 and picks up the king
    assert state.hands[1] == ["Ah", "2h", "3h", "Kc", "Kd"]
    assert hand_total(state.hands[1]) == 26
    play(state, "drop 9c")
    play(state, "drop Kc Kd")
    assert state.hands[1] == ["Ah", "2h", "3h", "7s"]
    assert hand_total(state.hands[1]) == 13


def test_example_drop_two_twos_and_draw_a_ten() -> None:
    """Rulebook: if you drop two 2s and draw a 10 to replace them, you'll be sad."""
    state = new_game([["2c", "2h", "3c", "4c", "5c"], H_MID], "9h", top=["Th"])
    before = hand_total(state.hands[0])
    play(state, "drop 2c 2h")
    assert hand_total(state.hands[0]) == before - 4 + 10


def test_example_tie_goes_to_the_non_caller() -> None:
    """Rulebook: if you ended the hand with a score of say, 10, and somebody else also had
    a 10, they would get a zero, and you would get a 50."""
    state = new_game([["Ac", "Ad", "2c", "3c", "3d"], ["Ah", "As", "2d", "2h", "4c"], H_HIGH], "9h")
    play(state, "end")
    end = last_hand_end(state)
    assert end["hand_totals"] == [10, 10, 50]
    assert end["scores"] == [CALL_PENALTY, 0, 50]


def test_example_four_players_take_turns_starting() -> None:
    """Each of four players goes first every fourth hand."""
    state = Five(4, {"limit": 10_000}).new_state(3)
    assert isinstance(state, FiveState)
    firsts = []
    for _ in range(9):
        firsts.append(state.first_player)
        assert state.deciding_seats() == (state.first_player,)
        play(state, "end")
    assert firsts == [0, 1, 2, 3, 0, 1, 2, 3, 0]


def test_example_every_called_hand_has_a_zero_and_a_non_zero() -> None:
    for seed in range(40):
        state = Five(2 + seed % 5, {"limit": 10_000}).new_state(seed)
        rng = random.Random(seed)
        for _ in range(rng.randrange(0, 12)):
            play(state, state.legal_actions(state.to_move)[0])
        play(state, "end")
        scores = [s for s in last_hand_end(state)["scores"] if s is not None]
        assert 0 in scores and any(s != 0 for s in scores)


def test_example_deck_runs_out() -> None:
    """The top discard stays, the rest of the pile is shuffled into a new deck."""
    state = Five(2, {"limit": 10_000}).new_state(11)
    assert isinstance(state, FiveState)
    assert len(state.deck) == 41
    for _ in range(41):
        assert state.deck
        play(state, state.legal_actions(state.to_move)[0])
    reshuffles = events_of(state, "reshuffle")
    assert len(reshuffles) == 1
    assert state.discard == [reshuffles[0]["top_discard"]]
    assert state.discard[0] == events_of(state, "drop")[-1]["cards"][-1]
    in_hands = sum(len(hand) for hand in state.hands)
    assert len(state.deck) == reshuffles[0]["deck_size"] == 52 - in_hands - 1
    assert sorted(card for cards in state.zones().values() for card in cards) == sorted(
        standard_deck()
    )


# -- scoring -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("totals", "caller", "expected"),
    [
        ({0: 3, 1: 10}, 0, {0: 0, 1: 10}),  # caller strictly lowest
        ({0: 10, 1: 10}, 0, {0: 50, 1: 0}),  # tie goes to the non-caller
        ({0: 12, 1: 4, 2: 30}, 0, {0: 50, 1: 0, 2: 30}),  # caller wrong
        ({0: 12, 1: 4, 2: 4, 3: 9}, 0, {0: 50, 1: 0, 2: 0, 3: 9}),  # tied lowest non-callers
        ({0: 12, 1: 4, 2: 9}, 2, {0: 12, 1: 0, 2: 50}),  # lowest non-caller beats a caller
        ({0: 20, 1: 4, 2: 9}, 1, {0: 20, 1: 0, 2: 9}),
        ({0: 0, 1: 0}, 1, {0: 0, 1: 50}),  # jokers: 0 vs 0
        ({0: 7, 1: 3, 2: 9}, None, {0: 7, 1: 3, 2: 9}),  # no-result: totals, nobody 0
    ],
)
def test_hand_scores(totals: dict[int, int], caller: int | None, expected: dict[int, int]) -> None:
    assert hand_scores(totals, caller) == expected


@pytest.mark.parametrize(
    ("hands", "caller", "scores"),
    [
        ([H_LOW, H_MID, H_HIGH], 0, [0, 16, 50]),
        ([H_MID, H_LOW, H_HIGH], 0, [50, 0, 50]),
        ([H_HIGH, H_LOW, H_MID], 0, [50, 0, 16]),
    ],
)
def test_end_scoring_in_engine(hands: list[list[str]], caller: int, scores: list[int]) -> None:
    state = new_game(hands, "9h")
    play(state, "end")
    end = last_hand_end(state)
    assert end["result"] == "call" and end["caller"] == caller
    assert end["scores"] == scores
    assert end["hands"] == [canonical(h) for h in hands]
    assert state.totals == scores
    assert events_of(state, "end") == [{"kind": "end", "seat": 0}]
    assert state.hand_no == 2 and state.first_player == 1


def test_jokers_are_zero_and_one_rank() -> None:
    state = new_game([["X", "X", "Ac", "2c", "3c"], H_MID], "9h", jokers=True)
    assert state.legal_actions(0)[:2] == ("drop 3c", "drop 2c")
    assert "drop X X" in state.legal_actions(0)
    play(state, "end")
    assert last_hand_end(state)["hand_totals"] == [6, 16]
    assert state.totals == [0, 16]


def test_no_result_hand_at_turn_cap() -> None:
    state = new_game([H_LOW, H_MID, H_HIGH], "9h", top=["Kh", "Ah", "2h"], max_turns=3)
    play(state, "drop 5c", "drop 6d", "drop Kc Kd")
    end = last_hand_end(state)
    assert end["result"] == "no_result" and end["caller"] is None
    assert end["hand_totals"] == [20, 11, 32]
    assert end["scores"] == [20, 11, 32]
    assert state.totals == [20, 11, 32]
    assert state.turns == 0 and state.hand_no == 2


def test_end_on_last_turn_before_cap_is_a_call() -> None:
    state = new_game([H_LOW, H_MID], "9h", max_turns=2)
    play(state, "drop 5c", "end")
    end = last_hand_end(state)
    assert end["result"] == "call" and end["caller"] == 1


# -- game end and standings -----------------------------------------------------


def test_elimination_and_rotation_skip_eliminated() -> None:
    state = new_game([H_LOW, H_HIGH, H_MID], "9h", limit=50)
    play(state, "end")  # 0 lowest: [0, 50, 16]; seat 1 reaches the limit
    end = last_hand_end(state)
    assert end["eliminated"] == [1]
    assert state.eliminated == [False, True, False]
    assert state.first_player == 2 and state.order == [2, 0]
    assert state.hands[1] == [] and len(state.hands[0]) == len(state.hands[2]) == 5
    assert state.observation(0)["hand_sizes"][1] == 0
    assert len(state.deck) == 52 - 10 - 1
    play(state, "drop " + state.hands[2][-1])
    assert state.deciding_seats() == (0,)
    assert not state.is_terminal()


def test_later_elimination_ranks_higher_despite_higher_total() -> None:
    state = new_game([H_HIGH, H_LOW, H_MID], "9h", limit=50)
    play(state, "end")  # seat 0 calls wrongly: [50, 0, 16], seat 0 is out
    assert state.eliminated == [True, False, False]
    assert state.first_player == 1 and state.order == [1, 2]
    state.totals[2] = 49
    low, high = sorted((state.hands[1], state.hands[2]), key=hand_total)
    state.hands[1], state.hands[2] = low, high
    assert hand_total(low) < hand_total(high)
    play(state, "end")  # seat 1 strictly lowest: seat 2 scores its total and is out
    assert state.is_terminal()
    assert state.totals[2] > state.totals[0] >= 50
    assert state.places() == [3, 1, 2]
    assert events_of(state, "game_end")[0]["reason"] == "last_player"


def test_all_remaining_out_in_same_hand_ranked_by_total() -> None:
    state = new_game([H_MID, H_LOW, H_HIGH], "9h", limit=10)
    play(state, "end")  # [50, 0, 50]: seats 0 and 2 out with 50, seat 1 left alone
    assert state.is_terminal()
    assert state.places() == [2, 1, 2]
    assert state.scores() == [50, 0, 50]
    state = new_game([H_LOW, H_MID, H_HIGH], "9h", limit=1, max_turns=1)
    play(state, "drop 5c")  # no-result hand: everyone scores, everyone is out
    assert state.is_terminal()
    end = events_of(state, "game_end")[0]
    assert end["reason"] == "all_out"
    assert state.totals == [hand_total(state.last_hands[0]), 16, 50]
    totals = state.totals
    assert state.places() == [1 + sum(t < mine for t in totals) for mine in totals]


def test_elimination_order_standings() -> None:
    state = new_game([H_LOW, H_HIGH, H_MID, ["Ah", "2h", "3h", "4h", "7h"]], "9h", limit=50)
    play(state, "end")  # [0, 50, 16, 17]: seat 1 out in hand 1
    assert state.out_in_hand == [0, 1, 0, 0]
    state.totals = [10, 50, 45, 49]
    play(state, "end")  # hand 2: seat 2 starts and calls
    while not state.is_terminal():
        play(state, "end")
    places = state.places()
    assert places[1] == 4
    order = sorted(range(4), key=lambda s: places[s])
    for better, worse in itertools.pairwise(order):
        assert (state.out_in_hand[better] or 10**9) >= (state.out_in_hand[worse] or 10**9)


def test_max_hands_standings_by_total_remaining_first() -> None:
    state = new_game([H_LOW, H_MID, ["Ah", "2h", "3h", "4h", "7h"]], "9h", max_hands=1)
    play(state, "end")
    assert state.is_terminal()
    assert events_of(state, "game_end")[0]["reason"] == "max_hands"
    assert state.scores() == [0, 16, 17]
    assert state.places() == [1, 2, 3]
    state = new_game([H_MID, H_LOW, H_HIGH], "9h", limit=50, max_hands=1)
    play(state, "end")  # [50, 0, 50]: seats 0 and 2 out, seat 1 last one in
    assert state.places() == [2, 1, 2]
    state = new_game(
        [H_LOW, H_HIGH, H_MID, ["Ah", "2h", "3h", "4h", "6h"]], "9h", limit=40, max_hands=1
    )
    play(state, "end")  # [0, 50, 16, 16], seat 1 out; 2 and 3 share
    assert state.places() == [1, 4, 2, 2]


def test_scores_places_before_end_raise() -> None:
    state = Five(2).new_state(0)
    with pytest.raises(GameNotOverError):
        state.scores()
    with pytest.raises(GameNotOverError):
        state.places()
    assert state.reveal()["places"] is None


def test_reveal_and_game_end_event() -> None:
    state = new_game([H_LOW, H_HIGH], "9h", limit=50)
    play(state, "end")
    assert state.is_terminal() and state.deciding_seats() == ()
    reveal = state.reveal()
    assert reveal["hands"] == [H_LOW, canonical(H_HIGH)]
    assert reveal["hand_totals"] == [15, 50]
    assert reveal["totals"] == [0, 50]
    assert reveal["eliminated_in_hand"] == [None, 1]
    assert reveal["places"] == [1, 2]
    assert events_of(state, "game_end") == [
        {"kind": "game_end", "reason": "last_player", "totals": [0, 50], "places": [1, 2]}
    ]


# -- observation ----------------------------------------------------------------

OBS_KEYS = {
    "game",
    "seat",
    "players",
    "to_move",
    "phase",
    "hand",
    "hand_points",
    "taken",
    "top_discard",
    "discard",
    "deck_size",
    "hand_sizes",
    "known_cards",
    "totals",
    "eliminated",
    "in_hand",
    "hand_number",
    "first_player",
    "turn_number",
    "limit",
    "max_hands",
    "max_turns",
    "jokers",
}


def test_observation_fields() -> None:
    state = new_game([H_LOW, H_MID, H_HIGH], "9h", top=["Kh"], limit=150)
    play(state, "take", "drop 5c")
    obs = sent(state.observation(1))
    assert set(obs) == OBS_KEYS
    assert obs == {
        "game": "five",
        "seat": 1,
        "players": 3,
        "to_move": [1],
        "phase": "start",
        "hand": H_MID,
        "hand_points": 16,
        "taken": None,
        "top_discard": "5c",
        "discard": ["5c"],
        "deck_size": 36,
        "hand_sizes": [5, 5, 5],
        "known_cards": [["9h"], [], []],
        "totals": [0, 0, 0],
        "eliminated": [False, False, False],
        "in_hand": [0, 1, 2],
        "hand_number": 1,
        "first_player": 0,
        "turn_number": 1,
        "limit": 150,
        "max_hands": 200,
        "max_turns": 400,
        "jokers": False,
    }
    play(state, "take")
    obs = state.observation(1)
    assert obs["phase"] == "drop" and obs["taken"] == "5c" and obs["top_discard"] is None



def test_spectator_view() -> None:
    state = new_game([H_LOW, H_MID, H_HIGH], "9h", top=["Kh"])
    obs = state.observation(None)
    assert set(obs) == OBS_KEYS - {"hand", "hand_points"}
    assert obs["seat"] is None and obs["players"] == 3 and obs["to_move"] == [0]


def test_numbers_are_ints() -> None:
    state = make_game("five", 3, {"limit": 40}).new_state(3)
    random_playout(state, random.Random(3))
    assert all(type(score) is int for score in state.scores())
    for record in (state.observation(0), state.reveal(), *(e.to_dict() for e in state.events)):
        assert not [x for x in numbers(record) if isinstance(x, float)]


RULES_PAGE = Path(__file__).parents[2] / "docs" / "rules" / "five.md"


def test_rules_page_lists_every_observation_field() -> None:
    table = RULES_PAGE.read_text().split("## Observation", 1)[1].split("## Events", 1)[0]
    documented = {
        name
        for line in table.splitlines()
        if line.startswith("| `")
        for name in line.split("|")[1].strip().strip("`").split("`, `")
    }
    assert documented == OBS_KEYS


def test_rules_page_example_is_the_engine_output() -> None:
    """The example request of docs/rules/five.md is real engine output: seat 0
    takes, then every decision is the default."""
    state = make_game("five", 3).new_state(2024)
    assert_example_is_engine_output(
        "five", state, lambda number, _, legal: legal.index("take") if number == 1 else 0)

# -- properties ------------------------------------------------------------------

OPTIONS = st.fixed_dictionaries(
    {
        "jokers": st.booleans(),
        "limit": st.sampled_from([1, 25, 60, 200]),
        "max_hands": st.sampled_from([1, 3, 200]),
        "max_turns": st.sampled_from([1, 5, 40, 400]),
    }
)


def check_conservation(state: FiveState) -> None:
    cards = [card for zone in state.zones().values() for card in zone]
    assert Counter(cards) == Counter(state.game.deck())
    for seat, hand in enumerate(state.hands):
        assert hand == canonical(hand)
        assert len(hand) <= 5
        assert not (Counter(state.known[seat]) - Counter(hand))
        if state.eliminated[seat] and not state.is_terminal():
            assert hand == []


def check_any_conservation(state: State) -> None:
    assert isinstance(state, FiveState)
    check_conservation(state)


def check_results(state: FiveState) -> None:
    """Totals, eliminations and standings follow the rules, from the events."""
    n = state.num_players
    totals = [0] * n
    out = [0] * n
    for event in state.events:
        if event.kind != "hand_end":
            continue
        data = event.data
        playing = {s: t for s, t in enumerate(data["hand_totals"]) if t is not None}
        assert all(hand_total(data["hands"][s]) == t for s, t in playing.items())
        assert all(t <= 50 for t in playing.values())
        expected = hand_scores(playing, data["caller"])
        assert data["scores"] == [expected.get(s) for s in range(n)]
        if data["caller"] is not None:
            assert 0 in expected.values() and any(v for v in expected.values())
        for seat, score in expected.items():
            totals[seat] += score
        newly = [s for s in playing if totals[s] >= state.limit]
        assert data["eliminated"] == newly
        for seat in newly:
            out[seat] = data["hand"]
    assert totals == state.totals
    assert state.scores() == totals
    assert all(type(score) is int for score in state.scores())
    remaining = [s for s in range(n) if not out[s]]
    assert len(remaining) <= 1 or state.hand_no == state.max_hands
    places = state.places()
    key = [(-(out[s] or 10**9), totals[s]) for s in range(n)]
    for a in range(n):
        for b in range(n):
            if key[a] < key[b]:
                assert places[a] < places[b]
            elif key[a] == key[b]:
                assert places[a] == places[b]
    assert min(places) == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6), options=OPTIONS)
def test_random_playouts(seed: int, players: int, options: dict[str, Any]) -> None:
    state = Five(players, options).new_state(seed)
    assert isinstance(state, FiveState)
    check_conservation(state)
    decisions = random_playout(state, random.Random(seed), check=check_any_conservation)
    assert decisions > 0 and state.is_terminal()
    check_results(state)


class KnowledgeModel:
    """What each seat may know, tracked from the actions alone."""

    def __init__(self, state: FiveState) -> None:
        self.state = state
        self.known: list[list[str]] = [[] for _ in range(state.num_players)]
        self.hand_no = state.hand_no

    def before(self, seat: int, action: str) -> set[str]:
        """Cards the action itself makes public."""
        state = self.state
        if action == "take":
            card = state.discard[-1]
            return {card}
        if action.startswith("drop "):
            cards = action.split()[1:]
            for card in cards:
                if card in self.known[seat]:
                    self.known[seat].remove(card)
            if state.taken is not None:
                self.known[seat].append(state.taken)
            return set(cards)
        return set()

    def after(self) -> None:
        if self.state.hand_no != self.hand_no:
            self.hand_no = self.state.hand_no
            self.known = [[] for _ in range(self.state.num_players)]


def check_observation(state: FiveState, seat: int, model: KnowledgeModel) -> None:
    obs = sent(state.observation(seat))
    assert set(obs) == OBS_KEYS
    assert obs["seat"] == seat
    assert obs["hand"] == state.hands[seat]
    assert obs["discard"] == state.discard
    assert obs["taken"] == state.taken
    assert obs["known_cards"] == model.known
    assert obs["hand_sizes"] == [len(h) for h in state.hands]
    assert obs["deck_size"] == len(state.deck)
    visible: Counter[str] = Counter(obs["hand"]) + Counter(obs["discard"])
    allowed: Counter[str] = Counter(state.hands[seat]) + Counter(state.discard)
    if obs["taken"] is not None:
        visible[obs["taken"]] += 1
        allowed[state.taken or ""] += 1
    for other in range(state.num_players):
        if other != seat:
            visible += Counter(obs["known_cards"][other])
            allowed += Counter(model.known[other])
            assert not (Counter(model.known[other]) - Counter(state.hands[other]))
    assert not (visible - allowed)
    kinds = set(POINTS)
    public = set(state.hands[seat]) | set(state.discard) | {state.taken}
    public |= {card for known in model.known for card in known}
    assert {s for s in visible_strings(obs) if s in kinds} <= public


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 6),
    options=OPTIONS,
    end_rate=st.sampled_from([None, 0.0, 0.03]),
)
def test_no_leaks_in_observations_and_events(
    seed: int, players: int, options: dict[str, Any], end_rate: float | None
) -> None:
    """``end_rate`` None picks uniformly; otherwise ``end`` is that rare, so hands
    run long enough to reshuffle the deck."""
    if end_rate == 0.0:
        options = {**options, "max_turns": min(options["max_turns"], 120)}
    state = Five(players, options).new_state(seed)
    assert isinstance(state, FiveState)
    rng = random.Random(seed)
    model = KnowledgeModel(state)
    kinds = set(POINTS)
    seen = 0
    # Cards each seat saw face up or in its own hand during the current hand.
    public: set[str] = set(state.discard)
    own = [set(h) for h in state.hands]
    check_events(state, 0, own, public, kinds)
    seen = len(state.events)
    while not state.is_terminal():
        (seat,) = state.deciding_seats()
        check_observation(state, seat, model)
        for other in range(players):
            check_observation(state, other, model)
        action = choose(state.legal_actions(seat), rng, end_rate)
        public_before = public | model.before(seat, action) | set(state.discard)
        hands_before = [list(h) for h in state.hands]
        hand_before = state.hand_no
        state.apply_action(action)
        model.after()
        if state.hand_no != hand_before or state.is_terminal():
            end = next(e for e in state.events[seen:] if e.kind == "hand_end")
            revealed = end.data["hands"]
            if action == "end":
                assert revealed == hands_before
            else:
                assert [len(h) for h in revealed] == [
                    len(h) - (len(action.split()) - 1 if s == seat else 0) + (s == seat)
                    for s, h in enumerate(hands_before)
                ]
            own_old = [set(h) | set(r) for h, r in zip(hands_before, revealed, strict=True)]
            boundary = next(
                (i for i in range(seen, len(state.events)) if state.events[i].kind == "hand_start"),
                len(state.events),
            )
            check_events(
                state,
                seen,
                own_old,
                public_before | set(state.discard),
                kinds,
                stop=boundary,
                reveal=revealed,
            )
            public = set(state.discard)
            own = [set(h) for h in state.hands]
            check_events(state, boundary, own, public, kinds)
        else:
            public = public_before | set(state.discard)
            if state.taken is not None:
                public.add(state.taken)
            own = [o | set(h) for o, h in zip(own, state.hands, strict=True)]
            check_events(state, seen, own, public, kinds)
        seen = len(state.events)
    assert state.events[-1].kind == "game_end"


def choose(legal: list[str], rng: random.Random, end_rate: float | None) -> str:
    if end_rate is None or legal[-1] != "end":
        return rng.choice(legal)
    if rng.random() < end_rate:
        return "end"
    return rng.choice(legal[:-1])


def check_events(
    state: FiveState,
    start: int,
    own: list[set[str]],
    public: set[str],
    kinds: set[str],
    stop: int | None = None,
    reveal: list[list[str]] | None = None,
) -> None:
    """Events ``start:stop`` show each seat only its own cards and public ones."""
    for event in state.events[start:stop]:
        if event.kind == "hand_end":
            assert reveal is not None and event.data["hands"] == reveal
            continue
        if event.kind in ("deal", "drawn"):
            assert event.to == (event.data["seat"],)
        elif event.kind != "game_end":
            assert event.to is None
        cards = {s for s in visible_strings(dict(event.data)) if s in kinds}
        for seat in range(state.num_players):
            if event.visible_to(seat):
                assert cards <= own[seat] | public, (event, seat)


def test_determinism_and_replay() -> None:
    for seed, players, options in [
        (1, 2, {}),
        (2, 4, {"jokers": True, "limit": 80}),
        (3, 6, {"max_turns": 7, "max_hands": 5}),
    ]:
        game = make_game("five", players, options)
        first = game.new_state(seed)
        rng = random.Random(seed)
        log: list[str] = []
        while not first.is_terminal():
            action = rng.choice(first.legal_actions(first.deciding_seats()[0]))
            log.append(action)
            first.apply_action(action)
        second = game.new_state(seed)
        for action in log:
            second.apply_action(action)
        assert [e.to_dict() for e in first.events] == [e.to_dict() for e in second.events]
        assert first.scores() == second.scores()
        assert first.places() == second.places()
        assert first.reveal() == second.reveal()


def test_default_action_plays_out() -> None:
    """A seat played on by default actions never ends the hand; games still end."""
    for players in range(2, 7):
        state = Five(players, {"max_turns": 30}).new_state(players)
        while not state.is_terminal():
            seat = state.deciding_seats()[0]
            action = state.default_action(seat)
            assert action.startswith("drop ")
            state.apply_action(action)
        assert all(e.data["result"] == "no_result" for e in state.events if e.kind == "hand_end")
