"""A heuristic rummy-five bot (uses only the SDK).

* Wins whenever it may (self-draw or Catch).
* Never calls Run or Set: a caller loses Covert, Go and Royals, so it can only
  win with a special combination.
* Discards to keep the four cards with the most live chances: when the kept
  cards are one card away, the number of unseen copies of the cards that
  complete them; otherwise the expected number of such copies after one more
  draw.  It calls Go whenever the kept cards are one card away with a live wait
  (Go allows Catch and adds a point).

Deterministic: ties go to the earlier legal action.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

from sample_bots.strength import run_weakened

SUITS = "br"
RANKS = "sABCJKL"
COPIES = {s + r: c for s in SUITS for r, c in zip(RANKS, (5, 2, 2, 2, 2, 2, 1), strict=True)}
KINDS = tuple(COPIES)


def _is_trio(cards: tuple[str, ...]) -> bool:
    a, b, c = sorted(cards, key=KINDS.index)
    if a == b == c:
        return a[1] == "s"
    if not a[0] == b[0] == c[0]:
        return False
    return a[1] + b[1] + c[1] in ("ABC", "JKL")


@cache
def complete(hand: tuple[str, ...], royals: bool) -> bool:
    """Five cards (sorted) form a pair + trio, or Royals where allowed."""
    counts = Counter(hand)
    pairs = [(k, k) for k, c in counts.items() if c >= 2]
    if counts["bL"] and counts["rL"]:
        pairs.append(("bL", "rL"))
    for pair in pairs:
        rest = list(hand)
        rest.remove(pair[0])
        rest.remove(pair[1])
        if _is_trio(tuple(rest)):
            return True
    if royals:
        suit = hand[0][0]
        return sorted(hand) == sorted(suit + r for r in "JJKKL")
    return False


@cache
def waits(four: tuple[str, ...], royals: bool) -> tuple[str, ...]:
    """The card kinds that complete four cards (sorted)."""
    counts = Counter(four)
    return tuple(k for k in KINDS if counts[k] < COPIES[k]
                 and complete(tuple(sorted((*four, k))), royals))


def _unseen(observation: dict[str, Any]) -> Counter[str]:
    seen = Counter(observation["hand"])
    for pile in observation["discards"]:
        seen.update(pile)
    for trio in observation["exposed"]:
        seen.update(trio)
    return Counter({k: COPIES[k] - seen[k] for k in KINDS if COPIES[k] > seen[k]})


def _live(four: tuple[str, ...], royals: bool, unseen: Counter[str]) -> int:
    return sum(unseen[k] for k in waits(four, royals))


def _value(kept: list[str], trio: list[str], royals: bool, unseen: Counter[str]) -> float:
    """How promising four kept cards are (trio included)."""
    four = tuple(sorted(kept + trio))
    if waits(four, royals):
        return 10.0 + _live(four, royals, unseen)
    total = sum(unseen.values()) or 1
    expected = 0.0
    for draw, copies in unseen.items():
        five = [*kept, draw]
        best = 0
        for drop in set(five):
            rest = list(five)
            rest.remove(drop)
            best = max(best, _live(tuple(sorted(rest + trio)), royals, unseen))
        expected += copies * best
    return expected / total


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    if "win" in legal:
        return legal.index("win")
    if "catch" in legal:
        return legal.index("catch")
    if observation["phase"] == "claim":
        return 0  # pass: no Run/Set
    seat = observation["seat"]
    trio = list(observation["exposed"][seat])  # a tuple in-process, a list on the wire
    royals = not observation["called"][seat]
    unseen = _unseen(observation)
    best_index, best_value = 0, -1.0
    for index, action in enumerate(legal):
        words = action.split()
        if words[0] not in ("discard", "go"):
            continue
        kept = list(observation["hand"])
        kept.remove(words[-1])
        value = _value(kept, trio, royals, unseen)
        if words[0] == "go":
            # Go only with a live wait; it beats the same discard without Go.
            if value <= 10.0:
                continue
            value += 0.5
        if value > best_value:
            best_index, best_value = index, value
    return best_index


if __name__ == "__main__":
    run_weakened(choose, name="rummy-five-heuristic", version="1", author="Five Arena")
