"""A continuous ladder's table picker: who plays the next duplicate group.

A ladder (``arena ladder``) never knows its whole schedule: entrants join and
retire while it runs, so it picks one table at a time, just before that table
plays, from what it has stored so far (:class:`LadderState`: every table it has
seated) and the entrants active now.  Like Halite III's matchmaking:

* **the seed**: on most tables the active entrant with the fewest tables, so a
  new entrant (none yet) plays first and keeps playing until it has caught up;
  on every :data:`STALEST_EVERY`-th table the one that played least recently,
  so no active entrant waits long, whatever the others' counts;
* **the other seats**, one at a time: the entrant that has met the ones already
  seated least often, so every pair meets about equally often; ties go to the
  entrant with fewer tables, then at random.

The chosen table's seat order is shuffled (it only decides who sits after
whom: its seat rotations put everyone in every seat).  Pure: no I/O, no clock;
each table's randomness comes from :func:`table_rng` (the ladder's seed and the
table's number), so picking again from the same stored state gives the same table.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from arena.formats.tables import ConfigError

#: Every STALEST_EVERY-th table (numbers 3, 7, 11, ...) is seeded by the entrant that
#: played least recently; the others by the entrant with the fewest tables.
STALEST_EVERY = 4


@dataclass
class LadderState:
    """What the picker knows: how often each entrant played, when it last played
    (a table number; never: -1) and how often each pair met, over every table so far."""

    tables: int = 0
    played: Counter[str] = field(default_factory=Counter)
    last: dict[str, int] = field(default_factory=dict)
    met: Counter[tuple[str, str]] = field(default_factory=Counter)

    @classmethod
    def of(cls, tables: Iterable[Sequence[str]]) -> LadderState:
        """The state after ``tables`` (each a list of entrant names), in table order."""
        state = cls()
        for table in tables:
            state.add(table)
        return state

    def add(self, table: Sequence[str]) -> None:
        """Count the next table (number :attr:`tables`)."""
        for name in table:
            self.played[name] += 1
            self.last[name] = self.tables
            for other in table:
                if other != name:
                    self.met[name, other] += 1
        self.tables += 1

    def meetings(self, name: str, others: Iterable[str]) -> int:
        """How often ``name`` met ``others``, in all."""
        return sum(self.met[name, other] for other in others)


def table_rng(seed: int, number: int) -> random.Random:
    """The random choices of a ladder's table ``number``: fixed by the ladder's seed."""
    return random.Random(f"ladder-table:{seed}:{number}")


def legacy_deal_seed(seed: int, number: int) -> int:
    """The deal seed of table ``number`` of a ladder stored before deals were keyed
    (:mod:`arena.formats.deals`), kept so that such a ladder resumes on its deals."""
    return random.Random(f"ladder-deal:{seed}:{number}").getrandbits(62)


def pick_table(state: LadderState, entrants: Sequence[str], seats: int,
               rng: random.Random) -> tuple[str, ...]:
    """The next table (:attr:`LadderState.tables`) of ``seats`` distinct entrants, in
    seat order: the seed, then the entrants it and the others seated met least (see the
    module's docstring).  ConfigError if there are too few entrants."""
    pool = list(dict.fromkeys(entrants))
    if len(pool) < seats:
        raise ConfigError(f"{len(pool)} active entrant(s) cannot fill a table of {seats}")
    ties = {name: rng.random() for name in pool}
    stalest = state.tables % STALEST_EVERY == STALEST_EVERY - 1

    def seed_key(name: str) -> tuple[float, ...]:
        played, last = state.played[name], state.last.get(name, -1)
        return (last, played, ties[name]) if stalest else (played, last, ties[name])

    table = [min(pool, key=seed_key)]
    while len(table) < seats:
        table.append(min((name for name in pool if name not in table),
                         key=lambda name: (state.meetings(name, table), state.played[name],
                                           ties[name])))
    rng.shuffle(table)
    return tuple(table)
