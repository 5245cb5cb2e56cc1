"""A heuristic five-or-less bot (uses only the SDK; see docs/rules/five-or-less.md).

* Ending the hand: it estimates, from the cards it has not seen, the chance
  that every other player holds more points than it does, and calls when that
  chance is high enough.
* Dropping: it tries every legal drop followed by every pick it could make
  (each card of the previous player's drop, or the stack at its average unseen
  value) and keeps the drop whose resulting hand is best: fewest points, less a
  share of the points it could drop next turn.
* Picking: the same evaluation decides between the stack and each card of the
  previous player's drop.

Deterministic: the same observation and legal list give the same answer.
"""

from __future__ import annotations

from typing import Any

from sample_bots.strength import run_weakened

RANKS = "A23456789TJQK"
SUITS = "cdhs"
VALUE = {r + s: i + 1 for i, r in enumerate(RANKS) for s in SUITS}
ALL_CARDS = tuple(VALUE)
#: Weight of next turn's best drop in a hand's evaluation.
NEXT_DROP_WEIGHT = 0.5
#: Minimum estimated chance of being strictly lowest to end the hand.
CALL_CONFIDENCE = 0.6


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    """Index of the chosen action in ``legal``."""
    phase = observation.get("phase")
    if "call" in legal and _should_call(observation):
        return legal.index("call")
    if phase == "turn":
        return _choose_drop(observation, legal)
    if phase == "draw":
        return _choose_pick(observation, legal)
    return 0


# -- calling --------------------------------------------------------------------
def _unseen(observation: dict[str, Any]) -> list[str]:
    seen = set(observation["hand"])
    seen.update(observation["discards"])
    seen.update(observation["previous_disposal"])
    seen.update(observation["disposal"])
    for cards in observation["known"]:
        seen.update(cards)
    return [c for c in ALL_CARDS if c not in seen]


def _chance_at_most(limit: int, count: int, values: list[int]) -> float:
    """Chance that ``count`` cards drawn (with replacement) from ``values`` sum to <= limit."""
    if limit < count:
        return 0.0
    if not values:
        return 1.0
    share = 1.0 / len(values)
    dist = [0.0] * (limit + 1)
    dist[0] = 1.0
    for _ in range(count):
        nxt = [0.0] * (limit + 1)
        for total, p in enumerate(dist):
            if p:
                for v in values:
                    if total + v <= limit:
                        nxt[total + v] += p * share
        dist = nxt
    return sum(dist)


def _should_call(observation: dict[str, Any]) -> bool:
    me = observation["seat"]
    mine = observation["hand_points"]
    values = [VALUE[c] for c in _unseen(observation)]
    win = 1.0
    for seat, size in enumerate(observation["hand_sizes"]):
        if seat == me or not observation["active"][seat]:
            continue
        known = observation["known"][seat]
        known_total = sum(VALUE[c] for c in known)
        win *= 1.0 - _chance_at_most(mine - known_total, size - len(known), values)
    return win >= CALL_CONFIDENCE


# -- dropping and picking ----------------------------------------------------
def _best_drop_points(hand: list[str]) -> int:
    """Points of the best single disposal the hand allows next turn."""
    best = max((VALUE[c] for c in hand), default=0)
    by_rank: dict[int, int] = {}
    by_suit: dict[str, set[int]] = {}
    for card in hand:
        v = VALUE[card]
        by_rank[v] = by_rank.get(v, 0) + v
        by_suit.setdefault(card[1], set()).add(v)
    best = max(best, *by_rank.values()) if by_rank else best
    for ranks in by_suit.values():
        if len(ranks) < 3:
            continue
        for start in ranks:
            run, total, v = 1, start, start % 13 + 1
            while v in ranks and run < len(ranks):
                run += 1
                total += v
                if run >= 3:
                    best = max(best, total)
                v = v % 13 + 1
    return best


def _evaluate(hand: list[str]) -> float:
    return sum(VALUE[c] for c in hand) - NEXT_DROP_WEIGHT * _best_drop_points(hand)


def _stack_value(observation: dict[str, Any]) -> float:
    unseen = _unseen(observation)
    return sum(VALUE[c] for c in unseen) / len(unseen) if unseen else 7.0


def _after_pick(rest: list[str], picks: list[str], stack: float) -> float:
    """Best evaluation of ``rest`` plus one pick (a visible card or the stack)."""
    base = sum(VALUE[c] for c in rest)
    best = base + stack - NEXT_DROP_WEIGHT * max(_best_drop_points(rest), stack)
    for card in picks:
        best = min(best, _evaluate([*rest, card]))
    return best


def _choose_drop(observation: dict[str, Any], legal: list[str]) -> int:
    hand = observation["hand"]
    picks = observation["previous_disposal"]
    stack = _stack_value(observation)
    best_index, best_value = 0, float("inf")
    for index, action in enumerate(legal):
        if not action.startswith("drop "):
            continue
        dropped = set(action.split()[1:])
        rest = [c for c in hand if c not in dropped]
        value = _after_pick(rest, picks, stack)
        if value < best_value - 1e-9:
            best_index, best_value = index, value
    return best_index


def _choose_pick(observation: dict[str, Any], legal: list[str]) -> int:
    hand = observation["hand"]
    stack = _stack_value(observation)
    best_index = 0
    best_value = (
        sum(VALUE[c] for c in hand)
        + stack
        - NEXT_DROP_WEIGHT * max(_best_drop_points(hand), stack)
    )
    for index, action in enumerate(legal):
        if action == "draw stack" or not action.startswith("draw "):
            continue
        value = _evaluate([*hand, action[5:]])
        if value < best_value - 1e-9:
            best_index, best_value = index, value
    return best_index


if __name__ == "__main__":
    run_weakened(choose, name="five-or-less-heuristic", version="1", author="Five Arena")
