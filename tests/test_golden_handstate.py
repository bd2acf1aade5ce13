"""The golden scripted deals of ``test_reference_engine.py``, run on the fast engine.

Every test of ``test_reference_engine.py`` that builds a hand (through its ``deal`` helper
or ``ENGINE.from_deal``) is collected here a second time, with that module's ``ENGINE``
swapped for ``HandStateAdapter``: the same scripts and the same hand-worked assertions,
now against ``HandState``. Tests of reference-only helpers (card parser, game winners,
pass cycle) are not repeated.

The adapter bridges only API differences, never rules:
- HandState keeps passed cards in the hand until the exchange (the reference removes
  them at once), so ``hands`` hides the cards a seat has already passed;
- ``scores()`` before the end raises ``IllegalMoveError`` (a ValueError), the reference a
  ``RuntimeError``;
- hands are ``hand(seat)`` CardSets, not a ``hands`` list of sets; likewise ``taken``,
  ``tricks_won``, ``points()`` (numpy arrays there, lists here);
- ``first_lead_card`` lives in the raw record (``-1`` for none).
"""

from __future__ import annotations

import inspect

import pytest

from hearts_sim import HandState, IllegalMoveError, Rules

try:
    from tests import test_reference_engine as golden
except ImportError:  # tests/ itself on sys.path (rootdir-less import mode)
    import test_reference_engine as golden  # type: ignore[no-redef]


class HandStateAdapter:
    """``ReferenceHand``'s duck-typed API over a ``HandState``."""

    def __init__(self, state: HandState):
        self.state = state
        self.rules: Rules = state.rules
        self.n_players = state.n_players
        self._passed: dict[int, set[int]] = {}

    @classmethod
    def from_deal(cls, rules, hands, pass_direction="none", kitty=(), dealer=0):
        n = rules.n_players
        # HandState.from_deal takes the dealer modulo n; the reference rejects a seat that
        # does not exist (test_invalid_deal_arguments). API strictness, not a rule: checked here.
        if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < n:
            raise ValueError(f"dealer={dealer!r} must be a seat 0..{n - 1}")
        state = HandState.from_deal(rules, [sorted(h) for h in hands], pass_direction, sorted(kitty), dealer)
        return cls(state)

    # ------------------------------------------------------------------ reading
    @property
    def phase(self) -> str:
        return self.state.phase

    @property
    def current_player(self) -> int | None:
        return self.state.current_player

    @property
    def pass_direction(self) -> str:
        return self.state.pass_direction

    @property
    def hands(self) -> list[set[int]]:
        held = [set(self.state.hand(s)) for s in range(self.n_players)]
        if self.state.phase == "pass":  # passed cards stay in HandState's hand until the exchange
            for seat, cards in self._passed.items():
                held[seat] -= cards
        return held

    @property
    def taken(self) -> list[set[int]]:
        return [set(self.state.taken(s)) for s in range(self.n_players)]

    @property
    def tricks_won(self) -> list[int]:
        return [int(x) for x in self.state.tricks_won()]

    @property
    def trick_winners(self) -> list[int]:
        return list(self.state.trick_winners)

    @property
    def hearts_broken(self) -> bool:
        return self.state.hearts_broken

    @property
    def moon_shooter(self) -> int:
        return self.state.moon_shooter

    @property
    def first_lead_card(self) -> int | None:
        card = int(self.state.record["first_lead_card"])
        return None if card < 0 or self.state.phase == "pass" else card

    def legal_moves(self) -> set[int]:
        return set(self.state.legal_moves())

    def points(self) -> list[int]:
        return [int(x) for x in self.state.points()]

    def scores(self) -> list[int]:
        try:
            return [int(x) for x in self.state.scores()]
        except IllegalMoveError as error:  # the reference raises RuntimeError before the end
            raise RuntimeError(str(error)) from error

    # ------------------------------------------------------------------ acting
    def pass_cards(self, seat, cards) -> None:
        cards = list(cards)
        self.state.pass_cards(seat, cards)
        self._passed[seat] = set(cards)

    def play(self, card) -> None:
        self.state.play(card)

    def __repr__(self) -> str:
        return f"HandStateAdapter({self.state!r})"


@pytest.fixture(autouse=True)
def _golden_engine(monkeypatch):
    """Every golden script below builds its hands through HandStateAdapter."""
    monkeypatch.setattr(golden, "ENGINE", HandStateAdapter)


def _builds_hands(function) -> bool:
    code = function.__code__
    names = set(code.co_names)
    for const in code.co_consts:  # comprehensions and nested functions
        if inspect.iscode(const):
            names |= set(const.co_names)
    return bool(names & {"deal", "ENGINE"})


GOLDEN_TESTS = sorted(
    name
    for name, value in vars(golden).items()
    if name.startswith("test_") and inspect.isfunction(value) and _builds_hands(value)
)
# Collected by pytest from this module's namespace, with the fixture above in force.
globals().update({name: getattr(golden, name) for name in GOLDEN_TESTS})


def test_golden_scripts_were_collected():
    assert len(GOLDEN_TESTS) >= 40, GOLDEN_TESTS
    assert "test_moon_rules" in GOLDEN_TESTS and "test_card_parser" not in GOLDEN_TESTS
    hand = golden.deal(Rules(), *golden.SUITS_DEAL)  # the scripts really get the fast engine
    assert isinstance(hand, HandStateAdapter) and isinstance(hand.state, HandState)
