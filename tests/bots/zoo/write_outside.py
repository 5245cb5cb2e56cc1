"""Zoo: before answering hello, tries to create a file ``zoo-token-TOKEN`` in
every directory it might reach outside its own: /tmp, /var/tmp, /dev/shm, its
script's directory (as it sees it), /, its working directory, $HOME, and
each ``dir=PATH`` given (the test's tmp dir, the organiser's $HOME).  One
stderr line per attempt: ``WRITE OK path`` or ``WRITE REFUSED path: error``.
Then it plays legally.

Arguments: ``token=T [dir=PATH ...]``.
"""

import os
import sys
from pathlib import Path

from rawbot import serve

TOKEN = next(a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("token="))
DIRS = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("dir=")]
HERE = Path(__file__).resolve().parent


def targets() -> list[str]:
    # Under bubblewrap HERE is its private copy (/bot/zoo): its host folder and the
    # repository are dir= arguments.
    found = ["/tmp", "/var/tmp", "/dev/shm", str(HERE), "/",
             os.getcwd(), os.environ.get("HOME", "/nonexistent-home"), *DIRS]
    return list(dict.fromkeys(found))


def attack() -> None:
    for folder in targets():
        path = os.path.join(folder, f"zoo-token-{TOKEN}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, TOKEN.encode())
            os.close(fd)
            sys.stderr.write(f"zoo write_outside: WRITE OK {path}\n")
        except OSError as exc:
            sys.stderr.write(f"zoo write_outside: WRITE REFUSED {path}: {exc.strerror}\n")
    sys.stderr.flush()


if __name__ == "__main__":
    serve("zoo-write-outside", hello=lambda _: attack())
