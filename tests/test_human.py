"""``arena play --human SEAT``: a person plays in a (pseudo-)terminal against real
subprocess bots; the game is stored like any other."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.cli import main
from arena.store.database import Store
from tests.terminal import Terminal

RANDOM = f"{sys.executable} -m sample_bots.random_bot"
PROMPT = "(q resigns): "
#: A short furious-five game against the random bot, with a move time far below the
#: person's thinking time.
GAME = ("play", "--human", "0", "-g", "furious-five", "-o", "rounds=1", "--seed", "3",
        "--sandbox", "none", "--move-time", "0.2", "--bank-time", "0.3", RANDOM)


def human_steps(store: Store, game_id: int) -> int:
    record = store.record(game_id)
    assert record is not None
    return sum(1 for step in record.actions for seat, _ in step if seat == 0)


def test_a_person_plays_a_whole_game_and_it_is_stored(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    terminal = Terminal([*GAME, "--db", url])
    assert terminal.read_until(PROMPT) == PROMPT
    assert "your hand:" in terminal.shown and "  1) " in terminal.shown
    terminal.type("x")  # not a number: asked again
    assert terminal.read_until("is not a choice", PROMPT) == "is not a choice"
    time.sleep(1.0)  # longer than a bot may take for a move (0.5 s): no limit for a person
    answered = 0
    while terminal.read_until(PROMPT, "game over") == PROMPT:
        terminal.type("1")
        answered += 1
    assert terminal.finish() == 0, terminal.shown[-2000:]
    assert "seat 0: human" in terminal.shown and "Traceback" not in terminal.shown
    store = Store(url)
    (game,) = store.games()
    assert game.seats == ["human", "random_bot@1"] and game.faults == []
    assert answered == human_steps(store, game.id) and answered > 1


def test_q_resigns_and_the_bots_finish_the_game(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    terminal = Terminal([*GAME, "--db", url])
    assert terminal.read_until(PROMPT) == PROMPT
    terminal.type("q")
    assert terminal.finish() == 3  # the seat forfeits, as a faulted bot does
    assert "you resign" in terminal.shown and "Traceback" not in terminal.shown
    (game,) = Store(url).games()
    assert [(f["seat"], f["kind"]) for f in game.faults] == [(0, "resigned")]
    assert game.places == [2, 1]


def test_end_of_input_resigns() -> None:
    proc = subprocess.run([sys.executable, "-m", "arena.cli", *GAME], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert "(end of input)" in proc.stdout and "resigned" in proc.stderr


def test_bad_human_seats_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--human", "2", RANDOM], ["--human", "-1", RANDOM],
                 ["--human", "0", "--json", RANDOM]):
        with pytest.raises(SystemExit) as exit_:
            main(["play", "-g", "five", *args])
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and "--human" in err, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_ctrl_c_at_the_prompt_stops_without_storing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    terminal = Terminal([*GAME, "--db", url])
    assert terminal.read_until(PROMPT) == PROMPT
    terminal.proc.send_signal(signal.SIGINT)  # what the terminal sends on Ctrl-C
    assert terminal.finish() == 130
    assert "arena: interrupted" in terminal.shown and "Traceback" not in terminal.shown
    assert list(Store(url).games()) == []
