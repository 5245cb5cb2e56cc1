"""Compile the engines (:data:`arena.games.native.MODULES`) with mypyc.

    python -m arena.games.native_build [--force]

Run by ``bash setup.sh``.  The sources are copied to a temporary folder first and
the digest taken of those bytes, so an edit made during the build cannot end up
under a digest it was not compiled from; the result is renamed into
``build_root()/<digest>`` whole, so a half-built group is never seen.  Prints one
line; exit status 1 when compiling failed (then the arena runs pure Python).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from arena.games.native import (
    LIBRARY,
    MODULES,
    build_root,
    digested_sources,
    extension_path,
    source_digest,
    source_path,
)

#: Compiled groups kept besides the new one (other checkouts of this interpreter).
KEEP = 3
#: Seconds for which a group is kept whatever :data:`KEEP` says.
RECENT = 3 * 3600


def copy_sources(into: Path) -> str:
    """Copy the ``arena`` package's sources under ``into`` (mypyc type-checks what the
    compiled modules import, e.g. the store's records for :mod:`arena.store.replays`);
    return the digest of the copied bytes (:func:`digested_sources`)."""
    package = source_path(MODULES[0]).parents[1]  # arena/games/cards.py -> arena
    shutil.copytree(package, into / package.name,
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
    return source_digest(digested_sources(into))


def compile_group(work: Path, out: Path) -> None:
    """mypyc + the C compiler on the copy in ``work``; the extensions into ``out``."""
    from mypyc.build import mypycify  # here: the arena itself never needs mypy
    from setuptools import setup

    os.chdir(work)
    # As the project's own mypy (pyproject.toml): libraries without type information
    # (msgpack, which arena.store.replays imports) are taken as Any.
    (work / "mypy.ini").write_text("[mypy]\nignore_missing_imports = True\n")
    # One C file per module, compiled in parallel: one file of the whole group
    # took over 3 minutes on one core.
    extensions = mypycify([str(source_path(m, Path("."))) for m in MODULES],
                          group_name=LIBRARY.removesuffix("__mypyc"), opt_level="3",
                          debug_level="0", multi_file=True)
    _compile_in_parallel()
    setup(name="five-arena-engines", ext_modules=extensions, script_args=[
        "-q", "build_ext", "--build-lib", str(out), "--build-temp", str(work / "temp"),
        "--parallel", str(len(os.sched_getaffinity(0)))])


def _compile_in_parallel() -> None:
    """Make the C compiler object compile an extension's sources on every CPU
    (setuptools compiles them one by one; its --parallel is across extensions)."""
    import importlib
    from concurrent.futures import ThreadPoolExecutor
    from typing import Any

    import setuptools  # noqa: F401 - first: it puts its own distutils in place

    compiler_class = importlib.import_module("distutils.ccompiler").CCompiler

    def compile_all(self: Any, sources: list[str], output_dir: str | None = None,
                    macros: Any = None, include_dirs: Any = None, debug: bool = False,
                    extra_preargs: Any = None, extra_postargs: Any = None,
                    depends: Any = None) -> list[str]:
        macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
            output_dir, macros, include_dirs, sources, depends, extra_postargs)
        cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)

        def one(obj: str) -> None:
            src, ext = build[obj]
            self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

        with ThreadPoolExecutor(len(os.sched_getaffinity(0))) as pool:
            list(pool.map(one, [obj for obj in objects if obj in build]))
        return objects

    compiler_class.compile = compile_all


def build(force: bool = False) -> str:
    """Compile unless a group for these sources exists; one line saying what happened."""
    start = time.monotonic()
    root = build_root()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="arena-native-") as tmp:
        work = Path(tmp)
        digest = copy_sources(work / "src")
        final = root / digest
        if extension_path(final, LIBRARY).is_file() and not force:
            return f"engines already compiled for these sources ({final})"
        staging = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=root))
        try:
            log = work / "build.log"
            with open(log, "w") as sink, contextlib.redirect_stdout(sink), \
                    contextlib.redirect_stderr(sink):
                saved = os.dup(1), os.dup(2)
                os.dup2(sink.fileno(), 1)
                os.dup2(sink.fileno(), 2)  # the C compiler's own output too
                try:
                    compile_group(work / "src", staging)
                finally:
                    os.dup2(saved[0], 1)
                    os.dup2(saved[1], 2)
        except (Exception, SystemExit) as error:
            shutil.rmtree(staging, ignore_errors=True)
            raise BuildError(_last_error(log, error)) from error
        shutil.rmtree(final, ignore_errors=True)
        _world_readable(staging)
        staging.rename(final)
    _prune(root, keep=final)
    return f"engines compiled with mypyc in {time.monotonic() - start:.0f} s ({final})"


def _world_readable(folder: Path) -> None:
    """Folders 755, files 644: sandboxed bots run as another user (nobody) and
    load the group from here, whatever the builder's umask was."""
    for path in (folder, *folder.rglob("*")):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


class BuildError(Exception):
    """Compiling failed; the message is the build's last error line."""


def _last_error(log: Path, error: BaseException) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    found = [line for line in lines if "error" in line.lower()]
    return (found or lines or [repr(error)])[-1].strip()


def _prune(root: Path, keep: Path) -> None:
    """Delete the other groups but the newest :data:`KEEP` and those built in the
    last :data:`RECENT` seconds (several checkouts being worked on at once each
    keep their own), and staging folders a killed build left a day ago."""
    groups = sorted((p for p in root.iterdir() if p.is_dir() and p != keep),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    now = time.time()
    stale = [p for p in groups if p.name.startswith(".") and p.stat().st_mtime < now - 86400]
    old = [p for p in groups if not p.name.startswith(".")][KEEP:]
    for group in stale + [p for p in old if p.stat().st_mtime < now - RECENT]:
        shutil.rmtree(group, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="compile even if up to date")
    args = parser.parse_args()
    try:
        print(f"setup: {build(args.force)}", file=sys.stderr)
    except (ImportError, BuildError) as error:
        print(f"setup: engines not compiled ({error}); the arena runs them in pure Python",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
