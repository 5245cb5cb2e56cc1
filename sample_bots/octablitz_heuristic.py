"""A heuristic octablitz bot (uses only the SDK).

The deal goes to whoever wins the last trick, so the bot keeps its strongest
card (the "keeper") for the end.  Until then it leads the biggest combination it
holds (multiples and runs are rarely beaten and take many cards), else its
strongest spare single; it follows face up with the cheapest play that wins
the trick, and otherwise throws away its weakest, least useful cards face down.
Deterministic: the same observation and legal list give the same choice.
"""

from __future__ import annotations

from typing import Any

from sample_bots.strength import run_weakened

RANKS = "sABCJKL"
SUITS = "br"


def strength(card: str) -> int:
    """Single-card strength: rank first (s lowest, L highest), red over black."""
    return RANKS.index(card[1]) * 2 + SUITS.index(card[0])


def _parse(legal: list[str]) -> list[tuple[str, list[str]]]:
    out = []
    for action in legal:
        verb, *cards = action.split()
        out.append((verb, cards))
    return out


def _keeper(hand: list[str]) -> str | None:
    return max(hand, key=strength) if hand else None


def _lead(hand: list[str], options: list[tuple[str, list[str]]]) -> int:
    # A combination that empties the hand is the last trick: lead the strongest.
    finishing = [i for i, (_, cards) in enumerate(options) if len(cards) == len(hand)]
    if finishing:
        return max(finishing, key=lambda i: max(strength(c) for c in options[i][1]))
    keeper = _keeper(hand)
    best_index, best_key = 0, (-1, -1)
    for i, (_, cards) in enumerate(options):
        if keeper in cards and hand.count(keeper) == len(cards) and len(cards) == 1:
            continue
        key = (len(cards), max(strength(c) for c in cards))
        if key > best_key:
            best_index, best_key = i, key
    return best_index


def _down_cost(cards: list[str], hand: list[str]) -> int:
    """How much throwing ``cards`` away hurts: high cards and multiples are kept."""
    cost = 0
    for card in cards:
        cost += strength(card) * 4
        if hand.count(card) >= 2:
            cost += 20
    return cost


def _follow(observation: dict[str, Any], options: list[tuple[str, list[str]]]) -> int:
    hand: list[str] = observation["hand"]
    ups = [i for i, (verb, _) in enumerate(options) if verb == "up"]
    downs = [i for i, (verb, _) in enumerate(options) if verb == "down"]
    if ups:
        if observation["last_trick"]:
            return max(ups, key=lambda i: strength(options[i][1][0]))
        cheapest = min(ups, key=lambda i: strength(options[i][1][0]))
        keeper = _keeper(hand)
        uses_keeper = keeper in options[cheapest][1] and hand.count(keeper) == 1
        if not uses_keeper or len(hand) == len(options[cheapest][1]):
            return cheapest
    return min(downs, key=lambda i: (_down_cost(options[i][1], hand), i))


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    """Index of the chosen action in ``legal``."""
    options = _parse(legal)
    if observation["phase"] == "lead":
        return _lead(observation["hand"], options)
    return _follow(observation, options)


if __name__ == "__main__":
    run_weakened(choose, name="octablitz-heuristic", version="1", author="Five Arena")
