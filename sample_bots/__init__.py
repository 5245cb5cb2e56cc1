"""Sample bots.  Each is a module run as ``python -m sample_bots.<module>``.

:data:`HEURISTICS` names each game's heuristic bot (``--strength P --seed S``
weakens it, see :mod:`sample_bots.strength`); :data:`SEARCH` the games' search
bots (determinised Monte Carlo, see :mod:`sample_bots.search`); ``random_bot``
plays any game.

Running a bot imports this package first, so it imports nothing of the arena's
runtime (no trio, no ``arena.runner``): a bot starts as fast as the SDK allows.
The organiser's side (a sample bot as an entrant) is :func:`arena.bots.samples.spec`.
"""

from __future__ import annotations

import sys

RANDOM = "random_bot"
HEURISTICS = {
    "furious-five": "greedy_furious_five",
    "five": "five_heuristic",
    "five-or-less": "five_or_less_heuristic",
    "five-card-rummy": "five_card_rummy_heuristic",
    "rummy-five": "rummy_five_heuristic",
    "octablitz": "octablitz_heuristic",
}

SEARCH = {
    "furious-five": "furious_five_search",
    "five": "five_search",
    "five-card-rummy": "five_card_rummy_search",
}


def command(module: str) -> str:
    """The command line running ``sample_bots.<module>`` with this Python."""
    return f"{sys.executable} -m sample_bots.{module}"

