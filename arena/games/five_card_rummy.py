"""Five Card Rummy: a draw-and-discard rummy game scored with poker-style hands.

Rules: ``seeds/five-card-rummy.txt`` plus the five-card-rummy section of
``RULINGS.md``; the bot-facing description is ``docs/rules/five-card-rummy.md``.

Internally a card is an int ``rank * 4 + suit`` (rank 0 = A .. 12 = K, suit
0..3 = c d h s), so sorting ints gives the canonical card order (rank, ace low,
then suit) used in every action string and observation.  For sequences a rank
has a *value* 1..13, and the ace also 14 (aces high or low, never wrapping).

Lay-off (RULINGS): an opponent's extension with laid-off cards ``L`` is a set
``T`` of cards with ``L ⊆ T ⊆ winning ∪ L``, ``len(T) <= 5``, at least one
winning card in ``T``, such that ``T`` is exactly the cards of a category; its
score is that category's points.  Searching every ``T`` of an opponent at once,
``T ∩ hand`` of size 1 is a one-card lay-off and of size >= 2 a multi-card one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar

from arena.games.base import Action, Game, Observation, OptionSpec, State
from arena.games.cards import RANKS, SUITS, shuffled, standard_deck

HAND_SIZE = 5

#: Category id -> (points, number of cards), highest first.
CATEGORIES: dict[str, tuple[int, int]] = {
    "royal_flush": (100, 5),
    "straight_flush": (80, 5),
    "four_of_a_kind": (50, 4),
    "full_house": (40, 5),
    "full_set": (35, 5),
    "sequence_4": (30, 4),
    "flush": (25, 5),
    "straight": (20, 5),
    "three_of_a_kind": (15, 3),
    "sequence_3": (10, 3),
    "two_pairs": (5, 4),
    "pair": (2, 2),
}
POINTS: dict[str, int] = {cat: pts for cat, (pts, _) in CATEGORIES.items()}
_ORDER: dict[str, int] = {cat: i for i, cat in enumerate(CATEGORIES)}

#: Card names by int, and back.
NAMES: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
CARD: dict[str, int] = {name: i for i, name in enumerate(NAMES)}
_DISCARD_ACTION: tuple[str, ...] = tuple("discard " + name for name in NAMES)
_ACE_HIGH = 14

DRAW_STOCK = "draw stock"
TAKE_DISCARD = "take discard"

# Phases.
START, DISCARD, OVER = 0, 1, 2
_PHASE_NAMES = ("start", "discard", "over")


def card_names(cards: Sequence[int]) -> list[str]:
    """Names of int cards, in the given order."""
    return [NAMES[c] for c in cards]


def parse_cards(names: Sequence[str]) -> list[int]:
    """Int cards of card names; raise :class:`ValueError` on an unknown name."""
    try:
        return [CARD[n] for n in names]
    except KeyError as exc:
        raise ValueError(f"unknown card {exc.args[0]!r}") from None


def _card(rank: int, suit: int) -> int:
    return rank * 4 + suit


def _value_rank(value: int) -> int:
    """Rank index of a sequence value 1..14 (14 is the ace)."""
    return 0 if value == _ACE_HIGH else value - 1


# -- what a set of cards forms ----------------------------------------------


def _consecutive(cards: Sequence[int]) -> bool:
    """Distinct ranks in one unbroken run, ace low or high, no wrap."""
    values = sorted(c // 4 + 1 for c in cards)
    n = len(values)
    if len(set(values)) != n:
        return False
    if values[-1] - values[0] == n - 1:
        return True
    if values[0] == 1:
        high = [*values[1:], _ACE_HIGH]
        return high[-1] - high[0] == n - 1
    return False


def categories_of(cards: Sequence[int]) -> list[str]:
    """Every category whose definition ``cards`` (all of them) meet, highest first.

    Categories are inclusive: a straight flush is also a flush and a straight,
    a royal flush also a straight flush.  Two pairs need different ranks, a full
    house a pair and trips of different ranks, a full set a pair plus a disjoint
    sequence of 3."""
    n = len(cards)
    counts = sorted(
        (sum(1 for c in cards if c // 4 == r) for r in {c // 4 for c in cards}), reverse=True
    )
    one_suit = len({c % 4 for c in cards}) == 1
    run = _consecutive(cards)
    found: list[str] = []
    if n == 2:
        if counts == [2]:
            found.append("pair")
    elif n == 3:
        if one_suit and run:
            found.append("sequence_3")
        if counts == [3]:
            found.append("three_of_a_kind")
    elif n == 4:
        if counts == [4]:
            found.append("four_of_a_kind")
        if one_suit and run:
            found.append("sequence_4")
        if counts == [2, 2]:
            found.append("two_pairs")
    elif n == 5:
        if one_suit and run:
            if {c // 4 for c in cards} == {0, 9, 10, 11, 12}:
                found.append("royal_flush")
            found.append("straight_flush")
        if counts == [3, 2]:
            found.append("full_house")
        if _is_full_set(cards):
            found.append("full_set")
        if one_suit:
            found.append("flush")
        if run:
            found.append("straight")
    found.sort(key=lambda cat: -POINTS[cat])
    return found


def _is_full_set(cards: Sequence[int]) -> bool:
    for pair in combinations(cards, 2):
        if pair[0] // 4 != pair[1] // 4:
            continue
        rest = [c for c in cards if c not in pair]
        if len({c % 4 for c in rest}) == 1 and _consecutive(rest):
            return True
    return False


def forms(category: str, cards: Sequence[int]) -> bool:
    """True if ``cards`` are exactly the cards of a ``category`` hand."""
    return len(cards) == CATEGORIES[category][1] and category in categories_of(cards)


# Runs as rank bitmasks (bit r = rank r, ace = bit 0 whether low or high).
def _window_masks(length: int) -> tuple[int, ...]:
    masks = []
    for start in range(1, _ACE_HIGH - length + 2):
        mask = 0
        for value in range(start, start + length):
            mask |= 1 << _value_rank(value)
        masks.append(mask)
    return tuple(masks)


_WINDOWS: dict[int, tuple[int, ...]] = {n: _window_masks(n) for n in (3, 4, 5)}
_ROYAL = _WINDOWS[5][-1]


def _runs_table(length: int) -> list[tuple[int, ...]]:
    table: list[tuple[int, ...]] = [()] * (1 << 13)
    for window in _WINDOWS[length]:
        others = ((1 << 13) - 1) & ~window
        extra = others
        while True:  # every superset of the window
            table[window | extra] += (window,)
            if not extra:
                break
            extra = (extra - 1) & others
    return table


#: _RUNS[length][ranks]: every run of ``length`` ranks (as a rank bitmask)
#: inside the rank bitmask ``ranks``; a table because lookups are hot.
_RUNS: dict[int, list[tuple[int, ...]]] = {n: _runs_table(n) for n in (3, 4, 5)}


def _mask_cards(mask: int, suit: int) -> tuple[int, ...]:
    """The cards of one suit whose ranks are set in ``mask``, sorted."""
    return tuple(r * 4 + suit for r in range(13) if mask >> r & 1)


def declarations(hand: Sequence[int]) -> list[tuple[str, tuple[int, ...]]]:
    """Every distinct (category, sorted cards) a hand holds, highest points
    first, then by cards in canonical order.  Equals testing every subset of
    the hand with :func:`categories_of`, but builds the hands directly."""
    cards = sorted(hand)
    suit_ranks = [0, 0, 0, 0]
    for c in cards:
        suit_ranks[c & 3] |= 1 << (c >> 2)
    all_ranks = suit_ranks[0] | suit_ranks[1] | suit_ranks[2] | suit_ranks[3]
    found: list[tuple[str, tuple[int, ...]]] = []
    num_ranks = all_ranks.bit_count()
    if num_ranks < len(cards):
        groups: list[list[int]] = []
        for c in cards:
            if groups and groups[-1][0] >> 2 == c >> 2:
                groups[-1].append(c)
            else:
                groups.append([c])
        _rank_declarations(cards, [g for g in groups if len(g) > 1], num_ranks, found)
    for suit, ranks in enumerate(suit_ranks):
        if ranks.bit_count() >= 3:
            _suit_declarations(cards, suit, ranks, found)
    if len(cards) == 5 and num_ranks == 5 and _RUNS[5][all_ranks]:
        found.append(("straight", tuple(cards)))
    if len(found) > 1:
        ordered = sorted({(_ORDER[cat], run, cat) for cat, run in found})
        found = [(cat, run) for _, run, cat in ordered]
    return found


def _rank_declarations(
    cards: list[int], groups: list[list[int]], num_ranks: int,
    found: list[tuple[str, tuple[int, ...]]],
) -> None:
    pairs: list[list[tuple[int, ...]]] = []
    for group in groups:
        size = len(group)
        pairs.append(list(combinations(group, 2)))
        found.extend(("pair", p) for p in pairs[-1])
        if size >= 3:
            found.extend(("three_of_a_kind", t) for t in combinations(group, 3))
        if size == 4:
            found.append(("four_of_a_kind", tuple(group)))
    for i, first in enumerate(pairs):
        for second in pairs[i + 1 :]:
            found.extend(("two_pairs", tuple(sorted(a + b))) for a in first for b in second)
    if len(cards) == 5 and num_ranks == 2 and len(groups) == 2:
        found.append(("full_house", tuple(cards)))


def _suit_declarations(
    cards: list[int], suit: int, ranks: int, found: list[tuple[str, tuple[int, ...]]]
) -> None:
    for window in _RUNS[3][ranks]:
        run = _mask_cards(window, suit)
        found.append(("sequence_3", run))
        rest = [c for c in cards if c not in run]
        if len(rest) == 2 and rest[0] >> 2 == rest[1] >> 2:
            found.append(("full_set", tuple(cards)))
    for window in _RUNS[4][ranks]:
        found.append(("sequence_4", _mask_cards(window, suit)))
    for window in _RUNS[5][ranks]:
        run = _mask_cards(window, suit)
        found.append(("straight_flush", run))
        if window == _ROYAL:
            found.append(("royal_flush", run))
    if ranks.bit_count() == 5 and len(cards) == 5:
        found.append(("flush", tuple(cards)))


# -- lay-off ------------------------------------------------------------------


@dataclass(frozen=True)
class Extension:
    """An opponent's extended hand: the cards it lays off and what they form."""

    seat: int
    laid: tuple[int, ...]
    category: str
    cards: tuple[int, ...]

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


# A part of a category instance: choose k cards from (winning cards, hand cards).
_Part = tuple[Sequence[int], Sequence[int], int]


class _Pool:
    """The winning cards plus one opponent's hand, indexed for the search."""

    _EMPTY: tuple[list[int], list[int]] = ([], [])

    def __init__(self, winning: Sequence[int], hand: Sequence[int]) -> None:
        by_rank: dict[int, tuple[list[int], list[int]]] = {}
        suit_values = [0, 0, 0, 0]
        in_hand = 0
        for side, cards in enumerate((winning, hand)):
            for c in cards:
                rank = c >> 2
                by_rank.setdefault(rank, ([], []))[side].append(c)
                suit_values[c & 3] |= (1 << (rank + 1)) | (1 << _ACE_HIGH if rank == 0 else 0)
                if side:
                    in_hand |= 1 << c
        self.by_rank = by_rank
        self.suit_values = suit_values
        self.in_hand = in_hand
        self.groups = sorted(r for r, (w, h) in by_rank.items() if len(w) + len(h) >= 2)

    def rank(self, r: int) -> tuple[list[int], list[int]]:
        """(winning cards, hand cards) of rank ``r``."""
        return self.by_rank.get(r, self._EMPTY)

    def window_parts(self, suit: int, start: int, length: int) -> list[_Part]:
        parts: list[_Part] = []
        for value in range(start, start + length):
            c = _card(_value_rank(value), suit)
            parts.append(((), (c,), 1) if self.in_hand >> c & 1 else ((c,), (), 1))
        return parts

    def windows(
        self, length: int, values: Sequence[int] | None = None
    ) -> Iterator[tuple[int, int]]:
        """(suit, start value) of every one-suit run of ``length`` in the pool."""
        full = (1 << length) - 1
        starts = values if values is not None else range(1, _ACE_HIGH - length + 2)
        for suit in range(4):
            mask = self.suit_values[suit]
            for start in starts:
                if mask >> start & full == full:
                    yield suit, start

    def instances(self, category: str) -> Iterator[list[_Part]]:
        """Every way the pool forms ``category``, as parts to choose from."""
        rank = self.rank
        if category == "royal_flush":
            for suit, start in self.windows(5, (10,)):
                yield self.window_parts(suit, start, 5)
        elif category == "straight_flush":
            for suit, start in self.windows(5, range(1, 10)):
                yield self.window_parts(suit, start, 5)
        elif category in ("sequence_4", "sequence_3"):
            length = 4 if category == "sequence_4" else 3
            for suit, start in self.windows(length):
                yield self.window_parts(suit, start, length)
        elif category in ("four_of_a_kind", "three_of_a_kind", "pair"):
            k = CATEGORIES[category][1]
            for r in self.groups:
                w, h = rank(r)
                if len(w) + len(h) >= k:
                    yield [(w, h, k)]
        elif category == "full_house":
            for a in self.groups:
                wa, ha = rank(a)
                if len(wa) + len(ha) >= 3:
                    for b in self.groups:
                        if b != a:
                            wb, hb = rank(b)
                            yield [(wa, ha, 3), (wb, hb, 2)]
        elif category == "two_pairs":
            for i, a in enumerate(self.groups):
                for b in self.groups[i + 1 :]:
                    yield [(*rank(a), 2), (*rank(b), 2)]
        elif category == "flush":
            for suit in range(4):
                w = sorted(c for r in self.by_rank for c in rank(r)[0] if c & 3 == suit)
                h = sorted(c for r in self.by_rank for c in rank(r)[1] if c & 3 == suit)
                if len(w) + len(h) >= 5:
                    yield [(w, h, 5)]
        elif category == "straight":
            present = self.suit_values[0] | self.suit_values[1] | self.suit_values[2]
            present |= self.suit_values[3]
            for start in range(1, 11):
                if present >> start & 31 == 31:
                    yield [(*rank(_value_rank(v)), 1) for v in range(start, start + 5)]
        elif category == "full_set":
            yield from self._full_sets()

    def _full_sets(self) -> Iterator[list[_Part]]:
        for suit, start in self.windows(3):
            seq = self.window_parts(suit, start, 3)
            used = {_value_rank(v) for v in range(start, start + 3)}
            for r in self.groups:
                w, h = self.rank(r)
                if r in used:
                    c = _card(r, suit)
                    w = [x for x in w if x != c]
                    h = [x for x in h if x != c]
                if len(w) + len(h) >= 2:
                    yield [*seq, (w, h, 2)]


def _witness(parts: list[_Part], from_hand: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(laid-off cards, all cards) of an instance using ``from_hand`` hand cards."""
    takes = [max(0, k - len(w)) for w, _, k in parts]
    extra = from_hand - sum(takes)
    for i, (_, h, k) in enumerate(parts):
        add = min(extra, min(k, len(h)) - takes[i])
        takes[i] += add
        extra -= add
    laid: list[int] = []
    cards: list[int] = []
    for (w, h, k), t in zip(parts, takes, strict=True):
        laid.extend(h[:t])
        cards.extend(h[:t])
        cards.extend(w[: k - t])
    return tuple(sorted(laid)), tuple(sorted(cards))


def extensions(
    winning: Sequence[int], hand: Sequence[int], above: int, seat: int = 0, at_most: int = 100
) -> tuple[Extension | None, Extension | None]:
    """An opponent's best one-card extension and best multi-card extension of
    ``winning`` scoring more than ``above`` points (``None`` where there is none).
    Categories scoring more than ``at_most`` are not searched."""
    pool = _Pool(winning, hand)
    single: Extension | None = None
    multi: Extension | None = None
    for category, (points, size) in CATEGORIES.items():
        if points > at_most:
            continue
        if points <= above or (single is not None and multi is not None):
            break
        for parts in pool.instances(category):
            lo = sum(max(0, k - len(w)) for w, _, k in parts)
            hi = sum(min(k, len(h)) for _, h, k in parts)
            hi = min(hi, size - 1)  # at least one winning card
            if single is None and lo <= 1 <= hi:
                laid, cards = _witness(parts, 1)
                single = Extension(seat, laid, category, cards)
            if multi is None and max(lo, 2) <= hi:
                laid, cards = _witness(parts, max(lo, 2))
                multi = Extension(seat, laid, category, cards)
            if single is not None and multi is not None:
                break
    return single, multi


class _Winning:
    """The winning cards, summarised once per declaration for :func:`_scan`."""

    def __init__(self, winning: Sequence[int]) -> None:
        self.cards = tuple(winning)
        self.rank_count = [0] * 13
        self.suit_ranks = [0, 0, 0, 0]
        for c in winning:
            self.rank_count[c >> 2] += 1
            self.suit_ranks[c & 3] |= 1 << (c >> 2)
        self.ranks = self.suit_ranks[0] | self.suit_ranks[1] | self.suit_ranks[2]
        self.ranks |= self.suit_ranks[3]
        self.suit_count = [m.bit_count() for m in self.suit_ranks]
        self.rank_set = frozenset(c >> 2 for c in winning)


def _scan(win: _Winning, hand: Sequence[int], above: int) -> tuple[int, int]:
    """(points of the best one-card extension, points of the best multi-card
    extension), counting only extensions scoring more than ``above`` (0: none).

    Same answer as :func:`extensions`, from rank counts and rank bitmasks only;
    the search stops at the first (best) one-card extension, since a one-card
    extension anywhere makes multi-card ones irrelevant.  Each way to form a
    category gives a range [lo, hi] of how many hand cards it can use."""
    hand_count: dict[int, int] = {}
    hand_suits = [0, 0, 0, 0]
    for c in hand:
        r = c >> 2
        hand_count[r] = hand_count.get(r, 0) + 1
        hand_suits[c & 3] |= 1 << r
    wc = win.rank_count
    ws = win.suit_ranks
    groups = []  # (rank, winning cards, hand cards) of ranks with 2+ cards
    for r in sorted(win.rank_set.union(hand_count)):
        w, h = wc[r], hand_count.get(r, 0)
        if w + h >= 2:
            groups.append((r, w, h))
    multi = 0

    def runs_found(length: int, size: int) -> tuple[bool, bool]:
        one = more = False
        for suit in range(4):
            h = hand_suits[suit]
            for window in _RUNS[length][ws[suit] | h]:
                if length == 5 and (window == _ROYAL) != (size == 100):
                    continue
                th = (window & h).bit_count()
                if th == 1:
                    one = True
                elif 2 <= th < length:
                    more = True
        return one, more

    for category, (points, size) in CATEGORIES.items():
        if points <= above:
            break
        one = more = False
        if category in ("royal_flush", "straight_flush"):
            one, more = runs_found(5, points)
        elif category == "sequence_4":
            one, more = runs_found(4, points)
        elif category == "sequence_3":
            one, more = runs_found(3, points)
        elif category == "four_of_a_kind":
            for _, w, h in groups:
                if w + h == 4:
                    one = one or h == 1
                    more = more or 2 <= h <= 3
        elif category == "three_of_a_kind":
            for _, w, h in groups:
                if w + h >= 3:
                    lo, hi = max(0, 3 - w), min(2, h)
                    one = one or lo <= 1 <= hi
                    more = more or (hi >= 2 and lo <= hi)
        elif category in ("full_house", "two_pairs"):
            k = 3 if category == "full_house" else 2
            for i, (a, wa, ha) in enumerate(groups):
                if wa + ha < k:
                    continue
                for j, (b, wb, hb) in enumerate(groups):
                    if b == a or (k == 2 and j <= i):
                        continue
                    lo = max(0, k - wa) + max(0, 2 - wb)
                    hi = min(min(k, ha) + min(2, hb), size - 1)
                    one = one or lo <= 1 <= hi
                    more = more or max(lo, 2) <= hi
        elif category == "full_set":
            one, more = _scan_full_sets(ws, hand_suits, groups)
        elif category == "flush":
            for suit in range(4):
                w, h = win.suit_count[suit], hand_suits[suit].bit_count()
                if w + h >= 5:
                    lo, hi = max(0, 5 - w), min(4, h)
                    one = one or lo <= 1 <= hi
                    more = more or max(lo, 2) <= hi
        elif category == "straight":
            hand_ranks = hand_suits[0] | hand_suits[1] | hand_suits[2] | hand_suits[3]
            for window in _RUNS[5][win.ranks | hand_ranks]:
                lo = (window & ~win.ranks).bit_count()
                hi = min(4, (window & hand_ranks).bit_count())
                one = one or lo <= 1 <= hi
                more = more or max(lo, 2) <= hi
        elif category == "pair":
            for _, w, h in groups:
                one = one or (w >= 1 and h >= 1)
        if one:
            return points, multi
        if more and not multi:
            multi = points
    return 0, multi


def _scan_full_sets(
    win_suits: list[int], hand_suits: list[int], groups: list[tuple[int, int, int]]
) -> tuple[bool, bool]:
    one = more = False
    for suit in range(4):
        h_suit = hand_suits[suit]
        for window in _RUNS[3][win_suits[suit] | h_suit]:
            th = (window & h_suit).bit_count()
            for r, w, h in groups:
                if window >> r & 1:  # the run holds this rank's card of its suit
                    if h_suit >> r & 1:
                        h -= 1
                    else:
                        w -= 1
                if w + h < 2:
                    continue
                lo, hi = th + max(0, 2 - w), min(4, th + min(2, h))
                one = one or lo <= 1 <= hi
                more = more or max(lo, 2) <= hi
    return one, more


@dataclass(frozen=True)
class LayOffResult:
    """Who scores after a declaration, and why."""

    outcome: str  # "declarer" | "lay_off" | "nullified"
    scorer: int | None
    points: int
    lay_off: Extension | None


def resolve_declaration(
    declarer: int, winning: Sequence[int], points: int, hands: Sequence[Sequence[int]]
) -> LayOffResult:
    """Apply the lay-off rule to a declaration of ``points`` by ``declarer``.

    ``lay_off`` is the scoring one-card extension, or for a nullified hand the
    best multi-card extension of the nearest opponent clockwise that has one."""
    n = len(hands)
    win = _Winning(winning)
    best_seat, best_points, multi_seat, multi_points = -1, points, -1, 0
    for offset in range(1, n):
        seat = (declarer + offset) % n
        single, multi = _scan(win, hands[seat], points)
        if single > best_points:
            best_seat, best_points = seat, single
        elif multi and multi_seat < 0:
            multi_seat, multi_points = seat, multi
    if best_seat >= 0:
        ext = extensions(winning, hands[best_seat], points, best_seat, best_points)[0]
        return LayOffResult("lay_off", best_seat, best_points, ext)
    if multi_seat >= 0:
        ext = extensions(winning, hands[multi_seat], points, multi_seat, multi_points)[1]
        return LayOffResult("nullified", None, 0, ext)
    return LayOffResult("declarer", declarer, points, None)


# -- the game -------------------------------------------------------------------

_DECK: tuple[int, ...] = tuple(CARD[name] for name in standard_deck())


class FiveCardRummy(Game):
    """Five Card Rummy for 2-6 players; first to ``target`` points wins."""

    name: ClassVar[str] = "five-card-rummy"
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
        return standard_deck()

    def new_state(self, seed: int) -> FiveCardRummyState:
        return FiveCardRummyState(self, seed)


class FiveCardRummyState(State):
    """A game of Five Card Rummy in progress."""

    game: FiveCardRummy

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
        self.known: list[list[int]] = [[] for _ in range(n)]
        self.stock: list[int] = []
        self.pile: list[int] = []
        # Names mirror the discard pile for cheap observations.
        self._pile_names: list[str] = []
        self._known_count = 0  # cards in all the known lists
        self.current = 1 % n
        self.phase = START
        self.turns_done = 0
        self.drawn = -1
        self.taken = -1
        self.end_reason: str | None = None
        self.last_hand: dict[str, Any] | None = None
        self._start_hand()

    # -- hands ---------------------------------------------------------------
    def _start_hand(self) -> None:
        n = self.num_players
        self.hand_number += 1
        stacked = self.game.options["deck"]
        if self.hand_number == 1 and stacked is not None:
            cards = [CARD[name] for name in stacked]
        else:
            cards = shuffled(_DECK, self.rng)
        first = (self.dealer + 1) % n
        # One card at a time from the player left of the dealer: the seat at
        # offset k gets cards k, k + n, k + 2n, ...
        self.hands = [[] for _ in range(n)]
        for offset in range(n):
            self.hands[(first + offset) % n] = sorted(cards[offset : HAND_SIZE * n : n])
        self.stock = cards[HAND_SIZE * n :][::-1]
        self.pile = []
        self._pile_names = []
        self.known = [[] for _ in range(n)]
        self._known_count = 0
        self.current = first
        self.phase = START
        self.turns_done = 0
        self.drawn = self.taken = -1
        self.emit("hand_start", hand=self.hand_number, dealer=self.dealer, first=first,
                  scores=list(self.totals))
        for seat in range(n):
            self.emit("deal", to=[seat], seat=seat, cards=card_names(self.hands[seat]))

    def _end_hand(self, summary: dict[str, Any], next_dealer: int) -> None:
        summary["hands"] = [card_names(h) for h in self.hands]
        summary["scores"] = list(self.totals)
        self.dealer = next_dealer
        summary["next_dealer"] = next_dealer
        self.last_hand = summary
        self.emit("hand_end", **summary)
        if max(self.totals) >= self.target:
            self._end_game("target")
        elif self.hand_number >= self.max_hands:
            self._end_game("max_hands")
        else:
            self._start_hand()

    def _end_game(self, reason: str) -> None:
        self.phase = OVER
        self.end_reason = reason
        self.emit("game_end", reason=reason, scores=list(self.totals), hands=self.hand_number)

    # -- decisions -------------------------------------------------------------
    def deciding_seats(self) -> tuple[int, ...]:
        return () if self.phase == OVER else (self.current,)

    def _legal_actions(self, seat: int) -> list[Action]:
        """Turn start: ``draw stock``, ``take discard`` (if the pile has a card),
        then every declaration (highest points first).  After drawing: a
        discard of any card but the one taken from the pile."""
        return self._start_actions() if self.phase == START else self._discard_actions()

    def _start_actions(self) -> list[Action]:
        actions = [DRAW_STOCK]
        if self.pile:
            actions.append(TAKE_DISCARD)
        for category, cards in declarations(self.hands[self.current]):
            actions.append(f"declare {category} {' '.join(card_names(cards))}")
        return actions

    def _discard_actions(self) -> list[Action]:
        return [_DISCARD_ACTION[c] for c in self.hands[self.current] if c != self.taken]

    def _apply(self, actions: Mapping[int, Action]) -> None:
        action = actions[self.current]
        if action == DRAW_STOCK:
            self._draw_stock()
        elif action == TAKE_DISCARD:
            self._take_discard()
        elif action.startswith("discard "):
            self._discard(CARD[action[8:]])
        else:  # "declare CATEGORY CARD..."
            _, category, *names = action.split()
            self._declare(category, tuple(CARD[name] for name in names))

    def _draw_stock(self) -> None:
        seat = self.current
        if not self.stock:
            self._reshuffle()
        card = self.stock.pop()
        self._add(seat, card)
        self.drawn = card
        self.phase = DISCARD
        self.emit("draw", seat=seat, source="stock", stock_size=len(self.stock))
        self.emit("drawn", to=[seat], seat=seat, card=NAMES[card])

    def _reshuffle(self) -> None:
        # More cards than hands hold always lie outside them (52 > 6 * 5 + 1).
        assert len(self.pile) > 1, "stock and discard pile cannot both be empty"
        top = self.pile.pop()
        self.stock = shuffled(self.pile, self.rng)
        self.pile = [top]
        self._pile_names = [NAMES[top]]
        self.emit("reshuffle", stock_size=len(self.stock))

    def _take_discard(self) -> None:
        seat = self.current
        card = self.pile.pop()
        self._pile_names.pop()
        self._add(seat, card)
        self.known[seat].append(card)
        self._known_count += 1
        self.known[seat].sort()
        self.taken = card
        self.phase = DISCARD
        self.emit("take", seat=seat, card=NAMES[card])

    def _add(self, seat: int, card: int) -> None:
        hand = self.hands[seat]
        hand.append(card)
        hand.sort()

    def _discard(self, card: int) -> None:
        seat = self.current
        self.hands[seat].remove(card)
        if card in self.known[seat]:
            self.known[seat].remove(card)
            self._known_count -= 1
        self.pile.append(card)
        self._pile_names.append(NAMES[card])
        self.emit("discard", seat=seat, card=NAMES[card])
        self.turns_done += 1
        self.drawn = self.taken = -1
        if self.turns_done >= self.max_turns:
            summary: dict[str, Any] = {
                "hand": self.hand_number, "reason": "turn_cap", "outcome": "no_result",
                "declarer": None, "category": None, "cards": [], "points": 0,
                "scorer": None, "scored": 0, "lay_off": None,
            }
            self._end_hand(summary, self.dealer)
            return
        self.current = (seat + 1) % self.num_players
        self.phase = START

    def _declare(self, category: str, cards: tuple[int, ...]) -> None:
        seat = self.current
        points = POINTS[category]
        self.emit("declare", seat=seat, category=category, cards=card_names(cards), points=points)
        result = resolve_declaration(seat, cards, points, self.hands)
        if result.scorer is not None:
            self.totals[result.scorer] += result.points
        summary: dict[str, Any] = {
            "hand": self.hand_number, "reason": "declared", "outcome": result.outcome,
            "declarer": seat, "category": category, "cards": card_names(cards),
            "points": points, "scorer": result.scorer, "scored": result.points,
            "lay_off": None if result.lay_off is None else result.lay_off.to_dict(),
        }
        self._end_hand(summary, seat if result.scorer is None else result.scorer)

    # -- views -------------------------------------------------------------------
    def _observation(self, seat: int | None) -> Observation:
        """What ``seat`` sees now; the fields are listed on the rules page.  A
        spectator (``None``) gets all but ``hand`` and ``drawn``."""
        over = self.phase == OVER
        obs: Observation = {
            "seat": seat,
            "num_players": self.num_players,
            "phase": _PHASE_NAMES[self.phase],
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "to_move": None if over else self.current,
            "turn": self.turns_done + 1,
            "max_turns": self.max_turns,
            "taken": NAMES[self.taken] if self.taken >= 0 else None,
            "discard_top": self._pile_names[-1] if self.pile else None,
            "discard_pile": self._pile_names[:],
            "stock_size": len(self.stock),
            "hand_sizes": [len(h) for h in self.hands],
            "known_cards": [[NAMES[c] for c in k] for k in self.known] if self._known_count
            else [[] for _ in self.hands],
            "scores": list(self.totals),
            "target": self.target,
            "max_hands": self.max_hands,
        }
        if seat is not None:
            mine = self.current == seat and not over
            obs["hand"] = [NAMES[c] for c in self.hands[seat]]
            obs["drawn"] = NAMES[self.drawn] if mine and self.drawn >= 0 else None
        return obs

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def _scores(self) -> list[float]:
        """Final points of each seat."""
        return [float(t) for t in self.totals]

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
