"""The lab's PettingZoo environments (arena/env, docs/lab.md): the PettingZoo API
test for every game and table size, the deal of ``reset(seed=N)`` against
``arena play --seed N``, the claim windows, the vector and its mask."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test

from arena.env import make, rewards_of
from arena.env.vector import SCHEMAS
from arena.games import game_class, game_names
from arena.games.base import IllegalActionError, OptionError
from arena.games.loop import as_sent

TABLES = [(name, n) for name in game_names()
          for n in range(game_class(name).min_players, game_class(name).max_players + 1)]

#: Options that make a game short enough for the API test to play it to its end.
SHORT = {"furious-five": {"rounds": 1}, "five": {"limit": 30}, "five-or-less": {"limit": 30},
         "five-card-rummy": {"target": 20}, "rummy-five": {"deals": 1},
         "octablitz": {"deals": 1}}


def play_random(env, rng: random.Random) -> int:
    """Play the environment's game to its end with uniformly random legal
    actions; the number of steps."""
    steps = 0
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(rng.choice(legal)))
        steps += 1
    return steps


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_pettingzoo_api_test(game: str, players: int) -> None:
    with warnings.catch_warnings():
        # A Dict observation with an action mask, as PettingZoo's own card games.
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        warnings.filterwarnings("ignore", message="Observation space for each agent")
        api_test(make(game, players), num_cycles=300)
        api_test(make(game, players, **SHORT[game]), num_cycles=3000)
    # So the API test's play test saw the end of a game (its checks of terminations).
    env = make(game, players, **SHORT[game])
    env.reset(seed=0)  # the API test's play test resets without a seed: any deal
    assert play_random(env, random.Random(0)) < 1000 * players


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_random_game_to_the_end(game: str, players: int) -> None:
    """Every field of every observation is in the game's schema, the mask marks
    exactly the legal actions, the protocol observation is the engine's, and
    the rewards at the end are the scores', zero-sum."""
    env = make(game, players, **SHORT[game])
    env.reset(seed=11)
    rng = random.Random(3)
    total: dict[str, float] = {}
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        total[agent] = total.get(agent, 0.0) + reward
        if terminated or truncated:
            env.step(None)
            continue
        sent = env.protocol_observation(agent)
        seat = int(agent.removeprefix("player_"))
        assert sent["observation"] == as_sent(env.state.observation(seat))
        assert env.encoder.unknown_fields(sent["observation"]) == []
        assert sent["legal"] == list(env.legal_actions(agent))
        mask = observation["action_mask"]
        assert mask.sum() == len(sent["legal"]) and mask[:len(sent["legal"])].all()
        assert observation["observation"].shape == (env.encoder.size,)
        env.step(int(rng.choice(np.flatnonzero(mask))))
    assert set(total) == set(env.possible_agents)
    assert sum(total.values()) == pytest.approx(0.0, abs=1e-9)
    expected = rewards_of(env.state, "score")
    assert [total[agent] for agent in env.possible_agents] == pytest.approx(expected)


def test_rewards_follow_scores_and_places() -> None:
    env = make("five-or-less", 3, limit=30)
    env.reset(seed=4)
    play_random(env, random.Random(1))
    scores = env.state.scores()
    score_rewards = {f"player_{s}": -(scores[s] - sum(scores) / 3) for s in range(3)}
    env = make("five-or-less", 3, reward="place", limit=30)
    env.reset(seed=4)
    totals: dict[str, float] = {}
    rng = random.Random(1)
    for agent in env.agent_iter():
        observation, reward, terminated, _, _ = env.last()
        totals[agent] = reward
        if terminated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    places = env.state.places()
    for seat, place in enumerate(places):
        expected = sum((place < q) - (place > q) for q in places) / 2
        assert totals[f"player_{seat}"] == pytest.approx(expected)
    assert env.state.scores() == scores  # same seed, same random actions: same game
    assert max(score_rewards, key=lambda a: score_rewards[a]) in {
        f"player_{s}" for s, p in enumerate(places) if p == 1}


@pytest.mark.parametrize(("game", "players"), [("rummy-five", 4), ("five-or-less", 3)])
def test_reset_seed_deals_what_arena_play_deals(game: str, players: int) -> None:
    """``arena play --seed N --json``'s game, replayed action by action in the
    environment reset with seed N: the same agents are asked in the same order,
    every action is legal, and the events and scores come out identical."""
    seed = 20260531
    command = [sys.executable, "-m", "arena", "play", "-g", game, "--seed", str(seed),
               "--json", "--sandbox", "none", *["python -m sample_bots.random_bot"] * players]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == 0, done.stderr
    played = json.loads(done.stdout)
    env = make(game, players)
    env.reset(seed=seed)
    for step in played["record"]["actions"]:
        for seat, action in step:
            assert env.agent_selection == f"player_{seat}"
            env.step(env.legal_actions(env.agent_selection).index(action))
    assert env.state.is_terminal()
    assert [event.to_dict() for event in env.state.events] == played["record"]["events"]
    assert env.state.scores() == played["scores"]


def test_claim_window_asks_seats_in_turn_and_hides_answers() -> None:
    """A rummy-five claim window asking several seats: each is selected in
    priority order, a seat's observation does not change while the others
    answer, and the state moves on only when the last one has answered."""
    env = make("rummy-five", 4)
    rng = random.Random(0)
    for seed in range(200):
        env.reset(seed=seed)
        for _ in env.agent_iter():
            if env.terminations[env.agent_selection]:
                break
            window = env.state.deciding_seats()
            if len(window) >= 2:
                before = {s: env.observe(f"player_{s}")["observation"] for s in window}
                events = len(env.state.events)
                for seat in window:
                    assert env.agent_selection == f"player_{seat}"
                    mine = env.observe(env.agent_selection)
                    assert np.array_equal(mine["observation"], before[seat])
                    assert len(env.state.events) == events
                    env.step(0)  # pass
                    assert env.observe(f"player_{seat}")["action_mask"].sum() == 0 or \
                        seat == window[-1]
                assert len(env.state.events) > events or env.state.deciding_seats() != window
                return
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
    pytest.fail("no claim window asked two seats in 200 random games")


def test_seeded_resets_repeat_and_unseeded_ones_follow_the_seed() -> None:
    env = make("octablitz", 3)
    env.reset(seed=9)
    first = env.protocol_observation(env.agent_selection)
    env.reset()
    next_seed = env.deal_seed
    env.reset(seed=9)
    assert env.protocol_observation(env.agent_selection) == first
    env.reset()
    assert env.deal_seed == next_seed


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(OptionError, match="unknown game"):
        make("poker", 2)
    with pytest.raises(OptionError, match="players"):
        make("octablitz", 2)
    with pytest.raises(OptionError, match="unknown option"):
        make("five", 2, colour="red")
    env = make("five", 2)
    with pytest.raises(RuntimeError, match="reset"):
        env.observe("player_0")
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    env.reset(seed=1)
    size = len(env.legal_actions(env.agent_selection))
    with pytest.raises(IllegalActionError, match="legal actions"):
        env.step(size)


def test_every_schema_names_every_field_of_the_rules_pages() -> None:
    """The documented encoding (docs/lab.md) lists every game's fields."""
    text = Path("docs/lab.md").read_text(encoding="utf-8")
    for game, schema in SCHEMAS.items():
        assert f"`{game}`" in text
        for field in schema:
            assert f"`{field}`" in text, (game, field)


def test_the_environment_imports_no_trio() -> None:
    code = ("import sys; from arena.env import make; env = make('rummy-five', 4); "
            "env.reset(seed=1); env.step(0); "
            "bad = sorted(m for m in sys.modules if m == 'trio' or m.startswith(('trio.', "
            "'arena.runner', 'arena.store', 'arena.server'))); print(bad)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.stdout.strip() == "[]"


def test_observations_are_new_writable_arrays() -> None:
    """Each observe() returns arrays of its own: writing into one changes no other."""
    env = make("five", 3)
    env.reset(seed=2)
    agent = env.agent_selection
    first, second = env.observe(agent), env.observe(agent)
    for key in ("observation", "action_mask"):
        assert first[key] is not second[key] and first[key].flags.writeable
        assert np.array_equal(first[key], second[key])
        first[key][:] = 7
        assert not np.array_equal(first[key], env.observe(agent)[key])
        assert np.array_equal(second[key], env.observe(agent)[key])


HASH_GAMES = """
import hashlib, random, sys
import numpy as np
from arena.env import make
from arena.games import game_names, native
digest = hashlib.sha256()
for name in game_names():
    env, rng = make(name, 3 if name != "octablitz" else 4), random.Random(5)
    for seed in range(3):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _, terminated, _, _ = env.last()
            digest.update(observation["observation"].tobytes())
            digest.update(observation["action_mask"].tobytes())
            if terminated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
print(native.status().split(" (")[0], digest.hexdigest())
"""


def test_compiled_and_pure_encoders_write_the_same_bytes() -> None:
    """The vector encoder is compiled with the engines (when they are built): it
    writes the bytes its pure-Python source writes, in every game."""
    def run(pure: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", HASH_GAMES], capture_output=True,
                              text=True, timeout=600, check=True,
                              env={**os.environ, "PYTHONPATH": os.getcwd(), "ARENA_PURE": pure})
        return done.stdout.split()

    compiled, pure = run("0"), run("1")
    assert pure[:3] == ["engines:", "pure", "Python"]
    assert compiled[-1] == pure[-1]


def test_the_encoder_takes_a_numpy_integer_seat() -> None:
    """A lab's code often holds seats as numpy integers: the compiled encoder takes
    them as the pure one does."""
    env = make("five", 3)
    env.reset(seed=4)
    state, encoder = env.state, env.encoder
    seat = state.deciding_seats()[0]
    observation, legal = state.observation(seat), state.legal_actions(seat)
    by_int = encoder.encode(observation, legal, seat)
    by_numpy = encoder.encode(observation, legal, np.int64(seat))
    assert all(np.array_equal(a, b) for a, b in zip(by_int, by_numpy, strict=True))
