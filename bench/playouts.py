"""Search playouts per CPU second from a mid-game state, with ``State.clone()``,
beside another source tree's in the same run (today's main by default).

    python bench/playouts.py [--baseline-tree /tmp/base_main] [--rounds 5]
                             [--slice 0.3] [--horizon 50] [--cpu N] [--game NAME ...]

A playout is what a search bot's rollout does (``sample_bots/search.py``): clone
the mid-game state, then up to ``--horizon`` random legal decisions (no
observations) or the end of the game.  Each game's mid-game state is the one
reached after 40 seeded random decisions of a 3-player game.  Also measured:
the clone alone, and the two ways a tree search can visit a child of that
state and come back (this tree only): ``State.push`` then ``State.undo``, or a
clone with the decision applied.
The baseline runs in a child process on the other tree, pinned to the same
CPU, its slices interleaved with these (:mod:`tree_worker`); CPU time.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import time
from collections.abc import Callable

from engine_speed import pin
from tree_worker import SERVE_FLAG, Slice, TreeWorker, serve

from arena.games import game_names, make_game
from arena.games.base import Action, State

PLAYERS = 3
#: The measurements also run on the baseline tree (the others are this tree's alone).
COMPARED = ("playout:", "clone:")
MID_GAME = 40  # random decisions before the measured position


def mid_game(name: str) -> State:
    """A seeded position 40 random decisions into a 3-player game."""
    rng = random.Random(7)
    state = make_game(name, PLAYERS).new_state(7)
    for _ in range(MID_GAME):
        state.apply_actions({seat: rng.choice(state.legal_actions(seat))
                             for seat in state.deciding_seats()})
    return state


def slices(name: str, horizon: int) -> dict[str, Slice]:
    """This game's two measurements: whole playouts, and clones alone."""
    root = mid_game(name)
    rng = random.Random(1)

    def playouts(budget: float) -> tuple[int, int, float]:
        gc.collect()
        done = decisions = 0
        start = time.process_time()
        while True:
            state = root.clone()
            for _ in range(horizon):
                if state.is_terminal():
                    break
                state.apply_actions({seat: rng.choice(state.legal_actions(seat))
                                     for seat in state.deciding_seats()})
                decisions += 1
            done += 1
            used = time.process_time() - start
            if used >= budget:
                return done, decisions, used

    def clones(budget: float) -> tuple[int, int, float]:
        gc.collect()
        done = 0
        start = time.process_time()
        while True:
            for _ in range(50):
                root.clone()
            done += 50
            used = time.process_time() - start
            if used >= budget:
                return done, done, used

    def nodes(step: Callable[[dict[int, Action]], None]) -> Slice:
        """One child of the root made and left per item, for every legal decision in turn."""
        children = [{seat: action} for seat in root.deciding_seats()
                    for action in root.legal_actions(seat)]

        def run(budget: float) -> tuple[int, int, float]:
            gc.collect()
            done = 0
            start = time.process_time()
            while True:
                for decisions in children:
                    step(decisions)
                done += len(children)
                used = time.process_time() - start
                if used >= budget:
                    return done, done, used

        return run

    def push_undo(decisions: dict[int, Action]) -> None:
        root.push(decisions)
        root.undo()

    def clone_apply(decisions: dict[int, Action]) -> None:
        root.clone().apply_actions(decisions)

    found = {f"playout:{name}": playouts, f"clone:{name}": clones}
    if hasattr(State, "push"):  # not in a baseline tree from before State.push
        found |= {f"push:{name}": nodes(push_undo), f"clone+apply:{name}": nodes(clone_apply)}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-tree", metavar="DIR", default="/tmp/base_main",
                        help="the other source tree (default /tmp/base_main; '' for none)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--slice", type=float, default=0.3, help="CPU seconds per slice")
    parser.add_argument("--horizon", type=int, default=50, help="decisions per playout")
    parser.add_argument("--cpu", type=int, default=max(os.sched_getaffinity(0)))
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    parser.add_argument(SERVE_FLAG, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    names = args.game or game_names()
    mine = {key: run for name in names for key, run in slices(name, args.horizon).items()}
    if args.serve_slices:
        serve(mine)
        return
    pin(args.cpu)
    worker = None
    theirs: dict[str, Slice] = {}
    if args.baseline_tree:
        worker = TreeWorker(args.baseline_tree, os.path.abspath(__file__),
                            [f"--horizon={args.horizon}",
                             *[arg for name in names for arg in ("--game", name)]])
        theirs = {key: worker.slice(key) for key in mine if key.startswith(COMPARED)}
    runs = [(key, side, run) for key in mine
            for side, run in (("this", mine[key]), ("base", theirs.get(key))) if run]
    totals = {(key, side): [0, 0.0] for key, side, _ in runs}
    for _key, _side, run in runs:
        run(0.05)  # warm-up
    for round_ in range(args.rounds):
        shift = round_ % len(runs)
        for key, side, run in runs[shift:] + runs[:shift]:
            done, _, used = run(args.slice)
            totals[key, side][0] += done
            totals[key, side][1] += used
    if worker is not None:
        worker.close()

    print(f"pinned to CPU {args.cpu}; CPU time; {args.rounds} rounds of {args.slice:g} s slices,"
          f" interleaved; mid-game states of {PLAYERS} players after {MID_GAME} decisions;"
          f" playouts of up to {args.horizon} random decisions")
    if worker is not None:
        print(f"baseline tree: {worker.where}")
    print(f"{'game':16}{'playouts/s':>12}{'base':>10}{'ratio':>8}"
          f"{'clone us':>11}{'base':>8}{'ratio':>8}{'push+undo us':>14}{'clone+apply us':>16}")
    for name in names:
        row = f"{name:16}"
        for kind in ("playout", "clone"):
            done, used = totals[f"{kind}:{name}", "this"]
            base = totals.get((f"{kind}:{name}", "base"))
            if kind == "playout":
                rate = done / used
                row += f"{rate:>12,.0f}"
                if base is not None:
                    base_rate = base[0] / base[1]
                    row += f"{base_rate:>10,.0f}{rate / base_rate:>7.2f}x"
            else:
                cost = used / done * 1e6
                row += f"{cost:>11,.1f}"
                if base is not None:
                    base_cost = base[1] / base[0] * 1e6
                    row += f"{base_cost:>8,.1f}{base_cost / cost:>7.2f}x"
        for kind, width in (("push", 14), ("clone+apply", 16)):
            if (f"{kind}:{name}", "this") in totals:
                done, used = totals[f"{kind}:{name}", "this"]
                row += f"{used / done * 1e6:>{width},.1f}"
        print(row)
    print("ratio: how many times faster this tree is (clone: the baseline's time over this one's);"
          " push+undo and clone+apply: one child of the mid-game state made and left, per"
          " legal decision, the two ways a tree search can walk (this tree only)")

if __name__ == "__main__":
    main()
