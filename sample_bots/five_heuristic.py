"""A heuristic bot for five (uses only the SDK; deterministic).

Each turn it scores every (take or draw, drop) combination by the hand it
leaves: the total now, and the total after next turn's best drop (a pair kept
now sheds twice the points later).  Unknown cards are valued at the mean of the
cards it has not seen.  It ends the hand when a normal approximation of the
opponents' hidden cards says it is very likely strictly lowest.
"""

from __future__ import annotations

import math
from typing import Any

from sample_bots.strength import run_weakened

RANKS = "A23456789TJQK"
SUITS = "cdhs"
JOKER = "X"
POINTS: dict[str, int] = {r + s: min(i + 1, 10) for i, r in enumerate(RANKS) for s in SUITS}
POINTS[JOKER] = 0
FULL_DECK = [r + s for s in SUITS for r in RANKS]

#: Weight of the total after next turn's drop, against the total right now.
LOOKAHEAD = 0.5
#: End the hand when the chance of being strictly lowest is at least this.
CALL_CONFIDENCE = 0.8
#: Opponents shed their highest cards: each of their turns this hand lowers the
#: expected value of their hidden cards by this fraction (down to FLOOR).
SHED_PER_TURN = 0.05
SHED_FLOOR = 0.5


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    """Index into ``legal`` of the chosen action."""
    mean, spread = unseen_stats(observation)
    if "end" in legal and should_end(observation, mean, spread):
        return legal.index("end")
    hand: list[str] = observation["hand"]
    taken: str | None = observation["taken"]
    top: str | None = observation["top_discard"]
    best_index = 0
    best_cost = math.inf
    for index, action in enumerate(legal):
        if not action.startswith("drop "):
            continue
        dropped = action.split()[1:]
        rest = list(hand)
        for card in dropped:
            rest.remove(card)
        if taken is not None:
            cost = hand_cost([*rest, taken], mean)
        else:
            cost = hand_cost(rest, mean) + mean
            if top is not None and "take" in legal:
                take_cost = hand_cost([*rest, top], mean)
                if take_cost < cost - 1e-9:
                    cost = take_cost
                    index = legal.index("take")
        cost += gift_penalty(dropped[-1], mean)
        if cost < best_cost - 1e-9:
            best_cost = cost
            best_index = index
    return best_index


def hand_cost(cards: list[str], mean: float) -> float:
    """Expected badness of holding ``cards``: now and after the next best drop."""
    total = sum(POINTS[c] for c in cards)
    groups: dict[str, int] = {}
    for card in cards:
        groups[card[0]] = groups.get(card[0], 0) + POINTS[card]
    best_drop = max(groups.values(), default=0)
    later = total - max(0.0, best_drop - mean)
    return (1 - LOOKAHEAD) * total + LOOKAHEAD * later


def gift_penalty(card: str, mean: float) -> float:
    """A low card left on top may help the next player."""
    return 0.1 * max(0.0, mean - POINTS[card])


def unseen_stats(observation: dict[str, Any]) -> tuple[float, float]:
    """Mean and standard deviation of the points of the cards this seat has not seen."""
    pool = list(FULL_DECK)
    if observation.get("jokers"):
        pool += [JOKER, JOKER]
    seen: list[str] = list(observation["hand"]) + list(observation["discard"])
    if observation["taken"] is not None:
        seen.append(observation["taken"])
    for seat, known in enumerate(observation["known_cards"]):
        if seat != observation["seat"]:
            seen += known
    for card in seen:
        if card in pool:
            pool.remove(card)
    if not pool:
        return 6.5, 3.5
    values = [POINTS[c] for c in pool]
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return mean, math.sqrt(var)


def should_end(observation: dict[str, Any], mean: float, spread: float) -> bool:
    """True when this seat is very likely strictly lowest."""
    mine = observation["hand_points"]
    seat = observation["seat"]
    players: list[int] = observation["in_hand"]
    rounds = observation["turn_number"] / max(1, len(players))
    hidden_mean = mean * max(SHED_FLOOR, 1 - SHED_PER_TURN * rounds)
    chance = 1.0
    for other in players:
        if other == seat:
            continue
        known: list[str] = observation["known_cards"][other]
        hidden = observation["hand_sizes"][other] - len(known)
        expected = sum(POINTS[c] for c in known) + hidden * hidden_mean
        sd = math.sqrt(hidden) * spread
        if sd == 0:
            # No hidden cards, or every unseen card is worth the same (only
            # tens and faces left): the estimate has no spread.
            chance *= 1.0 if expected > mine else 0.0
            continue
        z = (mine + 0.5 - expected) / sd
        chance *= 1 - 0.5 * (1 + math.erf(z / math.sqrt(2)))
    return chance >= CALL_CONFIDENCE


if __name__ == "__main__":
    run_weakened(choose, name="five-heuristic", version="1", author="Five Arena")
