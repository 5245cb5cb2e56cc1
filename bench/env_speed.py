"""The lab's PettingZoo environments: steps per CPU second per game, beside
RLCard's UNO environment in the same run.

    python bench/env_speed.py [--rounds 5] [--slice 0.5] [--cpu N] [--players N]
                              [--game NAME ...]

A step = ``env.last()`` (the selected agent's vector observation and action
mask), a random legal index, ``env.step``; the final dead steps of a game are
not counted.  UNO's step is ``rlcard.make("uno")``'s ``env.step``, which builds
the next state's encoded observation and legal actions, driven as in
``bench/engine_speed.py`` (``pip install -e '.[bench]'``).  The measurement is
engine_speed's: pinned to one CPU, CPU time, the runners taking turns in short
slices of whole games, ``--rounds`` times, the order rotating each round; each
game's rate is printed beside UNO's from the same run with their ratio and the
range of the per-round ratios.
"""

from __future__ import annotations

import random
import sys

from engine_speed import (
    PlayOne,
    Runner,
    interleave,
    measure_flags,
    pin,
    rlcard_player,
    whole_games,
)

from arena.games import game_class, game_names


def env_player(name: str, players: int) -> PlayOne:
    """Plays one whole game in the environment; returns its steps."""
    import numpy as np

    from arena.env import make

    env = make(name, players)
    rng = random.Random(1)

    def play_one() -> int:
        steps = 0
        env.reset(seed=rng.getrandbits(62))
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
            steps += 1
        return steps

    return play_one


def main() -> int:
    args = measure_flags(__doc__.splitlines()[0]).parse_args()
    unknown = [name for name in args.game or () if name not in game_names()]
    if unknown:
        print(f"env_speed: unknown game {unknown[0]!r}", file=sys.stderr)
        return 2
    pin(args.cpu)
    uno_play = rlcard_player("uno")
    if uno_play is None:
        print("env_speed: RLCard is not installed (pip install -e '.[bench]')", file=sys.stderr)
        return 2
    uno = Runner("rlcard uno", 2, whole_games(uno_play))
    runners = []
    for name in args.game or game_names():
        cls = game_class(name)
        players = args.players or max(cls.min_players, min(3, cls.max_players))
        runners.append(Runner(name, players, whole_games(env_player(name, players))))
    everyone = [*runners, uno]
    interleave(everyone, args.rounds, args.slice)
    print(f"pinned to CPU {args.cpu}; CPU time (process_time); {args.rounds} rounds of "
          f"{args.slice:g} s slices per runner, interleaved")
    print(f"{'environment':18}{'players':>8}{'steps/s':>10}{'UNO steps/s':>13}{'ratio':>8}"
          f"{'per round':>13}")
    for runner in runners:
        per_round = [mine / base for mine, base in zip(runner.rounds, uno.rounds, strict=True)]
        print(f"{runner.label:18}{runner.players:>8}{runner.rate:>10,.0f}{uno.rate:>13,.0f}"
              f"{runner.rate / uno.rate:>7.2f}x{min(per_round):>7.2f}-{max(per_round):<5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
