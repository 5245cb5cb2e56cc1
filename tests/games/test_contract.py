"""The State contract of ``arena/games/base.py``, checked the same way on every
game and every allowed player count, through random legal playouts.

Each test plays a few random games (hypothesis picks the deal seed and the
seed of the random decisions) with options that keep games short, and checks
one part of the contract at every step.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import game_class, game_names, make_game
from arena.games.base import (
    Action,
    GameError,
    GameNotOverError,
    IllegalActionError,
    Observation,
    State,
)
from tests.playout import visible_strings

#: Options that keep a game to a few hands of at most 60 turns (long enough
#: for the stock to run out and be reshuffled, which exercises the RNG).
FAST_OPTIONS: dict[str, dict[str, Any]] = {
    "furious-five": {"rounds": 2, "max_turns": 60},
    "five": {"max_hands": 3, "max_turns": 60},
    "five-or-less": {"max_hands": 3, "max_turns": 60},
    "five-card-rummy": {"max_hands": 3, "max_turns": 60},
    "rummy-five": {"deals": 2, "max_turns": 60},
    "octablitz": {"deals": 2, "max_turns": 60},
}

#: Each engine's own inspection method listing every card by place (not part
#: of the contract; used for the card-conservation check).
ZONES: dict[str, str] = {
    "furious-five": "card_locations",
    "five": "zones",
    "five-or-less": "cards_in_play",
    "rummy-five": "card_census",
    "octablitz": "zones",
    "five-card-rummy": "card_zones",
}

CASES = [
    pytest.param(name, n, id=f"{name}-{n}")
    for name in game_names()
    for n in range(game_class(name).min_players, game_class(name).max_players + 1)
]

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
PLAYOUTS = settings(
    max_examples=3, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

Snapshot = tuple[list[Observation], list[tuple[Action, ...]], list[dict[str, Any]],
                 tuple[int, ...]]


def new_state(name: str, n: int, seed: int) -> State:
    return make_game(name, n, FAST_OPTIONS[name]).new_state(seed)


def views(state: State) -> list[Observation]:
    """Every seat's observation, then the spectator's."""
    return [state.observation(seat) for seat in range(state.num_players)] + [
        state.observation(None)
    ]


def snapshot(state: State) -> Snapshot:
    """Everything the contract lets a caller see of a state."""
    return (
        views(state),
        [state.legal_actions(seat) for seat in range(state.num_players)],
        [event.to_dict() for event in state.events],
        state.deciding_seats(),
    )


def random_decisions(state: State, rng: random.Random) -> dict[int, Action]:
    return {seat: rng.choice(state.legal_actions(seat)) for seat in state.deciding_seats()}


def playout(state: State, rng: random.Random) -> Iterator[dict[int, Action]]:
    """Play random legal decisions to the end; yields each step's decisions
    before applying them (a test may inspect the state at that point)."""
    steps = 0
    while not state.is_terminal():
        decisions = random_decisions(state, rng)
        yield decisions
        state.apply_actions(decisions)
        steps += 1
        assert steps < 20_000, "the game did not end"


def played_into(state: State, steps: int, rng: random.Random) -> State:
    """``state`` after ``steps`` random steps (or at its end if sooner)."""
    for step, _decisions in enumerate(playout(state, rng)):
        if step == steps:
            break
    return state


def cards_in(state: State, observation: Observation) -> set[str]:
    """The deck's cards named anywhere in an observation."""
    deck = set(state.game.deck())
    return {s for s in visible_strings(observation) if s in deck}


def contract_test(test: Callable[[str, int, int, int], None]) -> Any:
    """Run ``test(name, n, deal_seed, decision_seed)`` on every game and
    player count, a few seeds each."""
    return pytest.mark.parametrize(("name", "n"), CASES)(
        PLAYOUTS(given(deal_seed=SEEDS, decision_seed=SEEDS)(test))
    )


@contract_test
def test_legal_actions_are_shared_tuples_and_empty_for_others(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    state = new_state(name, n, deal_seed)
    rng = random.Random(decision_seed)
    while not state.is_terminal():
        deciding = state.deciding_seats()
        for seat in range(n):
            legal = state.legal_actions(seat)
            assert isinstance(legal, tuple)
            if seat not in deciding:
                assert legal == ()
                continue
            assert legal and len(set(legal)) == len(legal), legal
            assert state.legal_actions(seat) is legal  # one object per step
            assert state.default_action(seat) == legal[0]
        assert state.legal_actions(n) == () and state.legal_actions(-1) == ()
        held = [(legal, list(legal)) for legal in map(state.legal_actions, deciding)]
        state.apply_actions(random_decisions(state, rng))
        for legal, copied in held:
            assert list(legal) == copied  # what a caller holds never changes under it
    assert state.deciding_seats() == ()
    assert all(state.legal_actions(seat) == () for seat in range(n))


def bad_decision_sets(state: State, decisions: dict[int, Action]) -> list[dict[int, Action]]:
    """Decision sets the contract must refuse: an action that is not legal
    for one seat, a deciding seat missing, a seat that does not decide."""
    bad: list[dict[int, Action]] = [{}]
    for seat in decisions:
        bad.append({**decisions, seat: "not an action"})
        bad.append({s: a for s, a in decisions.items() if s != seat})
        for other in state.deciding_seats():
            # Another seat's action is only wrong if this seat may not play it.
            if other != seat:
                foreign = state.legal_actions(other)[-1]
                if foreign not in state.legal_actions(seat):
                    bad.append({**decisions, seat: foreign})
    idle = [seat for seat in range(state.num_players) if seat not in decisions]
    if idle:
        bad.append({**decisions, idle[0]: "pass"})
        bad.append({idle[0]: "pass"})
    bad.append({**decisions, state.num_players: "pass"})
    return bad


@contract_test
def test_illegal_decisions_raise_and_change_nothing(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    state = new_state(name, n, deal_seed)
    rng = random.Random(decision_seed)
    for decisions in playout(state, rng):
        if rng.random() > 0.25:
            continue
        before = snapshot(state)
        for bad in bad_decision_sets(state, decisions):
            with pytest.raises(IllegalActionError):
                state.apply_actions(bad)
            assert snapshot(state) == before, bad
        if len(decisions) != 1:
            with pytest.raises(IllegalActionError):
                state.apply_action(next(iter(decisions.values())))
            assert snapshot(state) == before
    with pytest.raises(IllegalActionError):
        state.apply_actions({0: "pass"})


@contract_test
def test_scores_and_places_only_at_the_end(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    state = new_state(name, n, deal_seed)
    assert issubclass(GameNotOverError, GameError)
    for _decisions in playout(state, random.Random(decision_seed)):
        with pytest.raises(GameNotOverError):
            state.scores()
        with pytest.raises(GameNotOverError):
            state.places()
    scores, places = state.scores(), state.places()
    assert len(scores) == n
    assert all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores)
    assert len(places) == n and all(isinstance(p, int) and 1 <= p <= n for p in places)
    assert min(places) == 1
    assert (state.scores(), state.places()) == (scores, places)


@contract_test
def test_clone_is_independent_and_plays_on_identically(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    rng = random.Random(decision_seed)
    state = played_into(new_state(name, n, deal_seed), rng.randrange(40), rng)
    clone = state.clone()
    assert clone is not state and type(clone) is type(state)
    assert clone.game is state.game and clone.events is not state.events
    assert snapshot(clone) == snapshot(state)
    while not clone.is_terminal():
        before = snapshot(state)
        decisions = random_decisions(clone, rng)
        clone.apply_actions(decisions)
        assert snapshot(state) == before  # playing on the clone leaves the original alone
        state.apply_actions(decisions)
        assert snapshot(clone) == snapshot(state)
    assert state.is_terminal()
    assert (clone.scores(), clone.places()) == (state.scores(), state.places())


#: Attributes a clone shares with its original by design (base.State.clone):
#: the game, the RNG and the count of its holders until one draws.
SHARED_BY_DESIGN = frozenset({"game", "_rng", "_rng_holders"})
_IMMUTABLE = (int, float, str, bool, type(None), bytes, frozenset, range)


def attributes(state: State) -> dict[str, Any]:
    """Every attribute of a state, compiled (native attributes) or not."""
    return dict(state.__getstate__() or {})


def frozen_dataclass(value: Any) -> bool:
    """A frozen dataclass (a parsed play, a combo): shared by clones by design."""
    params = getattr(type(value), "__dataclass_params__", None)
    return params is not None and params.frozen


def shared_mutables(one: Any, other: Any, path: str) -> Iterator[str]:
    """Where ``one`` and ``other`` (equal values) hold the same mutable object."""
    if isinstance(one, _IMMUTABLE) or frozen_dataclass(one):
        return
    if one is other and not isinstance(one, tuple):
        yield path
    elif isinstance(one, (list, tuple)):
        for i, (a, b) in enumerate(zip(one, other, strict=True)):
            yield from shared_mutables(a, b, f"{path}[{i}]")
    elif isinstance(one, dict):
        for key in one:
            yield from shared_mutables(one[key], other[key], f"{path}[{key!r}]")
    elif not isinstance(one, (set, bytearray)):
        for name, value in attributes(one).items():
            yield from shared_mutables(value, attributes(other)[name], f"{path}.{name}")


@contract_test
def test_a_clone_has_every_attribute_and_shares_nothing_mutable(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    """A game's own ``_copy_into`` must copy every field: one it forgets is missing
    or shared, and a shared list is a hand two searches both change (a game
    names in ``_clone_shares`` what it only ever replaces, ``name[*]`` when
    only the items of a list it copies are shared)."""
    rng = random.Random(decision_seed)
    state = played_into(new_state(name, n, deal_seed), rng.randrange(40), rng)
    if not state.is_terminal():
        state.legal_actions(state.deciding_seats()[0])  # fills the legal-action cache
    mine, theirs = attributes(state), attributes(state.clone())
    assert sorted(theirs) == sorted(mine)
    shared = SHARED_BY_DESIGN | type(state)._clone_shares
    for field in sorted(set(mine) - SHARED_BY_DESIGN - {"_undo"}):
        if field == "events":  # the list is the clone's own; events are immutable
            assert theirs[field] is not mine[field] and theirs[field] == mine[field]
            continue
        assert theirs[field] == mine[field] or field == "_legal_cache", field
        if field not in shared:
            found = shared_mutables(mine[field], theirs[field], field)
            assert [path for path in found if re.sub(r"\[\d+\]$", "[*]", path) not in shared] == []


@contract_test
def test_clones_share_the_rng_until_one_draws(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    """Clones share the original's RNG until one of them draws (State.rng):
    whoever draws first, each plays on as the original would have."""
    state = new_state(name, n, deal_seed)
    rng = random.Random(decision_seed)
    for step, _decisions in enumerate(playout(state, rng)):
        if step == 30:
            break
    first, second = state.clone(), state.clone()
    log = []
    while not state.is_terminal():  # the original draws first this time
        decisions = random_decisions(state, rng)
        log.append(decisions)
        state.apply_actions(decisions)
    for clone in (second, first):
        for decisions in log:
            clone.apply_actions(decisions)
        assert snapshot(clone) == snapshot(state)
        assert (clone.scores(), clone.places()) == (state.scores(), state.places())


@contract_test
def test_undo_takes_back_pushes_through_deals_and_plays_on_identically(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    """Nested pushes, some past the end of a hand (a new deal draws from the
    RNG), undone one by one: each undo gives back exactly the state before
    its push, and the state then plays on as a clone taken there does."""
    rng = random.Random(decision_seed)
    state = played_into(new_state(name, n, deal_seed), rng.randrange(30), rng)
    if state.is_terminal():
        return
    before: list[Snapshot] = []
    while len(before) < 40 and not state.is_terminal():
        before.append(snapshot(state))
        state.push(random_decisions(state, rng))
        assert state.clone()._undo == []  # a clone's history starts empty
    while before:
        state.undo()
        assert snapshot(state) == before.pop()
    with pytest.raises(GameError, match="nothing to undo"):
        state.undo()
    twin = state.clone()
    for decisions in playout(state, rng):
        twin.apply_actions(decisions)
    assert snapshot(twin) == snapshot(state)
    assert (twin.scores(), twin.places()) == (state.scores(), state.places())


@pytest.mark.parametrize("name", game_names())
def test_an_illegal_push_remembers_nothing(name: str) -> None:
    state = new_state(name, game_class(name).min_players, 3)
    seat = state.deciding_seats()[0]
    shown = snapshot(state)
    with pytest.raises(IllegalActionError):
        state.push({seat: "no such action"})
    assert snapshot(state) == shown
    with pytest.raises(GameError, match="nothing to undo"):
        state.undo()


@contract_test
def test_cards_are_conserved(name: str, n: int, deal_seed: int, decision_seed: int) -> None:
    state = new_state(name, n, deal_seed)
    deck = Counter(state.game.deck())
    zones = getattr(state, ZONES[name])

    def everywhere() -> Counter[str]:
        found = zones()
        cards = found if isinstance(found, list) else [c for z in found.values() for c in z]
        return Counter(cards)

    for _decisions in playout(state, random.Random(decision_seed)):
        assert everywhere() == deck
        for seat in range(n):
            assert Counter(state.observation(seat).get("hand", ())) <= deck
    assert everywhere() == deck


@contract_test
def test_spectator_sees_only_public_cards(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    state = new_state(name, n, deal_seed)
    for _decisions in playout(state, random.Random(decision_seed)):
        *seats, spectator = views(state)
        assert spectator != seats[0]
        public = set.intersection(*(cards_in(state, view) for view in seats))
        leaked = cards_in(state, spectator) - public
        assert not leaked, f"the spectator sees {sorted(leaked)}, which some seat does not"
        held = {card for view in seats for card in view.get("hand", ())}
        assert not (held - public) & cards_in(state, spectator)


@contract_test
def test_replaying_the_record_gives_the_same_game(
    name: str, n: int, deal_seed: int, decision_seed: int
) -> None:
    state = new_state(name, n, deal_seed)
    record = list(playout(state, random.Random(decision_seed)))
    replay = new_state(name, n, deal_seed)
    for decisions in record:
        replay.apply_actions(decisions)
    assert replay.is_terminal()
    assert [e.to_dict() for e in replay.events] == [e.to_dict() for e in state.events]
    assert (replay.scores(), replay.places(), replay.reveal()) == (
        state.scores(), state.places(), state.reveal())


@pytest.mark.parametrize("name", game_names())
def test_observation_of_a_seat_that_does_not_exist(name: str) -> None:
    game = game_class(name)
    state = new_state(name, game.min_players, 0)
    for seat in (-1, game.min_players):
        with pytest.raises(GameError):
            state.observation(seat)
