"""The repository's own files: no merge left its conflict markers behind, and
the README links nothing outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(<{7}|>{7}) |^={7}$", re.MULTILINE)


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.split(b"\0")
    files = []
    for name in filter(None, names):
        path = ROOT / name.decode()
        if path.suffix in {".py", ".md", ".html", ".sh", ".toml", ".js", ".css", ".cfg"}:
            files.append(path)
    return files


def test_no_conflict_markers_are_committed() -> None:
    found = [str(path.relative_to(ROOT)) for path in tracked_text_files()
             if MARKER.search(path.read_text(errors="replace"))]
    assert found == []


def test_the_readme_links_nothing_outside_the_repository() -> None:
    links = re.findall(r"\]\(([^)#]+)", (ROOT / "README.md").read_text())
    outside = [link for link in links if "://" not in link
               and not (ROOT / link).resolve().is_relative_to(ROOT)]
    assert outside == []
