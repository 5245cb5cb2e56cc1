"""The wire format's reader limits and the Python SDK, with real processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.games import make_game
from arena.runner.client import TimeControl
from arena.runner.process import BotSpec
from arena.runner.referee import play_single_game
from protocol import wire

HERE = Path(__file__).resolve().parent


def test_messages_split_across_reads_and_batched() -> None:
    reader = wire.MessageReader()
    data = wire.pack({"type": "a", "x": [1, 2]}) + wire.pack({"type": "b", "extra": {"k": 1}})
    out = []
    for i in range(len(data)):
        out += reader.feed(data[i : i + 1])
    assert out == [{"type": "a", "x": [1, 2]}, {"type": "b", "extra": {"k": 1}}]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (msgpack.packb([1, 2, 3]), "must be a map"),
        (msgpack.packb(7), "must be a map"),
        (msgpack.packb({"kind": "x"}), "string 'type'"),
        (msgpack.packb({"type": 5}), "string 'type'"),
        (b"\xc1", "malformed"),
        (msgpack.packb({"type": "x", "s": "y" * 20_000}), "malformed"),
        (msgpack.packb({"type": "x", "a": list(range(5000))}), "malformed"),
        (b"\xdb" + (100 << 20).to_bytes(4, "big") + b"z" * 70_000, "must be a map"),
    ],
    ids=["array", "int", "no type", "int type", "reserved byte", "long string",
         "long array", "top-level string"],
)
def test_reader_rejects_bad_input(data: bytes, needle: str) -> None:
    with pytest.raises(wire.ProtocolViolation, match=needle):
        wire.MessageReader().feed(data)


def test_reader_rejects_deep_nesting() -> None:
    value: object = 1
    for _ in range(40):
        value = [value]
    with pytest.raises(wire.ProtocolViolation, match="nested deeper"):
        wire.MessageReader().feed(msgpack.packb({"type": "x", "v": value}))


def message_of_size(size: int) -> dict[str, str]:
    """A message that packs to exactly ``size`` bytes."""
    for pad in range(size):
        body = {"type": "x", "pad": "p" * pad}
        if len(wire.pack(body)) == size:
            return body
    raise AssertionError(f"no message packs to {size} bytes")


def test_reader_accepts_the_limit_exactly() -> None:
    body = message_of_size(1000)
    assert wire.MessageReader(wire.Limits(max_message_bytes=1000)).feed(wire.pack(body)) == [body]


def test_reader_rejects_one_byte_over_the_limit() -> None:
    data = wire.pack(message_of_size(1001))
    with pytest.raises(wire.ProtocolViolation, match="larger than 1000"):
        wire.MessageReader(wire.Limits(max_message_bytes=1000)).feed(data)


async def test_sdk_keeps_stdout_clean_and_reports_identity() -> None:
    game = make_game("furious-five", 2, {"rounds": 1})
    control = TimeControl(move=5, bank=5)
    spec = BotSpec("chatty", f"{sys.executable} {HERE / 'bots' / 'chatty_bot.py'}")
    other = BotSpec("random", f"{sys.executable} -m sample_bots.random_bot")
    result = await play_single_game(game, 3, [spec, other], control)
    assert result.faults == []
    assert result.bot_info[0] == {"name": "chatty", "version": "2.0", "author": "tests"}
    assert "print() from choose" in result.stderr[0]
    assert "raw fd 1 write" in result.stderr[0]


def header(lead: int, length: int, width: int = 4) -> bytes:
    """A msgpack header: ``lead`` followed by ``length`` on ``width`` bytes."""
    return bytes([lead]) + length.to_bytes(width, "big")


HUGE = 1 << 30
TYPE_X = b"\x82" + wire.pack({"type": "x"})[1:]  # a 2-entry map, its first entry "type": "x"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (header(0xDB, HUGE), "must be a map"),
        (header(0xC6, HUGE), "must be a map"),
        (header(0xDD, HUGE), "exceeds"),
        (header(0xDF, HUGE), "exceeds"),
        (TYPE_X + b"\xa1s" + header(0xDB, HUGE), "string of 1073741824 bytes exceeds"),
        (TYPE_X + b"\xa1s" + header(0xC6, HUGE), "string of 1073741824 bytes exceeds"),
        (TYPE_X + b"\xa1s" + header(0xDD, HUGE), "exceeds"),
        (TYPE_X + b"\xa1s" + header(0xDF, HUGE), "exceeds"),
        (TYPE_X + b"\xa1s\x91\x81\xa1k" + header(0xDB, HUGE), "string of 1073741824 bytes"),
        (TYPE_X + b"\xa1s" + header(0xDA, 16 * 1024 + 1, 2), "string of 16385 bytes"),
        (TYPE_X + b"\xa1s" + header(0xDC, 4097, 2), "exceeds"),
        (TYPE_X + b"\xa1s" + header(0xC9, 1), "ext"),
        (TYPE_X + b"\xa1s" + b"\xd4", "ext"),
        (TYPE_X + b"\xa1s" + b"\x91" * 16, "nested deeper than 16"),
    ],
    ids=["str32", "bin32", "array32", "map32", "nested str32", "nested bin32",
         "nested array32", "nested map32", "deeply nested str32", "str16 one over",
         "array16 one over", "ext32", "fixext", "too deep"],
)
def test_a_header_over_the_limits_fails_before_its_body_arrives(data: bytes, needle: str
                                                                ) -> None:
    with pytest.raises(wire.ProtocolViolation, match=needle):
        wire.MessageReader().feed(data)
    # The same bytes one at a time: refused at the header's last byte.
    reader = wire.MessageReader()
    with pytest.raises(wire.ProtocolViolation, match=needle):
        for i in range(len(data)):
            reader.feed(data[i : i + 1])
    assert i == len(data) - 1


def test_declared_sizes_that_cannot_fit_in_a_message_fail_at_once() -> None:
    s = "s" * (16 * 1024)
    whole = wire.pack({"type": "x", "a": s, "b": s, "c": s, "d": s})
    header_of_d = whole.index(b"\xa1d") + 2 + 3
    with pytest.raises(wire.ProtocolViolation, match="larger than 65536"):
        wire.MessageReader().feed(whole[:header_of_d])
    # 2000 values take at least 2000 bytes.
    small = wire.Limits(max_message_bytes=1000)
    with pytest.raises(wire.ProtocolViolation, match="larger than 1000"):
        wire.MessageReader(small).feed(TYPE_X + b"\xa1a" + header(0xDC, 2000, 2))


def test_good_and_bad_messages_in_one_read() -> None:
    reader = wire.MessageReader()
    good = wire.pack({"type": "a", "s": "y" * 300})
    with pytest.raises(wire.ProtocolViolation, match="string of"):
        reader.feed(good + good + TYPE_X + b"\xa1s" + header(0xDB, HUGE))


def test_next_message_parses_one_message_at_a_time() -> None:
    reader = wire.MessageReader()
    reader.push(wire.pack({"type": "a"}) + b"\xc1")
    assert reader.next_message() == {"type": "a"}
    with pytest.raises(wire.ProtocolViolation, match="malformed"):
        reader.next_message()


def test_long_runs_of_one_byte_values_are_walked_however_they_are_cut() -> None:
    limits = wire.Limits(max_container_len=20_000)
    body = {"type": "x", "v": [0, None, True, -1, 127, -32] * 2000 + ["s"]}
    data = wire.pack(body)
    for step in (1, 3000, 4095, 4097, 9000):
        reader = wire.MessageReader(limits)
        out = []
        for i in range(0, len(data), step):
            out += reader.feed(data[i : i + step])
        assert out == [body], step
    # A header after a long run is refused as soon as it arrives.
    bad = TYPE_X + b"\xa1v" + header(0xDC, 10_001, 2) + b"\x00" * 10_000 + header(0xDB, HUGE)
    for step in (1, 4096, len(bad)):
        reader = wire.MessageReader(limits)
        with pytest.raises(wire.ProtocolViolation, match="string of"):
            for i in range(0, len(bad), step):
                reader.feed(bad[i : i + step])
        assert i + step >= len(bad)


EDGE = wire.Limits(max_message_bytes=3000, max_container_len=40, max_str_len=300, max_depth=5)


def edge_message() -> dict[str, object]:
    """A message at every limit of :data:`EDGE` but the size, with every kind of value."""
    return {
        "type": "edge",
        "s": "s" * 300,
        "b": b"b" * 300,
        "list": list(range(-20, 20)),
        "deep": [[[{"k": None}]]],
        "scalars": [True, False, None, 1.5, -(1 << 63), (1 << 64) - 1, 255, 65535, -33, -129,
                    -32769, 1 << 32, "é", ""],
        "map": {str(i): i for i in range(40)},
    }


def test_limits_exactly_at_the_boundary_pass_however_the_bytes_are_cut() -> None:
    body = edge_message()
    body["zpad"] = ["p" * 300] * 6
    body["zpad"].append(next("q" * n for n in range(300) if len(wire.pack(body))
                             + len(wire.pack("q" * n)) == EDGE.max_message_bytes))
    data = wire.pack(body)
    assert len(data) == EDGE.max_message_bytes
    assert wire.MessageReader(EDGE).feed(data[:-1]) == []
    for step in (1, 2, 3, 7, 64, 1000, len(data)):
        reader = wire.MessageReader(EDGE)
        out = []
        for i in range(0, len(data) * 2, step):
            out += reader.feed((data + data)[i : i + step])
        assert out == [body, body], step


@given(st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 64) - 1) | st.floats()
    | st.text(max_size=40) | st.binary(max_size=40),
    lambda children: st.lists(children, max_size=6)
    | st.dictionaries(st.text(max_size=5), children, max_size=6),
    max_leaves=30,
), st.lists(st.integers(1, 50), min_size=1, max_size=20))
def test_any_message_within_the_limits_parses_however_it_is_cut(
        value: object, cuts: list[int]) -> None:
    body = {"type": "t", "v": value}
    data = wire.pack(body) * 2
    reader = wire.MessageReader()
    out, at = [], 0
    while at < len(data):
        step = cuts[at % len(cuts)]
        out += reader.feed(data[at : at + step])
        at += step
    assert len(out) == 2
    assert wire.pack(out[0]) == wire.pack(body)


@pytest.mark.parametrize("cut", [None, 1])
def test_depth_exactly_at_the_limit_passes_and_one_deeper_fails(cut: int | None) -> None:
    """The reader's byte bound on the depth (non-empty container headers + 1)
    is exact for a chain ending in an empty container."""
    limits = wire.Limits(max_depth=4)

    def read(value: object) -> list[dict[str, object]]:
        data = wire.pack({"type": "x", "v": value})
        reader = wire.MessageReader(limits)
        if cut is None:
            return reader.feed(data)
        return [m for i in range(len(data)) for m in reader.feed(data[i : i + 1])]

    for innermost in ([], {}, [1], {"k": 1}):
        assert read([[innermost]]) == [{"type": "x", "v": [[innermost]]}]
        with pytest.raises(wire.ProtocolViolation, match="nested deeper than 4"):
            read([[[innermost]]])


NESTED = st.recursive(st.none() | st.integers(0, 300) | st.text(max_size=3),
                      lambda children: st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=2), children, max_size=4),
                      max_leaves=40)


def depth(value: object) -> int:
    """Nesting depth, the obvious way (a scalar is 0)."""
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def non_empty_containers(value: object) -> int:
    if isinstance(value, dict):
        value = list(value.values())
    if not isinstance(value, list) or not value:
        return 0
    return 1 + sum(map(non_empty_containers, value))


@given(NESTED, st.integers(1, 6))
def test_the_reader_refuses_exactly_the_messages_nested_too_deep(value: object, limit: int
                                                                 ) -> None:
    body = {"type": "t", "v": value}
    reader = wire.MessageReader(wire.Limits(max_depth=limit))
    if 1 + depth(value) <= limit:
        assert reader.feed(wire.pack(body)) == [body]
    else:
        with pytest.raises(wire.ProtocolViolation, match="nested deeper"):
            reader.feed(wire.pack(body))


@given(NESTED, st.integers(0, 6), st.integers(0, 40))
def test_nests_within_is_exact_given_any_bound_on_the_containers(
        value: object, limit: int, spare: int) -> None:
    headers = non_empty_containers(value) + spare
    assert wire._nests_within(value, limit, headers) == (depth(value) <= limit)


def test_sdk_answers_every_message_type() -> None:
    """A Bot subclass sees every hook and each request's fields; unknown types
    are ignored; ``match_end`` ends the bot."""
    bot = HERE / "bots" / "sdk_hooks_bot.py"
    request = {"type": "request", "id": 7, "observation": {"hand": ["Ac"]},
               "legal": ["a", "b"], "events": [{"kind": "x"}], "time": {"move_ms": 5}}
    messages: list[dict[str, object]] = [
        {"type": "hello", "protocol": 1},
        {"type": "match_start", "game": "five", "options": {}},
        {"type": "game_start", "seat": 0, "game_number": 1},
        {"type": "something_new", "x": 1},
        request,
        {"type": "request", "id": 8, "legal": ["only"]},
        {"type": "game_end", "scores": [1, 2]},
        {"type": "match_end"},
        {"type": "request", "id": 9, "legal": ["after the end"]},
    ]
    done = subprocess.run([sys.executable, str(bot)],
                          input=b"".join(msgpack.packb(m) for m in messages),
                          capture_output=True, timeout=30, check=True)
    replies = wire.MessageReader().feed(done.stdout)
    assert replies == [
        {"type": "hello", "name": "hooks", "version": "3", "author": "tests", "protocol": 1},
        {"type": "action", "id": 7, "index": 1},
        {"type": "action", "id": 8, "index": 0},
    ]
    log = done.stderr.decode()
    assert log.splitlines() == [
        "match_start five",
        "game_start 0",
        "request 7 {'hand': ['Ac']} ['a', 'b'] [{'kind': 'x'}] {'move_ms': 5}",
        "request 8 {} ['only'] [] {}",
        "game_end [1, 2]",
    ]


def test_a_bot_run_as_a_sample_bot_imports_nothing_of_the_arena_runtime() -> None:
    """``python -m sample_bots.x`` imports the package ``sample_bots`` first:
    it must not pull in trio or arena.runner.process (350 ms of start-up); nor may the
    game engines, which a bot may import."""
    probe = ("import sys, runpy; sys.argv = ['x']; "
             "runpy.run_module('sample_bots.random_bot'); import arena.games; "
             "print(sorted(m for m in sys.modules if m == 'trio' or m.startswith('arena.')"
             " and not m.startswith('arena.games')))")
    done = subprocess.run([sys.executable, "-c", probe], input=b"", capture_output=True,
                          timeout=30, check=True)
    assert done.stdout.decode().strip() == "[]"
    from arena.bots.samples import spec
    from sample_bots import HEURISTICS, RANDOM

    assert spec(RANDOM).command.endswith("-m sample_bots.random_bot")
    assert spec(HEURISTICS["five"], "h").name == "h"
