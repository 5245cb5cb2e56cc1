"""The report's templates and the filters they use: plain text formatting, no figures.

Kept apart from the figures (:mod:`reports.stats`, numpy and scipy) so that the worker
processes writing replay pages (:mod:`reports.replay_pool`) load only what a page needs.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Environment

TEMPLATES = Path(__file__).parent / "templates"
#: The stylesheet and scripts the report's pages share, written beside them by every
#: render (the replay viewer's: :data:`reports.replay.ASSETS`); the server serves the
#: same stylesheet under /static/.
SHARED_FILES = ("style.css", "sortable.js")


def environment() -> Environment:
    """The templates (autoescaped, strict) with the report's filters; the shared files
    (``assets``, base.html's prefix of their URLs) lie beside the pages."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined  # here: only pages need it

    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals["assets"] = ""
    env.filters.update(json=to_json, value=format_value, percent=percent,
                       shade=shade, bot_page=bot_page, match_number=match_number)
    return env


def slug(text: str) -> str:
    """Lower-case letters, digits and dashes only (``game`` if nothing is left)."""
    out = "".join(c if c.isascii() and c.isalnum() else "-" for c in text.lower())
    return "-".join(part for part in out.split("-") if part) or "game"


def bot_page(bot: str) -> str:
    """The file name of a bot's page: readable, and distinct for distinct names."""
    return f"bot-{slug(bot)[:40]}-{hashlib.sha1(bot.encode()).hexdigest()[:8]}.html"


def format_value(value: Any) -> str:
    """A config, option, action or event value as short readable text.

    Dicts become ``key: value, ...`` (empty: ``""``), whole floats lose their ``.0``,
    other non-strings are JSON.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ", ".join([f"{key}: {format_value(item)}" for key, item in value.items()])
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value, ensure_ascii=False)


def percent(share: float) -> str:
    """A 0..1 share as a whole percentage, halves rounded up (87.5 and 62.5 alike)."""
    return f"{math.floor(100 * share + 0.5)}%"


def match_number(value: float) -> str:
    """An Elo figure or error of a match, as fastchess prints it ("inf" when unbounded)."""
    return f"{value:+.1f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def shade(los: float | None) -> str:
    """A CSS class for a likelihood of superiority: how sure the row bot is better
    (``win2`` / ``win``: at least 99% / 95%) or worse (``loss``, ``loss2``)."""
    if los is None:
        return "none"
    for bound, name in ((0.99, "win2"), (0.95, "win")):
        if los >= bound:
            return name
        if los <= 1 - bound:
            return name.replace("win", "loss")
    return "even"


def to_json(value: Any) -> str:
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
