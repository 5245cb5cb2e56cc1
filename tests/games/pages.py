"""Shared checks of the games' rules pages and of the numbers engines send."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.games.base import State
from arena.games.loop import as_sent

RULES = Path(__file__).resolve().parents[2] / "docs" / "rules"

#: Chooses the index of a single-seat decision: (request number from 1,
#: observation, legal actions) -> index.
Pick = Callable[[int, dict[str, Any], list[str]], int]


def sent(value: Any) -> Any:
    """``value`` as a bot receives it: tuples arrive as lists."""
    return as_sent(value)


def json_blocks(page: str) -> list[Any]:
    """The ```json blocks of ``docs/rules/<page>.md``, parsed, in order."""
    text = (RULES / f"{page}.md").read_text()
    return [json.loads(block.split("```")[0]) for block in text.split("```json\n")[1:]]


def assert_example_is_engine_output(page: str, state: State, pick: Pick) -> None:
    """The page's example request and reply are what the engine sends a bot
    that plays ``pick`` (single-seat decisions), request by request."""
    request, reply = json_blocks(page)[:2]
    last_seen = [0] * state.num_players
    for number in range(1, request["id"] + 1):
        (seat,) = state.deciding_seats()
        events = sent([e.to_dict() for e in state.events[last_seen[seat]:] if e.visible_to(seat)])
        last_seen[seat] = len(state.events)
        obs, legal = sent(state.observation(seat)), list(state.legal_actions(seat))
        if number == request["id"]:
            assert (obs, legal, events) == (
                request["observation"], request["legal"], request["events"])
            assert reply["index"] == pick(number, obs, legal)
            return
        else:
            state.apply_action(legal[pick(number, obs, legal)])
    raise AssertionError(f"the example of {page}.md has no request id")


def numbers(value: Any) -> list[Any]:
    """Every number (not bool) inside nested dicts, lists and tuples."""
    if isinstance(value, dict):
        return [n for item in value.values() for n in numbers(item)]
    if isinstance(value, list | tuple):
        return [n for item in value for n in numbers(item)]
    return [value] if isinstance(value, int | float) and not isinstance(value, bool) else []
