"""Random legal playouts used by every game's property tests."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from arena.games import make_game
from arena.games.base import Action, State
from arena.games.loop import BotChoose, bot_choose, by_seat, play


def random_playout(
    state: State,
    rng: random.Random,
    check: Callable[[State], None] | None = None,
    max_decisions: int = 200_000,
) -> int:
    """Play random legal actions until the game ends, building every deciding
    seat's observation each step (as the arena does) and calling ``check``
    after every step.  Returns the number of decisions made."""
    decisions = 0

    def choose(state: State, seat: int) -> Action:
        nonlocal decisions
        state.observation(seat)
        legal = state.legal_actions(seat)
        assert legal, f"seat {seat} decides but has no legal action"
        assert len(set(legal)) == len(legal), f"duplicate legal actions {legal}"
        decisions += 1
        assert decisions <= max_decisions, "game did not end"
        return rng.choice(legal)

    play(state, choose, check)
    return decisions


def visible_strings(value: object) -> list[str]:
    """Every string anywhere inside a msgpack-like value (for leak checks)."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return out


Chooser = BotChoose


def random_chooser(seed: int) -> Chooser:
    """A uniformly random player, reproducible from ``seed``."""
    rng = random.Random(seed)
    return lambda _observation, legal: rng.randrange(len(legal))


def play_choosers(state: State, choosers: Sequence[Chooser]) -> list[int]:
    """Play to the end, ``choosers[seat]`` deciding for each seat from its
    observation and legal actions (several seats at once in claim windows);
    every answer must be a legal index.  Returns the places."""
    play(state, by_seat([bot_choose(chooser) for chooser in choosers]))
    return state.places()


def duplicate_results(game: str, players: int, seeds: Iterable[int], hero: Chooser,
                      options: dict[str, Any] | None = None) -> list[tuple[int, list[int]]]:
    """Duplicate deals: every seed played once with ``hero`` in each seat and
    random choosers elsewhere.  Returns (hero's seat, places) per game."""
    results = []
    for seed in seeds:
        for seat in range(players):
            choosers = [random_chooser(seed * 100 + s) for s in range(players)]
            choosers[seat] = hero
            state = make_game(game, players, options).new_state(seed)
            results.append((seat, play_choosers(state, choosers)))
    return results


def win_share(results: Sequence[tuple[int, list[int]]]) -> float:
    """Share of games the hero placed first (shared first place counts)."""
    return sum(places[seat] == 1 for seat, places in results) / len(results)


def average_place(results: Sequence[tuple[int, list[int]]]) -> float:
    return sum(places[seat] for seat, places in results) / len(results)


def pair_share(results: Sequence[tuple[int, list[int]]]) -> float:
    """Share of (hero, opponent) pairs the hero beat, draws counting half: the
    virtual games the Elo fit uses; 0.76 is about +200 Elo."""
    score = pairs = 0.0
    for seat, places in results:
        for other, place in enumerate(places):
            if other != seat:
                pairs += 1
                score += 1.0 if places[seat] < place else 0.5 if places[seat] == place else 0.0
    return score / pairs
