"""A slow, obviously correct reference engine for one hand of Hearts (docs/rules.md).

Design note: this module exists only to be differential-tested against the fast numba
engine, so it trades every bit of speed for readability. Cards are plain ints
(``suit * 13 + rank``; clubs=0, diamonds=1, spades=2, hearts=3; rank 0 = two ... 12 = ace),
sets of cards are Python ``set``s, and each rule of docs/rules.md is one small function whose
comment cites the rule. It imports nothing from the engine under test (only the
``Rules`` value), so a bug there cannot hide here.

Readings the project fixed where docs/rules.md leaves room (see the summary in
``tests/test_reference_engine.py``):
- point cards are hearts + QS, plus KS and AS under Black Maria (also for rule 5);
- ``hearts_broken`` becomes True as soon as a heart (or, with ``qs_breaks_hearts``, the
  QS) is played; it only matters for later leads;
- passed cards leave the passer's hand at once; the receivers get them when the last
  seat has passed (rule 2: simultaneous passing).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterable, Sequence

from hearts_sim.core.rules import Rules

# --- cards (the project's fixed encoding) ---
N_CARDS = 52
N_RANKS = 13
CLUBS, DIAMONDS, SPADES, HEARTS = 0, 1, 2, 3
SUIT_LETTERS = "CDSH"
RANK_LETTERS = "23456789TJQKA"

TWO_CLUBS = 0  # 2C
TWO_DIAMONDS = 13  # 2D
JACK_OF_DIAMONDS = 22  # JD
QUEEN_OF_SPADES = 36  # QS
KING_OF_SPADES = 37  # KS
ACE_OF_SPADES = 38  # AS

POINTS_PER_HEART = 1  # rule 7
POINTS_QUEEN_OF_SPADES = 13  # rule 7
POINTS_KING_OF_SPADES = 10  # black_maria
POINTS_ACE_OF_SPADES = 7  # black_maria

PASS_DIRECTIONS = ("left", "right", "across", "none")
PASS_OFFSETS = {"left": 1, "right": -1, "across": 2, "none": 0}  # rule 2


def suit_of(card: int) -> int:
    return card // N_RANKS


def rank_of(card: int) -> int:
    return card % N_RANKS


def card_name(card: int) -> str:
    """Two letters, rank then suit.

    >>> card_name(36), card_name(0), card_name(47)
    ('QS', '2C', 'TH')
    """
    return RANK_LETTERS[rank_of(card)] + SUIT_LETTERS[suit_of(card)]


# --- the deck (rule 1, deck_mode) ---
def removed_cards(rules: Rules) -> set[int]:
    """Cards taken out before dealing: 2D with 3 players, 2D and 2C with 5 (remove mode only)."""
    if rules.deck_mode == "kitty" or rules.n_players == 4:
        return set()
    if rules.n_players == 3:
        return {TWO_DIAMONDS}
    return {TWO_DIAMONDS, TWO_CLUBS}  # 5 players


def deck_cards(rules: Rules) -> set[int]:
    """Every card in play this hand (dealt to a player or to the kitty)."""
    return set(range(N_CARDS)) - removed_cards(rules)


# --- points (rule 7, black_maria) ---
def card_points(rules: Rules, card: int) -> int:
    """Penalty points of one card: hearts 1, QS 13; with black_maria also KS 10 and AS 7."""
    if suit_of(card) == HEARTS:
        return POINTS_PER_HEART
    if card == QUEEN_OF_SPADES:
        return POINTS_QUEEN_OF_SPADES
    if rules.black_maria and card == KING_OF_SPADES:
        return POINTS_KING_OF_SPADES
    if rules.black_maria and card == ACE_OF_SPADES:
        return POINTS_ACE_OF_SPADES
    return 0


def is_point_card(rules: Rules, card: int) -> bool:
    """The project's reading of rule 5 under Black Maria: KS and AS are point cards too."""
    return card_points(rules, card) > 0


def point_cards(rules: Rules) -> set[int]:
    """All point cards of the deck: taking every one of them is a moon (rule 8)."""
    return {card for card in range(N_CARDS) if is_point_card(rules, card)}


# --- tricks (Words: trick) ---
def trick_winner(trick: Sequence[tuple[int, int]]) -> int:
    """Seat that played the highest card of the led suit; ``trick`` is [(seat, card), ...]."""
    led_suit = suit_of(trick[0][1])
    best_seat, best_card = trick[0]
    for seat, card in trick[1:]:
        if suit_of(card) == led_suit and rank_of(card) > rank_of(best_card):
            best_seat, best_card = seat, card
    return best_seat


# --- passing (rule 2, pass_count, pass_cycle) ---
def pass_direction_for_hand(rules: Rules, hand_number: int) -> str:
    """Direction of hand ``hand_number`` (1-based within a game); ``random`` is not handled here."""
    if hand_number < 1:
        raise ValueError(f"hand_number={hand_number} must be 1 or more")
    if rules.pass_cycle == "random":
        raise ValueError("pass_cycle='random' is drawn per hand by the caller, not by a cycle")
    if rules.pass_count == 0 or rules.pass_cycle == "none":
        return "none"
    if rules.pass_cycle == "cycle":
        # no seat across with 3 or 5 players
        cycle = ("left", "right", "across", "none") if rules.n_players == 4 else ("left", "right", "none")
        return cycle[(hand_number - 1) % len(cycle)]
    return rules.pass_cycle  # a fixed direction: left, right or across


def pass_receiver(seat: int, direction: str, n_players: int) -> int:
    """Seat that receives the cards ``seat`` passes: left seat+1, right seat-1, across seat+2."""
    return (seat + PASS_OFFSETS[direction]) % n_players


# --- dealing ---
def deal_random(rules: Rules, rng: random.Random, dealer: int = 0) -> tuple[list[list[int]], list[int]]:
    """Shuffle, deal one card at a time from the dealer's left; what is left is the kitty."""
    deck = sorted(deck_cards(rules))
    rng.shuffle(deck)
    n = rules.n_players
    hands: list[list[int]] = [[] for _ in range(n)]
    for i in range(rules.hand_size * n):
        hands[(dealer + 1 + i) % n].append(deck[i])
    kitty = deck[rules.hand_size * n :]
    return [sorted(hand) for hand in hands], sorted(kitty)


# --- game end (rule 9) ---
def reference_game_winners(rules: Rules, totals: Sequence[int]) -> list[int] | None:
    """Winner seats after a hand with cumulative ``totals``, or None if the game goes on."""
    if max(totals) < rules.target_score:
        return None  # nobody has reached the target yet
    lowest = min(totals)
    winners = [seat for seat, total in enumerate(totals) if total == lowest]
    if len(winners) > 1 and rules.tie_rule == "continue":
        return None  # tie for lowest: keep dealing until one player alone is lowest
    return winners


def _as_card(value: object) -> int:
    """An int card index, rejecting bools, floats and out-of-range values."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a card")
    try:
        card = int(value.__index__())  # type: ignore[attr-defined]
    except AttributeError:
        raise ValueError(f"{value!r} is not a card (expected an int 0..51)") from None
    if not 0 <= card < N_CARDS:
        raise ValueError(f"{card} is not a card (expected 0..51)")
    return card


class ReferenceHand:
    """One hand of Hearts, stepped one pass or one card at a time."""

    def __init__(self) -> None:  # use from_deal
        self.rules: Rules = Rules()
        self.n_players = 4
        self.dealer = 0
        self.pass_direction = "none"
        self.hands: list[set[int]] = []
        self.kitty: set[int] = set()
        self.passed: list[tuple[int, ...] | None] = []  # cards each seat passed (None: not yet)
        self.received: list[set[int]] = []  # cards each seat received (after the exchange)
        self.taken: list[set[int]] = []  # cards won in tricks, plus the kitty
        self.tricks_won: list[int] = []
        self.trick_winners: list[int] = []
        self.tricks: list[list[tuple[int, int]]] = []  # completed tricks, [(seat, card), ...]
        self.current_trick: list[tuple[int, int]] = []
        self.hearts_broken = False
        self.phase = "pass"
        self.current_player: int | None = None
        self.first_leader: int | None = None
        self.first_lead_card: int | None = None
        self.moon_shooter = -1

    # ------------------------------------------------------------------ setup
    @classmethod
    def from_deal(
        cls,
        rules: Rules,
        hands: Sequence[Iterable[int]],
        pass_direction: str = "none",
        kitty: Iterable[int] = (),
        dealer: int = 0,
    ) -> ReferenceHand:
        """A hand as dealt (before passing); raises ValueError on an impossible deal."""
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules value, not {type(rules).__name__}")
        n = rules.n_players
        hand_lists = [[_as_card(c) for c in hand] for hand in hands]
        kitty_list = [_as_card(c) for c in kitty]
        if len(hand_lists) != n:
            raise ValueError(f"expected {n} hands, got {len(hand_lists)}")
        for seat, hand in enumerate(hand_lists):
            if len(hand) != rules.hand_size:
                raise ValueError(f"seat {seat} holds {len(hand)} cards, expected {rules.hand_size}")
        if len(kitty_list) != rules.kitty_size:
            raise ValueError(f"kitty holds {len(kitty_list)} cards, expected {rules.kitty_size}")
        all_cards = [card for hand in hand_lists for card in hand] + kitty_list
        if len(set(all_cards)) != len(all_cards):
            duplicates = sorted({c for c in all_cards if all_cards.count(c) > 1})
            raise ValueError(f"duplicate cards: {[card_name(c) for c in duplicates]}")
        removed = removed_cards(rules) & set(all_cards)
        if removed:
            raise ValueError(
                f"cards removed from the deck in {rules.deck_mode} mode were dealt: "
                f"{[card_name(c) for c in sorted(removed)]}"
            )
        # the counts above and no duplicates make this the whole deck; checked anyway
        if set(all_cards) != deck_cards(rules):
            raise ValueError("the deal is not the deck of these rules")
        if pass_direction not in PASS_DIRECTIONS:
            raise ValueError(f"pass_direction={pass_direction!r}: choose one of {', '.join(PASS_DIRECTIONS)}")
        if pass_direction == "across" and n != 4:
            raise ValueError(f"pass_direction='across' needs 4 players, not {n}")
        if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
            raise ValueError(f"dealer={dealer!r} must be a seat 0..{n - 1}")

        self = cls()
        self.rules = rules
        self.n_players = n
        self.dealer = dealer
        # pass_count=0 means no passing ever, whatever direction was asked for
        self.pass_direction = "none" if rules.pass_count == 0 else pass_direction
        self.hands = [set(hand) for hand in hand_lists]
        self.kitty = set(kitty_list)
        self.passed = [None] * n
        self.received = [set() for _ in range(n)]
        self.taken = [set() for _ in range(n)]
        self.tricks_won = [0] * n
        if self.pass_direction == "none":
            self._begin_play()
        else:
            self.phase = "pass"
        return self

    def copy(self) -> ReferenceHand:
        return copy.deepcopy(self)

    # ---------------------------------------------------------------- passing
    def pass_cards(self, seat: int, cards: Iterable[int]) -> None:
        """Seat passes ``pass_count`` of its cards; the exchange happens after the last seat."""
        if self.phase != "pass":
            raise ValueError(f"no passing in phase {self.phase!r}")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.n_players:
            raise ValueError(f"seat={seat!r} is not a seat")
        if self.passed[seat] is not None:
            raise ValueError(f"seat {seat} has already passed")
        chosen = [_as_card(c) for c in cards]
        if len(chosen) != self.rules.pass_count:
            raise ValueError(f"pass exactly {self.rules.pass_count} cards, not {len(chosen)}")
        if len(set(chosen)) != len(chosen):
            raise ValueError("the same card was passed twice")
        missing = [c for c in chosen if c not in self.hands[seat]]
        if missing:
            raise ValueError(f"seat {seat} does not hold {[card_name(c) for c in missing]}")
        # rule 2: passes are simultaneous; the cards leave now and arrive after the last pass
        self.passed[seat] = tuple(sorted(chosen))
        self.hands[seat] -= set(chosen)
        if all(p is not None for p in self.passed):
            self._exchange_passes()
            self._begin_play()

    def _exchange_passes(self) -> None:
        """Rule 2: every seat receives what the seat on the other side of the direction passed."""
        for seat, cards in enumerate(self.passed):
            assert cards is not None
            receiver = pass_receiver(seat, self.pass_direction, self.n_players)
            self.received[receiver] = set(cards)
            self.hands[receiver] |= set(cards)

    # ------------------------------------------------------------- first lead
    def _lowest_club_held(self) -> int:
        """Rule 3 / first-lead row: 2C, 3C in 5p remove mode, else the lowest club held."""
        held = set().union(*self.hands)
        return min(card for card in held if suit_of(card) == CLUBS)

    def _holder(self, card: int) -> int:
        return next(seat for seat, hand in enumerate(self.hands) if card in hand)

    def _begin_play(self) -> None:
        """Decide the first leader after passing (the lead card may have been passed)."""
        self.phase = "play"
        if self.rules.first_lead == "any":
            # first_lead="any": the player left of the dealer leads any card (rules 5, 6 apply)
            self.first_leader = (self.dealer + 1) % self.n_players
            self.first_lead_card = None
        else:
            # rule 3 (two_clubs) and first_lead="any_club": the lowest club's holder leads
            self.first_lead_card = self._lowest_club_held()
            self.first_leader = self._holder(self.first_lead_card)
        self.current_player = self.first_leader

    # ------------------------------------------------------------ legal moves
    def _on_first_trick(self) -> bool:
        return not self.tricks

    def _first_trick_filter(self, cards: set[int]) -> set[int]:
        """Rule 5: on the first trick no point card, unless nothing else could be played."""
        if not (self._on_first_trick() and self.rules.no_points_first_trick):
            return set(cards)
        without_points = {c for c in cards if not is_point_card(self.rules, c)}
        return without_points if without_points else set(cards)

    def _hearts_lead_filter(self, hand: set[int]) -> set[int]:
        """Rule 6: no heart lead before hearts are broken, unless the leader holds only hearts."""
        if not self.rules.must_break_hearts or self.hearts_broken:
            return set(hand)
        non_hearts = {c for c in hand if suit_of(c) != HEARTS}
        if not non_hearts:
            return set(hand)  # only hearts: any of them
        if self.rules.lead_hearts_instead_of_qs and non_hearts == {QUEEN_OF_SPADES}:
            return set(hand)  # only QS and hearts: may lead a heart instead of the queen
        return non_hearts

    def _legal_first_lead(self, hand: set[int]) -> set[int]:
        """Rule 3 and the first_lead switch."""
        if self.rules.first_lead == "two_clubs":
            assert self.first_lead_card is not None
            return {self.first_lead_card}
        if self.rules.first_lead == "any_club":
            return {c for c in hand if suit_of(c) == CLUBS}
        return self._legal_lead(hand)  # "any": an ordinary lead on the first trick

    def _legal_follow(self, hand: set[int]) -> set[int]:
        """Rule 4: follow suit if able, else any card; rule 5 on the first trick either way."""
        led_suit = suit_of(self.current_trick[0][1])
        same_suit = {c for c in hand if suit_of(c) == led_suit}
        if same_suit:
            return self._first_trick_filter(same_suit)
        return self._first_trick_filter(hand)

    def _legal_lead(self, hand: set[int]) -> set[int]:
        """Rule 6 for every lead; rule 5 as well when this lead opens the first trick."""
        return self._first_trick_filter(self._hearts_lead_filter(hand))

    def legal_moves(self) -> set[int]:
        """Cards the current player may play (empty outside the play phase)."""
        if self.phase != "play":
            return set()
        assert self.current_player is not None
        hand = self.hands[self.current_player]
        if self._on_first_trick() and not self.current_trick:
            return self._legal_first_lead(hand)
        if self.current_trick:
            return self._legal_follow(hand)
        return self._legal_lead(hand)

    # ------------------------------------------------------------------- play
    def _breaks_hearts(self, card: int) -> bool:
        """Rule 6 / qs_breaks_hearts: a heart (or the QS, with the switch) breaks hearts."""
        if suit_of(card) == HEARTS:
            return True
        return self.rules.qs_breaks_hearts and card == QUEEN_OF_SPADES

    def play(self, card: int) -> None:
        """The current player plays ``card``; raises ValueError (state unchanged) if illegal."""
        if self.phase != "play":
            raise ValueError(f"no card can be played in phase {self.phase!r}")
        card = _as_card(card)
        seat = self.current_player
        assert seat is not None
        if card not in self.legal_moves():
            raise ValueError(
                f"{card_name(card)} is not legal for seat {seat}: legal are "
                f"{[card_name(c) for c in sorted(self.legal_moves())]}"
            )
        self.hands[seat].remove(card)
        self.current_trick.append((seat, card))
        if self._breaks_hearts(card):
            self.hearts_broken = True
        if len(self.current_trick) < self.n_players:
            self.current_player = (seat + 1) % self.n_players
            return
        self._finish_trick()

    def _finish_trick(self) -> None:
        """The winner takes the trick (and, after the first trick, the kitty) and leads next."""
        winner = trick_winner(self.current_trick)
        first_trick = self._on_first_trick()
        self.taken[winner] |= {card for _, card in self.current_trick}
        if first_trick:
            self.taken[winner] |= self.kitty  # deck_mode="kitty": first-trick winner takes it
        self.tricks_won[winner] += 1
        self.trick_winners.append(winner)
        self.tricks.append(self.current_trick)
        self.current_trick = []
        if any(self.hands):
            self.current_player = winner
        else:
            self.phase = "done"
            self.current_player = None
            self.moon_shooter = self._find_moon_shooter()

    # ---------------------------------------------------------------- scoring
    def points(self) -> list[int]:
        """Raw penalty points taken so far per seat (rule 7), kitty included once taken."""
        return [sum(card_points(self.rules, c) for c in taken) for taken in self.taken]

    def _find_moon_shooter(self) -> int:
        """Rule 8 / black_maria: the seat that took every point card, else -1 (always, moon=off)."""
        if self.rules.moon == "off":
            return -1
        all_points = point_cards(self.rules)
        for seat, taken in enumerate(self.taken):
            if all_points <= taken:
                return seat
        return -1

    def _moon_adjusted(self, raw: list[int]) -> list[int]:
        """Rule 8 and the moon switch: others +T, or the shooter -T; T = rules.moon_total."""
        shooter = self.moon_shooter
        if shooter < 0:
            return list(raw)
        total = self.rules.moon_total
        if self.rules.moon == "others_plus":
            return [0 if seat == shooter else total for seat in range(self.n_players)]
        assert self.rules.moon == "self_minus"
        return [-total if seat == shooter else 0 for seat in range(self.n_players)]

    def _add_jd_bonus(self, scores: list[int]) -> list[int]:
        """jd_bonus (Omnibus): the JD taker adds the bonus, with or without a moon."""
        if self.rules.jd_bonus == 0:
            return scores
        result = list(scores)
        for seat, taken in enumerate(self.taken):
            if JACK_OF_DIAMONDS in taken:
                result[seat] += self.rules.jd_bonus
        return result

    def _add_avoid_all_tricks_bonus(self, scores: list[int]) -> list[int]:
        """avoid_all_tricks_bonus (OpenSpiel): each seat without a trick, unless a moon was shot."""
        if self.rules.avoid_all_tricks_bonus == 0 or self.moon_shooter >= 0:
            return scores
        return [
            score + (self.rules.avoid_all_tricks_bonus if self.tricks_won[seat] == 0 else 0)
            for seat, score in enumerate(scores)
        ]

    def scores(self) -> list[int]:
        """Final hand score per seat: raw points, moon adjustment, JD bonus, no-trick bonus."""
        if self.phase != "done":
            raise RuntimeError(f"the hand is not finished (phase {self.phase!r})")
        scores = self._moon_adjusted(self.points())
        scores = self._add_jd_bonus(scores)
        return self._add_avoid_all_tricks_bonus(scores)

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(card_name(c) for c in sorted(hand)) for hand in self.hands)
        return f"ReferenceHand(phase={self.phase}, to_play={self.current_player}, hands=[{hands}])"
