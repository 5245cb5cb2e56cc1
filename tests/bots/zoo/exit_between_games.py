"""Zoo: plays every request legally but exits (status 0) right after each
game_end, as if the match were over."""

import os
import sys

import msgpack


def send(obj: object) -> None:
    os.write(1, msgpack.packb(obj))


def main() -> None:
    unpacker = msgpack.Unpacker(raw=False)
    while data := os.read(0, 65536):
        unpacker.feed(data)
        for msg in unpacker:
            kind = msg.get("type")
            if kind == "hello":
                send({"type": "hello", "name": "zoo-exit-between-games"})
            elif kind == "request":
                send({"type": "action", "id": msg["id"], "index": 0})
            elif kind == "game_end":
                sys.stderr.write(f"zoo exit_between_games: leaving after game "
                                 f"{msg.get('game_number')}\n")
                sys.stderr.flush()
                sys.exit(0)
            elif kind == "match_end":
                return


if __name__ == "__main__":
    main()
