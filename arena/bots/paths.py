"""Paths built from user data (a bot's name and version, an upload's id or
member names): :func:`contained` resolves one and refuses it unless it stays
inside its root, and :func:`escaping_links` finds the symbolic links in a folder
that lead out of it.  Every path the bots layer or the server makes from what a
user sent goes through :func:`contained`; names are also checked against
:data:`arena.bots.versions.NAME` before, but a name rule is no containment proof.
"""

from __future__ import annotations

import os
from pathlib import Path


class PathEscape(ValueError):
    """A path built from user data that would leave its root; the message says
    which, relative to the root (never the root's own path)."""


def contained(root: Path, *parts: str) -> Path:
    """``root / parts...``, resolved (links followed, ``..`` folded), or PathEscape
    if that is not strictly inside ``root`` (resolved too).  A part that is
    absolute, empty, ``.`` or ``..`` is refused as such."""
    base = root.resolve()
    for part in parts:
        if part in ("", ".", "..") or os.path.isabs(part) or "\0" in part:
            raise PathEscape(f"{part!r} is not a name for a folder or file")
    path = base.joinpath(*parts).resolve()
    if not inside(base, path):
        raise PathEscape(f"{'/'.join(parts)!r} leads outside its folder")
    return path


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, resolved (links followed), is strictly inside ``root``
    (resolved too)."""
    base, real = root.resolve(), path.resolve()
    return real != base and base in real.parents


def escaping_links(directory: Path) -> list[str]:
    """The symbolic links under ``directory`` (not followed) that resolve outside
    it (or to it), as relative paths, sorted.  An absolute link that resolves
    inside is kept: the sandbox shows a version at its own path."""
    root = directory.resolve()
    found = []
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            if not path.is_symlink():
                continue
            if not inside(root, path):
                found.append(path.relative_to(root).as_posix())
    return sorted(found)
