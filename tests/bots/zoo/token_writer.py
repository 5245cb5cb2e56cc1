"""Zoo (issue 7 part 2): at hello and at every game start, writes its token to
a file ``zoo-token-TOKEN`` in every writable place it can reach ($HOME,
$TMPDIR, /tmp, /var/tmp, /dev/shm, its working directory, its script's
directory, and each ``dir=PATH`` given).  One stderr line per place:
``TOKEN WROTE path`` or ``TOKEN REFUSED path: error``.  It plays legally.

Arguments: ``token=T [dir=PATH ...]``.
"""

import os
import sys
from pathlib import Path

from rawbot import serve

TOKEN = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("token="))
DIRS = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("dir=")]


def places() -> list[str]:
    dirs = [os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/tmp", "/var/tmp",
            "/dev/shm", os.getcwd(), str(Path(__file__).resolve().parent), *DIRS]
    return [d for d in dict.fromkeys(dirs) if d]


def write_everywhere(log: bool) -> None:
    for folder in places():
        path = os.path.join(folder, f"zoo-token-{TOKEN}")
        try:
            with open(path, "w") as f:
                f.write(TOKEN)
            if log:
                sys.stderr.write(f"zoo token_writer: TOKEN WROTE {path}\n")
        except OSError as exc:
            if log:
                sys.stderr.write(f"zoo token_writer: TOKEN REFUSED {path}: {exc.strerror}\n")
    sys.stderr.flush()


if __name__ == "__main__":
    serve("zoo-token-writer", hello=lambda _: write_everywhere(log=True),
          game_start=lambda _: write_everywhere(log=False))
