"""The report folder, re-rendered incrementally.

A manifest (:data:`MANIFEST`) keeps a digest of each page's inputs and of the code and
templates that rendered it.  A page whose digest is unchanged and whose file is there is
not written again (so its modification time says when it last changed); a page of the
last render that is not part of this one (a replay page no longer chosen) is deleted.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from jinja2 import Template

from reports.folders import REPORT_MARKER

#: The manifest's file name in the report folder (what marks a folder as a report).
MANIFEST = REPORT_MARKER
#: Template output pieces per write: unbuffered streaming costs a write per piece.
_CHUNKS = 256
_CODE = Path(__file__).parent


def digest(inputs: Any) -> str:
    """A digest of ``inputs`` by their ``repr`` (dataclasses, tuples, numbers, strings)."""
    return hashlib.blake2b(repr(inputs).encode(), digest_size=16).hexdigest()


@functools.cache
def code_version() -> str:
    """A digest of the report's code and templates: a change re-renders every page."""
    files = sorted([*_CODE.glob("*.py"), *(_CODE / "templates").iterdir()])
    hasher = hashlib.blake2b(digest_size=16)
    for path in files:
        hasher.update(path.name.encode() + b"\0" + path.read_bytes())
    return hasher.hexdigest()


class Site:
    """The pages of one render of the report into ``out_dir``."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        old = _load(out_dir / MANIFEST)
        self._old: dict[str, str] = old.get("files", {})
        self._valid = old.get("version") == code_version()
        self.files: dict[str, str] = {}
        #: Names of the pages this render wrote (the others were up to date).
        self.written: list[str] = []

    def fresh(self, name: str, inputs: Any) -> bool:
        """Whether page ``name`` on disk was rendered from ``inputs`` (then keep it as it
        is); either way it is part of this render."""
        self.files[name] = key = digest(inputs)
        return self._valid and self._old.get(name) == key and (self.out_dir / name).exists()

    def track(self, name: str) -> None:
        """A page written by other code in every render (kept while it is part of one)."""
        self.files[name] = ""

    def write(self, name: str, template: Template, context: dict[str, Any]) -> None:
        """Render ``template`` into page ``name``, streamed in chunks (a page never sits
        whole in memory) to a temporary file that then replaces the page."""
        path = self.out_dir / name
        partial = path.with_name(path.name + ".part")
        stream = template.stream(**context)
        stream.enable_buffering(_CHUNKS)
        try:
            stream.dump(str(partial), encoding="utf-8")
            os.replace(partial, path)
        except BaseException:  # a full disk, Ctrl-C: no half page left beside the pages
            partial.unlink(missing_ok=True)
            raise
        self.written.append(name)

    def copy(self, name: str, source: Path) -> None:
        """Copy an asset unless the copy on disk has the same bytes."""
        data = source.read_bytes()
        path = self.out_dir / name
        if not self.fresh(name, hashlib.blake2b(data).hexdigest()) or path.read_bytes() != data:
            path.write_bytes(data)
            self.written.append(name)

    def finish(self) -> None:
        """Delete the last render's pages that this one no longer has; save the manifest."""
        for name in set(self._old) - set(self.files):
            if Path(name).name == name:  # never anything outside the folder
                (self.out_dir / name).unlink(missing_ok=True)
        partial = self.out_dir / (MANIFEST + ".part")
        partial.write_text(json.dumps({"version": code_version(), "files": self.files}))
        os.replace(partial, self.out_dir / MANIFEST)


def _load(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}
