"""Five Card Rummy: a draw-and-discard rummy game scored with poker-style hands.

Rules: ``seeds/five-card-rummy.txt`` plus the five-card-rummy section of
``RULINGS.md``; the bot-facing description is ``docs/rules/five-card-rummy.md``.

Internally a card is its index in the canonical order (``cards.CARD_ORDER``:
rank ace low, then suit), i.e. ``rank * 4 + suit`` with rank 0 = A .. 12 = K
and suit 0..3 = c d h s, so sorting ints gives the order of every action string
and observation.  Runs are rank bitmasks (bit r = rank r; the ace is bit 0
whether low or high, never wrapping).  A set of cards is also a card bitmask
(bit c = card c, :func:`card_bits`): the state keeps one per hand beside its
sorted list, and pools are built from them.

Speed (the engine is compiled with mypyc, ``arena/games/native.py``): module
tables are ``Final`` (a plain module name is a dict lookup per use, compiled),
memo tables are dicts keyed by small ints (not ``functools.cache``), and the hot
paths avoid ``*``/``**`` calls and dataclass constructors, which compiled code
makes the slow generic way.  Most turns list their declarations from bitmask
tests alone (:func:`_declarations`); every shortcut is checked against the
general finders by the tests.

Every hand category is one row of :data:`TABLE`: its id, points, size and a
*finder* that lists every way a :class:`Pool` of cards forms it.  The same
finders give the declarations a hand holds (:func:`declarations`), the
categories a set of cards is (:func:`categories_of`) and the lay-off search
(:func:`extensions`, :func:`resolve_declaration`).

Lay-off (RULINGS): an opponent's extension with laid-off cards ``L`` is a set
``T`` of cards with ``L ⊆ T ⊆ winning ∪ L``, ``len(T) <= 5``, at least one
winning card in ``T``, such that ``T`` is exactly the cards of a category; its
score is that category's points.  A finder run on the winning cards plus one
opponent's hand gives each way as *parts* ("choose k of these winning cards and
these hand cards"), so the number of hand cards it can use is a range
[lo, hi]: 1 in range is a one-card lay-off, 2 or more a multi-card one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, combinations, product
from typing import Any, ClassVar, Final

from mypy_extensions import mypyc_attr

from arena.games import cards
from arena.games.base import (
    SEAT_ONLY,
    Action,
    Event,
    Game,
    Observation,
    OptionSpec,
    State,
    new_event,
)

HAND_SIZE: Final = 5

#: Card names by int (the canonical order), and back.
NAMES: Final[tuple[str, ...]] = tuple(cards.canonical(cards.standard_deck()))
CARD: Final[dict[str, int]] = {name: i for i, name in enumerate(NAMES)}
_DISCARD_ACTION: Final[tuple[str, ...]] = tuple("discard " + name for name in NAMES)
#: A discard action -> its card (one lookup, no slice of the action string).
_DISCARDED: Final[dict[str, int]] = {action: c for c, action in enumerate(_DISCARD_ACTION)}

DRAW_STOCK: Final = "draw stock"
TAKE_DISCARD: Final = "take discard"
#: A turn's start actions when the hand declares nothing.
_DRAW_ONLY: Final[tuple[str, ...]] = (DRAW_STOCK,)
_DRAW_OR_TAKE: Final[tuple[str, ...]] = (DRAW_STOCK, TAKE_DISCARD)

# Phases.  (Final: compiled, a module-level name that is not is a dict lookup per use.)
START: Final = 0
DISCARD: Final = 1
OVER: Final = 2
_PHASE_NAMES: Final = ("start", "discard", "over")


def card_names(cards: Sequence[int]) -> list[str]:
    """Names of int cards, in the given order."""
    return [NAMES[c] for c in cards]


def parse_cards(names: Sequence[str]) -> list[int]:
    """Int cards of card names; raise :class:`ValueError` on an unknown name."""
    try:
        return [CARD[n] for n in names]
    except KeyError as exc:
        raise ValueError(f"unknown card {exc.args[0]!r}") from None


# -- runs -------------------------------------------------------------------------


def _run_ranks(length: int) -> tuple[tuple[int, ...], ...]:
    """The ranks of every run of ``length``, lowest first (``A 2 3`` .. ``Q K A``)."""
    return tuple(tuple(v % 13 for v in range(start, start + length))
                 for start in range(15 - length))


#: Rank bitmask of a run -> its ranks, lowest first.
_RUN_RANKS: Final[dict[int, tuple[int, ...]]] = {
    sum(1 << r for r in ranks): ranks for n in (3, 4, 5) for ranks in _run_ranks(n)}
_ROYAL: Final = sum(1 << r for r in (9, 10, 11, 12, 0))


def _runs_table(length: int) -> tuple[tuple[int, ...], ...]:
    """Rank bitmask -> every run of ``length`` inside it (as rank bitmasks, lowest first)."""
    table: list[tuple[int, ...]] = [()] * (1 << 13)
    for ranks in _run_ranks(length):
        window = sum(1 << r for r in ranks)
        others = ((1 << 13) - 1) & ~window
        extra = others
        while True:  # every superset of the window
            table[window | extra] += (window,)
            if not extra:
                break
            extra = (extra - 1) & others
    return tuple(table)


#: Rank bitmask -> how many ranks it holds (compiled, ``int.bit_count`` is a
#: generic method call; a tuple lookup is not).
_RANK_COUNT: Final[tuple[int, ...]] = tuple(mask.bit_count() for mask in range(1 << 13))

#: _RUNS[length][ranks]: every run of ``length`` ranks inside the rank bitmask
#: ``ranks``; a table because lookups are hot.
_RUNS: Final[dict[int, tuple[tuple[int, ...], ...]]] = {n: _runs_table(n) for n in (3, 4, 5)}
#: _RUNS[3] and _RUNS[5] by name, for the pools (no dict lookup).
_RUNS_OF_3: Final = _RUNS[3]
_RUNS_OF_5: Final = _RUNS[5]


# -- the categories ------------------------------------------------------------------

#: A part of a way to form a category: choose ``k`` of these winning cards and
#: these hand cards.
_Part = tuple[Sequence[int], Sequence[int], int]
#: Every way a pool forms a category, each as its parts.
_Finder = Callable[["Pool"], list[list[_Part]]]

#: What a pool holds, as bits of :attr:`Pool.has`: a rank twice or more, a
#: rank three or four times, two such ranks, a one-suit run of 3, five cards of
#: a suit, five ranks in a row.  A category's finder can only find something
#: when the pool has everything the category ``needs``.
PAIR: Final = 1
TRIPS: Final = 2
QUADS: Final = 4
TWO_RANKS: Final = 8
RUN: Final = 16
FIVE_SUITED: Final = 32
FIVE_RANKS: Final = 64


#: _RANK_CARDS[rank * 16 + suits]: the cards of ``rank`` in the suits of the
#: bitmask ``suits``, ascending (a pool keeps its cards as bitmasks).
_RANK_CARDS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(rank * 4 + suit for suit in range(4) if suits >> suit & 1)
    for rank in range(13) for suits in range(16))
#: The same index -> every pair and every three of those cards, ascending.
_RANK_PAIRS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(combinations(cards_, 2)) for cards_ in _RANK_CARDS)
_RANK_TRIPLES: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(combinations(cards_, 3)) for cards_ in _RANK_CARDS)


class Pool:
    """Cards indexed for the finders: winning cards (``w``) and one opponent's
    hand (``h``).  A hand looking for its own declarations is all ``w``.

    It takes the cards as bitmasks (:func:`card_bits`), so a rank's cards
    (:meth:`cards_of`) come out ascending whatever order they were in; the
    game keeps each hand's bitmask up to date."""

    __slots__ = ("groups", "h_bits", "has", "long_suits", "ranks", "w_bits")

    def __init__(self, w_bits: int, h_bits: int = 0) -> None:
        self.w_bits = w_bits
        self.h_bits = h_bits
        all_bits = w_bits | h_bits
        # Every rank's suits in one pass; the four suits' rank bitmasks in locals,
        # not a list: compiled, they stay unboxed machine ints (a pool is built for
        # every turn and every lay-off check).
        s0 = s1 = s2 = s3 = ranks = has = 0
        #: The ranks with two cards or more, ascending.
        self.groups: list[int] = []
        for rank in range(13):
            suits = all_bits >> (rank * 4) & 15
            if suits:
                bit = 1 << rank
                ranks |= bit
                if suits & 1:
                    s0 |= bit
                if suits & 2:
                    s1 |= bit
                if suits & 4:
                    s2 |= bit
                if suits & 8:
                    s3 |= bit
                size = _RANK_COUNT[suits]
                if size >= 2:
                    self.groups.append(rank)
                    if size >= 3:
                        has |= TRIPS if size == 3 else TRIPS | QUADS
        if self.groups:
            has |= PAIR if len(self.groups) == 1 else PAIR | TWO_RANKS
        #: Rank bitmask of all the cards.
        self.ranks = ranks
        if _RUNS_OF_5[ranks]:
            has |= FIVE_RANKS
        #: (suit, rank bitmask) of the suits with three cards or more.
        self.long_suits: list[tuple[int, int]] = []
        #: What it holds: the bits PAIR .. FIVE_RANKS.
        self.has = has | self._suit(0, s0) | self._suit(1, s1) | self._suit(2, s2) \
            | self._suit(3, s3)

    def _suit(self, suit: int, ranks: int) -> int:
        """Note the suit's cards (rank bitmask ``ranks``) if three or more;
        return its RUN and FIVE_SUITED bits."""
        size = _RANK_COUNT[ranks]
        if size < 3:
            return 0
        self.long_suits.append((suit, ranks))
        return (RUN if _RUNS_OF_3[ranks] else 0) | (FIVE_SUITED if size >= 5 else 0)

    def held(self, rank: int) -> int:
        """The :data:`_RANK_CARDS` index of the winning cards of ``rank``."""
        return rank * 16 + (self.w_bits >> (rank * 4) & 15)

    def cards_of(self, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(winning cards, hand cards) of ``rank``, ascending."""
        shift = rank * 4
        base = rank * 16
        return (_RANK_CARDS[base + (self.w_bits >> shift & 15)],
                _RANK_CARDS[base + (self.h_bits >> shift & 15)])

    def part(self, rank: int, k: int) -> _Part:
        """The part "``k`` cards of ``rank``" (not ``(*cards_of(rank), k)``: compiled,
        a starred tuple is built the slow generic way)."""
        w, h = self.cards_of(rank)
        return w, h, k

    def run(self, window: int, suit: int) -> list[_Part]:
        """The parts of the run ``window`` of one suit, lowest card first."""
        w_bits = self.w_bits
        parts: list[_Part] = []
        for r in _RUN_RANKS[window]:
            c = r * 4 + suit
            parts.append(((c,), (), 1) if w_bits >> c & 1 else ((), (c,), 1))
        return parts


def _remove(cards_: list[int], card: int) -> bool:
    """Remove ``card`` from ``cards_`` if there; return whether it was (a typed
    loop: compiled, ``list.remove`` and ``in`` are generic calls)."""
    for i in range(len(cards_)):
        if cards_[i] == card:
            del cards_[i]
            return True
    return False


def card_bits(cards: Sequence[int]) -> int:
    """The bitmask of int cards (bit ``c`` = card ``c``), as :class:`Pool` takes them."""
    bits = 0
    for c in cards:
        bits |= 1 << c
    return bits


def _runs(length: int, royal: bool = False) -> _Finder:
    """One-suit runs of ``length``; with ``royal`` only ``T J Q K A``."""
    table = _RUNS[length]

    def find(pool: Pool) -> list[list[_Part]]:
        return [pool.run(window, suit) for suit, ranks in pool.long_suits
                for window in table[ranks] if not royal or window == _ROYAL]

    return find


def _same_rank(k: int) -> _Finder:
    """``k`` cards of one rank."""
    def find(pool: Pool) -> list[list[_Part]]:
        found: list[list[_Part]] = []
        for r in pool.groups:
            w, h = pool.cards_of(r)
            if len(w) + len(h) >= k:
                found.append([(w, h, k)])
        return found

    return find


def _full_houses(pool: Pool) -> list[list[_Part]]:
    groups = pool.groups
    found: list[list[_Part]] = []
    if len(groups) >= 2:
        for a in groups:
            wa, ha = pool.cards_of(a)
            if len(wa) + len(ha) >= 3:
                for b in groups:
                    if b != a:
                        wb, hb = pool.cards_of(b)
                        found.append([(wa, ha, 3), (wb, hb, 2)])
    return found


def _full_sets(pool: Pool) -> list[list[_Part]]:
    """A one-suit run of 3 plus a pair of other cards (of any rank)."""
    found: list[list[_Part]] = []
    if pool.groups:
        for suit, ranks in pool.long_suits:
            for window in _RUNS_OF_3[ranks]:
                run = pool.run(window, suit)
                for r in pool.groups:
                    w: Sequence[int]
                    h: Sequence[int]
                    w, h = pool.cards_of(r)
                    if window >> r & 1:  # the run holds this rank's card of its suit
                        c = r * 4 + suit
                        w = [x for x in w if x != c]
                        h = [x for x in h if x != c]
                    if len(w) + len(h) >= 2:
                        found.append([*run, (w, h, 2)])
    return found


def _suit_cards(bits: int, suit: int) -> list[int]:
    """The cards of ``suit`` in the card bitmask ``bits``, ascending."""
    return [c for c in range(suit, 52, 4) if bits >> c & 1]


def _flushes(pool: Pool) -> list[list[_Part]]:
    return [[(_suit_cards(pool.w_bits, suit), _suit_cards(pool.h_bits, suit), 5)]
            for suit, ranks in pool.long_suits if _RANK_COUNT[ranks] >= 5]


def _straights(pool: Pool) -> list[list[_Part]]:
    return [[pool.part(r, 1) for r in _RUN_RANKS[window]] for window in _RUNS_OF_5[pool.ranks]]


def _two_pairs(pool: Pool) -> list[list[_Part]]:
    groups = pool.groups
    return [[pool.part(a, 2), pool.part(b, 2)]
            for i, a in enumerate(groups) for b in groups[i + 1 :]]


@dataclass(frozen=True, slots=True)
class Category:
    """A hand category: its id, points, number of cards, what a pool needs
    to hold it (bits of :attr:`Pool.has`) and its finder, which lists every
    way a :class:`Pool` forms it (categories are inclusive: a royal flush is
    also a straight flush, a flush and a straight)."""

    name: str
    points: int
    size: int
    needs: int
    find: _Finder

    def found_in(self, pool: Pool) -> list[list[_Part]]:
        """Every way ``pool`` forms this category, each as its parts."""
        return self.find(pool) if (self.needs & pool.has) == self.needs else []


#: Every category, highest points first: the one place they are defined.
TABLE: Final[tuple[Category, ...]] = (
    Category("royal_flush", 100, 5, RUN, _runs(5, royal=True)),
    Category("straight_flush", 80, 5, RUN, _runs(5)),
    Category("four_of_a_kind", 50, 4, QUADS, _same_rank(4)),
    Category("full_house", 40, 5, TRIPS | TWO_RANKS, _full_houses),
    Category("full_set", 35, 5, PAIR | RUN, _full_sets),
    Category("sequence_4", 30, 4, RUN, _runs(4)),
    Category("flush", 25, 5, FIVE_SUITED, _flushes),
    Category("straight", 20, 5, FIVE_RANKS, _straights),
    Category("three_of_a_kind", 15, 3, TRIPS, _same_rank(3)),
    Category("sequence_3", 10, 3, RUN, _runs(3)),
    Category("two_pairs", 5, 4, TWO_RANKS, _two_pairs),
    Category("pair", 2, 2, PAIR, _same_rank(2)),
)
#: For each value of :attr:`Pool.has`, the (index, row) of the categories it may hold.
_ROWS: Final[tuple[tuple[tuple[int, Category], ...], ...]] = tuple(
    tuple((i, cat) for i, cat in enumerate(TABLE) if cat.needs & has == cat.needs)
    for has in range(128))
#: TABLE positions of the categories made of whole ranks.
_QUADS_AT: Final = 2
_FULL_HOUSE_AT: Final = 3
_TRIPS_AT: Final = 8
_TWO_PAIRS_AT: Final = 10
_PAIR_AT: Final = 11
#: Category id -> its row.
CATEGORIES: Final[dict[str, Category]] = {cat.name: cat for cat in TABLE}
POINTS: Final[dict[str, int]] = {cat.name: cat.points for cat in TABLE}
_TRIPS_POINTS: Final = TABLE[_TRIPS_AT].points


def categories_of(cards: Sequence[int]) -> list[str]:
    """Every category ``cards`` (all of them) form, highest first."""
    pool = Pool(card_bits(cards))
    n = len(cards)
    return [cat.name for cat in TABLE
            if cat.size == n and cat.found_in(pool)]


def forms(category: str, cards: Sequence[int]) -> bool:
    """True if ``cards`` are exactly the cards of a ``category`` hand."""
    cat = CATEGORIES[category]
    return len(cards) == cat.size and bool(cat.found_in(Pool(card_bits(cards))))


def declarations(hand: Sequence[int]) -> list[tuple[str, tuple[int, ...]]]:
    """Every distinct (category, sorted cards) a hand holds, highest points
    first, then by cards in canonical order."""
    return [(TABLE[order].name, chosen) for order, chosen in _declarations(card_bits(hand))]


def _declarations(hand: int) -> list[tuple[int, tuple[int, ...]]]:
    """:func:`declarations` of a hand's bitmask, each category as its index in :data:`TABLE`."""
    if not _may_run(hand):
        pairs = _paired_ranks(hand)
        if not pairs:
            return []
        if not pairs & (pairs - 1):  # one rank held twice or more
            shift = pairs.bit_length() - 1  # 4 * that rank
            held = _RANK_PAIRS[shift * 4 + (hand >> shift & 15)]  # by rank * 16 + its suits
            if len(held) == 1:
                return [(_PAIR_AT, held[0])]
    pool = Pool(hand)
    if not pool.has:
        return []
    if pool.has & (RUN | FIVE_SUITED | FIVE_RANKS):
        return _declarations_found(pool)
    return _same_rank_declarations(pool)


# Whole-hand tests on a card bitmask (rank r's four suits are bits 4r .. 4r+3),
# exact for what Pool.has says of RUN, FIVE_RANKS and FIVE_SUITED and of
# paired ranks: a turn's declarations need no pool for most hands (no pair, or
# one pair and nothing else).  Every mask stays below 2**62, a machine int compiled.
#: Bit 4r of every rank r, and one rank more (the ace again, above the king).
_LOW_BITS: Final = sum(1 << (4 * rank) for rank in range(14))


def _may_run(hand: int) -> bool:
    """Whether the cards hold a one-suit run of 3, five ranks in a row or five of a suit."""
    cards_ = hand | (hand & 15) << 52  # the ace also above the king (Q K A, T J Q K A)
    if cards_ & cards_ >> 4 & cards_ >> 8:
        return True
    ranks = (cards_ | cards_ >> 1 | cards_ >> 2 | cards_ >> 3) & _LOW_BITS
    if ranks & ranks >> 4 & ranks >> 8 & ranks >> 12 & ranks >> 16:
        return True
    for suit in range(4):
        count = hand >> suit & _LOW_BITS  # one suit's cards, one bit per rank's nibble
        count += count >> 4  # each fold adds pairs of nibbles; a nibble never holds > 13
        count += count >> 8
        count += count >> 16
        count += count >> 32
        if count & 15 >= 5:
            return True
    return False


def _rank_counts(bits: int) -> int:
    """Rank r's nibble (bits 4r .. 4r+3): how many cards of it the bitmask holds (0-4)."""
    return ((bits & _LOW_BITS) + (bits >> 1 & _LOW_BITS) + (bits >> 2 & _LOW_BITS)
            + (bits >> 3 & _LOW_BITS))


def _paired_ranks(hand: int) -> int:
    """Bit 4r set for every rank r the cards hold twice or more."""
    counts = _rank_counts(hand)
    return (counts >> 1 | counts >> 2) & _LOW_BITS


#: For each value of :attr:`Pool.has`: the most points a category it may hold scores.
_TOP_POINTS: Final[tuple[int, ...]] = tuple(
    max([cat.points for _, cat in rows], default=0) for rows in _ROWS)


def _has_at_most(bits: int) -> int:
    """A superset of ``Pool(bits).has`` from bitmask tests alone: the lay-off
    search skips an opponent whose cards and the winning ones cannot hold
    anything scoring more than the declaration, without building its pool."""
    counts = _rank_counts(bits)
    pairs = (counts >> 1 | counts >> 2) & _LOW_BITS
    has = 0
    if pairs:
        has = PAIR if not pairs & (pairs - 1) else PAIR | TWO_RANKS
        if (counts & counts >> 1 | counts >> 2) & _LOW_BITS:  # a rank 3 or 4 times
            has |= TRIPS | QUADS
    if _may_run(bits):
        has |= RUN | FIVE_SUITED | FIVE_RANKS
    return has


def _declarations_found(pool: Pool) -> list[tuple[int, tuple[int, ...]]]:
    """Every declaration of a hand's pool, by every finder (the general way)."""
    found: set[tuple[int, tuple[int, ...]]] = set()
    for order, cat in _ROWS[pool.has]:
        for parts in cat.find(pool):
            # Every part's cards are sorted (the pool's are), so one part's choices are too.
            if len(parts) == 1:
                w, _, k = parts[0]
                found.update([(order, chosen) for chosen in combinations(w, k)])
            else:
                for choice in product(*[combinations(w, k) for w, _, k in parts]):
                    found.add((order, tuple(sorted(chain.from_iterable(choice)))))
    return sorted(found)


def _same_rank_declarations(pool: Pool) -> list[tuple[int, tuple[int, ...]]]:
    """The declarations of a hand's pool holding no suited run, flush or straight:
    only whole-rank categories, listed directly (most hands; what
    :func:`_declarations_found` gives, without the finders' generality)."""
    groups = pool.groups
    if len(groups) == 1 and len(_RANK_PAIRS[pool.held(groups[0])]) == 1:
        return [(_PAIR_AT, _RANK_PAIRS[pool.held(groups[0])][0])]  # one pair: most such hands
    found: list[tuple[int, tuple[int, ...]]] = []
    for i, a in enumerate(groups):
        held_a = pool.held(a)
        cards_a = _RANK_CARDS[held_a]
        if len(cards_a) == 4:
            found.append((_QUADS_AT, cards_a))
        if len(cards_a) >= 3:
            for b in groups:
                if b != a:
                    for three in _RANK_TRIPLES[held_a]:
                        for two in _RANK_PAIRS[pool.held(b)]:
                            found.append((_FULL_HOUSE_AT, tuple(sorted(three + two))))
            found.extend([(_TRIPS_AT, three) for three in _RANK_TRIPLES[held_a]])
        pairs_a = _RANK_PAIRS[held_a]
        found.extend([(_PAIR_AT, pair) for pair in pairs_a])
        for b in groups[i + 1 :]:
            for two in _RANK_PAIRS[pool.held(b)]:
                found.extend([(_TWO_PAIRS_AT, pair + two) for pair in pairs_a])
    found.sort()
    return found


# -- lay-off ------------------------------------------------------------------


# Extension and LayOffResult are plain classes, not dataclasses: compiled, a
# dataclass's __init__ is the interpreted one the dataclasses module writes, and
# every declaration makes one of these.  Treat them as frozen.
class Extension:
    """An opponent's extended hand: the cards it lays off and what they form."""

    __slots__ = ("cards", "category", "laid", "seat")

    def __init__(self, seat: int, laid: tuple[int, ...], category: str,
                 cards: tuple[int, ...]) -> None:
        self.seat = seat
        self.laid = laid
        self.category = category
        self.cards = cards

    def __repr__(self) -> str:
        return (f"Extension(seat={self.seat}, laid={self.laid}, category={self.category!r}, "
                f"cards={self.cards})")

    @property
    def points(self) -> int:
        return POINTS[self.category]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "laid_off": card_names(self.laid),
            "category": self.category,
            "cards": card_names(self.cards),
            "points": self.points,
        }


#: A way to extend: its category, its parts and how many hand cards it lays off.
_Found = tuple[Category, list[_Part], int]


def _search(pool: Pool, above: int, at_most: int = 100, first_single: bool = False,
            single_size: int = 5, want_multi: bool = True, first_multi: bool = False
            ) -> tuple[_Found | None, _Found | None]:
    """The best one-card and the best multi-card extension in ``pool`` scoring
    more than ``above`` (and at most ``at_most``); with ``first_single`` the
    search stops at the best one-card extension (then no multi-card one
    counts), with ``first_multi`` at the best multi-card one.

    A one-card extension holds at most ``single_size`` cards (the winning
    cards and one more): once a multi-card one is found, or when none is
    wanted (``want_multi``; then the multi-card result means nothing), larger
    categories are not searched."""
    single: _Found | None = None
    multi: _Found | None = None
    for _, cat in _ROWS[pool.has]:
        if cat.points > at_most:
            continue
        if cat.points <= above:
            break
        if cat.size > single_size and (multi is not None or not want_multi):
            continue
        top = cat.size - 1  # at least one winning card
        for parts in cat.find(pool):
            lo = hi = 0
            for w, h, k in parts:
                if k > len(w):
                    lo += k - len(w)
                hi += min(k, len(h))
            hi = min(hi, top)
            if single is None and lo <= 1 <= hi:
                single = (cat, parts, 1)
                if first_single:
                    return single, multi
            if multi is None and max(lo, 2) <= hi:
                multi = (cat, parts, max(lo, 2))
                if first_multi:
                    return single, multi
            if single is not None and multi is not None:
                return single, multi
    return single, multi


def _witness(seat: int, found: _Found) -> Extension:
    """The extension of ``found``: which hand cards it lays off, which winning cards it keeps."""
    cat, parts, from_hand = found
    # Each part takes the hand cards it must (more than its winning cards), then
    # the hand cards still to lay off go to the first parts that can hold them.
    extra = from_hand
    for w, _, k in parts:
        extra -= max(0, k - len(w))
    laid: list[int] = []
    chosen: list[int] = []
    for w, h, k in parts:
        take = max(0, k - len(w))
        add = min(extra, min(k, len(h)) - take)
        take += add
        extra -= add
        for i in range(take):
            laid.append(h[i])
            chosen.append(h[i])
        for i in range(k - take):
            chosen.append(w[i])
    return Extension(seat, tuple(sorted(laid)), cat.name, tuple(sorted(chosen)))


def extensions(
    winning: Sequence[int], hand: Sequence[int], above: int, seat: int = 0, at_most: int = 100
) -> tuple[Extension | None, Extension | None]:
    """An opponent's best one-card extension and best multi-card extension of
    ``winning`` scoring more than ``above`` points (``None`` where there is none).
    Categories scoring more than ``at_most`` are not searched."""
    single, multi = _search(Pool(card_bits(winning), card_bits(hand)), above, at_most)
    return (None if single is None else _witness(seat, single),
            None if multi is None else _witness(seat, multi))


class LayOffResult:
    """Who scores after a declaration, and why."""

    __slots__ = ("lay_off", "outcome", "points", "scorer")

    def __init__(self, outcome: str, scorer: int | None, points: int,
                 lay_off: Extension | None) -> None:
        self.outcome = outcome  # "declarer" | "lay_off" | "nullified"
        self.scorer = scorer
        self.points = points
        self.lay_off = lay_off

    def __repr__(self) -> str:
        return (f"LayOffResult(outcome={self.outcome!r}, scorer={self.scorer}, "
                f"points={self.points}, lay_off={self.lay_off!r})")


def resolve_declaration(
    declarer: int, winning: Sequence[int], points: int, hands: Sequence[Sequence[int]]
) -> LayOffResult:
    """Apply the lay-off rule to a declaration of ``points`` by ``declarer``.

    ``lay_off`` is the scoring one-card extension, or for a nullified hand the
    best multi-card extension of the nearest opponent clockwise that has one."""
    return _resolve(declarer, card_bits(winning), len(winning), points,
                    [card_bits(h) for h in hands])


def _pair_rank_shift(winning: int, size: int, points: int) -> int:
    """4 * the rank of a declared pair scoring less than three of a kind, else -1."""
    if size != 2 or points >= _TRIPS_POINTS:
        return -1
    shift = (winning.bit_length() - 1) & ~3
    return shift if winning >> shift << shift == winning else -1


def _pair_lay_off(declarer: int, winning: int, shift: int,
                  hands: list[int]) -> LayOffResult | None:
    """The lay-off of a pair (most declarations), found directly: a one-card
    extension holds three cards, and three cards holding the pair form only
    three of a kind, so it is the nearest seat's lowest third card of the rank
    (what the general search finds, tested); ``None`` if no seat holds one."""
    n = len(hands)
    base = shift * 4  # the _RANK_CARDS index of the rank: rank * 16
    pair = winning >> shift & 15
    for offset in range(1, n):
        seat = (declarer + offset) % n
        held = hands[seat] >> shift & 15
        if held:
            third = held & -held  # the lowest suit held
            ext = Extension(seat, _RANK_CARDS[base + third], "three_of_a_kind",
                            _RANK_CARDS[base + (pair | third)])
            return LayOffResult("lay_off", seat, _TRIPS_POINTS, ext)
    return None


def _resolve(declarer: int, winning: int, size: int, points: int,
             hands: list[int]) -> LayOffResult:
    """:func:`resolve_declaration` of cards as bitmasks (``size`` winning cards)."""
    n = len(hands)
    pair = _pair_rank_shift(winning, size, points)
    if pair >= 0:
        found = _pair_lay_off(declarer, winning, pair, hands)
        if found is not None:
            return found
    # One-card lay-offs first, every seat: they hold the winning cards and one
    # more at most, so larger categories need no search; the best scores (the
    # nearest seat on a tie: a later seat's must score more).
    pools: list[tuple[int, Pool]] = []
    best: tuple[int, _Found] | None = None
    above = points
    for offset in range(1, n):
        seat = (declarer + offset) % n
        if _TOP_POINTS[_has_at_most(winning | hands[seat])] <= above:
            continue  # the search would find nothing scoring more
        pool = Pool(winning, hands[seat])
        pools.append((seat, pool))
        if pair >= 0:
            continue  # a pair's one-card lay-off is a third card of its rank: none
        single, _ = _search(pool, above, first_single=True, single_size=size + 1,
                            want_multi=False)
        if single is not None:
            best = seat, single
            above = single[0].points
    if best is not None:
        ext = _witness(best[0], best[1])
        return LayOffResult("lay_off", best[0], ext.points, ext)
    # None: the nearest seat with a multi-card extension nullifies the hand (the
    # seats searched are the same, ``above`` never having moved).
    for seat, pool in pools:
        _, multi = _search(pool, points, first_multi=True)
        if multi is not None:
            return LayOffResult("nullified", None, 0, _witness(seat, multi))
    return LayOffResult("declarer", declarer, points, None)


# -- the game -------------------------------------------------------------------

#: The deck in a fixed order, to shuffle (the order of ``cards.standard_deck``).
_DECK: Final[tuple[str, ...]] = tuple(cards.standard_deck())
#: The same deck as int cards: shuffling ints deals the same cards.
_DECK_CARDS: Final[tuple[int, ...]] = tuple(CARD[name] for name in _DECK)


# Memo tables keyed by small ints: compiled, a dict lookup by int is several
# times cheaper than a functools.cache call.  They stay small: one entry per
# (category, cards) declaration or (seat, card) event ever made.
#: (cards as a bitmask) << 4 | category index -> the declare action.
_DECLARE_ACTIONS: Final[dict[int, Action]] = {}
#: A declare action -> (category, winning cards).
_DECLARED: Final[dict[Action, tuple[str, tuple[int, ...]]]] = {}


def _declare_action(order: int, winning: tuple[int, ...]) -> Action:
    """The action declaring ``winning`` as the category ``TABLE[order]``."""
    key = order
    for c in winning:
        key |= 1 << (c + 4)
    action = _DECLARE_ACTIONS.get(key)
    if action is None:
        category = TABLE[order].name
        action = f"declare {category} {' '.join(card_names(winning))}"
        _DECLARE_ACTIONS[key] = action
        _DECLARED[action] = category, winning
    return action


def _parse_declaration(action: Action) -> tuple[str, tuple[int, ...]]:
    """(category, winning cards) of a ``declare`` action."""
    found = _DECLARED.get(action)
    if found is None:  # every legal one was listed, so made above: a safety net
        _, category, *names = action.split()
        found = category, tuple(CARD[name] for name in names)
    return found


# Shared, immutable Event objects for the events of every turn, by int key.
_DRAW_EVENTS: Final[dict[int, tuple[Event, Event]]] = {}
_CARD_EVENTS: Final[dict[int, Event]] = {}


def _draw_events(seat: int, stock_size: int, card: int) -> tuple[Event, Event]:
    key = (seat * 64 + stock_size) * 64 + card
    events = _DRAW_EVENTS.get(key)
    if events is None:
        events = _DRAW_EVENTS[key] = (
            new_event("draw", {"seat": seat, "source": "stock", "stock_size": stock_size}),
            new_event("drawn", {"seat": seat, "card": NAMES[card]}, (seat,)))
    return events


def _card_event(kind: str, seat: int, card: int) -> Event:
    """A public ``take`` or ``discard`` event."""
    key = (seat * 64 + card) * 2 + (kind == "take")
    event = _CARD_EVENTS.get(key)
    if event is None:
        event = _CARD_EVENTS[key] = new_event(kind, {"seat": seat, "card": NAMES[card]})
    return event


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class FiveCardRummy(Game):
    """Five Card Rummy for 2-6 players; first to ``target`` points wins."""

    name: ClassVar[str] = "five-card-rummy"
    field_labels: ClassVar[Mapping[str, str]] = {
        "discard_top": "Top discard",
        "discard_pile": "Discard pile",
        "stock_size": "Cards in the stock",
        "scores": "Scores",
    }
    seat_fields: ClassVar[tuple[str, ...]] = ("scores", "known_cards")
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6
    score_order = "higher"
    option_specs: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "target", "int", 100, "points that win the game (first to reach it)", minimum=1,
            maximum=1_000_000,
        ),
        OptionSpec(
            "max_hands", "int", 200, "hands after which a game still going ends", minimum=1,
            maximum=100_000,
        ),
    )

    def deck(self) -> list[str]:
        return list(_DECK)

    def new_state(self, seed: int) -> FiveCardRummyState:
        return FiveCardRummyState(self, seed)


#: (seat,) for every seat: deciding_seats runs several times a decision.
#: The observation's ``hand_sizes``, from tables: every hand holds HAND_SIZE
#: cards but the current player's between its draw and its discard (one more).
#: _SIZES[n] for n players at a turn's start; _SIZES_DRAWN[n * 6 + seat] after
#: ``seat`` drew (no list and tuple built twice a turn).
_SIZES: Final[tuple[tuple[int, ...], ...]] = tuple((HAND_SIZE,) * n for n in range(7))
_SIZES_DRAWN: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(HAND_SIZE + (seat == drawer) for seat in range(n))
    for n in range(7) for drawer in range(6))


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class FiveCardRummyState(State):
    """A game of Five Card Rummy in progress."""

    def __init__(self, game: FiveCardRummy, seed: int) -> None:
        super().__init__(game, seed)
        n = self.num_players
        self.target: int = game.options["target"]
        self.max_hands: int = game.options["max_hands"]
        self.max_turns: int = game.options["max_turns"]
        self.totals: list[int] = [0] * n
        self.hand_number = 0
        self.dealer = 0
        self.hands: list[list[int]] = [[] for _ in range(n)]
        #: Each hand as a bitmask (card_bits), kept beside it for the pools.
        self.hand_bits: list[int] = [0] * n
        self.known: list[list[int]] = [[] for _ in range(n)]
        self.stock: list[int] = []
        self.pile: list[int] = []
        # Names mirror the discard pile and the known cards for cheap observations.
        self._pile_names: list[str] = []
        self._known_names: list[tuple[str, ...]] = [()] * n
        self.current = 1 % n
        self.phase = START
        #: The deciding seats, kept with current and phase (asked several times a decision).
        self._deciding: tuple[int, ...] = SEAT_ONLY[self.current]
        self.turns_done = 0
        self.drawn = -1
        self.taken = -1
        self.end_reason: str | None = None
        self.last_hand: dict[str, Any] | None = None
        self._refresh_public()
        self._start_hand()

    # -- hands ---------------------------------------------------------------
    def _start_hand(self) -> None:
        n = self.num_players
        self.hand_number += 1
        stacked = self.game.options["deck"] if self.hand_number == 1 else None
        first = (self.dealer + 1) % n
        deck = ([CARD[name] for name in stacked] if stacked is not None
                else cards.shuffled(_DECK_CARDS, self.rng))
        hands, self.stock = cards.deal(deck, n, HAND_SIZE, first)
        bits = [0] * n
        for seat in range(n):
            hand = hands[seat]
            hand.sort()
            hand_bits = 0
            for c in hand:  # card_bits of a list[int]: a typed loop, compiled
                hand_bits |= 1 << c
            bits[seat] = hand_bits
        self.hands = hands
        self.hand_bits = bits
        self.pile = []
        self._pile_names = []
        self.known = [[] for _ in range(n)]
        self._known_names = [()] * n
        self.current = first
        self.phase = START
        self._deciding = SEAT_ONLY[first]
        self.turns_done = 0
        self.drawn = self.taken = -1
        self._new_hand_public()
        events = self.events
        events.append(new_event("hand_start", {"hand": self.hand_number, "dealer": self.dealer,
                                            "first": first, "scores": self.totals[:]}))
        for seat in range(n):
            events.append(new_event("deal", {"seat": seat, "cards": card_names(hands[seat])},
                                 SEAT_ONLY[seat]))

    def _end_hand(self, summary: dict[str, Any], next_dealer: int) -> None:
        """Record the hand's ``summary`` (which already holds every key, the
        next dealer included: one dict built whole, never grown) and go on."""
        self.dealer = next_dealer
        self.last_hand = summary
        self.events.append(new_event("hand_end", summary.copy()))
        top = 0
        for total in self.totals:  # max() of a list is a generic call, compiled
            if total > top:
                top = total
        if top >= self.target:
            self._end_game("target")
        elif self.hand_number >= self.max_hands:
            self._end_game("max_hands")
        else:
            self._start_hand()

    def _end_game(self, reason: str) -> None:
        self.phase = OVER
        self._deciding = ()
        self.end_reason = reason
        self.emit("game_end", reason=reason, scores=list(self.totals), hands=self.hand_number)
        self._refresh_public()

    # -- decisions -------------------------------------------------------------
    def deciding_seats(self) -> tuple[int, ...]:
        return self._deciding

    # Tuples: the base keeps the legal actions as a tuple, and tuple() of one is itself.
    def _legal_actions(self, seat: int) -> tuple[Action, ...]:
        """Turn start: ``draw stock``, ``take discard`` (if the pile has a card),
        then every declaration (highest points first).  After drawing: a
        discard of any card but the one taken from the pile."""
        return self._start_actions() if self.phase == START else self._discard_actions()

    def _start_actions(self) -> tuple[Action, ...]:
        found = _declarations(self.hand_bits[self.current])
        if not found:  # about half the turns of a random game: a shared tuple
            return _DRAW_OR_TAKE if self.pile else _DRAW_ONLY
        actions = [DRAW_STOCK, TAKE_DISCARD] if self.pile else [DRAW_STOCK]
        for order, winning in found:
            actions.append(_declare_action(order, winning))
        return tuple(actions)

    def _discard_actions(self) -> tuple[Action, ...]:
        taken = self.taken
        return tuple([_DISCARD_ACTION[c] for c in self.hands[self.current] if c != taken])

    def _apply(self, actions: Mapping[int, Action]) -> None:
        action = actions[self.current]
        if action == DRAW_STOCK:
            self._draw_stock()
        elif action == TAKE_DISCARD:
            self._take_discard()
        elif (card := _DISCARDED.get(action, -1)) >= 0:
            self._discard(card)
        else:
            category, winning = _parse_declaration(action)
            self._declare(category, winning)

    def _draw_stock(self) -> None:
        seat = self.current
        if not self.stock:
            self._reshuffle()
        card = self.stock.pop()
        cards.insert_sorted(self.hands[seat], card)
        bits = self.hand_bits
        bits[seat] = bits[seat] | 1 << card  # not |=: compiled, an item's |= is generic
        self.drawn = card
        self.phase = DISCARD
        self.events.extend(_draw_events(seat, len(self.stock), card))  # compiled: no list += tuple
        public = self._public
        public["phase"] = "discard"
        public["stock_size"] = len(self.stock)
        public["hand_sizes"] = _SIZES_DRAWN[self.num_players * 6 + seat]

    def _reshuffle(self) -> None:
        # More cards than hands hold always lie outside them (52 > 6 * 5 + 1).
        assert len(self.pile) > 1, "stock and discard pile cannot both be empty"
        top = self.pile.pop()
        self.stock = cards.shuffled(self.pile, self.rng)
        self.pile = [top]
        self._pile_names = [NAMES[top]]
        self.emit("reshuffle", stock_size=len(self.stock))
        self._public["discard_pile"] = (NAMES[top],)

    def _take_discard(self) -> None:
        seat = self.current
        card = self.pile.pop()
        self._pile_names.pop()
        cards.insert_sorted(self.hands[seat], card)
        bits = self.hand_bits
        bits[seat] = bits[seat] | 1 << card  # not |=: compiled, an item's |= is generic
        known = self.known[seat]
        cards.insert_sorted(known, card)
        self._known_names[seat] = tuple(card_names(known))
        self.taken = card
        self.phase = DISCARD
        self.events.append(_card_event("take", seat, card))
        public = self._public
        public["phase"] = "discard"
        public["taken"] = NAMES[card]
        self._public_pile()
        public["hand_sizes"] = _SIZES_DRAWN[self.num_players * 6 + seat]
        public["known_cards"] = tuple(self._known_names)

    def _discard(self, card: int) -> None:
        seat = self.current
        _remove(self.hands[seat], card)
        bits = self.hand_bits
        bits[seat] = bits[seat] & ~(1 << card)
        known = self.known[seat]
        public = self._public
        if known and _remove(known, card):
            self._known_names[seat] = tuple(card_names(known))
            public["known_cards"] = tuple(self._known_names)
        self.pile.append(card)
        self._pile_names.append(NAMES[card])
        self.events.append(_card_event("discard", seat, card))
        self.turns_done += 1
        self.drawn = self.taken = -1
        if self.turns_done >= self.max_turns:
            summary: dict[str, Any] = {
                "hand": self.hand_number, "reason": "turn_cap", "outcome": "no_result",
                "declarer": None, "category": None, "cards": [], "points": 0,
                "scorer": None, "scored": 0, "lay_off": None, "hands": self._hand_names(),
                "scores": self.totals[:], "next_dealer": self.dealer,
            }
            self._end_hand(summary, self.dealer)
            return
        self.current = (seat + 1) % self.num_players
        self.phase = START
        self._deciding = SEAT_ONLY[self.current]
        public["phase"] = "start"
        public["turn_number"] = self.turns_done + 1
        public["taken"] = None
        self._public_pile()
        public["hand_sizes"] = _SIZES[self.num_players]

    def _declare(self, category: str, winning: tuple[int, ...]) -> None:
        seat = self.current
        points = POINTS[category]
        names = card_names(winning)
        self.events.append(new_event("declare", {"seat": seat, "category": category,
                                              "cards": names, "points": points}))
        result = _resolve(seat, card_bits(winning), len(winning), points, self.hand_bits)
        scorer = result.scorer
        if scorer is not None:
            self.totals[scorer] += result.points
        next_dealer = seat if scorer is None else scorer
        summary: dict[str, Any] = {
            "hand": self.hand_number, "reason": "declared", "outcome": result.outcome,
            "declarer": seat, "category": category, "cards": names[:],
            "points": points, "scorer": scorer, "scored": result.points,
            "lay_off": None if result.lay_off is None else result.lay_off.to_dict(),
            "hands": self._hand_names(), "scores": self.totals[:], "next_dealer": next_dealer,
        }
        self._end_hand(summary, next_dealer)

    def _hand_names(self) -> list[list[str]]:
        """Every seat's hand as card names (a hand's summary)."""
        return [card_names(hand) for hand in self.hands]

    #: Set whole at the end of a hand, never changed after.
    _clone_shares = frozenset({"last_hand"})

    def _copy_into(self, other: FiveCardRummyState) -> None:
        """Field by field (the generic copy costs several times more); every
        attribute set in ``__init__`` appears here (test_contract checks)."""
        other.target = self.target
        other.max_hands = self.max_hands
        other.max_turns = self.max_turns
        other.totals = self.totals[:]
        other.hand_number = self.hand_number
        other.dealer = self.dealer
        other.hands = [hand[:] for hand in self.hands]
        other.hand_bits = self.hand_bits[:]
        other.known = [cards[:] for cards in self.known]
        other.stock = self.stock[:]
        other.pile = self.pile[:]
        other._pile_names = self._pile_names[:]
        other._known_names = self._known_names[:]
        other.current = self.current
        other.phase = self.phase
        other._deciding = self._deciding
        other.turns_done = self.turns_done
        other.drawn = self.drawn
        other.taken = self.taken
        other.end_reason = self.end_reason
        other.last_hand = self.last_hand
        other._public = self._public.copy()  # tuples and numbers, updated key by key

    # -- views -------------------------------------------------------------------
    def _refresh_public(self) -> None:
        """Rebuild the public fields of the observation (the rules page's, list
        fields as tuples).  The envelope and the private fields are
        placeholders, set per observation, so that filling them in never grows
        the copied dict."""
        pile = self._pile_names
        self._public: Observation = {
            "game": self.game.name, "seat": None, "players": self.num_players, "to_move": (),
            "phase": _PHASE_NAMES[self.phase],
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "turn_number": self.turns_done + 1,
            "max_turns": self.max_turns,
            "taken": NAMES[self.taken] if self.taken >= 0 else None,
            "discard_top": pile[-1] if pile else None,
            "discard_pile": tuple(pile),
            "stock_size": len(self.stock),
            "hand_sizes": tuple([len(hand) for hand in self.hands]),
            "known_cards": tuple(self._known_names),
            "scores": tuple(self.totals),
            "target": self.target,
            "max_hands": self.max_hands,
            "hand": (), "drawn": None,
        }

    def _new_hand_public(self) -> None:
        """The public fields a new hand changes, set in place (the first hand
        builds them: :meth:`_refresh_public`): a hand lasts ~10 decisions, so
        rebuilding all twenty-one keys each hand is a cost per decision."""
        public = self._public
        public["phase"] = "start"
        public["hand_number"] = self.hand_number
        public["dealer"] = self.dealer
        public["turn_number"] = 1
        public["taken"] = None
        public["discard_top"] = None
        public["discard_pile"] = ()
        public["stock_size"] = len(self.stock)
        public["hand_sizes"] = _SIZES[self.num_players]
        public["known_cards"] = tuple(self._known_names)
        public["scores"] = tuple(self.totals)

    def _public_pile(self) -> None:
        pile = self._pile_names
        public = self._public
        public["discard_top"] = pile[-1] if pile else None
        public["discard_pile"] = tuple(pile)

    def _observation(self, seat: int | None) -> Observation:
        """The game's fields of the rules page (the base adds the envelope).  A
        spectator (``None``) gets all but ``hand`` and ``drawn``."""
        obs = self._public.copy()
        if seat is None:
            del obs["hand"], obs["drawn"]
        else:
            obs["hand"] = tuple([NAMES[c] for c in self.hands[seat]])
            # The drawn card is -1 once the turn is over, and when the game is.
            if self.drawn >= 0 and seat == self.current:
                obs["drawn"] = NAMES[self.drawn]
        return obs

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def _scores(self) -> list[float]:
        """Final points of each seat."""
        return list(self.totals)

    def reveal(self) -> dict[str, Any]:
        return {
            "scores": list(self.totals),
            "hands_played": self.hand_number,
            "reason": self.end_reason,
            "last_hand": self.last_hand,
        }

    def card_zones(self) -> dict[str, list[str]]:
        """Where every card is now (for audits and tests): stock (top last),
        discard pile (top last) and each seat's hand."""
        zones = {"stock": card_names(self.stock), "discard": card_names(self.pile)}
        for seat, hand in enumerate(self.hands):
            zones[f"hand{seat}"] = card_names(hand)
        return zones


GAME = FiveCardRummy
