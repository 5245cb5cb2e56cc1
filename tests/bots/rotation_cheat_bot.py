"""A five bot that learns its opponent's hand from an earlier seat rotation of the
deal: ``rotation_cheat_bot.py DIR``, for ``--sandbox none`` only.

It plays as the sample heuristic (:mod:`sample_bots.five_heuristic`) but for its
first turn of a game, when it ends the hand if it believes it holds the lower
total; and it opens a channel on purpose: at its first decision of every game
it appends to ``DIR/records.jsonl`` its seat, the hand it was dealt and the
deal's first face-up card (the bottom of the discard pile, or the card the
opponent took).  At a table of two, a later rotation of a deal deals it the hand
its opponent held in an earlier one, so a recent record of the other seat with
the same first face-up card, a hand disjoint from its own and holding whatever
the opponent dropped before its first turn (the latest such) is its opponent's
starting hand.  Knowing it, at its first turn it ends the hand
only when its total is below its estimate of the opponent's (the known cards not
dropped yet, the rest at the mean of the unseen cards); without a record it
guesses that it is lower and ends the hand at once.  So it scores better only in
the rotations of a deal played after the first: what the rotation-order test
looks for.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # sample_bots, protocol
from protocol import Bot, Request, run
from sample_bots.five_heuristic import POINTS, choose, unseen_stats

RECORDS = Path(sys.argv[1]) / "records.jsonl"
#: Records looked at: a deal's earlier rotation is among the latest few games.
RECENT = 24


class Cheat(Bot):
    name, version = "rotation-cheat", "1"

    def __init__(self) -> None:
        self.first = True
        self.opponent: list[str] | None = None

    def on_game_start(self, message: dict[str, Any]) -> None:
        self.first, self.opponent = True, None

    def choose(self, request: Request) -> int:
        observation, legal = request.observation, request.legal
        if self.first:
            self.first = False
            self.opponent = self.look_up(observation)
        first_turn = "end" in legal and observation["turn_number"] <= 1
        if first_turn and (self.opponent is None
                           or observation["hand_points"] < self.estimate(observation)):
            return legal.index("end")
        return choose(observation, legal)

    def look_up(self, observation: dict[str, Any]) -> list[str] | None:
        """Record this game's start; the opponent's hand from an earlier rotation."""
        hand, discard, seat = observation["hand"], observation["discard"], observation["seat"]
        # The deal's first face-up card: at the bottom of the pile, unless the
        # opponent took it on the turn before this bot's first.
        taken = observation["known_cards"][1 - seat]
        first_up = taken[0] if taken else discard[0] if discard else None
        # What the opponent dropped on that turn came from its starting hand.
        dropped = set(discard) - {first_up}
        found = None
        if RECORDS.exists():
            for line in RECORDS.read_text().splitlines()[-RECENT:]:
                record = json.loads(line)
                theirs = set(record["hand"])
                if (record["first_up"] == first_up and record["seat"] != seat
                        and not theirs & set(hand) and dropped <= theirs):
                    found = record["hand"]
        with open(RECORDS, "a") as out:
            out.write(json.dumps({"first_up": first_up, "seat": seat, "hand": hand}) + "\n")
            out.flush()
            os.fsync(out.fileno())
        return found

    def estimate(self, observation: dict[str, Any]) -> float:
        """The opponent's total: its known cards still held, the rest at the mean."""
        assert self.opponent is not None
        other = 1 - observation["seat"]
        gone = set(observation["discard"]) | set(observation["hand"])
        held = [card for card in self.opponent if card not in gone]
        held += [c for c in observation["known_cards"][other] if c not in held]
        hidden = max(0, observation["hand_sizes"][other] - len(held))
        mean, _ = unseen_stats(observation)
        return sum(POINTS[card] for card in held) + hidden * mean


if __name__ == "__main__":
    run(Cheat())
