"""Secret deals (docs/formats.md#secret-deals): without ``--seed`` every tournament,
match and ladder draws its own secret, every table gets its own deal seeds from
it, only the commitment is shown until it is finished, and then anyone can check
the revealed secret and recompute every deal.  Real bots, real SQLite and
PostgreSQL, the real CLI."""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from arena.formats.deals import LADDER_PERIOD
from arena.formats.schedule import Ladder
from arena.games import make_game
from arena.runner.ladder import create_ladder, run_ladder
from arena.runner.plan import Plan, new_secret
from arena.runner.process import BotSpec
from arena.store.database import Store, StoredGame
from reports.render import render_report
from tests.pg import new_database
from tests.test_cli import arena, arena_here

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
QUICK = ["-g", "furious-five", "-o", "rounds=1", "--workers", "1"]
BOTS = ["-b", f"a={RANDOM}", "-b", f"b={RANDOM}", "-b", f"c={RANDOM}"]
CARD = re.compile(r"\b[2-9TJQKA][cdhs]\b")


def published(stderr: str) -> str:
    """The commitment the banner published."""
    found = re.search(r"arena: deals: secret, committed to sha256 ([0-9a-f]{64}) ", stderr)
    assert found, stderr
    return found.group(1)


def revealed(stderr: str) -> str:
    found = re.search(r"arena: deals revealed: secret ([0-9a-f]{64})", stderr)
    assert found, stderr
    return found.group(1)


def recomputed(secret: str, table: int, deal: int) -> int:
    """A deal seed as docs/formats.md tells anyone to recompute it (not the arena's code)."""
    digest = hmac.new(bytes.fromhex(secret), f"deal:{table}:{deal}".encode(),
                      hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 2


def seeds_by_table(games: list[StoredGame]) -> dict[int, set[int]]:
    tables: dict[int, set[int]] = defaultdict(set)
    for game in games:
        tables[game.table].add(game.seed)
    return tables


def test_default_tournaments_deal_fresh_secret_deals_each_table_its_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'a.db'}"
    runs = [arena_here(capsys, "tournament", *QUICK, "-k", "2", "-n", "4", *BOTS, "-j", "2",
                       "--db", db) for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    store = Store(db)
    first, second = (list(store.games(t["id"])) for t in store.tournaments())
    # Two default runs of one command deal different cards.
    assert not {g.seed for g in first} & {g.seed for g in second}
    assert published(runs[0].stderr) != published(runs[1].stderr)
    for run, games in zip(runs, (first, second), strict=True):
        # The revealed secret is the one committed to at the start ...
        secret = revealed(run.stderr)
        assert hashlib.sha256(bytes.fromhex(secret)).hexdigest() == published(run.stderr)
        # ... and every deal is its keyed hash: nobody chose them.
        k = 2
        assert all(g.seed == recomputed(secret, g.table, g.number // k) for g in games)
        # Each table its own deals; each deal once per seat rotation.
        tables = seeds_by_table(games)
        assert len(tables) == 3 and all(len(s) == 2 for s in tables.values())
        assert not tables[0] & tables[1] and not tables[1] & tables[2]


def test_same_deals_at_every_table_is_an_opt_in_named_unsafe(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'a.db'}"
    run = arena_here(capsys, "tournament", *QUICK, "-k", "2", "-n", "4", *BOTS, "--same-deals",
                     "--seed", "5", "--db", db)
    assert run.returncode == 0, run.stderr
    assert "KNOWN deals (--seed 5)" in run.stderr and "UNSAFE with untrusted bots" in run.stderr
    tables = seeds_by_table(list(Store(db).games()))
    assert tables[0] == tables[1] == tables[2] and len(tables[0]) == 2
    report = arena_here(capsys, "report", "--db", db, "--out", str(tmp_path / "site"))
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "site" / "tournament-1.html").read_text(encoding="utf-8")
    assert "known deals (seed 5); the same deals at every table" in page
    usage = arena_here(capsys, "tournament", "--help").stdout
    assert "--same-deals" in usage and "UNSAFE with untrusted bots" in " ".join(usage.split())


def interrupted_tournament(db: str, deck: list[str],
                           cwd: Path) -> subprocess.CompletedProcess[str]:
    """A default tournament on a stacked deck, stopped by Ctrl-C once 4 games are stored."""
    proc = subprocess.Popen([sys.executable, "-m", "arena.cli", "tournament", *QUICK,
                             "-o", "deck=" + ",".join(deck), "-k", "2", "-n", "40", *BOTS,
                             "-j", "2", "--db", db], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    sqlite = Path(db.removeprefix("sqlite:///"))
    while db.startswith("sqlite") and not sqlite.exists() and time.monotonic() < deadline:
        time.sleep(0.3)  # opening the database first would create it under the arena
    time.sleep(1)
    store = Store(db)
    while sum(1 for _ in store.games()) < 4 and time.monotonic() < deadline:
        time.sleep(0.3)
    store.close()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def shown_text(folder: Path) -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace")
                     for path in sorted(folder.rglob("*")) if path.is_file())


def holds_run_of(text: str, cards: list[str]) -> bool:
    """Whether ``text`` names ``cards`` in this order, one after another."""
    tokens = " ".join(CARD.findall(text))
    return " ".join(cards) in tokens


def assert_nothing_shows(text: str, seeds: set[int], secret: str, deck: list[str]) -> None:
    assert secret not in text
    assert not [seed for seed in seeds if str(seed) in text]
    assert not holds_run_of(text, deck[20:32]), "a stacked deck is shown"


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_no_seed_secret_or_stacked_deck_is_shown_until_the_tournament_is_finished(
        backend: str, tmp_path: Path, request: pytest.FixtureRequest,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    db = (new_database(request.getfixturevalue("postgres_server_url")) if backend == "postgresql"
          else f"sqlite:///{tmp_path / 'a.db'}")
    deck = list(reversed(make_game("furious-five", 2, {}).deck()))
    stopped = interrupted_tournament(db, deck, tmp_path)
    monkeypatch.chdir(tmp_path)
    commitment = published(stopped.stderr)
    store = Store(db)
    (tournament,) = store.tournaments()
    tid, secret = tournament["id"], store.deal_secret(tournament["id"])
    assert secret is not None and tournament["status"] == "interrupted"
    before = list(store.games(tid))
    seeds = {g.seed for g in before}
    assert before and all(g.sealed for g in before)
    # The report, every game's `arena show` (each view) and the exports.
    report = arena_here(capsys, "report", "--db", db, "--out", str(tmp_path / "site"),
                        "--max-replays", "1000")
    assert report.returncode == 0, report.stderr
    site = shown_text(tmp_path / "site")
    assert commitment in site and "secret not revealed yet" in site
    shows = [arena_here(capsys, "show", str(g.id), *view, "--db", db)
             for g in before[:3] for view in ([], ["--seat", "1"])]
    assert all(show.returncode == 0 and ", seed secret," in show.stdout for show in shows)
    export = arena_here(capsys, "export", "--db", db, "--out", str(tmp_path / "export"),
                        "-f", "csv", "-f", "json", "-f", "pgn")
    assert export.returncode == 0, export.stderr
    for text in (site, "\n".join(show.stdout for show in shows),
                 shown_text(tmp_path / "export")):
        assert_nothing_shows(text, seeds, secret, deck)
    # Resumed, it plays the same deals (the stored secret's) and then reveals it.
    resumed = arena_here(capsys, "tournament", "--resume", str(tid), "--db", db, "-j", "2",
                         "--workers", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert published(resumed.stderr) == commitment and revealed(resumed.stderr) == secret
    after = list(store.games(tid))
    assert len(after) == 3 * 40 and not any(g.sealed for g in after)
    assert all(g.seed == recomputed(secret, g.table, g.number // 2) for g in after)
    ids = {g.id for g in before}
    assert {g.id: g.seed for g in before} == {g.id: g.seed for g in after if g.id in ids}
    # Once finished everything is shown: the check above could fail.
    report = arena_here(capsys, "report", "--db", db, "--out", str(tmp_path / "site2"))
    assert report.returncode == 0, report.stderr
    site = shown_text(tmp_path / "site2")
    assert secret in site and str(after[-1].seed) in site and holds_run_of(site, deck[20:32])


async def test_a_ladder_reveals_each_period_once_its_tables_are_played(
        tmp_path: Path) -> None:
    bots = tuple(BotSpec(name, RANDOM) for name in ("a", "b", "c"))
    plan = Plan(game="furious-five", bots=bots, table_size=2, games_per_table=2,
                options={"rounds": "1"}, seed=None, secret=new_secret(), format=Ladder())
    store = Store(f"sqlite:///{tmp_path / 'ladder.db'}")
    tid = create_ladder(store, plan)
    await run_ladder(plan, store, tid, lambda: bots, parallel=2,
                     max_groups=LADDER_PERIOD + 2)
    stored = store.tournament(tid)
    assert stored is not None and stored["status"] == "running"  # not finished
    first, second = stored["deals"]
    assert (first["first_table"], second["first_table"]) == (0, LADDER_PERIOD)
    assert first["secret"] == plan.secret and second["secret"] is None
    assert hashlib.sha256(bytes.fromhex(first["secret"])).hexdigest() == first["commitment"]
    games = list(store.games(tid))
    assert len(games) == 2 * (LADDER_PERIOD + 2)
    for game in games:
        assert game.sealed == (game.table >= LADDER_PERIOD)
        if game.table < LADDER_PERIOD:
            assert game.seed == recomputed(first["secret"], game.table, 0)
    # The re-rendered report shows period 0's seeds and not period 1's.
    render_report(store, tmp_path / "site", bootstrap=0, max_replays=1000)
    site = shown_text(tmp_path / "site")
    assert all(str(g.seed) in site for g in games if not g.sealed)
    assert not [g for g in games if g.sealed and str(g.seed) in site]
    assert second["commitment"] in site
    secret = store.deal_secret(tid, LADDER_PERIOD)
    assert secret is not None and secret not in site
    assert all(g.seed == recomputed(secret, g.table, 0) for g in games if g.sealed)
    # Resumed from what is stored, the open period goes on with its stored secret.
    resumed = Plan.from_stored(store.tournament(tid) or {}, store.deal_secret(tid))
    await run_ladder(resumed, store, tid, lambda: bots, parallel=2,
                     max_groups=LADDER_PERIOD + 4)
    games = list(store.games(tid))
    assert len(games) == 2 * (LADDER_PERIOD + 4)
    assert len((store.tournament(tid) or {})["deals"]) == 2
    assert all(g.seed == recomputed(secret, g.table, 0) for g in games
               if g.table >= LADDER_PERIOD)


def test_a_tournament_stored_before_secret_deals_resumes_on_its_old_deals() -> None:
    bots = tuple(BotSpec(name, RANDOM) for name in ("a", "b", "c"))
    config = Plan(game="furious-five", bots=bots, table_size=2, games_per_table=6,
                  seed=4).to_config()
    assert config["deals"] == "known" and config["same_deals"] is False
    old = {key: value for key, value in config.items() if key not in ("deals", "same_deals")}
    plan = Plan.from_config(old)
    rng = random.Random(4)  # how deals were drawn then: the same at every table
    dealt = [rng.getrandbits(62) for _ in range(3)]
    assert all([plan.deal_seeds().seed(table, deal) for deal in range(3)] == dealt
               for table in range(3))
    assert plan.to_config() == old  # so it is found again as the same plan


def test_resuming_without_its_stored_secret_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = f"sqlite:///{tmp_path / 'a.db'}"
    run = arena_here(capsys, "tournament", *QUICK, "-k", "2", "-n", "2", *BOTS[:4], "--db", db)
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(tmp_path / "a.db") as connection:
        connection.execute("delete from deal_secrets")
        connection.execute("update tournaments set status = 'interrupted'")  # else finished
    again = arena("tournament", "--resume", "1", "--db", db)  # bad input: its own process
    assert again.returncode == 2 and again.stderr.strip().splitlines() == [
        "arena: error: tournament 1 cannot be resumed: this tournament's deal secret is "
        "not stored"]
