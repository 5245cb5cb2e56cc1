"""Spends time on every move, then plays the first legal action.

Usage: spender_bot.py spin|sleep|ponder SECONDS
``spin`` burns SECONDS of CPU per move (measured with the process's CPU clock,
so on a busy machine it takes longer in wall time); ``sleep`` waits SECONDS of
wall time using no CPU; ``ponder`` answers at once and then, in a thread, burns
SECONDS of CPU while it waits for its next request.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from protocol import run

MODE, SECONDS = sys.argv[1], float(sys.argv[2])


def spin_thread() -> None:
    end = time.thread_time() + SECONDS
    while time.thread_time() < end:
        pass


def choose(observation: dict[str, Any], legal: list[str]) -> int:
    if MODE == "ponder":
        threading.Thread(target=spin_thread, daemon=True).start()
    elif MODE == "sleep":
        time.sleep(SECONDS)
    else:
        end = time.process_time() + SECONDS
        while time.process_time() < end:
            pass
    return 0


if __name__ == "__main__":
    run(choose, name=f"spender-{MODE}")
