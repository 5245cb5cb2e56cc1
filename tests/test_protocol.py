"""The wire format's reader limits and the Python SDK, with real processes."""

from __future__ import annotations

import sys
from pathlib import Path

import msgpack
import pytest

from arena.client import TimeControl
from arena.games import make_game
from arena.process import BotSpec
from arena.referee import play_single_game
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
        (b"\xdb" + (100 << 20).to_bytes(4, "big") + b"z" * 70_000, "larger than"),
    ],
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
