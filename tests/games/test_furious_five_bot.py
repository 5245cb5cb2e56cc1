"""The greedy Furious Five bot: its policy, and that it beats random play."""

from __future__ import annotations

from typing import Any

import pytest

from sample_bots.greedy_furious_five import TAKE_AT_MOST, choose
from tests.playout import average_place, duplicate_results, pair_share


@pytest.mark.parametrize(
    ("legal", "expected"),
    [
        (["drop Ac As", "call"], "call"),
        (["drop 2c 2d", "drop 3c 4d 5h", "drop 5h 5s"], "drop 3c 4d 5h"),
        (["drop 5h 5s", "drop Qc Kd Ah"], "drop Qc Kd Ah"),
        (["drop 2c", "drop 9d", "drop 4h"], "drop 9d"),
        # equal totals: the first listed
        (["drop 3c 4d 5h", "drop 3c 4d 5s"], "drop 3c 4d 5h"),
        (["draw deck", "draw 3c", "draw 5h"], "draw 3c"),
        (["draw deck", "draw 7c", "draw 9h"], "draw deck"),
        (["draw deck", f"draw {TAKE_AT_MOST}d", "draw Kh"], f"draw {TAKE_AT_MOST}d"),
        (["draw deck"], "draw deck"),
        # multi_drop: a further drop beats drawing
        (["draw deck", "draw Ac", "drop 9c 9s"], "drop 9c 9s"),
    ],
)
def test_greedy_policy(legal: list[str], expected: str) -> None:
    assert legal[choose({}, legal)] == expected


@pytest.mark.parametrize(
    "options", [{}, {"multi_drop": True, "ace_high": True, "call_at_five": True}]
)
def test_greedy_beats_random_heads_up(options: dict[str, Any]) -> None:
    results = duplicate_results("furious-five", 2, range(20), choose, {"rounds": 5, **options})
    assert pair_share(results) >= 0.85


def test_greedy_beats_random_at_a_full_table() -> None:
    results = duplicate_results("furious-five", 4, range(6), choose, {"rounds": 5})
    assert average_place(results) <= 1.5
