"""Zoo: plays every request legally but exits (status 0) right after each
game_end, as if the match were over."""

import sys

from rawbot import Message, log, serve


def leave(game_end: Message) -> None:
    log(f"zoo exit_between_games: leaving after game {game_end.get('game_number')}")
    sys.exit(0)


if __name__ == "__main__":
    serve("zoo-exit-between-games", game_end=leave)
