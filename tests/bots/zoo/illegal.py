"""Zoo: plays 2 requests legally, then answers with an illegal index.

VARIANT: ``out_of_range`` (len(legal)), ``negative`` (-1), ``float`` (0.0),
``string`` ("0"), ``bool`` (False).
"""

import sys
import time

from rawbot import Message, after, play, serve

VARIANT = sys.argv[1]


def bad_index(legal: list) -> object:
    return {"out_of_range": len(legal), "negative": -1, "float": 0.0, "string": "0",
            "bool": False}[VARIANT]


def illegal(request: Message) -> None:
    play(request, bad_index(request["legal"]))
    time.sleep(600)


if __name__ == "__main__":
    serve(f"zoo-illegal-{VARIANT}", after(2, illegal))
