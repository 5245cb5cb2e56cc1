"""End-to-end arena tests with real subprocess bots and a real SQLite database."""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

import pytest
import trio

from arena.formats.schedule import DEAL_BLOCK
from arena.games import make_game
from arena.games.loop import default_choose, turns
from arena.runner.client import TimeControl
from arena.runner.plan import Plan, create_tournament
from arena.runner.process import BotSpec
from arena.runner.referee import play_single_game
from arena.runner.sandbox import Sandbox
from arena.runner.tournament import run_tournament
from arena.store.database import Store

HERE = Path(__file__).resolve().parent
BAD_BOT = HERE / "bots" / "bad_bot.py"
RANDOM = BotSpec("random", f"{sys.executable} -m sample_bots.random_bot")
FAST = TimeControl(handshake=10.0, move=2.0, bank=10.0)


#: On every bad bot's command line (and its children's), so that the tests can
#: find any process left over, whatever namespace it runs in.
MARKER = f"arena-test-marker-{os.getpid()}"


def bad(mode: str, after: int = 3) -> BotSpec:
    return BotSpec(f"bad-{mode}", f"{sys.executable} {BAD_BOT} {mode} {after} {MARKER}")


def marked_processes() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and MARKER.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def assert_all_dead() -> None:
    deadline = time.monotonic() + 10  # kills land at once; exits can lag on a busy machine
    while marked_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not marked_processes(), "bot processes left running"


def run_plan(plan: Plan, store: Store, parallel: int = 2) -> int:
    tid = create_tournament(store, plan)
    trio.run(lambda: run_tournament(plan, store, tid, parallel=parallel))
    return tid


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("hang", "timeout"),
        ("crash", "crash"),
        ("garbage", "protocol_error"),
        ("nonmap", "protocol_error"),
        ("flood", "protocol_error"),
        ("illegal", "illegal_action"),
        ("fork_hang", "timeout"),
        ("slow_hello", "timeout"),
    ],
)
def test_faulting_bot_forfeits_and_tournament_completes(
    mode: str, kind: str, tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    # Generous for the random bot on a loaded machine; the faulting bots
    # misbehave for minutes, so only they time out.
    control = TimeControl(handshake=3.0, move=0.5, bank=2.0)
    plan = Plan(game="furious-five", bots=(bad(mode), RANDOM), table_size=2, games_per_table=2,
                options={"rounds": 3}, seed=7, control=control)
    tid = run_plan(plan, store)
    games = list(store.games(tid))
    assert len(games) == plan.total_games
    for game in games:
        bad_seat = game.seats.index(f"bad-{mode}")
        kinds = [f["kind"] for f in game.faults]
        assert kinds == [kind], (mode, game.faults)
        assert game.faults[0]["seat"] == bad_seat
        assert game.places[bad_seat] == 2 and game.places[1 - bad_seat] == 1
        assert len(game.faults[0]["stderr_tail"]) <= 4096
    if mode == "crash":
        assert "about to crash" in games[0].faults[0]["stderr_tail"]
    assert_all_dead()


def test_stale_replies_are_ignored_and_counted(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    plan = Plan(game="furious-five", bots=(bad("stale"), RANDOM), table_size=2,
                games_per_table=2, options={"rounds": 1}, control=FAST)
    tid = run_plan(plan, store)
    games = list(store.games(tid))
    assert len(games) == 2 and all(not g.faults for g in games)
    for game in games:
        stale_seat = game.seats.index("bad-stale")
        assert game.ignored[stale_seat] > 0
        assert game.ignored[1 - stale_seat] == 0
    assert_all_dead()


def test_stderr_flood_is_bounded_and_not_a_fault(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    plan = Plan(game="furious-five", bots=(bad("stderr_flood"), RANDOM), table_size=2,
                games_per_table=2, options={"rounds": 1}, control=TimeControl(move=2, bank=5))
    tid = run_plan(plan, store)
    for game in store.games(tid):
        assert not game.faults
        record = store.record(game.id)
        assert record is not None
        tail = record.stderr[game.seats.index("bad-stderr_flood")]
        assert 0 < len(tail) <= 4096 and "log line" in tail
    assert_all_dead()


def test_round_robin_seats_rotate_and_deals_repeat(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    bots = tuple(BotSpec(f"r{i}", RANDOM.command) for i in range(4))
    plan = Plan(game="furious-five", bots=bots, table_size=3, games_per_table=6,
                options={"rounds": 1}, control=FAST)
    tid = run_plan(plan, store, parallel=3)
    games = list(store.games(tid))
    assert len(games) == 4 * 6  # C(4,3) tables x 6 games
    by_table: dict[int, list] = {}
    for game in games:
        by_table.setdefault(game.table, []).append(game)
    for table_games in by_table.values():
        seats: dict[str, set[int]] = {}
        for game in table_games:
            for seat, name in enumerate(game.seats):
                seats.setdefault(name, set()).add(seat)
        # every bot sat every seat: the same number of times since G = 2 x k
        assert all(s == {0, 1, 2} for s in seats.values())
        seeds = sorted(g.seed for g in table_games)
        assert len(set(seeds)) == 2 and seeds.count(seeds[0]) == 3


def test_stored_record_replays_to_the_same_result(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    plan = Plan(game="furious-five", bots=(RANDOM, BotSpec("r2", RANDOM.command)),
                table_size=2, games_per_table=2, options={"rounds": 2}, control=FAST)
    tid = run_plan(plan, store)
    for game in store.games(tid):
        record = store.record(game.id)
        assert record is not None
        state = make_game(game.game, len(game.seats), game.options).new_state(game.seed)
        for step in record.actions:
            state.apply_actions({seat: action for seat, action in step})
        assert state.is_terminal()
        assert state.scores() == game.scores
        assert state.places() == game.game_places
        assert [e.to_dict() for e in state.events] == record.events


async def test_cancellation_kills_every_bot_and_keeps_finished_games(
    tmp_path: Path
) -> None:
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    plan = Plan(game="furious-five", bots=(bad("good"), RANDOM, bad("fork_hang", 40)),
                table_size=2, games_per_table=2, options={"rounds": 2},
                control=TimeControl(move=30, bank=30))
    tid = create_tournament(store, plan)
    with trio.move_on_after(8):
        # Every chain at once: the good-vs-random table's streams finish (first in
        # their chain when every table plays the same deals), the hanging bot's
        # never do.
        await run_tournament(plan, store, tid, parallel=len(plan.streams()))
    done = store.done_games(tid)
    assert 0 < len(done) < plan.total_games  # the good-vs-random table finished
    assert_all_dead()


def first_multi_claim_seed(players: int) -> int:
    """A seed whose game, played with first-legal actions, has a claim window
    with two or more claimants."""
    game = make_game("rummy-five", players, {"deals": 1})
    for seed in range(500):
        state = game.new_state(seed)
        for turn in turns(state):
            if len(turn.seats) >= 2:
                return seed
            turn.decisions.update({s: default_choose(state, s) for s in turn.seats})
    raise AssertionError("no multi-claimant window in 500 seeds")


async def test_claim_window_asks_every_claimant_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The bots meet in a shared folder: no bubblewrap, the folder passed through.
    monkeypatch.setenv("RENDEZVOUS_DIR", str(tmp_path))
    shared = Sandbox("none", pass_env=("RENDEZVOUS_DIR",))
    seed = first_multi_claim_seed(3)
    game = make_game("rummy-five", 3, {"deals": 1})
    control = TimeControl(move=5, bank=5)
    spec = BotSpec("rv", f"{sys.executable} {HERE / 'bots' / 'rendezvous_bot.py'}")
    result = await play_single_game(game, seed, [spec] * 3, control, shared)
    assert result.faults == []
    claims = [step for step in result.actions
              if step[0][1] in ("pass", "catch") or step[0][1].startswith(("set ", "run "))]
    multi = [step for step in claims if len(step) >= 2]
    assert multi, "the game had no multi-claimant window"
    logs = "".join(result.stderr)
    # Asked at once, every claimant of a shared window meets another; asked
    # one after the other, the first would wait alone.
    assert logs.count("met ") == sum(len(step) for step in multi)
    assert logs.count("alone ") == len(claims) - len(multi)


def test_octablitz_face_down_cards_stay_hidden_in_stored_views(tmp_path: Path) -> None:
    from arena.games.base import seat_view
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    bots = tuple(BotSpec(f"r{i}", RANDOM.command) for i in range(3))
    plan = Plan(game="octablitz", bots=bots, table_size=3, games_per_table=3,
                options={"deals": 2}, control=FAST)
    tid = run_plan(plan, store)
    games = list(store.games(tid))
    for game in games:
        record = store.record(game.id)
        assert record is not None and record.actions_public is False
        downs = [a for step in record.actions for _, a in step if a.startswith("down ")]
        assert downs, "random bots always play some cards face down"
        state = make_game("octablitz", 3, game.options).new_state(game.seed)
        for step in record.actions:
            state.apply_actions(dict(step))
        for seat in (None, 0, 1, 2):
            view = seat_view(record.events, seat)
            assert view == [e.to_dict() for e in state.events
                            if (seat is not None and e.visible_to(seat)) or e.to is None]
            for event in view:
                if event["kind"] == "down_cards":
                    assert event["seat"] == seat
                if event["kind"] == "play" and event["face"] == "down":
                    assert not event.get("cards")
    # The replay pages: tests/test_replay_viewer.py decodes what they embed.


async def test_a_bot_that_stops_reading_cannot_block_the_arena() -> None:
    from arena.runner.client import BotClient
    from arena.runner.process import start_bot_process
    from arena.store.faults import TimeoutFault

    async with trio.open_nursery() as nursery:
        deaf = await start_bot_process(BotSpec("deaf", "sleep 60"), nursery)
        try:
            client = BotClient(deaf)
            started = trio.current_time()
            with pytest.raises(TimeoutFault, match="did not read its input"):
                # Far more than a pipe buffer: send_all must block, then time out.
                await client.notify({"type": "game_start", "pad": "x" * 2_000_000}, 0.5)
            assert trio.current_time() - started < 5
        finally:
            await deaf.aclose()


async def test_a_tables_bots_start_at_once(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Each bot waits, before its hello, until all three have started: started
    one after the other, the first would wait alone and give up."""
    monkeypatch.setenv("MEET_DIR", str(tmp_path))
    shared = Sandbox("none", pass_env=("MEET_DIR",))
    spec = BotSpec("meet", f"{sys.executable} {HERE / 'bots' / 'meet_bot.py'} 3")
    game = make_game("furious-five", 3, {"rounds": 1})
    result = await play_single_game(game, 5, [spec] * 3, TimeControl(move=5, bank=5), shared)
    assert result.faults == []
    assert len(list(tmp_path.iterdir())) == 3


def test_the_next_chains_bots_start_while_a_table_plays(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """At -j 1, the bots of the next chain (the next block of deals, which shares
    no deal with the block playing) start while the first plays: each of the
    first four waits, before its hello, until four have started (one stream
    after the other, the first two would wait alone and give up).  The second
    rotation of a block, which shares its deals, starts only after it."""
    folder = tmp_path / "meet"
    folder.mkdir()
    monkeypatch.setenv("MEET_DIR", str(folder))
    meet = f"{sys.executable} {HERE / 'bots' / 'meet_bot.py'} 4"
    plan = Plan(game="furious-five", bots=(BotSpec("m1", meet), BotSpec("m2", meet)),
                table_size=2, games_per_table=2 * (DEAL_BLOCK + 1), options={"rounds": 1},
                control=FAST, sandbox="none", pass_env=("MEET_DIR",))
    assert len(plan.chains()) == 2
    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    tid = create_tournament(store, plan)
    trio.run(functools.partial(run_tournament, plan, store, tid, parallel=1))
    games = list(store.games(tid))
    assert len(games) == plan.games_per_table and all(not game.faults for game in games)
    assert len(list(folder.iterdir())) >= 4
