"""A replay page read as ``replay.js`` reads it: its embedded spectator data, its
bots and where its seats' views are (the static report's seat files, the
server's seat URLs)."""

from __future__ import annotations

import json
import re
from typing import Any

from arena.store.replays import unpack


def payload(html: str) -> str:
    """The page's packed spectator view (``<script id="replay-data">``)."""
    found = re.search(r'id="replay-data">([^<]*)<', html)
    assert found, "no replay data"
    return found.group(1)


def page_data(html: str) -> Any:
    """The page's spectator view, unpacked."""
    return unpack(payload(html))


def page_facts(html: str) -> Any:
    """The page's bots and where its seats' views are (``<script id="replay-page">``)."""
    found = re.search(r'id="replay-page">([^<]*)<', html)
    assert found, "no replay page facts"
    return json.loads(found.group(1))


def seat_files(html: str) -> list[str]:
    """The seat files a report's page may load."""
    return list(page_facts(html)["seat_files"])


def seat_urls(html: str) -> list[str | None]:
    """The seat views a server's page may fetch, one entry a seat (None: not the
    viewer's); none at all for a viewer who may see no seat."""
    return list(page_facts(html)["seat_urls"])
