"""A replay page read as ``replay.js`` reads it: its embedded spectator data, its
bots and the seat files it lists (static report and server alike)."""

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
    """The page's bots and the seat files it may load (``<script id="replay-page">``)."""
    found = re.search(r'id="replay-page">([^<]*)<', html)
    assert found, "no replay page facts"
    return json.loads(found.group(1))


def seat_files(html: str) -> list[str]:
    """The seat files the page may load."""
    return list(page_facts(html)["seat_files"])
