"""Recorded games every engine must keep playing identically.

``tests/data/golden/games.json.gz`` holds, for every game and player count, a
few games played with seeded random choices: the action log, every event, the
final scores, places and reveal, and a digest of every observation sent (each
deciding seat's and the spectator's, at every step).  A change that makes an
engine faster must not change any of it, or the games already stored in
people's databases would no longer replay.

Regenerate (only for a deliberate rule change, saying so in the commit)::

    python -m tests.games.test_golden --write
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.games import game_class, game_names, make_game
from arena.games.base import State
from arena.games.loop import play

GOLDEN = Path(__file__).parent.parent / "data" / "golden" / "games.json.gz"
SEEDS = (11, 2024, 987654321)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record_game(name: str, players: int, seed: int) -> dict[str, Any]:
    """Play one seeded random game; everything that must stay the same."""
    state = make_game(name, players).new_state(seed)
    rng = random.Random(seed)
    seen: list[str] = []

    def choose(state: State, seat: int) -> str:
        seen.append(_digest(state.observation(seat)))
        legal = state.legal_actions(seat)
        return legal[rng.randrange(len(legal))]

    def after_step(state: State) -> None:
        seen.append(_digest(state.observation(None)))

    actions = play(state, choose, after_step)
    return {"game": name, "players": players, "seed": seed, "actions": actions,
            "events": _digest([e.to_dict() for e in state.events]),
            "observations": _digest(seen),
            "scores": state.scores(), "places": state.places(), "reveal": state.reveal()}


def cases() -> list[tuple[str, int, int]]:
    out = []
    for name in game_names():
        cls = game_class(name)
        for players in range(cls.min_players, cls.max_players + 1):
            out += [(name, players, seed) for seed in SEEDS]
    return out


@functools.cache
def _load() -> dict[str, dict[str, Any]]:
    with gzip.open(GOLDEN, "rt") as f:
        return {f"{g['game']}/{g['players']}/{g['seed']}": g for g in json.load(f)}


@pytest.mark.parametrize(("name", "players", "seed"), cases())
def test_engine_plays_the_recorded_game(name: str, players: int, seed: int) -> None:
    expected = _load()[f"{name}/{players}/{seed}"]
    got = json.loads(json.dumps(record_game(name, players, seed)))
    assert got["actions"] == expected["actions"]
    assert got == expected


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(GOLDEN, "wt") as f:
        json.dump([record_game(*case) for case in cases()], f, separators=(",", ":"))
    print(f"wrote {GOLDEN}")
