"""``HandState``: step through one hand from Python, on the same kernels as the batched loop.

For notebooks, tests, a human player and agents prototyped in Python::

    >>> from hearts_sim import HandState
    >>> state = HandState.deal("standard", seed=7)
    >>> state.phase, state.pass_direction
    ('pass', 'left')
    >>> for seat in range(4):
    ...     state.pass_cards(seat, list(state.hand(seat))[:3])
    >>> state.phase, state.legal_moves()
    ('play', CardSet('♣2'))

An illegal move raises ``IllegalMoveError`` and leaves the state unchanged; a seat that does not
exist is a ``ValueError`` (of which ``IllegalMoveError`` is one).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from html import escape
from typing import Any

import numpy as np

from hearts_sim.core.cards import (
    N_CARDS,
    N_RANKS,
    SUIT_SYMBOLS,
    CardSet,
    card_html,
    card_str,
    cards_html,
    cards_of,
    cards_str,
    html_table,
    listed_twice,
    parse_card,
    parse_cards,
)
from hearts_sim.core.checks import is_integer, shown
from hearts_sim.core.rules import Rules, RulesError, pass_direction_name, pass_offset, resolve_rules
from hearts_sim.engine.hand import (
    MAX_HANDS_PER_GAME,
    card_points,
    deal_numbered_hand,
    deck_cards,
    game_winners,
    legal_moves,
    pass_cards,
    play_card,
    start_hand,
    unreachable_target,
)
from hearts_sim.engine.rng import check_index, check_seed, derive_seed
from hearts_sim.engine.state import PHASE_DONE, PHASE_NAMES, PHASE_PASS, PHASE_PLAY, new_states
from hearts_sim.game.observation import Observation  # re-exported: it lived here first


class IllegalMoveError(ValueError):
    """A move the rules forbid now; the state is unchanged."""


def points_of(cards: int, rules: Rules) -> int:
    """The penalty points of the cards of bitboard ``cards`` under ``rules``, as the engine counts
    them (a card in a replay's trick, the kitty taken with the first trick)."""
    return int(card_points(np.uint64(cards), rules.to_tuple()))


class HandState:
    """One hand of Hearts, advanced by ``pass_cards`` and ``play``."""

    def __init__(self, rules: Rules, states: np.ndarray):
        self.rules = rules
        self._rules_array = rules.to_tuple()
        self._states = states
        self._state = states[0]  # a record view: kernels mutate it in place

    # ------------------------------------------------------------------ construction
    @classmethod
    def deal(cls, rules: Rules | str = "standard", seed: int = 0, hand: int = 0) -> HandState:
        """Deal ``hand`` of a ``simulate(..., seed=seed)`` run: the same cards, direction and dealer."""
        rules = resolve_rules(rules)
        seed, hand = check_seed(seed), check_index(hand, "hand")
        array = rules.to_tuple()
        states = new_states(1)
        deal_numbered_hand(states[0], array, np.uint64(seed), hand)  # a seed >= 2**63 does not fit int64
        return cls(rules, states)

    @classmethod
    def from_deal(
        cls,
        rules: Rules | str,
        hands: Iterable[str | Iterable[str | int] | CardSet | int],
        pass_direction: str = "none",
        kitty: str | Iterable[str | int] | CardSet | int = 0,
        dealer: int = 0,
        seed: int = 0,
    ) -> HandState:
        """A hand from explicit cards (as dealt, before passing), e.g. for golden scripted deals."""
        rules = resolve_rules(rules)
        n = rules.n_players
        if isinstance(hands, (str, CardSet, int)):  # its characters read as hands: "malformed card '2'"
            raise ValueError(f"from_deal takes a hand per seat ({n} of them), not one set of cards")
        hands = list(hands)  # read twice: as cards, then for a card listed twice
        masks = [parse_cards(h) for h in hands]
        kitty_mask = parse_cards(kitty)
        if len(masks) != n:
            raise ValueError(f"from_deal needs {n} hands for {n} players, got {len(masks)}")
        array = rules.to_tuple()
        deck = int(deck_cards(array))
        seen = kitty_mask
        for seat, (hand, mask) in enumerate(zip(hands, masks, strict=True)):
            twice = listed_twice(hand)  # a set would hide it
            if twice is not None:
                raise ValueError(f"seat {seat}'s hand lists {card_str(twice)} twice")
            if mask.bit_count() != rules.hand_size:
                raise ValueError(
                    f"seat {seat} holds {mask.bit_count()} cards; these rules deal {rules.hand_size}"
                )
            if seen & mask:
                raise ValueError(f"card {card_str(cards_of(seen & mask)[0])} is dealt twice")
            seen |= mask
        if kitty_mask.bit_count() != rules.kitty_size:
            raise ValueError(
                f"the kitty holds {kitty_mask.bit_count()} cards; these rules need {rules.kitty_size}"
            )
        if seen != deck:
            stray = seen & ~deck
            what = (
                f"{card_str(cards_of(stray)[0])} is not in play"
                if stray
                else (f"{card_str(cards_of(deck & ~seen)[0])} is missing")
            )
            raise ValueError(f"the deal does not match the deck: {what}")
        states = new_states(1)
        for seat, mask in enumerate(masks):
            states[0]["hands"][seat] = mask
        states[0]["kitty"] = kitty_mask
        seed = check_seed(seed)
        if not is_integer(dealer) or not 0 <= dealer < n:
            raise ValueError(f"dealer {shown(dealer)} does not exist with {n} players")
        start_hand(states[0], array, pass_offset(pass_direction, n), int(dealer), np.uint64(seed))
        return cls(rules, states)

    def copy(self) -> HandState:
        """An independent copy, as ``copy.copy``, ``copy.deepcopy`` and pickling make: the copy
        shared the original's record under ``copy.copy``, and under ``deepcopy`` or pickle its
        play went to one copy of the record and the view read from the other."""
        return type(self)(self.rules, self._states.copy())

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> HandState:
        copied = memo[id(self)] = self.copy()  # a hand twice in what is copied: one copy, twice
        return copied

    def __reduce__(self) -> tuple[type[HandState], tuple[Rules, np.ndarray]]:
        return type(self), (self.rules, self._states)

    # ------------------------------------------------------------------ reading
    @property
    def phase(self) -> str:
        """``pass``, ``play`` or ``done``."""
        return PHASE_NAMES[int(self._state["phase"])]

    @property
    def n_players(self) -> int:
        """Seats at the table: 3, 4 or 5, as the rules say."""
        return self.rules.n_players

    @property
    def current_player(self) -> int | None:
        """The seat to play, or ``None`` while passing or when the hand is over."""
        return int(self._state["to_play"]) if self._state["phase"] == PHASE_PLAY else None

    @property
    def pass_direction(self) -> str:
        """This hand's pass: ``left``, ``right``, ``across`` or ``none`` (a hold hand)."""
        return pass_direction_name(int(self._state["pass_offset"]), self.n_players)

    @property
    def hearts_broken(self) -> bool:
        """Whether a heart (or the queen, under ``qs_breaks_hearts``) has been played: hearts may
        be led from then on."""
        return bool(self._state["hearts_broken"])

    @property
    def trick_number(self) -> int:
        """Tricks completed so far: 0 while passing and during the first trick, the hand size
        once done."""
        return int(self._state["trick_number"])

    @property
    def record(self) -> np.void:
        """The raw ``HAND_STATE`` record (read it, do not write it)."""
        return self._state

    def hand(self, seat: int) -> CardSet:
        """The cards ``seat`` holds now (after the pass, less those it has played)."""
        return CardSet(int(self._state["hands"][self._seat(seat)]))

    def dealt(self, seat: int) -> CardSet:
        """The cards ``seat`` was dealt, before the pass."""
        return CardSet(int(self._state["dealt"][self._seat(seat)]))

    @property
    def kitty(self) -> CardSet:
        """The cards laid face down under ``deck_mode=kitty`` (the first trick's winner takes them
        and their points); empty otherwise."""
        return CardSet(int(self._state["kitty"]))

    @property
    def dealer(self) -> int:
        """The dealer's seat (public, as ``Observation.dealer``): under ``first_lead=any`` the seat
        after it leads."""
        return int(self._state["dealer"])

    def taken(self, seat: int) -> CardSet:
        """The cards of the tricks ``seat`` has won so far (and the kitty, once it is taken)."""
        return CardSet(int(self._state["taken"][self._seat(seat)]))

    def tricks_won(self) -> np.ndarray:
        """How many tricks each seat has won so far (a copy)."""
        return self._state["tricks_won"][: self.n_players].copy()

    @property
    def trick_winners(self) -> list[int]:
        """The seat that won each completed trick, in order."""
        return [int(w) for w in self._state["trick_winners"][: self.trick_number]]

    @property
    def trick(self) -> list[tuple[int, int]]:
        """The current trick as (seat, card), in play order."""
        s, n = self._state, self.n_players
        leader = int(s["leader"])
        return [
            ((leader + i) % n, int(s["trick_cards"][(leader + i) % n])) for i in range(int(s["n_in_trick"]))
        ]

    @property
    def plays(self) -> list[tuple[int, int]]:
        """Every card played so far as (seat, card), in order."""
        s, n = self._state, self.n_players
        return [
            ((int(s["trick_leaders"][i // n]) + i % n) % n, int(s["history"][i]))
            for i in range(int(s["n_played"]))
        ]

    @property
    def moon_shooter(self) -> int:
        """The seat that shot the moon in this hand, or -1 (none, or the hand is not over)."""
        return int(self._state["moon_shooter"])

    def legal_moves(self) -> CardSet:
        """The cards the player to move may play (empty outside the play phase)."""
        if self._state["phase"] != PHASE_PLAY:
            return CardSet()
        return CardSet(int(legal_moves(self._state, self._rules_array)))

    def points(self) -> np.ndarray:
        """Raw penalty points taken so far, per seat."""
        return self._state["points"][: self.n_players].copy()

    def scores(self) -> np.ndarray:
        """The hand's final scores (moon, JD and no-trick bonus applied); only once done."""
        if self._state["phase"] != PHASE_DONE:
            raise IllegalMoveError("the hand is not over: scores() exists once every card is played")
        return self._state["scores"][: self.n_players].copy()

    def observation(self, seat: int) -> Observation:
        """Everything ``seat`` may know now, and nothing more."""
        seat = self._seat(seat)
        s = self._state
        exchanged = s["phase"] != PHASE_PASS
        return Observation(
            rules=self.rules,
            seat=seat,
            hand=self.hand(seat),
            dealt=self.dealt(seat),
            pass_direction=self.pass_direction,
            passed=CardSet(int(s["passed"][seat])),
            received=CardSet(int(s["received"][seat]) if exchanged else 0),
            plays=tuple(self.plays),
            points=tuple(int(p) for p in self.points()),
            game_scores=tuple(int(x) for x in s["game_scores"][: self.n_players]),
            hearts_broken=self.hearts_broken,
            to_move=self.current_player == seat
            or bool(s["phase"] == PHASE_PASS and not (int(s["passes_made"]) >> seat) & 1),
            kitty=CardSet(int(s["kitty"]) if self.trick_number and self.trick_winners[0] == seat else 0),
            dealer=int(s["dealer"]),
        )

    # ------------------------------------------------------------------ acting
    def pass_cards(self, seat: int, cards: str | Iterable[str | int] | CardSet | int) -> None:
        """Choose ``seat``'s cards to pass; the exchange happens after the last seat's pass."""
        seat = self._seat(seat)
        s = self._state
        if s["phase"] != PHASE_PASS:
            raise IllegalMoveError(f"no passing now: the hand is in the {self.phase} phase")
        if (int(s["passes_made"]) >> seat) & 1:
            raise IllegalMoveError(f"seat {seat} has already passed")
        if isinstance(cards, Iterator):  # read once for both checks (a generator's duplicates passed)
            cards = tuple(itertools.islice(cards, N_CARDS + 1))  # an endless one: refused, not hung
        try:  # a typo is a move refused too: one except clause serves a loop that asks a person
            mask = parse_cards(cards)
            twice = listed_twice(cards)
        except (TypeError, ValueError) as error:
            raise IllegalMoveError(f"seat {seat}'s pass: {error}") from None
        if twice is not None:  # it read "pass exactly 3 cards, not 2"
            raise IllegalMoveError(f"seat {seat}'s pass lists {card_str(twice)} twice")
        count = self.rules.pass_count
        if mask.bit_count() != count:
            raise IllegalMoveError(f"pass exactly {count} cards, not {mask.bit_count()}")
        stray = mask & ~int(s["hands"][seat])
        if stray:
            raise IllegalMoveError(f"seat {seat} does not hold {card_str(cards_of(stray)[0])}")
        pass_cards(s, self._rules_array, seat, np.uint64(mask))

    def play(self, card: str | int) -> None:
        """Play ``card`` for the player to move."""
        s = self._state
        if s["phase"] != PHASE_PLAY:
            raise IllegalMoveError(f"no card can be played: the hand is in the {self.phase} phase")
        try:
            index = parse_card(card)
        except (TypeError, ValueError) as error:
            raise IllegalMoveError(str(error)) from None
        seat = int(s["to_play"])
        if not (int(s["hands"][seat]) >> index) & 1:
            raise IllegalMoveError(f"seat {seat} does not hold {card_str(index)}")
        legal = int(legal_moves(s, self._rules_array))
        if not (legal >> index) & 1:
            raise IllegalMoveError(
                f"{card_str(index)} is not legal now ({self._why_illegal(index)}); legal: {cards_str(legal)}"
            )
        play_card(s, self._rules_array, index)

    def _why_illegal(self, card: int) -> str:
        s = self._state
        if s["n_in_trick"] > 0:
            led = int(s["trick_cards"][int(s["leader"])]) // N_RANKS
            if card // N_RANKS != led:
                return f"must follow {SUIT_SYMBOLS[led]}"
        if s["trick_number"] == 0 and s["n_in_trick"] == 0 and s["first_lead_card"] >= 0:
            return f"the first trick is opened with {card_str(int(s['first_lead_card']))}"
        if s["trick_number"] == 0:
            return "no points on the first trick"
        return "hearts are not broken"

    def _seat(self, seat: int) -> int:
        if not is_integer(seat) or not 0 <= seat < self.n_players:
            raise ValueError(f"seat {shown(seat)} does not exist with {self.n_players} players")
        return int(seat)

    # ------------------------------------------------------------------ display
    def __str__(self) -> str:
        s, n = self._state, self.n_players
        lines = [
            f"{self.rules.label()} | {self.phase} | pass {self.pass_direction} | "
            f"trick {self.trick_number + 1 if self.phase != 'done' else '-'} | "
            f"hearts {'broken' if self.hearts_broken else 'unbroken'}{self._game_totals()}"
        ]
        # each hand padded to the widest (a fixed 44 ran over with 3 players' 17 cards), "-" once
        # played out (every suit's "-" before), and in the pass phase the cards a seat has chosen
        hands = [cards.by_suit() if cards else "-" for cards in map(self.hand, range(n))]
        width = max(map(len, hands))
        for seat in range(n):
            marker = ">" if self.current_player == seat else " "
            chosen = int(s["passed"][seat]) if self.phase == "pass" else 0
            lines.append(
                f"{marker} seat {seat}: {hands[seat]:<{width}}  "
                f"points {int(s['points'][seat]):>2}  tricks {int(s['tricks_won'][seat])}"
                + (f"  passes {CardSet(chosen)}" if chosen else "")
            )
        if self.rules.kitty_size:
            # the first trick's winner takes it: until that trick is won it lies there (the HTML's too)
            taken = f"(taken by seat {self.trick_winners[0]})" if self.trick_number else str(self.kitty)
            lines.append(f"  kitty: {taken}")
        trick = ", ".join(f"seat {seat} {card_str(card, symbols=True)}" for seat, card in self.trick)
        lines.append(f"  trick: {trick or '-'}")
        if self.phase == "done":
            lines.append(
                f"  scores: {list(int(x) for x in self.scores())}"
                + (f" (moon by seat {self.moon_shooter})" if self.moon_shooter >= 0 else "")
            )
        return "\n".join(lines)

    def _game_totals(self) -> str:
        """`` | game totals before it [...]`` in a hand of a game (``Game.next_hand``,
        ``replay(row).state_at``), as ``Replay`` captions it; empty at 0-0 or outside a game."""
        totals = [int(x) for x in self._state["game_scores"][: self.n_players]]
        return f" | game totals before it {totals}" if any(totals) else ""

    def __repr__(self) -> str:
        # tricks counted from 1, as str and the HTML count them (trick_number counts from 0)
        if self.phase == "done":
            return f"<HandState done, scores {self.scores().tolist()}>"
        if self.phase == "pass":
            return f"<HandState pass {self.pass_direction}>"
        return f"<HandState {self.phase}, trick {self.trick_number + 1}, to play {self.current_player}>"

    def _repr_html_(self) -> str:
        """Jupyter's rich display: the table as ``str`` shows it, every card of the deck once (in a
        hand, the current trick, a seat's taken cards or the kitty); cards chosen to pass are
        underlined until the exchange."""
        s, n = self._state, self.n_players
        done = self.phase == "done"
        passing = self.phase == "pass"
        trick = dict(self.trick)
        header = ["seat", "hand", "trick", "points", "tricks", "taken"] + (["score"] if done else [])
        rows = []
        for seat in range(n):
            chosen = int(s["passed"][seat]) if passing else 0
            played = card_html(trick[seat]) if seat in trick else ""
            row = [
                f"&#9654; {seat}" if self.current_player == seat else str(seat),
                cards_html(self.hand(seat).mask, underline=chosen),
                played,
                str(int(s["points"][seat])),
                str(int(s["tricks_won"][seat])),
                cards_html(self.taken(seat).mask),
            ]
            rows.append(row + ([str(int(s["scores"][seat]))] if done else []))
        if self.rules.kitty_size and self.trick_number == 0:
            rows.append(["kitty", cards_html(self.kitty.mask), "", "", "", ""] + ([""] if done else []))
        facts = [
            self.rules.label(),
            self.phase,
            f"pass {self.pass_direction}",
            f"trick {self.trick_number + 1}" if not done else "hand over",
            f"hearts {'broken' if self.hearts_broken else 'unbroken'}{self._game_totals()}",
        ]
        if done and self.moon_shooter >= 0:
            facts.append(f"moon by seat {self.moon_shooter}")
        if passing and int(s["passes_made"]):
            facts.append("underlined: chosen to pass")
        return html_table(header, rows, caption=escape(" | ".join(facts)), kind="hs-hand-state")


class Game:
    """Hands until someone reaches the target score (rule 9), exactly as ``simulate_games`` plays
    game ``game`` of a run with ``seed``: same deals, pass directions and dealers.

    >>> game = Game("quick", seed=3)
    >>> state = game.next_hand()
    >>> state.pass_direction, game.totals
    ('left', [0, 0, 0, 0])
    """

    def __init__(self, rules: Rules | str = "standard", seed: int = 0, game: int = 0):
        self.rules = resolve_rules(rules)
        problem = unreachable_target(self.rules)
        if problem is not None:  # simulate_games refuses it: they would part after the cut-off
            raise RulesError(problem)
        self.game_seed = int(derive_seed(np.uint64(check_seed(seed)), check_index(game, "game")))
        self.totals = [0] * self.rules.n_players
        self.hands_played = 0
        self.moons: list[int] = []  # shooter of each hand, -1 for none

    def next_hand(self) -> HandState:
        """Deal the next hand; its observations show the totals so far as game scores."""
        if self.over:
            cut = f": cut off undecided after {MAX_HANDS_PER_GAME:,} hands" if self.cut_off else ""
            raise IllegalMoveError(f"the game is over{cut}")
        state = HandState.deal(self.rules, seed=self.game_seed, hand=self.hands_played)
        state.record["game_scores"][: self.rules.n_players] = self.totals
        return state

    def finish_hand(self, state: HandState) -> None:
        """Add a finished hand's scores to the totals: the hand ``next_hand`` dealt last, once."""
        if not isinstance(state, HandState):
            raise TypeError(f"finish_hand takes the HandState next_hand() dealt, not {type(state).__name__}")
        expected = int(derive_seed(np.uint64(self.game_seed), self.hands_played))
        if state.rules != self.rules or int(state.record["hand_seed"]) != expected:
            counted = [int(derive_seed(np.uint64(self.game_seed), hand)) for hand in range(self.hands_played)]
            if state.rules == self.rules and int(state.record["hand_seed"]) in counted:
                hand = counted.index(int(state.record["hand_seed"]))
                raise IllegalMoveError(
                    f"hand {hand} of this game is counted already (a copy of it?): each hand counts once"
                )
            raise IllegalMoveError(
                f"this is not hand {self.hands_played} of this game, the one next_hand() deals now: "
                "each hand counts once, in order"
            )
        scores = state.scores()  # raises unless the hand is over
        self.totals = [t + int(s) for t, s in zip(self.totals, scores, strict=True)]
        self.hands_played += 1
        self.moons.append(state.moon_shooter)

    @property
    def winners(self) -> list[int]:
        """The winning seats once the game is over (several if first place is shared), else []."""
        mask = int(
            game_winners(
                np.array(self.totals, dtype=np.int64),
                self.rules.n_players,
                self.rules.target_score,
                self.rules.tie_rule == "share",
            )
        )
        return [s for s in range(self.rules.n_players) if mask >> s & 1]

    @property
    def over(self) -> bool:
        """Someone has won, or the game is cut off undecided (``cut_off``)."""
        return bool(self.winners) or self.hands_played >= MAX_HANDS_PER_GAME

    @property
    def cut_off(self) -> bool:
        """Undecided after ``MAX_HANDS_PER_GAME`` hands: over, no one winning, as ``simulate_games``
        ends it (a ``Game`` went on past it: game g of a run was another game from there)."""
        return self.hands_played >= MAX_HANDS_PER_GAME and not self.winners

    def __repr__(self) -> str:  # a notebook cell ending in a game shows where it stands
        won = f", won by {self.winners}" if self.winners else ", cut off undecided" if self.cut_off else ""
        return f"<Game {self.rules.label()}, {self.hands_played} hands played, totals {self.totals}{won}>"
