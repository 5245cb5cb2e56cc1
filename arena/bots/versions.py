"""Bots as versioned submissions: a bot is a directory with a manifest
(``bot.toml``); ``arena bot add`` stores an immutable copy of it as a version.

A version is named by its label ``NAME@VERSION``, which its seats, faults and
ratings use.  Its identity is its content's fingerprint: the same name and
fingerprint are the same version (never stored twice), the same name with new
content is the next version, and a stored version's content never changes
(the copy is made read-only, and the sandbox shows it to the bot read-only).
A bot given on the command line as ``NAME=COMMAND`` is an *ad-hoc* version,
fingerprinted by its command and the files the command names.

No trio here: :class:`~arena.runner.process.BotSpec` is imported only where one is made.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from arena.bots.paths import PathEscape, contained, escaping_links
from arena.games import game_names
from arena.runner.sandbox import (
    NOBODY,
    Sandbox,
    SandboxError,
    in_directory,
    module_paths,
    named_files,
    path_arguments,
    under_system,
)
from arena.store.database import BotVersion, Store
from arena.store.engine import DEFAULT_BOT_STORE, database_file

if TYPE_CHECKING:
    from arena.runner.process import BotSpec

MANIFEST = "bot.toml"
#: The longest name of a bot, a version or a user: a folder's name on every filesystem.
NAME_LENGTH = 64
#: A bot's name, a version's, a user's: a letter or digit first, then letters,
#: digits, ``_ . -`` (so never ``.`` or ``..``), at most :data:`NAME_LENGTH` long.
NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.\-]{{0,{NAME_LENGTH - 1}}}")
#: :data:`NAME` in words, for messages.
NAME_RULE = (f"1 to {NAME_LENGTH} letters, digits, '_', '.' or '-', starting with a "
             f"letter or digit")
#: ``NAME`` or ``NAME@VERSION`` on the command line: a stored bot.
REFERENCE = re.compile(r"([A-Za-z0-9_.\-]+)(?:@([A-Za-z0-9_.\-]+))?")
#: Neither fingerprinted nor stored.
SKIPPED_DIRS = frozenset({".git", "__pycache__"})
SKIPPED_SUFFIXES = (".pyc",)
#: Wall-clock seconds a build may take (``arena bot add``; the server's checker
#: passes its own, shorter ``--build-time``).
BUILD_SECONDS = 600.0

#: Lines of a failed build's output (stdout and stderr as printed) its error shows,
#: at most :data:`LINE_CHARS` characters each, from its last :data:`OUTPUT_BYTES`.
OUTPUT_LINES = 30
LINE_CHARS = 300
OUTPUT_BYTES = 64 * 1024


class BotError(Exception):
    """A bad manifest, bot directory or bot reference; the message says why in one line."""


@dataclass(frozen=True)
class Manifest:
    """A bot's ``bot.toml``."""

    name: str
    #: Run in the bot's directory; split like a shell line.
    command: str
    games: tuple[str, ...]
    build: str = ""
    author: str = ""
    #: "" when not given: versions are then numbered 1, 2, ... per name.
    version: str = ""

    @classmethod
    def parse(cls, data: dict[str, Any], where: str) -> Manifest:
        """The manifest in ``data`` (parsed TOML); BotError naming ``where`` if bad."""
        known = {"name", "command", "build", "games", "author", "version"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise BotError(f"{where}: unknown field {unknown[0]!r} (fields: "
                           f"{', '.join(sorted(known))})")
        text = {key: _text(data, key, where) for key in known - {"games"}}
        for key in ("name", "command"):
            if not text[key].strip():
                raise BotError(f"{where}: {key!r} is required")
        for key in ("name", "version"):
            if text[key] and not NAME.fullmatch(text[key]):
                raise BotError(f"{where}: {key} {text[key][:80]!r} is not {NAME_RULE}")
        for key in ("command", "build"):
            _split(text[key], f"{where}: {key}")
        return cls(name=text["name"], command=text["command"], build=text["build"],
                   games=_games(data, where), author=text["author"], version=text["version"])


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise BotError(f"{where}: {key!r} must be a string, not {value!r}")
    return value


def _games(data: dict[str, Any], where: str) -> tuple[str, ...]:
    games = data.get("games")
    if not isinstance(games, list) or not games or \
            not all(isinstance(game, str) for game in games):
        raise BotError(f"{where}: 'games' is required: a list of game names, e.g. "
                       f"games = [\"five\"]")
    unknown = [game for game in games if game not in game_names()]
    if unknown:
        raise BotError(f"{where}: unknown game {unknown[0]!r} (games: "
                       f"{', '.join(game_names())})")
    return tuple(games)


def _split(command: str, where: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError as exc:
        raise BotError(f"{where}: cannot split {command!r}: {exc}") from None


def read_manifest(directory: Path) -> Manifest:
    """The manifest of the bot in ``directory``; BotError if missing or bad."""
    if not directory.is_dir():
        raise BotError(f"{directory} is not a directory")
    import tomllib  # only for a bot directory: an ad-hoc bot's run never imports it

    path = directory / MANIFEST
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BotError(f"{directory} has no {MANIFEST}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BotError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BotError(f"{path} is not valid TOML: {exc}") from None
    return Manifest.parse(data, str(path))


# -- fingerprints -----------------------------------------------------------------

def _files(directory: Path) -> Iterator[Path]:
    """Every file under ``directory`` that is part of a bot, sorted by relative path."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        found += [Path(root, name) for name in files if not name.endswith(SKIPPED_SUFFIXES)]
    yield from sorted(found, key=lambda path: path.relative_to(directory).as_posix())


def _add_file(digest: Any, path: Path, name: str) -> None:
    content = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
    digest.update(f"{name}\0{len(content)}\0".encode())
    digest.update(content)


def fingerprint(directory: Path) -> str:
    """sha256 over the sorted relative paths and bytes of a bot directory's files
    (a symbolic link by its target; ``.git``, ``__pycache__`` and ``*.pyc`` skipped)."""
    digest = hashlib.sha256()
    for path in _files(directory):
        _add_file(digest, path, path.relative_to(directory).as_posix())
    return digest.hexdigest()


def adhoc_fingerprint(command: str) -> str:
    """sha256 of a command line and of every existing file it names: its program
    when given by path, the files among its arguments, the package of
    ``python -m``: so an edited script is a new version."""
    digest = hashlib.sha256(command.encode())
    argv = shlex.split(command)
    named = [argv[0]] if os.sep in argv[0] else []
    named += list(path_arguments(argv))
    if "-m" in argv[1:-1]:
        named += module_paths(argv[argv.index("-m") + 1])
    for word in named:
        path = Path(word)
        if path.is_dir():
            digest.update(f"{word}\0{fingerprint(path)}\0".encode())
        elif path.is_file():
            _add_file(digest, path, word)
    return digest.hexdigest()


# -- storing a version --------------------------------------------------------------

def default_bot_store(url: str) -> Path | None:
    """``arena-bots/`` beside a SQLite database file; None for another database."""
    database = database_file(url)
    return None if database is None else Path(database).resolve().parent / DEFAULT_BOT_STORE


@dataclass(frozen=True)
class Added:
    """What :func:`add_bot` did: the version, and whether it is new."""

    version: BotVersion
    new: bool


def add_bot(store: Store, source: Path, bot_store: Path, sandbox: Sandbox,
            check: Callable[[str, list[str]], None] | None = None,
            build_seconds: float = BUILD_SECONDS) -> Added:
    """Store the bot in ``source`` as a version: its manifest checked, a copy made
    in ``bot_store/NAME/VERSION/``, built there in ``sandbox`` (the copy writable
    only during the build, which may take ``build_seconds``), then made
    read-only.  ``check(label, argv)`` may refuse the command (argv made absolute
    in the copy) after the build.
    Nothing is stored when any step fails (BotError)."""
    manifest = read_manifest(source)
    content = fingerprint(source)
    stored_versions = store.bot_versions(manifest.name)
    same = [v for v in stored_versions if v.fingerprint == content]
    if same:
        return Added(same[0], False)
    version = manifest.version or store.next_bot_version(manifest.name)
    label = f"{manifest.name}@{version}"
    if any(v.version == version for v in stored_versions):
        raise BotError(f"bot {label} is stored already with other content: give this "
                       f"content a new version in {MANIFEST}")
    try:
        target = contained(bot_store, manifest.name, version)
    except PathEscape as exc:
        raise BotError(f"bot {label}: {exc}") from None
    _check_confined(source, manifest.command, label)
    _copy(source, target)
    try:
        if manifest.build:
            build(target, manifest.build, sandbox, label, build_seconds)
            _refuse_escaping_links(target, label)
        if check is not None:
            check(label, in_directory(shlex.split(manifest.command), str(target)))
        freeze(target)
        stored = store.add_bot_version(BotVersion(
            base=manifest.name, version=version, command=manifest.command,
            fingerprint=content, directory=str(target), build=manifest.build,
            games=list(manifest.games), author=manifest.author))
    except BaseException:
        _remove(target)
        raise
    return Added(stored[0], stored[1])


def _check_confined(source: Path, command: str, label: str) -> None:
    """A stored bot's command names only files inside its own directory (the
    sandbox shows it nothing else): BotError naming the first that is not."""
    argv = _split(command, f"bot {label}: command")
    root = source.resolve()
    named = [argv[0]] if os.sep in argv[0] and not under_system(argv[0]) else []
    for word in [*named, *named_files(argv, str(root))]:
        real = (root / word).resolve()  # an absolute word stays itself
        if real != root and root not in real.parents:
            raise BotError(f"bot {label}: its command names {word!r}, outside its own "
                           f"directory {source} (a stored bot may use only its own files)")


def _refuse_escaping_links(target: Path, label: str) -> None:
    """BotError if the build left a symbolic link that leads out of the version
    (a host tool that follows it would read the organiser's files)."""
    links = escaping_links(target)
    if links:
        more = f" (and {len(links) - 1} more)" if len(links) > 1 else ""
        raise BotError(f"bot {label}: the build left a link {links[0]!r}{more} that leads "
                       f"outside the bot's folder")


def _copy(source: Path, target: Path) -> None:
    if target.exists():  # never replace what may be another database's version
        raise BotError(f"{target} exists already in the bot store (left by an add that "
                       f"was killed, or another database's bot): remove it, or choose "
                       f"another --bot-store")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(
            *SKIPPED_DIRS, *(f"*{suffix}" for suffix in SKIPPED_SUFFIXES)))
    except OSError as exc:
        _remove(target)
        raise BotError(f"cannot copy {source} into the bot store {target.parent}: "
                       f"{getattr(exc, 'strerror', None) or exc}") from None


def _remove(target: Path) -> None:
    _set_tree(target, writable=True)
    shutil.rmtree(target, ignore_errors=True)


def build(directory: Path, command: str, sandbox: Sandbox, label: str,
          seconds: float = BUILD_SECONDS) -> None:
    """Run a bot's build command in its directory, in ``sandbox`` with its limits,
    the directory writable; BotError with the last lines of the build's output
    (:func:`output_tail`) if it fails.
    A build still running after ``seconds`` is killed, with every process of its
    session (BotError: it took too long)."""
    argv = _split(command, f"bot {label}: build")
    if sandbox.kind == "bwrap" and os.geteuid() == 0:
        _own_tree(directory, NOBODY)  # the sandbox's user writes the build's files
    try:
        launch = sandbox.launch(argv, directory=str(directory), writable=True)
    except SandboxError as exc:
        raise BotError(f"bot {label}: cannot run build {command!r}: {exc}") from None
    output = bytearray()
    try:
        with launch.command() as (command_line, fds), subprocess.Popen(
                command_line, env=launch.env, cwd=launch.cwd, pass_fds=fds,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, start_new_session=True) as process:
            assert process.stdout is not None
            reader = threading.Thread(target=_keep_tail, args=(process.stdout, output),
                                      daemon=True)
            reader.start()
            try:
                process.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                raise BotError(f"bot {label}: build {command!r} took longer than "
                               f"{seconds:g} s") from None
            finally:
                # What the build left running would hold its output open.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                reader.join(timeout=10)
    except OSError as exc:
        raise BotError(f"bot {label}: cannot run build {command!r}: {exc}") from None
    finally:
        launch.release()
    if process.returncode != 0:
        raise BotError(f"bot {label}: build {command!r} failed with exit status "
                       f"{process.returncode}{output_tail(bytes(output))}")


def _keep_tail(stream: IO[bytes], kept: bytearray) -> None:
    """Read ``stream`` to its end, keeping its last :data:`OUTPUT_BYTES` in ``kept``."""
    while chunk := stream.read1(OUTPUT_BYTES):  # type: ignore[attr-defined]
        kept += chunk
        del kept[:-OUTPUT_BYTES]


def output_tail(output: bytes, lines: int = OUTPUT_LINES) -> str:
    """The last ``lines`` non-blank lines of a build's ``output``, each on a line of
    its own after ``; its output's last N lines:``, or `` (no output)``: the whole
    complaint of a compiler, whose last line alone ("compilation terminated.") says
    nothing."""
    kept = [line.rstrip()[:LINE_CHARS] for line in output.decode(errors="replace").splitlines()
            if line.strip()][-lines:]
    if not kept:
        return " (no output)"
    return f"; its output's last {len(kept)} lines:\n" + "\n".join(f"  | {line}" for line in kept)


def freeze(directory: Path) -> None:
    """Make a stored copy read-only (and readable by everyone, so by the sandbox's
    user too)."""
    if os.geteuid() == 0:
        _own_tree(directory, 0)
    _set_tree(directory, writable=False)


def _own_tree(directory: Path, uid: int) -> None:
    for path in [directory, *directory.rglob("*")]:
        os.lchown(path, uid, uid)


def _set_tree(directory: Path, writable: bool) -> None:
    if not directory.exists():
        return
    for path in [directory, *directory.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode & 0o7777
        mode = mode | 0o200 if writable else (mode & ~0o222) | 0o444 | (
            0o111 if path.is_dir() or mode & 0o100 else 0)
        path.chmod(mode)


# -- playing versions ---------------------------------------------------------------

def spec_of(version: BotVersion) -> BotSpec:
    """The entrant that plays ``version``: its label, command and directory."""
    from arena.runner.process import BotSpec

    return BotSpec(version.label, version.command, version.directory)


def find_version(store: Store, reference: str) -> BotVersion | None:
    """The stored version ``NAME@VERSION`` or ``NAME`` (its newest version not
    retired) names; None when no bot of that name is stored (so the text is a
    command); BotError when the bot is, but not that version."""
    match = REFERENCE.fullmatch(reference)
    if match is None:
        return None
    base, version = match.groups()
    versions = store.bot_versions(base)
    if not versions:
        if version is None:
            return None
        raise BotError(no_stored_bot(store, base))
    if version is not None:
        found = [v for v in versions if v.version == version]
        if not found:
            raise BotError(f"bot {base!r} has no version {version!r} (versions: "
                           f"{', '.join(v.version or '(unversioned)' for v in versions)})")
        return found[0]
    active = [v for v in versions if not v.retired]
    if not active:
        raise BotError(f"every version of bot {base!r} is retired; name one as "
                       f"{base}@VERSION to play it anyway")
    return active[-1]


def no_stored_bot(store: Store, base: str) -> str:
    """``no stored bot 'BASE' (did you mean 'NAME'?)``: the stored bots whose names
    are closest to a mistyped one, else where to see them all."""
    import difflib  # only on this error

    names = sorted({version.base for version in store.bot_versions()})
    close = difflib.get_close_matches(base, names, n=3)
    hint = (f"did you mean {' or '.join(repr(name) for name in close)}?" if close
            else "see 'arena bot list'")
    return f"no stored bot {base!r} ({hint})"


def adhoc_version(store: Store | None, base: str, command: str,
                  pending: Sequence[BotVersion] = ()) -> BotVersion:
    """The version ``-b BASE=COMMAND`` is: the stored (or ``pending``) one with its
    fingerprint, else the next one, numbered after the ``pending`` ones too (not
    stored yet: see :func:`register`).  No ``store``: a database yet to be made."""
    content = adhoc_fingerprint(command)
    known = [*(store.bot_versions(base) if store is not None else ()),
             *(v for v in pending if v.base == base)]
    for version in known:
        if version.fingerprint == content:
            return version
    number = max([int(store.next_bot_version(base)) if store is not None else 1,
                  *(int(v.version) + 1 for v in known if v.version.isdigit())])
    return BotVersion(base=base, version=str(number), command=command, fingerprint=content)


def register(store: Store, versions: Sequence[BotVersion]) -> None:
    """Store the ad-hoc versions :func:`adhoc_version` made (each once);
    BotError if another arena stored other content under one's label meanwhile."""
    for version in versions:
        stored, _ = store.add_bot_version(version)
        if stored.label != version.label:
            raise BotError(f"bot {version.base!r} got another version meanwhile: run again")


def active_entrants(store: Store, game: str, *, checked: bool = True) -> list[BotSpec]:
    """The newest version not retired of every stored bot whose manifest lists
    ``game`` (for a ladder), by name; ``checked``: only those whose latest
    ``arena check-bot`` in ``game`` passed (:func:`passed_checks`)."""
    return entrant_status(store, game, checked=checked)[0]


def entrant_status(store: Store, game: str, *, checked: bool = True
                   ) -> tuple[list[BotSpec], dict[str, str]]:
    """Who of the stored bots may play ``game`` on a ladder (see
    :func:`active_entrants`), and why each other stored bot (its newest version's
    label) is left out: retired, its bot.toml does not list ``game``, no check
    stored, or its latest check failed."""
    newest: dict[str, BotVersion] = {}
    retired: dict[str, BotVersion] = {}
    for version in store.bot_versions():
        if version.games is None:
            continue  # ad-hoc: plays only where it is given by command
        (retired if version.retired else newest)[version.base] = version
    left_out = {v.label: "retired" for base, v in retired.items() if base not in newest}
    listed = []
    for _, version in sorted(newest.items()):
        if game in (version.games or ()):
            listed.append(version)
        else:
            left_out[version.label] = f"its bot.toml lists {', '.join(version.games or ())}, " \
                                      f"not {game}"
    if not checked:
        return [spec_of(v) for v in listed], left_out
    latest = latest_checks(store, game)
    active = []
    for version in listed:
        if latest.get(version.label):
            active.append(spec_of(version))
        else:
            left_out[version.label] = (f"its check-bot in {game} failed"
                                       if version.label in latest else
                                       f"no check-bot in {game} stored")
    return active, left_out


def latest_checks(store: Store, game: str) -> dict[str, bool]:
    """Whether the latest finished ``arena check-bot`` in ``game`` of each version
    (label) checked in ``store`` passed (one read of the stored checks)."""
    latest: dict[str, bool] = {}
    for check in store.checks():  # latest first
        if check.get("game") == game and check.get("status") == "finished":
            latest.setdefault(check["bot"], bool(check.get("passed")))
    return latest


def passed_checks(store: Store, game: str) -> set[str]:
    """The versions (labels) whose latest finished ``arena check-bot`` in ``game``
    stored in ``store`` passed (one read of the stored checks)."""
    return {label for label, passed in latest_checks(store, game).items() if passed}
