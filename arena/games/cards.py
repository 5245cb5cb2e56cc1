"""Cards, decks and dealing, shared by every game (RULINGS: "Cards, decks and dealing").

52-card games name a card rank + suit (``"Th"``, ``"As"``); the joker is ``"X"``.
Rummy-five and octablitz name a card suit + rank (``"rL"``, ``"bs"``).

Piles that are drawn from (stock, deck) are lists whose *last* element is the
top card, so a draw is ``pile.pop()``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from sys import intern
from typing import Final, TypeVar

T = TypeVar("T")

RANKS = "A23456789TJQK"
SUITS = "cdhs"
JOKER = "X"
#: Ordinal of each rank, ace low: A=1 .. K=13.
RANK_ORDINAL = {r: i + 1 for i, r in enumerate(RANKS)}

RUMMY_SUITS = "br"
RUMMY_RANKS = "sABCJKL"
#: Copies of each rank per suit in the 32-card rummy-five deck.
RUMMY_COPIES = {"s": 5, "A": 2, "B": 2, "C": 2, "J": 2, "K": 2, "L": 1}


#: The canonical order of 52-card-deck cards, the order of hands and actions in
#: every game: the joker first, then rank (ace low), then suit c < d < h < s.
#: Card names are interned (here and in :func:`standard_deck`): one object per
#: card, so looking one up or comparing two is a pointer check, not a memcmp.
CARD_ORDER: Final[dict[str, int]] = {JOKER: 0, **{
    intern(r + s): RANK_ORDINAL[r] * 4 + i for r in RANKS for i, s in enumerate(SUITS)}}


def insert_canonical(hand: list[str], card: str) -> None:
    """Put ``card`` into ``hand``, sorted by :data:`CARD_ORDER`, after its equals
    (``bisect.insort`` with a key calls the key per step; compiled, this is a loop in C)."""
    place = CARD_ORDER[card]
    i = len(hand)
    while i and CARD_ORDER[hand[i - 1]] > place:
        i -= 1
    hand.insert(i, card)


def insert_sorted(cards: list[int], card: int) -> None:
    """Put int ``card`` into the sorted ``cards``, after its equals (``bisect.insort``
    for a hand of ints: compiled, a typed loop is cheaper than its generic call)."""
    i = len(cards)
    while i and cards[i - 1] > card:
        i -= 1
    cards.insert(i, card)


def canonical(cards: Sequence[str]) -> list[str]:
    """``cards`` in :data:`CARD_ORDER`."""
    return sorted(cards, key=CARD_ORDER.__getitem__)


def standard_deck(jokers: int = 0) -> list[str]:
    """The 52 cards (suit-major, ace low) plus ``jokers`` jokers."""
    return [intern(r + s) for s in SUITS for r in RANKS] + [JOKER] * jokers


def rummy_deck(remove_one_s_per_suit: bool = False) -> list[str]:
    """The 32-card two-suit deck; octablitz for 3 players drops one s of each suit."""
    cards = []
    for suit in RUMMY_SUITS:
        for rank in RUMMY_RANKS:
            copies = RUMMY_COPIES[rank] - (1 if remove_one_s_per_suit and rank == "s" else 0)
            cards += [suit + rank] * copies
    return cards


def rank_of(card: str) -> str:
    """Rank letter of a 52-card-deck card (``"X"`` for the joker)."""
    return card[0]


def first_hand_deck(
    stacked: Sequence[str] | None, cards: Sequence[str], rng: random.Random
) -> list[str]:
    """The first hand's deck, top card first: the ``deck`` option if given,
    else ``cards`` shuffled by ``rng``."""
    if stacked is not None:
        return list(stacked)
    return shuffled(cards, rng)


def shuffled(cards: Sequence[T], rng: random.Random) -> list[T]:
    """A shuffled copy of ``cards``: Fisher-Yates driven by ``rng.random()``.

    The algorithm of the old ``random.shuffle(x, random)`` (bias below 2**-47
    for 54 cards) and about twice as fast as ``random.shuffle``, which matters:
    dealing is a large share of the time of a short hand.
    """
    out = list(cards)
    rand = rng.random
    for i in range(len(out) - 1, 0, -1):
        j = int(rand() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


def deal(
    deck_top_first: list[T], num_players: int, hand_size: int, first_seat: int
) -> tuple[list[list[T]], list[T]]:
    """Deal one card at a time in turn order from ``first_seat`` until every hand
    holds ``hand_size``; return the hands and the rest as a pile (top card last,
    ready for ``pop()``)."""
    dealt = num_players * hand_size
    if len(deck_top_first) < dealt:
        raise ValueError(
            f"{len(deck_top_first)} cards cannot deal {num_players} hands of {hand_size}")
    hands: list[list[T]] = [[] for _ in range(num_players)]
    # The k-th card dealt goes to the (k mod n)-th seat from first_seat.  A list, not
    # any sequence: compiled, its slices are direct calls (engines deal every hand).
    for offset in range(num_players):
        hands[(first_seat + offset) % num_players] = deck_top_first[offset:dealt:num_players]
    rest = deck_top_first[dealt:]
    rest.reverse()
    return hands, rest
