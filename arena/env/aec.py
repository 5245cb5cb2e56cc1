"""A Five Arena game as a PettingZoo :class:`AECEnv` (docs/lab.md).

Agents are ``player_0 .. player_{n-1}``, one per seat.  The agent to act is a
seat that decides now; an action is an index into that seat's legal actions
(as a bot answers on the wire), the mask marking the indices that exist.  A
claim window, where several seats decide at once, is asked one seat after the
other in the engine's priority order, and the decisions are applied together
when the last one is in: the state does not change in between, so no seat
observes another's answer.  Rewards come at the end of the game, from the
game's scores (or places).
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from arena.env.vector import VectorEncoder
from arena.games import make_game
from arena.games.base import Game, IllegalActionError, Observation, State
from arena.games.loop import as_sent

#: Seeds ``reset`` accepts: those of ``arena play --seed``.
MAX_SEED = 2**63 - 1
REWARDS = ("score", "place")


def agent_name(seat: int) -> str:
    return f"player_{seat}"


def rewards_of(state: State, kind: str) -> list[float]:
    """Each seat's reward for a finished game, zero-sum.

    ``score``: the seat's score minus the table's mean, negated when lower
    scores are better.  ``place``: the mean over opponents of +1 for a better
    place, 0 for the same, -1 for a worse one (the ratings' pairwise results).
    """
    if kind == "place":
        places = state.places()
        n = len(places)
        return [sum((p < q) - (p > q) for q in places) / (n - 1) for p in places]
    scores = [float(s) for s in state.scores()]
    mean = sum(scores) / len(scores)
    sign = 1.0 if state.game.score_order == "higher" else -1.0
    return [sign * (s - mean) for s in scores]


class ArenaEnv(AECEnv[str, dict[str, np.ndarray], int | None]):
    """One game at one table size as an AEC environment; see :func:`make`."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "five_arena_v0", "render_modes": ["ansi"], "is_parallelizable": False}
    agent_selection: str

    def __init__(self, game: Game, reward: str = "score", render_mode: str | None = None) -> None:
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, not {reward!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.game = game
        self.reward_kind = reward
        self.render_mode = render_mode
        self.encoder = VectorEncoder(game.name, game.num_players, game.deck())
        self.possible_agents = [agent_name(s) for s in range(game.num_players)]
        self._seat = {name: seat for seat, name in enumerate(self.possible_agents)}
        vector = gymnasium.spaces.Box(-np.inf, np.inf, (self.encoder.size,), np.float32)
        mask = gymnasium.spaces.Box(0, 1, (self.encoder.max_actions,), np.int8)
        observation = gymnasium.spaces.Dict({"observation": vector, "action_mask": mask})
        action = gymnasium.spaces.Discrete(self.encoder.max_actions)
        self._observation_spaces = dict.fromkeys(self.possible_agents, observation)
        self._action_spaces = dict.fromkeys(self.possible_agents, action)
        self._seeds = random.Random(int.from_bytes(os.urandom(8), "big"))
        self.state: State | None = None
        self.deal_seed: int | None = None

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        """Deal a new game: ``seed`` deals exactly what ``arena play --seed SEED``
        deals; without it, the next seed of a sequence drawn from the last
        seed given (or from the system's entropy)."""
        if seed is not None:
            if not 0 <= seed <= MAX_SEED:
                raise ValueError(f"seed must be from 0 to 2^63 - 1, not {seed}")
            self._seeds = random.Random(seed)
            self.deal_seed = int(seed)
        else:
            self.deal_seed = self._seeds.randrange(MAX_SEED + 1)
        self.state = self.game.new_state(self.deal_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._rewards_cleared = False
        self._pending: dict[int, str] = {}
        self._window: tuple[int, ...] = ()
        self._next_window()

    # -- what an agent sees ------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The vector and the action mask of ``agent`` (all zeros unless it decides)."""
        seat = self._seat[agent]
        state = self.state or self._live()
        legal = () if seat in self._pending else state.legal_actions(seat)
        vector, mask = self.encoder.encode(state.observation(seat), legal, seat)
        return {"observation": vector, "action_mask": mask}

    def protocol_observation(self, agent: str) -> dict[str, Any]:
        """What a bot in ``agent``'s seat would be sent now: ``observation``
        (the protocol's dict, lists as on the wire) and ``legal`` (empty unless
        it decides); an action is an index into ``legal``."""
        seat = self._seat[agent]
        state = self._live()
        legal = [] if seat in self._pending else list(state.legal_actions(seat))
        return {"observation": as_sent(state.observation(seat)), "legal": legal}

    def legal_actions(self, agent: str) -> tuple[str, ...]:
        """``agent``'s legal actions as strings (empty unless it decides now)."""
        seat = self._seat[agent]
        return () if seat in self._pending else self._live().legal_actions(seat)

    # -- acting --------------------------------------------------------------
    def step(self, action: int | None) -> None:
        """Play ``action`` (an index into the legal actions) for the selected agent."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        state = self.state or self._live()
        seat = self._seat[agent]
        legal = state.legal_actions(seat)
        if action is None or not 0 <= int(action) < len(legal):
            raise IllegalActionError(
                f"{agent} chose action {action} but has {len(legal)} legal actions")
        self._cumulative_rewards[agent] = 0.0
        pending = self._pending
        pending[seat] = legal[int(action)]
        if len(pending) < len(self._window):  # pending holds seats of the window only
            self.agent_selection = next(
                self.possible_agents[s] for s in self._window if s not in pending)
            return
        state.apply_actions(pending)
        self._pending = {}
        self._next_window()
        if not self._rewards_cleared:  # the game is over: its rewards
            self._accumulate_rewards()

    def _next_window(self) -> None:
        """Select the first seat of the next decision, or end the game."""
        state = self._live()
        self._clear_rewards()
        if state.is_terminal():
            for agent, reward in zip(self.agents, rewards_of(state, self.reward_kind),
                                     strict=True):
                self.rewards[agent] = reward
                self.terminations[agent] = True
            self._rewards_cleared = False
            self.agent_selection = self.agents[0]
            self._window = ()
            return
        self._window = state.deciding_seats()
        self.agent_selection = self.possible_agents[self._window[0]]

    def _clear_rewards(self) -> None:
        # Rewards are non-zero only from the end of a game on: the other steps
        # skip the loop setting them to 0 (and adding them to the cumulative ones).
        if not self._rewards_cleared:
            super()._clear_rewards()
            self._rewards_cleared = True

    def _live(self) -> State:
        if self.state is None:
            raise RuntimeError("call reset() before using the environment")
        return self.state

    # -- the rest of the AEC interface ------------------------------------------
    def render(self) -> str | None:
        """``ansi``: the spectator's view (public facts only), one line."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        view: Observation = self._live().observation(None)
        return " ".join(f"{key}={value}" for key, value in as_sent(view).items())

    def close(self) -> None:
        self.state = None


def make(game: str, players: int | None = None, *, reward: str = "score",
         render_mode: str | None = None, **options: Any) -> ArenaEnv:
    """A PettingZoo AEC environment of ``game`` at ``players`` seats (default:
    the game's fewest), with the game's ``options`` (as in ``arena play -o``);
    an unknown game, player count or option raises
    :class:`arena.games.base.OptionError`."""
    from arena.games import game_class

    count = game_class(game).min_players if players is None else players
    return ArenaEnv(make_game(game, count, options), reward=reward, render_mode=render_mode)
