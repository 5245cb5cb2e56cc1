"""Starter kits (docs/bots.md#starter-kits): ``arena new-bot`` in Python, JavaScript and
C, each kit's README commands run as written, ``arena bot add`` building it in the
sandbox, ``arena check-bot`` passing in every game, a tournament against the random bot
without a fault, and each SDK's surface driven message by message over real pipes.

The JavaScript and C kits need Node.js with npm, and a C compiler with msgpack-c
(``bash setup.sh test`` installs them); without them these tests fail, saying so."""

from __future__ import annotations

import io
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import msgpack
import pytest

from arena.bots.starter import LANGUAGES
from arena.bots.versions import read_manifest
from arena.games import game_names
from arena.store.database import Store
from tests.test_bots import run

RANDOM = f"random={sys.executable} -m sample_bots.random_bot"
#: A request the SDK tests send: the largest id, unknown keys, every field.
REQUEST = {"type": "request", "id": 2**53 - 1, "unknown": [1, 2],
           "observation": {"pick": 2, "phase": "draw"}, "legal": ["a", "b", "c", "d"],
           "events": [{"kind": "drop", "seat": 1}],
           "time": {"move_ms": 250, "bank_ms": 9650, "clock": "wall"}}
#: A bot on each SDK that plays ``observation["pick"]``, logs the request's time and
#: legal actions, prints to stdout (which must reach stderr) and has a long name.
PROBES = {
    "python": ("probe.py", f"{sys.executable} probe.py", """\
from protocol import Bot, run

class Probe(Bot):
    name = "n" * 300

    def choose(self, request):
        print("stray", request.time["move_ms"], request.time["bank_ms"], request.legal[-1])
        return request.observation["pick"]

    def on_game_end(self, message):
        print("game_end", message["scores"])

run(Probe())
"""),
    "javascript": ("probe.js", "node probe.js", """\
const { Bot, log, run } = require("./five");
class Probe extends Bot {
  constructor() { super(); this.name = "n".repeat(300); }
  choose(request) {
    console.log("stray", request.time.move_ms, request.time.bank_ms, request.legal.at(-1));
    return request.observation.pick;
  }
  onGameEnd(message) { log("game_end", JSON.stringify(message.scores)); }
}
run(new Probe());
"""),
    "c": ("probe.c", "./probe", """\
#include "five.h"
static int choose(const five_request *request, void *state) {
    int64_t pick = -1;
    (void)state;
    printf("stray %lld %lld %s\\n", (long long)request->move_ms, (long long)request->bank_ms,
           request->legal[request->n_legal - 1]);
    fflush(stdout);
    five_int(five_get(request->observation, "pick"), &pick);
    return (int)pick;
}
static void on_game_end(const msgpack_object *message, void *state) {
    (void)state;
    fprintf(stderr, "game_end ");
    msgpack_object_print(stderr, *five_get(message, "scores"));
    fprintf(stderr, "\\n");
}
int main(void) {
    char name[301];
    memset(name, 'n', 300);
    name[300] = '\\0';
    five_bot bot = {.name = name, .choose = choose, .on_game_end = on_game_end};
    return five_run(&bot);
}
"""),
}


def toolchain_problem(language: str) -> str | None:
    """Why ``language``'s kit cannot be built and run here, or None."""
    if language == "javascript":
        missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
        return f"needs {' and '.join(missing)} (apt-get install nodejs npm)" if missing else None
    if language == "c":
        if shutil.which("cc") is None:
            return "needs a C compiler (apt-get install gcc)"
        done = subprocess.run(["cc", "-E", "-x", "c", "-"], input=b"#include <msgpack.h>\n",
                              capture_output=True, check=False)
        return None if done.returncode == 0 else \
            "needs msgpack-c's headers (apt-get install libmsgpack-dev)"
    return None


def require_toolchain(language: str) -> None:
    """Fail, never skip: CI installs every toolchain (``bash setup.sh test``)."""
    problem = toolchain_problem(language)
    if problem is not None:
        pytest.fail(f"the {language} kit {problem}; 'bash setup.sh test' installs it")


def new_kit(capsys: pytest.CaptureFixture[str], folder: Path, language: str,
            *games: str) -> Path:
    require_toolchain(language)
    flags = [flag for game in games for flag in ("--game", game)]
    status, out, err = run(capsys, "new-bot", str(folder), "--lang", language, *flags)
    assert status == 0, err
    assert out.startswith(f"wrote {folder}: ") and "bot.toml" in out
    return folder


def build(folder: Path) -> None:
    """The kit's build step as ``bot.toml`` gives it, run here (outside the sandbox)."""
    command = read_manifest(folder).build
    if command:
        subprocess.run(shlex.split(command), cwd=folder, check=True)


# -- the kit, end to end -----------------------------------------------------------------

@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_kit_is_added_checked_in_every_game_and_plays_without_fault(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], language: str) -> None:
    folder = new_kit(capsys, tmp_path / f"my_{language}.bot", language)
    manifest = read_manifest(folder)
    kit = LANGUAGES[language]
    assert (manifest.name, manifest.command, manifest.build) == (
        f"my_{language}.bot", kit.command, kit.build)
    assert list(manifest.games) == game_names()
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    status, out, err = run(capsys, "bot", "add", str(folder), "--db", db)
    assert status == 0 and out.strip() == f"added {manifest.name}@1", err
    status, out, err = run(capsys, "check-bot", "-b", manifest.name, "--db", db, "--json")
    assert status == 0, out + err
    report = json.loads(out)
    assert [check["game"] for check in report["checks"]] == game_names()
    assert all(check["passed"] and not check["faults"] for check in report["checks"]), out
    assert {check["hello"]["name"] for check in report["checks"]} == {manifest.name}
    status, _, err = run(capsys, "tournament", "-g", "five", "-k", "2", "-n", "4", "-j", "1",
                         "-b", manifest.name, "-b", RANDOM, "--db", db)
    assert status == 0, err
    store = Store(db)
    try:
        tid = max(t["id"] for t in store.tournaments())
        games = list(store.games(tournament_id=tid))
    finally:
        store.close()
    assert len(games) == 4 and not any(game.faults for game in games)
    assert all(f"{manifest.name}@1" in game.seats for game in games)


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_readme_commands_play_and_check_as_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        language: str) -> None:
    folder = new_kit(capsys, tmp_path / "kit", language, "octablitz")
    readme = (folder / "README.md").read_text()
    commands = [shlex.split(line)[1:] for line in readme.splitlines()
                if line.startswith(("arena play ", "arena check-bot -b \""))]
    assert len(commands) == 2, readme
    assert "arena bot add kit" in readme and "arena check-bot -b kit" in readme
    build(folder)
    monkeypatch.chdir(tmp_path)
    play, check = commands
    assert play[:2] == ["play", "-g"] and play.count("octablitz") == 1
    status, out, err = run(capsys, *play, "--json")
    assert status == 0, err
    result = json.loads(out)
    assert result["game"] == "octablitz" and len(result["bots"]) == 3 and not result["faults"]
    status, out, err = run(capsys, *check, "-n", "3")
    assert status == 0 and "result: PASSED" in out, out + err


# -- the SDKs ------------------------------------------------------------------------------

def probe(capsys: pytest.CaptureFixture[str], tmp_path: Path,
          language: str) -> tuple[list[str], Path]:
    """A kit with its probe bot (:data:`PROBES`) beside its bot: its argv, its folder."""
    folder = new_kit(capsys, tmp_path / "probe", language, "five")
    file, command, source = PROBES[language]
    (folder / file).write_text(source)
    if language == "c":
        subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", "probe",
                        "probe.c", "-lmsgpackc"], cwd=folder, check=True)
    argv = shlex.split(command)
    return [str(folder / argv[0]) if argv[0].startswith("./") else argv[0], *argv[1:]], folder


def talk(argv: list[str], folder: Path, messages: list[dict[str, object]],
         close: bool) -> tuple[int | None, list[dict[str, object]], str]:
    """Send ``messages`` to the bot (closing its stdin only if ``close``); its exit
    status (None if it did not exit within 20 s), its messages and its stderr."""
    with subprocess.Popen(argv, cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as process:
        assert process.stdin is not None
        process.stdin.write(b"".join(msgpack.packb(m) for m in messages))
        process.stdin.flush()
        if close:
            process.stdin.close()
        try:
            status: int | None = process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            status = None
        out, err = process.stdout.read(), process.stderr.read()  # type: ignore[union-attr]
        if not close:
            process.stdin.close()
    return status, list(msgpack.Unpacker(io.BytesIO(out))), err.decode()


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_each_sdk_answers_the_protocol_and_keeps_stdout_clean(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], language: str) -> None:
    argv, folder = probe(capsys, tmp_path, language)
    match = [{"type": "hello", "protocol": 1}, {"type": "surprise"},
             {"type": "match_start", "game": "five", "players": 2, "games": 1},
             {"type": "game_start", "game_number": 0, "seat": 0, "players": 2}, REQUEST,
             {"type": "game_end", "scores": [3, -3], "places": [1, 2]}]
    for end, close in (([{"type": "match_end"}], False), ([], True)):
        status, replies, err = talk(argv, folder, match + end, close)
        assert status == 0, err
        hello, action = replies  # nothing else on stdout: the stray print went to stderr
        assert hello == {"type": "hello", "name": "n" * 200, "protocol": 1,
                         **{k: hello[k] for k in ("version", "author") if k in hello}}
        assert action == {"type": "action", "id": 2**53 - 1, "index": 2}
        assert "stray 250 9650 d" in err and "game_end" in err and "3" in err, err


# -- bad input -----------------------------------------------------------------------------

def test_new_bot_refuses_a_directory_that_is_not_empty(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    status, out, err = run(capsys, "new-bot", str(folder), "--lang", "python")
    assert status == 2 and not out and err.count("\n") == 1, err
    assert err.startswith("arena: error: ") and "is not empty" in err
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize(("args", "needle"), [
    (["--lang", "python", "--game", "chess"], "unknown game 'chess'"),
    (["--lang", "cobol"], "invalid choice: 'cobol'"),
    ([], "--lang"),
])
def test_new_bot_bad_input_is_one_line_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        needle: str) -> None:
    status, out, err = run(capsys, "new-bot", str(tmp_path / "mine"), *args)
    assert status == 2 and not out and err.count("\n") == 1 and needle in err, err
    assert list(tmp_path.iterdir()) == []


def test_new_bot_names_the_bot_after_a_usable_directory(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "new-bot", str(tmp_path / "my bot"), "--lang", "c")
    assert status == 2 and "starting with a letter or digit" in err and err.count("\n") == 1, err
    status, _, err = run(capsys, "new-bot", str(tmp_path / "no" / "bot"), "--lang", "c")
    assert status == 2 and "no directory" in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


def test_an_empty_directory_becomes_the_kit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    new_kit(capsys, tmp_path / "empty", "python", "five")
    assert sorted(p.name for p in (tmp_path / "empty").iterdir()) == [
        "README.md", "bot.py", "bot.toml", "protocol"]
    assert [p.name for p in tmp_path.iterdir()] == ["empty"]  # no staging folder left


def test_without_npm_the_javascript_kit_is_refused_and_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    status, _, err = run(capsys, "new-bot", str(tmp_path / "js"), "--lang", "javascript")
    assert status == 2 and "needs npm" in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []
