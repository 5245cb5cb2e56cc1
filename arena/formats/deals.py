"""Where a tournament's deals come from: the deal seed of every (table, deal), the
commitment to a secret and its check.

A tournament, match or ladder run without ``--seed`` has a *secret*: 32 random bytes
(drawn by the runner, :func:`arena.runner.plan.new_secret`), stored with it and shown
to nobody until it is finished.  Every deal seed is a keyed hash of that secret
(:func:`deal_seed`: HMAC-SHA256 over the table and the deal), so nobody can predict
a deal without the secret, and the organiser cannot choose deals once the
*commitment* (:func:`commitment`: SHA-256 of the secret) is published at the start.
When the secret is revealed anyone can check it against the commitment
(:func:`verify`) and recompute every deal seed.  An explicit ``--seed`` is a *known*
key (:func:`known_key`): reproducible research, deals anyone can compute.

Tables get their own deal seeds unless a tournament asks for the same deals at
every table (``shared``): unsafe with untrusted bots, since copies of one bot at
two tables then hold the same cards at once.  A ladder has one secret per
*period* of :data:`LADDER_PERIOD` tables (:func:`period_of`), each revealed once its
tables are played.

The order in which a block's seat rotations play is drawn from the seed of the
block's first deal (:func:`arena.stats.rotation_learning.rotation_order`, next to
the test that relies on it), so it is as secret as the deals while they are
sealed, anyone recomputes it once the secret is revealed, and stored games give
it back with no other record.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Protocol

#: Bytes of a deal secret (shown as 64 hex digits).
SECRET_BYTES = 32
#: A ladder's tables per secret: table ``n`` belongs to period ``n // LADDER_PERIOD``.
LADDER_PERIOD = 20
#: Deal seeds have 62 bits (stored as signed 64-bit integers).
SEED_BITS = 62


class DealSeeds(Protocol):
    """The deal seed of a table's deal (its ``deal``-th duplicate group)."""

    def seed(self, table: int, deal: int) -> int: ...


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret (hex digits); ValueError if it is not hex."""
    return bytes.fromhex(secret)


def known_key(seed: int) -> bytes:
    """The HMAC key of an explicit ``--seed``: anyone can compute its deals."""
    return f"known-seed:{seed}".encode()


def commitment(secret: str) -> str:
    """What is published before the deals: SHA-256 of the secret's bytes, in hex."""
    return hashlib.sha256(secret_key(secret)).hexdigest()


def verify(secret: str, published: str) -> bool:
    """Whether a revealed ``secret`` is the one ``published`` committed to."""
    try:
        return hmac.compare_digest(commitment(secret), published.lower())
    except ValueError:
        return False


def deal_seed(key: bytes, table: int, deal: int) -> int:
    """The seed of ``table``'s ``deal``: the first 62 bits of HMAC-SHA256(key,
    ``"deal:TABLE:DEAL"``)."""
    digest = hmac.new(key, f"deal:{table}:{deal}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def schedule_seed(key: bytes) -> int:
    """The seed of a tournament's choices of tables when its deals are secret."""
    return deal_seed(key, -1, -1)


@dataclass(frozen=True)
class KeyedDeals:
    """Deal seeds from a key (:func:`deal_seed`): per table, or with ``shared`` the
    same deals at every table."""

    key: bytes = field(repr=False)
    shared: bool = False

    def seed(self, table: int, deal: int) -> int:
        return deal_seed(self.key, 0 if self.shared else table, deal)


@dataclass(frozen=True)
class ListedDeals:
    """Deal seeds given in a list, the same at every table: a ladder table's one
    deal, or a tournament stored before deals were keyed."""

    seeds: tuple[int, ...]

    def seed(self, table: int, deal: int) -> int:
        return self.seeds[deal]


def period_of(table: int) -> int:
    """The period (and so the secret) of a ladder's table ``table``."""
    return table // LADDER_PERIOD


def period_tables(period: int) -> range:
    """The ladder table numbers of ``period``."""
    return range(period * LADDER_PERIOD, (period + 1) * LADDER_PERIOD)
