"""``ARENA_EXPECT_ENGINES=compiled`` or ``pure``: every test of :mod:`tests.games`
fails at once unless the engines run that way (:mod:`tests.games.test_native`
runs the rule tests both ways through it, each in a process of its own)."""

from __future__ import annotations

import importlib
import os

import pytest

from arena.games import game_class, game_names, native

EXPECT_VARIABLE = "ARENA_EXPECT_ENGINES"


def engines_in_use() -> str:
    """``compiled`` when every module of the group is compiled, ``pure`` when
    none is, else ``mixed`` (imports every engine first)."""
    for name in game_names():
        game_class(name)
    for module in native.MODULES:
        importlib.import_module(module)
    compiled = native.compiled_modules()
    if compiled == list(native.MODULES):
        return "compiled"
    return "mixed" if compiled else "pure"


@pytest.fixture(autouse=True, scope="session")
def _engines_as_expected() -> None:
    expected = os.environ.get(EXPECT_VARIABLE)
    if expected and engines_in_use() != expected:
        pytest.fail(f"{EXPECT_VARIABLE}={expected} but the engines run {engines_in_use()}: "
                    f"{native.status()}", pytrace=False)
