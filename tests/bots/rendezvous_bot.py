"""Plays the first legal action; in a rummy-five claim window it first waits
until every other claimant of the same window has been asked too.

Each claimant drops a file named after the window in RENDEZVOUS_DIR and waits
(up to 1 s) for the files of the other claimants, whose number it cannot know,
so it waits for at least one.  If the arena asked claimants one after the
other, the first would wait alone and log "alone"; asked at once, all log "met".
"""

import os
import sys
import time
from pathlib import Path

from protocol import Bot, Request, run

FOLDER = Path(os.environ["RENDEZVOUS_DIR"])


class Rendezvous(Bot):
    name = "rendezvous"

    def choose(self, request: Request) -> int:
        obs = request.observation
        if obs.get("phase") == "claim":
            window = f"{obs['deal']}-{obs['turn_number']}-{sum(map(len, obs['discards']))}"
            (FOLDER / f"{window}.{obs['seat']}").touch()
            deadline = time.monotonic() + 1
            while time.monotonic() < deadline:
                if len(list(FOLDER.glob(f"{window}.*"))) >= 2:
                    print(f"met {window}", file=sys.stderr)
                    break
                time.sleep(0.01)
            else:
                print(f"alone {window}", file=sys.stderr)
        return 0


if __name__ == "__main__":
    run(Rendezvous())
