"""What one seat may know (RULES.md, the information set), built from a ``HandState`` or a plain
history, validated, and turned back into a ``HAND_STATE`` record an agent can decide on.

An agent kernel reads a full ``HAND_STATE`` record but only the seat's own information. To
decide from an ``Observation`` (a game site, a server request), ``to_state`` rebuilds a record
whose information-set fields equal those of the real hand (own cards, passes, history, trick
leaders and winners, voids, points, hearts broken, ...) and fills the hidden parts (the other
hands, the kitty, the others' passes) with one deal consistent with everything the seat knows.
The whole history is replayed through the engine's own kernels, so every derived field is the
engine's, not a re-implementation.

Validation only uses what the seat can know: its own cards at every moment, cards played twice,
turn order, suits a seat showed void in, cards it passed (the receiver holds them until it
plays them), and the legality of a play given the cards a seat is *known* to hold then (those
it plays later, those passed to it). An impossible history raises ``HistoryError`` naming the
first inconsistency::

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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.cards import (
    CLUBS,
    HEARTS,
    N_CARDS,
    N_RANKS,
    SUIT_MASKS,
    CardSet,
    card_str,
    cards_of,
    parse_card,
)
from hearts_sim.core.rules import (
    MAX_PLAYERS,
    PASS_DIRECTIONS,
    Rules,
    RulesError,
    pass_direction_cycle,
    pass_offset,
    resolve_rules,
)
from hearts_sim.engine.hand import legal_moves, pass_cards, play_card, start_hand
from hearts_sim.engine.rng import STREAM_DECISION, derive_seed
from hearts_sim.engine.state import NO_SEAT, PHASE_DONE, PHASE_PASS, new_states

SUIT_NAMES = ("clubs", "diamonds", "spades", "hearts")
_SUIT = [int(m) for m in SUIT_MASKS]
_HEARTS = _SUIT[HEARTS]
_QS, _KS, _AS = 2 * N_RANKS + 10, 2 * N_RANKS + 11, 2 * N_RANKS + 12

CardsLike = str | Iterable[str | int] | CardSet | int


class HistoryError(ValueError):
    """An observation no real hand can produce; the message names the first inconsistency."""


@dataclass(frozen=True)
class Observation:
    """What one seat may know (RULES.md, information set): never another player's hand.

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
        leader). Raises ``HistoryError`` naming the first inconsistency."""
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
                raise HistoryError(f"play {i + 1}: write each play as [seat, card], not {play!r}")
            who = _integer(play[0], f"play {i + 1}: the seat")
            try:
                card = parse_card(play[1])
            except ValueError as error:
                raise HistoryError(f"play {i + 1}: {error}") from None
            parsed_plays.append((who, card))
        game_scores = _scores(scores, n, "scores") if scores is not None else (0,) * n
        draft = cls(
            rules=rules,
            seat=seat,
            hand=CardSet(),
            dealt=CardSet(_cards(hand, "hand")),
            pass_direction=pass_direction,
            passed=CardSet(_cards(passed, "passed")),
            received=CardSet(_cards(received, "received")),
            plays=tuple(parsed_plays),
            points=_scores(points, n, "points") if points is not None else (),
            game_scores=game_scores,
            hearts_broken=False,
            to_move=False,
            kitty=CardSet(_cards(kitty, "kitty")) if kitty is not None else CardSet(),
            dealer=_integer(dealer, "dealer") if dealer is not None else -1,
        )
        if dealer is not None and not 0 <= draft.dealer < n:
            raise HistoryError(f"dealer {dealer} does not exist with {n} players")
        world = _rebuild(draft, kitty_given=kitty is not None)
        observation = cls(
            rules=rules,
            seat=seat,
            hand=CardSet(world.hand),
            dealt=draft.dealt,
            pass_direction=pass_direction,
            passed=draft.passed,
            received=draft.received,
            plays=draft.plays,
            points=world.points,
            game_scores=game_scores,
            hearts_broken=world.hearts_broken,
            to_move=world.to_move,
            kitty=draft.kitty,
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
        set_hand_seed(states, hand_seed)
        return states


def set_hand_seed(states: np.ndarray, hand_seed: int) -> None:
    """Give ``states[0]`` the hand seed and per-seat decision streams ``start_hand`` derives from it."""
    record = states[0]
    seed = np.uint64(int(hand_seed) & 0xFFFF_FFFF_FFFF_FFFF)
    record["hand_seed"] = seed
    for s in range(MAX_PLAYERS):
        record["seat_seeds"][s] = derive_seed(seed, STREAM_DECISION + s)


# ---------------------------------------------------------------- parsing helpers
def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise HistoryError(f"{what} must be an integer, not {value!r}")
    return int(value)


def _scores(values: Any, n: int, what: str) -> tuple[int, ...]:
    if not isinstance(values, (list, tuple)) or len(values) != n:
        raise HistoryError(f"{what} must list {n} integers, one per seat, not {values!r}")
    return tuple(_integer(v, what) for v in values)


def _cards(cards: Any, what: str) -> int:
    """A bitboard from cards written as a string, a list of cards, a ``CardSet`` or a bitboard;
    a card given twice is an error (a set would hide it)."""
    if isinstance(cards, (CardSet, int, np.integer)) and not isinstance(cards, bool):
        try:
            return CardSet(cards).mask
        except ValueError as error:
            raise HistoryError(f"{what}: {error}") from None
    if isinstance(cards, str):
        cards = cards.replace(",", " ").split()
    if isinstance(cards, bytes) or not isinstance(cards, Iterable):
        raise HistoryError(f"{what} must be a list of cards, not {cards!r}")
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


def _names(mask: int) -> str:
    return " ".join(card_str(c) for c in cards_of(mask))


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _card_points(mask: int, rules: Rules) -> int:
    points = (mask & _HEARTS).bit_count() + 13 * (mask >> _QS & 1)
    if rules.black_maria:
        points += 10 * (mask >> _KS & 1) + 7 * (mask >> _AS & 1)
    return points


def _deck(rules: Rules) -> int:
    deck = (1 << N_CARDS) - 1
    if rules.deck_mode == "remove" and rules.n_players in (3, 5):
        deck &= ~(1 << N_RANKS)  # 2D
        if rules.n_players == 5:
            deck &= ~1  # 2C
    return deck


# ---------------------------------------------------------------- the rebuild
@dataclass
class _World:
    states: np.ndarray
    hand: int
    points: tuple[int, ...]
    hearts_broken: bool
    to_move: bool
    dealer: int


@dataclass
class _Scan:
    """What the history shows without any hidden card: voids, trick winners, trick points."""

    voids: list[int] = field(default_factory=list)  # bit s: the seat showed void in suit s
    winners: list[int] = field(default_factory=list)
    trick_points: list[int] = field(default_factory=list)


def _rebuild(obs: Observation, kitty_given: bool, check_derived: bool = False) -> _World:
    """Validate ``obs`` against everything its seat can know and build one consistent full state."""
    rules, seat, n = obs.rules, obs.seat, obs.rules.n_players
    if not 0 <= seat < n:
        raise HistoryError(f"seat {seat} does not exist with {n} players")
    deck, pc = _deck(rules), rules.pass_count
    dealt, passed, received = obs.dealt.mask, obs.passed.mask, obs.received.mask
    # --- the deal and the passes
    if dealt & ~deck:
        raise HistoryError(f"hand: {card_str(_lowest(dealt & ~deck))} is not in play under these rules")
    if dealt.bit_count() != rules.hand_size:
        raise HistoryError(f"hand: {dealt.bit_count()} cards given; these rules deal {rules.hand_size}")
    if obs.pass_direction not in PASS_DIRECTIONS:
        raise HistoryError(
            f"unknown pass direction {obs.pass_direction!r}: choose {', '.join(PASS_DIRECTIONS)}"
        )
    if obs.pass_direction not in pass_direction_cycle(rules) + ("none",) or (
        obs.pass_direction != "none" and pc == 0
    ):
        raise HistoryError(
            f"pass direction {obs.pass_direction!r} does not occur under these rules "
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
            raise HistoryError(f"passed: {passed.bit_count()} cards given; these rules pass {pc}")
        if passed & ~dealt:
            raise HistoryError(f"passed: {card_str(_lowest(passed & ~dealt))} is not in the hand")
    if received:
        if not passed:
            raise HistoryError("received cards without passed ones: cards arrive after the seat has passed")
        if received.bit_count() != pc:
            raise HistoryError(f"received: {received.bit_count()} cards given; these rules pass {pc}")
        if received & ~deck:
            raise HistoryError(f"received: {card_str(_lowest(received & ~deck))} is not in play")
        if received & dealt:
            raise HistoryError(f"received: {card_str(_lowest(received & dealt))} is in the seat's own hand")
    exchanged = not passing or bool(received)
    start = (dealt & ~passed) | received  # the seat's hand once the passes are exchanged
    receiver = (seat + offset) % n
    kitty = obs.kitty.mask
    if kitty_given:
        if rules.kitty_size == 0:
            raise HistoryError("kitty given, but these rules have no kitty")
        if kitty.bit_count() != rules.kitty_size or kitty & ~deck or kitty & start:
            raise HistoryError(f"kitty: {_names(kitty) or 'nothing'} cannot be the kitty of this deal")
    if obs.plays and not exchanged:
        raise HistoryError("cards were played before the pass was complete: give the received cards")
    if len(obs.plays) > rules.hand_size * n:
        raise HistoryError(f"{len(obs.plays)} plays: a hand has only {rules.hand_size * n}")
    dealer = obs.dealer
    if dealer >= n:
        raise HistoryError(f"dealer {dealer} does not exist with {n} players")
    if dealer < 0:
        first = obs.plays[0][0] if obs.plays else seat
        dealer = (first - 1) % n if rules.first_lead == "any" else 0

    # --- the history, card by card: everything checkable without a hidden card
    scan, error = _scan(
        obs, deck, start, receiver if passing else NO_SEAT, dealer, kitty if kitty_given else 0
    )
    plays = obs.plays[: error[0]] if error else obs.plays
    m = len(plays)

    # --- one consistent deal, replayed through the engine
    if not exchanged:
        hands, kitty_cards, passes = _deal_before_passing(obs, deck, kitty_given)
    else:
        hands, kitty_cards = _deal_after_passing(obs, plays, scan, deck, start, offset, kitty_given)
        passes = _passes(hands, obs, offset, start)
    states = new_states(1)
    record = states[0]
    for s in range(n):
        record["hands"][s] = np.uint64(hands[s])
    record["kitty"] = np.uint64(kitty_cards)
    known = np.zeros(max(m, 1), dtype=np.uint64)
    before = [0] * (m + 1)  # cards played before play i
    for i, (_, card) in enumerate(plays):
        before[i + 1] = before[i] | 1 << card
    future = [0] * n
    for i in range(m - 1, -1, -1):  # what each other seat is known to hold when it plays
        who, card = plays[i]
        future[who] |= 1 << card
        if who != seat:
            from_pass = passed & ~before[i] if who == receiver and passing else 0
            known[i] = np.uint64(future[who] | from_pass)
    seats = np.array([p[0] for p in plays] or [0], dtype=np.int64)
    cards = np.array([p[1] for p in plays] or [0], dtype=np.int64)
    order = np.array([s for s, _ in passes] or [0], dtype=np.int64)
    masks = np.array([c for _, c in passes] or [0], dtype=np.uint64)
    rules_tuple = rules.to_tuple()
    status, index = _replay(
        states, rules_tuple, offset, dealer, len(passes), order, masks, m, seats, cards, known, seat
    )
    if status == _OUT_OF_TURN:
        who = int(record["to_play"])
        what = "leads the first trick" if index == 0 else "is to play"
        raise HistoryError(f"play {index + 1}: seat {plays[index][0]} played out of turn; seat {who} {what}")
    if status == _ILLEGAL:
        who, card = plays[index]
        held = int(record["hands"][who]) if who == seat else int(known[index])
        reason = _why_illegal(record, rules, card, held, who == seat, passed)
        raise HistoryError(f"play {index + 1}: seat {who} may not play {card_str(card)} ({reason})")
    if error:
        raise HistoryError(error[1])

    # --- what follows from the whole history
    points = tuple(int(p) for p in record["points"][:n])
    if obs.points and obs.points != points:
        bad = next(s for s in range(n) if obs.points[s] != points[s])
        raise HistoryError(
            f"points: seat {bad} has taken {points[bad]} points in its tricks, not {obs.points[bad]}"
        )
    if int(record["phase"]) == PHASE_PASS:
        to_move = not passed
    else:
        to_move = int(record["phase"]) != PHASE_DONE and int(record["to_play"]) == seat
    world = _World(states, int(record["hands"][seat]), points, bool(record["hearts_broken"]), to_move, dealer)
    if check_derived:
        for name, value in (
            ("hand", world.hand),
            ("hearts_broken", world.hearts_broken),
            ("dealer", world.dealer),
        ):
            given = getattr(obs, name)
            if (given.mask if isinstance(given, CardSet) else given) != value:
                raise HistoryError(f"{name} is {given}, but the history gives {value}")
    for s in range(n):
        record["game_scores"][s] = obs.game_scores[s] if len(obs.game_scores) == n else 0
    return world


def _scan(
    obs: Observation, deck: int, start: int, receiver: int, dealer: int, kitty: int
) -> tuple[_Scan, tuple[int, str] | None]:
    """Checks every play against what the seat can see, in order; returns the facts and the
    first error as (play index, message), or None."""
    rules, seat, n = obs.rules, obs.seat, obs.rules.n_players
    passed = obs.passed.mask
    scan = _Scan(voids=[0] * n)
    void_at = [[-1] * 4 for _ in range(n)]
    played = 0
    where: dict[int, int] = {}
    leader = (dealer + 1) % n if rules.first_lead == "any" else (obs.plays[0][0] if obs.plays else NO_SEAT)
    trick_cards: list[tuple[int, int]] = []
    for i, (who, card) in enumerate(obs.plays):
        label = f"play {i + 1}"
        if not 0 <= who < n:
            return scan, (i, f"{label}: seat {who} does not exist with {n} players")
        if not deck >> card & 1:
            return scan, (i, f"{label}: {card_str(card)} is not in play under these rules")
        if played >> card & 1:
            return scan, (i, f"{label}: {card_str(card)} was already played (play {where[card] + 1})")
        expected = (leader + len(trick_cards)) % n
        if who != expected:
            what = "leads the first trick" if i == 0 else "is to play"
            return scan, (i, f"{label}: seat {who} played out of turn; seat {expected} {what}")
        if who == seat and not start >> card & 1:
            return scan, (i, f"{label}: seat {seat} does not hold {card_str(card)}")
        if who != seat:
            if start >> card & 1:
                return scan, (i, f"{label}: seat {who} played {card_str(card)}, which seat {seat} holds")
            if kitty >> card & 1:
                return scan, (i, f"{label}: seat {who} played {card_str(card)}, which lies in the kitty")
            if passed >> card & 1 and who != receiver:
                return scan, (
                    i,
                    f"{label}: seat {who} played {card_str(card)}, "
                    f"which seat {seat} passed to seat {receiver}",
                )
        suit = card // N_RANKS
        if void_at[who][suit] >= 0:
            return scan, (
                i,
                f"{label}: seat {who} played {card_str(card)} after showing void in "
                f"{SUIT_NAMES[suit]} (play {void_at[who][suit] + 1})",
            )
        if trick_cards:
            led = trick_cards[0][1] // N_RANKS
            if suit != led and void_at[who][led] < 0:
                void_at[who][led] = i
                scan.voids[who] |= 1 << led
                holding = passed & _SUIT[led] & ~played if who == receiver and who != seat else 0
                if holding:
                    return scan, (
                        i,
                        f"{label}: seat {who} showed void in {SUIT_NAMES[led]} while holding "
                        f"{card_str(_lowest(holding))}, passed to it by seat {seat}",
                    )
        played |= 1 << card
        where[card] = i
        trick_cards.append((who, card))
        if len(trick_cards) == n:
            led = trick_cards[0][1] // N_RANKS
            winner = max((c, s) for s, c in trick_cards if c // N_RANKS == led)[1]
            scan.winners.append(winner)
            scan.trick_points.append(_card_points(sum(1 << c for _, c in trick_cards), rules))
            leader = winner
            trick_cards = []
    return scan, None


def _deal_before_passing(
    obs: Observation, deck: int, kitty_given: bool
) -> tuple[list[int], int, list[tuple[int, int]]]:
    """Passing phase: the other hands are any split of the unseen cards. Seats before this one
    have passed (as in the batched loop); a seat that has passed waits for the others."""
    rules, seat, n = obs.rules, obs.seat, obs.rules.n_players
    if kitty_given:
        raise HistoryError("kitty given, but nobody has taken the kitty before the first trick")
    unseen = cards_of(deck & ~obs.dealt.mask)
    hands = [0] * n
    size = rules.hand_size
    for s in range(n):
        if s == seat:
            hands[s] = obs.dealt.mask
            continue
        for card in unseen[:size]:
            hands[s] |= 1 << card
        unseen = unseen[size:]
    kitty = sum(1 << c for c in unseen)
    if obs.passed:
        return hands, kitty, [(seat, obs.passed.mask)]
    passes = [(s, sum(1 << c for c in cards_of(hands[s])[-rules.pass_count :])) for s in range(seat)]
    return hands, kitty, passes


def _deal_after_passing(
    obs: Observation,
    plays: Sequence[tuple[int, int]],
    scan: _Scan,
    deck: int,
    start: int,
    offset: int,
    kitty_given: bool,
) -> tuple[list[int], int]:
    """The hands once passes are exchanged: every seat holds the cards it plays, the receiver
    of this seat's pass holds those cards, the first leader the lowest club in play (kitty
    mode: lower clubs lie in the kitty); the rest is split respecting hand sizes and voids,
    and (kitty taken by another seat) the kitty's public point value."""
    rules, seat, n = obs.rules, obs.seat, obs.rules.n_players
    size, kitty_size = rules.hand_size, rules.kitty_size
    placed = [0] * n
    placed[seat] = start
    for who, card in plays:
        if who != seat:
            placed[who] |= 1 << card
    if offset:
        placed[(seat + offset) % n] |= obs.passed.mask
    kitty = obs.kitty.mask if kitty_given else 0
    kitty_open = kitty_size > 0 and not kitty_given

    def room(s: int) -> int:
        return size - placed[s].bit_count()

    def kitty_room() -> int:
        return kitty_size - kitty.bit_count() if kitty_open else 0

    # the first leader holds the lowest club in play (kitty mode: lower free clubs lie in the kitty)
    if rules.first_lead != "any":
        leader = plays[0][0] if plays else NO_SEAT
        for club in cards_of(deck & _SUIT[CLUBS] & ~kitty):
            owner = next((s for s in range(n) if placed[s] >> club & 1), NO_SEAT)
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
                break
            # a free club: the leader's lowest (any_club), else in the kitty, else with another seat
            leader_takes = leader not in (NO_SEAT, seat) and rules.first_lead == "any_club"
            if leader_takes and room(leader) > 0 and not scan.voids[leader] >> CLUBS & 1:
                placed[leader] |= 1 << club
                break
            if kitty_room() > 0:
                kitty |= 1 << club
                continue
            if leader == NO_SEAT:  # another seat holds the lowest club: this seat does not lead
                placed[next(s for s in range(n) if s != seat and room(s) > 0)] |= 1 << club
                break
            if rules.first_lead == "two_clubs":
                raise HistoryError(
                    f"play 1: the first trick must be opened with the lowest club in play, "
                    f"{card_str(club)}{' (the kitty is full)' if kitty_size else ''}, "
                    f"not {card_str(plays[0][1])}"
                )
            raise HistoryError(
                f"play 1: seat {leader} cannot lead the first trick: it cannot hold "
                f"{card_str(club)}, the lowest club in play"
            )

    # the kitty's public point value, once another seat has taken it
    kitty_points = -1
    if kitty_open and scan.winners:
        winner = scan.winners[0]
        if winner == seat:
            raise HistoryError(f"seat {seat} took the kitty in the first trick: give its cards (kitty)")
        if not obs.points:
            raise HistoryError(
                f"seat {winner} took the kitty: give every seat's points (the kitty's points are public)"
            )
        taken = [0] * n
        for t, w in enumerate(scan.winners):
            taken[w] += scan.trick_points[t]
        for s in range(n):
            if s != winner and obs.points[s] != taken[s]:
                raise HistoryError(
                    f"points: seat {s} has taken {taken[s]} points in its tricks, not {obs.points[s]}"
                )
        kitty_points = obs.points[winner] - taken[winner] - _card_points(kitty, rules)
        if kitty_points < 0:
            raise HistoryError(
                f"points: seat {winner} has taken {taken[winner]} points in its tricks, more than "
                f"{obs.points[winner]}"
            )
    elif kitty_given and (not scan.winners or scan.winners[0] != seat):
        raise HistoryError(f"kitty given, but seat {seat} has not taken the kitty")

    for s in range(n):
        if s != seat and room(s) < 0:
            raise HistoryError(f"seat {s} is known to hold more cards than a hand has")
    if kitty_room() < 0:
        raise HistoryError("more cards must lie in the kitty than it holds")
    free = deck & ~kitty
    for s in range(n):
        free &= ~placed[s]
    slots = [s for s in range(n) if s != seat]
    allowed = [0b1111 & ~scan.voids[s] for s in slots]
    rooms = [room(s) for s in slots]
    if kitty_points < 0:
        if kitty_open:
            slots.append(NO_SEAT)
            allowed.append(0b1111)
            rooms.append(kitty_room())
        split = _split(free, allowed, rooms)
        if split is None:
            raise HistoryError("no deal of the unseen cards fits the hand sizes and the voids shown")
    else:
        split = None
        for extra in combinations(cards_of(free), kitty_room()):
            mask = sum(1 << c for c in extra)
            if _card_points(mask, rules) == kitty_points:
                split = _split(free & ~mask, allowed, rooms)
                if split is not None:
                    kitty |= mask
                    break
        if split is None:
            raise HistoryError(
                f"no deal of the unseen cards gives the kitty {kitty_points} points and fits the "
                f"hand sizes and the voids shown"
            )
    hands = list(placed)
    for slot, cards in zip(slots, split, strict=True):
        if slot == NO_SEAT:
            kitty |= cards
        else:
            hands[slot] |= cards
    return hands, kitty


def _split(free: int, allowed: list[int], rooms: list[int]) -> list[int] | None:
    """Deal ``free`` into slots of the given sizes, each taking only its allowed suits (a tiny
    max flow: suits to slots), lowest cards first; None if no deal fits."""
    counts = [(free & _SUIT[s]).bit_count() for s in range(4)]
    if sum(counts) != sum(rooms):
        return None
    k = len(rooms)
    flow = [[0] * k for _ in range(4)]
    left = list(rooms)
    remaining = list(counts)

    def augment(suit: int, seen: set[int]) -> bool:
        """Find room for one card of ``suit``, moving cards of other suits along the way."""
        for slot in range(k):
            if not allowed[slot] >> suit & 1 or slot in seen:
                continue
            seen.add(slot)
            if left[slot] > 0:
                left[slot] -= 1
                flow[suit][slot] += 1
                return True
            for other in range(4):
                if flow[other][slot] > 0 and other != suit:
                    flow[other][slot] -= 1
                    flow[suit][slot] += 1
                    if augment(other, seen):
                        return True
                    flow[suit][slot] -= 1
                    flow[other][slot] += 1
        return False

    for suit in range(4):
        while remaining[suit]:
            if not augment(suit, set()):
                return None
            remaining[suit] -= 1
    out = [0] * k
    for suit in range(4):
        cards = cards_of(free & _SUIT[suit])
        for slot in range(k):
            for card in cards[: flow[suit][slot]]:
                out[slot] |= 1 << card
            cards = cards[flow[suit][slot] :]
    return out


def _passes(hands: list[int], obs: Observation, offset: int, start: int) -> list[tuple[int, int]]:
    """Passes that turn dealt hands into ``hands``: this seat's are the real ones; each other
    seat is said to have received its highest-ranked cards. Rewrites ``hands`` to the deal."""
    n, seat = obs.rules.n_players, obs.seat
    if not offset:
        return []
    received = [0] * n
    for s in range(n):
        if s == seat:
            received[s] = obs.received.mask
        elif s == (seat + offset) % n:
            received[s] = obs.passed.mask
        else:
            ranked = sorted(cards_of(hands[s]), key=lambda c: (c % N_RANKS, c))
            received[s] = sum(1 << c for c in ranked[-obs.rules.pass_count :])
    passed = [received[(s + offset) % n] for s in range(n)]
    for s in range(n):
        hands[s] = (hands[s] & ~received[s]) | passed[s]
    assert hands[seat] == obs.dealt.mask, "the rebuilt deal must give this seat its dealt hand"
    return [(s, passed[s]) for s in range(n)]


def _why_illegal(record: Any, rules: Rules, card: int, held: int, own: bool, passed: int) -> str:
    """Why ``card`` was not legal, naming a card the seat is known to hold then."""

    def holding(mask: int) -> str:
        if not mask:
            return "it holds nothing else"
        evidence = _lowest(mask)
        if own:
            return f"it holds {card_str(evidence)}"
        source = "passed to it" if passed >> evidence & 1 else "played later"
        return f"it holds {card_str(evidence)}, {source}"

    candidates = held
    if int(record["n_in_trick"]) > 0:
        led = int(record["trick_cards"][int(record["leader"])]) // N_RANKS
        if held & _SUIT[led]:
            candidates = held & _SUIT[led]
            if card // N_RANKS != led:
                return f"must follow {SUIT_NAMES[led]}: {holding(candidates)}"
    first_trick = int(record["trick_number"]) == 0
    if first_trick and int(record["n_in_trick"]) == 0 and rules.first_lead != "any":
        if rules.first_lead == "any_club":
            return "the first trick is opened with a club"
        return f"the first trick is opened with {card_str(int(record['first_lead_card']))}"
    point_cards = _HEARTS | 1 << _QS | ((1 << _KS | 1 << _AS) if rules.black_maria else 0)
    if first_trick and point_cards >> card & 1:
        return f"no points on the first trick: {holding(candidates & ~point_cards)}"
    return f"hearts are not broken: {holding(held & ~_HEARTS)}"


# ---------------------------------------------------------------- the replay kernel
_OK, _OUT_OF_TURN, _ILLEGAL = 0, 1, 2


@njit
def _replay(
    states,
    rules,
    pass_offset,
    dealer,
    n_passes,
    pass_seats,
    pass_masks,
    n_plays,
    seats,
    cards,
    known,
    observer,
):
    """Start the hand from the dealt ``hands``, make the passes, then the plays, checking turn
    order and the legality of each play against the cards its seat is known to hold (its
    whole hand for ``observer``). Returns (status, index of the failing play); the state is
    left just before that play. One kernel call: crossing into numba costs ~40 us a record."""
    state = states[0]
    start_hand(state, rules, pass_offset, dealer, np.uint64(0))
    for i in range(n_passes):
        pass_cards(state, rules, pass_seats[i], pass_masks[i])
    for i in range(n_plays):
        seat = seats[i]
        if state.to_play != seat:
            return _OUT_OF_TURN, i
        hand = state.hands[seat]
        if seat != observer:
            state.hands[seat] = known[i]
        legal = legal_moves(state, rules)
        state.hands[seat] = hand
        if not (legal >> np.uint64(cards[i])) & np.uint64(1):
            return _ILLEGAL, i
        play_card(state, rules, cards[i])
    return _OK, n_plays
