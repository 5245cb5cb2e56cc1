"""Random-playout decisions per second for every game, in-process, one core.

    python bench/engine_speed.py [--seconds 3] [--players N] [--game NAME]

A decision = build the deciding seat's observation and legal actions (what the
arena sends), pick one at random, apply it, through the arena's one game loop
(``arena.games.loop.play``, action log included).  The baseline, measured in the same
run when RLCard is installed (``pip install -e '.[bench]'``), is RLCard 1.2.0's
UNO and gin-rummy environments driven the same way (``env.step`` builds the next
state's observation and legal actions).
"""

from __future__ import annotations

import argparse
import random
import time

from arena.games import game_class, game_names, make_game
from arena.games.base import State
from arena.games.loop import play

GOAL = 50_000


def measure_game(name: str, players: int, seconds: float) -> tuple[float, int]:
    game = make_game(name, players)
    rng = random.Random(1)

    def choose(state: State, seat: int) -> str:
        state.observation(seat)
        legal = state.legal_actions(seat)
        return legal[rng.randrange(len(legal))]

    decisions = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        log = play(game.new_state(rng.getrandbits(62)), choose)
        decisions += sum(map(len, log))
        games += 1
    return decisions / (time.perf_counter() - start), games


def measure_rlcard(name: str, seconds: float) -> float | None:
    try:
        import numpy as np
        import rlcard
    except ImportError:
        return None
    env = rlcard.make(name, config={"seed": 0})
    rng = np.random.default_rng(0)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"].keys())
            state, _ = env.step(legal[rng.integers(len(legal))])
            decisions += 1
    return decisions / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--players", type=int, default=None,
                        help="players per game (default: each game's minimum, at least 3 "
                             "where allowed)")
    parser.add_argument("--game", action="append", help="only these games")
    args = parser.parse_args()
    print(f"{'engine':18}{'players':>8}{'decisions/s':>14}{'games':>8}  vs goal {GOAL:,}")
    for name in args.game or game_names():
        cls = game_class(name)
        players = args.players or max(cls.min_players, min(3, cls.max_players))
        rate, games = measure_game(name, players, args.seconds)
        mark = "ok" if rate >= GOAL else "below"
        print(f"{name:18}{players:>8}{rate:>14,.0f}{games:>8}  {rate / GOAL:5.2f}x {mark}")
    for name in ("uno", "gin-rummy"):
        rate = measure_rlcard(name, args.seconds)
        label = f"rlcard {name}"
        if rate is None:
            print(f"{label:18}{'':>8}{'not installed':>14}  (pip install -e '.[bench]')")
        else:
            print(f"{label:18}{2:>8}{rate:>14,.0f}{'':>8}  baseline")


if __name__ == "__main__":
    main()
