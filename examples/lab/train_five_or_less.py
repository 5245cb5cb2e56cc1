"""The lab's loop on five-or-less (docs/lab.md): simulate, train, measure, wrap.

1. Simulate and train: a linear softmax policy (policy.py) learns by self-play
   in the PettingZoo environment (``arena.env.make``), REINFORCE on the game's
   result, numpy alone.
2. Measure: the trained policy against uniformly random legal moves over
   ``--eval-games`` full games, seats alternating, with a one-sided 95 %
   Wilson lower bound on its share of wins; it beats the random bot when that
   bound is above one half.
3. Wrap: a bot directory (``bot.toml``, ``bot.py``, the weights, and copies of
   policy.py, the vector encoding and the protocol SDK) that ``arena check-bot``
   passes and ``arena bot add`` / ``arena submit`` take as it is.

    python examples/lab/train_five_or_less.py --seconds 90 --out lab-bot
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import arena.env.vector
import protocol
from arena.env import make

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy import probabilities, split

HERE = Path(__file__).resolve().parent
GAME = "five-or-less"
PLAYERS = 2
#: A training game is one hand (a limit of 1 ends the game after the first hand:
#: the lower total places first) of at most 60 turns (then every seat scores
#: its hand total): a result every few dozen decisions, not every few thousand.
TRAIN_OPTIONS = {"limit": 1, "max_turns": 60}
#: Rewards are the hand's points against the table's mean: about 20 is a lot.
REWARD_SCALE = 1 / 20
LEARNING_RATE = 0.02
#: z of a one-sided 95 % bound.
Z95 = 1.645


@dataclass
class Evaluation:
    games: int
    wins: float
    lower_bound: float

    @property
    def rate(self) -> float:
        return self.wins / self.games

    @property
    def beats_random(self) -> bool:
        return self.lower_bound > 0.5


def train(seconds: float, seed: int) -> tuple[np.ndarray, int]:
    """Weights after ``seconds`` of self-play, and the number of games played."""
    env = make(GAME, PLAYERS, reward="score", **TRAIN_OPTIONS)
    enc = env.encoder
    weights = np.zeros((enc.slot_size, enc.state_size + 1))
    rng = np.random.default_rng(seed)
    games, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        env.reset(seed=int(rng.integers(2**62)))
        grads = {agent: np.zeros_like(weights) for agent in env.possible_agents}
        result = {}
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                result[agent] = reward * REWARD_SCALE
                env.step(None)
                continue
            legal = int(observation["action_mask"].sum())
            if legal == 1:
                env.step(0)
                continue
            state, slots = split(observation["observation"], enc.state_size, enc.slot_size, legal)
            p = probabilities(weights, state, slots)
            choice = int(rng.choice(legal, p=p))
            # the gradient of log p[choice] for a linear softmax
            grads[agent] += np.outer(slots[choice] - p @ slots, state)
            env.step(choice)
        for agent, grad in grads.items():
            weights += LEARNING_RATE * result[agent] * grad  # zero-sum rewards: no baseline
        games += 1
    return weights, games


def evaluate(weights: np.ndarray, games: int, seed: int) -> Evaluation:
    """The greedy policy against uniformly random legal moves, full rules, in
    every seat equally often; a tie for first counts half."""
    env = make(GAME, PLAYERS)
    enc = env.encoder
    rng = np.random.default_rng(seed + 1)
    wins = 0.0
    for game in range(games):
        mine = f"player_{game % PLAYERS}"
        env.reset(seed=seed * 100_003 + game)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = int(observation["action_mask"].sum())
            if agent != mine:
                env.step(int(rng.integers(legal)))
                continue
            state, slots = split(observation["observation"], enc.state_size, enc.slot_size, legal)
            env.step(int(np.argmax(probabilities(weights, state, slots))))
        places = env.state.places()
        first = [seat for seat, place in enumerate(places) if place == 1]
        if int(mine.removeprefix("player_")) in first:
            wins += 1 / len(first)
    return Evaluation(games, wins, wilson_lower(wins, games))


def wilson_lower(wins: float, games: int, z: float = Z95) -> float:
    """The Wilson score interval's lower end for a share of ``wins`` in ``games``."""
    p = wins / games
    centre = p + z * z / (2 * games)
    margin = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games))
    return (centre - margin) / (1 + z * z / games)


def wrap(weights: np.ndarray, out: Path) -> None:
    """Write the bot directory ``out`` (new or empty; its name is the bot's)."""
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"train: {out} exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    name = out.resolve().name
    env = make(GAME, PLAYERS)
    np.savez(out / "weights.npz", weights=weights, game=GAME, players=PLAYERS,
             kinds=np.array(env.encoder.kinds))
    (out / "bot.py").write_text((HERE / "bot.py").read_text().replace("@NAME@", name))
    shutil.copyfile(HERE / "policy.py", out / "policy.py")
    shutil.copyfile(arena.env.vector.__file__, out / "vector.py")
    sdk = out / "protocol"
    sdk.mkdir()
    for source in sorted(Path(protocol.__file__).parent.glob("*.py")):
        shutil.copyfile(source, sdk / source.name)
    (out / "bot.toml").write_text(
        "# Five Arena bot manifest (docs/bots.md): a policy trained in the lab (docs/lab.md)\n"
        f"name = {json.dumps(name)}\n"
        'command = "python bot.py"  # run in this directory; needs numpy and msgpack\n'
        f"games = [{json.dumps(GAME)}]\n"
        'author = ""\n')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=90.0, help="training time")
    parser.add_argument("--eval-games", type=int, default=400, help="games against random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the bot directory here")
    args = parser.parse_args()
    if args.seconds <= 0 or args.eval_games < 1:
        print("train: --seconds and --eval-games must be positive", file=sys.stderr)
        return 2
    weights, games = train(args.seconds, args.seed)
    result = evaluate(weights, args.eval_games, args.seed)
    verdict = "beats" if result.beats_random else "does NOT beat"
    print(f"trained on {games} self-play games in {args.seconds:g} s; against the random "
          f"bot: {result.wins:g}/{result.games} won ({result.rate:.1%}), one-sided 95% lower "
          f"bound {result.lower_bound:.1%}: it {verdict} the random bot")
    if args.out is not None:
        wrap(weights, args.out)
        print(f"wrote {args.out}; next, from its parent directory: arena check-bot -g {GAME} "
              f"-b {args.out.name}=\"python {args.out.name}/bot.py\"")
    print(json.dumps({"games_trained": games, "eval_games": result.games, "wins": result.wins,
                      "lower_bound": round(result.lower_bound, 4),
                      "beats_random": result.beats_random}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
