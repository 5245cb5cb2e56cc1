"""A heuristic Five Card Rummy bot (uses only the SDK).

Strategy:

* Keep connected cards: same rank (towards trips, full house, four of a kind)
  and same suit with close ranks (towards sequences, full set, straight flush).
* Take the top discard when it connects better than the stock is likely to.
* Declare when the expected gain of a declaration, after the lay-off risk, is
  worth it.  The risk is estimated from the unseen cards: "killers" are cards
  an opponent could lay off alone to beat the declaration (it then scores
  instead of us), and multi-card lay-offs (which only nullify the hand) are a
  per-category rate measured from random deals.
* With three or more players most points come from one-card lay-offs on the
  others' declarations, so the bot also values holding many different ranks.

Deterministic: the same observation and legal list give the same answer.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb
from typing import Any

from sample_bots.strength import run_weakened

RANKS = "A23456789TJQK"
SUITS = "cdhs"
POINTS = {
    "royal_flush": 100, "straight_flush": 80, "four_of_a_kind": 50, "full_house": 40,
    "full_set": 35, "sequence_4": 30, "flush": 25, "straight": 20, "three_of_a_kind": 15,
    "sequence_3": 10, "two_pairs": 5, "pair": 2,
}
#: Chance that one opponent's random five cards nullify a declaration with a
#: multi-card lay-off (measured on random deals against one opponent).
NULL_RATE = {
    "royal_flush": 0.0, "straight_flush": 0.0, "four_of_a_kind": 0.01, "full_house": 0.02,
    "full_set": 0.22, "sequence_4": 0.3, "flush": 0.27, "straight": 0.32,
    "three_of_a_kind": 0.52, "sequence_3": 0.57, "two_pairs": 0.2, "pair": 0.46,
}
#: Declare only when the expected net points of the best declaration exceed this.
DECLARE_THRESHOLD = 6.0
#: Worth of each distinct rank kept, per opponent beyond the first.
SPREAD = 6.0


def card_int(name: str) -> int:
    return RANKS.index(name[0]) * 4 + SUITS.index(name[1])


def _values(rank: int) -> tuple[int, ...]:
    """Sequence values of a rank: the ace is 1 and 14."""
    return (1, 14) if rank == 0 else (rank + 1,)


def _consecutive(ranks: list[int]) -> bool:
    if len(set(ranks)) != len(ranks):
        return False
    low = sorted(r + 1 for r in ranks)
    if low[-1] - low[0] == len(ranks) - 1:
        return True
    high = sorted(14 if r == 0 else r + 1 for r in ranks)
    return high[-1] - high[0] == len(ranks) - 1


@lru_cache(maxsize=200_000)
def points_of(cards: tuple[int, ...]) -> int:
    """Points of the best category that exactly ``cards`` form (0: none)."""
    n = len(cards)
    ranks = [c >> 2 for c in cards]
    counts = sorted((ranks.count(r) for r in set(ranks)), reverse=True)
    one_suit = len({c & 3 for c in cards}) == 1
    run_ = _consecutive(ranks)
    if n == 2:
        return 2 if counts == [2] else 0
    if n == 3:
        return 15 if counts == [3] else 10 if one_suit and run_ else 0
    if n == 4:
        if counts == [4]:
            return 50
        return 30 if one_suit and run_ else 5 if counts == [2, 2] else 0
    if n != 5:
        return 0
    if one_suit and run_:
        return 100 if set(ranks) == {0, 9, 10, 11, 12} else 80
    if counts == [3, 2]:
        return 40
    if _full_set(cards):
        return 35
    return 25 if one_suit else 20 if run_ else 0


def _full_set(cards: tuple[int, ...]) -> bool:
    for a, b in combinations(cards, 2):
        if a >> 2 == b >> 2:
            rest = [c for c in cards if c not in (a, b)]
            if len({c & 3 for c in rest}) == 1 and _consecutive([c >> 2 for c in rest]):
                return True
    return False


@lru_cache(maxsize=20_000)
def killers(winning: tuple[int, ...]) -> dict[int, int]:
    """Cards that, laid off alone, beat ``winning``: card -> points scored."""
    above = points_of(winning)
    subsets = [s for k in range(1, min(4, len(winning)) + 1) for s in combinations(winning, k)]
    ranks = {c >> 2 for c in winning}
    suits = {c & 3 for c in winning}
    values = {v for c in winning for v in _values(c >> 2)}
    found: dict[int, int] = {}
    for card in range(52):
        if card in winning:
            continue
        near = any(abs(v - w) <= 4 for v in _values(card >> 2) for w in values)
        if card >> 2 not in ranks and not (near and (card & 3 in suits or len(values) >= 4)):
            continue
        best = max(points_of(tuple(sorted((*s, card)))) for s in subsets)
        if best > above:
            found[card] = best
    return found


def declaration_value(category: str, winning: tuple[int, ...], observation: dict[str, Any],
                      unseen: set[int]) -> float:
    """Expected points of declaring now, net of what an opponent may score."""
    points = POINTS[category]
    opponents: int = observation["players"] - 1
    known = {card_int(c) for seat, cards in enumerate(observation["known_cards"])
             if seat != observation["seat"] for c in cards}
    kill = killers(winning)
    if any(c in kill for c in known):
        return -max(kill[c] for c in known if c in kill)
    hidden = max(0, 5 * opponents - len(known))
    unknown = unseen - known
    pool = len(unknown)
    bad = sum(1 for c in unknown if c in kill)
    safe = comb(pool - bad, hidden) / comb(pool, hidden) if pool >= hidden else 1.0
    lost = (sum(kill[c] for c in unknown if c in kill) / bad) if bad else 0.0
    no_null = (1.0 - NULL_RATE[category]) ** opponents
    return safe * no_null * points - (1.0 - safe) * lost


def connection(hand: list[int]) -> float:
    """How well cards work together towards strong categories."""
    score = 0.0
    for a, b in combinations(hand, 2):
        gap = abs((a >> 2) - (b >> 2))
        if gap == 0:
            score += 4.0
        elif a & 3 == b & 3:
            if 0 in (a >> 2, b >> 2):  # the ace also sits above the king
                gap = min(gap, 13 - gap)
            score += 2.5 if gap == 1 else 1.2 if gap == 2 else 0.0
    for suit in range(4):
        same = sum(1 for c in hand if c & 3 == suit)
        if same >= 3:
            score += 1.5 * (same - 2)
    return score


def hand_value(hand: list[int], spread: float) -> float:
    """Connection, plus ``spread`` per distinct rank: with many opponents most
    points come from laying off one card on their declarations, which distinct
    ranks make likelier."""
    return connection(hand) + spread * len({c >> 2 for c in hand})


def best_discard(hand: list[int], banned: int | None, spread: float) -> tuple[int, float]:
    """(card to discard, value of the 5 cards kept)."""
    best: tuple[float, int] | None = None
    for card in sorted(hand):
        if card == banned:
            continue
        kept = [c for c in hand if c != card]
        key = (hand_value(kept, spread), -card)
        if best is None or key > best:
            best = key
    assert best is not None
    return -best[1], best[0]


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    """Index into ``legal`` of the action to play (see the module docstring)."""
    hand = [card_int(c) for c in observation["hand"]]
    spread = SPREAD * (observation["players"] - 2)
    if observation["phase"] == "discard":
        banned = card_int(observation["taken"]) if observation.get("taken") else None
        card, _ = best_discard(hand, banned, spread)
        name = RANKS[card >> 2] + SUITS[card & 3]
        return legal.index("discard " + name)
    seen = set(hand) | {card_int(c) for c in observation["discard_pile"]}
    unseen = set(range(52)) - seen
    best_index, best_value = -1, DECLARE_THRESHOLD
    for index, action in enumerate(legal):
        words = action.split()
        if words[0] != "declare":
            continue
        winning = tuple(sorted(card_int(c) for c in words[2:]))
        value = declaration_value(words[1], winning, observation, unseen)
        if value > best_value:
            best_index, best_value = index, value
    if best_index >= 0:
        return best_index
    top = observation.get("discard_top")
    if top is not None and "take discard" in legal:
        now = hand_value(hand, spread)
        _, with_top = best_discard([*hand, card_int(top)], card_int(top), spread)
        if with_top >= now + 2.0:
            return legal.index("take discard")
    return legal.index("draw stock")


if __name__ == "__main__":
    run_weakened(choose, name="five-card-rummy-heuristic", version="1", author="Five Arena")
