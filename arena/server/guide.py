"""The "Getting started" page for a new bot author: the three starter kits (the
``arena new-bot`` line and each kit as a ``.tar.gz`` the server builds from
``arena/bots/kits``), the ``arena submit`` line with this server's own URL, and
the rules of every game (``docs/rules/``, served as text where the sources are
at hand)."""

from __future__ import annotations

import functools
import io
import re
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from arena.bots.starter import LANGUAGES, write_kit
from arena.games import game_class, game_names
from arena.server.common import viewer
from arena.server.pages import STATIC_HEADERS, render

#: The name of the bot in a downloaded kit (its directory, ``bot.toml``'s name).
KIT_NAME = "mybot"
#: The rulebooks, one Markdown file a game, beside the package in a source checkout.
RULES = Path(__file__).resolve().parents[2] / "docs" / "rules"


@dataclass(frozen=True)
class GameRules:
    """What the page says of one game."""

    name: str
    players: str
    summary: str
    #: Its rulebook's URL on this server, None where the sources are not at hand.
    url: str | None


def rules_of(name: str) -> GameRules:
    """A game's player counts, the first paragraph of its rulebook and its link."""
    cls = game_class(name)
    path = RULES / f"{name}.md"
    paragraphs = path.read_text(encoding="utf-8").split("\n\n") if path.is_file() else []
    summary = plain_summary(paragraphs[1]) if len(paragraphs) > 1 else ""
    return GameRules(name, f"{cls.min_players}-{cls.max_players} players", summary,
                     f"/rules/{name}.md" if path.is_file() else None)


def plain_summary(paragraph: str) -> str:
    """A rulebook's first paragraph as plain text, without the sentences that
    point at its sources (files of the project's checkout)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", " ".join(paragraph.split()))
    text = text.replace("**", "").replace("*", "").replace("`", "")
    sentences = re.split(r"(?<=\.) ", text)
    return " ".join(s for s in sentences if not any(
        word in s for word in ("Source", "Engine", "RULINGS", "sources/")))


@functools.cache
def kit_archive(language: str) -> bytes:
    """``language``'s starter kit as a ``.tar.gz`` of a ``mybot/`` directory (the
    same bytes every time: no times, no owners)."""
    with tempfile.TemporaryDirectory() as folder:
        write_kit(Path(folder), language, KIT_NAME)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for path in sorted(Path(folder).rglob("*")):
                info = tar.gettarinfo(str(path), f"{KIT_NAME}/{path.relative_to(folder)}")
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                info.mode = 0o755 if path.is_dir() else 0o644
                if path.is_dir():
                    tar.addfile(info)
                else:
                    with path.open("rb") as data:
                        tar.addfile(info, data)
        return buffer.getvalue()


def start(request: Request) -> Response:
    """The page; not kept for everyone: it names the URL it was asked at."""
    who = viewer(request)
    server_url = str(request.base_url).rstrip("/")
    return render(request, who, "start.html", active="start", kits=list(LANGUAGES.values()),
                  kit_name=KIT_NAME, server_url=server_url,
                  rules=[rules_of(name) for name in game_names()])


def kit(request: Request) -> Response:
    viewer(request)
    language = request.path_params["language"]
    if language not in LANGUAGES:
        raise HTTPException(404, f"no starter kit for {language[:40]!r}")
    return Response(kit_archive(language), media_type="application/gzip", headers={
        **STATIC_HEADERS,
        "Content-Disposition": f'attachment; filename="{KIT_NAME}-{language}.tar.gz"'})


def rulebook(request: Request) -> Response:
    viewer(request)
    name = request.path_params["game"]
    path = RULES / f"{name}.md"
    if name not in game_names() or not path.is_file():
        raise HTTPException(404, f"no rules of {name[:40]!r} here: `arena rules` prints them")
    return Response(path.read_bytes(), media_type="text/plain; charset=utf-8",
                    headers=STATIC_HEADERS)


def routes() -> list[Route]:
    return [Route("/start", start),
            Route("/start/kits/{language}.tar.gz", kit),
            Route("/rules/{game}.md", rulebook)]
