"""Zoo (issue 7 part 2): looks for files named ``zoo-token-*`` in every place
it can read ($HOME, $TMPDIR, /tmp, /var/tmp, /dev/shm, its working directory,
its script's directory, each ``dir=PATH`` given) at hello and at every request
(at most every 50 ms), and writes ``FOUND TOKEN <content> at <path>`` to
stderr for each one found.  It plays legally."""

import os
import sys
import time
from pathlib import Path

from rawbot import Message, log, play, serve

DIRS = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("dir=")]
found: set[str] = set()
last = [0.0]


def places() -> list[str]:
    dirs = [os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/tmp", "/var/tmp",
            "/dev/shm", os.getcwd(), str(Path(__file__).resolve().parent), *DIRS]
    return [d for d in dict.fromkeys(dirs) if d]


def search() -> None:
    if time.monotonic() - last[0] < 0.05:
        return
    last[0] = time.monotonic()
    for folder in places():
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if not name.startswith("zoo-token-") or path in found:
                continue
            found.add(path)
            try:
                with open(path) as f:
                    content = f.read(200)
            except OSError as exc:
                content = f"<unreadable: {exc.strerror}>"
            log(f"zoo token_searcher: FOUND TOKEN {content} at {path}")


def on_request(request: Message) -> None:
    search()
    play(request)


def match_end(msg: Message) -> None:
    log(f"zoo token_searcher: {len(found)} token files found")


if __name__ == "__main__":
    serve("zoo-token-searcher", on_request, hello=lambda _: search(), match_end=match_end)
