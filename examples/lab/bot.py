"""A bot playing a policy trained in the lab (docs/lab.md): it computes each
legal action's features from the request exactly as the trainer did
(``policy.py``) and plays the action of highest score.

The features do not depend on the table size, so it plays at any size the
game allows; a request of another game gets the default action, index 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from policy import NAMES, features, scores

from protocol import Bot, Request, run

HERE = Path(__file__).resolve().parent


class LabBot(Bot):
    name = "@NAME@"
    version = "1"
    author = "the lab's example"

    def __init__(self) -> None:
        saved = np.load(HERE / "weights.npz")
        if [str(name) for name in saved["names"]] != list(NAMES):
            raise SystemExit("lab bot: weights.npz was trained on other features than policy.py's")
        self.weights = saved["weights"]
        self.game = str(saved["game"])

    def choose(self, request: Request) -> int:
        if request.observation.get("game") != self.game or len(request.legal) < 2:
            return 0
        rows = features(request.observation, request.legal)
        return int(np.argmax(scores(self.weights, rows)))


if __name__ == "__main__":
    run(LabBot())
