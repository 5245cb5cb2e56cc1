"""Determinised Monte Carlo search over the game engines, for the search bots.

A search bot keeps the events of the current hand.  For each decision it
repeats, until its time is up:

1. **Determinise**: deal the cards it has not seen at random, consistently with
   everything it saw (:func:`stack_deck`): its own dealt and drawn cards, the
   cards each opponent showed (a card an opponent played face up came from its
   deal or a stock draw made before, unless everyone saw it take that card), the
   hand sizes.  The result is a stacked deck (the engines' documented ``deck``
   option, top card first) for a one-hand game of the same options.
2. **Replay** the hand's actions on that deck (seats turned so that the
   virtual game's first player is the real one): the engine itself reaches
   the position, so every hidden card lies where the rules put it.  A
   determinisation under which an opponent's past action would be illegal is
   drawn again.
3. **Roll out** every legal action on a :meth:`~arena.games.base.State.clone`
   of it with a fast policy for every seat, to the end of the hand or a
   horizon, and add up each action's value (the same determinisations for every
   action, so their differences are paired).

It plays the action with the best mean, the heuristic's choice among equals,
and stops early when the leader is clear.  Positions it cannot rebuild (a
reshuffle this hand: the engine's shuffle decides those cards) go to the
game's heuristic.

Pure engines only (``arena.games``): no trio, no ``arena`` runtime.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from arena.games import game_class
from arena.games.base import Action, GameError, State
from protocol import Bot, Request, run

#: Share of the free move time a decision may plan to use (the rest is the margin).
MOVE_SHARE = 0.4
#: Share of it after which a search gives up, rollouts unfinished, for the heuristic.
HARD_SHARE = 0.7
#: Determinisations drawn before giving up on one position.
ATTEMPTS = 30
#: The opponents' latest actions that weigh a determinisation (see SearchBot.replay).
MODEL_WINDOW = 12
#: Chance of keeping a determinisation for each opponent action under it that
#: a sensible player would not have played (see SearchBot.position).
SURPRISE = 0.05
#: Legal deals drawn before the least surprising one is taken.
MODEL_TRIES = 8
#: Determinisations before the early stop may end a search.
MIN_ROUNDS = 6
#: Play another action than the heuristic's only when its paired lead is this
#: many standard errors.
TRUST = 1.0
#: Actions this many standard errors behind the leader are no longer rolled out.
PRUNE = 2.0
#: The leader is clear when its paired lead over every other action is this
#: many standard errors.
CLEAR_LEAD = 3.0

Choose = Callable[[dict[str, Any], list[str]], int]
#: Places one opponent's cards in its slots: (history, seat, its (time,
#: position) slots in time order, the ``(time, card)`` it showed that came from
#: them, in time order, the deck positions (None: not dealt yet), the shuffled
#: unseen cards to take its hidden cards from, rng).  Raises Retry to give up.
Dealer = Callable[["History", int, list[tuple[int, int]], list[tuple[int, str]],
                   list[str | None], list[str], random.Random], None]


class Retry(Exception):
    """This determinisation cannot explain the hand: draw another."""


class Unsupported(Exception):
    """The position cannot be rebuilt (a reshuffle this hand, or a history
    that no deal explains); the bot plays its heuristic instead."""


@dataclass
class History:
    """The current hand as one seat saw it: what the deck stacking and the
    replay need.  Times are indexes into the hand's events."""

    #: Real seats in dealing order (the hand's first player first).
    order: list[int]
    hand_size: int
    #: The searching seat's dealt cards.
    dealt: list[str] = field(default_factory=list)
    #: Cards turned face up between the deal and the stock, top first.
    specials: list[str] = field(default_factory=list)
    #: One ``[seat, time, card]`` per stock draw, in order (``card`` None
    #: when hidden from the searching seat).
    draws: list[list[Any]] = field(default_factory=list)
    #: ``(seat, card, time)``: a face-up card entered a hand.
    takes: list[tuple[int, str, int]] = field(default_factory=list)
    #: ``(seat, card, time)``: a card left a hand face up.
    reveals: list[tuple[int, str, int]] = field(default_factory=list)
    #: ``(seat, action)`` in order: the hand so far.
    actions: list[tuple[int, Action]] = field(default_factory=list)

    def drew(self, seat: int, time: int) -> None:
        self.draws.append([seat, time, None])

    def saw_draw(self, card: str) -> None:
        """The searching seat learns the card of its latest draw."""
        self.draws[-1][2] = card

    def reveal(self, seat: int, cards: Sequence[str], time: int) -> None:
        self.reveals.extend((seat, card, time) for card in cards)


def _needs(history: History, seat: int) -> list[tuple[int, str]]:
    """``(time, card)`` for each card ``seat`` showed that it did not take in
    view of everyone: it came from its deal or an earlier stock draw."""
    moves = sorted([(t, 0, c) for s, c, t in history.takes if s == seat]
                   + [(t, 1, c) for s, c, t in history.reveals if s == seat])
    known: Counter[str] = Counter()
    needs = []
    for when, kind, card in moves:
        if kind == 0:
            known[card] += 1
        elif known[card]:
            known[card] -= 1
        else:
            needs.append((when, card))
    return needs


def stack_deck(history: History, me: int, deck: Sequence[str], rng: random.Random,
               deal_to: Dealer | None = None) -> list[str]:
    """A deck, top card first, that deals this hand as ``me`` saw it, the
    hidden cards at random.

    ``deal_to`` places each opponent's shown cards in its deal or draw slots
    (default :func:`place_shown`: at random before it showed them); a game
    whose past actions say something about an opponent's hidden cards also
    deals those there, from the shuffled unseen cards.  The unseen cards left
    are spread over the remaining positions."""
    order = history.order
    seats = len(order)
    positions: list[str | None] = [None] * len(deck)
    slots: dict[int, list[tuple[int, int]]] = {seat: [] for seat in order}
    for position in range(seats * history.hand_size):
        slots[order[position % seats]].append((-1, position))
    position = seats * history.hand_size
    for card in history.specials:
        positions[position] = card
        position += 1
    for seat, when, card in history.draws:
        if seat == me:
            positions[position] = card
        else:
            slots[seat].append((when, position))
        position += 1
    for (_, slot), card in zip(slots[me], history.dealt, strict=True):
        positions[slot] = card
    needs = {seat: _needs(history, seat) for seat in order if seat != me}
    placed = Counter(c for c in positions if c is not None)
    placed.update(card for shown in needs.values() for _, card in shown)
    unseen = list((Counter(deck) - placed).elements())
    if len(unseen) + placed.total() != len(deck):
        raise Unsupported("the cards seen do not fit the deck")
    rng.shuffle(unseen)
    for seat, shown in needs.items():
        (deal_to or place_shown)(history, seat, sorted(slots[seat]), shown, positions, unseen, rng)
    fill = iter(unseen)
    return [card if card is not None else next(fill) for card in positions]


def place_shown(history: History, seat: int, slots: list[tuple[int, int]],
                shown: list[tuple[int, str]], positions: list[str | None],
                unseen: list[str], rng: random.Random) -> None:
    """The default :data:`Dealer`: each card ``seat`` showed in a random free
    slot before it showed it, the earliest shown first (so every later card
    still finds a slot whenever any assignment exists)."""
    free = list(slots)
    for when, card in shown:
        choices = sum(1 for slot_time, _ in free if slot_time < when)
        if not choices:
            raise Unsupported(f"no deal or draw explains {card}")
        _, slot = free.pop(rng.randrange(choices))
        positions[slot] = card


@dataclass(frozen=True)
class Settings:
    """How long and how hard a search bot thinks (command line: ``--think
    SECONDS``, ``--iterations N``, ``--seed S``)."""

    #: Most seconds per decision; never more than MOVE_SHARE of the free move time.
    think: float = 0.2
    #: Most determinisations per decision (each rolls out every legal action).
    iterations: int = 1000
    seed: int = 0

    @classmethod
    def parse(cls, argv: Sequence[str]) -> Settings:
        """Settings from ``--think S --iterations N --seed S`` (also ``=`` forms)."""
        usage = "usage: [--think SECONDS] [--iterations N] [--seed S]"
        values: dict[str, str] = {}
        args = list(argv)
        while args:
            flag, _, value = args.pop(0).partition("=")
            if flag not in ("--think", "--iterations", "--seed") or (not value and not args):
                sys.exit(f"{usage}\nunexpected argument {flag!r}")
            values[flag[2:]] = value or args.pop(0)
        try:
            settings = cls(think=float(values.get("think", cls.think)),
                           iterations=int(values.get("iterations", cls.iterations)),
                           seed=int(values.get("seed", cls.seed)))
        except ValueError as error:
            sys.exit(f"{usage}\n{error}")
        if settings.think <= 0 or settings.iterations < 1:
            sys.exit(f"{usage}\nthink and iterations must be positive")
        return settings


class SearchBot(Bot):
    """A determinised Monte Carlo bot; a game's subclass says how to read its
    events (:meth:`parse`), build its one-hand game (:meth:`virtual_options`,
    :meth:`virtual_seats`), play rollouts (:meth:`policy`) and judge a
    position cut off at the horizon (:meth:`leaf`)."""

    game: ClassVar[str]
    #: The private event that shows the searching seat the card it drew.
    drawn_kind: ClassVar[str] = "drawn"
    #: Most decisions a rollout plays before :meth:`leaf` judges the position.
    horizon: ClassVar[int] = 1000

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.rng = random.Random(self.settings.seed)
        self.options: dict[str, Any] = {}
        self.players = 0
        self.seat = 0
        self.events: list[dict[str, Any]] = []
        #: The observation of the decision being searched.
        self.observation: dict[str, Any] = {}
        #: Seat of the one-hand game -> real seat, for the decision being searched.
        self.real: dict[int, int] = {}
        #: Decisions searched, and those left to the heuristic, per reason.
        self.searched = 0
        self.determinisations = 0
        self.fallbacks: Counter[str] = Counter()

    # -- what a game's subclass provides ----------------------------------------
    def heuristic(self, observation: dict[str, Any], legal: list[str]) -> int:
        """The game's heuristic bot: what the search must beat to change the
        choice, and what plays where there is no search."""
        raise NotImplementedError

    def parse(self, events: Sequence[Mapping[str, Any]]) -> History:
        """The hand's history from its events (``hand_start`` first): the
        searching seat's deal and drawn cards here, the rest by :meth:`read`."""
        if not events or events[0].get("kind") != "hand_start":
            raise Unsupported("no hand_start seen")
        history = self.start(events[0])
        for when, event in enumerate(events):
            kind = event["kind"]
            if kind == "deal":
                history.dealt = list(event["cards"])
            elif kind == self.drawn_kind:
                history.saw_draw(event["card"])
            elif kind == "reshuffle":
                raise Unsupported("reshuffle")
            else:
                self.read(history, event, when)
        return history

    def candidates(self, legal: Sequence[Action], fallback: int) -> list[int]:
        """The legal actions worth searching.  Default: all."""
        return list(range(len(legal)))

    def start(self, hand_start: Mapping[str, Any]) -> History:
        """An empty history from the ``hand_start`` event."""
        raise NotImplementedError

    def read(self, history: History, event: Mapping[str, Any], when: int) -> None:
        """Add one of the hand's public events to ``history``: the action it
        shows, the stock draws, takes and reveals."""
        raise NotImplementedError

    def virtual_options(self, history: History) -> dict[str, Any]:
        """Options of the one-hand game (``deck`` is added)."""
        raise NotImplementedError

    def virtual_seats(self, history: History) -> dict[int, int]:
        """Real seat -> seat in the one-hand game."""
        raise NotImplementedError

    def policy(self, state: State, seat: int, rng: random.Random) -> Action:
        """The rollouts' action for ``seat``."""
        raise NotImplementedError

    def leaf(self, state: State) -> list[float]:
        """Likely final scores of a hand cut off at the horizon.  Default: 0 each."""
        return [0.0] * state.num_players

    def value(self, scores: Sequence[float], me: int) -> float:
        """What the one-hand game's final ``scores`` are worth to ``me`` (a
        seat of that game; :attr:`real` maps them back).  Default: its score
        against the others' mean, higher is better."""
        others = (sum(scores) - scores[me]) / (len(scores) - 1)
        higher = game_class(self.game).score_order == "higher"
        return scores[me] - others if higher else others - scores[me]

    def deal_to(self, history: History, seat: int, slots: list[tuple[int, int]],
                shown: list[tuple[int, str]], positions: list[str | None],
                unseen: list[str], rng: random.Random) -> None:
        """Place an opponent's cards (see :data:`Dealer`).  Default:
        :func:`place_shown`, hidden cards left to chance."""
        place_shown(history, seat, slots, shown, positions, unseen, rng)

    # -- the SDK's hooks --------------------------------------------------------
    def on_match_start(self, message: dict[str, Any]) -> None:
        self.options = dict(message.get("options", {}))
        self.players = int(message.get("players", 0))

    def on_game_start(self, message: dict[str, Any]) -> None:
        self.seat = int(message.get("seat", 0))
        self.players = int(message.get("players", self.players))
        self.events = []

    def on_game_end(self, message: dict[str, Any]) -> None:
        if self.fallbacks:
            print(f"{self.name}: searched {self.searched} decisions, heuristic for "
                  f"{dict(self.fallbacks)}", file=sys.stderr)
        self.searched = 0
        self.fallbacks.clear()

    def choose(self, request: Request) -> int:
        self.note(request.events)
        self.observation = request.observation
        legal = request.legal
        if len(legal) == 1:
            return 0
        start = time.monotonic()
        fallback = self.heuristic(request.observation, legal)
        if len(self.candidates(legal, fallback)) < 2:
            return fallback
        try:
            history = self.parse(self.events)
        except Unsupported as why:
            self.fallbacks[str(why)] += 1
            return fallback
        move = _move_seconds(request.time)
        budget = min(self.settings.think, MOVE_SHARE * move)
        index = self.search(history, legal, fallback, start + budget, start + HARD_SHARE * move)
        if index is None:
            self.fallbacks["no determinisation"] += 1
            return fallback
        self.searched += 1
        return index

    def note(self, events: Sequence[Mapping[str, Any]]) -> None:
        """Keep the current hand's events (a ``hand_start`` starts afresh)."""
        for event in events:
            if event.get("kind") == "hand_start":
                self.events = []
            self.events.append(dict(event))

    # -- the search ---------------------------------------------------------------
    def search(self, history: History, legal: Sequence[Action], fallback: int,
               deadline: float, hard: float) -> int | None:
        """Index of the best action by paired rollouts until ``deadline``, the
        iteration cap or a clear leader; None if no position could be built,
        or not even one round of rollouts by ``hard``.  Actions clearly behind
        the leader stop being rolled out."""
        seats = self.virtual_seats(history)
        me = seats[self.seat]
        self.real = {virtual: seat for seat, virtual in seats.items()}
        values: dict[int, list[float]] = {i: [] for i in self.candidates(legal, fallback)}
        rounds = 0
        while rounds < self.settings.iterations:
            state = self.position(history, seats, legal, hard)
            if state is None:
                break
            row = {}
            for i in values:
                now = time.monotonic()
                if now > hard or (rounds and now > deadline):
                    break
                after = state.clone()
                after.apply_action(legal[i])
                row[i] = self.rollout(after, me)
            if len(row) < len(values):
                break
            for i, value in row.items():
                values[i].append(value)
            rounds += 1
            if rounds >= MIN_ROUNDS:
                _prune(values)
            if time.monotonic() > deadline or _clear(values):
                break
        if not rounds:
            return None
        self.determinisations += rounds
        return _best(values, fallback)

    def position(self, history: History, seats: Mapping[int, int],
                 legal: Sequence[Action], hard: float = float("inf")) -> State | None:
        """A determinised state at this decision, or None when ATTEMPTS deals
        each made some past action illegal (or ``hard`` has passed).

        A deal that explains the opponents' recent actions the way
        :meth:`likely` expects is likelier: one with ``m`` unexpected actions
        is kept with probability SURPRISE ** m, and after MODEL_TRIES such
        deals the least surprising one is taken."""
        options = self.virtual_options(history)
        game_type = game_class(self.game)
        me = seats[self.seat]
        deck = game_type(len(seats), options).deck()
        best: tuple[int, State] | None = None
        tried = 0
        for _ in range(ATTEMPTS):
            if time.monotonic() > hard:
                break
            try:
                options["deck"] = stack_deck(history, self.seat, deck, self.rng, self.deal_to)
                state = game_type(len(seats), options).new_state(self.rng.getrandbits(32))
                surprises = self.replay(state, history.actions, seats)
            except Retry:
                continue
            if state.deciding_seats() != (me,):
                raise Unsupported("the rebuilt hand has another seat to move")
            if list(state.legal_actions(me)) != list(legal):
                raise Unsupported("the rebuilt position has other legal actions")
            if self.rng.random() < SURPRISE ** surprises:
                return state
            if best is None or surprises < best[0]:
                best = surprises, state
            tried += 1
            if tried == MODEL_TRIES:
                break
        return None if best is None else best[1]

    def replay(self, state: State, actions: Sequence[tuple[int, Action]],
               seats: Mapping[int, int]) -> int:
        """Apply the hand's actions (Retry when one is illegal on this deal);
        return how many of the opponents' last MODEL_WINDOW actions
        :meth:`likely` did not expect."""
        surprises = 0
        window = len(actions) - MODEL_WINDOW
        for step, (seat, action) in enumerate(actions):
            virtual = seats[seat]
            if state.deciding_seats() != (virtual,):
                raise Unsupported("the rebuilt hand has another seat to move")
            if step >= window and seat != self.seat and not self.likely(state, virtual, action):
                surprises += 1
            try:
                state.apply_action(action)
            except GameError:
                raise Retry from None
        return surprises

    def likely(self, state: State, seat: int, action: Action) -> bool:
        """Whether a sensible player in ``seat`` would play ``action`` here.
        Default: it is what the rollout policy plays."""
        return self.policy(state, seat, self.rng) == action

    def rollout(self, state: State, me: int) -> float:
        """Play ``state`` on with :meth:`policy` for every seat; ``me``'s value."""
        rng = self.rng
        policy = self.policy
        for _ in range(self.horizon):
            if state.is_terminal():
                return self.value(state.scores(), me)
            seat = state.deciding_seats()[0]
            state.apply_action(policy(state, seat, rng))
        return self.value(self.leaf(state), me)


def play_order(first: int, players: int) -> list[int]:
    """The seats in turn order, from ``first`` round the table."""
    return [(first + i) % players for i in range(players)]


def seats_after_dealer(history: History) -> dict[int, int]:
    """Real seat -> seat of a one-hand game dealt by seat 0 (so its seat 1
    plays first), for games whose hand starts left of the dealer."""
    n = len(history.order)
    return {seat: (1 + i) % n for i, seat in enumerate(history.order)}


def _move_seconds(clock: Mapping[str, Any]) -> float:
    return float(clock.get("move_ms", 1000)) / 1000.0


def share(mine: float, theirs: float) -> float:
    """A rough chance of outlasting a player, from what each can still afford
    (points to a limit, chips, ...): ``mine / (mine + theirs)``; nothing left
    loses, unless the other has less."""
    if mine <= 0 or theirs <= 0:
        return 0.5 if mine == theirs else float(mine > theirs)
    return mine / (mine + theirs)


def _lead(first: Sequence[float], second: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of ``first``'s paired lead over ``second``."""
    rounds = len(first)
    diffs = [a - b for a, b in zip(first, second, strict=True)]
    mean = sum(diffs) / rounds
    if rounds < 2:
        return mean, float("inf")
    var = sum((d - mean) ** 2 for d in diffs) / (rounds - 1)
    return mean, (var / rounds) ** 0.5


def _leader(values: Mapping[int, list[float]]) -> int:
    return max(values, key=lambda i: sum(values[i]))


def _prune(values: dict[int, list[float]]) -> None:
    """Stop rolling out the actions PRUNE standard errors behind the leader."""
    leader = values[_leader(values)]
    for i in list(values):
        mean, error = _lead(leader, values[i])
        if mean > PRUNE * error:
            del values[i]


def _best(values: Mapping[int, list[float]], fallback: int) -> int:
    """The action with the best mean, unless its lead over the fallback's
    (the heuristic's) is within TRUST standard errors: the best of many noisy
    means is often just the luckiest (the winner's curse)."""
    best = _leader(values)
    if fallback not in values:
        return best
    mean, error = _lead(values[best], values[fallback])
    return best if mean > TRUST * error else fallback


def _clear(values: Mapping[int, list[float]]) -> bool:
    """Whether one action is left, or the leader's paired lead over every
    other is clear or nil (they scored the same in every determinisation)."""
    leader = _leader(values)
    if len(values) > 1 and len(values[leader]) < MIN_ROUNDS:
        return False
    for i, column in values.items():
        mean, error = _lead(values[leader], column)
        if i != leader and mean and mean <= CLEAR_LEAD * error:
            return False
    return True


def main(bot_type: type[SearchBot], *, name: str) -> None:
    """Run a search bot with settings from the command line."""
    bot = bot_type(Settings.parse(sys.argv[1:]))
    bot.name, bot.version, bot.author = name, "1", "Five Arena"
    run(bot)
