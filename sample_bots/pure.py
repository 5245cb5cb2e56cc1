"""Run another sample bot on the pure-Python engines, for comparisons.

    python -m sample_bots.pure MODULE [ARGS ...]

is ``python -m sample_bots.MODULE ARGS ...`` with ``ARENA_PURE=1`` set before any
engine is imported (:mod:`arena.games.native`): the same bot, the same search,
only slower playouts.  ``bench/search_gap.py --against pure`` plays a search bot
against itself this way, to price the compiled engines in Elo at equal time per
move (a bot's command cannot set its own environment: the sandbox clears it).
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: python -m sample_bots.pure MODULE [ARGS ...]")
    os.environ["ARENA_PURE"] = "1"  # arena.games reads it when first imported
    module = f"sample_bots.{sys.argv[1]}"
    sys.argv = [module, *sys.argv[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
