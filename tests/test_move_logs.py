"""Per-move logs (issue 30): a bot's stderr kept per move, bounded, stored, shown
to its owner only (a real ``arena serve``: seat view JSON, game HTML and API),
in ``arena report --logs`` only; and ``arena submit --wait``'s progress."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from arena.store.database import Store
from arena.store.move_logs import GAME_CUT, GAME_LOG_BYTES, MOVE_CUT, MOVE_LOG_BYTES, SeatLog
from tests.server import arena, eventually, running_server, set_password, sign_in, user_add

LOG_BOT = Path(__file__).parent / "bots" / "move_log_bot.py"
RANDOM_BOT = f"{sys.executable} -m sample_bots.random_bot"
PASSWORD = "correct horse battery"
#: What the log bot writes at its even moves (see tests/bots/move_log_bot.py).
EVEN = "move {k} <b>escaped</b>\n"


def expected_text(move: int) -> str | None:
    """The log the bot's ``move``-th move of a game must have (None: no entry)."""
    if move == 1:
        return "x" * MOVE_LOG_BYTES + MOVE_CUT.format(count=3000 - MOVE_LOG_BYTES)
    return EVEN.format(k=move) if move % 2 == 0 else None


def check_entries(entries: list[list[object]], actions: list[list[list[object]]],
                  seat: int) -> None:
    """``entries`` are exactly the log bot's moves' logs at ``seat``, at the right steps."""
    own_steps = [number for number, step in enumerate(actions)
                 if any(s == seat for s, _ in step)]
    expected = [[step, move, expected_text(move)] for move, step in enumerate(own_steps)
                if expected_text(move) is not None]
    assert entries == expected


def test_a_seat_log_keeps_at_most_its_game_limit_and_marks_the_cut() -> None:
    log = SeatLog()
    for move in range(100):
        log.add(move * 2, move, b"q" * MOVE_LOG_BYTES, 10)
    kept = [text for _, _, text in log.entries]
    assert sum(str(text).count("q") for text in kept) == GAME_LOG_BYTES
    assert len(kept) == GAME_LOG_BYTES // MOVE_LOG_BYTES + 1  # the last one: only the mark
    assert kept[-1] == GAME_CUT.format(limit=GAME_LOG_BYTES), "the move past the limit: its mark"
    assert all(str(text).endswith(MOVE_CUT.format(count=10)) for text in kept[:-1])
    log.add(500, 250, b"later")
    assert len(log.entries) == len(kept), "nothing after the game's limit"
    empty = SeatLog()
    empty.add(0, 0, b"")
    assert empty.entries == []


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database with a tournament of the log bot against a random bot (2 games)."""
    db = f"sqlite:///{tmp_path_factory.mktemp('logs') / 'arena.db'}"
    proc = arena("tournament", "-g", "five", "-k", "2", "-n", "2", "--sandbox", "none",
                 "-j", "1", "-b", f"logger={sys.executable} {LOG_BOT}",
                 "-b", f"plain={RANDOM_BOT}", "--db", db)
    assert proc.returncode == 0, proc.stderr
    return db


def test_each_move_s_stderr_is_stored_bounded_at_its_step(played: str) -> None:
    store = Store(played)
    games = list(store.scan_games())
    assert len(games) == 2
    logs = store.move_logs([g.id for g in games])
    for game in games:
        seat = game.seats.index("logger@1")
        record = store.record(game.id)
        assert record is not None
        assert set(logs[game.id]) == {seat}, "the random bot wrote nothing"
        check_entries(logs[game.id][seat], record.actions, seat)
        # the tail of the game's stderr is kept besides, as before
        assert "move 0 <b>escaped</b>" in record.stderr[seat]
    assert store.move_logs([g.id for g in games], seats=[9]) == {}


def test_the_report_has_the_logs_only_with_logs(played: str, tmp_path: Path) -> None:
    for flag, out in (([], tmp_path / "plain"), (["--logs"], tmp_path / "logs")):
        proc = arena("report", "--db", played, "--out", str(out), *flag)
        assert proc.returncode == 0, proc.stderr
        seat_files = sorted(out.glob("game-*-seat*.js"))
        assert seat_files
        text = "".join(path.read_text() for path in seat_files)
        if flag:
            assert "move 2 <b>escaped</b>" in text  # JSON in a script file, not HTML
            assert MOVE_CUT.format(count=1976).lstrip("\n") in text
        else:
            assert "move 2" not in text and "xxxxxxxx" not in text


# -- the server ----------------------------------------------------------------------------

MANIFEST = 'name = "{name}"\ncommand = "python bot.py"\ngames = ["five"]\n'


@dataclass
class Served:
    base: str
    db: str
    tokens: dict[str, str]
    links: dict[str, str]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, played: str) -> Iterator[Served]:
    tokens, links = {}, {}
    for name in ("ann", "bob"):
        tokens[name], links[name] = user_add(played, name)
    with running_server(played, "--check-games", "2") as base:
        yield Served(base, played, tokens, links)


def submit_wait(served: Served, folder: Path, name: str, bot_py: str
                ) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(MANIFEST.format(name=name))
    (folder / "bot.py").write_text(bot_py)
    proc = arena("submit", str(folder), "--server", served.base, "--token",
                 served.tokens["ann"], "--wait")
    return proc, proc.stdout.splitlines()


@pytest.fixture(scope="module")
def logged(served: Served, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """ann's log bot, submitted with ``arena submit --wait``: its output and the check's games."""
    proc, lines = submit_wait(served, tmp_path_factory.mktemp("ann") / "annlog", "annlog",
                              LOG_BOT.read_text())
    games = eventually(lambda: requests.get(f"{served.base}/api/games",
                                            params={"bot": "annlog"}, timeout=30).json()["games"],
                       bool)
    return {"proc": proc, "lines": lines, "games": games}


def test_submit_wait_prints_the_progress_then_the_bot_page(served: Served,
                                                         logged: dict[str, object]) -> None:
    proc, lines = logged["proc"], logged["lines"]
    assert isinstance(proc, subprocess.CompletedProcess) and isinstance(lines, list)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert re.fullmatch(r"submission \d+: annlog: queued", lines[0])
    # A stage shorter than the poll may be missed (a check of 2 quick games): not its games.
    games = [line for line in lines if re.fullmatch(
        r"  five game \d+ \(seat \d\): score -?[\d.]+, place \d, no faults", line)]
    assert len(games) == 2, lines  # --check-games 2: each once
    if "  checking" in lines:
        assert lines.index("  checking") < lines.index(games[0])
    assert re.fullmatch(r"submission \d+: annlog@1: passed", lines[-2]), lines
    assert lines[-1] == f"bot page: {served.base}/bots/annlog"
    submission = int(lines[0].split()[1].rstrip(":"))
    body = requests.get(f"{served.base}/api/submissions/{submission}", timeout=30,
                        headers={"Authorization": f"Bearer {served.tokens['ann']}"}).json()
    assert body["bot_url"] == "/bots/annlog"
    page = _signed(served, "ann").get(f"{served.base}/submissions/{submission}", timeout=30).text
    assert 'id="bot-link" href="/bots/annlog"' in page


def test_a_failed_check_exits_3_without_a_bot_page(served: Served, tmp_path: Path) -> None:
    proc, lines = submit_wait(served, tmp_path / "annbad", "annbad",
                              "import sys\nsys.exit(1)\n")
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert re.fullmatch(r"submission \d+: annbad@1: failed( \(.*\))?", lines[-1]), lines
    assert not any(line.startswith("bot page:") for line in lines)


def test_only_the_owner_sees_the_move_logs(served: Served, logged: dict[str, object]) -> None:
    games = logged["games"]
    assert isinstance(games, list)
    game = games[0]
    seat = game["seats"].index("annlog@1")
    record = Store(served.db).record(game["id"])
    assert record is not None
    ann = _signed(served, "ann")
    view = ann.get(f"{served.base}/games/{game['id']}/seat/{seat}.json", timeout=30)
    assert view.status_code == 200
    check_entries(view.json()["logs"], record.actions, seat)
    own_api = ann.get(f"{served.base}/api/games/{game['id']}", timeout=30).json()
    check_entries(own_api["move_logs"][str(seat)], record.actions, seat)
    html = ann.get(f"{served.base}/games/{game['id']}", timeout=30).text
    assert 'id="move-logs"' in html and "move 2 &lt;b&gt;escaped&lt;/b&gt;" in html
    assert "move 2 <b>" not in html
    bob = _signed(served, "bob")
    for client, who in ((bob, "bob"), (requests.Session(), "anonymous")):
        assert client.get(f"{served.base}/games/{game['id']}/seat/{seat}.json",
                          timeout=30).status_code == 404, who
        page = client.get(f"{served.base}/games/{game['id']}", timeout=30).text
        api = client.get(f"{served.base}/api/games/{game['id']}", timeout=30).text
        for text in (page, api):
            assert "move 2" not in text and "move-logs" not in text, who
            assert "move_logs" not in text and "xxxxxxxx" not in text, who


SIGNED: dict[str, requests.Session] = {}


def _signed(served: Served, name: str) -> requests.Session:
    if name not in SIGNED:
        try:
            SIGNED[name] = set_password(served.base, served.links[name], PASSWORD)
        except AssertionError:  # the link was used already
            SIGNED[name] = sign_in(served.base, name, PASSWORD)
    return SIGNED[name]


def test_the_replay_shows_each_move_s_stderr_beside_it_to_the_owner(
        served: Served, logged: dict[str, object]) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from tests.chromium import chromium
    from tests.test_server_browser import fill, no_console_errors, until

    games = logged["games"]
    assert isinstance(games, list)
    game = games[0]
    seat = game["seats"].index("annlog@1")
    record = Store(served.db).record(game["id"])
    assert record is not None
    own_moves = sum(any(s == seat for s, _ in step) for step in record.actions)
    expected = [text for move in range(own_moves) if (text := expected_text(move)) is not None]
    _signed(served, "ann")  # her password is set
    with chromium() as browser:
        browser.get(f"{served.base}/signin")
        fill(browser, "signin-form", name="ann", password=PASSWORD)
        until(browser, lambda: browser.current_url.endswith("/account"), "not signed in")
        browser.get(f"{served.base}/games/{game['id']}")
        until(browser, lambda: bool(browser.find_elements(By.CSS_SELECTOR, ".viewer-select")),
              "no viewer")
        read = "return [document.querySelector('.stderr-box').hidden, " \
               "document.querySelector('.move-stderr').textContent]"
        assert browser.execute_script(read)[0], "the spectator's view shows no stderr"
        Select(browser.find_element(By.CSS_SELECTOR, ".viewer-select")).select_by_value(
            str(seat))
        until(browser, lambda: browser.find_element(By.ID, "viewer")
              .get_attribute("data-viewer") == str(seat), "the seat's view is not shown")
        shown = browser.execute_script("""
            const found = [];
            const last = Number(document.querySelector('.slider').max);
            for (let i = 0; i <= last; i++) {
              document.querySelector('.slider').value = i;
              document.querySelector('.slider').dispatchEvent(new Event('input'));
              const box = document.querySelector('.stderr-box');
              if (!box.hidden) found.push(document.querySelector('.move-stderr').textContent);
            }
            return found;""")
        assert shown == expected
        no_console_errors(browser)
