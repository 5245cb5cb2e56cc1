"""A determinised Monte Carlo bot for five (see :mod:`sample_bots.search`).

Each decision it deals the unseen cards at random (consistently with the up
card, every take, drop and draw it saw, and likelier where the heuristic bot
would have played the opponents' actions), replays the hand on the engine, and
rolls every legal action out to the end of the hand with the heuristic bot for
every seat.  Ending the hand is thus scored exactly against the dealt hands.
It plays the action with the best mean value, the value of a hand being the
chance of outlasting each other player after it (from the points each can
still take before the limit).

Command line: ``--think SECONDS`` (default 0.2, at most 40% of the move
time), ``--iterations N``, ``--seed S``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from arena.games.base import Action, State
from sample_bots import five_heuristic
from sample_bots.search import History, SearchBot, main, share

HAND_SIZE = 5
#: The highest running total the game accepts as its limit: nobody goes out
#: in the one-hand game, so its scores are the hand's.
NO_LIMIT = 1_000_000


class FiveSearch(SearchBot):
    """Five: hands replayed from a stacked deck, heuristic rollouts."""

    game: ClassVar[str] = "five"

    def heuristic(self, observation: dict[str, Any], legal: list[str]) -> int:
        return five_heuristic.choose(observation, legal)

    def start(self, hand_start: Mapping[str, Any]) -> History:
        return History(order=list(hand_start["players"]), hand_size=HAND_SIZE,
                       specials=[hand_start["up_card"]])

    def read(self, history: History, event: Mapping[str, Any], when: int) -> None:
        kind, seat = event["kind"], event.get("seat", -1)
        if kind == "take":
            history.actions.append((seat, "take"))
            history.takes.append((seat, event["card"], when))
        elif kind == "drop":
            cards = list(event["cards"])
            history.actions.append((seat, "drop " + " ".join(cards)))
            history.reveal(seat, cards, when)
            if event["drew"]:
                history.drew(seat, when)

    def virtual_options(self, history: History) -> dict[str, Any]:
        return {**self.options, "limit": NO_LIMIT, "max_hands": 1}

    def virtual_seats(self, history: History) -> dict[int, int]:
        # Only the seats still in play the one-hand game; its seat 0 starts.
        return {seat: i for i, seat in enumerate(history.order)}

    def policy(self, state: State, seat: int, rng: random.Random) -> Action:
        legal = state.legal_actions(seat)
        return legal[five_heuristic.choose(state.observation(seat), list(legal))]

    def value(self, scores: Sequence[float], me: int) -> float:
        """The chance of outlasting each other player (:func:`share` of the
        points each can still take before the limit), after this hand."""
        limit = self.observation["limit"]
        totals = self.observation["totals"]
        room = [limit - totals[self.real[seat]] - score for seat, score in enumerate(scores)]
        return sum(share(room[me], room[seat]) for seat in range(len(room))
                   if seat != me) / (len(room) - 1)


if __name__ == "__main__":
    main(FiveSearch, name="five-search")
