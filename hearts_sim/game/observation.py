"""What one seat may know (docs/rules.md, the information set), built from a ``HandState`` or a plain
history, validated, and turned back into a ``HAND_STATE`` record an agent can decide on.

An agent kernel reads a full ``HAND_STATE`` record but only the seat's own information. To
decide from an ``Observation`` (a game site, a server request), ``to_state`` rebuilds a record
whose information-set fields equal those of the real hand (own cards, passes, history, trick
leaders and winners, voids, points, hearts broken, ...) and fills the hidden parts (the other
hands, the kitty, the others' passes) with one deal consistent with everything the seat knows.

Design note: one world builder. This module deals no card and derives no public fact itself;
the rules it knows are those validation needs to name an inconsistency (who can have opened
the hand, why a play was illegal). ``_rebuild`` works in three steps:

1. *What the seat knows*, checked in Python: the deal, the passes, the kitty
   (``_checked_setup``, ``_checked_passes``), and every play against the seat's own cards, cards
   played twice, suits shown void and the cards it passed (``_scan``); which club can have
   opened the hand, and by whom (``_first_lead``).
2. *The public history, replayed by the engine* (``_replayed_history``, ``_replay``):
   ``start_hand``, ``pass_cards`` and ``play_card`` on a record in which every other seat holds
   only the cards it is known to hold (those it plays later in the history; the receiver, the
   cards this seat passed; the first leader, the club that opened the hand), each play checked
   with ``legal_moves`` on those cards. Turn order, trick leaders and winners, voids, points,
   hearts broken, the first-lead card and the phase are therefore the engine's. (A phantom bit
   keeps a known hand from running empty, which would end the hand, before the seat's last
   card.) The points given are checked against the engine's, which learns those of a kitty
   another seat took only from them (``_public_points``).
3. *The unseen cards*, dealt by the engine's determinization sampler (``sample_world``, the
   one the search agents use) consistently with that record; ``world_fits`` checks the deal,
   because the sampler cannot report an impossible information set (voids that leave the
   unseen cards no room, a kitty that cannot carry its public points) by itself. A finished
   hand is scored again (``finish_hand``) once a hidden kitty's cards are dealt.

The world comes from a fixed random stream, so an observation always gives the same record.
Agents read only the information set, so which consistent world it is must not change a decision
(tests/test_api.py checks decisions equal the batched loop's, tests/test_observation.py checks
the worlds).

Validation only uses what the seat can know. An impossible history raises ``HistoryError``
naming the first inconsistency::

    >>> obs = Observation.from_history("standard", seat=0, hand="2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC")
    >>> obs.phase, obs.to_move
    ('play', True)
    >>> Observation.from_history("standard", seat=1, hand="2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC",
    ...                          plays=[(0, "2C")])
    Traceback (most recent call last):
    ...
    hearts_sim.game.observation.HistoryError: play 1: seat 0 played 2C, which seat 1 holds
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from html import escape
from typing import Any

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.cards import (
    CLUBS,
    CLUBS_MASK,
    HEARTS_MASK,
    N_RANKS,
    NO_CARD,
    SUIT_MASKS,
    SUIT_NAMES,
    CardSet,
    card_bit,
    card_html,
    card_str,
    cards_html,
    cards_of,
    cards_str,
    html_table,
    parse_card,
)
from hearts_sim.core.checks import is_integer, shown
from hearts_sim.core.rules import (
    PASS_DIRECTIONS,
    Rules,
    RulesError,
    pass_direction_cycle,
    pass_direction_name,
    pass_offset,
    resolve_rules,
)
from hearts_sim.engine.hand import (
    deck_cards,
    finish_hand,
    hand_size,
    legal_mask,
    legal_moves,
    pass_cards,
    play_card,
    point_cards,
    seed_hand,
    start_hand,
)
from hearts_sim.engine.rng import check_seed
from hearts_sim.engine.sampler import sample_world, world_fits
from hearts_sim.engine.state import NO_SEAT, NO_SUIT, PHASE_DONE, PHASE_PASS, new_states

_SUITS = [int(m) for m in SUIT_MASKS]
_CLUBS, _HEARTS = int(CLUBS_MASK), int(HEARTS_MASK)
_WORLD_STREAM = np.uint64(0x0B5E_7A7E)  # the sampler's stream: the same observation, the same world
MAX_GAME_SCORE = 1_000_000  # game scores a request may carry (target scores go to 100,000)
CardsLike = str | Iterable[str | int] | CardSet | int


class HistoryError(ValueError):
    """An observation no real hand can produce; the message names the first inconsistency."""


@dataclass(frozen=True, repr=False)
class Observation:
    """What one seat may know (docs/rules.md, information set): never another player's hand.

    ``hand`` is what the seat holds now, ``dealt`` what it was dealt, ``received`` stays empty
    until every seat has passed, ``plays`` is every card played as (seat, card) in order,
    ``points`` the raw penalty points each seat has taken this hand, ``kitty`` the kitty's cards
    once this seat has taken it (kitty mode), ``dealer`` the dealer's seat (public).
    """

    rules: Rules
    seat: int
    hand: CardSet
    dealt: CardSet
    pass_direction: str
    passed: CardSet
    received: CardSet  # empty until every seat has passed
    plays: tuple[tuple[int, int], ...]  # (seat, card) in play order
    points: tuple[int, ...]  # penalty points each seat has taken so far this hand
    game_scores: tuple[int, ...]
    hearts_broken: bool
    to_move: bool
    kitty: CardSet = field(default_factory=CardSet)  # the kitty, once this seat has taken it
    dealer: int = 0

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_history(
        cls,
        rules: Rules | str | None,
        seat: int,
        hand: CardsLike,
        pass_direction: str = "none",
        passed: CardsLike = (),
        received: CardsLike = (),
        plays: Iterable[Sequence[Any]] = (),
        scores: Sequence[int] | None = None,
        points: Sequence[int] | None = None,
        kitty: CardsLike | None = None,
        dealer: int | None = None,
    ) -> Observation:
        """An observation from a plain history, validated: ``hand`` is the seat's *dealt* hand,
        ``plays`` every card played so far as (seat, card) pairs in order, ``scores`` the game
        scores before this hand (zeros if omitted).

        ``points`` is needed only in kitty mode once another seat has taken the kitty (its
        points are public, its cards are not); ``kitty`` (its cards) only when this seat took
        it. ``dealer`` matters with ``first_lead="any"`` (default: the seat before the first
        leader there, seat 0 under the other rules). Raises ``HistoryError`` naming the first
        inconsistency."""
        try:
            rules = resolve_rules(rules)
        except RulesError as error:
            raise HistoryError(str(error)) from None
        n = rules.n_players
        seat = _integer(seat, "seat")
        if not 0 <= seat < n:
            raise HistoryError(f"seat {seat} does not exist with {n} players")
        parsed_plays = []
        for i, play in enumerate(plays):
            if not isinstance(play, (list, tuple)) or len(play) != 2:
                raise HistoryError(f"play {i + 1}: write each play as [seat, card], not {shown(play)}")
            who = _integer(play[0], f"play {i + 1}: the seat")
            try:
                card = parse_card(play[1])
            except ValueError as error:
                raise HistoryError(f"play {i + 1}: {error}") from None
            parsed_plays.append((who, card))
        game_scores = (
            _scores(scores, n, "scores", -MAX_GAME_SCORE, MAX_GAME_SCORE) if scores is not None else (0,) * n
        )
        draft = cls(
            rules=rules,
            seat=seat,
            hand=CardSet(),
            dealt=CardSet(_cards(hand, "hand")),
            pass_direction=pass_direction,
            passed=CardSet(_cards(passed, "passed")),
            received=CardSet(_cards(received, "received")),
            plays=tuple(parsed_plays),
            points=_scores(points, n, "points", 0, rules.moon_total) if points is not None else (),
            game_scores=game_scores,
            hearts_broken=False,
            to_move=False,
            kitty=CardSet(_cards(kitty, "kitty")) if kitty is not None else CardSet(),
            dealer=_integer(dealer, "dealer") if dealer is not None else -1,
        )
        if dealer is not None and not 0 <= draft.dealer < n:
            raise HistoryError(f"dealer {dealer} does not exist with {n} players")
        world = _rebuild(draft, kitty_given=kitty is not None)
        observation = replace(
            draft,
            hand=CardSet(world.hand),
            points=world.points,
            hearts_broken=world.hearts_broken,
            to_move=world.to_move,
            dealer=world.dealer,
        )
        object.__setattr__(observation, "_world", world)  # to_state reuses the rebuilt state
        return observation

    # ------------------------------------------------------------------ reading
    @property
    def phase(self) -> str:
        """``pass`` (until every seat has passed), ``play`` or ``done``."""
        if self.pass_direction != "none" and self.rules.pass_count and not self.received:
            return "pass"
        return "done" if len(self.plays) == self.rules.hand_size * self.rules.n_players else "play"

    def legal_moves(self) -> CardSet:
        """The cards this seat may play now: empty unless it is to play. Derived from what the seat
        knows (its hand, the trick so far, hearts broken) by the engine's ``legal_mask``."""
        cached = self.__dict__.get("_legal")
        if cached is None:
            cached = CardSet(_legal_mask_of(self)) if self.to_move and self.phase == "play" else CardSet()
            object.__setattr__(self, "_legal", cached)
        return cached

    def validate(self) -> None:
        """Raise ``HistoryError`` unless a real hand can produce this observation."""
        _rebuild(self, kitty_given=bool(self.kitty), check_derived=True)

    def to_state(self, hand_seed: int = 0) -> np.ndarray:
        """A one-element ``HAND_STATE`` array: the information set exactly, hidden cards filled in.

        ``hand_seed`` sets ``hand_seed`` and the per-seat decision streams as ``start_hand``
        does, so ``decision_seed(state, seat)`` equals the batched loop's for a hand dealt
        from that seed. Raises ``HistoryError`` for an impossible observation."""
        world = self.__dict__.get("_world")
        if world is None:
            world = _rebuild(self, kitty_given=bool(self.kitty), check_derived=True)
        states = world.states.copy()
        set_hand_seed(states, check_seed(hand_seed, "hand_seed"))
        return states

    # ------------------------------------------------------------------ display
    def __repr__(self) -> str:
        """One line, as ``HandState``'s: the seat, the rules by their label, where the hand is and
        the seat's cards (the dataclass's was 700 to 1,100 characters, its cards as integers)."""
        phase, n = self.phase, self.rules.n_players
        where = {"pass": f"pass {self.pass_direction}", "done": "hand over"}.get(
            phase, f"trick {len(self.plays) // n + 1}"
        )
        turn = ", to move" if self.to_move else ""
        return f"<Observation seat {self.seat}, {self.rules.label()}, {where}{turn}: hand {self.hand or '-'}>"

    def _repr_html_(self) -> str:
        """Jupyter's rich display: what this seat sees (its hand, its pass, the kitty it took, every
        trick so far, the points), and nothing it cannot see."""
        n, seat = self.rules.n_players, self.seat
        offset = pass_offset(self.pass_direction, n)
        rows = [["hand", cards_html(self.hand.mask)]]
        if self.passed:
            rows.append([f"passed to seat {(seat + offset) % n}", cards_html(self.passed.mask)])
        if self.received:
            rows.append([f"received from seat {(seat - offset) % n}", cards_html(self.received.mask)])
        if self.kitty:
            rows.append(["kitty", cards_html(self.kitty.mask)])
        if self.points:
            rows.append(["points", escape(", ".join(f"seat {s}: {p}" for s, p in enumerate(self.points)))])
        if any(self.game_scores):
            scores = ", ".join(f"seat {s}: {x}" for s, x in enumerate(self.game_scores))
            rows.append(["game scores", escape(scores)])
        facts = [
            f"seat {seat} sees",
            self.rules.label(),
            self.phase,
            f"pass {self.pass_direction}",
            f"hearts {'broken' if self.hearts_broken else 'unbroken'}",
            "to move" if self.to_move else "waiting",
        ]
        own = html_table(["", "cards"], rows, caption=escape(" | ".join(facts)), kind="hs-observation")
        tricks = []
        for start in range(0, len(self.plays), n):  # every trick is n plays, led by its first
            cards = dict(self.plays[start : start + n])
            leader = self.plays[start][0]
            tricks.append(
                [str(start // n + 1), str(leader)]
                + [card_html(cards[s]) if s in cards else "" for s in range(n)]
            )
        header = ["trick", "led by"] + [f"seat {s}" for s in range(n)]
        return f"<div>{own}{html_table(header, tricks, kind='hs-tricks') if tricks else ''}</div>"


def _legal_mask_of(obs: Observation) -> int:
    n = obs.rules.n_players
    in_trick = len(obs.plays) % n
    led_suit = obs.plays[-in_trick][1] // N_RANKS if in_trick else NO_SUIT
    first_trick = len(obs.plays) < n
    clubs = obs.hand.mask & _CLUBS  # the first leader holds the lowest club in play: its lowest
    first_lead_card = _lowest(clubs) if first_trick and not in_trick and clubs else NO_CARD
    hand, broken = np.uint64(obs.hand.mask), int(obs.hearts_broken)
    return int(legal_mask(hand, led_suit, first_trick, broken, first_lead_card, obs.rules.to_tuple()))


def observations_from(rows: np.ndarray, rules: Rules) -> list[Observation]:
    """``Observation`` objects from ``OBSERVED`` records (``hearts_sim.engine.observe``): the fast
    path for agents outside the compiled loop. The rows come from the engine, so they are not
    validated again; each observation's legal cards come with it."""
    with _collector_paused():
        return _observations_from(rows, rules)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off while objects are built in bulk: every few hundred new
    objects it would walk the young ones (five times the cost of building them, measured)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _observations_from(rows: np.ndarray, rules: Rules) -> list[Observation]:
    n = rules.n_players
    directions = [pass_direction_name(offset, n) for offset in range(n)]
    columns = {name: rows[name].tolist() for name in _OBSERVED_SCALARS}
    cards, players = rows["cards"], rows["players"]
    points, scores = rows["points"][:, :n].tolist(), rows["game_scores"][:, :n].tolist()
    out = []
    for i in range(len(rows)):
        k = columns["n_played"][i]
        obs = object.__new__(Observation)
        obs.__dict__.update(
            rules=rules,
            seat=columns["seat"][i],
            hand=CardSet.of_mask(columns["hand"][i]),
            dealt=CardSet.of_mask(columns["dealt"][i]),
            pass_direction=directions[columns["pass_offset"][i]],
            passed=CardSet.of_mask(columns["passed"][i]),
            received=CardSet.of_mask(columns["received"][i]),
            plays=tuple(zip(players[i, :k].tolist(), cards[i, :k].tolist(), strict=True)),
            points=tuple(points[i]),
            game_scores=tuple(scores[i]),
            hearts_broken=bool(columns["hearts_broken"][i]),
            to_move=True,
            kitty=CardSet.of_mask(columns["kitty"][i]),
            dealer=columns["dealer"][i],
            _legal=CardSet.of_mask(columns["legal"][i]),
        )
        out.append(obs)
    return out


_OBSERVED_SCALARS = (
    "seat",
    "hand",
    "dealt",
    "passed",
    "received",
    "kitty",
    "legal",
    "pass_offset",
    "dealer",
    "hearts_broken",
    "n_played",
)


def set_hand_seed(states: np.ndarray, hand_seed: int) -> None:
    """Give ``states[0]`` the hand seed and the per-seat decision streams derived from it."""
    seed_hand(states[0], np.uint64(hand_seed))


# ---------------------------------------------------------------- parsing helpers
def _integer(value: Any, what: str) -> int:
    if not is_integer(value):
        raise HistoryError(f"{what} must be an integer, not {shown(value)}")
    return int(value)


def _scores(values: Any, n: int, what: str, low: int, high: int) -> tuple[int, ...]:
    if not isinstance(values, (list, tuple)) or len(values) != n:
        raise HistoryError(f"{what} must list {n} integers, one per seat, not {shown(values)}")
    checked = tuple(_integer(v, what) for v in values)
    for value in checked:
        if not low <= value <= high:
            raise HistoryError(f"{what}: {value} is out of range {low} .. {high}")
    return checked


def _cards(cards: Any, what: str) -> int:
    """A bitboard from cards written as a string, a list of cards, a ``CardSet`` or a bitboard;
    a card given twice is an error (a set would hide it)."""
    if isinstance(cards, CardSet) or is_integer(cards):
        try:
            return CardSet(cards).mask
        except ValueError as error:
            raise HistoryError(f"{what}: {error}") from None
    if isinstance(cards, str):
        cards = cards.replace(",", " ").split()
    if isinstance(cards, bytes) or not isinstance(cards, Iterable):
        raise HistoryError(f"{what} must be a list of cards, not {shown(cards)}")
    mask = 0
    for item in cards:
        try:
            card = parse_card(item)
        except ValueError as error:
            raise HistoryError(f"{what}: {error}") from None
        if mask >> card & 1:
            raise HistoryError(f"{what}: {card_str(card)} is given twice")
        mask |= 1 << card
    return mask


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


# ---------------------------------------------------------------- the rebuild
@dataclass
class _World:
    states: np.ndarray
    hand: int
    points: tuple[int, ...]
    hearts_broken: bool
    to_move: bool
    dealer: int


def _rebuild(obs: Observation, kitty_given: bool, check_derived: bool = False) -> _World:
    """Validate ``obs`` against everything its seat can know and build one consistent full state
    (the module's design note: checks in Python, the history through the engine's kernels, the
    unseen cards from its sampler)."""
    rules, seat = obs.rules, obs.seat
    setup = _checked_setup(obs, kitty_given)
    states = _replayed_history(obs, setup)
    record = states[0]
    kitty_points = _public_points(obs, record, kitty_given)
    for s in range(rules.n_players):
        record["game_scores"][s] = obs.game_scores[s] if len(obs.game_scores) == rules.n_players else 0

    # --- the unseen cards, from the engine's sampler
    if not _deal_unseen(states, setup.array, seat, _WORLD_STREAM):
        kitty_part = f"gives the kitty {kitty_points} points and " if kitty_points >= 0 else ""
        raise HistoryError(f"no deal of the unseen cards {kitty_part}fits the hand sizes and the voids shown")
    if int(record["phase"]) == PHASE_PASS:
        to_move = not obs.passed
    else:
        to_move = int(record["phase"]) != PHASE_DONE and int(record["to_play"]) == seat
    points = tuple(int(p) for p in record["points"][: rules.n_players])
    hand, hearts_broken = int(record["hands"][seat]), bool(record["hearts_broken"])
    world = _World(states[1:], hand, points, hearts_broken, to_move, setup.dealer)
    if check_derived:
        for name, value in (
            ("hand", world.hand),
            ("hearts_broken", world.hearts_broken),
            ("dealer", world.dealer),
        ):
            given = getattr(obs, name)
            if (given.mask if isinstance(given, CardSet) else given) != value:
                raise HistoryError(f"{name} is {given}, but the history gives {value}")
    return world


@dataclass(frozen=True)
class _Setup:
    """The hand before its first trick as the seat knows it, checked (``_checked_setup``)."""

    array: tuple[Any, ...]  # the rules as the kernels read them
    deck: int  # the cards in play
    offset: int  # passes go to seat + offset (0: no passing)
    start: int  # the seat's hand once the passes are exchanged
    receiver: int  # the seat this seat passes to (NO_SEAT: none)
    kitty: int  # the kitty's cards, when this seat took it (else 0)
    exchanged: bool  # the passes are made and received (or there are none)
    dealer: int


def _checked_setup(obs: Observation, kitty_given: bool) -> _Setup:
    """The deal, the passes and the kitty of ``obs``, checked against the rules and each other;
    the dealer, where the observation leaves it to be derived (-1), from the first play."""
    rules, seat, n = obs.rules, obs.seat, obs.rules.n_players
    if not 0 <= seat < n:
        raise HistoryError(f"seat {seat} does not exist with {n} players")
    array = rules.to_tuple()
    deck = int(deck_cards(array))
    dealt, passed, received = obs.dealt.mask, obs.passed.mask, obs.received.mask
    if dealt & ~deck:
        raise HistoryError(f"hand: {card_str(_lowest(dealt & ~deck))} is not in play under these rules")
    if dealt.bit_count() != rules.hand_size:
        raise HistoryError(f"hand: {_cards_given(dealt)}; these rules deal {rules.hand_size}")
    offset = _checked_passes(obs, deck)
    passing = offset != 0
    exchanged = not passing or bool(received)
    start = (dealt & ~passed) | received  # the seat's hand once the passes are exchanged
    kitty = obs.kitty.mask if kitty_given else 0
    if kitty_given:
        if rules.kitty_size == 0:
            raise HistoryError("kitty given, but these rules have no kitty")
        if kitty.bit_count() != rules.kitty_size or kitty & ~deck or kitty & start:
            raise HistoryError(f"kitty: {cards_str(kitty) or 'nothing'} cannot be the kitty of this deal")
    if obs.plays and not exchanged:
        raise HistoryError("cards were played before the pass was complete: give the received cards")
    if kitty_given and not exchanged:
        raise HistoryError("kitty given, but nobody has taken the kitty before the first trick")
    if len(obs.plays) > rules.hand_size * n:
        raise HistoryError(f"{len(obs.plays)} plays: a hand has only {rules.hand_size * n}")
    dealer = obs.dealer
    if dealer >= n:
        raise HistoryError(f"dealer {dealer} does not exist with {n} players")
    if dealer < 0:
        first = obs.plays[0][0] if obs.plays else seat
        dealer = (first - 1) % n if rules.first_lead == "any" else 0
    receiver = (seat + offset) % n if passing else NO_SEAT
    return _Setup(array, deck, offset, start, receiver, kitty, exchanged, dealer)


def _checked_passes(obs: Observation, deck: int) -> int:
    """The pass direction and the cards passed and received of ``obs``, checked against the rules
    and the deal; returns the pass offset (passes go to seat + offset, 0: no passing)."""
    rules, n, pc = obs.rules, obs.rules.n_players, obs.rules.pass_count
    dealt, passed, received = obs.dealt.mask, obs.passed.mask, obs.received.mask
    if obs.pass_direction not in PASS_DIRECTIONS:
        raise HistoryError(
            f"unknown pass direction {shown(obs.pass_direction)}: choose {', '.join(PASS_DIRECTIONS)}"
        )
    if obs.pass_direction not in pass_direction_cycle(rules) + ("none",) or (
        obs.pass_direction != "none" and pc == 0
    ):
        raise HistoryError(
            f"pass direction {shown(obs.pass_direction)} does not occur under these rules "
            f"(possible: {', '.join(dict.fromkeys(pass_direction_cycle(rules)))})"
        )
    offset = pass_offset(obs.pass_direction, n)
    passing = offset != 0
    if not passing and (passed or received):
        raise HistoryError(
            "no passing this hand (pass direction none), but passed or received cards are given"
        )
    if passed:
        if passed.bit_count() != pc:
            raise HistoryError(f"passed: {_cards_given(passed)}; these rules pass {pc}")
        if passed & ~dealt:
            raise HistoryError(f"passed: {card_str(_lowest(passed & ~dealt))} is not in the hand")
    if received:
        if not passed:
            raise HistoryError("received cards without passed ones: cards arrive after the seat has passed")
        if received.bit_count() != pc:
            raise HistoryError(f"received: {_cards_given(received)}; these rules pass {pc}")
        if received & ~deck:
            raise HistoryError(f"received: {card_str(_lowest(received & ~deck))} is not in play")
        if received & dealt:
            raise HistoryError(f"received: {card_str(_lowest(received & dealt))} is in the seat's own hand")
    return offset


def _replayed_history(obs: Observation, setup: _Setup) -> np.ndarray:
    """Two records: the history of ``obs`` replayed by the engine, each seat holding the cards it
    is known to hold, and room for the world dealt from it. Everything checkable without the
    engine is checked first (``_scan``); the first error of either kind raises."""
    rules, seat = obs.rules, obs.seat
    voids, error = _scan(obs, setup.deck, setup.start, setup.receiver, setup.kitty)
    plays = obs.plays[: error[0]] if error else obs.plays
    turns = plays  # plus the failing play, whose turn is checked first unless it opens the hand
    if error and error[2] and (error[0] or rules.first_lead == "any"):
        turns = obs.plays[: error[0] + 1]
    states = new_states(2)  # the replayed record, then the world dealt from it
    record = states[0]
    through = True  # first through illegal plays to the first play out of turn, if any
    while True:
        cards, passers = _known_cards(
            obs, plays, setup.deck, setup.start, setup.kitty, voids, setup.exchanged
        )
        history = np.array(turns, dtype=np.int64).reshape(-1, 2)
        start_args = (states, setup.array, setup.offset, setup.dealer, cards, np.uint64(setup.kitty), passers)
        status, index = _replay(*start_args, history, len(plays), seat, through)
        if status == _OK or not through:
            break
        if status == _OUT_OF_TURN and index < len(plays):  # cards "known" from the plays after it are not
            plays, turns, error = plays[:index], plays[: index + 1], None
        through = False  # again, stopping at the first illegal play
    if status == _OUT_OF_TURN:
        who = int(record["to_play"])
        what = "leads the first trick" if index == 0 else "is to play"
        raise HistoryError(f"play {index + 1}: seat {turns[index][0]} played out of turn; seat {who} {what}")
    if status == _ILLEGAL:
        who, card = plays[index]
        held = int(record["hands"][who])
        reason = _why_illegal(record, rules, card, held, who == seat, obs.passed.mask)
        raise HistoryError(f"play {index + 1}: seat {who} may not play {card_str(card)} ({reason})")
    if error:
        raise HistoryError(error[1])
    played = [0] * rules.n_players
    for who, _ in plays:
        played[who] += 1
    for s in range(rules.n_players):  # the cards a seat is still known to hold (this seat's pass) must fit
        known, left = int(record["hands"][s]), rules.hand_size - played[s]
        if known.bit_count() > left:
            raise HistoryError(
                f"seat {s} is known to hold {cards_str(known)}, more than the {left} cards it has left"
            )
    return states


def _public_points(obs: Observation, record: np.ndarray, kitty_given: bool) -> int:
    """Check the points ``obs`` gives against the engine's in ``record``, which takes the kitty's
    points where another seat took the kitty: public only as points. Returns the kitty's points
    (-1: not known from the points)."""
    rules, seat, n = obs.rules, obs.seat, obs.rules.n_players
    points = [int(p) for p in record["points"][:n]]
    winner = int(record["trick_winners"][0]) if int(record["trick_number"]) else NO_SEAT
    if kitty_given and winner != seat:
        raise HistoryError(f"kitty given, but seat {seat} has not taken the kitty")
    kitty_points = -1
    if rules.kitty_size and not kitty_given and winner != NO_SEAT:
        if winner == seat:
            raise HistoryError(f"seat {seat} took the kitty in the first trick: give its cards (kitty)")
        if not obs.points:
            raise HistoryError(
                f"seat {winner} took the kitty: give every seat's points (the kitty's points are public)"
            )
        for s in range(n):
            if s != winner and obs.points[s] != points[s]:
                raise HistoryError(
                    f"points: seat {s} has taken {points[s]} points in its tricks, not {obs.points[s]}"
                )
        kitty_points = obs.points[winner] - points[winner]
        if kitty_points < 0:
            raise HistoryError(
                f"points: seat {winner} has taken {points[winner]} points in its tricks, more than "
                f"{obs.points[winner]}"
            )
        points[winner] = obs.points[winner]
        record["points"][winner] = points[winner]
    if obs.points and tuple(obs.points) != tuple(points):
        bad = next(s for s in range(n) if obs.points[s] != points[s])
        raise HistoryError(
            f"points: seat {bad} has taken {points[bad]} points in its tricks, not {obs.points[bad]}"
        )
    return kitty_points


def _known_cards(
    obs: Observation,
    plays: Sequence[tuple[int, int]],
    deck: int,
    start: int,
    kitty: int,
    voids: list[int],
    exchanged: bool,
) -> tuple[np.ndarray, int]:
    """The record ``_replay`` starts from: rows of (the dealt cards a seat is known to hold, its
    pass), and the bitmask of the seats whose pass is made. Once the passes are exchanged, each
    other seat holds the cards it plays in ``plays``, the receiver this seat's pass, the first
    leader the club that opens the hand (``_first_lead``); before, only this seat's hand and
    pass are known."""
    rules, seat, n = obs.rules, obs.seat, obs.rules.n_players
    dealt, passed, received = obs.dealt.mask, obs.passed.mask, obs.received.mask
    offset = pass_offset(obs.pass_direction, n)
    hands, pass_masks = [0] * n, [0] * n
    pass_masks[seat] = passed
    passers = 1 << seat if passed else 0
    if exchanged:
        for who, card in plays:
            hands[who] |= 1 << card
        hands[seat] = start
        receiver, giver = (seat + offset) % n, (seat - offset) % n
        if offset:
            hands[receiver] |= passed
        if rules.first_lead != "any":
            leader, club = _first_lead(rules, seat, plays, deck, hands, kitty, voids)
            hands[leader] |= 1 << club
        if offset:  # back to the dealt hands: the known passes are this seat's and its giver's
            hands[receiver] &= ~passed
            hands[giver] |= received
            pass_masks[giver] = received
            passers = (1 << n) - 1
    hands[seat] = dealt
    return np.array(list(zip(hands, pass_masks, strict=True)), dtype=np.uint64), passers


def _scan(
    obs: Observation, deck: int, start: int, receiver: int, kitty: int
) -> tuple[list[int], tuple[int, str, bool] | None]:
    """Checks every play against what the seat can see, in order; returns the suits each seat
    showed void in (bit s: suit s) and the first error as (play index, message, whether the
    play's turn is checked first), or None. Turn order and the legality of each play are
    checked by the engine (``_replay``)."""
    seat, n = obs.seat, obs.rules.n_players
    passed = obs.passed.mask
    voids = [0] * n
    void_at: dict[tuple[int, int], int] = {}  # (seat, suit): the play that showed the void
    where: dict[int, int] = {}  # card: the play that played it
    played = 0
    for i, (who, card) in enumerate(obs.plays):
        name = _CardName(card)  # spelled out only in an error

        def error(text: str, turn_first: bool = True, i: int = i) -> tuple[list[int], tuple[int, str, bool]]:
            return voids, (i, f"play {i + 1}: {text}", turn_first)

        if not 0 <= who < n:
            return error(f"seat {who} does not exist with {n} players", False)
        if not deck >> card & 1:
            return error(f"{name} is not in play under these rules", False)
        if card in where:
            return error(f"{name} was already played (play {where[card] + 1})", False)
        if who == seat and not start >> card & 1:
            return error(f"seat {seat} does not hold {name}")
        if who != seat and start >> card & 1:
            return error(f"seat {who} played {name}, which seat {seat} holds")
        if who != seat and kitty >> card & 1:
            return error(f"seat {who} played {name}, which lies in the kitty")
        if who != seat and passed >> card & 1 and who != receiver:
            return error(f"seat {who} played {name}, which seat {seat} passed to seat {receiver}")
        suit = card // N_RANKS
        if (who, suit) in void_at:
            shown = void_at[who, suit] + 1
            return error(f"seat {who} played {name} after showing void in {SUIT_NAMES[suit]} (play {shown})")
        led = obs.plays[i - i % n][1] // N_RANKS  # tricks are n plays long
        if suit != led and (who, led) not in void_at:
            void_at[who, led] = i
            voids[who] |= 1 << led
            unplayed = passed & _SUITS[led] & ~played
            if who == receiver and unplayed:
                return error(
                    f"seat {who} showed void in {SUIT_NAMES[led]} while holding "
                    f"{card_str(_lowest(unplayed))}, passed to it by seat {seat}"
                )
        where[card] = i
        played |= 1 << card
    return voids, None


class _CardName:
    """A card's name, made when a message is formatted: ``_scan`` names every card it checks,
    and spelling each out cost a tenth of a rebuild."""

    __slots__ = ("card",)

    def __init__(self, card: int):
        self.card = card

    def __str__(self) -> str:
        return card_str(self.card)


def _first_lead(
    rules: Rules,
    seat: int,
    plays: Sequence[tuple[int, int]],
    deck: int,
    known: list[int],
    kitty: int,
    voids: list[int],
) -> tuple[int, int]:
    """The first leader and the club it holds that opens the hand (the lowest club dealt out;
    ``any_club``: the lowest, not necessarily led), as far as the seat can tell.

    Clubs lower than every club a seat is known to hold are free: with ``any_club`` the leader
    takes the lowest if it can, else they lie in the kitty while it has room (kitty mode), else
    another seat holds the lowest and leads (before the first card) or the history is
    impossible. ``known``: each seat's known cards; ``kitty``: a kitty this seat took."""
    n = rules.n_players
    leader = plays[0][0] if plays else NO_SEAT
    kitty_room = rules.kitty_size if not kitty else 0
    for club in cards_of(deck & _CLUBS & ~kitty):
        owner = next((s for s in range(n) if known[s] >> club & 1), NO_SEAT)
        if owner != NO_SEAT:
            if leader != NO_SEAT and owner != leader:
                raise HistoryError(
                    f"play 1: seat {leader} cannot lead the first trick: seat {owner} holds "
                    f"{card_str(club)}, a lower club"
                )
            if rules.first_lead == "two_clubs" and plays and plays[0][1] != club:
                raise HistoryError(
                    f"play 1: the first trick must be opened with the lowest club in play, "
                    f"{card_str(club)}, not {card_str(plays[0][1])}"
                )
            return owner, club
        if (
            rules.first_lead == "any_club"
            and leader not in (NO_SEAT, seat)
            and known[leader].bit_count() < rules.hand_size
            and not voids[leader] >> CLUBS & 1
        ):
            return leader, club
        if kitty_room > 0:
            kitty_room -= 1
            continue
        if leader == NO_SEAT:  # another seat holds the lowest club: this seat does not lead
            return next(s for s in range(n) if s != seat), club
        if rules.first_lead == "two_clubs":
            raise HistoryError(
                f"play 1: the first trick must be opened with the lowest club in play, "
                f"{card_str(club)}{' (the kitty is full)' if rules.kitty_size else ''}, "
                f"not {card_str(plays[0][1])}"
            )
        raise HistoryError(
            f"play 1: seat {leader} cannot lead the first trick: it cannot hold "
            f"{card_str(club)}, the lowest club in play"
        )
    raise AssertionError("a deck has more clubs than a kitty holds")


def _why_illegal(record: Any, rules: Rules, card: int, held: int, own: bool, passed: int) -> str:
    """Why ``card`` was not legal, naming a card the seat is known to hold then (``held``)."""

    def holding(mask: int) -> str:
        if not mask:
            return "it holds nothing else"
        evidence = _lowest(mask)
        if own:
            return f"it holds {card_str(evidence)}"
        if passed >> evidence & 1:
            source = "passed to it"
        elif evidence == int(record["first_lead_card"]):
            source = "the lowest club, which the first leader holds"
        else:
            source = "played later"
        return f"it holds {card_str(evidence)}, {source}"

    candidates = held
    if int(record["n_in_trick"]) > 0:
        led = int(record["trick_cards"][int(record["leader"])]) // N_RANKS
        if held & _SUITS[led]:
            candidates = held & _SUITS[led]
            if card // N_RANKS != led:
                return f"must follow {SUIT_NAMES[led]}: {holding(candidates)}"
    first_trick = int(record["trick_number"]) == 0
    if first_trick and int(record["n_in_trick"]) == 0 and rules.first_lead != "any":
        if rules.first_lead == "any_club":
            return "the first trick is opened with a club"
        return f"the first trick is opened with {card_str(int(record['first_lead_card']))}"
    points = int(point_cards(rules.to_tuple()))
    if first_trick and points >> card & 1:
        return f"no points on the first trick: {holding(candidates & ~points)}"
    return f"hearts are not broken: {holding(held & ~_HEARTS)}"


# ---------------------------------------------------------------- the kernels
_OK, _OUT_OF_TURN, _ILLEGAL = 0, 1, 2
# Bit 63 is no card. A seat's known cards can run out before its hand does, and the engine ends
# the hand when a trick's winner holds nothing: other seats keep this bit until their last card.
_PHANTOM = np.uint64(1 << 63)


@njit
def _replay(states, rules, pass_offset, dealer, cards, kitty, passers, history, n_plays, observer, through):
    """Deal ``cards[s, 0]`` (the dealt cards seat s is known to hold) and ``kitty`` into
    ``states[0]``, start the hand, make the passes ``cards[s, 1]`` of the seats in bitmask
    ``passers``, then the first ``n_plays`` of ``history`` (rows of seat, card), checking turn
    order and the legality of each play against the cards its seat is known to hold then (and
    the turn of a further row, if any). Returns (status, index of the failing play): the first
    play out of turn, else the first illegal one; the state is left just before it, unless
    ``through`` (play on through illegal plays). One kernel call: crossing into numba costs
    ~40 us a record (an array ~1 us)."""
    state = states[0]
    last_trick = hand_size(rules) - 1
    for s in range(rules.n_players):
        state.hands[s] = cards[s, 0] if s == observer else cards[s, 0] | _PHANTOM
    state.kitty = kitty
    start_hand(state, rules, pass_offset, dealer, np.uint64(0))
    for s in range(rules.n_players):
        if (passers >> s) & 1:
            pass_cards(state, rules, s, cards[s, 1])
    status, index = _OK, n_plays
    for i in range(history.shape[0]):
        seat, card = history[i, 0], history[i, 1]
        if state.to_play != seat:
            status, index = _OUT_OF_TURN, i
            break
        if i == n_plays:
            break
        held = state.hands[seat]
        state.hands[seat] = held & ~_PHANTOM
        legal = legal_moves(state, rules)
        state.hands[seat] = held
        if not (legal >> np.uint64(card)) & np.uint64(1) and status == _OK:
            status, index = _ILLEGAL, i
            if not through:
                break
        if state.trick_number == last_trick:  # its last card: it holds just this one (no phantom)
            state.hands[seat] = card_bit(card)
        play_card(state, rules, card)
    for s in range(rules.n_players):
        state.hands[s] &= ~_PHANTOM
        state.dealt[s] &= ~_PHANTOM
    return status, index


@njit
def _deal_unseen(states, rules, observer, rng):
    """Deal what ``observer`` cannot see in ``states[0]`` into ``states[1]`` with the engine's
    sampler, scoring a finished hand again (a hidden kitty's cards are known only now).
    Returns whether the deal fits everything the seat knows (``world_fits``)."""
    sample_world(states[0], rules, observer, rng, states[1])
    if states[1].phase == PHASE_DONE:
        finish_hand(states[1], rules)
    return world_fits(states[0], rules, observer, states[1])


def _cards_given(cards: int) -> str:
    """``1 card given``, ``12 cards given``: how many cards a history names, for its messages."""
    count = cards.bit_count()
    return f"{count} card{'' if count == 1 else 's'} given"
