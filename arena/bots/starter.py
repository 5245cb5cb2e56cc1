"""Starter kits: ``arena new-bot DIR --lang LANG`` writes a bot directory that
builds, runs and already plays a random legal move, so a bot author's first
hour goes into strategy (docs/bots.md#starter-kits).

A kit is ``bot.toml`` (its name from ``DIR``), a README of a page, the
language's SDK and a bot showing where the strategy goes, from the files in
``kits/<language>/`` (package data) with ``@NAME@`` replaced by the bot's name.
The Python kit carries a copy of the project's own SDK (the ``protocol``
package); the JavaScript kit its ``node_modules`` (npm runs when the kit is
written: a build in the sandbox has no network).  The kit is written into a
temporary sibling of ``DIR`` and renamed into place, so a failure leaves no
half-written directory.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import protocol
from arena.bots.versions import MANIFEST, NAME, NAME_RULE, BotError, Manifest
from arena.games import game_class, game_names

KITS = Path(__file__).with_name("kits")
#: The kit's README, one for every language (``@FIELD@`` filled in).
README = "README.md"
#: Wall-clock seconds npm may take to fetch the JavaScript kit's packages.
NPM_SECONDS = 300.0
#: The opponent the README's commands play against.
RANDOM_BOT = "python -m sample_bots.random_bot"


@dataclass(frozen=True)
class Kit:
    """One language's starter kit."""

    language: str
    title: str
    #: ``bot.toml``'s command and build (none: "").
    command: str
    build: str
    #: The command run from the directory above the kit's (``@DIR@``: the kit's name).
    local: str
    #: Files copied from ``kits/<language>/``: the bot first, then the SDK.
    files: tuple[str, ...]
    #: README rows for files other than the bot and the SDK: (file, what).
    extra: tuple[tuple[str, str], ...]
    #: The README's Build section.
    build_text: str
    #: Run in the new directory after its files are written (none: ()).
    setup: tuple[str, ...] = ()

    @property
    def bot_file(self) -> str:
        return self.files[0]

    @property
    def sdk_file(self) -> str:
        return self.files[1] if len(self.files) > 1 else "protocol/"


C_BUILD = "cc -O2 -std=c11 -Wall -o bot bot.c -lmsgpackc"

LANGUAGES: dict[str, Kit] = {kit.language: kit for kit in (
    Kit("python", "Python", "python bot.py", "", "python @DIR@/bot.py", ("bot.py",), (),
        "Nothing to build: the bot needs Python 3.11 or later and `msgpack` (the arena's "
        "own interpreter has both, and `python` in `bot.toml` means that interpreter)."),
    Kit("javascript", "JavaScript", "node bot.js", "", "node @DIR@/bot.js",
        ("bot.js", "five.js", "package.json"),
        (("package.json", "the one dependency, `@msgpack/msgpack`"),
         ("node_modules/", "that dependency, installed by `arena new-bot` (`npm install`): "
                           "it travels with the bot, since the sandbox has no network")),
        "Nothing to build: the bot runs on Node.js 18 or later. After changing "
        "`package.json`, run `npm install` here again.",
        ("npm", "install", "--no-audit", "--no-fund", "--loglevel=error")),
    Kit("c", "C", "./bot", C_BUILD, "./@DIR@/bot", ("bot.c", "five.h"), (),
        "In this directory, with a C compiler and msgpack-c (Debian: `apt-get install gcc "
        f"libmsgpack-dev`):\n\n```sh\n{C_BUILD}\n```\n\n`arena bot add` runs this same line "
        "(`build` in `bot.toml`), in the sandbox."),
)}


def new_bot(directory: Path, language: str, games: Sequence[str] = ()) -> list[str]:
    """Write ``language``'s starter kit into ``directory`` (new, or empty) for
    ``games`` (default: every game); the paths written at its top.  BotError,
    with nothing written, for a bad directory, language or game, or a setup
    step (npm) that fails."""
    kit = _kit(language)
    games = _games(games)
    name, target = _target(directory)
    if kit.setup and shutil.which(kit.setup[0]) is None:
        raise BotError(f"the {kit.title} kit needs {kit.setup[0]} (Debian: apt-get install "
                       f"nodejs npm)")
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        _write(staging, kit, name, games)
        if kit.setup:
            _run_setup(staging, kit)
        staging.chmod(0o755)
        staging.rename(target)  # replaces an empty directory
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(path.name + ("/" if path.is_dir() else "") for path in target.iterdir())


def write_kit(folder: Path, language: str, name: str, games: Sequence[str] = ()) -> Kit:
    """Write ``language``'s kit for bot ``name`` into the existing ``folder``
    without its setup step (npm: the server's downloads), for ``games`` (default:
    every game); BotError for a bad language or game."""
    kit = _kit(language)
    _write(folder, kit, name, _games(games))
    return kit


def _kit(language: str) -> Kit:
    if language not in LANGUAGES:
        raise BotError(f"no starter kit for {language!r} (languages: "
                       f"{', '.join(LANGUAGES)})")
    return LANGUAGES[language]


def _games(games: Sequence[str]) -> list[str]:
    unknown = [game for game in games if game not in game_names()]
    if unknown:
        raise BotError(f"unknown game {unknown[0]!r} (games: {', '.join(game_names())})")
    return list(dict.fromkeys(games)) or game_names()


def _target(directory: Path) -> tuple[str, Path]:
    """The bot's name (the directory's) and the directory, absolute; BotError if it
    holds anything or its parent does not exist."""
    target = directory.resolve()
    if not NAME.fullmatch(target.name):
        raise BotError(f"the bot is named after its directory, and {target.name[:80]!r} "
                       f"is not {NAME_RULE}")
    if target.exists() and not target.is_dir():
        raise BotError(f"{directory} exists and is not a directory")
    if target.is_dir() and any(target.iterdir()):
        raise BotError(f"{directory} exists and is not empty: new-bot writes a new "
                       f"(or empty) directory")
    if not target.parent.is_dir():
        raise BotError(f"no directory {target.parent} to write {target.name} in")
    return target.name, target


def manifest_text(kit: Kit, name: str, games: Sequence[str]) -> str:
    """The kit's ``bot.toml``."""
    lines = ["# Five Arena bot manifest: docs/bots.md in Five Arena's sources.",
             f"name = {json.dumps(name)}",
             f"command = {json.dumps(kit.command)}  # run in this directory"]
    if kit.build:
        lines.append(f"build = {json.dumps(kit.build)}  # run once, in the sandbox, "
                     f"when the bot is added")
    lines += [f"games = {json.dumps(list(games))}", 'author = ""', ""]
    text = "\n".join(lines)
    Manifest.parse(tomllib.loads(text), MANIFEST)  # a kit's manifest is always valid
    return text


def readme_text(kit: Kit, name: str, games: Sequence[str]) -> str:
    """The kit's README: build, play locally, check, submit."""
    first = game_class(games[0])
    rows = "".join(f"| `{file}` | {what} |\n" for file, what in kit.extra)
    fields = {
        "NAME": name, "LANGUAGE": kit.title, "BOT_FILE": kit.bot_file,
        "SDK_FILE": kit.sdk_file, "ANCHOR": kit.language, "EXTRA_ROWS": rows,
        "BUILD": kit.build_text, "GAME": first.name, "LOCAL": kit.local.replace("@DIR@", name),
        "GAMES": ", ".join(games),
        "OPPONENTS": " ".join([f'"{RANDOM_BOT}"'] * max(1, first.min_players - 1)),
        "GAME_FLAGS": "".join(f" -g {game}" for game in games),
    }
    return _fill((KITS / README).read_text(encoding="utf-8"), fields)


def _fill(text: str, fields: dict[str, str]) -> str:
    for key, value in fields.items():
        text = text.replace(f"@{key}@", value)
    return text


def _write(folder: Path, kit: Kit, name: str, games: Sequence[str]) -> None:
    (folder / MANIFEST).write_text(manifest_text(kit, name, games), encoding="utf-8")
    (folder / README).write_text(readme_text(kit, name, games), encoding="utf-8")
    for file in kit.files:
        text = (KITS / kit.language / file).read_text(encoding="utf-8")
        (folder / file).write_text(_fill(text, {"NAME": name}), encoding="utf-8")
    if kit.language == "python":  # the project's own SDK, so the kit runs standalone
        sdk = folder / "protocol"
        sdk.mkdir()
        for source in sorted(Path(protocol.__file__).parent.glob("*.py")):
            shutil.copyfile(source, sdk / source.name)


def _run_setup(folder: Path, kit: Kit) -> None:
    try:
        done = subprocess.run(kit.setup, cwd=folder, stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=NPM_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise BotError(f"{' '.join(kit.setup)} took longer than {NPM_SECONDS:g} s") from None
    except OSError as exc:
        raise BotError(f"cannot run {kit.setup[0]}: {exc}") from None
    if done.returncode != 0:
        raise BotError(f"{' '.join(kit.setup[:2])} failed with exit status {done.returncode}"
                       f"{_first_error(done.stderr.decode(errors='replace'))}")


def _first_error(stderr: str) -> str:
    """': ' and the line of a failed npm's stderr that says why, or ''."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    telling = [line for line in lines if "code" not in line.split()[:3]
               and "complete log" not in line]
    return f": {(telling or lines)[0][:200]}" if lines else ""
