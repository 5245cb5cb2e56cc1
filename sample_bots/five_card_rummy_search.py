"""A determinised Monte Carlo Five Card Rummy bot (see :mod:`sample_bots.search`).

Each decision it deals the unseen cards at random (consistently with every
draw, take and discard it saw), replays the hand on the engine, and rolls
every legal action out to the end of the hand, every seat playing a fast
version of the heuristic (:func:`rollout_choice`).  A declaration's value is
thus the engine's own lay-off ruling against the dealt hands.  It plays the
action with the best mean value, the value of a hand being the chance of
reaching the target before each other player after it.

Command line: ``--think SECONDS`` (default 0.2, at most 40% of the move
time), ``--iterations N``, ``--seed S``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from arena.games.base import Action, State
from sample_bots import five_card_rummy_heuristic as rummy
from sample_bots.search import History, SearchBot, main, play_order, seats_after_dealer, share

HAND_SIZE = 5
#: Rollouts declare the best category worth at least this many points.
DECLARE_AT = 20
#: A rollout takes the discard when it improves the kept cards by this much.
TAKE_GAIN = 2.0


class FiveCardRummySearch(SearchBot):
    """Five Card Rummy: hands replayed from a stacked deck, fast heuristic rollouts."""

    game: ClassVar[str] = "five-card-rummy"

    def heuristic(self, observation: dict[str, Any], legal: list[str]) -> int:
        return rummy.choose(observation, legal)

    def start(self, hand_start: Mapping[str, Any]) -> History:
        return History(order=play_order(hand_start["first"], self.players),
                       hand_size=HAND_SIZE)

    def read(self, history: History, event: Mapping[str, Any], when: int) -> None:
        kind, seat = event["kind"], event.get("seat", -1)
        if kind == "draw":
            history.actions.append((seat, "draw stock"))
            history.drew(seat, when)
        elif kind == "take":
            history.actions.append((seat, "take discard"))
            history.takes.append((seat, event["card"], when))
        elif kind == "discard":
            history.actions.append((seat, "discard " + event["card"]))
            history.reveal(seat, [event["card"]], when)

    def virtual_options(self, history: History) -> dict[str, Any]:
        return {**self.options, "max_hands": 1}

    def virtual_seats(self, history: History) -> dict[int, int]:
        return seats_after_dealer(history)

    def likely(self, state: State, seat: int, action: Action) -> bool:
        """The opponents are modelled by the heuristic itself."""
        legal = list(state.legal_actions(seat))
        return legal[rummy.choose(state.observation(seat), legal)] == action

    def value(self, scores: Sequence[float], me: int) -> float:
        """The chance of reaching the target before each other player
        (:func:`share` of the points each still needs), after this hand."""
        target = self.observation["target"]
        before = self.observation["scores"]
        need = [target - before[self.real[seat]] - score for seat, score in enumerate(scores)]
        return sum(share(need[seat], need[me]) for seat in range(len(need))
                   if seat != me) / (len(need) - 1)

    def policy(self, state: State, seat: int, rng: random.Random) -> Action:
        legal = state.legal_actions(seat)
        observation = state.observation(seat)
        return legal[rollout_choice(observation, list(legal))]


def _pair_worth(a: int, b: int) -> float:
    """What cards ``a`` and ``b`` add to :func:`rummy.connection` together."""
    gap = abs((a >> 2) - (b >> 2))
    if gap == 0:
        return 4.0
    if a & 3 != b & 3:
        return 0.0
    if 0 in (a >> 2, b >> 2):  # the ace also sits above the king
        gap = min(gap, 13 - gap)
    return 2.5 if gap == 1 else 1.2 if gap == 2 else 0.0


_PAIR_WORTH = [[_pair_worth(a, b) for b in range(52)] for a in range(52)]


def _discard(hand: Sequence[int], banned: int | None, spread: float) -> tuple[int, float]:
    """(card to discard, what it took from the hand's value): the heuristic's
    best discard, from each card's share of :func:`rummy.hand_value`."""
    suits = [0, 0, 0, 0]
    ranks = [0] * 13
    for card in hand:
        suits[card & 3] += 1
        ranks[card >> 2] += 1
    best: tuple[float, int] | None = None
    for card in hand:
        if card == banned:
            continue
        row = _PAIR_WORTH[card]
        part = sum(row[other] for other in hand) - row[card]
        part += 1.5 * (suits[card & 3] >= 3) + spread * (ranks[card >> 2] == 1)
        if best is None or (part, card) < best:
            best = part, card
    assert best is not None
    return best[1], best[0]


def _worth(hand: Sequence[int], spread: float) -> float:
    return rummy.hand_value(list(hand), spread)


def rollout_choice(observation: Mapping[str, Any], legal: list[str]) -> int:
    """The heuristic without its lay-off risk model (the slow part): declare
    the best category worth :data:`DECLARE_AT` or more, take the discard when
    it connects better, discard the card that connects least."""
    hand = [rummy.card_int(c) for c in observation["hand"]]
    spread = rummy.SPREAD * (observation["players"] - 2)
    if observation["phase"] == "discard":
        taken = observation.get("taken")
        card, _ = _discard(hand, rummy.card_int(taken) if taken else None, spread)
        return legal.index("discard " + rummy.RANKS[card >> 2] + rummy.SUITS[card & 3])
    if len(legal) > 1 and legal[-1].startswith("declare"):
        best = next(i for i, action in enumerate(legal) if action.startswith("declare"))
        if rummy.POINTS[legal[best].split()[1]] >= DECLARE_AT:
            return best
    top = observation.get("discard_top")
    if top is not None and "take discard" in legal:
        card = rummy.card_int(top)
        six = [*hand, card]
        _, lost = _discard(six, card, spread)
        if _worth(six, spread) - lost >= _worth(hand, spread) + TAKE_GAIN:
            return legal.index("take discard")
    return 0


if __name__ == "__main__":
    main(FiveCardRummySearch, name="five-card-rummy-search")
