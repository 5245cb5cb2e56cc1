"""Furious Five: shed points by dropping pairs, sets and straights, then call.

Rules: ``seeds/furious-five.txt`` read through the furious-five section of
``RULINGS.md``; the bot-facing description is ``docs/rules/furious-five.md``.

A round is played turn by turn.  At the start of its turn a seat may ``call``
(hand total < 5, or <= 5 with option ``call_at_five``), which ends the round;
otherwise it must drop one combination, then draw one card, either from the
deck or from the previous player's drop: two decisions.  With option
``multi_drop`` further disjoint combinations may be dropped before the draw,
one decision each.

Action grammar (cards in canonical order, :data:`arena.games.cards.CARD_ORDER`)::

    call                  end the round and settle (turn start only)
    drop C1 C2 ...        drop one combination (or a fallback single)
    draw deck             draw the top card of the deck
    draw C                take card C from the previous player's drop
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from itertools import combinations, product
from operator import itemgetter
from typing import Any, ClassVar, Final, NamedTuple

from mypy_extensions import mypyc_attr

from arena.games.base import (
    SEAT_ONLY,
    Action,
    Event,
    Game,
    Observation,
    OptionSpec,
    ScoreOrder,
    State,
)
from arena.games.cards import (
    CARD_ORDER,
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

HAND_SIZE = 5
MAX_PLAYERS = 5
#: Rounds after which a game played to ``target`` stops anyway.
TARGET_ROUND_CAP = 1000
#: Hand totals strictly below this may call (``call_at_five`` allows it too).
CALL_BELOW = 5

PHASE_START = "start"
PHASE_DRAW = "draw"
PHASE_OVER = "over"

CALL = "call"
DRAW_DECK = "draw deck"

#: A dropped combination: (kind, cards in canonical order).
Combo = tuple[str, tuple[str, ...]]

_SET_KINDS = {2: "pair", 3: "trips", 4: "quads"}
_ALL_CARDS = standard_deck()
#: Point value of each card: A=1, 2..10 face value, J=11, Q=12, K=13.
POINTS: Final[dict[str, int]] = {card: RANK_ORDINAL[card[0]] for card in _ALL_CARDS}
_POINT_OF = POINTS.__getitem__
_SORT_OF = CARD_ORDER.__getitem__
#: The single-card drop and the take of each card.
_DROP_ONE: Final[dict[str, Action]] = {card: "drop " + card for card in _ALL_CARDS}
_DRAW_ONE: dict[str, Action] = {card: "draw " + card for card in _ALL_CARDS}
#: The card each ``draw C`` action takes.
_TAKEN: Final[dict[Action, str]] = {action: card for card, action in _DRAW_ONE.items()}
#: The private ``draw_card`` event of each seat and card (events are immutable).
_DRAW_CARD_EVENTS: Final[tuple[dict[str, Event], ...]] = tuple(
    {card: Event("draw_card", {"seat": seat, "card": card}, (seat,)) for card in _ALL_CARDS}
    for seat in range(MAX_PLAYERS)
)


def hand_total(cards: Sequence[str]) -> int:
    """Point total of some cards."""
    return sum(map(_POINT_OF, cards))


def hand_combinations(hand: Sequence[str], ace_high: bool = False) -> list[Combo]:
    """Every pair, trips, quads and straight that ``hand`` (canonically sorted)
    holds, each card choice separately; singles are not included.

    Straights are >= 3 distinct consecutive ranks, suits ignored, ace low; with
    ``ace_high`` an ace may also follow a king (Q-K-A), never wrapping (K-A-2).
    A straight's cards are listed low to high, so an ace-high ace comes last.
    """
    if len(hand) < 2:
        return []
    by_rank: dict[int, list[str]] = {}
    for card in hand:
        rank = POINTS[card]  # a card's points are its ace-low rank ordinal
        same = by_rank.get(rank)
        if same is None:
            by_rank[rank] = [card]
        else:
            same.append(card)
    out: list[Combo] = []
    if len(by_rank) < len(hand):
        for same in by_rank.values():
            for size in range(2, len(same) + 1):
                kind = _SET_KINDS[size]
                out.extend((kind, sub) for sub in combinations(same, size))
    if len(by_rank) >= 3:
        if ace_high and 1 in by_rank:
            by_rank[14] = by_rank[1]
        for low in sorted(by_rank):
            if low + 1 not in by_rank or low + 2 not in by_rank:
                continue
            run = 3
            while low + run in by_rank:
                run += 1
            for length in range(3, run + 1):
                choices = [by_rank[low + i] for i in range(length)]
                out.extend(("straight", cards) for cards in product(*choices))
    return out


def legal_drops(hand: Sequence[str], ace_high: bool = False) -> list[Combo]:
    """The drops allowed at a turn start: every combination, or every single
    card when the hand holds no pair and no straight."""
    found = hand_combinations(hand, ace_high)
    if found:
        return found
    return [("single", (card,)) for card in hand]


@cache  # pure; a few thousand combinations at most
def _keyed_drop(cards: tuple[str, ...]) -> tuple[int, tuple[int, ...], Action]:
    """The drop action of ``cards`` after its sort key: highest point total
    first, ties in canonical card order (compared card by card)."""
    return -sum(map(_POINT_OF, cards)), tuple(map(_SORT_OF, cards)), "drop " + " ".join(cards)


def _drop_actions(drops: list[Combo]) -> list[Action]:
    """Drop actions, highest point total first, ties in canonical card order."""
    keyed = sorted([_keyed_drop(cards) for _kind, cards in drops])
    return [key[2] for key in keyed]


@cache  # pure; one entry per drop action met (a few thousand at most)
def parse_drop(action: Action) -> Combo:
    """The combination a legal ``drop`` action drops, its cards in listed order."""
    cards = tuple(action.split()[1:])
    if len(cards) == 1:
        return "single", cards
    if len({card[0] for card in cards}) == 1:
        return _SET_KINDS[len(cards)], cards
    return "straight", cards


class _Drop(NamedTuple):
    """What a drop action means, memoised per action by :func:`_drop_of`."""

    combo: Combo
    points: int
    #: The draw decision's legal actions while this drop is the only live one.
    draws: tuple[Action, ...]
    #: The public ``drop`` event of each seat (events are immutable and shared).
    events: tuple[Event, ...]


# Memo tables are plain dicts read in the engine's own code: compiled, a dict
# lookup costs a fraction of a call through functools.cache's wrapper.
_DROPS: Final[dict[Action, _Drop]] = {}


def _drop_of(action: Action) -> _Drop:
    """The meaning of a drop action (about 14,000 exist; memoised)."""
    drop = _DROPS.get(action)
    if drop is None:
        combo = parse_drop(action)
        draws = (DRAW_DECK, *map(_DRAW_ONE.__getitem__, drawable_cards([combo])))
        kind, cards = combo
        events = tuple(Event("drop", {"seat": seat, "combo": kind, "cards": [*cards]})
                       for seat in range(MAX_PLAYERS))
        drop = _DROPS[action] = _Drop(combo, hand_total(cards), draws, events)
    return drop


#: Each card's rank as a base-5 digit (a hand holds at most four cards of a rank),
#: so that a hand's ranks sum to a number that names their multiset (below 2**30).
_RANK_DIGIT: Final[dict[str, int]] = {card: 5 ** (points - 1) for card, points in POINTS.items()}


def _combination_getters(ranks: int, ace_high: bool) -> tuple[itemgetter[Any], ...]:
    """Where the combinations of a canonically sorted hand whose ranks sum to
    ``ranks`` (see :data:`_RANK_DIGIT`) are: one getter of its cards per
    combination, in the order of the drop actions (highest point total first,
    ties card by card in canonical order, which is the order of the indices in
    a sorted hand).  Suits do not matter, so a stand-in hand finds them."""
    stand_in = []
    for rank in range(1, len(RANKS) + 1):
        stand_in += [RANKS[rank - 1] + suit for suit in SUITS[:ranks // 5 ** (rank - 1) % 5]]
    index = {card: i for i, card in enumerate(stand_in)}
    places = [tuple(map(index.__getitem__, cards))
              for _kind, cards in hand_combinations(stand_in, ace_high)]
    places.sort(key=lambda where: (-sum(POINTS[stand_in[i]] for i in where), where))
    return tuple(itemgetter(*where) for where in places)


# Memoised per multiset of ranks a hand holds (a few thousand), one table per
# ace_high so that the key is one int.
_GETTERS: Final[tuple[dict[int, tuple[itemgetter[Any], ...]], ...]] = ({}, {})
#: The drop action of each combination's cards (about 14,000 exist; memoised).
_DROP_TEXT: Final[dict[tuple[str, ...], Action]] = {}


def turn_start_drops(hand: Sequence[str], ace_high: bool = False) -> list[Action]:
    """The drop actions of a canonically sorted hand at a turn start: those of
    :func:`legal_drops`, highest point total first, ties card by card in
    canonical order."""
    ranks = 0
    for i in range(len(hand)):  # by index: compiled, a Sequence's iterator is an object
        ranks += _RANK_DIGIT[hand[i]]
    table = _GETTERS[1 if ace_high else 0]
    getters = table.get(ranks)
    if getters is None:
        getters = table[ranks] = _combination_getters(ranks, ace_high)
    if not getters:
        # No combination: every single, highest rank (and points) first.
        # (Indices, not reversed(): compiled, a range loop costs no iterator.)
        return [_DROP_ONE[hand[i]] for i in range(len(hand) - 1, -1, -1)]
    texts = _DROP_TEXT
    actions = []
    for get in getters:
        cards = get(hand)
        text = texts.get(cards)
        if text is None:
            text = texts[cards] = "drop " + " ".join(cards)
        actions.append(text)
    return actions


#: Memo of :func:`_draw_outcome`, emptied when it reaches :data:`_DRAW_MEMO_SIZE`.
_DRAW_OUTCOMES: Final[dict[tuple[int, str | None, tuple[str, ...]],
                           tuple[Event, tuple[str, ...]]]] = {}
_DRAW_MEMO_SIZE: Final = 1 << 14


def _draw_outcome(
    seat: int, card: str | None, live: tuple[str, ...]
) -> tuple[Event, tuple[str, ...]]:
    """The public ``draw`` event of ``seat`` drawing ``card`` (``None``: from
    the deck) while ``live`` holds the live drop's cards, and the cards buried
    (events are immutable and shared, so they are memoised)."""
    key = (seat, card, live)
    outcome = _DRAW_OUTCOMES.get(key)
    if outcome is not None:
        return outcome
    if card is None:
        outcome = Event("draw", {"seat": seat, "source": "deck", "buried": [*live]}), live
    else:
        buried = [*live]
        buried.remove(card)  # a live drop holds each card once
        data = {"seat": seat, "source": "drop", "card": card, "buried": buried}
        outcome = Event("draw", data), (*buried,)
    if len(_DRAW_OUTCOMES) >= _DRAW_MEMO_SIZE:
        _DRAW_OUTCOMES.clear()
    _DRAW_OUTCOMES[key] = outcome
    return outcome


def drawable_cards(live: Sequence[Combo]) -> list[str]:
    """Cards that may be taken from a live drop: a straight's lowest or highest
    card, any card of any other combination; canonical order."""
    out: list[str] = []
    for kind, cards in live:
        if kind == "straight" and len(cards) >= 3:
            out.append(cards[0])
            out.append(cards[-1])
        else:
            out.extend(cards)
    out.sort(key=_SORT_OF)
    return out


def settle(
    totals: Sequence[int], caller: int, split_fail: bool = False
) -> tuple[str, list[int], list[int]]:
    """Chips moved by a call: ``(outcome, receivers, deltas)``.

    (A) The caller strictly lowest: every other player pays (T_i - C).
    (B) Otherwise the caller pays, alone, the lump sum of (T_j - L) over every
    player j but the chosen lowest non-caller (caller included), L being the
    lowest non-caller total, to the first lowest non-caller clockwise from the
    caller; with ``split_fail`` the lump is split evenly among all tied-lowest
    non-callers, the remainder one chip each clockwise from the caller.
    """
    n = len(totals)
    mine = totals[caller]
    others = [(caller + k) % n for k in range(1, n)]  # clockwise from the caller
    low = min(totals[j] for j in others)
    deltas = [0] * n
    if mine < low:
        for j in others:
            deltas[j] = mine - totals[j]
            deltas[caller] += totals[j] - mine
        return "caller_wins", [caller], deltas
    lowest = [j for j in others if totals[j] == low]
    chosen = lowest[0]
    lump = sum(totals[j] - low for j in range(n) if j != chosen)
    receivers = lowest if split_fail else [chosen]
    share, rest = divmod(lump, len(receivers))
    for k, j in enumerate(receivers):
        deltas[j] = share + (1 if k < rest else 0)
    deltas[caller] = -lump
    return "caller_fails", receivers, deltas


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class FuriousFive(Game):
    """Furious Five for 2-5 players; scores are the chip ledgers."""

    name: ClassVar[str] = "furious-five"
    field_labels: ClassVar[Mapping[str, str]] = {
        "call_limit": "Call limit",
        "live_drop": "Live drop",
        "live_drop_seat": "Live drop's seat",
        "graveyard": "Graveyard",
        "drop": "Drop",
        "can_call": "May call",
    }
    seat_fields: ClassVar[tuple[str, ...]] = ("chips",)
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = MAX_PLAYERS
    score_order: ClassVar[ScoreOrder] = "higher"
    option_specs: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "rounds", "int", 10,
            "rounds in a game (ignored when target > 0)", minimum=1, maximum=TARGET_ROUND_CAP,
        ),
        OptionSpec(
            "target", "int", 0,
            "when > 0, the game ends after the first round that leaves some ledger at "
            f">= +target (or after {TARGET_ROUND_CAP} rounds); 0 = play `rounds` rounds",
            minimum=0, maximum=1_000_000,
        ),
        OptionSpec(
            "ace_high", "bool", False, "Q-K-A is also a straight (A-2-3 still is; no K-A-2)"
        ),
        OptionSpec(
            "multi_drop", "bool", False,
            "a turn may drop any number of disjoint combinations before its draw",
        ),
        OptionSpec("call_at_five", "bool", False, "a hand total of exactly 5 may call too"),
        OptionSpec(
            "split_fail", "bool", False,
            "a failed call's lump sum is split among all tied-lowest non-callers",
        ),
    )

    def deck(self) -> list[str]:
        return standard_deck()

    def new_state(self, seed: int) -> FuriousFiveState:
        return FuriousFiveState(self, seed)


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class FuriousFiveState(State):
    """A game of Furious Five in progress.

    Piles: ``hands`` (canonically sorted), ``deck`` (top card last),
    ``live`` (the previous player's drop, drawable this turn), ``drop`` (this
    turn's drop, live from the next turn), ``graveyard`` (a tuple).

    The observation fields every seat shares are kept ready in ``_public``
    (immutable values only, so observations can share them): rebuilt when a
    round starts or ends, updated field by field as turns go.
    """

    def __init__(self, game: FuriousFive, seed: int) -> None:
        super().__init__(game, seed)
        opts = game.options
        self.max_turns: int = opts["max_turns"]
        self.rounds: int = opts["rounds"]
        self.target: int = opts["target"]
        self.ace_high: bool = opts["ace_high"]
        self.multi_drop: bool = opts["multi_drop"]
        self.split_fail: bool = opts["split_fail"]
        self.call_limit: int = CALL_BELOW if opts["call_at_five"] else CALL_BELOW - 1
        self._options: dict[str, Any] = game.public_options()
        self.chips: list[int] = [0] * self.num_players
        self.round = 0
        self.dealer = self.num_players - 1  # so round 1 is dealt by seat 0
        self.hands: list[list[str]] = []
        self.totals: list[int] = []  # hand totals, kept in step with hands
        self.deck: list[str] = []
        self.graveyard: tuple[str, ...] = ()
        self.live: list[Combo] = []
        self.live_seat: int | None = None
        #: The draw decision's legal actions but further drops (from ``live``).
        self._draws: tuple[Action, ...] = (DRAW_DECK,)
        self.drop: list[Combo] = []
        #: ``draws`` of this turn's first drop (the next ``_draws`` if it is the only one).
        self._first_drop_draws: tuple[Action, ...] = (DRAW_DECK,)
        self.turn = 0
        #: ``(turn,)``, or ``()`` once the game is over (asked several times a step).
        self._deciding: tuple[int, ...] = (0,)
        self.turns_done = 0
        self.phase = PHASE_START
        self.last_hands: list[list[str]] = []
        self._public: Observation = {}
        self._start_round(first_hand_deck(opts["deck"], game.deck(), self.rng))

    # -- rounds -------------------------------------------------------------
    def _start_round(self, deck_top_first: list[str]) -> None:
        n = self.num_players
        self.round += 1
        self.dealer = (self.dealer + 1) % n
        first = (self.dealer + 1) % n
        hands, rest = deal(deck_top_first, n, HAND_SIZE, first)
        self.hands = [canonical(h) for h in hands]
        self.totals = [hand_total(h) for h in self.hands]
        self.deck = rest
        self.graveyard = ()
        self.live = []
        self.live_seat = None
        self._draws = (DRAW_DECK,)
        self.drop = []
        self.turn = first
        self._deciding = (first,)
        self.turns_done = 0
        self.phase = PHASE_START
        self._publish()
        events = self.events
        events.append(Event("hand_start", {"round": self.round, "dealer": self.dealer,
                                           "first": first, "chips": self.chips[:]}))
        for seat, hand in enumerate(self.hands):
            events.append(Event("deal", {"seat": seat, "cards": hand[:]}, (seat,)))

    def _end_round(self, caller: int | None) -> None:
        totals = list(self.totals)
        if caller is None:
            reason, outcome = "turn_cap", "no_result"
            receivers: list[int] = []
            deltas = [0] * self.num_players
        else:
            reason = "call"
            outcome, receivers, deltas = settle(totals, caller, self.split_fail)
        for seat, delta in enumerate(deltas):
            self.chips[seat] += delta
        self.last_hands = [list(h) for h in self.hands]
        self.emit("hand_end", round=self.round, reason=reason, caller=caller,
                  hands=[list(h) for h in self.hands], totals=totals, outcome=outcome,
                  receivers=receivers, deltas=deltas, chips=list(self.chips))
        if self._game_over():
            self.phase = PHASE_OVER
            self._deciding = ()
            self._publish()
            self.emit("game_end", rounds=self.round, chips=list(self.chips),
                      places=self.places())
        else:
            self._start_round(shuffled(_ALL_CARDS, self.rng))

    def _game_over(self) -> bool:
        if self.target > 0:
            return self.round >= TARGET_ROUND_CAP or max(self.chips) >= self.target
        return self.round >= self.rounds

    # -- decisions ----------------------------------------------------------
    def deciding_seats(self) -> tuple[int, ...]:
        return self._deciding

    def is_terminal(self) -> bool:
        return self.phase == PHASE_OVER

    def can_call(self, seat: int) -> bool:
        """Whether ``seat`` may call now (its turn start, total within the limit)."""
        return (
            self.phase == PHASE_START
            and seat == self.turn
            and self.totals[seat] <= self.call_limit
        )

    def _legal_actions(self, seat: int) -> Sequence[Action]:
        """Turn start: drops (highest point total first, ties in canonical card
        order), then ``call`` if allowed.  Draw phase: ``draw deck``, ``draw C``
        in canonical card order, then (``multi_drop``) further drops."""
        hand = self.hands[seat]
        if self.phase == PHASE_START:
            legal = turn_start_drops(hand, self.ace_high)
            if self.totals[seat] <= self.call_limit:
                legal.append(CALL)
            return legal
        if self.multi_drop:
            return self._draws + tuple(_drop_actions(
                hand_combinations(self.hands[seat], self.ace_high)))
        return self._draws

    def _apply(self, actions: Mapping[int, Action]) -> None:
        seat = self.turn
        action = actions[seat]
        taken = _TAKEN.get(action)
        if action == DRAW_DECK:
            self._draw(seat, None)
        elif taken is not None:
            self._draw(seat, taken)
        elif action == CALL:
            self.events.append(Event("call", {"seat": seat, "total": self.totals[seat]}))
            self._end_round(seat)
        else:
            self._drop(seat, action)

    def _drop(self, seat: int, action: Action) -> None:
        # Unpacked: compiled, a NamedTuple's fields are read by name lookups.
        combo, points, draws, drop_events = _drop_of(action)
        hand = self.hands[seat]
        for card in combo[1]:
            hand.remove(card)
        self.totals[seat] -= points
        if not self.drop:
            self._first_drop_draws = draws
        self.drop.append(combo)
        self.phase = PHASE_DRAW
        self.events.append(drop_events[seat])
        public = self._public
        public["phase"] = PHASE_DRAW
        sizes = [*public["hand_sizes"]]
        sizes[seat] = len(hand)
        public["hand_sizes"] = (*sizes,)

    def _draw(self, seat: int, card: str | None) -> None:
        live = self.live
        cards = live[0][1] if len(live) == 1 else tuple(c for _k, cs in live for c in cs)
        event, buried = _draw_outcome(seat, card, cards)
        events = self.events
        if card is None:
            if not self.deck:
                self._reshuffle()
            card = self.deck.pop()
            events.append(event)
            events.append(_DRAW_CARD_EVENTS[seat][card])
        else:
            events.append(event)
        hand = self.hands[seat]
        insert_canonical(hand, card)
        self.totals[seat] += POINTS[card]
        self.graveyard += buried
        drop = self.drop
        self.live = drop
        self.live_seat = seat
        if len(drop) == 1:
            self._draws = self._first_drop_draws
        else:
            self._draws = (DRAW_DECK, *map(_DRAW_ONE.__getitem__, drawable_cards(drop)))
        self.drop = []
        self.turns_done += 1
        if self.turns_done >= self.max_turns:
            self._end_round(None)
            return
        self.turn = turn = (seat + 1) % self.num_players
        self._deciding = SEAT_ONLY[turn]
        self.phase = PHASE_START
        public = self._public
        public["phase"] = PHASE_START
        public["turn_number"] = self.turns_done + 1
        sizes = [*public["hand_sizes"]]
        sizes[seat] = len(hand)
        public["hand_sizes"] = (*sizes,)
        public["live_drop_seat"] = seat if drop else None
        public["graveyard"] = self.graveyard
        public["deck_size"] = len(self.deck)

    def _reshuffle(self) -> None:
        # 52 cards, at most 5 hands of <= 5 and two drops of <= 5: never both empty.
        assert self.graveyard, "deck and graveyard both empty"
        self.deck = shuffled(self.graveyard, self.rng)
        self.graveyard = ()
        self.emit("reshuffle", cards=len(self.deck))

    _clone_shares = frozenset({"_options"})  # never changed: copied into observations

    def _copy_into(self, other: FuriousFiveState) -> None:
        """Field by field (the generic copy costs several times more); every
        attribute set in ``__init__`` appears here (test_contract checks)."""
        other.max_turns = self.max_turns
        other.rounds = self.rounds
        other.target = self.target
        other.ace_high = self.ace_high
        other.multi_drop = self.multi_drop
        other.split_fail = self.split_fail
        other.call_limit = self.call_limit
        other._options = self._options
        other.chips = self.chips[:]
        other.round = self.round
        other.dealer = self.dealer
        other.hands = [hand[:] for hand in self.hands]
        other.totals = self.totals[:]
        other.deck = self.deck[:]
        other.graveyard = self.graveyard
        other.live = self.live[:]
        other.live_seat = self.live_seat
        other._draws = self._draws
        other.drop = self.drop[:]
        other._first_drop_draws = self._first_drop_draws
        other.turn = self.turn
        other._deciding = self._deciding
        other.turns_done = self.turns_done
        other.phase = self.phase
        other.last_hands = [hand[:] for hand in self.last_hands]
        other._public = self._public.copy()  # tuples and numbers, updated key by key

    # -- views --------------------------------------------------------------
    def _publish(self) -> None:
        """Rebuild ``_public`` from the state (a round starts or the game ends)."""
        phase = self.phase
        self._public = {
            "phase": phase,
            "round": self.round,
            "dealer": self.dealer,
            "turn_number": self.turns_done + (phase != PHASE_OVER),
            "hand_sizes": (*map(len, self.hands),),
            "chips": (*self.chips,),
            "call_limit": self.call_limit,
            "live_drop_seat": self.live_seat if self.live else None,
            "graveyard": self.graveyard,
            "deck_size": len(self.deck),
        }

    def _observation(self, seat: int | None) -> Observation:
        """The game's fields of docs/rules/furious-five.md (the base adds the
        envelope); a spectator (``None``) gets all but ``hand``, ``hand_points``
        and ``can_call``."""
        obs = self._public.copy()
        # Fresh maps and lists (a caller may change what it gets); one
        # combination is the usual case.
        live = self.live
        if len(live) == 1:
            obs["live_drop"] = [{"kind": live[0][0], "cards": [*live[0][1]]}]
        else:
            obs["live_drop"] = [{"kind": kind, "cards": [*cards]} for kind, cards in live]
        drop = self.drop
        if len(drop) == 1:
            obs["drop"] = [{"kind": drop[0][0], "cards": [*drop[0][1]]}]
        else:
            obs["drop"] = [{"kind": kind, "cards": [*cards]} for kind, cards in drop]
        obs["options"] = self._options.copy()
        if seat is not None:
            points = self.totals[seat]
            obs["hand"] = self.hands[seat][:]
            obs["hand_points"] = points
            obs["can_call"] = (self.phase == PHASE_START and seat == self.turn
                               and points <= self.call_limit)
        return obs

    def card_locations(self) -> dict[str, list[str]]:
        """Every card by place (``hand 0`` .. ``hand n-1``, ``deck``,
        ``live_drop``, ``drop``, ``graveyard``); each card is in exactly one."""
        out = {f"hand {seat}": list(h) for seat, h in enumerate(self.hands)}
        out["deck"] = list(self.deck)
        out["live_drop"] = [c for _k, cards in self.live for c in cards]
        out["drop"] = [c for _k, cards in self.drop for c in cards]
        out["graveyard"] = list(self.graveyard)
        return out

    def _scores(self) -> list[float]:
        """The chip ledgers."""
        return list(self.chips)

    def reveal(self) -> dict[str, Any]:
        """The last round's final hands and totals, and the chip ledgers."""
        return {
            "rounds": self.round,
            "hands": [list(h) for h in self.last_hands],
            "totals": [hand_total(h) for h in self.last_hands],
            "chips": list(self.chips),
        }


GAME = FuriousFive
