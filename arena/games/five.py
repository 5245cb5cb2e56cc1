"""Five: keep your hand low, end the hand when you hold the lowest total.

Rules: ``seeds/five.txt`` read through the "five" section of ``RULINGS.md``;
the bot-facing description is ``docs/rules/five.md``.

A turn is one or two decisions of the same seat.  At the turn start it may end
the hand, take the top discard (set aside; a second decision then drops), or
drop at once (the deck's top card is then drawn automatically).

Action grammar (cards of one drop all of one rank; every card but the last in
canonical order, the last card listed is the one that ends on top of the pile)::

    end                   end the hand and score it (turn start only)
    take                  set the top discard aside, then drop (turn start only)
    drop C1 .. Ck Ctop    drop 1-4 cards of one rank, Ctop on top; then the card
                          taken joins the hand, or else the deck's top card is drawn
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from sys import intern
from typing import Any, ClassVar, Final, NamedTuple

from mypy_extensions import mypyc_attr

from arena.games.base import (
    SEAT_ONLY,
    Action,
    Event,
    Game,
    GameError,
    Observation,
    OptionSpec,
    ScoreOrder,
    State,
    elimination_places,
    new_event,
    with_room,
)
from arena.games.cards import (
    CARD_ORDER,
    JOKER,
    RANK_ORDINAL,
    RANKS,
    SUITS,
    first_hand_deck,
    insert_canonical,
    shuffled,
    standard_deck,
)

# Final: compiled, a Final constant is a C value, any other global a dict lookup.
HAND_SIZE: Final = 5
MAX_PLAYERS: Final = 6
#: What a caller who is not strictly lowest scores.
CALL_PENALTY: Final = 50
#: Most cards one drop may hold (four of a rank; the two jokers are one rank).
MAX_DROP: Final = 4

PHASE_START: Final = "start"
PHASE_DROP: Final = "drop"
PHASE_OVER: Final = "over"

END: Final = "end"
TAKE: Final = "take"
DROP_PREFIX: Final = "drop "

RESULT_CALL: Final = "call"
RESULT_NO_RESULT: Final = "no_result"

_ALL_KINDS: Final = [*standard_deck(), JOKER]
_DECK: Final = tuple(standard_deck())
_JOKER_DECK: Final = tuple(standard_deck(2))
#: Point value of each card: joker 0, A=1, 2..9 face value, T/J/Q/K=10.
POINTS: Final[dict[str, int]] = {
    card: 0 if card == JOKER else min(RANK_ORDINAL[card[0]], 10) for card in _ALL_KINDS
}
#: Each card by its place in :data:`CARD_ORDER` (the joker's is 0): a hand is
#: sorted as ints, cheaper than ``sorted(key=...)`` on strings.
_CARD_AT: Final[tuple[str, ...]] = tuple(
    {place: card for card, place in CARD_ORDER.items()}.get(place, "")
    for place in range(max(CARD_ORDER.values()) + 1))
_CARD_PLACE: Final[dict[str, int]] = CARD_ORDER
#: Each card's points by its place.
_POINTS_AT: Final[tuple[int, ...]] = tuple(POINTS.get(card, 0) for card in _CARD_AT)
#: ``known_cards`` at a hand's start, for each number of players.
_NO_KNOWN: Final = tuple(((),) * n for n in range(MAX_PLAYERS + 1))
#: The single-card drop of each card.
_DROP_ONE: Final[dict[str, Action]] = {card: intern(DROP_PREFIX + card) for card in _ALL_KINDS}
#: Seats in turn order from each first seat, for each number of players.
_ROTATIONS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(tuple((first + i) % n for i in range(n)) for first in range(n))
    for n in range(MAX_PLAYERS + 1))
_RANK_ORDER: Final[dict[str, int]] = {JOKER: 0, **RANK_ORDINAL}
#: The private ``drawn`` event of each seat and card (events are immutable and shared).
_DRAWN_EVENTS: Final[tuple[dict[str, Event], ...]] = tuple(
    {card: Event("drawn", {"seat": seat, "card": card}, (seat,)) for card in _ALL_KINDS}
    for seat in range(MAX_PLAYERS)
)
#: The public ``take`` event of each seat and card.
_TAKE_EVENTS: Final[tuple[dict[str, Event], ...]] = tuple(
    {card: Event("take", {"seat": seat, "card": card}) for card in _ALL_KINDS}
    for seat in range(MAX_PLAYERS)
)

_JOKERS_SPEC: Final = OptionSpec(
    "jokers", "bool", False, "add the two jokers X (0 points; the two jokers are one rank)"
)


def hand_total(cards: Sequence[str]) -> int:
    """Point total of some cards."""
    total = 0
    for i in range(len(cards)):  # by index: compiled, a Sequence's iterator is an object
        total += POINTS[cards[i]]
    return total


def drop_cards(action: Action) -> list[str]:
    """The cards of a ``drop`` action in listed order (the last ends on top)."""
    return [intern(card) for card in action.split()[1:]]  # interned: see CARD_ORDER


class _Drop(NamedTuple):
    """A drop action's cards (listed order), points and events (:data:`_DROPS`)."""

    cards: tuple[str, ...]
    points: int
    #: The public ``drop`` event of each seat when the deck refills the hand ...
    drew_events: tuple[Event, ...]
    #: ... and when the card taken does.
    took_events: tuple[Event, ...]


def _drop_of(action: Action) -> _Drop:
    cards = tuple(drop_cards(action))
    listed = [*cards]  # one list for every event: events are never changed
    return _Drop(cards, hand_total(cards), *(
        tuple(Event("drop", {"seat": seat, "cards": listed, "drew": drew})
              for seat in range(MAX_PLAYERS))
        for drew in (True, False)))


def drop_actions(hand: list[str]) -> list[Action]:
    """Every legal drop from a canonically sorted hand, in the documented order.

    Each non-empty set of at most four cards of one rank gives one action per
    distinct choice of top card.  Order: points removed (most first), then cards
    dropped (most first), then rank (high first), then the action string.
    """
    # Most hands hold no two cards of a rank: their drops are the singles, in
    # the order of the hand reversed (points, then rank, high first): no sort.
    singles: list[Action] = []
    rank = -1
    for i in range(len(hand) - 1, -1, -1):  # a range: compiled, no iterator object
        code = _CARD_CODE[hand[i]]
        if code >> 4 == rank:  # canonical order: cards of a rank adjoin
            return _grouped_drops(hand)
        rank = code >> 4
        singles.append(_SINGLE_DROP[code])
    return singles


def _grouped_drops(hand: list[str]) -> list[Action]:
    """:func:`drop_actions` of a hand that holds two or more cards of a rank."""
    # Ints, not strings: one lookup per card, each rank group's drops found by
    # its int key, sorted by their places (a plain int sort, no key function).
    places: list[int] = []
    group = 0  # the key of the group being read (0: none yet)
    for i in range(len(hand)):  # by index: compiled, a list's iterator is an object
        code = _CARD_CODE[hand[i]]
        if code >> 4 != group >> 4:  # another rank (the joker's is 0, never after a card)
            if group:
                places += _GROUP_PLACES[group]
            group = code
        else:
            group += code & 15
    if group:
        places += _GROUP_PLACES[group]
    places.sort()
    return [_DROP_AT[place] for place in places]


def _group_drops(cards: tuple[str, ...]) -> tuple[Action, ...]:
    """Every drop from ``cards`` (one rank, canonical order)."""
    actions: dict[Action, None] = {}  # the two jokers are one card name
    for size in range(1, min(len(cards), MAX_DROP) + 1):
        for subset in combinations(cards, size):
            for i, top in enumerate(subset):
                actions[intern(  # interned: one object per action (see CARD_ORDER)
                    DROP_PREFIX + " ".join((*subset[:i], *subset[i + 1 :], top)))] = None
    return tuple(actions)


def _drop_key(action: Action) -> tuple[int, int, int, str]:
    """The documented order of drops: points removed (most first), cards
    dropped (most first), rank (high first), the action string."""
    cards = drop_cards(action)
    return (-hand_total(cards), -len(cards), -_RANK_ORDER[cards[0][0]], action)


#: Every group of same-rank cards a hand may hold (canonical order): each
#: non-empty set of suits of a rank, one or two jokers.
_GROUPS: list[tuple[str, ...]] = [(JOKER,), (JOKER, JOKER)] + [
    tuple(rank + suit for bit, suit in enumerate(SUITS) if mask >> bit & 1)
    for rank in RANKS for mask in range(1, 16)]
_GROUP_DROPS: Final = {cards: _group_drops(cards) for cards in _GROUPS}
#: Every drop action in the documented order, in which the drops of any hand
#: are listed (the order does not depend on the rest of the hand) ...
_DROP_AT: Final[tuple[Action, ...]] = tuple(sorted(
    {action for drops in _GROUP_DROPS.values() for action in drops}, key=_drop_key))
#: ... and the place of each in it.
_DROP_ORDER: Final[dict[Action, int]] = {action: place for place, action in enumerate(_DROP_AT)}
#: Each card's code, ``rank << 4`` (joker 0, A=1 .. K=13) plus its suit bit (a
#: joker's is 1): a rank group's key is the first card's code plus the others' bits
#: (two jokers make 2).
_CARD_CODE: Final[dict[str, int]] = {
    card: 1 if card == JOKER else _RANK_ORDER[card[0]] << 4 | 1 << SUITS.index(card[1])
    for card in _ALL_KINDS}
#: The places (ascending) of the drops of each group, indexed by the group's key.
_PLACES_BY_KEY: Final = {
    _CARD_CODE[cards[0]] + sum(_CARD_CODE[c] & 15 for c in cards[1:]):
        tuple(sorted(_DROP_ORDER[action] for action in drops))
    for cards, drops in _GROUP_DROPS.items()}
_GROUP_PLACES: Final[tuple[tuple[int, ...], ...]] = tuple(
    _PLACES_BY_KEY.get(key, ()) for key in range((len(RANKS) + 1) << 4))
#: The single-card drop of each card, indexed by the card's code.
_SINGLE_DROP: Final[tuple[Action, ...]] = tuple(
    {code: _DROP_ONE[card] for card, code in _CARD_CODE.items()}.get(code, "")
    for code in range((len(RANKS) + 1) << 4))
#: What each of the drop actions (about 450) means.
_DROPS: Final[dict[Action, _Drop]] = {action: _drop_of(action) for action in _DROP_AT}


def hand_scores(hand_totals: Mapping[int, int], caller: int | None) -> dict[int, int]:
    """Each playing seat's score for a hand, given its hand totals.

    ``caller`` is the seat that ended the hand, or ``None`` for a no-result hand
    (turn cap), where everyone scores its total.
    """
    scores = dict(hand_totals)
    if caller is None:
        return scores
    # Loops, not min() over a generator: compiled, several times cheaper.
    lowest = -1  # none yet (totals are never negative)
    for seat, total in scores.items():
        if seat != caller and (lowest < 0 or total < lowest):
            lowest = total
    if lowest < 0 or scores[caller] < lowest:
        scores[caller] = 0
        return scores
    for seat, total in scores.items():
        if total == lowest:
            scores[seat] = 0
    scores[caller] = CALL_PENALTY
    return scores



@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class Five(Game):
    """Five for 2-6 players; lower running totals are better."""

    name: ClassVar[str] = "five"
    field_labels: ClassVar[Mapping[str, str]] = {
        "top_discard": "Top discard",
        "discard": "Discard pile",
        "eliminated": "Eliminated",
        "in_hand": "Seats in the hand",
        "jokers": "Jokers",
    }
    seat_fields: ClassVar[tuple[str, ...]] = ("totals", "known_cards", "eliminated")
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = MAX_PLAYERS
    score_order: ClassVar[ScoreOrder] = "lower"
    option_specs: ClassVar[tuple[OptionSpec, ...]] = (
        _JOKERS_SPEC,
        OptionSpec(
            "limit",
            "int",
            200,
            "score limit: a player whose running total reaches it is eliminated",
            minimum=1,
            maximum=1_000_000,
        ),
        OptionSpec(
            "max_hands",
            "int",
            200,
            "hand cap: a game still going after this many hands ends, standings by total",
            minimum=1,
            maximum=100_000,
        ),
    )

    def __init__(self, num_players: int, options: Mapping[str, Any] | None = None) -> None:
        # The deck depends on the jokers option, and the base checks the
        # stacked deck before it stores the options, so read jokers first.
        raw = dict(options or {})
        self._jokers: bool = _JOKERS_SPEC.parse(raw["jokers"]) if "jokers" in raw else False
        super().__init__(num_players, options)

    def deck(self) -> list[str]:
        """The 52 cards (suit-major, ace low), plus two jokers with option ``jokers``."""
        return standard_deck(2 if self._jokers else 0)

    def new_state(self, seed: int) -> FiveState:
        return FiveState(self, seed)


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class FiveState(State):
    """A game of Five in progress.

    Piles are lists whose last element is the top card.  Seats out of the game
    keep an empty hand.

    The observation fields every seat shares are kept ready in ``_public``
    (immutable values only, so observations can share them): rebuilt when a
    hand starts or the game ends, updated field by field as turns go.
    """

    def __init__(self, game: Five, seed: int) -> None:
        super().__init__(game, seed)
        opts = game.options
        self.limit: int = opts["limit"]
        self.max_hands: int = opts["max_hands"]
        self.max_turns: int = opts["max_turns"]
        self.jokers: bool = opts["jokers"]
        self._all_cards = _JOKER_DECK if self.jokers else _DECK
        n = self.num_players
        self.hands: list[list[str]] = [[] for _ in range(n)]
        #: Each seat's hand total, kept in step with ``hands``.
        self.points: list[int] = [0] * n
        #: Cards publicly known to be in each hand (taken from the discard pile).
        self.known: list[list[str]] = [[] for _ in range(n)]
        self.deck: list[str] = []
        self.discard: list[str] = []
        self.taken: str | None = None
        self.totals: list[int] = [0] * n
        #: Hand number that eliminated each seat, 0 while it is still in.
        self.out_in_hand: list[int] = [0] * n
        self.eliminated: list[bool] = [False] * n
        self.hand_no = 0
        self.first_player = 0
        #: Seats playing this hand, in turn order from the first player.
        self.order: list[int] = []
        self.pos = 0
        self.to_move = 0
        self._deciding: tuple[int, ...] = (0,)
        #: Plays completed in this hand (``turn_number`` in observations).
        self.turns = 0
        self.phase = PHASE_START
        self.end_reason: str | None = None
        #: Hands and hand totals revealed at the end of the latest hand.
        self.last_hands: list[list[str]] = [[] for _ in range(n)]
        self.last_hand_totals: list[int | None] = [None] * n
        self._public: Observation = {}
        self._publish()  # every key, in the documented order: a hand updates them
        self._start_hand(first_hand_deck(opts["deck"], self._all_cards, self.rng))

    #: Only ever replaced, never changed in place (the lists of a hand that
    #: ended are never changed again).
    _clone_shares = frozenset({"order", "last_hands", "last_hand_totals"})

    def _copy_into(self, other: FiveState) -> None:
        """Field by field (the generic copy costs several times more); every
        attribute set in ``__init__`` appears here (test_contract checks)."""
        other.limit = self.limit
        other.max_hands = self.max_hands
        other.max_turns = self.max_turns
        other.jokers = self.jokers
        other._all_cards = self._all_cards
        other.hands = [hand[:] for hand in self.hands]
        other.points = self.points[:]
        other.known = [known[:] for known in self.known]
        other.deck = self.deck[:]
        other.discard = self.discard[:]
        other.taken = self.taken
        other.totals = self.totals[:]
        other.out_in_hand = self.out_in_hand[:]
        other.eliminated = self.eliminated[:]
        other.hand_no = self.hand_no
        other.first_player = self.first_player
        other.order = self.order
        other.pos = self.pos
        other.to_move = self.to_move
        other._deciding = self._deciding
        other.turns = self.turns
        other.phase = self.phase
        other.end_reason = self.end_reason
        other.last_hands = self.last_hands
        other.last_hand_totals = self.last_hand_totals
        other._public = self._public.copy()  # immutable values, updated key by key

    # -- hands ----------------------------------------------------------------
    def _start_hand(self, deck_top_first: list[str]) -> None:
        self.hand_no += 1
        n = self.num_players
        first = self.first_player
        out = self.out_in_hand
        self.order = order = [seat for seat in _ROTATIONS[n][first] if not out[seat]]
        # One card at a time in turn order from the first player (as cards.deal
        # deals, inlined: a hand is a few decisions); then the up card, the deck.
        players = len(order)
        dealt = players * HAND_SIZE
        hands: list[list[str]] = [[] for _ in range(n)]
        points = [0] * n
        for i in range(players):
            # Sorted as ints (no key function), totalled from the same ints.
            places = [_CARD_PLACE[card] for card in deck_top_first[i:dealt:players]]
            places.sort()
            total = 0
            for place in places:
                total += _POINTS_AT[place]
            seat = order[i]
            hands[seat] = [_CARD_AT[place] for place in places]
            points[seat] = total
        self.hands = hands
        self.points = points
        self.known = [[] for _ in range(n)]
        self.deck = deck = deck_top_first[:dealt - 1:-1]  # top card last
        up = deck.pop()
        self.discard = [up]
        self.taken = None
        self.pos = 0
        self.to_move = first
        self._deciding = (first,)
        self.turns = 0
        self.phase = PHASE_START
        self._publish_hand()
        events = self.events
        events.append(new_event("hand_start", {
            "hand": self.hand_no, "first_player": first, "players": order[:], "up_card": up,
            "deck_size": len(deck), "totals": self.totals[:]}))
        for seat in order:
            events.append(new_event(
                "deal", {"seat": seat, "cards": hands[seat][:]}, SEAT_ONLY[seat]))

    def _end_hand(self, caller: int | None) -> None:
        hands = self.hands
        points = self.points
        order = self.order
        scores = hand_scores({seat: points[seat] for seat in order}, caller)
        n = self.num_players
        hand_totals: list[int | None] = [None] * n
        seat_scores: list[int | None] = [None] * n
        totals = self.totals
        for seat in order:
            hand_totals[seat] = points[seat]
            seat_scores[seat] = score = scores[seat]
            totals[seat] += score
        # The next hand deals fresh lists, so these hands are never changed again.
        self.last_hands = hands
        self.last_hand_totals = hand_totals
        limit = self.limit
        out = self.out_in_hand
        newly_out = [seat for seat in range(n) if totals[seat] >= limit and not out[seat]]
        for seat in newly_out:
            out[seat] = self.hand_no
            self.eliminated[seat] = True
        self.events.append(new_event("hand_end", {
            "hand": self.hand_no,
            "result": RESULT_NO_RESULT if caller is None else RESULT_CALL,
            "caller": caller,
            "hands": [hand[:] for hand in hands],
            "hand_totals": hand_totals[:],
            "scores": seat_scores,
            "totals": totals[:],
            "eliminated": newly_out,
        }))
        remaining = out.count(0)  # seats still in
        if remaining <= 1:
            self._finish("last_player" if remaining else "all_out")
        elif self.hand_no >= self.max_hands:
            self._finish("max_hands")
        else:
            self.first_player = self._next_in_game(self.first_player)
            self._start_hand(shuffled(self._all_cards, self.rng))

    def _next_in_game(self, seat: int) -> int:
        n = self.num_players
        for step in range(1, n + 1):
            other = (seat + step) % n
            if not self.out_in_hand[other]:
                return other
        raise GameError("no player left in the game")

    def _finish(self, reason: str) -> None:
        self.phase = PHASE_OVER
        self._deciding = ()
        self.end_reason = reason
        self._publish()
        self.emit(
            "game_end",
            reason=reason,
            totals=list(self.totals),
            places=self.places(),
        )

    # -- turns ----------------------------------------------------------------
    def _take(self, seat: int) -> None:
        discard = self.discard
        card = discard.pop()
        self.taken = card
        self.phase = PHASE_DROP
        self.events.append(_TAKE_EVENTS[seat][card])
        public = self._public
        public["phase"] = PHASE_DROP
        public["taken"] = card
        public["top_discard"] = discard[-1] if discard else None
        public["discard"] = tuple(discard)

    def _drop(self, seat: int, action: Action) -> None:
        cards, points, drew_events, took_events = _DROPS[action]
        hand = self.hands[seat]
        for card in cards:
            hand.remove(card)
        known = self.known[seat]
        known_changed = False
        if known:
            for card in cards:
                if card in known:
                    known.remove(card)
                    known_changed = True
        self.discard.extend(cards)
        taken = self.taken
        events = self.events
        public = self._public
        if taken is not None:  # the drop phase: back to a turn start
            events.append(took_events[seat])
            card = taken
            known.append(taken)
            known_changed = True
            self.taken = None
            self.phase = PHASE_START
            public["phase"] = PHASE_START
            public["taken"] = None
        else:
            events.append(drew_events[seat])
            deck = self.deck
            card = deck.pop()
            events.append(_DRAWN_EVENTS[seat][card])
            if not deck:
                self._reshuffle()
        insert_canonical(hand, card)
        self.points[seat] += POINTS[card] - points
        self.turns = turns = self.turns + 1
        if turns >= self.max_turns:
            self._end_hand(None)
            return
        order = self.order
        self.pos = pos = (self.pos + 1) % len(order)
        self.to_move = seat_next = order[pos]
        self._deciding = SEAT_ONLY[seat_next]
        discard = self.discard
        public["top_discard"] = discard[-1]
        public["discard"] = tuple(discard)
        public["deck_size"] = len(self.deck)
        if len(cards) > 1:  # else the hand gained what it lost
            sizes = [*public["hand_sizes"]]
            sizes[seat] = len(hand)
            public["hand_sizes"] = tuple(sizes)
        if known_changed:
            known_cards = [*public["known_cards"]]
            known_cards[seat] = tuple(known)
            public["known_cards"] = tuple(known_cards)
        public["turn_number"] = turns

    def _reshuffle(self) -> None:
        """The deck ran out: the top discard stays, the rest becomes the deck."""
        top = self.discard.pop()
        self.deck = shuffled(self.discard, self.rng)
        self.discard = [top]
        self.emit("reshuffle", deck_size=len(self.deck), top_discard=top)

    # -- State interface ------------------------------------------------------
    def deciding_seats(self) -> tuple[int, ...]:
        return self._deciding

    def _legal_actions(self, seat: int) -> tuple[Action, ...]:
        """Drops first (index 0 drops the most points), then ``take``, then ``end``."""
        drops = drop_actions(self.hands[seat])
        if self.phase == PHASE_START:
            drops.append(TAKE)
            drops.append(END)
        return tuple(drops)  # tuple(list), not (*list,): compiled, no list in between

    def _apply(self, actions: Mapping[int, Action]) -> None:
        seat = self.to_move
        action = actions[seat]
        if action == END:
            self.emit("end", seat=seat)
            self._end_hand(seat)
        elif action == TAKE:
            self._take(seat)
        else:
            self._drop(seat, action)

    def _publish_hand(self) -> None:
        """Update ``_public`` for a new hand (in place: cheaper than a rebuild)."""
        public = self._public
        discard = self.discard
        public["phase"] = self.phase
        public["taken"] = self.taken
        public["top_discard"] = discard[-1]
        public["discard"] = tuple(discard)
        public["deck_size"] = len(self.deck)
        public["hand_sizes"] = tuple([len(hand) for hand in self.hands])
        public["known_cards"] = _NO_KNOWN[self.num_players]
        public["totals"] = tuple(self.totals)
        public["eliminated"] = tuple(self.eliminated)
        public["in_hand"] = tuple(self.order)
        public["hand_number"] = self.hand_no
        public["first_player"] = self.first_player
        public["turn_number"] = self.turns

    def _publish(self) -> None:
        """Rebuild ``_public`` from the state (a hand starts or the game ends)."""
        discard = self.discard
        public: Observation = {
            "phase": self.phase,
            "taken": self.taken,
            "top_discard": discard[-1] if discard else None,
            "discard": tuple(discard),
            "deck_size": len(self.deck),
            "hand_sizes": tuple([len(hand) for hand in self.hands]),
            "known_cards": tuple([tuple(known) for known in self.known]),
            "totals": tuple(self.totals),
            "eliminated": tuple(self.eliminated),
            "in_hand": tuple(self.order),
            "hand_number": self.hand_no,
            "first_player": self.first_player,
            "turn_number": self.turns,
            "limit": self.limit,
            "max_hands": self.max_hands,
            "max_turns": self.max_turns,
            "jokers": self.jokers,
        }
        self._public = with_room(public)  # room for the keys an observation adds

    def _observation(self, seat: int | None) -> Observation:
        """The game's fields of docs/rules/five.md (the base adds the
        envelope); a spectator (``None``) gets all but ``hand`` and ``hand_points``."""
        obs = self._public.copy()
        if seat is not None:
            obs["hand"] = self.hands[seat][:]
            obs["hand_points"] = self.points[seat]
        return obs

    def is_terminal(self) -> bool:
        return self.phase == PHASE_OVER

    def _scores(self) -> list[float]:
        """Running totals (lower is better)."""
        return list(self.totals)

    def _places(self) -> list[int]:
        """Later elimination ranks higher; players still in rank above everyone out.

        Within one group (out in the same hand, or still in) a lower total ranks
        higher and equal totals share a place.
        """
        return elimination_places([out or None for out in self.out_in_hand], self.totals)

    def reveal(self) -> dict[str, Any]:
        """The last hand's cards and totals, running totals, eliminations, places."""
        return {
            "hands": [list(h) for h in self.last_hands],
            "hand_totals": list(self.last_hand_totals),
            "totals": list(self.totals),
            "eliminated_in_hand": [h or None for h in self.out_in_hand],
            "hands_played": self.hand_no,
            "reason": self.end_reason,
            "places": self.places() if self.phase == PHASE_OVER else None,
        }

    # -- inspection -----------------------------------------------------------
    def zones(self) -> dict[str, list[str]]:
        """Where every card is now (for tests and tools, not for bots)."""
        zones: dict[str, list[str]] = {
            "deck": list(self.deck),
            "discard": list(self.discard),
            "taken": [] if self.taken is None else [self.taken],
        }
        for seat, hand in enumerate(self.hands):
            zones[f"hand{seat}"] = list(hand)
        return zones


GAME = Five
