"""An SDK bot that prints to stdout in every way it can; the SDK must keep the
protocol stream clean by sending all of it to stderr."""

import os
import sys

from protocol import Bot, Request, run


class Chatty(Bot):
    name = "chatty"
    version = "2.0"
    author = "tests"

    def choose(self, request: Request) -> int:
        print("print() from choose", request.id)
        sys.stdout.write("sys.stdout.write\n")
        sys.stdout.flush()
        os.write(1, b"raw fd 1 write\n")
        return len(request.legal) - 1


if __name__ == "__main__":
    run(Chatty())
