"""The sample bots worth playing (issue 11 §6): the heuristics' strength knob
and the search bots, in-process and through the real arena."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from arena.games import make_game
from arena.games.base import State
from sample_bots import (
    HEURISTICS,
    SEARCH,
    command,
    five_card_rummy_heuristic,
    five_heuristic,
    greedy_furious_five,
)
from sample_bots.five_card_rummy_search import FiveCardRummySearch
from sample_bots.five_search import FiveSearch
from sample_bots.furious_five_search import FuriousFiveSearch
from sample_bots.search import SearchBot, Settings
from sample_bots.strength import parse, weaken
from tests.playout import play_choosers

#: Short games for the arena runs: (game, options).
SHORT = {
    "furious-five": {"rounds": 2},
    "five": {"limit": 60},
    "five-or-less": {"limit": 20},
    "five-card-rummy": {"target": 20},
    "rummy-five": {"deals": 2},
    "octablitz": {"deals": 2},
}


def arena_play(game: str, bots: list[str], *extra: str) -> dict[str, Any]:
    """One ``arena play --json`` game, short options, seed 3."""
    options = [f"-o{key}={value}" for key, value in SHORT[game].items()]
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "play", "-g", game, "--seed", "3", "--json",
         *options, *extra, *bots],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def decisions(game: str, players: int, seed: int, limit: int = 300) -> list[tuple[dict, list]]:
    """(observation, legal) of the first decisions of a random game."""
    state = make_game(game, players).new_state(seed)
    rng = random.Random(seed)
    out = []
    while not state.is_terminal() and len(out) < limit:
        seat = state.deciding_seats()[0]
        legal = list(state.legal_actions(seat))
        out.append((state.observation(seat), legal))
        state.apply_action(rng.choice(legal))
    return out


# -- the strength knob --------------------------------------------------------------

def test_strength_one_is_the_heuristic_and_zero_is_uniformly_random() -> None:
    assert weaken(five_heuristic.choose, 1.0, seed=4) is five_heuristic.choose
    positions = [d for seed in range(6) for d in decisions("five", 3, seed) if len(d[1]) >= 4]
    weak = weaken(five_heuristic.choose, 0.0, seed=4)
    picks = [weak(observation, legal) for observation, legal in positions]
    heuristic = [five_heuristic.choose(observation, legal) for observation, legal in positions]
    assert len(positions) >= 100
    assert sum(a != b for a, b in zip(picks, heuristic, strict=True)) > len(positions) / 2
    # Uniform: the first of n actions about 1/n of the time.
    expected = sum(1 / len(legal) for _, legal in positions)
    assert abs(sum(pick == 0 for pick in picks) - expected) < 4 * expected ** 0.5


def test_strength_is_reproducible_from_its_seed() -> None:
    positions = decisions("furious-five", 2, 2, limit=80)
    runs = [[weaken(greedy_furious_five.choose, 0.5, seed)(o, legal) for o, legal in positions]
            for seed in (9, 9, 10)]
    assert runs[0] == runs[1] != runs[2]


@pytest.mark.parametrize(("argv", "expected"), [
    ([], (1.0, 0)), (["--strength", "0.25"], (0.25, 0)),
    (["--strength=0", "--seed=12"], (0.0, 12)), (["--seed", "3", "--strength", "1"], (1.0, 3)),
])
def test_strength_command_line(argv: list[str], expected: tuple[float, int]) -> None:
    assert parse(argv) == expected


@pytest.mark.parametrize("argv", [["--strength", "1.5"], ["--strength"], ["--speed", "1"],
                                  ["--seed", "x"]])
def test_strength_command_line_errors(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse(argv)


def test_strengths_order_the_results() -> None:
    """Heads-up five on duplicate deals: strength 1 beats 0.5, which beats 0."""
    def share(strong: float, weak: float) -> float:
        won = 0.0
        for seed in range(30):
            for seat in (0, 1):
                bots = [weaken(five_heuristic.choose, weak, seed),
                        weaken(five_heuristic.choose, weak, seed + 1)]
                bots[seat] = weaken(five_heuristic.choose, strong, seed + 2)
                places = play_choosers(make_game("five", 2).new_state(seed), bots)
                won += 1.0 if places[seat] < places[1 - seat] else 0.5 * (places[0] == places[1])
        return won / 60

    assert share(0.5, 0.0) > 0.6
    assert share(1.0, 0.5) > 0.6


def test_every_heuristic_plays_a_game_at_any_strength_through_the_arena() -> None:
    for game, module in HEURISTICS.items():
        players = 3 if game == "octablitz" else 2
        bots = [f"s{i}={command(module)} --strength {p} --seed {i}"
                for i, p in zip(range(players), (0.5, 1, 0), strict=False)]
        result = arena_play(game, bots)
        assert result["faults"] == [], (game, result["faults"])
        assert result["decisions"] > 0


# -- the search bots ---------------------------------------------------------------

def seat_zero_positions(game: str, players: int, choose: Any, every: int) -> Iterator[State]:
    """Every ``every``-th decision of seat 0 in games played by ``choose``."""
    made = 0
    for seed in range(20):
        state = make_game(game, players).new_state(seed)
        while not state.is_terminal():
            seat = state.deciding_seats()[0]
            if seat == 0:
                made += 1
                if made % every == 0:
                    yield state.clone()
            legal = list(state.legal_actions(seat))
            state.apply_action(legal[choose(state.observation(seat), legal)])


@pytest.mark.parametrize(("bot_type", "choose", "fields"), [
    (FuriousFiveSearch, greedy_furious_five.choose,
     ("hand", "phase", "graveyard", "deck_size", "live_drop", "drop")),
    (FiveSearch, five_heuristic.choose,
     ("hand", "phase", "discard", "deck_size", "taken", "top_discard")),
    (FiveCardRummySearch, five_card_rummy_heuristic.choose,
     ("hand", "phase", "taken", "discard_top", "discard_pile", "stock_size")),
])
@pytest.mark.parametrize("players", [2, 3])
def test_a_determinisation_is_the_position_the_seat_sees(
        bot_type: type[SearchBot], choose: Any, fields: tuple[str, ...], players: int) -> None:
    """Rebuilt from seat 0's events alone, the one-hand game shows seat 0 what
    the real game shows it, and every opponent holds the cards it took."""
    positions = list(itertools.islice(
        seat_zero_positions(bot_type.game, players, choose, every=5), 30))
    assert len(positions) == 30
    for real in positions:
        search = bot_type(Settings(seed=len(real.events)))
        search.on_match_start({"options": real.game.public_options(), "players": players})
        search.on_game_start({"seat": 0, "players": players})
        search.note([e.to_dict() for e in real.events if e.visible_to(0)])
        search.observation = theirs = real.observation(0)
        history = search.parse(search.events)
        seats = search.virtual_seats(history)
        built = search.position(history, seats, list(real.legal_actions(0)))
        assert built is not None
        mine = built.observation(seats[0])
        for field in fields:
            assert json.dumps(mine[field]) == json.dumps(theirs[field]), field
        for seat, virtual in seats.items():
            assert mine["hand_sizes"][virtual] == theirs["hand_sizes"][seat]
            held = built.observation(virtual)["hand"]
            assert all(card in held for card in theirs.get("known_cards", {seat: []})[seat])


@pytest.mark.parametrize("game", sorted(SEARCH))
def test_a_search_bot_keeps_to_a_tight_time_control(game: str) -> None:
    """Default settings, 0.2 s a move and 0.5 s of bank: the bot reads the
    request's time and answers every move in time, and it searched."""
    bots = [f"search={command(SEARCH[game])}", f"heuristic={command(HEURISTICS[game])}"]
    result = arena_play(game, bots, "--move-time", "0.2", "--bank-time", "0.5")
    assert result["faults"] == []
    moves = [move[0] for step, times in zip(result["record"]["actions"],
                                            result["record"]["times"], strict=True)
             for (seat, _), move in zip(step, times, strict=True) if seat == 0]
    assert moves and max(moves) < 200_000
    assert max(moves) > 20_000  # it thought about some moves
