"""A bot that writes to stderr at known moves of each game (per-move logs).

Move k of a game (counted from 0) writes ``move k <b>escaped</b>`` when k is
even; move 1 writes 3,000 bytes of ``x`` (more than a move keeps); odd moves
from 3 on write nothing.  It plays the first legal action.
"""

import sys

from protocol.sdk import Bot, Request, run


class MoveLogBot(Bot):
    name = "move-log-bot"

    def __init__(self) -> None:
        self.move = 0

    def on_game_start(self, message: dict) -> None:
        self.move = 0

    def choose(self, request: Request) -> int:
        k, self.move = self.move, self.move + 1
        if k == 1:
            sys.stderr.write("x" * 3000)
        elif k % 2 == 0:
            sys.stderr.write(f"move {k} <b>escaped</b>\n")
        sys.stderr.flush()
        return 0


if __name__ == "__main__":
    run(MoveLogBot())
