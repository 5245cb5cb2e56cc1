"""The lab: every Five Arena game as a PettingZoo environment, for bot authors
who simulate, search or train locally (docs/lab.md).

``make("rummy-five", players=4, **options)`` gives an AEC environment whose
``reset(seed=N)`` deals what ``arena play --seed N`` deals.  Needs the
``pettingzoo`` extra (``pip install -e '.[pettingzoo]'``).  Imports the games and
nothing of the runner: no trio, no processes, no clock.
"""

import arena.games  # noqa: F401 - first: the compiled vector encoder's loader (games/native.py)
from arena.env.aec import ArenaEnv, make, rewards_of
from arena.env.vector import VectorEncoder

__all__ = ["ArenaEnv", "VectorEncoder", "make", "rewards_of"]
