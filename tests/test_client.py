"""BotClient against real subprocess bots: request ids, unsolicited messages,
and fairness between tables that share the event loop."""

from __future__ import annotations

import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

from arena.runner.client import (
    MAX_IGNORED,
    MAX_REQUEST_ID,
    BotClient,
    Clock,
    TimeControl,
    new_request_id,
)
from arena.runner.process import BotSpec, start_bot_process
from arena.store.faults import BotFault, ProtocolFault, TimeoutFault

BOTS = Path(__file__).resolve().parent / "bots"
RANDOM = BotSpec("random", f"{sys.executable} -m sample_bots.random_bot")
LEGAL = ["a", "b", "c"]
#: move 0: every request's whole duration is charged to the bank, so the
#: bank spent is the time the bot was kept waiting, to the microsecond.
STOPWATCH = TimeControl(handshake=10.0, move=0.0, bank=600.0)


def bot(script: str, *args: object) -> BotSpec:
    return BotSpec(f"{script}{args}", " ".join([sys.executable, str(BOTS / script),
                                                *map(str, args)]))


@asynccontextmanager
async def connected(spec: BotSpec, control: TimeControl = STOPWATCH
                    ) -> AsyncIterator[BotClient]:
    """A client to ``spec`` after the handshake; the bot is killed on exit."""
    async with trio.open_nursery() as nursery:
        process = await start_bot_process(spec, nursery)
        try:
            client = BotClient(process)
            await client.handshake(control.handshake)
            yield client
        finally:
            await process.aclose()


async def ask(client: BotClient, clock: Clock | None = None) -> int:
    return await client.request({"seat": 0}, LEGAL, [], clock or Clock(STOPWATCH))


def test_request_ids_are_random_positive_and_exact_in_javascript() -> None:
    ids = [new_request_id() for _ in range(1000)]
    assert len(set(ids)) == len(ids)
    assert all(1 <= i <= MAX_REQUEST_ID == 2**53 - 1 for i in ids)
    assert max(ids) > 2**50


async def test_an_action_sent_before_its_request_is_never_accepted() -> None:
    # Guessing ids 1..1000 in advance: the guesses are ignored until that is a fault.
    async with connected(bot("sly_bot.py", "early", 1000)) as client:
        with pytest.raises(ProtocolFault, match=f"more than {MAX_IGNORED} messages"):
            await ask(client)
    # A few guesses: ignored and counted; the real answer (index 0) counts.
    async with connected(bot("sly_bot.py", "early", 10)) as client:
        for request in range(3):
            assert await ask(client) == 0
            assert client.ignored == 10 * (request + 1)


async def test_replies_with_an_id_of_the_wrong_type_are_ignored() -> None:
    async with connected(bot("sly_bot.py", "wrong_type")) as client:
        assert [await ask(client) for _ in range(3)] == [0, 0, 0]
        assert client.ignored == 9  # 17.0, "17" and true, three times
    control = TimeControl(move=0.3, bank=0.0)
    async with connected(bot("sly_bot.py", "wrong_type_only"), control) as client:
        with pytest.raises(TimeoutFault, match="no reply"):
            await ask(client, Clock(control))
        assert client.ignored == 1


async def test_a_hello_with_unknown_keys_is_fine_and_one_with_junk_is_a_fault() -> None:
    async with connected(bot("sly_bot.py", "hello_keys")) as client:
        assert (client.info.name, client.info.version, client.info.author) == ("12345", "1", "")
        assert await ask(client) == 0 and client.ignored == 0
    async with connected(bot("sly_bot.py", "hello_junk")) as client:
        assert client.info.name == "sly-hello_junk"
        with pytest.raises(ProtocolFault, match="malformed"):
            await ask(client)


@pytest.mark.parametrize("mode", ["answer", "silent", "heavy"])
async def test_an_unsolicited_flood_is_a_protocol_fault_at_once(mode: str) -> None:
    async with connected(bot("flood_bot.py", mode)) as client:
        started = trio.current_time()
        with pytest.raises(ProtocolFault, match="not the awaited reply"):
            for _ in range(3):
                await ask(client)
        assert trio.current_time() - started < 2
        assert client.ignored <= MAX_IGNORED + 1


async def play_table(spec: BotSpec, requests: int, done: trio.Event | None = None
                     ) -> tuple[float, list[str]]:
    """One seat answering ``requests`` requests: the bank spent and the faults.

    With ``done``, it plays games of ``requests`` requests until ``done`` is
    set, finishing the game under way (so a misbehaving bot has shown what it
    does), restarting the bot after a fault as the referee does."""
    spent, faults = 0.0, []
    while True:
        clock = Clock(STOPWATCH)
        async with connected(spec) as client:
            try:
                for _ in range(requests):
                    await ask(client, clock)
            except BotFault as exc:
                faults.append(exc.kind)
        if faults:
            await trio.sleep(0.02)  # the rest of the game, played by the referee
        spent += STOPWATCH.bank - clock.bank
        if done is None or done.is_set():
            return spent, faults


async def honest_time_next_to(neighbour: BotSpec, requests: int) -> tuple[float, list[str]]:
    """The bank the random bot spends on ``requests`` requests while
    ``neighbour`` plays at another table on the same event loop."""
    done = trio.Event()
    result: dict[str, tuple[float, list[str]]] = {}

    async def honest() -> None:
        result["honest"] = await play_table(RANDOM, requests)
        done.set()

    async def other() -> None:
        result["other"] = await play_table(neighbour, 50, done)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(honest)
        nursery.start_soon(other)
    assert result["honest"][1] == []
    return result["honest"][0], result["other"][1]


@pytest.mark.parametrize("mode", ["answer", "silent", "heavy"])
async def test_a_flooding_bot_costs_an_honest_bot_at_another_table_nothing(mode: str) -> None:
    requests = 200  # several games' worth of one seat's decisions
    calm, calm_faults = await honest_time_next_to(RANDOM, requests)
    flooded, flood_faults = await honest_time_next_to(bot("flood_bot.py", mode), requests)
    # Before the fix the flood cost the honest bot about 50 ms per request (10 s
    # here).  The flooder also takes CPU from the honest bot, which on a loaded
    # machine costs it real time: hence a bound relative to its calm time.
    assert flooded < 2 * calm + 1.0, (flooded, calm)
    assert calm_faults == [] and flood_faults and set(flood_faults) == {"protocol_error"}


SPENDER = BOTS / "spender_bot.py"
#: Answers the hello, then never reads its stdin again.
DEAF = BotSpec("deaf", shlex.join([sys.executable, "-c", (
    "import os, time, msgpack; os.read(0, 65536); "
    "os.write(1, msgpack.packb({'type': 'hello'})); time.sleep(60)")]))


async def timed_ask(client: BotClient, move: float) -> tuple[float, int | str]:
    """Ask with ``move`` seconds and no bank: (seconds taken, index or fault kind)."""
    started = trio.current_time()
    try:
        outcome: int | str = await ask(client, Clock(TimeControl(move=move, bank=0.0)))
    except BotFault as exc:
        outcome = exc.kind
    return trio.current_time() - started, outcome


async def test_the_watchdog_follows_each_moves_deadline() -> None:
    async with connected(BotSpec("sleepy", f"{sys.executable} {SPENDER} sleep 0.2")) as client:
        # A long deadline, then a wake-up of the watchdog with no move under
        # way, then a shorter deadline than its next wake-up: each move's own.
        assert (await timed_ask(client, 2.0))[1] == 0
        await trio.sleep(2.2)
        assert (await timed_ask(client, 1.0))[1] == 0
        assert not client.process.timed_out
        seconds, outcome = await timed_ask(client, 0.1)
        assert outcome == "timeout" and 0.1 <= seconds < 1.0
        assert client.process.timed_out


async def test_a_request_to_a_bot_that_stops_reading_times_out() -> None:
    async with connected(DEAF) as client:
        started = trio.current_time()
        with pytest.raises(TimeoutFault, match="did not read its input"):
            # Far more than a pipe buffer: the write must wait, then time out.
            await client.request({"pad": "x" * 2_000_000}, LEGAL, [],
                                 Clock(TimeControl(move=0.3, bank=0.0)))
        assert 0.3 <= trio.current_time() - started < 2


class TaskSteps(trio.abc.Instrument):
    """Counts the steps of one task: each time it yields, it resumes in a new step."""

    def __init__(self, task: trio.lowlevel.Task) -> None:
        self.task, self.steps = task, 0

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.steps += 1


async def test_every_request_yields_to_the_other_tables() -> None:
    ticks = 0

    async def other_table() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await trio.lowlevel.checkpoint()

    mine = TaskSteps(trio.lowlevel.current_task())
    trio.lowlevel.add_instrument(mine)
    try:
        async with connected(RANDOM) as client, trio.open_nursery() as nursery:
            nursery.start_soon(other_table)
            await trio.lowlevel.checkpoint()
            before = ticks
            for _ in range(50):
                steps = mine.steps
                await ask(client)
                assert mine.steps > steps, "a request that never yielded"
            # Each yield runs the other table once in the batch this task resumes in,
            # before or after it (trio reverses half its batches): the last such run
            # may come after this count, even when the bot's replies never kept this
            # task waiting (a loaded machine).
            assert ticks - before >= 49
            nursery.cancel_scope.cancel()
    finally:
        trio.lowlevel.remove_instrument(mine)


async def test_the_first_move_of_a_lone_bot_records_its_cpu_time() -> None:
    async with connected(BotSpec("spin", f"{sys.executable} {SPENDER} spin 0.02")) as client:
        for _ in range(2):
            await ask(client)
            wall, cpu = client.last_move
            assert 0.02 <= cpu <= wall + 0.001
