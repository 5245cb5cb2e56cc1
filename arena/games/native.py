"""The engines compiled with mypyc, used only while they match their sources.

``bash setup.sh`` compiles :data:`MODULES` (``python -m arena.games.native_build``)
into ``<sys.prefix>/five-arena-native/<digest>/``, where ``digest`` is
:func:`source_digest` of the sources it compiled.  :func:`install`, called by
``arena/games/__init__.py`` before any engine is imported, computes the digest
of the sources as they are now and puts a finder in front of the import system
for those modules only when that folder exists: an edited source changes the
digest, so a compiled module never shadows the code it was built from; the
pure-Python modules run instead.  The modules are compiled as one group (native
classes inherit across them), so they load all compiled or all pure.

``ARENA_PURE=1`` forces pure Python.  :func:`status` says which is in use
(``arena --version``).  The folder lies in the Python installation, which the
bots' sandbox binds read-only, so sandboxed bots that import the engines use the
compiled modules too (their package copy has the same sources).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: The modules compiled with mypyc, in one group (the one list: the build reads it).
MODULES: tuple[str, ...] = (
    "arena.games.cards",
    "arena.games.base",
    "arena.games.loop",
    "arena.games.five",
    "arena.games.five_or_less",
    "arena.games.five_card_rummy",
    "arena.games.furious_five",
    "arena.games.rummy_five",
    "arena.games.octablitz",
    # Not a game: the replay views a report computes for every stored game (it imports
    # the games through the registry, so the group's finder is in place first).
    "arena.store.replays",
    "arena.env.vector",  # the lab's vector: half an env step in pure Python (docs/lab.md#speed)
)
#: Modules outside the group whose declarations the compiled ones are built against
#: (mypyc checks the values they hand over by those types): digested with
#: :data:`MODULES`, so an edit to them too means pure Python until the next build.
TYPED_FROM: tuple[str, ...] = ("arena.games.__init__", "arena.store.records")
#: The group's shared library, a top-level module the compiled modules import.
LIBRARY = "five_arena_engines__mypyc"
#: Set to 1 to run the pure-Python modules even when compiled ones match.
PURE_VARIABLE = "ARENA_PURE"
#: Bumped when the build changes in a way the sources do not show.
BUILD_FORMAT = "1"

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent


def build_root() -> Path:
    """Where compiled groups live, one folder per digest."""
    return Path(sys.prefix) / "five-arena-native"


def source_path(module: str, root: Path = _PACKAGE_ROOT) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".py")


def source_digest(sources: Sequence[bytes]) -> str:
    """The digest naming a compiled group: the :func:`digested_sources` in order,
    the lists themselves, the interpreter's ABI and :data:`BUILD_FORMAT`."""
    digest = hashlib.sha256()
    header = "\n".join([BUILD_FORMAT, sys.implementation.cache_tag or "", *MODULES,
                        *TYPED_FROM])
    for part in (header.encode(), *sources):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()[:20]


def digested_sources(root: Path = _PACKAGE_ROOT) -> list[bytes]:
    """The sources of :data:`MODULES`, then of :data:`TYPED_FROM`, under ``root``."""
    return [source_path(module, root).read_bytes() for module in (*MODULES, *TYPED_FROM)]


def current_digest(root: Path = _PACKAGE_ROOT) -> str | None:
    """The digest of the sources under ``root`` as they are now (None if one is missing)."""
    try:
        return source_digest(digested_sources(root))
    except OSError:
        return None


def built() -> bool:
    """Whether a compiled group for the sources as they are now exists (a process
    started now would run it, unless ``ARENA_PURE`` is set)."""
    digest = current_digest()
    return digest is not None and extension_path(build_root() / digest, LIBRARY).is_file()


def extension_path(folder: Path, module: str) -> Path:
    """The compiled file of ``module`` (or :data:`LIBRARY`) in a group's folder."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return folder.joinpath(*module.split(".")).with_name(module.rsplit(".", 1)[-1] + suffix)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds :data:`MODULES` and :data:`LIBRARY` in one compiled group's folder; the
    library is loaded when the first engine module is looked for (``arena --version``
    and the registry load none), and if it cannot load, the finder steps aside."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.names = frozenset((*MODULES, LIBRARY))

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names or (fullname != LIBRARY and not self.load_library()):
            return None
        file = str(extension_path(self.folder, fullname))
        loader = importlib.machinery.ExtensionFileLoader(fullname, file)
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)

    def load_library(self) -> bool:
        """Whether the group's shared library is loaded (loaded now if need be); a
        library that cannot load (another libc, a broken file) means pure Python."""
        if LIBRARY in sys.modules:
            return True
        try:
            importlib.import_module(LIBRARY)
        except ImportError as error:
            sys.meta_path.remove(self)
            _state["pure_because"] = f"the compiled library does not load: {error}"
            return False
        return True


#: Why the pure-Python modules run, or None once the compiled ones are in use.
_state: dict[str, str | None] = {"pure_because": "not installed yet", "digest": None}


def install() -> None:
    """Use the compiled group if one matches the sources now (idempotent)."""
    if any(isinstance(finder, _Finder) for finder in sys.meta_path):
        return
    digest = current_digest()
    _state["digest"] = digest
    if os.environ.get(PURE_VARIABLE, "") not in ("", "0"):
        _state["pure_because"] = f"{PURE_VARIABLE}={os.environ[PURE_VARIABLE]}"
        return
    folder = build_root() / str(digest)
    if digest is None or not extension_path(folder, LIBRARY).is_file():
        _state["pure_because"] = "not compiled for these sources: bash setup.sh compiles them"
        return
    if any(module in sys.modules for module in MODULES):
        _state["pure_because"] = "an engine was imported before the loader"
        return
    sys.meta_path.insert(0, _Finder(folder))
    _state["pure_because"] = None


def compiled_in_use() -> bool:
    """Whether the engines imported (or to be imported) are the compiled ones."""
    return _state["pure_because"] is None


def compiled_modules() -> list[str]:
    """Which of :data:`MODULES` are imported now from a compiled file."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return [name for name in MODULES
            if str(getattr(sys.modules.get(name), "__file__", "")).endswith(suffixes)]


def status() -> str:
    """One line: which engines run and why (the compiled library loaded to know)."""
    for finder in sys.meta_path:
        if isinstance(finder, _Finder):
            finder.load_library()
            break
    if compiled_in_use():
        return f"engines: compiled (mypyc, {_state['digest']})"
    return f"engines: pure Python ({_state['pure_because']})"
