"""The report's figures from stored games: comparable pools, per-bot tallies, pairwise
results, faults and move times.  Numbers in, numbers out: nothing here writes a page.

Games are :class:`arena.store.database.StoredGame`; every function takes them in any number and
passes over them once, so a report of 100,000 games stays a few seconds of work.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.games import game_class
from arena.games.base import OptionError, OptionSpec
from arena.stats.match_stats import los_decisive
from arena.stats.pools import PoolKey, RatableGame, pools, ratable_games
from arena.stats.ratings import RatedPool, Rating, rate_pool
from arena.stats.rotation_learning import (
    Learning,
    Observation,
    order_block,
    place_points,
    play_position,
    rotation_learning,
)
from arena.store.database import Store, StoredGame, counted_games
from arena.store.faults import FAULT_KINDS
from arena.store.records import move_time_percentiles, seat_move_times
from reports.templating import slug as slug  # re-exported: one place for file-name parts

#: A bot page's move times come from its most recent games per game type: enough for
#: this many of its moves, at most :data:`TIME_SAMPLE_GAMES` games (records are costly
#: to read: a 900-decision game takes milliseconds).
TIME_SAMPLE_MOVES = 5000
TIME_SAMPLE_GAMES = 50
#: Stderr tails shown per fault kind on a bot page (the most recent).
FAULT_EXAMPLES = 3
#: Keys of a tournament's ``time`` config that make its time control (the handshake
#: allowance is not part of play).
TIME_CONTROL_KEYS = ("move", "bank", "clock")


def fault_kinds(games: Iterable[StoredGame]) -> list[str]:
    """The four standard fault kinds, then any other kind found in ``games``."""
    seen = {fault["kind"] for game in games for fault in game.faults}
    return list(FAULT_KINDS) + sorted(seen - set(FAULT_KINDS))


# -- tallies -----------------------------------------------------------------------------

@dataclass
class PlaceTally:
    """Games counted for places (no-result games are not), their places and first places."""

    games: int = 0
    place_sum: int = 0
    firsts: int = 0

    def add(self, place: int) -> None:
        self.games += 1
        self.place_sum += place
        self.firsts += place == 1

    @property
    def average_place(self) -> float:
        return self.place_sum / self.games if self.games else 0.0

    @property
    def first_share(self) -> float:
        return self.firsts / self.games if self.games else 0.0


@dataclass
class BotTally(PlaceTally):
    """One bot's places overall, per place (histogram) and per seat, and its faults."""

    places: Counter[int] = field(default_factory=Counter)
    seats: dict[int, PlaceTally] = field(default_factory=lambda: defaultdict(PlaceTally))
    faults: Counter[str] = field(default_factory=Counter)

    def add_seat(self, seat: int, place: int) -> None:
        self.add(place)
        self.places[place] += 1
        self.seats[seat].add(place)


@dataclass
class PairScore:
    """One bot's record against another over the games they sat at together."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def total(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def share(self) -> float:
        """Points (win 1, draw 1/2) per pair, in 0..1."""
        return (self.wins + self.draws / 2) / self.total if self.total else 0.0

    @property
    def los(self) -> float:
        """Likelihood of superiority from the decisive pairs (cutechess's formula)."""
        return los_decisive(self.wins, self.losses)

    def add(self, mine: int, theirs: int) -> None:
        if mine < theirs:
            self.wins += 1
        elif mine == theirs:
            self.draws += 1
        else:
            self.losses += 1


@dataclass
class Tallies:
    """Every bot's :class:`BotTally` and every ordered pair's :class:`PairScore`."""

    bots: dict[str, BotTally] = field(default_factory=lambda: defaultdict(BotTally))
    pairs: dict[tuple[str, str], PairScore] = field(
        default_factory=lambda: defaultdict(PairScore))

    def pair(self, bot: str, opponent: str) -> PairScore | None:
        return self.pairs.get((bot, opponent))


def tally(games: Iterable[StoredGame]) -> Tallies:
    """Places, seats, faults and pairwise results of ``games``.  Faults count in every
    game; places and pairs only in games with a result; a pair of seats held by one bot
    is no pairwise game."""
    tallies = Tallies()
    bots, pairs = tallies.bots, tallies.pairs
    for game in games:
        for fault in game.faults:
            bots[fault["bot"]].faults[fault["kind"]] += 1
        if game.faults and game.no_result:
            continue
        seats, places = game.seats, game.places
        for seat, bot in enumerate(seats):
            bots[bot].add_seat(seat, places[seat])
        for i, j in itertools.combinations(range(len(seats)), 2):
            a, b = seats[i], seats[j]
            if a != b:
                pairs[a, b].add(places[i], places[j])
                pairs[b, a].add(places[j], places[i])
    return tallies


# -- the rotation-order test -----------------------------------------------------------------

def order_blocks(tournaments: Iterable[Mapping[str, Any]]) -> dict[int, int]:
    """Deals per block of each stored tournament (:meth:`Store.tournament`) whose
    blocks play their rotations in a drawn order
    (:func:`arena.stats.rotation_learning.order_block`)."""
    blocks = {t["id"]: order_block(t.get("config")) for t in tournaments}
    return {tid: block for tid, block in blocks.items() if block is not None}


def learning_observations(games: Sequence[StoredGame], blocks: Mapping[int, int]
                          ) -> list[Observation]:
    """Every bot's place points in each game with a result of a tournament in
    ``blocks``, with its block and play position, derived from the stored seed of
    the block's first deal (:func:`arena.stats.rotation_learning.play_position`)."""
    first_seeds = {(g.tournament_id, g.table, g.number // len(g.seats)): g.seed
                   for g in games if g.tournament_id in blocks}
    out = []
    for game in counted_games(games):
        block = blocks.get(game.tournament_id)
        k = len(game.seats)
        if block is None or k < 2:
            continue
        deal, rotation = divmod(game.number, k)
        first = deal - deal % block
        seed = first_seeds.get((game.tournament_id, game.table, first))
        if seed is None:
            continue
        position = play_position(seed, k, rotation)
        unit = (game.tournament_id, game.table, first)
        out += [Observation(bot, unit, position, place_points(place, k), (seat, k))
                for seat, (bot, place) in enumerate(zip(game.seats, game.places,
                                                        strict=True))]
    return out


def learning(games: Sequence[StoredGame], blocks: Mapping[int, int]) -> dict[str, Learning]:
    """The rotation-order test of every bot of ``games``
    (:func:`arena.stats.rotation_learning.rotation_learning`)."""
    return rotation_learning(learning_observations(games, blocks))


# -- pools: comparable games ---------------------------------------------------------------

@dataclass(frozen=True)
class Pool:
    """Games comparable for one leaderboard: same game, options and time control.

    ``anchor`` names it in pages (``five``, ``five-2``...); ``settings`` are its options
    that differ from the game's defaults and its time control, as (label, text)."""

    key: PoolKey
    anchor: str
    title: str
    settings: tuple[tuple[str, str], ...]
    games: list[StoredGame] = field(compare=False, repr=False)


@dataclass(frozen=True)
class _Settings:
    """What :func:`arena.stats.ratings.pools` reads of a game: its game and pooled options."""

    game: str
    options: Mapping[str, Any]


def split_pools(games: Sequence[StoredGame],
                time_controls: Mapping[int, Any]) -> list[Pool]:
    """``games`` in comparable pools (see :func:`arena.stats.ratings.pools`), options compared
    with the game's defaults filled in and without a stacked deck, the time control of
    each game's tournament from ``time_controls`` (by tournament id; missing: unknown).
    Pools come in key order, games in input order."""
    keys: dict[tuple[str, str, int], PoolKey] = {}
    split: dict[PoolKey, list[StoredGame]] = defaultdict(list)
    for game in games:
        # the pool key is costly to build: once per distinct options of a tournament
        settings = (game.game, repr(game.options), game.tournament_id)
        key = keys.get(settings)
        if key is None:
            pooled = _Settings(game.game, pooled_options(game.game, game.options))
            control = time_controls.get(game.tournament_id)
            key = keys[settings] = next(iter(pools([pooled], _always(control))))
        split[key].append(game)
    ordered = sorted(split)
    per_game = Counter(key.game for key in ordered)
    seen: Counter[str] = Counter()
    result = []
    for key in ordered:
        seen[key.game] += 1
        anchor = slug(key.game) + (f"-{seen[key.game]}" if seen[key.game] > 1 else "")
        labels = pool_settings(key)
        title = key.game
        if per_game[key.game] > 1:
            title += " (" + "; ".join(text for _, text in labels) + ")"
        result.append(Pool(key, anchor, title, labels, split[key]))
    return result


def _always(value: Any) -> Callable[[Any], Any]:
    return lambda _: value


def time_control(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The time control in a tournament's config (move, bank, clock), None if not recorded."""
    time = (config or {}).get("time")
    if not isinstance(time, Mapping):
        return None
    return {key: time[key] for key in TIME_CONTROL_KEYS if key in time}


def pooled_options(game: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as the game reads them: defaults filled in, values parsed, without
    ``deck`` (a stacked first deal changes the cards, not the game); as stored for a
    game this code does not know."""
    specs = _option_specs(game)
    values: dict[str, Any] = {spec.name: spec.default for spec in specs.values()}
    for name, raw in options.items():
        spec = specs.get(name)
        try:
            values[name] = spec.parse(raw) if spec is not None else raw
        except OptionError:
            values[name] = raw
    values.pop("deck", None)
    return values


def _option_specs(game: str) -> dict[str, OptionSpec]:
    try:
        return {spec.name: spec for spec in game_class(game).all_option_specs()}
    except OptionError:
        return {}


def pool_settings(key: PoolKey) -> tuple[tuple[str, str], ...]:
    """(label, text) of a pool's options that differ from the defaults, and its time
    control."""
    settings = key.settings
    specs = _option_specs(key.game)
    changed = {name: value for name, value in settings["options"].items()
               if name not in specs or specs[name].default != value}
    options = ", ".join(f"{name} {_text(value)}" for name, value in sorted(changed.items()))
    return (("Options", options or "defaults"),
            ("Time control", time_text(settings["time_control"])))


def time_text(control: Mapping[str, Any] | None) -> str:
    """``move 1 s, bank 10 s, wall clock``; ``not recorded`` for None."""
    if not control:
        return "not recorded"
    parts = [f"{name} {_text(control[name])} s" for name in ("move", "bank") if name in control]
    if "clock" in control:
        parts.append(f"{control['clock']} clock")
    return ", ".join(parts)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# -- ratings -----------------------------------------------------------------------------

def rate(games: Sequence[StoredGame], bootstrap: int) -> RatedPool:
    """The pool's ratings (:func:`arena.stats.ratings.rate_pool`) over its ratable games."""
    return rate_pool(ratable_games(games), bootstrap=bootstrap)


#: Points of a rating-over-time line: fits on the first n games at this many n.
ELO_CHECKPOINTS = 12


def elo_over_time(games: Sequence[StoredGame], checkpoints: int = ELO_CHECKPOINTS
                  ) -> dict[str, list[tuple[int, float]]]:
    """Each bot's Elo fitted (no bootstrap) on the first ``n`` of ``games`` (in stored
    order) at ``checkpoints`` evenly spaced ``n``: per bot its (n, Elo) points, finite
    estimates only (a bot that won or lost every pair so far has none)."""
    lines: dict[str, list[tuple[int, float]]] = defaultdict(list)
    total = len(games)
    # Each prefix's ratable games grown from the last's (a game's are its own).
    ratable: list[RatableGame] = []
    done = 0
    for n in sorted({max(1, round(total * i / checkpoints)) for i in range(1, checkpoints + 1)}
                    if total else ()):
        ratable += ratable_games(games[done:n])
        done = n
        for rating in rate_pool(list(ratable), bootstrap=0).ratings:
            if math.isfinite(rating.estimate):
                lines[rating.player].append((n, rating.estimate))
    return dict(lines)


def rank_text(rating: Rating) -> str:
    """``3`` or ``2-5``: the rank interval."""
    if rating.rank_best == rating.rank_worst:
        return str(rating.rank_best)
    return f"{rating.rank_best}\u2013{rating.rank_worst}"


def sort_value(rating: Rating) -> float:
    """A finite number that orders ratings as the leaderboard does (open bounds beyond
    every finite rating)."""
    estimate = rating.estimate
    if math.isnan(estimate):
        return -1e9
    if math.isinf(estimate):
        bound = rating.lower if estimate > 0 else rating.upper
        return math.copysign(1e6, estimate) + (bound if math.isfinite(bound) else 0.0)
    return estimate


# -- faults ------------------------------------------------------------------------------

@dataclass(frozen=True)
class FaultExample:
    """One fault as a bot page shows it."""

    game_id: int
    tournament_id: int
    detail: str
    stderr_tail: str


def fault_examples(games: Iterable[StoredGame], keep: int = FAULT_EXAMPLES
                   ) -> dict[str, dict[str, list[FaultExample]]]:
    """Per bot, per fault kind, its ``keep`` most recent faults (newest first)."""
    found: dict[str, dict[str, deque[FaultExample]]] = defaultdict(dict)
    for game in games:
        for fault in game.faults:
            kinds = found[fault["bot"]]
            kinds.setdefault(fault["kind"], deque(maxlen=keep)).append(FaultExample(
                game.id, game.tournament_id, fault["detail"], fault["stderr_tail"]))
    return {bot: {kind: list(reversed(examples)) for kind, examples in kinds.items()}
            for bot, kinds in found.items()}


# -- move times ----------------------------------------------------------------------------

@dataclass(frozen=True)
class MoveTimes:
    """Percentiles (``arena.store.records.MOVE_TIME_PERCENTILES``) of one bot's move times in
    one game type, in milliseconds, over ``moves`` moves of its ``games`` most recent games."""

    games: int
    moves: int
    wall: tuple[float, ...]
    cpu: tuple[float, ...]


def time_samples(games: Sequence[StoredGame], moves: int = TIME_SAMPLE_MOVES,
                 most: int = TIME_SAMPLE_GAMES) -> dict[tuple[str, str], list[int]]:
    """Per (bot, game type), the ids of its most recent games (``games`` are oldest first)
    that hold about ``moves`` of its moves, at most ``most`` games (a game's moves per seat
    estimated from its decisions)."""
    samples: dict[tuple[str, str], list[int]] = {}
    counted: dict[tuple[str, str], float] = defaultdict(float)
    for game in reversed(games):
        per_seat = game.decisions / len(game.seats) if game.seats else 0.0
        for bot in set(game.seats):
            key = (bot, game.game)
            sample = samples.setdefault(key, [])
            if counted[key] < moves and len(sample) < most:
                sample.append(game.id)
                counted[key] += per_seat
    return samples


def move_times(store: Store, games: Mapping[int, StoredGame],
               samples: Mapping[tuple[str, str], Sequence[int]]
               ) -> dict[tuple[str, str], MoveTimes]:
    """:class:`MoveTimes` per (bot, game type) of ``samples``, from the stored records
    (read in batches; moves the arena played for a faulted seat left out)."""
    wanted: dict[int, set[str]] = defaultdict(set)
    for (bot, _), ids in samples.items():
        for game_id in ids:
            wanted[game_id].add(bot)
    times: dict[tuple[str, str], list[list[int]]] = defaultdict(list)
    for game_id, record in store.records(sorted(wanted)):
        game = games[game_id]
        for seat, seat_times in enumerate(seat_move_times(record, len(game.seats))):
            bot = game.seats[seat]
            if bot in wanted[game_id]:
                times[bot, game.game].extend(seat_times)
    return {key: _percentiles(len(ids), times.get(key, [])) for key, ids in samples.items()}


def _percentiles(games: int, times: list[list[int]]) -> MoveTimes:
    found = move_time_percentiles(times)
    if found is None:
        return MoveTimes(games, 0, (), ())
    return MoveTimes(games, len(times), tuple(found[0]), tuple(found[1]))
