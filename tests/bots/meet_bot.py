"""Says hello only once COUNT bots have started: a random bot that, before it
reads anything, drops a file in MEET_DIR and waits (up to 5 s) for COUNT files.

Usage: meet_bot.py COUNT.  Started one after the other (each handshake awaited
before the next bot starts), the first would wait alone, give up and exit; started
at once, they all meet and play.
"""

import os
import sys
import time
from pathlib import Path

FOLDER = Path(os.environ["MEET_DIR"])
COUNT = int(sys.argv[1])

(FOLDER / str(os.getpid())).touch()
deadline = time.monotonic() + 5
while len(list(FOLDER.iterdir())) < COUNT:
    if time.monotonic() > deadline:
        sys.exit("alone")
    time.sleep(0.01)

from protocol import run  # noqa: E402
from sample_bots.random_bot import choose  # noqa: E402

run(choose, name="meet")
