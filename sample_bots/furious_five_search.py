"""A determinised Monte Carlo Furious Five bot (see :mod:`sample_bots.search`).

Each decision it deals the unseen cards at random (consistently with every
drop and draw it saw), replays the round on the engine, and rolls every legal
action out with the greedy bot's policy for every seat, to the end of the
round or a horizon of :data:`HORIZON` decisions, where a round still going is
judged by the hand totals.  It plays the action with the best mean chips.

Command line: ``--think SECONDS`` (default 0.2, at most 40% of the move
time), ``--iterations N``, ``--seed S``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from arena.games.base import Action, State
from sample_bots import greedy_furious_five
from sample_bots.search import (
    History,
    Retry,
    SearchBot,
    main,
    place_shown,
    play_order,
    seats_after_dealer,
)

#: Decisions (two a turn) a rollout plays before the hand totals judge it.
HORIZON = 100
#: Chips a point of hand-total lead is worth in a round cut off at the horizon:
#: the lower hand is likelier to call first, and a won call takes the difference.
LEAD_WORTH = 0.5
#: Standard deviation of the chip lead between two seats over one round.
ROUND_SPREAD = 20.0
HAND_SIZE = 5
RANKS = "A23456789TJQK"
NEVER = 1 << 30


@dataclass
class RoundHistory(History):
    """A round's history, and when each seat dropped a single card: its hand
    held no pair and no straight then."""

    singles: list[tuple[int, int]] = field(default_factory=list)


class FuriousFiveSearch(SearchBot):
    """Furious Five: rounds replayed from a stacked deck, greedy rollouts."""

    game: ClassVar[str] = "furious-five"
    drawn_kind: ClassVar[str] = "draw_card"
    horizon: ClassVar[int] = HORIZON

    def heuristic(self, observation: dict[str, Any], legal: list[str]) -> int:
        return greedy_furious_five.choose(observation, legal)

    def start(self, hand_start: Mapping[str, Any]) -> History:
        return RoundHistory(order=play_order(hand_start["first"], self.players),
                            hand_size=HAND_SIZE)

    def read(self, history: History, event: Mapping[str, Any], when: int) -> None:
        assert isinstance(history, RoundHistory)
        kind, seat = event["kind"], event.get("seat", -1)
        if kind == "drop":
            cards = list(event["cards"])
            history.actions.append((seat, "drop " + " ".join(cards)))
            history.reveal(seat, cards, when)
            if len(cards) == 1:
                history.singles.append((seat, when))
        elif kind == "draw" and event["source"] == "deck":
            history.actions.append((seat, "draw deck"))
            history.drew(seat, when)
        elif kind == "draw":
            history.actions.append((seat, "draw " + event["card"]))
            history.takes.append((seat, event["card"], when))

    def virtual_options(self, history: History) -> dict[str, Any]:
        return {**self.options, "rounds": 1, "target": 0}

    def virtual_seats(self, history: History) -> dict[int, int]:
        return seats_after_dealer(history)

    def deal_to(self, history: History, seat: int, slots: list[tuple[int, int]],
                shown: list[tuple[int, str]], positions: list[str | None],
                unseen: list[str], rng: random.Random) -> None:
        """Place ``seat``'s cards so that every single it dropped was legal
        (its hand held no pair and no straight then): each card it showed in
        a random slot late enough, then its hidden cards one at a time from the
        unseen cards that fit.  Retry when no placement fits."""
        assert isinstance(history, RoundHistory)
        singles = [when for s, when in history.singles if s == seat]
        if not singles:
            place_shown(history, seat, slots, shown, positions, unseen, rng)
            return
        ace_high = bool(self.options.get("ace_high"))
        masks = _take_masks(history, seat, singles, ace_high)
        free = list(slots)
        for when, card in shown:
            rank = _rank(card)
            # The latest single before the card was shown that it cannot join.
            block = max((t for i, t in enumerate(singles)
                         if t <= when and not _fits(masks[i], rank, ace_high)), default=-2)
            fitting = [i for i, (slot_time, _) in enumerate(free) if block <= slot_time < when]
            if not fitting:
                raise Retry
            slot_time, position = free.pop(rng.choice(fitting))
            positions[position] = card
            _hold(masks, singles, slot_time, when, rank)
        for slot_time, position in free:
            later = [i for i, t in enumerate(singles) if t > slot_time]
            index = next((i for i, card in enumerate(unseen)
                          if all(_fits(masks[j], _rank(card), ace_high) for j in later)), None)
            if index is None:
                raise Retry
            card = positions[position] = unseen.pop(index)
            _hold(masks, singles, slot_time, NEVER, _rank(card))

    def policy(self, state: State, seat: int, rng: random.Random) -> Action:
        legal = state.legal_actions(seat)
        return legal[greedy_furious_five.choose({}, list(legal))]

    def leaf(self, state: State) -> list[float]:
        """Chips each seat can expect from a round still going: the lower
        hand is likelier to call first, and a won call takes the difference."""
        totals = [state.observation(s)["hand_points"] for s in range(state.num_players)]
        mean = sum(totals) / len(totals)
        return [LEAD_WORTH * (mean - total) * len(totals) / (len(totals) - 1)
                for total in totals]

    def value(self, scores: Sequence[float], me: int) -> float:
        """The chance of finishing the game ahead of each other player, from
        the chips after this round and the rounds left (normal, ROUND_SPREAD
        chips a round); chips themselves in a game played to a target."""
        if self.options.get("target"):
            return super().value(scores, me)
        chips = self.observation["chips"]
        rounds_left = self.options.get("rounds", 10) - self.observation["round"]
        after = [chips[self.real[seat]] + score for seat, score in enumerate(scores)]
        spread = ROUND_SPREAD * math.sqrt(rounds_left)
        chances = [_ahead(after[me] - after[seat], spread)
                   for seat in range(len(after)) if seat != me]
        return sum(chances) / len(chances)


def _ahead(lead: float, spread: float) -> float:
    """Chance that a chip lead survives rounds whose sum spreads this much."""
    if spread == 0:
        return 0.5 if lead == 0 else float(lead > 0)
    return 0.5 * (1 + math.erf(lead / (spread * math.sqrt(2))))


def _rank(card: str) -> int:
    return RANKS.index(card[0]) + 1


def _straight(mask: int, ace_high: bool) -> bool:
    """Whether ranks (bit r for rank r, ace 1) hold three in a row."""
    if ace_high and mask & 2:
        mask |= 1 << 14
    return mask & (mask >> 1) & (mask >> 2) != 0


def _fits(mask: int, rank: int, ace_high: bool) -> bool:
    """Whether a card of ``rank`` joins ranks ``mask`` without a combination."""
    return not mask >> rank & 1 and not _straight(mask | 1 << rank, ace_high)


def _hold(masks: list[int], singles: list[int], enter: int, leave: int, rank: int) -> None:
    """A card of ``rank`` held from after ``enter`` to ``leave``: add it to the
    ranks held at each single drop in between."""
    for i, when in enumerate(singles):
        if enter < when <= leave:
            masks[i] |= 1 << rank


def _take_masks(history: History, seat: int, singles: list[int], ace_high: bool) -> list[int]:
    """Ranks of the cards ``seat`` took in view of everyone, held at each of
    its single drops; Retry if they already hold a combination."""
    shown = sorted((when, card) for s, card, when in history.reveals if s == seat)
    masks = [0] * len(singles)
    for s, card, enter in history.takes:
        if s != seat:
            continue
        leave = next((when for when, other in shown if other == card and when > enter), NEVER)
        rank = _rank(card)
        for i, when in enumerate(singles):
            if enter < when <= leave:
                if not _fits(masks[i], rank, ace_high):
                    raise Retry
                masks[i] |= 1 << rank
    return masks


if __name__ == "__main__":
    main(FuriousFiveSearch, name="furious-five-search")
