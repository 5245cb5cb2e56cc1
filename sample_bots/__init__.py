"""Sample bots.  Each is a module run as ``python -m sample_bots.<module>``.

:data:`HEURISTICS` names each game's heuristic bot; ``random_bot`` plays any game.
"""

from __future__ import annotations

import sys

from arena.process import BotSpec

RANDOM = "random_bot"
HEURISTICS = {
    "furious-five": "greedy_furious_five",
    "five": "five_heuristic",
    "five-or-less": "five_or_less_heuristic",
    "five-card-rummy": "five_card_rummy_heuristic",
    "rummy-five": "rummy_five_heuristic",
    "octablitz": "octablitz_heuristic",
}


def spec(module: str, name: str | None = None) -> BotSpec:
    """A BotSpec running ``sample_bots.<module>`` with this Python."""
    return BotSpec(name or module, f"{sys.executable} -m sample_bots.{module}")
