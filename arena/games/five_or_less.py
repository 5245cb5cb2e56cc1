"""Five-or-less: shed points, end the hand when you are lowest (``seeds/five-or-less.txt``).

Rules are the rulebook plus RULINGS "five-or-less"; the bot-facing description,
action grammar and observation fields are in ``docs/rules/five-or-less.md``.

A hand goes: deal 5 cards each; the *pre-call window* (every player in turn
order is asked; one whose total is <= 15 may end the hand before the first
turn, the others may only pass, so being asked reveals nothing); then turns.
A turn is two decisions: ``call`` or a ``drop``, then a ``draw`` (from the
stack or from the previous player's drop).  Running totals are kept across
hands; a player reaching ``limit`` is eliminated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce
from itertools import combinations
from operator import or_
from sys import intern
from typing import Any, ClassVar, Final, NamedTuple

from mypy_extensions import mypyc_attr

from arena.games.base import (
    SEAT_ONLY,
    Action,
    Event,
    Game,
    Observation,
    OptionSpec,
    State,
    elimination_places,
    with_room,
)
from arena.games.cards import (
    RANK_ORDINAL,
    RANKS,
    SUITS,
    canonical,
    deal,
    first_hand_deck,
    insert_canonical,
    shuffled,
    standard_deck,
)

# Final: compiled, a Final constant is a C value, any other global a dict lookup.
HAND_SIZE: Final = 5
MAX_PLAYERS: Final = 8
#: Highest total that may end the hand before the first turn.
PRECALL_MAX: Final = 15
#: Highest total that may end the hand at the start of a turn (``call_below_five``: 4).
CALL_MAX: Final = 5
#: Penalty added to a caller who is not strictly lowest.
CALL_PENALTY: Final = 20
#: Minimum length of a run.
RUN_MIN: Final = 3

PRECALL: Final = "precall"
TURN: Final = "turn"
DRAW: Final = "draw"
OVER: Final = "over"

CALL: Final = "call"
PASS: Final = "pass"
DRAW_STACK: Final = "draw stack"

_DECK: Final = tuple(standard_deck())  # interned names: see cards.CARD_ORDER
#: Points of each card: A=1, 2-10 face, J=11, Q=12, K=13.
POINTS: Final[dict[str, int]] = {intern(r + s): RANK_ORDINAL[r] for r in RANKS for s in SUITS}
_NUM_RANKS: Final = len(RANKS)
_RANK_INDEX: Final[dict[str, int]] = {c: p - 1 for c, p in POINTS.items()}
_SINGLE: Final[dict[str, tuple[str]]] = {card: (card,) for card in _DECK}
_DRAW_ONE: Final[dict[str, Action]] = {card: "draw " + card for card in _DECK}
#: The card each ``draw C`` action picks.
_PICKED: Final[dict[Action, str]] = {action: card for card, action in _DRAW_ONE.items()}
# Events are immutable and shared: the turns' events come from tables.
_PASS_EVENTS: Final = tuple(Event("pass", {"seat": seat}) for seat in range(MAX_PLAYERS))
_STACK_DRAW_EVENTS: Final = tuple(
    Event("draw", {"seat": seat, "source": "stack"}) for seat in range(MAX_PLAYERS))
#: The private ``drawn`` event of each seat and card.
_DRAWN_EVENTS: Final[tuple[dict[str, Event], ...]] = tuple(
    {card: Event("drawn", {"seat": seat, "card": card}, (seat,)) for card in _DECK}
    for seat in range(MAX_PLAYERS))
#: The public ``draw`` event of each seat picking each card.
_PICK_EVENTS: Final[tuple[dict[str, Event], ...]] = tuple(
    {card: Event("draw", {"seat": seat, "source": "disposal", "card": card}) for card in _DECK}
    for seat in range(MAX_PLAYERS))


def hand_total(cards: Sequence[str]) -> int:
    """Points of a hand."""
    total = 0
    for i in range(len(cards)):  # by index: compiled, a Sequence's iterator is an object
        total += POINTS[cards[i]]
    return total


def disposals(hand: Sequence[str]) -> list[tuple[str, ...]]:
    """Every legal disposal from a canonically sorted hand, in a fixed order.

    Singles, then 2+ cards of one rank (suits in canonical order), then runs of
    >= 3 cyclically consecutive ranks of one suit (Q-K-A-2 is a run), listed
    from the run's first card.
    """
    out: list[tuple[str, ...]] = [_SINGLE[card] for card in hand]
    n = len(hand)
    i = 0
    while i < n:
        j = i + 1
        rank = hand[i][0]
        while j < n and hand[j][0] == rank:
            j += 1
        if j - i > 1:
            for size in range(2, j - i + 1):
                out.extend(combinations(hand[i:j], size))
        i = j
    # A run needs 3 cards of a suit, so at most n - 2 distinct suits.
    if n >= RUN_MIN and len({card[1] for card in hand}) <= n - RUN_MIN + 1:
        out.extend(_runs(hand))
    return out


def _runs(hand: Sequence[str]) -> list[tuple[str, ...]]:
    by_suit: dict[str, dict[int, str]] = {}
    for card in hand:
        by_suit.setdefault(card[1], {})[_RANK_INDEX[card]] = card
    out: list[tuple[str, ...]] = []
    for suit in SUITS:
        cards = by_suit.get(suit)
        if cards is None or len(cards) < RUN_MIN:
            continue
        for start in sorted(cards):
            run = [cards[start]]
            rank = (start + 1) % _NUM_RANKS
            while rank in cards and len(run) < len(cards):
                run.append(cards[rank])
                if len(run) >= RUN_MIN:
                    out.append(tuple(run))
                rank = (rank + 1) % _NUM_RANKS
    return out


def _every_disposal() -> list[tuple[str, ...]]:
    """Every disposal of any hand, in the order of the legal actions: most
    points first, then more cards; equal ones as :func:`disposals` lists them
    (singles, then sets, then runs; by card order, suit order and start)."""
    singles = [(card,) for card in canonical(_DECK)]
    sets = [cards for rank in RANKS for size in range(2, len(SUITS) + 1)
            for cards in combinations([rank + suit for suit in SUITS], size)]
    runs = [tuple(RANKS[(start + i) % _NUM_RANKS] + suit for i in range(length))
            for suit in SUITS for start in range(_NUM_RANKS)
            for length in range(RUN_MIN, _NUM_RANKS)]
    listed = singles + sets + runs  # each kind in the order disposals() gives it
    position = {cards: i for i, cards in enumerate(listed)}
    return sorted(listed, key=lambda cards: (
        -8 * hand_total(cards) - len(cards), position[cards]))


#: The action of each disposal, in the legal order ...
_DROP_AT: Final[tuple[Action, ...]] = tuple(
    "drop " + " ".join(cards) for cards in _every_disposal())
#: ... and the place of each disposal in it: a hand's drops are listed by
#: sorting their places (ints, no key function).
_DROP_PLACE: Final[dict[tuple[str, ...], int]] = {
    cards: place for place, cards in enumerate(_every_disposal())}
_DROP_ONE: Final[dict[str, Action]] = {card: _DROP_AT[_DROP_PLACE[card,]] for card in _DECK}
#: Each card as one small int (below 2**62, so compiled code keeps it unboxed):
#: its suit's 13-bit field (bit 13 * suit + rank index, ace = 0) and above them,
#: from bit :data:`_RANK_SHIFT`, its rank index.  Or-ed over a hand, three bits
#: in a row may be a run; a suit holding a king and an ace may hold Q-K-A or K-A-2.
_RANK_SHIFT: Final = 4 * _NUM_RANKS
_CARD_CODE: Final[dict[str, int]] = {
    card: index << _RANK_SHIFT | 1 << _NUM_RANKS * SUITS.index(card[1]) + index
    for card, index in _RANK_INDEX.items()
}
_SUIT_FIELDS: Final = (1 << _RANK_SHIFT) - 1
#: The aces' bits of the suit fields.
_ACES: Final = sum(1 << _NUM_RANKS * suit for suit in range(len(SUITS)))
_SUIT_MASK: Final = (1 << _NUM_RANKS) - 1


def _group_places(cards: list[str]) -> tuple[int, ...]:
    """The places of the disposals of some cards of one rank: singles, sets."""
    sizes = range(1, len(cards) + 1)
    return tuple([_DROP_PLACE[sub] for size in sizes for sub in combinations(cards, size)])


#: The places of the singles and sets of each group of cards of one rank, by
#: the group's codes or-ed (which say its rank and its suits).
_GROUP_PLACES: Final[dict[int, tuple[int, ...]]] = {
    reduce(or_, [_CARD_CODE[card] for card in cards]): _group_places(cards)
    for rank in RANKS for size in range(1, len(SUITS) + 1)
    for cards in map(list, combinations([rank + suit for suit in SUITS], size))}
#: :func:`_suit_runs` memo.
_RUN_PLACES: Final[dict[int, tuple[int, ...]]] = {}
#: What a seat whose total allows it may do beside dropping.
_CALL_ONLY: Final = (CALL,)


def turn_drops(hand: Sequence[str]) -> list[Action]:
    """The drop actions of a canonically sorted hand: most points first, then
    more cards; equal ones in the order of :func:`disposals`."""
    return [*_turn_legal(hand, ())]


def _turn_legal(hand: Sequence[str], extras: tuple[Action, ...]) -> tuple[Action, ...]:
    """:func:`turn_drops` followed by ``extras``, built as one tuple."""
    # A quick test that may say "maybe" (a king of one suit next to the ace and
    # two of the next), never "no" wrongly: disposals() then finds the truth.
    suits = 0
    rank = -1
    paired = False
    for i in range(len(hand)):  # by index: compiled, a Sequence's iterator is an object
        code = _CARD_CODE[hand[i]]
        if code >> _RANK_SHIFT == rank:  # canonical order: a rank's cards adjoin
            paired = True
        rank = code >> _RANK_SHIFT
        suits |= code
    suits &= _SUIT_FIELDS
    if not (paired or suits & suits >> 1 & suits >> 2
            or suits & suits >> _NUM_RANKS - 1 & _ACES):
        # No set and no run: the singles, highest first.
        # (Indices, not reversed(): compiled, a range loop costs no iterator.)
        drops = [_DROP_ONE[hand[i]] for i in range(len(hand) - 1, -1, -1)]
    else:
        places = _disposal_places(hand, suits)
        places.sort()
        drops = [_DROP_AT[place] for place in places]
    drops.extend(extras)
    return tuple(drops)  # tuple(list), not (*list,): compiled, no list in between


def _disposal_places(hand: Sequence[str], suits: int) -> list[int]:
    """The places of every disposal of ``hand`` (``suits``: its cards' codes
    or-ed, suit fields only), from tables: each rank group's singles and sets,
    each suit's runs (as :func:`disposals` finds them, without its tuples)."""
    places: list[int] = []
    group = 0  # the codes of the rank group being read, or-ed
    for i in range(len(hand)):  # by index: compiled, a Sequence's iterator is an object
        code = _CARD_CODE[hand[i]]
        if group and code >> _RANK_SHIFT != group >> _RANK_SHIFT:
            places += _GROUP_PLACES[group]
            group = 0
        group |= code
    if group:
        places += _GROUP_PLACES[group]
    for suit in range(len(SUITS)):
        ranks = suits >> _NUM_RANKS * suit & _SUIT_MASK
        fewer = ranks & ranks - 1  # two lowest bits gone: a run needs a third
        if fewer & fewer - 1:
            places += _suit_runs(suit, ranks)
    return places


def _suit_runs(suit: int, ranks: int) -> tuple[int, ...]:
    """The places of the runs among the cards of ``suit`` whose rank indices
    are the bits of ``ranks`` (memoised: at most 4 * 2**13 sets)."""
    key = suit << _NUM_RANKS | ranks
    places = _RUN_PLACES.get(key)
    if places is None:
        cards = [_DECK[suit * _NUM_RANKS + r] for r in range(_NUM_RANKS) if ranks >> r & 1]
        places = _RUN_PLACES[key] = tuple([_DROP_PLACE[run] for run in _runs(cards)])
    return places


class _Drop(NamedTuple):
    """What a drop action does (:data:`_DROPS`)."""

    #: Its cards as listed.
    cards: tuple[str, ...]
    points: int
    #: Its cards in canonical order (the next player's ``previous_disposal``)
    live: tuple[str, ...]
    #: The next player's draw decision: its legal actions.
    draws: tuple[Action, ...]
    #: The public ``drop`` event of each seat.
    events: tuple[Event, ...]


def _drop_of(action: Action) -> _Drop:
    cards = tuple([intern(card) for card in action.split()[1:]])  # see cards.CARD_ORDER
    live = tuple(canonical(cards))
    listed = [*cards]  # one list for every event: events are never changed
    return _Drop(cards, hand_total(cards), live,
                 (DRAW_STACK, *map(_DRAW_ONE.__getitem__, live)),
                 tuple(Event("drop", {"seat": seat, "cards": listed})
                       for seat in range(MAX_PLAYERS)))


#: What each drop action does.
_DROPS: Final[dict[Action, _Drop]] = {action: _drop_of(action) for action in _DROP_AT}


def hand_scores(
    totals: Sequence[int | None], sizes: Sequence[int], caller: int
) -> tuple[list[int | None], list[int]]:
    """Score a called hand: ``(scores, winners)``.

    ``totals[s]`` is seat ``s``'s hand total (``None`` for a seat out of the
    game), ``sizes[s]`` its number of cards.  The caller wins only when strictly
    lowest; otherwise the lowest non-callers win, fewer cards breaking ties, and
    the caller scores its total plus the penalty.  Winners score 0, the others
    their totals.
    """
    caller_total = totals[caller]
    assert caller_total is not None
    others = {s: t for s, t in enumerate(totals) if t is not None and s != caller}
    low = min(others.values(), default=None)
    if low is None or caller_total < low:
        winners = [caller]
        penalty = 0
    else:
        tied = [s for s, t in others.items() if t == low]
        fewest = min(sizes[s] for s in tied)
        winners = [s for s in tied if sizes[s] == fewest]
        penalty = CALL_PENALTY
    scores: list[int | None] = list(totals)
    for s in winners:
        scores[s] = 0
    if caller not in winners:
        scores[caller] = caller_total + penalty
    return scores, winners



@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class FiveOrLessState(State):
    """A game of five-or-less in progress (see the module docstring).

    The observation fields every seat shares are kept ready in ``_public``
    (immutable values only, so observations can share them): rebuilt when a
    hand starts or ends, updated field by field as turns go.
    """

    def __init__(self, game: FiveOrLess, seed: int) -> None:
        super().__init__(game, seed)
        n = self.num_players
        opts = game.options
        self.limit: int = opts["limit"]
        self.max_hands: int = opts["max_hands"]
        self.max_turns: int = opts["max_turns"]
        self.call_max: int = CALL_MAX - 1 if opts["call_below_five"] else CALL_MAX
        self.totals: list[int] = [0] * n
        self.active: list[bool] = [True] * n
        #: Seats eliminated by each hand that eliminated someone, in order.
        self.eliminated: list[list[int]] = []
        self.hands_played = 0
        self.hand_number = 0
        self.dealer = 0
        self.first = 1 % n
        self.order: list[int] = []
        self.pos = 0
        self.to_move: int | None = None
        #: ``(to_move,)``, or ``()`` once the game is over (asked several times a step).
        self._deciding: tuple[int, ...] = ()
        self.phase = OVER
        self.turns = 0
        self.hands: list[list[str]] = [[] for _ in range(n)]
        #: Each seat's hand total, kept in step with ``hands``.
        self.points: list[int] = [0] * n
        #: Cards every player saw a seat pick from a disposal, still in its hand.
        self.known: list[list[str]] = [[] for _ in range(n)]
        self.stack: list[str] = []
        #: Older disposals not yet shuffled into the stack, oldest first.
        self.discards: list[str] = []
        #: The previous player's disposal (what may be picked), canonical order.
        self.live: list[str] = []
        self.live_owner: int | None = None
        #: The draw decision's legal actions (from ``live``).
        self._draws: tuple[Action, ...] = (DRAW_STACK,)
        #: The current player's disposal during its draw decision, and its action.
        self.dropped: list[str] = []
        self._drop_action: Action = ""
        self.precall_queue: list[int] = []
        self.last_result: dict[str, Any] = {}
        self._public: Observation = {}
        deck = first_hand_deck(opts["deck"], game.deck(), self.rng)
        self._start_hand(deck)

    #: Only ever replaced, never changed in place.
    _clone_shares = frozenset({"order", "dropped", "last_result"})

    def _copy_into(self, other: FiveOrLessState) -> None:
        """Field by field (the generic copy costs several times more); every
        attribute set in ``__init__`` appears here (test_contract checks)."""
        other.limit = self.limit
        other.max_hands = self.max_hands
        other.max_turns = self.max_turns
        other.call_max = self.call_max
        other.totals = self.totals[:]
        other.active = self.active[:]
        other.eliminated = [batch[:] for batch in self.eliminated]
        other.hands_played = self.hands_played
        other.hand_number = self.hand_number
        other.dealer = self.dealer
        other.first = self.first
        other.order = self.order
        other.pos = self.pos
        other.to_move = self.to_move
        other._deciding = self._deciding
        other.phase = self.phase
        other.turns = self.turns
        other.hands = [hand[:] for hand in self.hands]
        other.points = self.points[:]
        other.known = [known[:] for known in self.known]
        other.stack = self.stack[:]
        other.discards = self.discards[:]
        other.live = self.live[:]
        other.live_owner = self.live_owner
        other._draws = self._draws
        other.dropped = self.dropped
        other._drop_action = self._drop_action
        other.precall_queue = self.precall_queue[:]
        other.last_result = self.last_result
        other._public = self._public.copy()  # immutable values, updated key by key

    # -- hand flow ----------------------------------------------------------
    def _start_hand(self, deck_top_first: list[str]) -> None:
        n = self.num_players
        self.hand_number += 1
        self.first = self._next_active(self.dealer)
        self.order = [s for s in _clockwise(self.first, n) if self.active[s]]
        # One card at a time in turn order from the first player (seats still in).
        dealt, self.stack = deal(deck_top_first, len(self.order), HAND_SIZE, 0)
        self.hands = [[] for _ in range(n)]
        for seat, cards in zip(self.order, dealt, strict=True):
            self.hands[seat] = canonical(cards)
        self.known = [[] for _ in range(n)]
        self.points = [hand_total(h) for h in self.hands]
        self.discards, self.live, self.dropped = [], [], []
        self.live_owner = None
        self._draws = (DRAW_STACK,)
        self.turns = 0
        events = self.events
        events.append(Event("hand_start", {
            "hand": self.hand_number, "dealer": self.dealer, "first": self.first,
            "totals": self.totals[:], "active": self.active[:], "stack_size": len(self.stack),
        }))
        for seat in self.order:
            events.append(Event("deal", {"seat": seat, "cards": self.hands[seat][:]}, (seat,)))
        # Every seat is asked, whatever its total: asking only the seats that may
        # call would tell everyone which hands hold 15 points or less.
        self.precall_queue = list(reversed(self.order))
        self._next_precall()
        self._publish()

    def _next_precall(self) -> None:
        if self.precall_queue:
            self.phase = PRECALL
            self.to_move = seat = self.precall_queue.pop()
        else:
            self.phase = TURN
            self.pos = 0
            self.to_move = seat = self.order[0]
            public = self._public
            public["phase"] = TURN
            public["call_max"] = self.call_max
        self._deciding = SEAT_ONLY[seat]

    def _next_active(self, seat: int) -> int:
        n = self.num_players
        for step in range(1, n + 1):
            other = (seat + step) % n
            if self.active[other]:
                return other
        raise AssertionError("no active seat")

    def _end_hand(self, caller: int | None, precall: bool = False) -> None:
        n = self.num_players
        hand_totals: list[int | None] = [
            hand_total(self.hands[s]) if self.active[s] else None for s in range(n)
        ]
        scores: list[int | None] = list(hand_totals)
        winners: list[int] = []
        if caller is not None:
            sizes = [len(h) for h in self.hands]
            scores, winners = hand_scores(hand_totals, sizes, caller)
        for seat, score in enumerate(scores):
            if score is not None:
                self.totals[seat] += score
        out = [s for s in self.order if self.totals[s] >= self.limit]
        for seat in out:
            self.active[seat] = False
        if out:
            self.eliminated.append(out)
        self.hands_played += 1
        self.last_result = {
            "hand": self.hand_number,
            "reason": "no_result" if caller is None else "call",
            "caller": caller,
            "precall": precall,
            "hands": [list(h) for h in self.hands],
            "hand_totals": hand_totals,
            "winners": winners,
            "scores": scores,
            "totals": list(self.totals),
            "eliminated": out,
        }
        self.emit("hand_end", **self.last_result)
        remaining = sum(self.active)
        if remaining <= 1 or self.hands_played >= self.max_hands:
            self.phase = OVER
            self.to_move = None
            self._deciding = ()
            self._publish()
            self.emit("game_end", totals=list(self.totals), places=self.places())
            return
        self.dealer = self._next_active(self.dealer)
        self._start_hand(shuffled(_DECK, self.rng))

    # -- decisions ----------------------------------------------------------
    def deciding_seats(self) -> tuple[int, ...]:
        """The one seat to move, or () when the game is over."""
        return self._deciding

    def _legal_actions(self, seat: int) -> Sequence[Action]:
        """Index 0 is the default: ``pass``, the drop worth most points, or
        ``draw stack``."""
        phase = self.phase
        if phase == DRAW:
            return self._draws
        if phase == PRECALL:
            return (PASS, CALL) if self.points[seat] <= PRECALL_MAX else (PASS,)
        return _turn_legal(self.hands[seat],
                           _CALL_ONLY if self.points[seat] <= self.call_max else ())

    def _apply(self, actions: Mapping[int, Action]) -> None:
        seat = self.to_move
        assert seat is not None
        action = actions[seat]
        phase = self.phase
        if phase == DRAW:
            self._draw(seat, action)
        elif action == CALL:
            self._call(seat)
        elif phase == TURN:
            self._drop(seat, action)
        else:
            self.events.append(_PASS_EVENTS[seat])
            self._next_precall()

    def _call(self, seat: int) -> None:
        precall = self.phase == PRECALL
        self.emit("call", seat=seat, precall=precall, cards=list(self.hands[seat]))
        self._end_hand(seat, precall)

    def _drop(self, seat: int, action: Action) -> None:
        # Unpacked: compiled, a NamedTuple's fields are read by name lookups.
        cards, points, _, _, drop_events = _DROPS[action]
        hand = self.hands[seat]
        for card in cards:
            hand.remove(card)
        self.points[seat] -= points
        known = self.known[seat]
        public = self._public
        if known:
            self.known[seat] = [c for c in known if c not in cards]
            if len(self.known[seat]) != len(known):
                public["known"] = _frozen(self.known)
        self.dropped = [*cards]
        self._drop_action = action
        self.phase = DRAW
        self.events.append(drop_events[seat])
        public["phase"] = DRAW
        sizes = [*public["hand_sizes"]]
        sizes[seat] = len(hand)
        public["hand_sizes"] = tuple(sizes)
        public["disposal"] = cards

    def _draw(self, seat: int, action: Action) -> None:
        events = self.events
        live = self.live
        public = self._public
        if action == DRAW_STACK:
            if not self.stack:
                self._reshuffle()
            card = self.stack.pop()
            events.append(_STACK_DRAW_EVENTS[seat])
            events.append(_DRAWN_EVENTS[seat][card])
        else:
            card = _PICKED[action]
            live.remove(card)
            known = self.known
            known[seat].append(card)
            public["known"] = _frozen(known)
            events.append(_PICK_EVENTS[seat][card])
        hand = self.hands[seat]
        insert_canonical(hand, card)
        self.points[seat] += POINTS[card]
        discards = self.discards
        if live:
            discards.extend(live)
            public["discards"] = tuple(discards)
        _, _, disposal, self._draws, _ = _DROPS[self._drop_action]
        self.live = [*disposal]  # the disposal in canonical order
        self.live_owner = seat
        self.dropped = []
        self.turns = turns = self.turns + 1
        if turns >= self.max_turns:
            self._end_hand(None)
            return
        self.phase = TURN
        order = self.order
        self.pos = pos = (self.pos + 1) % len(order)
        self.to_move = seat_next = order[pos]
        self._deciding = SEAT_ONLY[seat_next]
        public["phase"] = TURN
        public["turn_number"] = turns
        sizes = [*public["hand_sizes"]]
        sizes[seat] = len(hand)
        public["hand_sizes"] = tuple(sizes)
        public["stack_size"] = len(self.stack)
        public["previous_disposal"] = disposal
        public["previous_player"] = seat
        public["disposal"] = ()

    def _reshuffle(self) -> None:
        # The previous player's disposal and this turn's stay out; older ones go back.
        assert self.discards, "stack and older disposals cannot both be empty"
        self.stack = shuffled(self.discards, self.rng)
        self.discards = []
        self._public["discards"] = ()
        self.emit("reshuffle", stack_size=len(self.stack))

    # -- what a seat sees ---------------------------------------------------
    def _publish(self) -> None:
        """Rebuild ``_public`` from the state (a hand starts or the game ends)."""
        phase = self.phase
        public: Observation = {
            "phase": phase,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "first_player": self.first,
            "turn_number": self.turns,
            "hand_sizes": tuple([len(hand) for hand in self.hands]),
            "known": _frozen(self.known),
            "totals": tuple(self.totals),
            "active": tuple(self.active),
            "stack_size": len(self.stack),
            "discards": tuple(self.discards),
            "previous_disposal": tuple(self.live),
            "previous_player": self.live_owner,
            "disposal": tuple(self.dropped),
            "call_max": PRECALL_MAX if phase == PRECALL else self.call_max,
            "call_below_five": self.call_max < CALL_MAX,
            "limit": self.limit,
            "max_hands": self.max_hands,
            "max_turns": self.max_turns,
        }
        self._public = with_room(public)  # room for the keys an observation adds

    def _observation(self, seat: int | None) -> Observation:
        """Own hand, public piles, every seat's hand size, known picked cards,
        running totals and the hand's progress (the game's fields of the rules
        page; the base adds the envelope); a spectator (``None``) gets all but
        ``hand`` and ``hand_points``."""
        obs = self._public.copy()
        if seat is not None:
            obs["hand"] = self.hands[seat][:]
            obs["hand_points"] = self.points[seat]
        return obs

    def cards_in_play(self) -> list[str]:
        """Every card's current place, concatenated (for conservation checks)."""
        out = [c for h in self.hands for c in h]
        return out + self.stack + self.discards + self.live + self.dropped

    # -- results --------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == OVER

    def _scores(self) -> list[float]:
        """Running totals (lower is better)."""
        return list(self.totals)

    def _places(self) -> list[int]:
        """Standings: players still in (by total, lower first), then the
        eliminated, last out first; one hand's eliminations by total."""
        out: list[int | None] = [None] * self.num_players
        for order, batch in enumerate(self.eliminated, start=1):
            for seat in batch:
                out[seat] = order
        return elimination_places(out, self.totals)

    def reveal(self) -> dict[str, Any]:
        """The last hand's cards and scoring, the totals and the elimination order."""
        return {
            "last_hand": self.last_result,
            "totals": list(self.totals),
            "eliminated": [list(b) for b in self.eliminated],
            "hands_played": self.hands_played,
        }


def _frozen(piles: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    """``piles`` as a tuple of tuples (a comprehension: compiled, no map object)."""
    return tuple([tuple(pile) for pile in piles])


def _clockwise(start: int, n: int) -> list[int]:
    return [(start + i) % n for i in range(n)]


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class FiveOrLess(Game):
    """Five-or-less for 2-8 players; lower running total is better."""

    name = "five-or-less"
    field_labels: ClassVar[Mapping[str, str]] = {
        "known": "Known cards",
        "active": "Active",
        "stack_size": "Cards in the stack",
        "discards": "Discards",
        "disposal": "Disposal",
        "previous_disposal": "Previous disposal",
        "previous_player": "Previous player",
        "call_max": "Highest call",
        "call_below_five": "May call below five",
    }
    seat_fields: ClassVar[tuple[str, ...]] = ("totals", "known", "active")
    min_players = 2
    max_players = MAX_PLAYERS
    score_order = "lower"
    option_specs = (
        OptionSpec(
            "limit",
            "int",
            200,
            "running total that eliminates a player (reached or passed)",
            minimum=1,
            maximum=100_000,
        ),
        OptionSpec(
            "max_hands",
            "int",
            200,
            "hands after which a game still going ends (standings by total)",
            minimum=1,
            maximum=100_000,
        ),
        OptionSpec(
            "call_below_five",
            "bool",
            False,
            "a turn-start call needs a total below 5 instead of 5 or less",
        ),
    )

    def deck(self) -> list[str]:
        return standard_deck()

    def new_state(self, seed: int) -> FiveOrLessState:
        return FiveOrLessState(self, seed)


GAME = FiveOrLess
