"""Five Card Rummy: rulebook examples, one table per rule, properties, determinism."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games import make_game
from arena.games.base import GameNotOverError, IllegalActionError, OptionError
from arena.games.cards import standard_deck
from arena.games.five_card_rummy import (
    CATEGORIES,
    FIVE_RANKS,
    FIVE_SUITED,
    NAMES,
    POINTS,
    RUN,
    TABLE,
    FiveCardRummyState,
    Pool,
    _declarations,
    _declarations_found,
    _has_at_most,
    _may_run,
    _paired_ranks,
    _search,
    card_bits,
    categories_of,
    declarations,
    extensions,
    forms,
    parse_cards,
    resolve_declaration,
)
from tests.games.pages import sent
from tests.playout import random_playout, visible_strings

CARD_NAMES = frozenset(NAMES)


def cards(text: str) -> list[int]:
    return parse_cards(text.split())


def stacked_deck(hands: list[str], stock: str = "", dealer: int = 0) -> list[str]:
    """A full deck dealing ``hands[seat]`` to each seat (one card at a time from
    the seat left of ``dealer``), then ``stock`` on top of the stock."""
    n = len(hands)
    first = (dealer + 1) % n
    deck = [""] * (5 * n)
    for k in range(n):
        for i, card in enumerate(hands[(first + k) % n].split()):
            deck[k + n * i] = card
    top = stock.split()
    used = set(deck) | set(top)
    return deck + top + [c for c in standard_deck() if c not in used]


def new_state(hands: list[str], stock: str = "", **options: Any) -> FiveCardRummyState:
    game = make_game("five-card-rummy", len(hands), {"deck": stacked_deck(hands, stock), **options})
    state = game.new_state(0)
    assert isinstance(state, FiveCardRummyState)
    return state


def events_since(state: FiveCardRummyState, start: int, kind: str) -> list[dict[str, Any]]:
    return [e.to_dict() for e in state.events[start:] if e.kind == kind]


# -- hands and points -----------------------------------------------------------

RULEBOOK_EXAMPLES = [
    ("pair", "3h 3s", 2),
    ("two_pairs", "5s 5d Ts Tc", 5),
    ("sequence_3", "8c 9c Tc", 10),
    ("three_of_a_kind", "Qd Qh Qc", 15),
    ("straight", "4h 5s 6d 7s 8c", 20),
    ("flush", "3h 4h 7h 9h Kh", 25),
    ("sequence_4", "9c Tc Jc Qc", 30),
    ("full_set", "5h 5d 7h 8h 9h", 35),
    ("full_house", "2s 2h 3c 3s 3d", 40),
    ("four_of_a_kind", "Jc Js Jd Jh", 50),
    ("straight_flush", "9s Ts Js Qs Ks", 80),
    ("royal_flush", "Td Jd Qd Kd Ad", 100),
]


@pytest.mark.parametrize(("category", "hand", "points"), RULEBOOK_EXAMPLES)
def test_rulebook_hand_examples(category: str, hand: str, points: int) -> None:
    assert forms(category, cards(hand))
    assert categories_of(cards(hand))[0] == category
    assert POINTS[category] == points


def test_points_table_is_the_rulebook_table() -> None:
    assert [(cat.name, cat.points, cat.size) for cat in TABLE] == [
        ("royal_flush", 100, 5), ("straight_flush", 80, 5), ("four_of_a_kind", 50, 4),
        ("full_house", 40, 5), ("full_set", 35, 5), ("sequence_4", 30, 4), ("flush", 25, 5),
        ("straight", 20, 5), ("three_of_a_kind", 15, 3), ("sequence_3", 10, 3),
        ("two_pairs", 5, 4), ("pair", 2, 2),
    ]
    assert list(CATEGORIES) == [cat.name for cat in TABLE]
    assert {cat.name: cat.points for cat in TABLE} == POINTS


# The categories' definitions, written out from the rules page independently of
# the engine's finders: the reference the finders are tested against.


def _consecutive(group: tuple[int, ...]) -> bool:
    """Distinct ranks in one unbroken run, ace low or high, no wrap."""
    values = sorted(c // 4 + 1 for c in group)
    if len(set(values)) != len(values):
        return False
    if values[-1] - values[0] == len(values) - 1:
        return True
    high = sorted(14 if v == 1 else v for v in values)
    return high[-1] - high[0] == len(values) - 1


def defined_categories(group: tuple[int, ...]) -> list[str]:
    """Every category ``group`` (all of its cards) meets, by the definitions."""
    counts = sorted(Counter(c // 4 for c in group).values(), reverse=True)
    one_suit = len({c % 4 for c in group}) == 1
    run = _consecutive(group)
    full_set = len(group) == 5 and any(
        a // 4 == b // 4 and len({c % 4 for c in rest}) == 1 and _consecutive(rest)
        for a, b in itertools.combinations(group, 2)
        for rest in [tuple(c for c in group if c not in (a, b))])
    meets = {
        "royal_flush": one_suit and run and {c // 4 for c in group} == {0, 9, 10, 11, 12},
        "straight_flush": one_suit and run,
        "four_of_a_kind": counts == [4],
        "full_house": counts == [3, 2],
        "full_set": full_set,
        "sequence_4": one_suit and run,
        "flush": one_suit,
        "straight": run,
        "three_of_a_kind": counts == [3],
        "sequence_3": one_suit and run,
        "two_pairs": counts == [2, 2],
        "pair": counts == [2],
    }
    return [cat.name for cat in TABLE if cat.size == len(group) and meets[cat.name]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=2, max_size=5, unique=True))
def test_categories_of_equals_the_definitions(group: list[int]) -> None:
    assert categories_of(group) == defined_categories(tuple(group))
    for cat in TABLE:
        assert forms(cat.name, group) == (cat.name in defined_categories(tuple(group)))


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # Aces high or low, no wrap.
        ("Ah 2d 3c 4s 5h", ["straight"]),
        ("Th Jd Qc Ks Ah", ["straight"]),
        ("Qh Kd Ac 2s 3h", []),
        ("Kh Ad 2c 3s 4h", []),
        ("Ah 2h 3h", ["sequence_3"]),
        ("Qh Kh Ah", ["sequence_3"]),
        ("Kh Ah 2h", []),
        ("Ah 2h 3h 4h", ["sequence_4"]),
        ("Jh Qh Kh Ah", ["sequence_4"]),
        ("Qh Kh Ah 2h", []),
        ("Ah 2h 3h 4h 5h", ["straight_flush", "flush", "straight"]),
        ("Th Jh Qh Kh Ah", ["royal_flush", "straight_flush", "flush", "straight"]),
        ("9s Ts Js Qs Ks", ["straight_flush", "flush", "straight"]),
        # Sequences need one suit; a straight may mix suits.
        ("8c 9d Tc", []),
        ("9c Tc Jc Qd", []),
        ("4h 5h 6h 7h 8s", ["straight"]),
        # Full set vs full house.
        ("5h 5d 7h 8h 9h", ["full_set"]),
        ("2s 2h 3c 3s 3d", ["full_house"]),
        ("7d 7s 7h 8h 9h", ["full_set"]),
        ("8c 8d 7h 8h 9h", ["full_set"]),
        ("5h 5d 7h 8d 9h", []),
        ("5h 5d 5c 8h 9h", []),
        # Two pairs need two ranks: four of a kind is not two pairs.
        ("5s 5d Ts Tc", ["two_pairs"]),
        ("Js Jd Jc Jh", ["four_of_a_kind"]),
        ("5s 5d 5c", ["three_of_a_kind"]),
        ("5s 5d", ["pair"]),
        ("5s 6s", []),
        ("3h 4h 7h 9h Kh", ["flush"]),
        ("4h 5s 6d 7s", []),
    ],
)
def test_category_boundaries(hand: str, expected: list[str]) -> None:
    assert categories_of(cards(hand)) == expected


def test_declarations_list_every_category_and_card_set() -> None:
    got = [(cat, " ".join(NAMES[c] for c in run)) for cat, run in declarations(cards(
        "5h 5d 7h 8h 9h"))]
    assert got == [
        ("full_set", "5d 5h 7h 8h 9h"),
        ("sequence_3", "7h 8h 9h"),
        ("pair", "5d 5h"),
    ]
    got = [(cat, " ".join(NAMES[c] for c in run)) for cat, run in declarations(cards(
        "Jc Js Jd Jh 2c"))]
    assert got[0] == ("four_of_a_kind", "Jc Jd Jh Js")
    assert Counter(cat for cat, _ in got) == {"four_of_a_kind": 1, "three_of_a_kind": 4,
                                              "pair": 6}
    assert declarations(cards("2c 5d 8h Jc Ks")) == []


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 51), min_size=5, max_size=5, unique=True))
def test_declarations_equal_every_subset_checked(hand: list[int]) -> None:
    expected = {
        (cat, combo)
        for size in (2, 3, 4, 5)
        for combo in itertools.combinations(sorted(hand), size)
        for cat in defined_categories(combo)
    }
    got = declarations(hand)
    assert len(got) == len(set(got)) and set(got) == expected
    assert [POINTS[c] for c, _ in got] == sorted((POINTS[c] for c, _ in got), reverse=True)


def test_whole_rank_declarations_equal_the_finders() -> None:
    """The direct listing of a hand without runs, flushes or straights (most
    hands) gives what every finder gives, in the same order, full houses, two
    pairs and four of a kind included (hands drawn from few ranks)."""
    rng = random.Random(31)
    checked = Counter[str]()
    for _ in range(4000):
        ranks = rng.sample(range(13), rng.randint(1, 4))
        pool_cards = [r * 4 + s for r in ranks for s in range(4)]
        hand = rng.sample(pool_cards, min(len(pool_cards), rng.randint(2, 9)))
        pool = Pool(card_bits(hand))
        if not pool.has or pool.has & (RUN | FIVE_SUITED | FIVE_RANKS):
            continue
        got = _declarations(card_bits(hand))
        assert got == _declarations_found(pool), hand
        checked.update(TABLE[order].name for order, _ in got)
    assert {"four_of_a_kind", "full_house", "three_of_a_kind", "two_pairs", "pair"} <= set(checked)


def test_whole_hand_bit_tests_agree_with_the_pool() -> None:
    """The bitmask tests that spare most turns a pool (runs, flushes, straights,
    paired ranks) say what the pool says, on hands rich in each of them."""
    rng = random.Random(32)
    for _ in range(6000):
        if rng.random() < 0.5:  # a suit's cards and a few more: runs and flushes
            suit = rng.randrange(4)
            pool_cards = list({r * 4 + suit for r in range(13)} | set(rng.sample(range(52), 6)))
        else:  # few ranks: pairs, trips, straights
            ranks = rng.sample(range(13), rng.randint(2, 13))
            pool_cards = [r * 4 + s for r in ranks for s in range(4)]
        hand = rng.sample(pool_cards, min(len(pool_cards), rng.choice([1, 2, 3, 4, 5, 5, 5, 7])))
        bits = card_bits(hand)
        pool = Pool(bits)
        assert _may_run(bits) == bool(pool.has & (RUN | FIVE_SUITED | FIVE_RANKS)), hand
        assert _paired_ranks(bits) == sum(1 << (4 * r) for r in pool.groups), hand
        assert _declarations(bits) == (_declarations_found(pool) if pool.has else []), hand
        assert _has_at_most(bits) & pool.has == pool.has, hand  # lay-off skips rely on it


# -- lay-off ----------------------------------------------------------------------


def lay_off(declarer: int, winning: str, hands: list[str]) -> tuple[str, int | None, int]:
    category = categories_of(cards(winning))[0]
    result = resolve_declaration(
        declarer, cards(winning), POINTS[category], [cards(h) for h in hands]
    )
    return result.outcome, result.scorer, result.points


@pytest.mark.parametrize(
    ("declarer", "winning", "hands", "expected"),
    [
        # No extension scores more: the declarer scores.
        (0, "8c 9c Tc", ["8c 9c Tc 2d 2h", "2s 4c 6d Jh Kd"], ("declarer", 0, 10)),
        # A pair beside a sequence of 3 makes a full set: two cards laid off.
        (0, "8c 9c Tc", ["8c 9c Tc 2d 2h", "2s 2c 6d Jh Kd"], ("nullified", None, 0)),
        # An opponent's own hand is no lay-off: its full house (40) beats the
        # straight (20) but no winning card can be part of it.
        (0, "4h 5s 6d 7s 8c", ["4h 5s 6d 7s 8c", "Kh Kd Kc 2d 2h"], ("declarer", 0, 20)),
        # An equal score is not more: 9c makes the straight 5-9, worth 20 as well.
        (0, "4h 5s 6d 7s 8c", ["4h 5s 6d 7s 8c", "9c 2d Jh Qs Kd"], ("declarer", 0, 20)),
        # One card: 3s makes four of a kind (50) from three of a kind.
        (0, "3c 3d 3h", ["3c 3d 3h 9d Kh", "3s 7d 8h Jc Ks"], ("lay_off", 1, 50)),
        # One card, at most 5 cards: Kd pairs the flush's Kh beside 2-3-4 -> full set.
        (0, "2h 3h 4h 9h Kh", ["2h 3h 4h 9h Kh", "Kd 7c 8s Jc Qs"], ("lay_off", 1, 35)),
        # Two cards: 6h 8h turn 5h 7h 9h into a straight flush, dropping 2h Kh.
        (0, "2h 5h 7h 9h Kh", ["2h 5h 7h 9h Kh", "6h 8h Jc Qs 3d"], ("nullified", None, 0)),
        # Two cards: a pair beside the winning pair makes two pairs (5 > 2).
        (0, "9s 9d", ["9s 9d 2c 4h 6s", "Kh Kd 3c 7d Js"], ("nullified", None, 0)),
        # Three cards: trips beside the winning pair make a full house.
        (0, "9s 9d", ["9s 9d 2c 4h 6s", "Kh Kd Kc 7d Js"], ("nullified", None, 0)),
        # A one-card extension overrules a multi-card one of another opponent.
        (0, "9s 9d", ["9s 9d 2c 4h 6s", "Kh Kd 3c 7d Js", "9h 2d 4s 6c Qc"],
         ("lay_off", 2, 15)),
        # Highest one-card extension wins, whatever its seat.
        (0, "3c 3d 3h", ["3c 3d 3h 9d Kh", "4c 5h 7s 9s Jd", "3s 7d 8h Jc Ks"],
         ("lay_off", 2, 50)),
        # Tie: nearest clockwise from the declarer.
        (0, "9s 9d", ["9s 9d 2c 4h 6s", "9h 2d 4s 6c Qc", "9c 3d 5s 7c Kc"],
         ("lay_off", 1, 15)),
        (1, "9s 9d", ["9c 3d 5s 7c Kc", "9s 9d 2c 4h 6s", "9h 2d 4s 6c Qc"],
         ("lay_off", 2, 15)),
        (2, "9s 9d", ["9c 3d 5s 7c Kc", "9h 2d 4s 6c Qc", "9s 9d 2c 4h 6s"],
         ("lay_off", 0, 15)),
        # Four of a kind: only a straight flush through one of its cards beats it.
        (0, "7c 7d 7h 7s", ["7c 7d 7h 7s 2c", "8h 9h Th Jh 2d"], ("nullified", None, 0)),
        (0, "7c 7d 7h 7s", ["7c 7d 7h 7s 2c", "Kh Kd Kc 2s 2h"], ("declarer", 0, 50)),
        # A straight flush is beaten only by the royal flush.
        (0, "9h Th Jh Qh Kh", ["9h Th Jh Qh Kh", "Ah 2c 3c 4c 5c"], ("lay_off", 1, 100)),
        (0, "Th Jh Qh Kh Ah", ["Th Jh Qh Kh Ah", "9h 8h 7h 6h 5h"], ("declarer", 0, 100)),
    ],
)
def test_lay_off_outcomes(
    declarer: int, winning: str, hands: list[str], expected: tuple[str, int | None, int]
) -> None:
    assert lay_off(declarer, winning, hands) == expected


def test_lay_off_witness_names_the_cards() -> None:
    single, multi = extensions(cards("3c 3d 3h"), cards("3s 7d 8h Jc Ks"), 15, seat=1)
    assert single is not None and single.to_dict() == {
        "seat": 1, "laid_off": ["3s"], "category": "four_of_a_kind",
        "cards": ["3c", "3d", "3h", "3s"], "points": 50,
    }
    assert multi is None
    single, multi = extensions(cards("2h 5h 7h 9h Kh"), cards("6h 8h Jc Qs 3d"), 25)
    assert single is None and multi is not None
    assert multi.category == "straight_flush" and multi.cards == tuple(cards("5h 6h 7h 8h 9h"))


def brute_extensions(winning: list[int], hand: list[int], above: int) -> tuple[int, int]:
    """Best one-card and multi-card extension points, by trying every card set."""
    single = multi = 0
    pool = winning + hand
    for size in range(2, 6):
        for combo in itertools.combinations(pool, size):
            from_hand = sum(1 for c in combo if c in hand)
            if not 1 <= from_hand < size:
                continue
            found = defined_categories(combo)
            if found and POINTS[found[0]] > above:
                if from_hand == 1:
                    single = max(single, POINTS[found[0]])
                else:
                    multi = max(multi, POINTS[found[0]])
    return single, multi


@st.composite
def declaration_and_hand(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    rank_pool = draw(st.lists(st.integers(0, 12), min_size=4, max_size=13, unique=True))
    suit_pool = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True))
    near = sorted(r * 4 + s for r in rank_pool for s in suit_pool)
    if len(near) < 10:
        near = list(range(52))
    chosen = draw(st.permutations(near))[:10]
    found = declarations(chosen[:5])
    if not found:
        found = [("pair", tuple(chosen[:1]))]
    category, winning = found[draw(st.integers(0, len(found) - 1))]
    hand = [c for c in chosen[5:] if c not in winning]
    return list(winning), hand, POINTS[category] if len(winning) > 1 else 2


@settings(max_examples=200, deadline=None)
@given(declaration_and_hand())
def test_lay_off_search_equals_brute_force(case: tuple[list[int], list[int], int]) -> None:
    winning, hand, above = case
    best_single, best_multi = brute_extensions(winning, hand, above)
    single, multi = _search(Pool(card_bits(winning), card_bits(hand)), above, first_single=True)
    assert (single[0].points if single else 0) == best_single
    if not best_single:
        assert (multi[0].points if multi else 0) == best_multi
    ext_single, ext_multi = extensions(winning, hand, above)
    assert (ext_single.points if ext_single else 0) == best_single
    assert (ext_multi.points if ext_multi else 0) == best_multi
    for ext in (ext_single, ext_multi):
        if ext is not None:
            assert forms(ext.category, ext.cards)
            assert set(ext.laid) == set(ext.cards) & set(hand)
            assert set(ext.cards) & set(winning) and set(ext.cards) <= set(winning) | set(hand)
    assert ext_single is None or len(ext_single.laid) == 1
    assert ext_multi is None or len(ext_multi.laid) >= 2


def general_resolution(declarer: int, winning: list[int], points: int,
                       hands: list[list[int]]) -> tuple[str, int | None, int, Any]:
    """The lay-off rule from :func:`extensions` (the general, unpruned search)
    seat by seat: the best one-card extension (nearest on a tie), else the
    nearest seat's multi-card one nullifies."""
    n = len(hands)
    best = nullifier = None
    for offset in range(1, n):
        seat = (declarer + offset) % n
        single, multi = extensions(winning, hands[seat], points, seat)
        if single is not None and (best is None or single.points > best.points):
            best = single
        elif single is None and multi is not None and nullifier is None:
            nullifier = multi
    if best is not None:
        return "lay_off", best.seat, best.points, best.to_dict()
    if nullifier is not None:
        return "nullified", None, 0, nullifier.to_dict()
    return "declarer", declarer, points, None


@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_resolution_equals_the_general_search(players: int) -> None:
    """resolve_declaration's shortcuts (a pair's lay-off found directly, one-card
    lay-offs searched first in categories small enough) change no outcome and
    no witness."""
    rng = random.Random(players)
    outcomes: Counter[str] = Counter()
    for _ in range(1500):
        deck = rng.sample(range(52), 5 * players)
        hands = [sorted(deck[seat * 5:seat * 5 + 5]) for seat in range(players)]
        declarer = rng.randrange(players)
        found = declarations(hands[declarer])
        if not found:
            continue
        category, winning = found[rng.randrange(len(found))]
        result = resolve_declaration(declarer, winning, POINTS[category], hands)
        got = (result.outcome, result.scorer, result.points,
               None if result.lay_off is None else result.lay_off.to_dict())
        assert got == general_resolution(declarer, list(winning), POINTS[category], hands)
        outcomes[f"{category} {result.outcome}"] += 1
    # Pairs lay off, are nullified and score; other categories are met too.
    assert all(outcomes[f"pair {outcome}"] for outcome in ("lay_off", "nullified", "declarer"))
    assert sum(n for key, n in outcomes.items() if not key.startswith("pair ")) > 20


# -- play ----------------------------------------------------------------------------


def test_deal_first_player_and_first_turn() -> None:
    state = new_state(["2c 5d 8h Jc Ks", "3c 6d 9h Qc Kd"], stock="4s 7s")
    assert state.hands[0] == cards("2c 5d 8h Jc Ks")
    assert state.hands[1] == cards("3c 6d 9h Qc Kd")
    assert state.dealer == 0 and state.deciding_seats() == (1,)
    # The first player has no discard to take.
    assert state.legal_actions(1) == ("draw stock",)
    start = len(state.events)
    state.apply_action("draw stock")
    assert state.observation(1)["drawn"] == "4s"
    assert state.legal_actions(1) == (
        "discard 3c", "discard 4s", "discard 6d", "discard 9h", "discard Qc", "discard Kd"
    )
    public = [e for e in state.events[start:] if e.to is None]
    private = [e for e in state.events[start:] if e.to is not None]
    assert [e.kind for e in public] == ["draw"] and "4s" not in visible_strings(public[0].data)
    assert [(e.kind, e.to, e.data["card"]) for e in private] == [("drawn", (1,), "4s")]
    state.apply_action("discard 4s")  # rejecting the drawn card
    assert state.pile == cards("4s") and state.deciding_seats() == (0,)
    assert state.legal_actions(0)[:2] == ("draw stock", "take discard")


def test_taken_discard_may_not_be_discarded_and_is_public() -> None:
    state = new_state(["2c 5d 8h Jc Ks", "3c 6d 9h Qc Kd"], stock="4s 7s")
    state.apply_action("draw stock")
    state.apply_action("discard 4s")
    state.apply_action("take discard")
    assert "discard 4s" not in state.legal_actions(0)
    assert len(state.legal_actions(0)) == 5
    assert sent(state.observation(1))["known_cards"] == [["4s"], []]
    assert state.observation(1)["taken"] == "4s"
    with pytest.raises(IllegalActionError):
        state.apply_action("discard 4s")
    state.apply_action("discard 2c")
    assert state.observation(1)["discard_top"] == "2c"
    assert sent(state.observation(1))["discard_pile"] == ["2c"]
    assert sent(state.observation(0))["hand"] == ["4s", "5d", "8h", "Jc", "Ks"]


def test_declare_only_at_turn_start_and_scores() -> None:
    state = new_state(["2c 5d 8h Jc Ks", "Jh Qh Kh 3c 4d"], stock="4s 7s")
    legal = state.legal_actions(1)
    assert legal[0] == "draw stock"
    assert legal[1:] == ("declare sequence_3 Jh Qh Kh",)
    state.apply_action("draw stock")
    assert not any(a.startswith("declare") for a in state.legal_actions(1))
    state.apply_action("discard 4s")
    state.apply_action("draw stock")
    state.apply_action("discard 7s")
    start = len(state.events)
    state.apply_action("declare sequence_3 Jh Qh Kh")
    assert state.totals == [0, 10]
    end = events_since(state, start, "hand_end")[0]
    assert end["outcome"] == "declarer" and end["scorer"] == 1 and end["scored"] == 10
    assert end["hands"] == [["2c", "5d", "8h", "Jc", "Ks"], ["3c", "4d", "Jh", "Qh", "Kh"]]
    # The scorer deals the next hand; the player on its left starts.
    assert end["next_dealer"] == 1 and state.dealer == 1
    assert state.hand_number == 2 and state.deciding_seats() == (0,)


def test_single_card_lay_off_scores_for_the_opponent_and_deals_next() -> None:
    state = new_state(["Qd 5d 8h Jc Ks", "Qh Qs Qc 3c 4d"], stock="4s 7s")
    start = len(state.events)
    state.apply_action("declare three_of_a_kind Qc Qh Qs")
    end = events_since(state, start, "hand_end")[0]
    assert end["outcome"] == "lay_off" and end["scorer"] == 0 and end["scored"] == 50
    assert end["lay_off"]["laid_off"] == ["Qd"]
    assert state.totals == [50, 0] and state.dealer == 0


def test_nullified_hand_scores_nothing_and_the_declarer_deals() -> None:
    state = new_state(["Kd Kh 8h Jc 2s", "9s 9d 3c 4d 6h"], stock="4s 7s")
    start = len(state.events)
    state.apply_action("declare pair 9d 9s")
    end = events_since(state, start, "hand_end")[0]
    assert end["outcome"] == "nullified" and end["scorer"] is None and end["scored"] == 0
    assert end["lay_off"]["laid_off"] == ["Kd", "Kh"]
    assert state.totals == [0, 0] and state.dealer == 1


def test_turn_cap_is_a_no_result_hand_and_the_dealer_stays() -> None:
    state = new_state(["2c 5d 8h Jc Ks", "3c 6d 9h Qc Kd"], stock="4s 7s", max_turns=2)
    state.apply_action("draw stock")
    state.apply_action("discard 4s")
    state.apply_action("draw stock")
    start = len(state.events)
    state.apply_action("discard 7s")
    end = events_since(state, start, "hand_end")[0]
    assert end["reason"] == "turn_cap" and end["outcome"] == "no_result"
    assert end["scorer"] is None and state.totals == [0, 0]
    assert state.dealer == 0 and state.hand_number == 2 and state.deciding_seats() == (1,)


def test_stock_empty_reshuffles_the_discard_pile_less_its_top() -> None:
    game = make_game("five-card-rummy", 2, {"max_turns": 400})
    state = game.new_state(3)
    assert isinstance(state, FiveCardRummyState)
    reshuffled = False
    for _ in range(120):
        if state.stock == [] and state.phase == 0:
            top = state.pile[-1]
            below = sorted(state.pile[:-1])
            state.apply_action("draw stock")
            assert state.pile == [top]
            assert sorted([*state.stock, state.drawn]) == below
            assert state.events[-3].kind == "reshuffle"
            reshuffled = True
            break
        state.apply_action("draw stock")
        state.apply_action(f"discard {NAMES[state.drawn]}")
    assert reshuffled


def test_target_ends_the_game_and_places() -> None:
    state = new_state(["2c 5d 8h Jc Ks", "Jh Qh Kh 3c 3d"], target=10)
    state.apply_action("declare sequence_3 Jh Qh Kh")
    assert state.is_terminal() and state.deciding_seats() == ()
    assert state.scores() == [0.0, 10.0] and state.places() == [2, 1]
    assert state.events[-1].kind == "game_end" and state.reveal()["reason"] == "target"
    assert state.reveal()["last_hand"]["hands"][1] == ["3c", "3d", "Jh", "Qh", "Kh"]


def test_max_hands_caps_the_game() -> None:
    state = new_state(["2c 5d 8h Jc Ks", "3c 6d 9h Qc Kd"], max_turns=1, max_hands=1)
    with pytest.raises(GameNotOverError):
        state.scores()
    state.apply_action("draw stock")
    state.apply_action("discard 3c")
    assert state.is_terminal() and state.reveal()["reason"] == "max_hands"
    assert state.scores() == [0.0, 0.0] and state.places() == [1, 1]


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (1, {}),
        (7, {}),
        (2, {"target": 0}),
        (2, {"target": "x"}),
        (2, {"max_hands": 0}),
        (2, {"max_turns": 0}),
        (2, {"colour": 1}),
        (2, {"deck": standard_deck()[:51]}),
    ],
)
def test_invalid_options(players: int, options: dict[str, Any]) -> None:
    with pytest.raises(OptionError):
        make_game("five-card-rummy", players, options)


def test_option_values_reach_the_observation() -> None:
    game = make_game("five-card-rummy", 3, {"target": "50", "max_hands": 7, "max_turns": 9})
    obs = game.new_state(1).observation(1)
    assert (obs["target"], obs["max_hands"], obs["max_turns"]) == (50, 7, 9)
    assert obs["seat"] == 1 and obs["phase"] == "start" and obs["players"] == 3
    assert obs["to_move"] == [1] and obs["turn_number"] == 1 and obs["game"] == "five-card-rummy"
    for gone in ("num_players", "turn"):
        assert gone not in obs


def test_spectator_view_and_int_scores() -> None:
    state = make_game("five-card-rummy", 3, {"target": 20}).new_state(3)
    obs, spectator = state.observation(0), state.observation(None)
    assert spectator["seat"] is None and set(obs) - set(spectator) == {"hand", "drawn"}
    assert {k: v for k, v in obs.items() if k in spectator and k != "seat"} == {
        k: v for k, v in spectator.items() if k != "seat"}
    random_playout(state, random.Random(3))
    assert all(type(score) is int for score in state.scores())
    assert state.observation(None)["to_move"] == []


# -- properties ------------------------------------------------------------------------


class Audit:
    """Checks after every step: card conservation and what each seat may see."""

    def __init__(self, state: FiveCardRummyState) -> None:
        self.seen = 0
        self.snapshot = self.take(state)
        self.scored = 0
        self.check_events(state, self.snapshot)

    @staticmethod
    def take(state: FiveCardRummyState) -> dict[str, Any]:
        return {
            "hands": [set(NAMES[c] for c in h) for h in state.hands],
            "public": {NAMES[c] for c in state.pile}
            | {NAMES[c] for k in state.known for c in k},
        }

    def __call__(self, state: Any) -> None:
        assert isinstance(state, FiveCardRummyState)
        zones = state.card_zones()
        assert Counter(c for z in zones.values() for c in z) == Counter(standard_deck())
        if not state.is_terminal():
            assert all(len(h) == 5 for i, h in enumerate(state.hands)
                       if i != state.current or state.phase == 0)
        after = self.take(state)
        self.check_events(state, after)
        for seat in range(state.num_players):
            shown = CARD_NAMES.intersection(visible_strings(state.observation(seat)))
            assert shown <= after["hands"][seat] | after["public"]
        self.snapshot = after

    def check_events(self, state: FiveCardRummyState, after: dict[str, Any]) -> None:
        before = self.snapshot
        new = state.events[self.seen :]
        self.seen = len(state.events)
        revealed: set[str] = set()
        for event in new:
            if event.kind == "hand_end":
                # Hands are revealed at the end of a hand: the ones held then.
                self.scored += event.data["scored"]
                hands = set(itertools.chain(*event.data["hands"]))
                assert hands <= set().union(*before["hands"])
                assert len(hands) == 5 * state.num_players
                revealed |= hands
            elif event.kind == "discard":
                # Discarding shows the card to all; it came from the discarder's hand.
                assert event.data["card"] in before["hands"][event.data["seat"]]
                revealed.add(event.data["card"])
        for event in new:
            for seat in range(state.num_players):
                if not event.visible_to(seat):
                    continue
                allowed = (before["hands"][seat] | after["hands"][seat] | before["public"]
                           | after["public"] | revealed)
                shown = CARD_NAMES.intersection(visible_strings(event.data))
                assert shown <= allowed, (event, seat)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 6),
    max_turns=st.sampled_from([1, 3, 40, 400]),
    target=st.sampled_from([20, 100]),
)
def test_random_playouts(seed: int, players: int, max_turns: int, target: int) -> None:
    game = make_game("five-card-rummy", players, {"max_turns": max_turns, "target": target,
                                                 "max_hands": 60})
    state = game.new_state(seed)
    assert isinstance(state, FiveCardRummyState)
    audit = Audit(state)
    random_playout(state, random.Random(seed), audit)
    assert state.is_terminal()
    totals = state.totals
    assert sum(totals) == audit.scored
    assert max(totals) >= target or state.hand_number == 60
    assert sum(1 for t in totals if t >= target) <= 1
    assert state.places() == [1 + sum(1 for o in totals if o > t) for t in totals]
    ends = [e.data for e in state.events if e.kind == "hand_end"]
    assert len(ends) == state.hand_number
    for end in ends:
        if end["outcome"] == "declarer":
            assert end["scorer"] == end["declarer"] and end["scored"] == end["points"]
        elif end["outcome"] == "lay_off":
            assert end["scorer"] != end["declarer"] and end["scored"] > end["points"]
            assert len(end["lay_off"]["laid_off"]) == 1
        else:
            assert end["scorer"] is None and end["scored"] == 0


def test_declarations_in_play_match_an_independent_lay_off_check() -> None:
    """Every declared hand's outcome, recomputed by brute force from the reveal."""
    checked = 0
    for seed in range(40):
        game = make_game("five-card-rummy", 2 + seed % 3, {"target": 30})
        state = game.new_state(seed)
        random_playout(state, random.Random(seed))
        for event in state.events:
            if event.kind != "hand_end" or event.data["reason"] != "declared":
                continue
            data = event.data
            winning, above = parse_cards(data["cards"]), data["points"]
            n = len(data["hands"])
            singles: list[tuple[int, int]] = []
            multi = False
            for offset in range(1, n):
                seat = (data["declarer"] + offset) % n
                single, best_multi = brute_extensions(
                    winning, parse_cards(data["hands"][seat]), above)
                if single:
                    singles.append((single, -offset))
                multi = multi or bool(best_multi)
            if singles:
                points, neg = max(singles)
                expected = ("lay_off", (data["declarer"] - neg) % n, points)
            elif multi:
                expected = ("nullified", None, 0)
            else:
                expected = ("declarer", data["declarer"], above)
            assert (data["outcome"], data["scorer"], data["scored"]) == expected
            checked += 1
    assert checked > 100


def test_same_seed_options_and_actions_replay_identically() -> None:
    game = make_game("five-card-rummy", 4, {"target": 60})
    first = game.new_state(11)
    random_playout(first, random.Random(5))
    log = [e for e in first.events]
    # Replay the action log on a fresh state.
    actions = _actions_of(game, 11, random.Random(5))
    second = game.new_state(11)
    for action in actions:
        second.apply_action(action)
    assert second.events == log
    assert second.scores() == first.scores()
    assert second.reveal() == first.reveal()


def _actions_of(game: Any, seed: int, rng: random.Random) -> list[str]:
    state = game.new_state(seed)
    actions = []
    while not state.is_terminal():
        (seat,) = state.deciding_seats()
        state.observation(seat)
        action = rng.choice(state.legal_actions(seat))
        actions.append(action)
        state.apply_action(action)
    return actions


def test_stacked_deck_only_stacks_the_first_hand() -> None:
    deck = stacked_deck(["2c 5d 8h Jc Ks", "Jh Qh Kh 3c 3d"])
    one = make_game("five-card-rummy", 2, {"deck": deck}).new_state(1)
    two = make_game("five-card-rummy", 2, {"deck": deck}).new_state(2)
    assert isinstance(one, FiveCardRummyState) and isinstance(two, FiveCardRummyState)
    assert one.hands == two.hands and one.stock == two.stock
    for state in (one, two):
        state.apply_action("declare sequence_3 Jh Qh Kh")
    assert one.hands != two.hands  # later hands come from each seed


def test_rules_page_lists_every_observation_field() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs/rules/five-card-rummy.md").read_text()
    table = page.split("## Observation", 1)[1].split("## Events", 1)[0]
    documented = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    state = make_game("five-card-rummy", 2).new_state(0)
    assert documented == set(state.observation(1))
    for category in CATEGORIES:
        assert f"`{category}`" in page


def test_rules_page_example_is_real() -> None:
    """The page's request is the engine's, after the decisions it lists."""
    import json
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs/rules/five-card-rummy.md").read_text()
    example = page.split("## Example request and reply", 1)[1]
    request = json.loads(example.split("```json\n")[1].split("```")[0])
    reply = json.loads(example.split("```json\n")[2].split("```")[0])
    state = make_game("five-card-rummy", 3).new_state(13)
    since = 0
    for action in ["draw stock", "discard Ks", "take discard", "discard 3d", "take discard",
                   "discard 6s", "draw stock", "discard 2c"]:
        if state.deciding_seats() == (2,):
            since = len(state.events)
        state.apply_action(action)
    assert request["observation"] == sent(state.observation(2))
    assert tuple(request["legal"]) == state.legal_actions(2)
    assert request["events"] == [e.to_dict() for e in state.events[since:] if e.visible_to(2)]
    assert request["legal"][reply["index"]] == "take discard"
