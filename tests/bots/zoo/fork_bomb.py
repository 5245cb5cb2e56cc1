"""Zoo: at its first request forks children (each sleeps two minutes and
tries to fork once more) until fork is refused, then plays on legally.
Safety cap: 100 forks (then "safety cap" on stderr), so a missing process
limit cannot take a shared machine down."""

import os
import time

from rawbot import Message, also_at, log, serve

CAP = 100


def bomb(request: Message) -> None:
    forks = 0
    while forks < CAP:
        try:
            pid = os.fork()
        except OSError as exc:
            log(f"zoo fork_bomb: fork refused after {forks} forks: {exc}")
            return
        if pid == 0:
            try:
                if os.fork() == 0:
                    time.sleep(120)
                    os._exit(0)
            except OSError:
                pass
            time.sleep(120)
            os._exit(0)
        forks += 1
    log(f"zoo fork_bomb: safety cap reached: {forks} forks, none refused")


if __name__ == "__main__":
    serve("zoo-fork-bomb", also_at({1}, bomb))
