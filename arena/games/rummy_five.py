"""Rummy-five: draw-and-discard rummy with a 32-card two-suit deck (2-4 players).

Rules: ``seeds/rummy-five-and-octablitz.txt`` (first part) plus the rummy-five
section of ``RULINGS.md``; the bot-facing description, action grammar and
observation fields are in ``docs/rules/rummy-five.md``.

Internally a card is a *kind* index 0..13 (``NAMES[k]``): black s A B C J K L,
then red s A B C J K L.  That index order is also the canonical order of every
card list the game shows.  Hands are sorted lists of kinds; the stock is a list
whose last element is the top card.

Everything about what five cards make is pure and small, so it is memoised per
sorted tuple of kinds (:func:`shape_of`, :func:`waits_of`, pure functions under
``functools.cache``): legal actions and claim windows are look-ups, not searches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from math import comb
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
    ScoreOrder,
    State,
    new_event,
)

# -- cards --------------------------------------------------------------------
# Module tables are Final: compiled, a Final name is a C variable, any other
# module global a dict look-up at every use.

NAMES: Final[tuple[str, ...]] = tuple(s + r for s in cards.RUMMY_SUITS for r in cards.RUMMY_RANKS)
KIND: Final[dict[str, int]] = {name: k for k, name in enumerate(NAMES)}
NUM_KINDS: Final = len(NAMES)
COPIES: Final[tuple[int, ...]] = tuple(
    cards.RUMMY_COPIES[r] for _ in cards.RUMMY_SUITS for r in cards.RUMMY_RANKS
)
RANK_S: Final = 0
RANK_A: Final = 1
RANK_B: Final = 2
RANK_C: Final = 3
RANK_J: Final = 4
RANK_K: Final = 5
RANK_L: Final = 6
BLACK_L: Final = KIND["bL"]
RED_L: Final = KIND["rL"]
DECK: Final[tuple[str, ...]] = tuple(cards.rummy_deck())
#: The same deck as kinds: shuffling kinds deals the same cards.
DECK_KINDS: Final[tuple[int, ...]] = tuple(KIND[name] for name in DECK)

def rank(kind: int) -> int:
    """Rank index of a kind: 0 = s, 1 = A, ... 6 = L."""
    return kind % 7


def suit(kind: int) -> int:
    """Suit index of a kind: 0 = black, 1 = red."""
    return kind // 7


# -- special combinations -------------------------------------------------------

COVERT: Final = "covert"
FLUSH: Final = "flush"
MANEUVER: Final = "maneuver"
HAWKEYE: Final = "hawkeye"
AMBUSH: Final = "ambush"
LEGIO: Final = "legio"
TESTUDO: Final = "testudo"
WEDGE: Final = "wedge"
PHALANX: Final = "phalanx"
ROYALS: Final = "royals"
LIGHTNING: Final = "lightning"
#: Every special combination with its points, in the rulebook's order (the order
#: in which a win lists them).
SPECIAL_POINTS: Final[dict[str, int]] = {
    COVERT: 1, FLUSH: 1, MANEUVER: 1, HAWKEYE: 1, AMBUSH: 1, LEGIO: 2,
    TESTUDO: 2, WEDGE: 3, PHALANX: 6, ROYALS: 6, LIGHTNING: 6,
}


def _is_trio(a: int, b: int, c: int) -> bool:
    """Sorted kinds a <= b <= c form a Set (s-s-s one suit) or a Run (A-B-C or J-K-L one suit)."""
    if a == b == c:
        return rank(a) == RANK_S
    return b == a + 1 and c == a + 2 and rank(a) in (RANK_A, RANK_J)


def _without(key: tuple[int, ...], *drop: int) -> tuple[int, ...]:
    rest = list(key)
    for kind in drop:
        rest.remove(kind)
    return tuple(rest)


def _pair_trio(key: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """Every trio that completes ``key`` (5 sorted kinds) as a pair plus a trio."""
    trios = []
    pairs = {(k, k) for k in set(key) if key.count(k) >= 2}
    if BLACK_L in key and RED_L in key:
        pairs.add((BLACK_L, RED_L))
    for pair in pairs:
        a, b, c = _without(key, *pair)
        if _is_trio(a, b, c):
            trios.append((a, b, c))
    return trios


@dataclass(frozen=True, slots=True)
class Shape:
    """What five cards make, whoever holds them and however they were won.

    ``specials`` are the special combinations read from the cards alone
    (Flush, Maneuver, Legio, Testudo, Wedge, Phalanx); Royals is kept apart in
    ``royals`` because it is barred after one's own Run/Set call.
    """

    pair_trio: bool
    royals: bool
    specials: tuple[str, ...]

    def complete(self, royals_allowed: bool) -> bool:
        return self.pair_trio or (self.royals and royals_allowed)


def _compute_shape(key: tuple[int, ...]) -> Shape:
    trios = _pair_trio(key)
    first = key[0]
    one_suit = all(suit(k) == suit(first) for k in key)
    royals = one_suit and key == (first, first, first + 1, first + 1, first + 2) and (
        rank(first) == RANK_J
    )
    found: list[str] = []
    if trios or royals:
        if one_suit:
            found.append(FLUSH)
        if all(rank(k) != RANK_S for k in key):
            found.append(MANEUVER)
    if one_suit and rank(first) == RANK_S and key == (first,) * 3 + (first + 3,) * 2:
        found.append(LEGIO)
    if BLACK_L in key and RED_L in key:
        a, b, c = _without(key, BLACK_L, RED_L)
        # Both Ls are in the pair, so the trio is s-s-s or A-B-C, never J-K-L.
        if _is_trio(a, b, c):
            found.append(TESTUDO if rank(a) == RANK_S else WEDGE)
    if key == (first,) * 5 and rank(first) == RANK_S:
        found.append(PHALANX)
    return Shape(bool(trios), royals, tuple(found))


@cache
def shape_of(key: tuple[int, ...]) -> Shape:
    """The :class:`Shape` of five sorted kinds (memoised)."""
    return _compute_shape(key)


def _related(kind: int) -> int:
    """Bitmask of the kinds that can share a pair, a trio or Royals with ``kind``:
    itself, its run's other ranks (A-B-C, J-K-L of its suit), the other suit's L."""
    mask = 1 << kind
    if rank(kind) != RANK_S:
        low = kind - (rank(kind) - RANK_A) % 3  # the run's lowest kind
        mask |= 0b111 << low
    if kind in (BLACK_L, RED_L):
        mask |= 1 << BLACK_L | 1 << RED_L
    return mask


#: _RELATED[kind]: only these kinds can complete four cards holding ``kind``.
_RELATED: Final[tuple[int, ...]] = tuple(_related(k) for k in range(NUM_KINDS))


@cache
def waits_of(key: tuple[int, ...], royals_allowed: bool) -> tuple[int, int]:
    """For four sorted kinds: (bitmask of the kinds that would complete them,
    bitmask of those whose completed hand also holds a card-only special).

    A kind counts only if the deck composition has that many copies: the rulings'
    "some card kind that exists in the deck composition", whether or not copies
    are still unseen.  (Memoised.)"""
    kinds = special = 0
    candidates = 0
    for kind in key:
        candidates |= _RELATED[kind]
    for kind in range(NUM_KINDS):
        if not candidates >> kind & 1 or key.count(kind) >= COPIES[kind]:
            continue
        shape = shape_of(tuple(sorted((*key, kind))))
        if shape.complete(royals_allowed):
            kinds |= 1 << kind
            if shape.specials or (shape.royals and royals_allowed):
                special |= 1 << kind
    return kinds, special


def is_complete(hand: Sequence[str], royals_allowed: bool = True) -> bool:
    """Whether five named cards form a complete hand."""
    return shape_of(tuple(sorted(KIND[c] for c in hand))).complete(royals_allowed)


def completing_cards(hand: Sequence[str], royals_allowed: bool = True) -> list[str]:
    """The card kinds that would complete four named cards ([] = not one card away)."""
    mask = waits_of(tuple(sorted(KIND[c] for c in hand)), royals_allowed)[0]
    return [NAMES[k] for k in range(NUM_KINDS) if mask >> k & 1]


# -- actions ---------------------------------------------------------------------

PASS: Final = "pass"
CATCH: Final = "catch"
WIN: Final = "win"
DISCARD: Final[tuple[str, ...]] = tuple(f"discard {name}" for name in NAMES)
GO_DISCARD: Final[tuple[str, ...]] = tuple(f"go discard {name}" for name in NAMES)
#: The two hand cards that make a Run with a discarded kind (A-B-C, J-K-L).
RUN_PARTNERS: Final[dict[int, tuple[int, int]]] = {}
for _s in (0, 7):
    for _low in (RANK_A, RANK_J):
        _run = (_s + _low, _s + _low + 1, _s + _low + 2)
        for _k in _run:
            _a, _b = (x for x in _run if x != _k)
            RUN_PARTNERS[_k] = (_a, _b)
RUN_ACTION: Final = {k: f"run {NAMES[a]} {NAMES[b]}" for k, (a, b) in RUN_PARTNERS.items()}
SET_ACTION: Final = {k: f"set {NAMES[k]} {NAMES[k]}" for k in (KIND["bs"], KIND["rs"])}

#: Action string -> (verb, kind); "win", "pass" and "catch" carry kind -1.
_PARSE: Final[dict[str, tuple[str, int]]] = {PASS: (PASS, -1), CATCH: (CATCH, -1), WIN: (WIN, -1)}
for _k in range(NUM_KINDS):
    _PARSE[DISCARD[_k]] = ("discard", _k)
    _PARSE[GO_DISCARD[_k]] = ("go", _k)
for _k, _text in RUN_ACTION.items():
    _PARSE[_text] = ("run", _k)
for _k, _text in SET_ACTION.items():
    _PARSE[_text] = ("set", _k)

#: Verbs of claim-window answers.
_WINDOW_VERBS: Final = frozenset((PASS, CATCH, "run", "set"))

# Phases.
TURN: Final = 0
CLAIM: Final = 1
CLAIM_DISCARD: Final = 2
OVER: Final = 3
PHASE_NAMES: Final = ("turn", "claim", "claim_discard", "over")


# -- the game ----------------------------------------------------------------------


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class RummyFive(Game):
    """Rummy-five for 2-4 players; scores are chips, higher is better."""

    name: ClassVar[str] = "rummy-five"
    field_labels: ClassVar[Mapping[str, str]] = {
        "dealer_count": "Deals by this dealer",
        "exposed": "Exposed",
        "discards": "Discards",
        "go": "Gone out",
        "called": "Called",
        "turns_by_seat": "Turns taken",
        "pot": "Pot",
        "last_discard": "Last discard",
        "catch_barred": "Barred from catching",
    }
    seat_fields: ClassVar[tuple[str, ...]] = ("chips", "exposed", "discards", "go", "called",
                                              "turns_by_seat")
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    score_order: ClassVar[ScoreOrder] = "higher"
    option_specs: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "deals",
            "int",
            0,
            "deals in a game, 0 = 2 x number of players; the game also ends after a "
            "deal that leaves a player with no chips (<= 0)",
            minimum=0,
            maximum=10_000,
        ),
        OptionSpec("chips", "int", 30, "chips each player starts with", minimum=1,
                   maximum=1_000_000),
    )

    def deck(self) -> list[str]:
        return list(DECK)

    @classmethod
    def public_decisions(cls, step: Sequence[Sequence[Any]]) -> list[tuple[int, Action]]:
        """Every decision except claim-window answers: of a window only the
        claim that won is public (the ``claim`` or ``win`` event announces it).
        A ``pass`` would tell that the seat held what a claim needs."""
        decisions = [(int(seat), str(action)) for seat, action in step]
        if not all(_PARSE.get(action, ("", -1))[0] in _WINDOW_VERBS for _, action in decisions):
            return decisions
        # Seats are in clockwise priority order: a Catch beats Run/Set, then the nearest.
        catches = [d for d in decisions if d[1] == CATCH]
        return (catches or [d for d in decisions if d[1] != PASS])[:1]

    def total_deals(self) -> int:
        """The number of deals the game plays unless a player runs out of chips."""
        deals: int = self.options["deals"]
        return deals or 2 * self.num_players

    def new_state(self, seed: int) -> RummyFiveState:
        return RummyFiveState(self, seed)


@cache
def _names(kinds: tuple[int, ...]) -> tuple[str, ...]:
    """Names of a sorted tuple of kinds (memoised: hands repeat)."""
    return tuple(NAMES[k] for k in kinds)


# Shared, immutable Event objects for the frequent events (draws and discards):
# building a frozen Event is a large share of a turn's cost, and these repeat.
_DrawEvents = tuple[tuple[tuple[Event, tuple[Event, ...]], ...], ...]


def _draw_events(players: int) -> _DrawEvents:
    """``_draw_events(n)[seat][left]``: the draw event the other seats see when
    ``seat`` draws leaving ``left`` cards, and by kind drawn the one the drawer sees."""
    return tuple(
        tuple((Event("draw", {"seat": seat, "deck_size": left},
                     tuple(s for s in range(players) if s != seat)),
               tuple(Event("draw", {"seat": seat, "deck_size": left, "card": name}, (seat,))
                     for name in NAMES))
              for left in range(len(DECK)))
        for seat in range(players))


#: _DRAW_EVENTS[n] is _draw_events(n), made once (empty below the minimum of players).
_DRAW_EVENTS: Final[tuple[_DrawEvents, ...]] = tuple(
    _draw_events(n) if n >= RummyFive.min_players else ()
    for n in range(RummyFive.max_players + 1))


#: _DISCARD_EVENTS[seat][go][kind]: the public discard event.
_DISCARD_EVENTS: Final[tuple[tuple[tuple[Event, ...], ...], ...]] = tuple(
    tuple(tuple(Event("discard", {"seat": seat, "card": NAMES[kind], "go": go})
                for kind in range(NUM_KINDS)) for go in (False, True))
    for seat in range(RummyFive.max_players))


#: _SEAT_KIND[seat][kind] is (seat, kind): a discard's last_discard, not a tuple made per discard.
_SEAT_KIND: Final[tuple[tuple[tuple[int, int], ...], ...]] = tuple(
    tuple((seat, kind) for kind in range(NUM_KINDS)) for seat in range(RummyFive.max_players))

_WIN_BIT: Final = 1 << NUM_KINDS


def _turn_mask(hand: list[int]) -> int:
    """For the five sorted kinds of a free player's turn: bit ``k`` set for each
    kind whose Go discard leaves four cards one card away, :data:`_WIN_BIT` when
    they win.  (Made once per four-card node and kind drawn, from the int-keyed
    memos: the four cards left are a node, whose waits are known.)"""
    mask = _WIN_BIT if _shape_of_list(hand).complete(True) else 0
    last = -1
    for i in range(len(hand)):
        kind = hand[i]
        if kind != last and _FOURS[_four_id(hand[:i] + hand[i + 1 :])].waits[0]:
            mask |= 1 << kind
        last = kind
    return mask


#: The turn's actions of a player who called Go (not Run/Set) and drew a kind:
#: it discards the drawn card, or wins (_GO_WIN_TURN) when its cards are complete.
_GO_TURN: Final[tuple[tuple[Action, ...], ...]] = tuple((DISCARD[k],) for k in range(NUM_KINDS))
_GO_WIN_TURN: Final[tuple[tuple[Action, ...], ...]] = tuple(
    (WIN, DISCARD[k]) for k in range(NUM_KINDS))


def _free_turn(hand: list[int], drawn: int, mask: int) -> tuple[Action, ...]:
    """The turn's actions of a player who called neither Go nor Run/Set (it
    always has Covert, so "win" depends on the cards alone), from the five
    sorted kinds it holds and their :func:`_turn_mask`."""
    acts = [WIN, DISCARD[drawn]] if mask & _WIN_BIT else [DISCARD[drawn]]
    last = -1
    for kind in hand:  # sorted: each distinct kind once, ascending
        if kind != last and kind != drawn:
            acts.append(DISCARD[kind])
        last = kind
    last = -1
    for kind in hand:
        if kind != last and mask >> kind & 1:
            acts.append(GO_DISCARD[kind])
        last = kind
    return tuple(acts)


@cache
def _call_kinds(hand: tuple[int, ...]) -> int:
    """Bitmask of the discarded kinds four concealed kinds could call a Set or
    a Run on (a Run only from the next seat: checked when a window opens)."""
    kinds = 0
    for kind, (a, b) in RUN_PARTNERS.items():
        if a in hand and b in hand:
            kinds |= 1 << kind
    for kind in SET_ACTION:
        if hand.count(kind) >= 2:
            kinds |= 1 << kind
    return kinds


def _hand_key(hand: list[int]) -> int:
    """A sorted hand (at most 5 kinds) as one int, 4 bits a kind."""
    key = len(hand)
    for kind in hand:
        key = key << 4 | kind
    return key


# -- hands of four --------------------------------------------------------------
# A free player holds four concealed cards between its turns.  What four cards
# allow is memoised in _Four nodes, kept in a module list and named by their
# index (a state holds only ints, so clones share them); a node also keeps the
# _turn_mask of each draw.  The five-card hand of a turn is not memoised: there
# are some 25,000 of them, and a table that size costs more in cache misses
# (compiled) than making the turn's names and actions afresh from small tables.


class _Four:
    """Four sorted concealed kinds of a free player (no Run/Set call)."""

    def __init__(self, hand: tuple[int, ...]) -> None:
        self.waits = waits_of(hand, True)
        #: The kinds it could claim if discarded (a Catch or a call).
        self.claimable: int = self.waits[0] | _call_kinds(hand)
        self.names = _names(hand)
        #: By kind drawn: the _turn_mask of the five cards (-1: not yet known).
        self.turns = [-1] * NUM_KINDS


def _binomials(k: int) -> tuple[int, ...]:
    """C(x, k) for x = 0 .. NUM_KINDS + 2."""
    return tuple(comb(x, k) for x in range(NUM_KINDS + 3))


# Four sorted kinds a <= b <= c <= d, as a < b+1 < c+2 < d+3, are named by their
# rank in the combinatorial number system: no hashing, four reads of small
# tables that stay in the CPU's cache (a dict look-up by hand key, or an edge
# table per node, costs more in cache misses, compiled).
_C1: Final = _binomials(1)
_C2: Final = _binomials(2)
_C3: Final = _binomials(3)
_C4: Final = _binomials(4)
#: Stands for a node not made yet (a real node: the list keeps one type).
_UNMADE: Final = _Four((0, 1, 2, 3))
#: By rank of four sorted kinds (_four_id): their node, made on first use.
_FOURS: Final[list[_Four]] = [_UNMADE] * comb(NUM_KINDS + 3, 4)


def _four_id(hand: list[int]) -> int:
    """The index in _FOURS of four sorted kinds (a node made on first use)."""
    found = _C1[hand[0]] + _C2[hand[1] + 1] + _C3[hand[2] + 2] + _C4[hand[3] + 3]
    if _FOURS[found] is _UNMADE:
        _FOURS[found] = _Four(tuple(hand))
    return found


_SHAPES: Final[dict[int, Shape]] = {}  # _hand_key -> shape_of


def _shape_of_list(hand: list[int]) -> Shape:
    """:func:`shape_of` five sorted kinds, memoised by :func:`_hand_key` (an
    int key: cheaper than shape_of's tuple key, compiled)."""
    key = _hand_key(hand)
    found = _SHAPES.get(key)
    if found is None:
        found = _SHAPES[key] = shape_of(tuple(hand))
    return found


def _half_names(shift: int) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(NAMES[k + shift] for k in range(7) if bits >> k & 1)
                 for bits in range(128))


#: Names of the kinds set in 7 bits of a mask, by those bits: the black kinds
#: (bits 0-6) and the red ones (bits 7-13).  Two small tables stay in the CPU's
#: cache, where a table of every 14-bit mask would not.
_BLACK_NAMES: Final = _half_names(0)
_RED_NAMES: Final = _half_names(7)


def _kinds_names(mask: int) -> tuple[str, ...]:
    """Names of the kinds set in a bitmask, in canonical order."""
    return _BLACK_NAMES[mask & 127] + _RED_NAMES[mask >> 7]


def _sizes(hands: list[list[int]]) -> tuple[int, ...]:
    """The number of cards in each hand (compiled, a loop: ``map(len, ...)``
    calls ``len`` through the generic call protocol)."""
    return tuple([len(hand) for hand in hands])


#: _OTHERS[n][seat]: the other seats of an n-player game, in seat order;
#: _AFTER[n][seat]: the same clockwise from the one after ``seat``.
_OTHERS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(tuple(s for s in range(n) if s != seat) for seat in range(n))
    for n in range(RummyFive.max_players + 1))
_AFTER: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(tuple((seat + k) % n for k in range(1, n)) for seat in range(n))
    for n in range(RummyFive.max_players + 1))

#: Observation fields a spectator does not get.
_PRIVATE: Final = ("hand", "drawn", "catch_barred")


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class RummyFiveState(State):
    """A rummy-five game in progress (see the module docstring for the card encoding).

    The public part of the observation is kept in :attr:`_public`, a dict of
    immutable values (tuples) that the moves update and each observation copies.
    """

    def __init__(self, game: RummyFive, seed: int) -> None:
        super().__init__(game, seed)
        n = self.num_players
        self.max_turns: int = game.options["max_turns"]
        self.deals_total = game.total_deals()
        self.chips = [int(game.options["chips"])] * n
        self.pot = 0
        self.deal_no = 0
        self.dealer = 0
        self.dealer_count = 1
        self._others = _OTHERS[n]
        #: The other seats clockwise from the one after ``seat`` (claim priority).
        self._after = _AFTER[n]
        self.last_hands: list[list[str]] = []
        self.last_exposed: list[list[str]] = []
        self._public: Observation = {}  # filled by _refresh_public, then kept
        self._start_deal()  # which sets the deal's fields

    def _reset_deal_fields(self, hands: list[list[int]], deck: list[int]) -> None:
        """A new deal's fields: ``hands`` as dealt (sorted), the rest in ``deck``."""
        n = self.num_players
        self.deck = deck
        self.hands = hands
        #: The names of each hand, kept with it (what the observation shows).
        self.hand_names: list[tuple[str, ...]] = [()] * n
        #: The turn's actions of the seat that just drew, unless it called a
        #: Run/Set (_free_turn, _GO_TURN: see _legal_actions).
        self._turn_actions: tuple[Action, ...] = ()
        #: Each free seat's four concealed cards, as an index in _FOURS.
        self._fours = [-1] * n
        self.trios: list[list[int]] = [[] for _ in range(n)]
        #: Face-up discards per seat, by name (only ever shown or popped).
        self.piles: list[tuple[str, ...]] = [()] * n
        self.trio_names: list[tuple[str, ...]] = [()] * n
        #: Kinds each seat discarded this deal: it may never Catch them.
        self.discarded = [0] * n
        #: Kinds each seat passed a possible Catch on, until its next discard.
        self.passed = [0] * n
        #: waits_of() of each seat's four cards, kept while it holds four.
        self.waits = [(0, 0)] * n
        #: Kinds each seat might claim (Catch or call) if discarded: a quick
        #: test that lets most discards skip the claim window.
        self.claimable = [0] * n
        self.went_go = [False] * n
        self.called = [False] * n
        self.any_called = False
        #: Stock draws per seat in this deal (Lightning: a win on one's first).
        self.turns_by_seat = [0] * n
        #: Stock draws in this deal (the turn cap counts them).
        self.turn_number = 0
        self.phase = TURN
        self.current = self.dealer
        self.drawn = -1
        self.last_discard: tuple[int, int] | None = None
        self._deciding: tuple[int, ...] = ()

    # -- the State interface ---------------------------------------------------

    def deciding_seats(self) -> tuple[int, ...]:
        return self._deciding

    def _legal_actions(self, seat: int) -> Sequence[Action]:
        """Legal actions of a deciding seat; see the rules page."""
        if self.phase == TURN:
            if self.called[seat]:
                return self._called_turn_actions(seat)
            return self._turn_actions
        if self.phase == CLAIM:
            return self._window_actions(seat)
        return [DISCARD[k] for k in sorted(set(self.hands[seat]))]  # CLAIM_DISCARD

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def _scores(self) -> list[float]:
        """Final chips of each seat (the pot left on the table belongs to nobody)."""
        return list(self.chips)

    def reveal(self) -> dict[str, Any]:
        """Final chips and pot, deals played, and the last deal's revealed hands."""
        return {
            "chips": list(self.chips),
            "pot": self.pot,
            "deals_played": self.deal_no,
            "hands": [list(h) for h in self.last_hands],
            "exposed": [list(t) for t in self.last_exposed],
        }

    def _refresh_public(self) -> None:
        """Set every public field of the observation (the rules page's, with
        list fields as tuples), in place: once filled, the dict keeps its keys
        in order and its table never grows.  The envelope and the private
        fields are placeholders, set per observation, so that filling them in
        never grows the copied dict."""
        public = self._public
        public["game"] = self.game.name
        public["seat"] = None
        public["players"] = self.num_players
        public["to_move"] = ()
        public["phase"] = PHASE_NAMES[self.phase]
        public["deal"] = self.deal_no
        public["deals"] = self.deals_total
        public["dealer"] = self.dealer
        public["dealer_count"] = self.dealer_count
        public["turn_number"] = self.turn_number
        public["max_turns"] = self.max_turns
        public["deck_size"] = len(self.deck)
        public["hand_sizes"] = _sizes(self.hands)
        public["exposed"] = tuple(self.trio_names)
        public["discards"] = tuple(self.piles)
        public["go"] = tuple(self.went_go)
        public["called"] = tuple(self.called)
        public["turns_by_seat"] = tuple(self.turns_by_seat)
        public["chips"] = tuple(self.chips)
        public["pot"] = self.pot
        public["last_discard"] = None
        public["hand"] = ()
        public["drawn"] = None
        public["catch_barred"] = ()

    _private_to_move = True

    def _to_move_seen_by(self, seat: int | None) -> list[int]:
        """A claim window asks only the seats that could claim the discard, so
        who else is asked is private: a seat sees only itself, a spectator no one."""
        if self.phase != CLAIM:
            return list(self._deciding)
        return [seat] if seat in self._deciding else []

    def _observation(self, seat: int | None) -> Observation:
        """The game's fields of the rules page (the base adds the envelope).  A
        spectator (``None``) gets all but ``hand``, ``drawn`` and
        ``catch_barred`` (the Catches a seat passed would tell what it holds)."""
        obs = self._public.copy()
        last = self.last_discard
        if last is not None:
            obs["last_discard"] = {"seat": last[0], "card": NAMES[last[1]]}
        if seat is None:
            for key in _PRIVATE:
                del obs[key]
        else:
            obs["hand"] = self.hand_names[seat]
            if seat == self.current and self.phase == TURN:
                obs["drawn"] = NAMES[self.drawn]
            obs["catch_barred"] = _kinds_names(self.discarded[seat] | self.passed[seat])
        return obs

    def _apply(self, actions: Mapping[int, Action]) -> None:
        if self.phase == CLAIM:
            # Every way out of a window updates the public fields it changes.
            self._resolve_window(actions)
            return
        seat = self.current
        verb, kind = _PARSE[actions[seat]]
        if verb == WIN:
            self._win(seat, self.drawn, None)
        else:
            self._discard(seat, kind, verb == "go")

    #: Made once (the seats around each seat), or set whole at the end of a
    #: deal (and held by its event): never changed in place.
    _clone_shares = frozenset({"_others", "_after", "last_hands", "last_exposed"})

    def _copy_into(self, other: RummyFiveState) -> None:
        """Field by field (the generic copy costs several times more); every
        attribute set in ``__init__`` appears here (test_contract checks)."""
        other.max_turns = self.max_turns
        other.deals_total = self.deals_total
        other.chips = self.chips[:]
        other.pot = self.pot
        other.deal_no = self.deal_no
        other.dealer = self.dealer
        other.dealer_count = self.dealer_count
        other._others = self._others
        other._after = self._after
        other.last_hands = self.last_hands
        other.last_exposed = self.last_exposed
        other.deck = self.deck[:]
        other.hands = [hand[:] for hand in self.hands]
        other.hand_names = self.hand_names[:]
        other._turn_actions = self._turn_actions
        other._fours = self._fours[:]
        other.trios = [trio[:] for trio in self.trios]
        other.piles = self.piles[:]
        other.trio_names = self.trio_names[:]
        other.discarded = self.discarded[:]
        other.passed = self.passed[:]
        other.waits = self.waits[:]
        other.claimable = self.claimable[:]
        other.went_go = self.went_go[:]
        other.called = self.called[:]
        other.any_called = self.any_called
        other.turns_by_seat = self.turns_by_seat[:]
        other.turn_number = self.turn_number
        other.phase = self.phase
        other.current = self.current
        other.drawn = self.drawn
        other.last_discard = self.last_discard
        other._deciding = self._deciding
        other._public = self._public.copy()  # tuples and numbers, updated key by key

    # -- helpers for tests and tools ---------------------------------------------

    def card_census(self) -> dict[str, list[str]]:
        """Where every card is: "deck" (top card last), "hand N", "discards N",
        "exposed N".  Together they always hold the 32 cards exactly."""
        out = {"deck": [NAMES[k] for k in self.deck]}
        for seat in range(self.num_players):
            out[f"hand {seat}"] = [NAMES[k] for k in self.hands[seat]]
            out[f"discards {seat}"] = list(self.piles[seat])
            out[f"exposed {seat}"] = [NAMES[k] for k in self.trios[seat]]
        return out

    def one_card_away(self, seat: int) -> bool:
        """Whether the seat's four cards (exposed trio included) are one card away;
        only meaningful while it holds four cards (outside its own turn)."""
        return bool(waits_of(self._key(seat), not self.called[seat])[0])

    # -- deals and turns ---------------------------------------------------------

    def _start_deal(self) -> None:
        stacked = self.game.options["deck"] if self.deal_no == 0 else None
        order = ([KIND[name] for name in stacked] if stacked is not None
                 else cards.shuffled(DECK_KINDS, self.rng))
        self.deal_no += 1
        hands, deck = cards.deal(order, self.num_players, 4, self.dealer)
        for hand in hands:
            hand.sort()
        self._reset_deal_fields(hands, deck)
        for seat in range(self.num_players):
            self._set_four(seat, _four_id(hands[seat]))
        events = self.events
        events.append(new_event("hand_start", {
            "deal": self.deal_no, "dealer": self.dealer, "dealer_count": self.dealer_count,
            "chips": list(self.chips), "pot": self.pot, "deck_size": len(self.deck)}))
        for seat, hand in enumerate(self.hands):
            events.append(new_event("deal", {"seat": seat, "cards": [NAMES[k] for k in hand]},
                                 (seat,)))
        self._refresh_public()
        self._begin_turn(self.dealer)

    def _begin_turn(self, seat: int) -> None:
        deck = self.deck
        if not deck:
            self._end_in_draw("deck")
            return
        if self.turn_number >= self.max_turns:
            self._end_in_draw("turn_cap")
            return
        kind = deck.pop()
        hand = self.hands[seat]
        cards.insert_sorted(hand, kind)
        if len(hand) == 5:  # a free seat: the tuple built directly (compiled: no list)
            self.hand_names[seat] = (NAMES[hand[0]], NAMES[hand[1]], NAMES[hand[2]],
                                     NAMES[hand[3]], NAMES[hand[4]])
        else:
            self.hand_names[seat] = tuple([NAMES[k] for k in hand])
        if not self.called[seat]:  # else _called_turn_actions
            node = _FOURS[self._fours[seat]]
            mask = node.turns[kind]
            if mask < 0:
                mask = node.turns[kind] = _turn_mask(hand)
            if not self.went_go[seat]:
                self._turn_actions = _free_turn(hand, kind, mask)
            else:  # it never called, so it has Covert: only the cards decide a win
                self._turn_actions = (_GO_WIN_TURN if mask & _WIN_BIT else _GO_TURN)[kind]
        self.turn_number += 1
        self.turns_by_seat[seat] += 1
        self.phase, self.current, self.drawn = TURN, seat, kind
        left = len(deck)
        others_see, drawer_sees = _DRAW_EVENTS[self.num_players][seat][left]
        events = self.events
        events.append(others_see)
        events.append(drawer_sees[kind])
        self._deciding = SEAT_ONLY[seat]
        public = self._public
        public["phase"] = "turn"
        public["turn_number"] = self.turn_number
        public["deck_size"] = left
        public["turns_by_seat"] = tuple(self.turns_by_seat)
        public["hand_sizes"] = _sizes(self.hands)

    def _set_four(self, seat: int, four: int) -> None:
        """The free seat's four concealed cards are now _FOURS[four]."""
        self._fours[seat] = four
        node = _FOURS[four]
        self.waits[seat], self.claimable[seat] = node.waits, node.claimable
        self.hand_names[seat] = node.names

    def _called_turn_actions(self, seat: int) -> list[Action]:
        """The turn's actions of a player who called a Run/Set (never Go)."""
        kind = self.drawn
        # Two concealed cards: the drawn one first, then the other if different.
        other = [DISCARD[k] for k in self.hands[seat] if k != kind]
        acts = [DISCARD[kind], other[0]] if other else [DISCARD[kind]]
        if self._can_self_draw(seat):
            acts.insert(0, WIN)
        return acts

    def _key(self, seat: int) -> tuple[int, ...]:
        """Sorted kinds of the seat's whole hand: concealed cards plus exposed trio."""
        if self.trios[seat]:
            return tuple(sorted(self.hands[seat] + self.trios[seat]))
        return tuple(self.hands[seat])

    def _can_self_draw(self, seat: int) -> bool:
        called = self.called[seat]
        hand = self.hands[seat]
        shape = _shape_of_list(sorted(hand + self.trios[seat]) if self.trios[seat] else hand)
        if not shape.complete(not called):
            return False
        # A player who called no Run/Set always has Covert, so only callers need more.
        return (not called or bool(shape.specials) or rank(self.drawn) in (RANK_A, RANK_B)
                or not self.deck)

    def _discard(self, seat: int, kind: int, go: bool) -> None:
        hand = self.hands[seat]
        hand.remove(kind)
        public = self._public
        if go:
            self.went_go[seat] = True
            self.chips[seat] -= 1
            self.pot += 1
            public["go"] = tuple(self.went_go)
            public["chips"] = tuple(self.chips)
            public["pot"] = self.pot
        if self.called[seat]:
            self.waits[seat] = waits = waits_of(self._key(seat), False)
            self.claimable[seat] = waits[0]
            self.hand_names[seat] = _names(tuple(hand))
        else:
            self._set_four(seat, _four_id(hand))
            if go:
                self.claimable[seat] = self.waits[seat][0]
        self.piles[seat] += (NAMES[kind],)
        self.discarded[seat] |= 1 << kind
        self.passed[seat] = 0  # its own turn ends: passed Catches are allowed again
        self.drawn = -1
        self.last_discard = _SEAT_KIND[seat][kind]
        self.events.append(_DISCARD_EVENTS[seat][go][kind])
        public["discards"] = tuple(self.piles)
        self._open_window(seat, kind)  # which updates the hand sizes

    # -- claim windows -------------------------------------------------------------

    def _open_window(self, discarder: int, kind: int) -> None:
        bit = 1 << kind
        after = self._after[discarder]
        claimable = self.claimable
        for seat in after:
            if claimable[seat] & bit:
                break
        else:  # nobody could claim it: the next turn
            self._begin_turn(after[0])
            return
        waits, went_go, called = self.waits, self.went_go, self.called
        # Anyone may call a Set on an s, only the next seat a Run on another rank.
        callers = after if rank(kind) == RANK_S else after[:1]
        deciding = tuple(
            seat for seat in after
            if (waits[seat][0] & bit and self._can_catch(seat, kind))
            or (seat in callers and not went_go[seat] and not called[seat]
                and self._call(seat, discarder, kind))
        )
        if deciding:
            self.phase = CLAIM
            self._deciding = deciding
            public = self._public
            public["phase"] = PHASE_NAMES[CLAIM]
            public["hand_sizes"] = _sizes(self.hands)
        else:
            self._begin_turn(after[0])

    def _can_catch(self, seat: int, kind: int) -> bool:
        """Whether ``seat`` may Catch the discarded ``kind`` to win."""
        bit = 1 << kind
        kinds, special = self.waits[seat]
        if not kinds & bit or (self.discarded[seat] | self.passed[seat]) & bit:
            return False
        # Hawkeye (A or B) and Ambush (the deck is out) make any completion worth a point.
        return (self.went_go[seat] or bool(special & bit)
                or rank(kind) in (RANK_A, RANK_B) or not self.deck)

    def _call(self, seat: int, discarder: int, kind: int) -> Action:
        """The Run/Set call ``seat`` may make on the discarded ``kind`` ("" = none)."""
        if self.went_go[seat] or self.called[seat]:
            return ""
        hand = self.hands[seat]
        if rank(kind) == RANK_S:
            return SET_ACTION[kind] if hand.count(kind) >= 2 else ""
        if seat != (discarder + 1) % self.num_players:
            return ""  # only the next seat may call a Run
        a, b = RUN_PARTNERS[kind]
        return RUN_ACTION[kind] if a in hand and b in hand else ""

    def _window_actions(self, seat: int) -> list[Action]:
        """The answers of a seat deciding in the open claim window."""
        discarder, kind = self.last_discard or (-1, -1)
        acts = [PASS, CATCH] if self._can_catch(seat, kind) else [PASS]
        call = self._call(seat, discarder, kind)
        if call:
            acts.append(call)
        return acts

    def _resolve_window(self, actions: Mapping[int, Action]) -> None:
        discarder, kind = self.last_discard or (-1, -1)
        deciding = self._deciding  # clockwise from the discarder
        could_catch = [self._can_catch(seat, kind) for seat in deciding]
        catcher = caller = -1
        for i, seat in enumerate(deciding):  # compiled: zip(strict=True) is a generic call
            could = could_catch[i]
            action = actions[seat]
            if action == CATCH:
                if catcher < 0:
                    catcher = seat
            else:
                if could:
                    self.passed[seat] |= 1 << kind
                if action != PASS and caller < 0:
                    caller = seat
        if catcher >= 0:
            self.piles[discarder] = self.piles[discarder][:-1]
            hand = self.hands[catcher]
            cards.insert_sorted(hand, kind)
            self.hand_names[catcher] = _names(tuple(hand))
            self._win(catcher, kind, discarder)
        elif caller >= 0:
            self._claim_trio(caller, _PARSE[actions[caller]][0], discarder, kind)
        else:
            self._begin_turn((discarder + 1) % self.num_players)

    def _claim_trio(self, seat: int, call: str, discarder: int, kind: int) -> None:
        self.piles[discarder] = self.piles[discarder][:-1]
        hand = self.hands[seat]
        used = (kind, kind) if call == "set" else RUN_PARTNERS[kind]
        for k in used:
            hand.remove(k)
        self.hand_names[seat] = _names(tuple(hand))
        self.trios[seat] = sorted((kind, *used))
        self.trio_names[seat] = _names(tuple(self.trios[seat]))
        self.called[seat] = self.any_called = True
        self.events.append(new_event("claim", {"seat": seat, "call": call, "card": NAMES[kind],
                                            "source": discarder,
                                            "cards": [NAMES[k] for k in used]}))
        self.phase, self.current, self.drawn = CLAIM_DISCARD, seat, -1
        self._deciding = SEAT_ONLY[seat]
        self._refresh_public()

    # -- the end of a deal -----------------------------------------------------------

    def _win_specials(self, seat: int, card: int, self_draw: bool) -> list[str]:
        """Special combinations of the seat's complete hand won with ``card``, in rulebook order."""
        called = self.called[seat]
        shape = shape_of(self._key(seat))
        found = set(shape.specials)
        if self_draw and not called:
            found.add(COVERT)
        if rank(card) in (RANK_A, RANK_B):
            found.add(HAWKEYE)
        if not self.deck:
            found.add(AMBUSH)
        if shape.royals and not called:
            found.add(ROYALS)
        if self_draw and self.turns_by_seat[seat] == 1 and not self.any_called:
            found.add(LIGHTNING)
        return [name for name in SPECIAL_POINTS if name in found]

    def _win(self, winner: int, card: int, discarder: int | None) -> None:
        n = self.num_players
        self_draw = discarder is None
        how = "self-draw" if self_draw else "catch"
        self.events.append(new_event("win", {"seat": winner, "how": how, "card": NAMES[card],
                                          "source": discarder}))
        specials = self._win_specials(winner, card, self_draw)
        go_points = 1 if self.went_go[winner] else 0
        special_points = sum(SPECIAL_POINTS[s] for s in specials)
        dealer_points = self.dealer_count if winner == self.dealer else 0
        total = go_points + special_points + dealer_points
        pays = [0] * n
        if discarder is not None:
            pays[discarder] = total
        else:
            share = -(-total // (n - 1))  # ceil(total / (n - 1))
            for seat in self._others[winner]:
                pays[seat] = share
        if self.dealer != winner:
            pays[self.dealer] += 1
        pot_won, self.pot = self.pot, 0
        change = [-p for p in pays]
        change[winner] = pot_won + sum(pays)
        points = {"go": go_points, "specials": special_points, "dealer": dealer_points,
                  "total": total}
        self._settle("win", how, winner, change, pot_won, {
            "points": points,
            "specials": [{"name": s, "points": SPECIAL_POINTS[s]} for s in specials]})
        if winner == self.dealer:
            self.dealer_count += 1
        else:
            self.dealer, self.dealer_count = (self.dealer + 1) % n, 1
        self._next_deal()

    def _end_in_draw(self, reason: str) -> None:
        # Every seat holds four cards (no one has drawn), and self.waits keeps
        # their waits_of: one_card_away without building and hashing tuple keys.
        one_away = [bool(waits[0]) for waits in self.waits]
        change = [0 if ok else -1 for ok in one_away]
        self.pot -= sum(change)
        self._settle("draw", reason, None, change, 0, {"one_away": one_away})
        self.dealer_count += 1
        self._next_deal()

    def _settle(self, result: str, reason: str, winner: int | None, change: list[int],
                pot_won: int, extra: dict[str, Any]) -> None:
        """Pay ``change`` and record the deal's ``hand_end`` (its fields, then ``extra``)."""
        for seat, delta in enumerate(change):
            self.chips[seat] += delta
        self.last_hands = [[NAMES[k] for k in h] for h in self.hands]
        self.last_exposed = [list(t) for t in self.trio_names]
        self.phase, self._deciding = OVER, ()
        data: dict[str, Any] = {
            "deal": self.deal_no, "result": result, "reason": reason, "winner": winner,
            "hands": self.last_hands, "exposed": self.last_exposed, "go": list(self.went_go),
            "pot_won": pot_won, "payments": change, "chips": list(self.chips), "pot": self.pot}
        data.update(extra)
        self.events.append(new_event("hand_end", data))

    def _next_deal(self) -> None:
        if self.deal_no >= self.deals_total or min(self.chips) <= 0:
            self.emit("game_end", chips=list(self.chips), pot=self.pot,
                      deals_played=self.deal_no)
            self._refresh_public()
            return
        self._start_deal()


GAME = RummyFive
