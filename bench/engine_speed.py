"""Random-playout decisions per CPU second for every game, beside RLCard's UNO.

    python bench/engine_speed.py [--rounds 5] [--slice 0.5] [--cpu N]
                                 [--players N] [--game NAME ...] [--baseline-tree DIR]

A decision = build the deciding seat's observation and legal actions (what the
arena sends), pick one at random, apply it, through the arena's one game loop
(``arena.games.loop.play``, action log included).  The baselines are RLCard
1.2.0's UNO and gin-rummy environments driven the same way (``env.step`` builds
the next state's observation and legal actions; ``pip install -e '.[bench]'``).

To be comparable the figures come from one run on one CPU: the process is
pinned (``--cpu``, default the highest CPU it may use), time is CPU time
(``time.process_time``, so other processes on that CPU do not count), and the
engines and baselines take turns in short slices of whole games, ``--rounds``
times round-robin (the order rotating each round), after one warm-up slice
each.  Each engine's rate is printed beside UNO's from the same run with their
ratio (the goal: at least :data:`GOAL_RATIO` times UNO) and the range of the
per-round ratios.  ``loop floor`` is the same loop over a game whose rules cost
nothing (:class:`FloorGame`): the most any pure-Python engine can reach here,
so the room an engine's own rules have is the gap between it and the goal.
``--baseline-tree DIR`` also runs every engine of another source tree
(today's main: ``git -C /work/main archive REV | tar -x -C DIR``) in a child
process pinned to the same CPU, its slices interleaved with these
(:mod:`tree_worker`), and prints each engine's ratio to its baseline.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from tree_worker import SERVE_FLAG, Slice, TreeWorker, serve

from arena.games import game_class, game_names, make_game
from arena.games.base import Action, Game, Observation, State
from arena.games.loop import play

#: The goal of issue 8: every engine at least this many times UNO's decisions/s.
GOAL_RATIO = 5.0
BASELINES = ("uno", "gin-rummy")

#: Plays one whole game, returns its number of decisions.
PlayOne = Callable[[], int]


def engine_player(name: str, players: int) -> PlayOne:
    return game_player(make_game(name, players))


def game_player(game: Game) -> PlayOne:
    """Whole random games of ``game``: each decision builds the deciding seat's
    observation and legal actions, picks one, applies it (through ``play``)."""
    rng = random.Random(1)

    def choose(state: State, seat: int) -> str:
        state.observation(seat)
        legal = state.legal_actions(seat)
        return legal[rng.randrange(len(legal))]

    def play_one() -> int:
        return sum(map(len, play(game.new_state(rng.getrandbits(62)), choose)))

    return play_one


#: Decisions in one game of :class:`FloorGame`.
FLOOR_DECISIONS = 100


class FloorGame(Game):
    """A game whose rules cost next to nothing: the ceiling of a pure-Python
    engine under this bench's loop (what the loop, the observation's envelope,
    the legal-action cache, validation and the pick cost on their own)."""

    name = "loop-floor"
    min_players = max_players = 3
    score_order = "higher"

    def deck(self) -> list[str]:
        return []

    def new_state(self, seed: int) -> FloorState:
        return FloorState(self, seed)


class FloorState(State):
    """Three seats in turn, three legal actions, a small shared observation."""

    _LEGAL = ("a", "b", "c")

    def __init__(self, game: Game, seed: int) -> None:
        super().__init__(game, seed)
        self.done = 0
        self._deciding: tuple[int, ...] = (0,)
        self._public: Observation = {"phase": "play", "turn_number": 0, "hand_sizes": (5, 5, 5)}

    def deciding_seats(self) -> tuple[int, ...]:
        return self._deciding

    def is_terminal(self) -> bool:
        return not self._deciding

    def _legal_actions(self, seat: int) -> tuple[Action, ...]:
        return self._LEGAL

    def _apply(self, actions: Mapping[int, Action]) -> None:
        self.done += 1
        self._deciding = (self.done % 3,) if self.done < FLOOR_DECISIONS else ()

    def _observation(self, seat: int | None) -> Observation:
        return self._public.copy()

    def _scores(self) -> list[float]:
        return [0.0, 0.0, 0.0]


def rlcard_player(name: str) -> PlayOne | None:
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make(name, config={"seed": 0})
    rng = random.Random(1)  # the engines' chooser, so both pay the same for the pick

    def play_one() -> int:
        decisions = 0
        state, _ = env.reset()
        while not env.is_over():
            legal = list(state["legal_actions"].keys())
            state, _ = env.step(legal[rng.randrange(len(legal))])
            decisions += 1
        return decisions

    return play_one


def whole_games(play_one: PlayOne) -> Slice:
    """Whole games until ``budget`` CPU seconds have passed."""
    def run(budget: float) -> tuple[int, int, float]:
        gc.collect()  # the previous slice's garbage is not this one's cost
        decisions = games = 0
        start = time.process_time()
        while True:
            decisions += play_one()
            games += 1
            used = time.process_time() - start
            if used >= budget:
                return decisions, games, used
    return run


@dataclass
class Runner:
    label: str
    players: int
    slice: Slice
    decisions: int = 0
    games: int = 0
    cpu: float = 0.0
    rounds: list[float] = field(default_factory=list)  # decisions/s of each round

    def run(self, budget: float, record: bool = True) -> None:
        """Whole games until ``budget`` CPU seconds have passed."""
        decisions, games, used = self.slice(budget)
        if record:
            self.decisions += decisions
            self.games += games
            self.cpu += used
            self.rounds.append(decisions / used)

    @property
    def rate(self) -> float:
        return self.decisions / self.cpu


def pin(cpu: int) -> None:
    """Pin every thread of this process (and what it starts later) to ``cpu``."""
    for thread in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ["0"]:
        os.sched_setaffinity(int(thread), {cpu})
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # before numpy is imported


def engine_runners(names: list[str], players: int | None) -> list[Runner]:
    runners = []
    for name in names:
        cls = game_class(name)
        seats = players or max(cls.min_players, min(3, cls.max_players))
        runners.append(Runner(name, seats, whole_games(engine_player(name, seats))))
    return runners


def measure_flags(description: str) -> argparse.ArgumentParser:
    """The flags of a pinned, interleaved measurement of every game (also
    ``bench/env_speed.py``'s)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rounds", type=int, default=5, help="round-robin rounds (default 5)")
    parser.add_argument("--slice", type=float, default=0.5,
                        help="CPU seconds per runner per round, whole games (default 0.5)")
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)),
                        help="the CPU to pin to (default: the highest allowed)")
    parser.add_argument("--players", type=int, default=None,
                        help="players per game (default: each game's minimum, at least 3 "
                             "where allowed)")
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    return parser


def interleave(runners: list[Runner], rounds: int, slice_: float) -> None:
    """A warm-up slice each, then ``rounds`` round-robin rounds, the order rotating."""
    for runner in runners:
        runner.run(min(slice_, 0.2), record=False)
    for round_ in range(rounds):
        shift = round_ % len(runners)
        for runner in runners[shift:] + runners[:shift]:
            runner.run(slice_)


def main() -> None:
    parser = measure_flags(__doc__.splitlines()[0])
    parser.add_argument("--baseline-tree", metavar="DIR",
                        help="also run the engines of this source tree (interleaved)")
    parser.add_argument(SERVE_FLAG, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = args.game or game_names()
    if args.serve_slices:  # the baseline tree's child process (tree_worker)
        serve({runner.label: runner.slice for runner in engine_runners(names, args.players)})
        return
    pin(args.cpu)

    runners = engine_runners(names, args.players)
    old: dict[str, Runner] = {}
    worker = None
    if args.baseline_tree:
        worker = TreeWorker(args.baseline_tree, os.path.abspath(__file__),
                            [arg for name in names for arg in ("--game", name)]
                            + ([f"--players={args.players}"] if args.players else []))
        old = {r.label: Runner(r.label, r.players, worker.slice(r.label)) for r in runners}
    missing = []
    baselines: dict[str, Runner] = {}
    for name in BASELINES:
        play_one = rlcard_player(name)
        if play_one is None:
            missing.append(name)
        else:
            baselines[name] = Runner(f"rlcard {name}", 2, whole_games(play_one))
    # The ceiling of a pure-Python engine: the same loop over rules that cost nothing.
    baselines["floor"] = Runner("loop floor", 3, whole_games(game_player(FloorGame(3))))
    everyone = runners + list(old.values()) + list(baselines.values())

    interleave(everyone, args.rounds, args.slice)
    if worker is not None:
        worker.close()

    print(f"pinned to CPU {args.cpu}; CPU time (process_time); {args.rounds} rounds of "
          f"{args.slice:g} s slices per runner, interleaved; {engines_status()}")
    report(runners, baselines)
    if worker is not None:
        print(f"\nbaseline tree: {worker.where} (same CPU, interleaved)")
        print(f"{'engine':18}{'this d/s':>12}{'baseline d/s':>14}{'ratio':>8}{'per round':>13}")
        for runner in runners:
            base = old[runner.label]
            per_round = [a / b for a, b in zip(runner.rounds, base.rounds, strict=True)]
            print(f"{runner.label:18}{runner.rate:>12,.0f}{base.rate:>14,.0f}"
                  f"{runner.rate / base.rate:>7.2f}x{min(per_round):>7.2f}-{max(per_round):<5.2f}")
    for name in missing:
        print(f"rlcard {name:11} not installed (pip install -e '.[bench]')")


def engines_status() -> str:
    """Compiled or pure Python (``arena.games.native``; a baseline tree may have none)."""
    try:
        from arena.games import native
    except ImportError:
        return "engines: pure Python (no arena.games.native in this tree)"
    return native.status()


def report(runners: list[Runner], baselines: dict[str, Runner]) -> None:
    """Each runner's rate, beside UNO's from the same run where it ran."""
    uno = baselines.get("uno")
    head = f"{'runner':18}{'players':>8}{'decisions/s':>13}{'rounds min-max':>19}{'games':>8}"
    print(head + (f"{'UNO d/s':>10}{'ratio':>8}{'per round':>13}  goal {GOAL_RATIO:g}x UNO"
                  if uno else ""))
    for runner in [*runners, *baselines.values()]:
        line = (f"{runner.label:18}{runner.players:>8}{runner.rate:>13,.0f}"
                f"{min(runner.rounds):>10,.0f}-{max(runner.rounds):<8,.0f}{runner.games:>8}")
        if uno is not None and runner not in baselines.values():
            ratio = runner.rate / uno.rate
            per_round = [mine / base for mine, base in zip(runner.rounds, uno.rounds, strict=True)]
            mark = "ok" if ratio >= GOAL_RATIO else "below"
            line += (f"{uno.rate:>10,.0f}{ratio:>7.2f}x"
                     f"{min(per_round):>7.2f}-{max(per_round):<5.2f}  {mark}")
        elif uno is not None:
            line += f"{'':>10}{runner.rate / uno.rate:>7.2f}x"
        print(line)


if __name__ == "__main__":
    main()
