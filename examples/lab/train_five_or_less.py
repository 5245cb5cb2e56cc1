"""The lab's loop on five-or-less (docs/lab.md): simulate, train, measure, wrap.

1. Simulate and train: a linear softmax policy over per-action features
   (policy.py) learns by self-play in the PettingZoo environment
   (``arena.env.make``), REINFORCE on each hand's scores, numpy alone, from
   weights at zero.
2. Measure: the trained policy against uniformly random legal moves over
   ``--eval-games`` full games per table size, seats rotating, with a one-sided
   95 % Wilson lower bound on its share of wins; it beats the random bot when
   that bound is above the share a random seat expects (1/players) at every
   size measured.
3. Wrap: a bot directory (``bot.toml``, ``bot.py``, the weights, and copies of
   policy.py and the protocol SDK) that ``arena check-bot`` passes and ``arena
   bot add`` / ``arena submit`` take as it is.

    python examples/lab/train_five_or_less.py --seconds 60 --out lab-bot
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
from typing import Any, NoReturn

import numpy as np

import protocol
from arena.env import make
from arena.env.aec import ArenaEnv

sys.path.insert(0, str(Path(__file__).resolve().parent))
from policy import NAMES, SIZE, features, probabilities

HERE = Path(__file__).resolve().parent
GAME = "five-or-less"
#: A training game is one hand (a limit of 1 ends the game after the first hand)
#: of at most 60 turns (then every seat scores its hand total): the reward is
#: that hand's score, a result every few dozen decisions.
TRAIN_OPTIONS: dict[str, Any] = {"limit": 1, "max_turns": 60}
#: Rewards are the hand's points against the table's mean: about 20 is a lot.
REWARD_SCALE = 1 / 20
LEARNING_RATE = 0.05
#: z of a one-sided 95 % bound.
Z95 = 1.645


@dataclass
class Evaluation:
    """The trained policy's results against random seats at one table size."""

    players: int
    games: int
    wins: float
    lower_bound: float

    @property
    def rate(self) -> float:
        return self.wins / self.games

    @property
    def baseline(self) -> float:
        """The share of wins a seat playing at random expects."""
        return 1 / self.players

    @property
    def beats_random(self) -> bool:
        return self.lower_bound > self.baseline


def decide(env: ArenaEnv, agent: str) -> tuple[np.ndarray, int]:
    """The features of ``agent``'s legal actions, from what a bot would be sent."""
    sent = env.protocol_observation(agent)
    return features(sent["observation"], sent["legal"]), len(sent["legal"])


def train(seconds: float, seed: int, sizes: list[int],
          budget: int | None = None) -> tuple[np.ndarray, int]:
    """Weights after ``seconds`` of self-play at the table ``sizes`` in turn
    (or after ``budget`` one-hand games, whatever the time: the same weights
    from the same seed on any machine), and the number of games played."""
    envs = [make(GAME, n, reward="score", **TRAIN_OPTIONS) for n in sizes]
    weights = np.zeros(SIZE)
    rng = np.random.default_rng(seed)
    games, deadline = 0, time.monotonic() + seconds
    while (games < budget) if budget is not None else (time.monotonic() < deadline):
        env = envs[games % len(envs)]
        env.reset(seed=int(rng.integers(2**62)))
        grads = {agent: np.zeros(SIZE) for agent in env.possible_agents}
        result = {}
        for agent in env.agent_iter():
            _, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                result[agent] = reward * REWARD_SCALE
                env.step(None)
                continue
            rows, legal = decide(env, agent)
            if legal == 1:
                env.step(0)
                continue
            p = probabilities(weights, rows)
            choice = int(rng.choice(legal, p=p))
            grads[agent] += rows[choice] - p @ rows  # the gradient of log p[choice]
            env.step(choice)
        for agent, grad in grads.items():
            weights += LEARNING_RATE * result[agent] * grad  # zero-sum rewards: no baseline
        games += 1
    return weights, games


def evaluate(weights: np.ndarray, players: int, games: int, seed: int) -> Evaluation:
    """The greedy policy in one seat, uniformly random legal moves in the
    others, full rules, the policy's seat rotating; a tie for first counts
    as a share."""
    env = make(GAME, players)
    rng = np.random.default_rng(seed + players)
    wins = 0.0
    for game in range(games):
        seat = game % players
        mine = f"player_{seat}"
        env.reset(seed=seed * 100_003 + game)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if agent != mine:
                env.step(int(rng.integers(int(observation["action_mask"].sum()))))
                continue
            rows, _ = decide(env, agent)
            env.step(int(np.argmax(rows @ weights)))
        assert env.state is not None
        first = [s for s, place in enumerate(env.state.places()) if place == 1]
        if seat in first:
            wins += 1 / len(first)
    return Evaluation(players, games, wins, wilson_lower(wins, games))


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
    np.savez(out / "weights.npz", weights=weights, game=GAME, names=np.array(NAMES))
    (out / "bot.py").write_text((HERE / "bot.py").read_text().replace("@NAME@", name))
    shutil.copyfile(HERE / "policy.py", out / "policy.py")
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


def table_sizes(text: str) -> list[int]:
    """A comma-separated list of table sizes five-or-less allows (2 to 8)."""
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or not all(2 <= n <= 8 for n in sizes):
        raise argparse.ArgumentTypeError(f"table sizes are from 2 to 8, comma-separated: {text!r}")
    return sizes


def as_json(result: Evaluation) -> dict[str, object]:
    return {"players": result.players, "games": result.games, "wins": result.wins,
            "lower_bound": round(result.lower_bound, 4), "baseline": round(result.baseline, 4),
            "beats_random": result.beats_random}


def report(weights: np.ndarray, games: int, seconds: float,
           results: list[Evaluation]) -> None:
    """Print the learned weights and the measurement, in words."""
    print(f"trained on {games} one-hand self-play games in {seconds:.1f} s; weights:")
    for name, weight in zip(NAMES, weights, strict=True):
        print(f"  {name:<22} {weight:+.2f}")
    for r in results:
        verdict = "beats" if r.beats_random else "does NOT beat"
        print(f"{r.players} seats, against random: {r.wins:g}/{r.games} won ({r.rate:.1%}), "
              f"one-sided 95% lower bound {r.lower_bound:.1%} vs a random seat's "
              f"{r.baseline:.1%}: it {verdict} the random bot")


class Parser(argparse.ArgumentParser):
    """Bad flags: one line on stderr, exit status 2 (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"train: {message}\n")


def main() -> int:
    parser = Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="training time in seconds (default 60)")
    parser.add_argument("--games", type=int,
                        help="train on this many one-hand games instead, whatever the time")
    parser.add_argument("--players", type=table_sizes, default=[2, 3, 4],
                        help="table sizes to train at, in turn (default 2,3,4)")
    parser.add_argument("--eval-games", type=int, default=100,
                        help="games against random per table size measured (default 100)")
    parser.add_argument("--eval-players", type=table_sizes, default=[2, 4, 8],
                        help="table sizes to measure at (default 2,4,8)")
    parser.add_argument("--control", action="store_true",
                        help="also measure the untrained policy (weights at zero: index 0)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write the bot directory here")
    args = parser.parse_args()
    if args.seconds <= 0 or args.eval_games < 1 or (args.games is not None and args.games < 1):
        print("train: --seconds, --games and --eval-games must be positive", file=sys.stderr)
        return 2
    started = time.monotonic()
    weights, games = train(args.seconds, args.seed, args.players, args.games)
    seconds = time.monotonic() - started
    results = [evaluate(weights, n, args.eval_games, args.seed) for n in args.eval_players]
    report(weights, games, seconds, results)
    controls = []
    if args.control:
        controls = [evaluate(np.zeros(SIZE), n, args.eval_games, args.seed)
                    for n in args.eval_players]
        for r in controls:
            print(f"control, the untrained policy at {r.players} seats: {r.wins:g}/{r.games} "
                  f"won ({r.rate:.1%}) on the same deals")
    if args.out is not None:
        wrap(weights, args.out)
        print(f"wrote {args.out}; next, from its parent directory: arena check-bot -g {GAME} "
              f"-b {args.out.name}=\"python {args.out.name}/bot.py\"")
    print(json.dumps({
        "games_trained": games, "seconds": round(seconds, 1),
        "weights": dict(zip(NAMES, weights.round(4).tolist(), strict=True)),
        "beats_random": all(r.beats_random for r in results),
        "evaluations": [as_json(r) for r in results], "controls": [as_json(r) for r in controls]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
