"""Output folders of reports and exports: never half-written, never someone else's.

A report or an export is written into a temporary folder beside its target and renamed
into place only when complete, so a failure (a bad database, a full disk, Ctrl-C) leaves
the target as it was: absent, empty, or the earlier complete output.  Each output holds a
manifest (its ``marker`` file); a target that is neither empty nor holding this tool's
marker of the same kind is refused, so a folder of someone else's files is never written
into or replaced.

An earlier report is the exception to the temporary folder: it is re-rendered in place
(:mod:`reports.site`: each page replaced whole by a rename, the manifest last), so that a
re-render after ``N`` new games costs in proportion to ``N`` and not to the report's size.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: The marker of a report folder (its manifest, kept by :class:`reports.site.Site`).
REPORT_MARKER = ".report-manifest.json"
#: The marker of an export folder.
EXPORT_MARKER = ".export-manifest.json"


class FolderError(ValueError):
    """A target folder that must not be written: one line saying why."""


def check_target(out: str | os.PathLike[str], marker: str, what: str) -> Path:
    """The target folder ``out`` of a ``what`` ("report", "export") if it may be written:
    absent (its parent then must be a folder), empty, or an earlier output holding
    ``marker``; in each case one that can be written (a folder is made beside it and
    in it, then removed), so that a read-only folder fails before the work.  Creates
    nothing.  FolderError otherwise."""
    if not os.fspath(out).strip():
        raise FolderError(f"the {what} folder must be named (--out is empty)")
    folder = Path(out)
    try:
        _check_folder(folder, marker, what)
    except OSError as exc:
        raise FolderError(f"cannot write the {what} into {_shown(out)!r}: "
                          f"{exc.strerror or exc}") from None
    return folder


def _check_folder(folder: Path, marker: str, what: str) -> None:
    if folder.exists():
        if not folder.is_dir():
            raise FolderError(f"--out {_shown(folder)!r} is an existing file, not a folder")
        entries = os.listdir(folder)
        if entries and marker not in entries:
            raise FolderError(f"--out {_shown(folder)!r} is not empty and not an earlier "
                              f"{what} of this tool: choose an empty or new folder")
        _probe(folder, folder.name)  # an earlier one is re-rendered in place
    parent = _parent(folder)
    if not parent.is_dir():
        raise FolderError(f"cannot write the {what} into {_shown(folder)!r}: "
                          f"{_shown(parent)!r} is not a folder")
    _probe(parent, folder.name)  # the temporary folder goes beside the target


def _probe(where: Path, name: str) -> None:
    """Make a folder in ``where`` and remove it: OSError if it cannot be written."""
    os.rmdir(tempfile.mkdtemp(prefix=f".{name[:40]}.", suffix=".probe", dir=where))


def _shown(path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    return text if len(text) <= 100 else f"{text[:50]}...{text[-50:]}"


def is_earlier(folder: Path, marker: str) -> bool:
    """Whether ``folder`` holds an earlier output (its ``marker``)."""
    return (folder / marker).is_file()


@contextmanager
def written_into(target: Path) -> Iterator[Path]:
    """A temporary folder beside ``target`` to write into; when the block completes it
    replaces ``target`` (an empty folder or an earlier output, deleted); when the block
    or the swap fails, the temporary folders are deleted and ``target`` is left as it
    was.

    The swap is two renames: between them (a moment) neither folder is at ``target``."""
    parent = _parent(target)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name[:40]}.", suffix=".part", dir=parent))
    try:
        yield work
        os.chmod(work, 0o755)  # mkdtemp makes it private; a folder's usual mode
        _swap(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # gone already once swapped


def _swap(work: Path, target: Path) -> None:
    """Rename ``work`` to ``target``, the one there (if any) moved aside and deleted;
    put back if the second rename fails."""
    if not target.exists():
        os.rename(work, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name[:40]}.", suffix=".old",
                                dir=_parent(target)))
    try:
        os.rename(target, old / "previous")
    except BaseException:
        os.rmdir(old)
        raise
    try:
        os.rename(work, target)
    except BaseException:
        os.rename(old / "previous", target)  # if this fails too, ``old`` keeps it
        os.rmdir(old)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _parent(folder: Path) -> Path:
    return folder.absolute().parent
