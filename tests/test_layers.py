"""The layers of docs/architecture.md hold, and no module imports itself round a circle."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.layers import ALLOWED, broken_rules, cycles, import_cycles, modules

ROOT = Path(__file__).resolve().parent.parent


def test_no_import_circle_in_the_project() -> None:
    assert import_cycles(ROOT) == []


def test_every_import_follows_the_layers() -> None:
    assert broken_rules(ROOT) == []


def test_the_layer_rules_themselves_are_acyclic() -> None:
    assert cycles({a: set(b) for a, b in ALLOWED.items()}) == []


def test_the_walk_sees_every_package() -> None:
    names = modules(ROOT)
    for package in ("arena.games", "arena.runner", "arena.store", "arena.stats",
                    "arena.formats", "arena.bots", "arena.cli", "reports", "protocol",
                    "sample_bots"):
        assert package in names


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    for top in ("arena", "reports", "protocol", "sample_bots"):
        (tmp_path / top).mkdir(exist_ok=True)
    return tmp_path


def test_a_circle_added_on_purpose_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "arena/__init__.py": "",
        "arena/runner/__init__.py": "",
        "arena/runner/a.py": "from arena.runner.b import x\n",
        "arena/runner/b.py": "def f():\n    from arena.runner import a\n",
    })
    assert import_cycles(root) == [["arena.runner.a", "arena.runner.b"]]


def test_a_broken_layer_rule_is_found(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "arena/__init__.py": "",
        "arena/runner/__init__.py": "",
        "arena/runner/process.py": "",
        "arena/stats/__init__.py": "",
        "arena/stats/ratings.py": "from arena.store import database\n",
        "arena/store/__init__.py": "",
        "arena/store/database.py": "",
        "reports/__init__.py": "",
        "reports/render.py": "if True:\n    import arena.runner.process\n",
        "sample_bots/__init__.py": "",
        "sample_bots/bot.py": "from arena.runner.process import x\n",
    })
    assert sorted(broken_rules(root)) == [
        "arena.stats.ratings (stats) imports arena.store.database (store), line 1",
        "reports.render (site) imports arena.runner.process (runner), line 2",
        "sample_bots.bot (sample_bots) imports arena.runner.process (runner), line 1",
    ]
