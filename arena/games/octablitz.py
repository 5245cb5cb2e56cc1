"""Octablitz: the trick-taking bonus game of the rummy-five box, for 3-4 players.

Rules: the bonus part of ``seeds/rummy-five-and-octablitz.txt`` plus the
"octablitz" section of RULINGS.md; the bot-facing description, the action
grammar and the observation fields are in ``docs/rules/octablitz.md``.

Cards are kept internally as *kind indices* 0..13 in canonical order
``bs rs bA rA bB rB bC rC bJ rJ bK rK bL rL`` (rank first, black before red).
That order is also single-card strength, so a single or a multiple of identical
cards is as strong as its kind index.  A hand is kept twice: as a sorted list of
names (cheap observations) and as per-kind counts (cheap legality checks).

The code is shaped for speed under mypyc (see docs/architecture.md): an action
text is taken apart once (:class:`_Play`), and the events and ``trick_plays``
entries a play makes are memoised by seat and trick (events are immutable, so
one object serves every game: allocating them per decision cost more than the
rules, mostly in the garbage collector).

Face-down cards are hidden information: no observation, public event or reveal
ever names another seat's face-down card; the player itself learns its own
face-down cards through a private ``down_cards`` event and ``my_down``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations_with_replacement
from typing import Any, ClassVar, Final

from mypy_extensions import mypyc_attr

from arena.games import cards as deck_tools
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

# Module tables are Final: compiled, a Final name is a C variable, any other
# module global a dict look-up at every use.

RANK_ORDER: Final = "sABCJKL"
SUIT_ORDER: Final = "br"
#: Card names in canonical order; a card's index is its single-card strength.
NAMES: Final[tuple[str, ...]] = tuple(suit + rank for rank in RANK_ORDER for suit in SUIT_ORDER)
INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(NAMES)}
NUM_KINDS: Final = len(NAMES)
#: Kinds of rank L: the generals, one per suit, never part of a multiple.
L_KINDS: Final = frozenset((INDEX["bL"], INDEX["rL"]))

SINGLE: Final = "single"
MULTIPLE: Final = "multiple"
RUN: Final = "run"
#: Runs from weakest to strongest: black ABC < red ABC < black JKL < red JKL.
RUNS: Final[tuple[tuple[int, int, int], ...]] = tuple(
    (INDEX[suit + a], INDEX[suit + b], INDEX[suit + c])
    for a, b, c in ("ABC", "JKL")
    for suit in SUIT_ORDER
)
RUN_STRENGTH: Final[dict[tuple[int, ...], int]] = {run: i for i, run in enumerate(RUNS)}

LEAD: Final = "lead"
UP: Final = "up"
DOWN: Final = "down"
BASE_POINTS: Final = {3: 5, 4: 4}
HAND_SIZE: Final = {3: 10, 4: 8}


@dataclass(frozen=True)
class Combo:
    """A combination: ``shape`` is (single|multiple|run, number of cards);
    two combinations compare only when their shapes are equal."""

    kind: str
    count: int
    strength: int

    @property
    def shape(self) -> tuple[str, int]:
        return (self.kind, self.count)

    def beats(self, other: Combo) -> bool:
        """True if this may be played face up over ``other`` (identical: earlier wins)."""
        return self.shape == other.shape and self.strength > other.strength


def sort_cards(cards: Sequence[str]) -> list[str]:
    """Cards in canonical order (rank s..L, black before red)."""
    return sorted(cards, key=INDEX.__getitem__)


def classify(cards: Sequence[str]) -> Combo | None:
    """The combination ``cards`` form when led, or None if they form none."""
    if not cards or any(card not in INDEX for card in cards):
        return None
    kinds = tuple(sorted(INDEX[card] for card in cards))
    return _classify_kinds(kinds)


@cache  # pure, and Combo is immutable
def _classify_kinds(kinds: tuple[int, ...]) -> Combo | None:
    count = len(kinds)
    first = kinds[0]
    if count == 1:
        return Combo(SINGLE, 1, first)
    if count <= 5 and first not in L_KINDS and all(k == first for k in kinds):
        return Combo(MULTIPLE, count, first)
    run = RUN_STRENGTH.get(kinds)
    return None if run is None else Combo(RUN, 3, run)


def deal_payments(
    num_players: int,
    winner: int,
    cards_taken: Sequence[int],
    general: int | None = None,
    multiplier: int = 1,
) -> list[int]:
    """Net chip change of every seat for a deal won by ``winner``.

    Each non-winner owes ``base - cards taken``, plus 1 if it took no card (no
    trick); a negative amount is paid by the winner.  Every payment to or from
    ``general`` is multiplied by ``multiplier``.  The result sums to zero.
    """
    base = BASE_POINTS[num_players]
    change = [0] * num_players
    for seat in range(num_players):
        if seat == winner:
            continue
        owed = base - cards_taken[seat] + (1 if cards_taken[seat] == 0 else 0)
        if general is not None and general in (seat, winner):
            owed *= multiplier
        change[seat] -= owed
        change[winner] += owed
    return change


@cache
def _action(verb: str, cards: tuple[str, ...]) -> str:
    """The action text ``verb card card...`` (memoised: a few thousand texts)."""
    return verb + " " + " ".join(cards)


def parse_action(action: str) -> tuple[str, list[str]]:
    """Split an action into its verb and cards (no legality check)."""
    verb, *played = action.split()
    return verb, played


#: The observation's ``lead`` before anything is led (never shown: see _observation).
_NO_SHAPE: Final[dict[str, Any]] = {}


@dataclass(frozen=True)
class _Play:
    """A legal action taken apart (made once per action text, see :func:`_parse`);
    frozen, like Combo: a clone shares it."""

    verb: str
    kinds: tuple[int, ...]
    #: The cards as the NAMES objects a hand holds: removing them compares by identity.
    cards: tuple[str, ...]
    #: None face down.
    combo: Combo | None
    #: The observation's ``lead`` if this is led (shared, copied per observation).
    shape: dict[str, Any]
    #: The events and entries it makes, memoised (see _memo; shared by clones,
    #: like the events).
    memo: list[Any]


def _make_play(action: str) -> _Play:
    verb, *played = action.split()
    kinds = tuple(INDEX[card] for card in played)
    combo = None if verb == DOWN else _classify_kinds(tuple(sorted(kinds)))
    shape = _NO_SHAPE if combo is None else {"combo": combo.kind, "count": combo.count}
    return _Play(verb, kinds, tuple(NAMES[kind] for kind in kinds), combo, shape, [])


_PARSED: Final[dict[str, _Play]] = {}


def _parse(action: str) -> _Play:
    """A legal action taken apart, memoised in a plain dict: compiled, a
    functools.cache wrapper costs several dict look-ups' worth per call, and
    this runs every decision."""
    found = _PARSED.get(action)
    if found is None:
        found = _PARSED[action] = _make_play(action)
    return found


#: Precomputed texts: [kind][size] for identical cards, per run, per single name.
_LEAD_SAME: Final = [[""] + [_action(LEAD, (name,) * size) for size in range(1, 6)]
                     for name in NAMES]
_UP_SAME: Final = [[""] + [_action(UP, (name,) * size) for size in range(1, 6)] for name in NAMES]
_LEAD_RUN: Final = [_action(LEAD, tuple(NAMES[k] for k in run)) for run in RUNS]
_UP_RUN: Final = [_action(UP, tuple(NAMES[k] for k in run)) for run in RUNS]
_DOWN_ONE: Final = {name: _action(DOWN, (name,)) for name in NAMES}

# A hand's cards are also kept as *levels*: ``levels[c]`` is the bitmask of
# the kinds held at least ``c`` times (c = 1..5; ``levels[0]`` is unused).  The
# actions a hand may take are read from the levels through small tables (a
# whole hand repeats too rarely to be a good key for memoising).

_HALF: Final = 7  # kinds per half of a 14-kind bitmask


def _kinds_in(mask: int) -> list[int]:
    return [kind for kind in range(NUM_KINDS) if mask >> kind & 1]


@cache
def _half_tables(verb: str, size: int) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """``verb`` with ``size`` identical cards of each kind of a bitmask, by the
    mask's low and high half: ``[half][bits]`` (two tables of 128 tuples)."""
    texts = {LEAD: _LEAD_SAME, UP: _UP_SAME}.get(verb)
    return tuple(
        tuple(tuple(texts[kind][size] if texts else _DOWN_ONE[NAMES[kind]]
                    for kind in _kinds_in(bits << half * _HALF))
              for bits in range(1 << _HALF))
        for half in (0, 1))


_Halves = tuple[tuple[tuple[str, ...], ...], ...]
#: _half_tables(verb, size) by size (index 0 unused), made at import.
_LEAD_HALVES: Final[tuple[_Halves, ...]] = tuple(
    _half_tables(LEAD, n) if n else () for n in range(6))
_UP_HALVES: Final[tuple[_Halves, ...]] = tuple(_half_tables(UP, n) if n else () for n in range(6))
_DOWN_HALVES: Final[_Halves] = _half_tables(DOWN, 1)


def _same_texts(halves: _Halves, mask: int) -> tuple[str, ...]:
    """The texts of ``halves`` (a verb with some number of identical cards) for
    each kind in ``mask``, weakest first."""
    return halves[0][mask & (1 << _HALF) - 1] + halves[1][mask >> _HALF]


#: Bit ``strength`` set for each run whose three kinds are all in a bitmask,
#: indexed by the mask without the s kinds (bits 0 and 1).
_RUN_MASKS: Final = [sum(1 << kind for kind in run) >> 2 for run in RUNS]
_RUNS_HELD: Final[tuple[int, ...]] = tuple(
    sum(1 << strength for strength, mask in enumerate(_RUN_MASKS) if held & mask == mask)
    for held in range(1 << (NUM_KINDS - 2)))


def _run_texts(verb: str, runs: int, above: int = -1) -> tuple[str, ...]:
    """``verb`` with every run set in the bitmask ``runs``, of strength above ``above``."""
    texts = _LEAD_RUN if verb == LEAD else _UP_RUN
    return tuple(texts[strength] for strength in range(len(RUNS))
                 if strength > above and runs >> strength & 1)


#: _run_texts(LEAD, runs) by ``runs``; _UP_RUNS[above + 1][runs]: made at import.
_LEAD_RUNS: Final[tuple[tuple[str, ...], ...]] = tuple(
    _run_texts(LEAD, runs) for runs in range(1 << len(RUNS)))
_UP_RUNS: Final[tuple[tuple[tuple[str, ...], ...], ...]] = tuple(
    tuple(_run_texts(UP, runs, above) for runs in range(1 << len(RUNS)))
    for above in range(-1, len(RUNS)))


_DOWN_TABLE: Final[dict[tuple[str, ...], str]] = {}


def _down_table() -> dict[tuple[str, ...], str]:
    """The text of every face-down play of 2 to 5 cards the deck allows, by its
    cards in canonical order (about 10,000, made on first use)."""
    if not _DOWN_TABLE:
        copies = Counter(deck_tools.rummy_deck())
        _DOWN_TABLE.update(
            (cards, DOWN + " " + " ".join(cards))
            for size in range(2, 6) for cards in combinations_with_replacement(NAMES, size)
            if all(cards.count(card) <= copies[card] for card in cards))
    return _DOWN_TABLE


def _kinds_code(kinds: Sequence[int]) -> int:
    """Sorted kinds as one int, a hex digit (kind + 1) each: a cheaper key than a tuple."""
    code = 0
    for kind in kinds:
        code = code * 16 + kind + 1
    return code


_DOWN_BY_CODE: Final[dict[int, str]] = {}


def _down_by_code() -> dict[int, str]:
    """:func:`_down_table` by :func:`_kinds_code` of the cards (made on first use)."""
    if not _DOWN_BY_CODE:
        _DOWN_BY_CODE.update((_kinds_code([INDEX[card] for card in cards]), text)
                             for cards, text in _down_table().items())
    return _DOWN_BY_CODE


def _down_texts(levels: Sequence[int], counts: Sequence[int], size: int) -> tuple[str, ...]:
    """The face-down plays of ``size`` (2 or more) cards from a hand (its
    levels and per-kind counts): every distinct choice, ascending.  Whole hands
    seldom repeat, so this is not memoised: the choices are walked as
    multisets of the held kinds (no repeats to skip), their texts read from a
    table by an int key."""
    held = _kinds_in(levels[1])
    left = [counts[kind] for kind in held]
    texts: list[str] = []
    _choose_down(held, left, 0, size, 0, _DOWN_BY_CODE or _down_by_code(), texts)
    return tuple(texts)


def _choose_down(held: list[int], left: list[int], start: int, size: int, code: int,
                 table: dict[int, str], texts: list[str]) -> None:
    """Append the texts of every choice of ``size`` more cards from ``held[start:]``
    (``left``: copies still available per position) after the cards of ``code``,
    in ascending order: the first card ascending, then the rest from it on."""
    for i in range(start, len(held)):
        if left[i]:
            chosen = code * 16 + held[i] + 1
            if size == 1:
                texts.append(table[chosen])
            else:
                left[i] -= 1
                _choose_down(held, left, i, size - 1, chosen, table, texts)
                left[i] += 1


#: ``(seat,)`` by seat: the deciding seats of a step without a tuple made per step.

# Events are immutable, so one object serves every game: a play is a few hundred
# possible events (by seat and trick), not a few allocations per decision.  They
# are memoised in lists by an int index (compiled, a list slot costs less than a
# dict look-up with an int key, which is boxed and hashed): per play in its own
# ``memo`` list, made on first use (most face-down choices never use one).

#: A seat's number is below 8 and a trick's at most the largest hand (a leader
#: plays at least one card a trick), so these index the memo slots.
_SEATS: Final = 8
_TRICKS: Final = max(HAND_SIZE.values()) + 1
#: A play's memo: its trick_plays entry by seat, then its play (or down_cards)
#: event by trick and seat, then the trick_end event it wins by trick, seat, last.
_MEMO_EVENT: Final = _SEATS
_MEMO_TRICK_END: Final = _MEMO_EVENT + _TRICKS * _SEATS
_MEMO_SIZE: Final = _MEMO_TRICK_END + _TRICKS * _SEATS * 2


def _memo(play: _Play) -> list[Any]:
    """``play``'s memo slots (None until filled in)."""
    memo = play.memo
    if not memo:
        memo.extend([None] * _MEMO_SIZE)
    return memo


def _up_event(play: _Play, seat: int, trick: int) -> Event:
    """The public event of a face-up play (its verb says whether it leads)."""
    memo = _memo(play)
    i = _MEMO_EVENT + trick * _SEATS + seat
    found = memo[i]
    if found is None:
        combo = play.combo
        assert combo is not None
        found = memo[i] = Event(
            "play", {"seat": seat, "trick": trick, "lead": play.verb == LEAD, "face": "up",
                     "combo": combo.kind, "count": len(play.cards), "cards": list(play.cards)})
    return found


def _up_play(play: _Play, seat: int) -> dict[str, Any]:
    """The ``trick_plays`` entry of a face-up play (copied into each observation)."""
    memo = _memo(play)
    found = memo[seat]
    if found is None:
        cards = play.cards
        found = memo[seat] = {"seat": seat, "face": "up", "count": len(cards), "cards": cards}
    return found


def _down_event(play: _Play, seat: int, trick: int) -> Event:
    """The private event naming a seat's face-down cards: memoised for one card
    (nearly every face-down play; the choices of several cards are too many)."""
    cards = play.cards
    if len(cards) > 1:
        return new_event(
            "down_cards", {"seat": seat, "trick": trick, "cards": list(cards)}, SEAT_ONLY[seat])
    memo = _memo(play)
    i = _MEMO_EVENT + trick * _SEATS + seat
    found = memo[i]
    if found is None:
        found = memo[i] = Event(
            "down_cards", {"seat": seat, "trick": trick, "cards": list(cards)}, (seat,))
    return found


def _trick_end(best: _Play, trick: int, winner: int, last: bool) -> Event:
    """The public event ending a trick won by the play ``best``."""
    memo = _memo(best)
    i = _MEMO_TRICK_END + (trick * _SEATS + winner) * 2 + last
    found = memo[i]
    if found is None:
        found = memo[i] = Event(
            "trick_end", {"trick": trick, "winner": winner, "cards": list(best.cards),
                          "last": last})
    return found


#: Face-down play events by (trick, count, seat) and trick_plays entries by (count, seat).
_PLAY_EVENTS: Final[list[Any]] = [None] * (_TRICKS * 8 * _SEATS)
_DOWN_PLAYS: Final[list[Any]] = [None] * (8 * _SEATS)


def _play_event(seat: int, trick: int, count: int) -> Event:
    """The public event of a face-down play."""
    i = (trick * 8 + count) * _SEATS + seat
    found = _PLAY_EVENTS[i]
    if found is None:
        found = _PLAY_EVENTS[i] = Event(
            "play", {"seat": seat, "trick": trick, "lead": False, "face": "down",
                     "count": count})
    return found


def _down_play(seat: int, count: int) -> dict[str, Any]:
    """The ``trick_plays`` entry of a face-down play (copied into each observation)."""
    i = count * _SEATS + seat
    found = _DOWN_PLAYS[i]
    if found is None:
        found = _DOWN_PLAYS[i] = {"seat": seat, "face": "down", "count": count, "cards": ()}
    return found


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class Octablitz(Game):
    """Octablitz for 3 or 4 players; scores are chips, higher is better."""

    name: ClassVar[str] = "octablitz"
    field_labels: ClassVar[Mapping[str, str]] = {
        "general": "General",
        "general_wins": "General's wins",
        "multiplier": "Multiplier",
        "base": "Base stake",
        "trick": "Trick",
        "leader": "Leader",
        "lead": "Lead",
        "trick_plays": "Trick plays",
        "best_seat": "Best so far",
        "last_trick": "Last trick",
        "tricks_won": "Tricks won",
        "cards_taken": "Cards taken",
        "out_up": "Played face up",
        "down_counts": "Face-down plays",
        "must_play_down": "Must play face down",
        "my_down": "My face-down cards",
    }
    seat_fields: ClassVar[tuple[str, ...]] = ("chips", "tricks_won", "cards_taken", "taken",
                                              "down_counts")
    min_players: ClassVar[int] = 3
    max_players: ClassVar[int] = 4
    score_order: ClassVar[ScoreOrder] = "higher"
    actions_public: ClassVar[bool] = False  # "down" actions name hidden cards
    option_specs: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec(
            "deals",
            "int",
            8,
            "number of deals in a game; the game also ends after a deal that leaves "
            "a player with no chips (<= 0)",
            minimum=1,
            maximum=10_000,
        ),
        OptionSpec(
            "chips", "int", 30, "chips each player starts with", minimum=1, maximum=1_000_000
        ),
    )

    def deck(self) -> list[str]:
        return deck_tools.rummy_deck(remove_one_s_per_suit=self.num_players == 3)

    def new_state(self, seed: int) -> OctablitzState:
        return OctablitzState(self, seed)


@mypyc_attr(allow_interpreted_subclasses=True)  # mypyc: see base.State
class OctablitzState(State):
    """A game of octablitz in progress: a series of deals of tricks.

    The public part of the observation is kept in :attr:`_public`, a dict of
    immutable values (tuples) that the plays update and each observation copies.
    """

    def __init__(self, game: Octablitz, seed: int) -> None:
        super().__init__(game, seed)
        n = self.num_players
        options = game.options
        self.base = BASE_POINTS[n]
        self.hand_size = HAND_SIZE[n]
        self.deals = int(options["deals"])
        self.max_turns = int(options["max_turns"])
        self.chips: list[int] = [int(options["chips"])] * n
        self.deal_no = 0
        #: Winner of the last deal with a result: the General of the current deal.
        self.general: int | None = None
        #: Consecutive deal wins of the General (0 while there is none).
        self.streak = 0
        self.over = False
        #: The deck as kinds: shuffling kinds deals the same cards as names.
        self._deck = tuple(INDEX[name] for name in game.deck())
        stacked = options["deck"]
        first = ([INDEX[name] for name in stacked] if stacked is not None
                 else deck_tools.shuffled(self._deck, self.rng))
        self._start_deal(0, first)

    # -- dealing --------------------------------------------------------------
    def _start_deal(self, leader: int, deck_top_first: list[int]) -> None:
        n = self.num_players
        self.deal_no += 1
        dealt, rest = deck_tools.deal(deck_top_first, n, self.hand_size, leader)
        assert not rest, "octablitz deals every card"
        self.hands: list[list[str]] = []
        self.sizes = [self.hand_size] * n
        self.counts: list[list[int]] = []
        #: levels[seat][c]: bitmask of the kinds the seat holds at least c times.
        self.levels: list[list[int]] = []
        for kinds in dealt:
            kinds.sort()
            self.hands.append([NAMES[kind] for kind in kinds])
            counts = [0] * NUM_KINDS
            levels = [0] * 6
            for kind in kinds:
                held = counts[kind] + 1
                counts[kind] = held
                levels[held] |= 1 << kind
            self.counts.append(counts)
            self.levels.append(levels)
        self.dealer = leader
        self.multiplier = self.streak + 1 if self.general is not None else 1
        self.turns = 0
        self.trick_no = 1
        self.tricks_won = [0] * n
        self.cards_taken = [0] * n
        self.taken: list[list[str]] = [[] for _ in range(n)]
        self.out_up: list[str] = []
        #: Each seat's face-down cards this deal, in canonical order (private).
        #: Tuples: the observation's ``my_down`` as it is, with no copy per observation.
        self.down: list[tuple[str, ...]] = [() for _ in range(n)]
        self._down_kinds: list[list[int]] = [[] for _ in range(n)]
        self.down_counts = [0] * n
        self._new_trick(leader)
        self._refresh_public()
        # Events appended as emit() would make them, without its keyword-argument dict.
        events = self.events
        events.append(new_event("hand_start", {
            "deal": self.deal_no, "dealer": leader, "general": self.general,
            "general_wins": self.streak, "multiplier": self.multiplier,
            "chips": list(self.chips), "hand_size": self.hand_size}))
        for seat in range(n):
            events.append(new_event(
                "deal", {"seat": seat, "cards": list(self.hands[seat])}, SEAT_ONLY[seat]))

    def _new_trick(self, leader: int) -> None:
        self.leader = leader
        self.to_play = leader
        self._deciding: tuple[int, ...] = SEAT_ONLY[leader]
        self.lead: Combo | None = None
        #: The observation's ``lead`` while there is one (shared: copied into each observation).
        self._lead_shape: dict[str, Any] = _NO_SHAPE
        #: must_play_down(to_play), kept for the seat to play (asked twice a step).
        self._must_down = False
        self.best_seat = leader
        self.best_strength = -1
        #: The cards of the best play so far (a parsed action's tuple).
        self.best_cards: tuple[str, ...] = ()
        self._best_play: _Play | None = None
        #: The plays of the trick in progress as the observation shows them
        #: (``trick_plays``); never mutated once made.
        self.trick_plays: list[dict[str, Any]] = []
        #: Face-up cards of the trick in progress that are already beaten.
        self.trick_up: list[str] = []

    # -- the State interface ----------------------------------------------------
    def deciding_seats(self) -> tuple[int, ...]:
        return () if self.over else self._deciding

    def is_terminal(self) -> bool:
        return self.over

    def _legal_actions(self, seat: int) -> Sequence[Action]:
        """Leader: every combination it can lead (by number of cards, multiples
        before runs, then strength).  Follower: every face-down choice
        (ascending), then every face-up play that beats the trick (ascending).
        Index 0 (lowest single lead / lowest cards face down) is always legal."""
        return self._lead_actions() if self.lead is None else self._follow_actions()

    def _lead_actions(self) -> tuple[Action, ...]:
        levels = self.levels[self.to_play]
        singles = _same_texts(_LEAD_HALVES[1], levels[1])
        runs = _LEAD_RUNS[_RUNS_HELD[levels[1] >> 2]]
        if not levels[2]:
            return singles + runs
        # Multiples by size, weakest first, runs between triples and quadruples
        # (the L kinds, one card each, never form a multiple).
        return (singles + _same_texts(_LEAD_HALVES[2], levels[2])
                + _same_texts(_LEAD_HALVES[3], levels[3]) + runs
                + _same_texts(_LEAD_HALVES[4], levels[4]) + _same_texts(_LEAD_HALVES[5], levels[5]))

    def _follow_actions(self) -> tuple[Action, ...]:
        lead = self.lead
        assert lead is not None
        seat = self.to_play
        levels = self.levels[seat]
        size = lead.count
        down = (_same_texts(_DOWN_HALVES, levels[1]) if size == 1
                else _down_texts(levels, self.counts[seat], size))
        if self._must_down:
            return down
        best = self.best_strength
        if lead.kind == RUN:
            return down + _UP_RUNS[best + 1][_RUNS_HELD[levels[1] >> 2]]
        return down + _same_texts(_UP_HALVES[size], levels[size] >> (best + 1) << (best + 1))

    def is_last_trick(self) -> bool:
        """True once the trick in progress has been led and is the deal's last."""
        return self.lead is not None and not self.hands[self.leader]

    def must_play_down(self, seat: int) -> bool:
        """The last-trick rule: a single led into the last trick must be
        followed face down by every player who has taken no trick."""
        lead = self.lead
        return (
            lead is not None
            and lead.count == 1
            and seat != self.leader
            and not self.hands[self.leader]
            and self.tricks_won[seat] == 0
        )

    def _apply(self, actions: Mapping[int, Action]) -> None:
        seat = self.to_play
        play = _parse(actions[seat])
        kinds, cards = play.kinds, play.cards
        counts = self.counts[seat]
        levels = self.levels[seat]
        hand = self.hands[seat]
        # An index loop: compiled, zip(..., strict=True) is a generic call with keywords.
        for i in range(len(kinds)):
            kind = kinds[i]
            levels[counts[kind]] ^= 1 << kind
            counts[kind] -= 1
            hand.remove(cards[i])
        self.sizes[seat] -= len(kinds)
        self.turns += 1
        if play.combo is None:
            self._play_down(seat, play)
        else:
            self._play_up(seat, play)
        public = self._public
        public["hand_sizes"] = tuple(self.sizes)
        public["turn_number"] = self.turns
        if len(self.trick_plays) == self.num_players:
            self._finish_trick()
            if not self.hands[self.leader]:
                self._end_deal(self.leader)
                return
        else:
            self.to_play = following = (seat + 1) % self.num_players
            self._deciding = SEAT_ONLY[following]
            self._must_down = self.must_play_down(following)
        if self.turns >= self.max_turns:
            self._end_deal(None)

    def _play_up(self, seat: int, play: _Play) -> None:
        public = self._public
        combo = play.combo
        assert combo is not None
        if play.verb == LEAD:
            self.lead = combo
            self._lead_shape = play.shape
            public["phase"] = "follow"
            public["last_trick"] = not self.hands[seat]
        self.trick_up.extend(self.best_cards)
        self.best_seat = seat
        self.best_strength = combo.strength
        self.best_cards = play.cards
        self._best_play = play
        self.trick_plays.append(_up_play(play, seat))
        public["best_seat"] = seat
        self.events.append(_up_event(play, seat, self.trick_no))

    def _play_down(self, seat: int, play: _Play) -> None:
        # Kept as kinds too: ordering ints is cheaper than ordering names by INDEX.
        # Each card inserted in place (nearly always one): cheaper than a sort.
        down_kinds = self._down_kinds[seat]
        for kind in play.kinds:
            i = len(down_kinds)
            while i and down_kinds[i - 1] > kind:
                i -= 1
            down_kinds.insert(i, kind)
        self.down[seat] = tuple([NAMES[kind] for kind in down_kinds])
        count = len(play.cards)
        self.down_counts[seat] += count
        self.trick_plays.append(_down_play(seat, count))
        self._public["down_counts"] = tuple(self.down_counts)
        # Appended directly rather than through emit(): this is the hot path.
        events = self.events
        events.append(_play_event(seat, self.trick_no, count))
        events.append(_down_event(play, seat, self.trick_no))

    def _finish_trick(self) -> None:
        winner = self.best_seat
        won = self.best_cards
        self.taken[winner].extend(won)
        self.tricks_won[winner] += 1
        self.cards_taken[winner] += len(won)
        self.out_up.extend(self.trick_up)
        best = self._best_play
        assert best is not None, "a trick is always led face up"
        self.events.append(_trick_end(best, self.trick_no, winner, not self.hands[winner]))
        self.trick_no += 1
        self._new_trick(winner)
        public = self._public
        public["phase"] = "lead"
        public["trick"] = self.trick_no
        public["leader"] = winner
        public["best_seat"] = None
        public["last_trick"] = False
        public["tricks_won"] = tuple(self.tricks_won)
        public["cards_taken"] = tuple(self.cards_taken)
        public["taken"] = tuple([tuple(cards) for cards in self.taken])
        public["out_up"] = tuple(self.out_up)

    def _end_deal(self, winner: int | None) -> None:
        """Settle a deal (``winner`` None: the turn cap ended it without a result,
        nothing changes and the same player leads the next deal)."""
        n = self.num_players
        general = self.general
        if winner is None:
            change = [0] * n
            next_leader = self.dealer
        else:
            change = deal_payments(n, winner, self.cards_taken, general, self.multiplier)
            self.streak = self.streak + 1 if winner == general else 1
            self.general = winner
            next_leader = winner
        for seat in range(n):
            self.chips[seat] += change[seat]
        self.events.append(new_event("hand_end", {
            "deal": self.deal_no,
            "result": "capped" if winner is None else "won",
            "winner": winner,
            "general": general,
            "multiplier": self.multiplier,
            "tricks_won": list(self.tricks_won),
            "cards_taken": list(self.cards_taken),
            "taken": [list(cards) for cards in self.taken],
            "payments": change,
            "chips": list(self.chips)}))
        if self.deal_no >= self.deals or min(self.chips) <= 0:
            self.over = True
            self._deciding = ()
            self.emit("game_end", deals_played=self.deal_no, chips=list(self.chips))
            self._refresh_public()
            return
        self._start_deal(next_leader, deck_tools.shuffled(self._deck, self.rng))

    #: A lead's shape and the trick's entries are memos shared by every game
    #: (copied into each observation, never changed); ``[*]``: the items only.
    _clone_shares = frozenset({"_lead_shape", "trick_plays[*]"})

    def _copy_into(self, other: OctablitzState) -> None:
        """Field by field (the generic copy costs several times more); every
        attribute set in ``__init__`` appears here (test_contract checks)."""
        other.base = self.base
        other.hand_size = self.hand_size
        other.deals = self.deals
        other.max_turns = self.max_turns
        other.chips = self.chips[:]
        other.deal_no = self.deal_no
        other.general = self.general
        other.streak = self.streak
        other.over = self.over
        other._deck = self._deck
        other.hands = [hand[:] for hand in self.hands]
        other.sizes = self.sizes[:]
        other.counts = [counts[:] for counts in self.counts]
        other.levels = [levels[:] for levels in self.levels]
        other.dealer = self.dealer
        other.multiplier = self.multiplier
        other.turns = self.turns
        other.trick_no = self.trick_no
        other.tricks_won = self.tricks_won[:]
        other.cards_taken = self.cards_taken[:]
        other.taken = [cards[:] for cards in self.taken]
        other.out_up = self.out_up[:]
        other.down = self.down[:]
        other._down_kinds = [kinds[:] for kinds in self._down_kinds]
        other.down_counts = self.down_counts[:]
        other.leader = self.leader
        other.to_play = self.to_play
        other._deciding = self._deciding
        other.lead = self.lead
        other._lead_shape = self._lead_shape
        other._must_down = self._must_down
        other.best_seat = self.best_seat
        other.best_strength = self.best_strength
        other.best_cards = self.best_cards
        other._best_play = self._best_play
        other.trick_plays = self.trick_plays[:]
        other.trick_up = self.trick_up[:]
        other._public = self._public.copy()  # tuples and numbers, updated key by key

    # -- what a seat sees ---------------------------------------------------------
    def hand(self, seat: int) -> list[str]:
        """The cards ``seat`` holds, in canonical order."""
        return list(self.hands[seat])

    def _refresh_public(self) -> None:
        """Rebuild the public fields of the observation (the rules page's, list
        fields as tuples).  The envelope and the private fields are
        placeholders, set per observation, so that filling them in never grows
        the copied dict; ``lead`` and ``trick_plays`` hold dicts, so each
        observation gets copies."""
        lead = self.lead
        self._public: Observation = {
            "game": self.game.name, "seat": None, "players": self.num_players, "to_move": (),
            "phase": "over" if self.over else ("lead" if lead is None else "follow"),
            "deal": self.deal_no,
            "deals": self.deals,
            "dealer": self.dealer,
            "general": self.general,
            "general_wins": self.streak,
            "multiplier": self.multiplier,
            "base": self.base,
            "chips": tuple(self.chips),
            "hand_sizes": tuple(self.sizes),
            "trick": self.trick_no,
            "leader": self.leader,
            "lead": None,
            "trick_plays": (),
            "best_seat": None if lead is None else self.best_seat,
            "last_trick": lead is not None and not self.hands[self.leader],
            "tricks_won": tuple(self.tricks_won),
            "cards_taken": tuple(self.cards_taken),
            "taken": tuple([tuple(cards) for cards in self.taken]),
            "out_up": tuple(self.out_up),
            "down_counts": tuple(self.down_counts),
            "turn_number": self.turns,
            "max_turns": self.max_turns,
            "hand": (), "must_play_down": False, "my_down": (),
        }

    def _observation(self, seat: int | None) -> Observation:
        """The game's fields of the rules page (the base adds the envelope).  A
        spectator (``None``) gets all but ``hand``, ``must_play_down`` and
        ``my_down``: no card in a hand and no face-down card."""
        obs = self._public.copy()
        lead = self.lead
        if lead is not None:
            obs["lead"] = self._lead_shape.copy()
        if self.trick_plays:
            obs["trick_plays"] = [play.copy() for play in self.trick_plays]
        if seat is None:
            del obs["hand"], obs["must_play_down"], obs["my_down"]
        else:
            obs["hand"] = tuple(self.hands[seat])
            if seat == self.to_play and self._must_down and not self.over:
                obs["must_play_down"] = True
            obs["my_down"] = self.down[seat]
        return obs

    # -- results -------------------------------------------------------------------
    def _scores(self) -> list[float]:
        """Final chips of every seat."""
        return list(self.chips)

    def reveal(self) -> dict[str, Any]:
        """Chips and the last deal's public outcome; face-down cards stay hidden."""
        return {
            "chips": list(self.chips),
            "deals_played": self.deal_no,
            "general": self.general,
            "general_wins": self.streak,
            "taken": [list(cards) for cards in self.taken],
            "tricks_won": list(self.tricks_won),
        }

    def zones(self) -> dict[str, list[str]]:
        """Where every card of the current deal is, for conservation checks:
        hands, the trick in progress, taken piles, face-up and face-down out of play."""
        out: dict[str, list[str]] = {}
        for seat in range(self.num_players):
            out[f"hand{seat}"] = list(self.hands[seat])
            out[f"taken{seat}"] = list(self.taken[seat])
            out[f"down{seat}"] = list(self.down[seat])
        out["trick"] = self.trick_up + list(self.best_cards)
        out["out_up"] = list(self.out_up)
        return out


GAME = Octablitz
