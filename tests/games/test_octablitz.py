"""Octablitz: rules, scoring, options, hidden information and determinism."""

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
from arena.games.base import GameNotOverError, IllegalActionError, OptionError
from arena.games.cards import rummy_deck
from arena.games.octablitz import (
    NAMES,
    Combo,
    OctablitzState,
    classify,
    deal_payments,
    parse_action,
    sort_cards,
)
from tests.games.pages import assert_example_is_engine_output, numbers, sent
from tests.playout import random_playout, visible_strings

CARD_NAMES = frozenset(NAMES)


# -- helpers -----------------------------------------------------------------------
def new_state(n: int, seed: int = 0, **options: Any) -> OctablitzState:
    state = make_game("octablitz", n, options).new_state(seed)
    assert isinstance(state, OctablitzState)
    return state


def stack(hands: Sequence[Sequence[str]], leader: int = 0) -> list[str]:
    """A deck (top card first) that deals ``hands`` one card at a time from ``leader``;
    unspecified cards of each hand are filled from the rest of the deck, in deck order."""
    n = len(hands)
    size = 10 if n == 3 else 8
    rest = Counter(rummy_deck(remove_one_s_per_suit=n == 3))
    for hand in hands:
        rest.subtract(hand)
    assert all(v >= 0 for v in rest.values()), "a card is used too often"
    spare = list(rest.elements())
    full = [list(hand) + [spare.pop(0) for _ in range(size - len(hand))] for hand in hands]
    deck = []
    for i in range(size):
        for offset in range(n):
            deck.append(full[(leader + offset) % n][i])
    return deck


def stacked(hands: Sequence[Sequence[str]], **options: Any) -> OctablitzState:
    return new_state(len(hands), deck=stack(hands), **options)


def play(state: OctablitzState, *actions: str) -> None:
    for action in actions:
        state.apply_action(action)


def cards_in(value: object) -> Counter[str]:
    return Counter(s for s in visible_strings(value) if s in CARD_NAMES)


def up_actions(state: OctablitzState) -> list[str]:
    (seat,) = state.deciding_seats()
    return [a for a in state.legal_actions(seat) if a.startswith("up ")]


# Four-player deal used by several tests (seat 0 leads):
#   trick 1: seat 0 leads five rs, nobody can beat five identical rs;
#   trick 2: seat 0 leads bA bA, seat 1 beats it with rA rA;
#   trick 3 (last): seat 1 leads bB; seats 2 and 3 have taken no trick.
LAST_TRICK_HANDS = [
    ["rs", "rs", "rs", "rs", "rs", "bA", "bA", "bL"],
    ["rA", "rA", "bB", "bs", "bs", "bs", "bs", "bs"],
    ["rL", "bC", "bC", "rC", "rC", "bJ", "bJ", "rJ"],
    ["rK", "rJ", "bK", "bK", "rB", "rB", "bB", "rK"],
]


def play_to_last_trick(state: OctablitzState) -> None:
    play(state, "lead rs rs rs rs rs", "down bs bs bs bs bs", "down bC bC rC rC bJ")
    play(state, "down rB rB rJ bK bK", "lead bA bA", "up rA rA", "down bJ rJ", "down bB rK")
    play(state, "lead bB")


# -- cards, combinations and strength ------------------------------------------------
def test_decks_and_deal_sizes() -> None:
    for n, size, deck_size in ((3, 10, 30), (4, 8, 32)):
        state = new_state(n, seed=3)
        assert len(state.game.deck()) == deck_size
        assert [len(state.hand(s)) for s in range(n)] == [size] * n
        dealt = [card for s in range(n) for card in state.hand(s)]
        assert sorted(dealt) == sorted(state.game.deck())
    assert Counter(new_state(3).game.deck())["bs"] == 4
    assert Counter(new_state(4).game.deck())["rs"] == 5


def test_single_strength_order() -> None:
    order = ["bs", "rs", "bA", "rA", "bB", "rB", "bC", "rC", "bJ", "rJ", "bK", "rK", "bL", "rL"]
    assert list(NAMES) == order
    combos = [classify([card]) for card in order]
    for weaker, stronger in pairwise(combos):
        assert stronger is not None and weaker is not None
        assert stronger.beats(weaker) and not weaker.beats(stronger)
    assert sort_cards(["rL", "bs", "rs", "bA"]) == ["bs", "rs", "bA", "rL"]


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        (["bs"], Combo("single", 1, 0)),
        (["rL"], Combo("single", 1, 13)),
        (["bs", "bs"], Combo("multiple", 2, 0)),
        (["rK", "rK"], Combo("multiple", 2, 11)),
        (["rs"] * 5, Combo("multiple", 5, 1)),
        (["bs"] * 3, Combo("multiple", 3, 0)),
        (["bA", "bB", "bC"], Combo("run", 3, 0)),
        (["rC", "rA", "rB"], Combo("run", 3, 1)),
        (["bJ", "bK", "bL"], Combo("run", 3, 2)),
        (["rJ", "rK", "rL"], Combo("run", 3, 3)),
        (["bL", "rL"], None),  # two generals are not a pair
        (["bA", "rA"], None),  # different suits
        (["bA", "rB", "bC"], None),  # a run is of one suit
        (["bA", "bA", "bB"], None),
        (["bs"] * 6, None),  # at most five
        (["bB", "bC", "bJ"], None),  # only A-B-C and J-K-L are runs
        ([], None),
    ],
)
def test_classify(cards: list[str], expected: Combo | None) -> None:
    assert classify(cards) == expected


@pytest.mark.parametrize(
    ("first", "second", "second_beats"),
    [
        (["bs"], ["rs"], True),  # same rank: red beats black
        (["rs"], ["bA"], True),  # higher rank beats any suit
        (["rL"], ["bL"], False),
        (["bK"], ["bK"], False),  # identical: the earlier wins
        (["bs", "bs"], ["rs", "rs"], True),
        (["rA", "rA"], ["bA", "bA"], False),
        (["bA", "bA"], ["bA", "bA"], False),
        (["bs", "bs"], ["bs", "bs", "bs"], False),  # a different number of cards
        (["bs", "bs", "bs"], ["bA", "bB", "bC"], False),  # triple vs run: other kind
        (["rK", "rK", "rK"], ["bA", "bB", "bC"], False),
        (["bA", "bB", "bC"], ["bs", "bs", "bs"], False),
        (["bA", "bB", "bC"], ["rA", "rB", "rC"], True),
        (["rA", "rB", "rC"], ["bJ", "bK", "bL"], True),
        (["bJ", "bK", "bL"], ["rJ", "rK", "rL"], True),
        (["rJ", "rK", "rL"], ["bA", "bB", "bC"], False),
        (["bs"], ["rL"], True),
    ],
)
def test_beats(first: list[str], second: list[str], second_beats: bool) -> None:
    a, b = classify(first), classify(second)
    assert a is not None and b is not None
    assert b.beats(a) is second_beats


# -- actions -------------------------------------------------------------------------
def test_lead_actions_and_order() -> None:
    state = stacked(
        [
            ["bs", "bs", "bs", "bA", "bB", "bC", "rL", "bK", "bK", "rs"],
            [],
            [],
        ]
    )
    legal = state.legal_actions(0)
    assert legal == (
        "lead bs",
        "lead rs",
        "lead bA",
        "lead bB",
        "lead bC",
        "lead bK",
        "lead rL",
        "lead bs bs",
        "lead bK bK",
        "lead bs bs bs",
        "lead bA bB bC",
    )
    assert state.default_action(0) == "lead bs"
    assert state.legal_actions(1) == ()
    assert state.deciding_seats() == (0,)


def test_lead_of_generals_is_never_a_pair() -> None:
    state = stacked([["bL", "rL"], [], []])
    legal = state.legal_actions(0)
    assert "lead bL rL" not in legal
    assert "lead bL" in legal and "lead rL" in legal


# Full three-player hands for the follow tests.
FOLLOW_HANDS = [
    ["bA", "bs", "bs", "bs", "bs", "rs", "rs", "rs", "rs", "bL"],
    ["bA", "rA", "rA", "bB", "bB", "bK", "bK", "rK", "rK", "rL"],
    ["bC", "bC", "bJ", "bJ", "rB", "rB", "rC", "rC", "rJ", "rJ"],
]
RUN_HANDS = [
    ["rA", "rA", "rB", "rC", "bB", "bC", "bJ", "bK", "bL", "rK"],
    ["bA", "bs", "bs", "bs", "bs", "rs", "rs", "rs", "rs", "bA"],
    ["bB", "bC", "bJ", "bK", "rB", "rC", "rJ", "rJ", "rK", "rL"],
]


def test_follow_face_up_only_when_stronger_than_every_face_up_play() -> None:
    state = stacked(FOLLOW_HANDS)
    play(state, "lead bA")
    # Seat 1's bA is identical to the lead: the earlier wins, so it may only go down.
    assert up_actions(state) == ["up rA", "up bB", "up bK", "up rK", "up rL"]
    assert state.legal_actions(1)[:6] == (
        "down bA",
        "down rA",
        "down bB",
        "down bK",
        "down rK",
        "down rL",
    )
    play(state, "up bB")
    # Seat 2 must beat bB (the strongest face-up play), not just the lead.
    assert up_actions(state) == ["up rB", "up bC", "up rC", "up bJ", "up rJ"]
    play(state, "up rC")
    assert state.leader == 2 and state.tricks_won == [0, 0, 1]
    assert state.taken[2] == ["rC"] and state.out_up == ["bA", "bB"]
    assert state.deciding_seats() == (2,)


def test_follow_with_a_multiple() -> None:
    state = stacked(FOLLOW_HANDS)
    play(state, "lead bs bs")
    legal = state.legal_actions(1)
    downs = [a for a in legal if a.startswith("down ")]
    # Any two cards face down: 15 pairs of different kinds + 4 identical pairs.
    assert len(downs) == 19 == len(set(downs))
    assert downs[0] == "down bA rA" and "down rA rA" in downs and "down bA bA" not in downs
    assert legal[len(downs) :] == ("up rA rA", "up bB bB", "up bK bK", "up rK rK")
    play(state, "up rA rA")
    assert up_actions(state) == ["up rB rB", "up bC bC", "up rC rC", "up bJ bJ", "up rJ rJ"]


def test_follow_of_another_kind_goes_down() -> None:
    state = stacked(FOLLOW_HANDS)
    play(state, "lead bs bs bs")
    assert up_actions(state) == []  # no triple beats it; seat 1 holds only pairs
    # A run is led: a triple is another kind of combination, runs must be stronger.
    state = stacked(RUN_HANDS)
    play(state, "lead rA rB rC")
    assert up_actions(state) == []  # seat 1 holds triples of s, no run
    play(state, "down bs bs bs")
    assert up_actions(state) == ["up rJ rK rL"]  # black J-K-L is not held
    play(state, "up rJ rK rL")
    assert state.taken[2] == ["rJ", "rK", "rL"] and state.cards_taken == [0, 0, 3]
    # A single led: a pair or a run is never an answer to it.
    state = stacked(RUN_HANDS)
    play(state, "lead bB")
    assert all(len(a.split()) == 2 for a in state.legal_actions(1))


def test_illegal_actions_are_rejected() -> None:
    state = stacked([["bs", "bA"], [], []])
    for action in ("lead bs bA", "lead rL", "up bs", "down bs", "lead", "pass"):
        with pytest.raises(IllegalActionError):
            state.apply_action(action)
    with pytest.raises(IllegalActionError):
        state.apply_actions({1: "lead bs"})
    assert parse_action("down rs bA") == ("down", ["rs", "bA"])


# -- the last trick ---------------------------------------------------------------------
def test_last_trick_rule_forces_face_down_without_a_trick() -> None:
    state = stacked(LAST_TRICK_HANDS)
    play_to_last_trick(state)
    assert state.is_last_trick() and state.tricks_won == [1, 1, 0, 0]
    assert state.legal_actions(2) == ("down rL",)  # rL would beat bB, but no trick taken
    assert state.observation(2)["must_play_down"] is True
    play(state, "down rL")
    assert state.legal_actions(3) == ("down rK",)
    play(state, "down rK")
    assert state.legal_actions(0) == ("down bL", "up bL")  # seat 0 has taken a trick
    assert state.observation(0)["must_play_down"] is False
    play(state, "up bL")
    # Seat 0 wins the deal: 6 cards taken; seat 1 took 2 -> pays 4-2; seats 2, 3 pay 4+1.
    assert state.chips == [42, 28, 25, 25]
    assert state.general == 0 and state.streak == 1 and state.deal_no == 2


def test_last_trick_led_with_a_multiple_allows_face_up() -> None:
    # Seat 0 leads its last three cards (a run): the trick is last, nobody is forced down.
    state = stacked(
        [
            ["rs", "rs", "rs", "rs", "rs", "bA", "bB", "bC"],
            ["bs", "bs", "bs", "bs", "bs", "rA", "rB", "rC"],
            [],
            [],
        ]
    )
    play(state, "lead rs rs rs rs rs", "down bs bs bs bs bs")
    play(state, "down bJ bJ bK bK bL", "down rJ rJ rK rK rL")
    play(state, "lead bA bB bC")
    assert state.is_last_trick()
    assert state.legal_actions(1) == ("down rA rB rC", "up rA rB rC")  # no trick, yet up
    play(state, "up rA rB rC")
    assert state.legal_actions(2) == ("down bA bB bC",)  # identical to the lead
    play(state, "down bA bB bC")
    assert state.legal_actions(3) == ("down rA rB rC",)  # identical to seat 1's run
    play(state, "down rA rB rC")
    assert state.deal_no == 2
    events = [e for e in state.events if e.kind == "hand_end"]
    assert events[0].data["winner"] == 1
    # Seat 1 took 3 cards and won; seat 0 took 5 > base 4 and receives 1.
    assert events[0].data["payments"] == [1, 9, -5, -5]


def test_trick_winner_leads_next_and_deal_winner_leads_next_deal() -> None:
    state = stacked(LAST_TRICK_HANDS)
    play_to_last_trick(state)
    play(state, "down rL", "down rK", "down bL")
    # Seat 1 wins the last trick with bB: 3 cards; seat 0 took 5 > 4 and receives 1.
    assert state.chips == [31, 39, 25, 25]
    assert state.deciding_seats() == (1,)
    start = [e for e in state.events if e.kind == "hand_start"][-1]
    assert start.data["dealer"] == 1 and start.data["general"] == 1
    assert start.data["multiplier"] == 2
    deal = [e for e in state.events if e.kind == "deal"][-4:]
    assert [e.to for e in deal] == [(0,), (1,), (2,), (3,)]


# -- scoring ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("n", "winner", "taken", "general", "multiplier", "expected"),
    [
        # 3 players, base 5: seat 1 took nothing (5 + 1), seat 2 took 6 (receives 1).
        (3, 0, [14, 0, 6], None, 1, [5, -6, 1]),
        (3, 0, [14, 0, 6], 0, 2, [10, -12, 2]),  # the General won again: all doubled
        (3, 0, [14, 0, 6], 0, 3, [15, -18, 3]),  # ... and again: tripled
        (3, 0, [14, 0, 6], 2, 2, [4, -6, 2]),  # the General lost: only its payment doubles
        (3, 2, [0, 3, 9], 0, 2, [-12, -2, 14]),  # the rules page's example
        (3, 1, [5, 2, 3], None, 1, [0, 2, -2]),  # exactly base pays nothing
        (3, 2, [1, 1, 28], 1, 4, [-4, -16, 20]),
        # 4 players, base 4.
        (4, 2, [0, 4, 6, 7], None, 1, [-5, 0, 2, 3]),
        (4, 2, [0, 4, 6, 7], 3, 2, [-5, 0, -1, 6]),
        (4, 0, [6, 2, 0, 0], 0, 2, [24, -4, -10, -10]),
        (4, 1, [1, 3, 2, 2], None, 1, [-3, 7, -2, -2]),
    ],
)
def test_deal_payments(
    n: int,
    winner: int,
    taken: list[int],
    general: int | None,
    multiplier: int,
    expected: list[int],
) -> None:
    assert deal_payments(n, winner, taken, general, multiplier) == expected
    assert sum(expected) == 0


def test_three_player_deal_scored_through_play() -> None:
    # Seat 0 holds both generals and the three other singles that beat everything.
    hands = [
        ["rL", "bL", "rK", "rK", "bK", "bK", "rJ", "rJ", "bJ", "bJ"],
        ["bs", "bs", "bs", "bs", "bA", "bA", "bB", "bB", "bC", "bC"],
        ["rs", "rs", "rs", "rs", "rA", "rA", "rB", "rB", "rC", "rC"],
    ]
    state = stacked(hands)
    play(state, "lead rK rK", "down bs bs", "down rs rs")
    play(state, "lead bK bK", "down bs bs", "down rs rs")
    play(state, "lead rJ rJ", "down bA bA", "down rA rA")
    play(state, "lead bJ bJ", "down bB bB", "down rB rB")
    play(state, "lead bL", "down bC", "down rC")
    play(state, "lead rL", "down bC", "down rC")
    # Seat 0 took 10 cards; seats 1 and 2 took none and pay 5 + 1 each.
    assert state.chips == [42, 24, 24]
    assert state.general == 0 and state.multiplier == 2
    assert state.deciding_seats() == (0,)


def test_general_multiplier_follows_win_streaks() -> None:
    """Replay whole games and check every deal's payments against a reference
    that derives the General and its multiplier from the winners alone."""
    for n in (3, 4):
        for seed in range(6):
            state = new_state(n, seed, deals=12, chips=500)
            rng = random.Random(seed)
            while not state.is_terminal():
                (seat,) = state.deciding_seats()
                legal = state.legal_actions(seat)
                # Leaders play their strongest lead so that deal winners repeat.
                state.apply_action(legal[-1] if state.lead is None else rng.choice(legal))
            winners: list[int] = []
            streaks = Counter[int]()
            for event in state.events:
                if event.kind != "hand_end":
                    continue
                data = event.data
                general = winners[-1] if winners else None
                streak = 0
                for w in reversed(winners):
                    if w != general:
                        break
                    streak += 1
                multiplier = streak + 1 if general is not None else 1
                assert data["general"] == general and data["multiplier"] == multiplier
                expected = deal_payments(
                    n, data["winner"], data["cards_taken"], general, multiplier
                )
                assert data["payments"] == expected
                winners.append(data["winner"])
                streaks[multiplier] += 1
            assert sum(state.chips) == 500 * n
            assert max(streaks) >= 3, streaks


# -- options and the game's end ---------------------------------------------------------------
def test_option_defaults_and_validation() -> None:
    game = make_game("octablitz", 3)
    assert game.options["deals"] == 8 and game.options["chips"] == 30
    assert game.options["max_turns"] == 400
    assert new_state(4, chips=12).chips == [12] * 4
    for bad in (
        {"deals": 0},
        {"chips": 0},
        {"max_turns": 0},
        {"colour": 1},
        {"deals": "x"},
        {"deck": rummy_deck()},
    ):  # the 32-card deck is wrong for 3 players
        with pytest.raises(OptionError):
            make_game("octablitz", 3, bad)
    for n in (2, 5):
        with pytest.raises(OptionError):
            make_game("octablitz", n)
    make_game("octablitz", 4, {"deck": rummy_deck()})


def test_deals_option_ends_the_game() -> None:
    for deals in (1, 3):
        state = new_state(3, seed=4, deals=deals, chips=1000)
        random_playout(state, random.Random(0))
        assert state.deal_no == deals
        assert sum(1 for e in state.events if e.kind == "hand_end") == deals
        assert state.observation(0)["phase"] == "over"
        assert state.deciding_seats() == () and state.legal_actions(0) == ()


def test_game_ends_when_a_player_has_no_chips() -> None:
    state = stacked(LAST_TRICK_HANDS, chips=5)
    play_to_last_trick(state)
    play(state, "down rL", "down rK", "up bL")
    assert state.chips == [17, 3, 0, 0]
    assert state.is_terminal() and state.deal_no == 1
    assert state.scores() == [17, 3, 0, 0]
    assert state.places() == [1, 2, 3, 3]
    assert state.events[-1].kind == "game_end"


def test_scores_only_when_over() -> None:
    with pytest.raises(GameNotOverError):
        new_state(3).scores()


def test_deck_option_stacks_only_the_first_deal() -> None:
    deck = stack(LAST_TRICK_HANDS)
    one = new_state(4, 1, deck=deck)
    two = new_state(4, 2, deck=deck)
    assert one.hand(0) == sort_cards(LAST_TRICK_HANDS[0]) == two.hand(0)
    for state in (one, two):
        play_to_last_trick(state)
        play(state, "down rL", "down rK", "down bL")
    assert one.hand(1) != two.hand(1)  # the second deal is shuffled from the seed


def test_turn_cap_ends_the_deal_with_no_result() -> None:
    # 4 players, cap 5: the fifth play is the lead of trick 2, the deal stops there.
    state = stacked(LAST_TRICK_HANDS, max_turns=5, deals=2)
    play(state, "lead rs rs rs rs rs", "down bs bs bs bs bs", "down bC bC rC rC bJ")
    play(state, "down rB rB rJ bK bK", "lead bA bA")
    end = next(e for e in state.events if e.kind == "hand_end")
    assert end.data["result"] == "capped" and end.data["winner"] is None
    assert end.data["payments"] == [0, 0, 0, 0]
    assert state.chips == [30] * 4 and state.general is None
    assert state.deal_no == 2 and state.deciding_seats() == (0,)  # the same leader again
    assert "hands" not in end.data  # a capped deal reveals nothing


def test_turn_cap_keeps_the_general() -> None:
    state = stacked(LAST_TRICK_HANDS, max_turns=12, deals=3)
    play_to_last_trick(state)
    play(state, "down rL", "down rK", "down bL")  # turn 12 completes the deal: a result
    assert state.general == 1 and state.multiplier == 2 and state.deal_no == 2
    while state.deal_no == 2:  # lowest singles: 32 plays, so the cap stops the deal
        state.apply_action(state.default_action(state.deciding_seats()[0]))
    ends = [e for e in state.events if e.kind == "hand_end"]
    assert ends[1].data["result"] == "capped" and ends[1].data["general"] == 1
    assert ends[1].data["multiplier"] == 2 and ends[1].data["payments"] == [0, 0, 0, 0]
    assert state.general == 1 and state.streak == 1 and state.multiplier == 2
    assert state.deciding_seats() == (1,)


# -- observation, events, reveal ---------------------------------------------------------------
def test_observation_fields() -> None:
    state = stacked(LAST_TRICK_HANDS)
    play(state, "lead rs rs rs rs rs", "down bs bs bs bs bs")
    obs = sent(state.observation(2))
    assert obs["seat"] == 2 and obs["phase"] == "follow" and obs["to_move"] == [2]
    assert obs["game"] == "octablitz" and obs["players"] == 4
    assert obs["hand"] == sort_cards(LAST_TRICK_HANDS[2])
    assert obs["hand_sizes"] == [3, 3, 8, 8]
    assert obs["lead"] == {"combo": "multiple", "count": 5}
    assert obs["trick_plays"] == [
        {"seat": 0, "face": "up", "count": 5, "cards": ["rs"] * 5},
        {"seat": 1, "face": "down", "count": 5, "cards": []},
    ]
    assert obs["best_seat"] == 0 and obs["down_counts"] == [0, 5, 0, 0]
    assert obs["my_down"] == [] and sent(state.observation(1))["my_down"] == ["bs"] * 5
    assert obs["chips"] == [30] * 4 and obs["deal"] == 1 and obs["deals"] == 8
    assert obs["dealer"] == 0 and obs["general"] is None and obs["multiplier"] == 1
    assert obs["base"] == 4 and obs["turn_number"] == 2 and obs["max_turns"] == 400
    assert obs["last_trick"] is False and obs["must_play_down"] is False
    json.dumps(obs)
    msgpack.packb(obs)
    for key, value in obs.items():
        assert isinstance(key, str) and not isinstance(value, (tuple, set))
    assert set(obs) == OBS_KEYS
    assert set(state.observation(None)) == OBS_KEYS - {"hand", "must_play_down", "my_down"}
    assert state.observation(None)["seat"] is None


OBS_KEYS = {
    "game", "seat", "players", "to_move", "phase", "hand", "deal", "deals", "dealer",
    "general", "general_wins", "multiplier", "base", "chips", "hand_sizes", "trick",
    "leader", "lead", "trick_plays", "best_seat", "last_trick", "must_play_down",
    "tricks_won", "cards_taken", "taken", "out_up", "down_counts", "my_down",
    "turn_number", "max_turns",
}
RULES_PAGE = Path(__file__).parents[2] / "docs" / "rules" / "octablitz.md"


def test_rules_page_lists_every_observation_field() -> None:
    table = RULES_PAGE.read_text().split("## Observation", 1)[1].split("## Events", 1)[0]
    documented = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    assert documented == OBS_KEYS


def test_rules_page_example_is_the_engine_output() -> None:
    """The example request of docs/rules/octablitz.md is real engine output:
    seed 105, every seat played by the sample bot."""
    from sample_bots.octablitz_heuristic import choose

    state = make_game("octablitz", 3).new_state(105)
    assert_example_is_engine_output("octablitz", state, lambda _, obs, legal: choose(obs, legal))


def test_numbers_are_ints() -> None:
    state = new_state(4, seed=8, deals=3)
    random_playout(state, random.Random(8))
    assert all(type(score) is int for score in state.scores())
    records = [state.observation(0), state.reveal(), *(e.to_dict() for e in state.events)]
    assert "float" not in repr([type(x).__name__ for x in numbers(records)])


def test_events_of_a_trick() -> None:
    state = stacked(LAST_TRICK_HANDS)
    play(state, "lead rs rs rs rs rs", "down bs bs bs bs bs")
    kinds = [(e.kind, e.to) for e in state.events]
    assert kinds[:5] == [
        ("hand_start", None),
        ("deal", (0,)),
        ("deal", (1,)),
        ("deal", (2,)),
        ("deal", (3,)),
    ]
    assert kinds[5:] == [("play", None), ("play", None), ("down_cards", (1,))]
    assert state.events[6].data == {
        "seat": 1,
        "trick": 1,
        "lead": False,
        "face": "down",
        "count": 5,
    }
    assert state.events[7].data["cards"] == ["bs"] * 5


def test_reveal_hides_face_down_cards() -> None:
    state = stacked(LAST_TRICK_HANDS, deals=1)
    play_to_last_trick(state)
    play(state, "down rL", "down rK", "up bL")
    reveal = state.reveal()
    assert reveal["chips"] == [42, 28, 25, 25]
    assert cards_in(reveal) == Counter(["rs"] * 5 + ["rA", "rA", "bL"])


def test_face_down_general_never_leaks() -> None:
    state = stacked(LAST_TRICK_HANDS)
    play_to_last_trick(state)
    play(state, "down rL")  # seat 2's rL is unique and never seen by anyone else
    for seat in (0, 1, 3):
        assert "rL" not in visible_strings(state.observation(seat))
        for event in state.events:
            if event.visible_to(seat):
                assert "rL" not in visible_strings(event.to_dict())
    assert "rL" in state.observation(2)["my_down"]


# -- properties: random playouts ---------------------------------------------------------------
def check_conservation(state: Any) -> None:
    assert isinstance(state, OctablitzState)
    everything = Counter[str]()
    for cards in state.zones().values():
        everything.update(cards)
    assert everything == Counter(state.game.deck())
    n = state.num_players
    assert state.sizes == [len(state.hand(s)) for s in range(n)]
    assert state.down_counts == [len(state.zones()[f"down{s}"]) for s in range(n)]
    assert len(set(state.sizes)) <= 2
    assert sum(state.chips) == state.game.options["chips"] * state.num_players


option_sets = st.fixed_dictionaries(
    {
        "deals": st.integers(1, 4),
        "chips": st.sampled_from([1, 5, 30, 200]),
        "max_turns": st.sampled_from([3, 17, 400]),
    }
)


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from([3, 4]), seed=st.integers(0, 2**32), options=option_sets)
def test_random_playouts_conserve_cards_and_chips(
    n: int, seed: int, options: dict[str, Any]
) -> None:
    state = new_state(n, seed, **options)
    random_playout(state, random.Random(seed), check_conservation)
    assert state.is_terminal()
    scores = state.scores()
    assert sum(scores) == options["chips"] * n
    assert scores == state.reveal()["chips"]
    assert state.deal_no == options["deals"] or min(scores) <= 0
    places = state.places()
    for a in range(n):
        for b in range(n):
            assert (scores[a] > scores[b]) == (places[a] < places[b])


def play_and_check_secrecy(n: int, seed: int, options: dict[str, Any]) -> list[str]:
    """Random playout checking that no seat ever sees a card kind more often than
    it may know: its own dealt hand plus the cards played face up in the deal."""
    state = new_state(n, seed, **options)
    rng = random.Random(seed ^ 0x5EED)
    known = [Counter(state.hand(s)) for s in range(n)]
    seen = 0
    log: list[str] = []

    def check(seat: int, value: object) -> None:
        shown = cards_in(value)
        assert shown <= known[seat], (seat, shown - known[seat])

    while True:
        for event in state.events[seen:]:
            if event.kind == "hand_start":
                known = [Counter(state.hand(s)) for s in range(n)]
            for seat in range(n):
                if event.visible_to(seat):
                    check(seat, event.to_dict())
        seen = len(state.events)
        if state.is_terminal():
            break
        for seat in range(n):
            check(seat, state.observation(seat))
        (seat,) = state.deciding_seats()
        legal = state.legal_actions(seat)
        for action in legal:
            check(seat, action.split())
        action = rng.choice(legal)
        verb, cards = parse_action(action)
        if verb in ("lead", "up"):
            for other in range(n):
                known[other].update(cards)
        state.apply_action(action)
        log.append(action)
    for seat in range(n):
        check(seat, state.reveal())
        check(seat, state.observation(seat))
    return log


@settings(max_examples=50, deadline=None)
@given(n=st.sampled_from([3, 4]), seed=st.integers(0, 2**32), options=option_sets)
def test_no_hidden_card_is_ever_visible(n: int, seed: int, options: dict[str, Any]) -> None:
    play_and_check_secrecy(n, seed, options)


@settings(max_examples=20, deadline=None)
@given(n=st.sampled_from([3, 4]), seed=st.integers(0, 2**32), options=option_sets)
def test_replaying_the_log_is_deterministic(n: int, seed: int, options: dict[str, Any]) -> None:
    log = play_and_check_secrecy(n, seed, options)
    first = new_state(n, seed, **options)
    second = new_state(n, seed, **options)
    for state in (first, second):
        for action in log:
            state.apply_action(action)
        assert state.is_terminal()
    assert [e.to_dict() for e in first.events] == [e.to_dict() for e in second.events]
    assert first.scores() == second.scores() and first.reveal() == second.reveal()
