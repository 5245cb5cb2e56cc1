"""A bot playing a policy trained in the lab (docs/lab.md): it encodes each
request exactly as the environment did while it learned (``vector.py``, a copy
of arena/env/vector.py) and plays the policy's most likely action.

Tables of another size than the one it learned at (the weights fit one size)
get the game's default action, index 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from policy import probabilities, split
from vector import VectorEncoder

from protocol import Bot, Request, run

HERE = Path(__file__).resolve().parent


class LabBot(Bot):
    name = "@NAME@"
    version = "1"
    author = "the lab's example"

    def __init__(self) -> None:
        saved = np.load(HERE / "weights.npz")
        self.weights = saved["weights"]
        self.game = str(saved["game"])
        self.players = int(saved["players"])
        self.encoder = VectorEncoder(self.game, self.players, [str(k) for k in saved["kinds"]])

    def choose(self, request: Request) -> int:
        observation = request.observation
        if observation["game"] != self.game or observation["players"] != self.players:
            return 0
        if len(request.legal) == 1:
            return 0
        vector, _ = self.encoder.encode(observation, request.legal, observation["seat"])
        state, slots = split(vector, self.encoder.state_size, self.encoder.slot_size,
                             len(request.legal))
        return int(np.argmax(probabilities(self.weights, state, slots)))


if __name__ == "__main__":
    run(LabBot())
