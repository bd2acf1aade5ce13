"""Golden scripted deals for the reference engine (tests/reference_engine.py).

Every deal here is built by hand and every expected legal set and score was worked out
by hand from docs/rules.md, so these tests check the reference itself. They only use the
duck-typed hand API (from_deal, phase, current_player, legal_moves, pass_cards, play,
points, scores, hands, taken, tricks_won, trick_winners, hearts_broken, moon_shooter,
first_lead_card), so the same scripts can later be pointed at the fast engine by
swapping ``ENGINE``.

Readings decided for the reference (docs/rules.md plus the project's choices):
- point cards for rule 5 are hearts + QS, and KS, AS under black_maria;
- first-trick leader = holder of the lowest club dealt to a player, after passing;
  ``first_lead_card`` is that club for two_clubs and any_club, None for any;
- rules 5 and 6 combine on a first lead under first_lead="any" (the order of the two
  filters does not matter: non-point cards are never hearts);
- lead_hearts_instead_of_qs applies only when the leader's non-hearts are exactly {QS}
  (with black_maria, holding KS/AS as well means leading a spade);
- hearts_broken turns True when the breaking card is played (it only affects later leads);
- passed cards leave the passer's hand at once, received ones arrive after the last pass;
- pass_count=0 makes any pass direction "none";
- scores(): moon adjustment, then the JD bonus to the JD taker in every case, then the
  no-trick bonus unless a moon was shot (moon="off": never a moon, so it applies).
"""

from __future__ import annotations

import random

import pytest

try:
    from tests.reference_engine import (
        ReferenceHand,
        card_points,
        deal_random,
        deck_cards,
        pass_direction_for_hand,
        point_cards,
        reference_game_winners,
    )
    from tests.rule_variants import RULE_VARIANTS
except ImportError:  # tests/ itself on sys.path (pytest's rootdir-less import mode)
    from reference_engine import (  # type: ignore[no-redef]
        ReferenceHand,
        card_points,
        deal_random,
        deck_cards,
        pass_direction_for_hand,
        point_cards,
        reference_game_winners,
    )
    from rule_variants import RULE_VARIANTS  # type: ignore[no-redef]

from hearts_sim.core.rules import Rules

# The class under test. test_golden_handstate.py collects the tests that build hands a second
# time with ENGINE patched to an adapter over the fast HandState, so every script here must
# build its hands through ENGINE (directly or via deal()) and use only the duck-typed API.
ENGINE = ReferenceHand

# ----------------------------------------------------------------- helpers
_SUITS = {"C": 0, "D": 1, "S": 2, "H": 3}
_RANKS = {r: i for i, r in enumerate("23456789TJQKA")}
_RANKS["10"] = _RANKS["T"]


def card(text: str) -> int:
    """``card("QS") == 36``; ranks 2-9, T or 10, J, Q, K, A; suits C D S H."""
    text = text.strip().upper()
    rank, suit = text[:-1], text[-1]
    if rank not in _RANKS or suit not in _SUITS:
        raise ValueError(f"bad card {text!r}")
    return _SUITS[suit] * 13 + _RANKS[rank]


def cards(text: str) -> set[int]:
    """``cards("2C 3C QS AH")``; ``"2C-KC"`` is every club from the two to the king."""
    result: set[int] = set()
    for word in text.split():
        if "-" in word:
            low, high = (card(w) for w in word.split("-"))
            assert low // 13 == high // 13 and low <= high, word
            result |= set(range(low, high + 1))
        else:
            result.add(card(word))
    return result


def deal(rules: Rules, *hands: str, kitty: str = "", **kwargs) -> ReferenceHand:
    return ENGINE.from_deal(rules, [cards(h) for h in hands], kitty=cards(kitty), **kwargs)


def play_lowest(hand, n_cards: int | None = None) -> None:
    """Every player plays their lowest legal card (by index), for n_cards cards or to the end."""
    count = 0
    while hand.phase == "play" and (n_cards is None or count < n_cards):
        hand.play(min(hand.legal_moves()))
        count += 1


def play_tricks(hand, n_tricks: int) -> None:
    play_lowest(hand, n_tricks * len(hand.hands))


def observable(hand) -> tuple:
    """Everything the public API shows, to check that a rejected action changed nothing."""
    return (
        hand.phase,
        hand.current_player,
        [set(h) for h in hand.hands],
        [set(t) for t in hand.taken],
        list(hand.tricks_won),
        list(hand.trick_winners),
        hand.hearts_broken,
        hand.points(),
        set(hand.legal_moves()) if hand.phase == "play" else None,
    )


def test_card_parser():
    names = ("2C", "3C", "2D", "JD", "QS", "KS", "AS", "2H", "AH", "10H", "TH")
    assert [card(c) for c in names] == [0, 1, 13, 22, 36, 37, 38, 39, 51, 47, 47]
    assert cards("2C-4C AH") == {0, 1, 2, 51}
    with pytest.raises(ValueError):
        card("1C")


# ------------------------------------------------------------ deal layouts
# Seat 0 all clubs, 1 all diamonds, 2 all spades, 3 all hearts (standard game).
SUITS_DEAL = ("2C-AC", "2D-AD", "2S-AS", "2H-AH")


def test_first_trick_void_and_only_points_all_legal():
    h = deal(Rules(), *SUITS_DEAL)
    assert h.phase == "play" and h.current_player == 0
    assert h.first_lead_card == card("2C")
    assert h.legal_moves() == {card("2C")}  # rule 3
    h.play(card("2C"))
    assert h.legal_moves() == cards("2D-AD")  # void: any non-point card
    h.play(card("2D"))
    assert h.legal_moves() == cards("2S-AS") - {card("QS")}  # rule 5: not the queen
    h.play(card("2S"))
    assert h.legal_moves() == cards("2H-AH")  # rule 5: only point cards -> all legal
    h.play(card("2H"))
    assert h.trick_winners == [0] and h.hearts_broken


def test_first_trick_void_holding_qs_and_hearts_only():
    h = deal(Rules(), "2C-AC", "2D-AD", "2S-JS KS AS AH", "QS 2H-KH")
    play_lowest(h, 3)
    assert h.current_player == 3
    assert h.legal_moves() == cards("QS 2H-KH")  # every card is a point card: all legal


def test_first_trick_points_allowed_without_rule_5():
    h = deal(Rules(no_points_first_trick=False), *SUITS_DEAL)
    play_lowest(h, 2)
    assert h.legal_moves() == cards("2S-AS")


@pytest.mark.parametrize(
    "moon, expected",
    [("others_plus", [0, 26, 26, 26]), ("self_minus", [-26, 0, 0, 0]), ("off", [26, 0, 0, 0])],
)
def test_moon_rules(moon, expected):
    # seat 0 leads its 13 clubs and wins every trick; the others discard everything
    h = deal(Rules(moon=moon), *SUITS_DEAL)
    play_lowest(h)
    assert h.phase == "done" and h.current_player is None
    assert h.tricks_won == [13, 0, 0, 0]
    assert h.points() == [26, 0, 0, 0]
    assert h.moon_shooter == (-1 if moon == "off" else 0)
    assert h.scores() == expected


@pytest.mark.parametrize(
    "moon, bonus, expected",
    [
        ("others_plus", -5, [0, 26, 26, 26]),  # a moon: no no-trick bonus
        ("self_minus", -5, [-26, 0, 0, 0]),
        ("off", -5, [26, -5, -5, -5]),  # no moon with moon=off: the bonus applies
    ],
)
def test_avoid_all_tricks_bonus_with_sweep(moon, bonus, expected):
    h = deal(Rules(moon=moon, avoid_all_tricks_bonus=bonus), *SUITS_DEAL)
    play_lowest(h)
    assert h.scores() == expected


# A hand without a moon: seat 3 wins trick 1 with AC, seat 2 wins the 2H/AH trick, seat 0
# wins the rest (its QS beats the 3S lead), seat 1 wins nothing.
SPLIT_DEAL = ("2C-KC QS", "2D-AD", "2S-JS KS AS AH", "AC 2H-KH")


def test_split_hand_and_avoid_all_tricks_bonus():
    h = deal(Rules(avoid_all_tricks_bonus=-5), *SPLIT_DEAL)
    play_tricks(h, 1)
    assert h.trick_winners == [3] and h.points() == [0, 0, 0, 0]
    assert h.legal_moves() == cards("2H-KH")  # leader holds only hearts
    play_tricks(h, 1)
    assert h.trick_winners == [3, 2] and h.points() == [0, 0, 2, 0]
    play_tricks(h, 1)
    assert h.trick_winners == [3, 2, 0] and h.points() == [14, 0, 2, 0]
    play_lowest(h)
    assert h.tricks_won == [11, 0, 1, 1]
    assert h.points() == [24, 0, 2, 0]
    assert h.moon_shooter == -1
    assert h.scores() == [24, -5, 2, 0]


def test_split_hand_scores_without_bonus():
    h = deal(Rules(), *SPLIT_DEAL)
    play_lowest(h)
    assert h.scores() == [24, 0, 2, 0]


def test_scores_raise_before_the_end():
    h = deal(Rules(), *SUITS_DEAL)
    with pytest.raises(RuntimeError):
        h.scores()
    play_lowest(h, 51)
    with pytest.raises(RuntimeError):
        h.scores()
    play_lowest(h)
    assert h.scores() == [0, 26, 26, 26]


# ------------------------------------------------------------ hearts leads
# Seat 3 wins trick 1 with AC and then holds only hearts.
HEARTS_ONLY_DEAL = ("2C 2D-KD", "3C-KC AD AH", "2S-AS", "AC 2H-KH")


def test_hearts_only_leader():
    h = deal(Rules(), *HEARTS_ONLY_DEAL)
    h.play(card("2C"))
    assert h.legal_moves() == cards("3C-KC")  # must follow clubs
    play_lowest(h, 3)
    assert h.trick_winners == [3] and not h.hearts_broken
    assert h.current_player == 3
    assert h.legal_moves() == cards("2H-KH")  # rule 6: only hearts, so hearts may be led


# Seat 1 wins trick 1 (AC) and trick 2 (AS, catching seat 2's QS), then holds KD + hearts.
QS_BREAK_DEAL = ("2C-KC AD", "AC AS KD 2H-JH", "2S-KS KH", "2D-QD QH AH")


@pytest.mark.parametrize("qs_breaks", [False, True])
def test_queen_of_spades_breaking_hearts(qs_breaks):
    h = deal(Rules(qs_breaks_hearts=qs_breaks), *QS_BREAK_DEAL)
    play_tricks(h, 1)
    assert h.trick_winners == [1]
    assert h.legal_moves() == cards("AS KD")  # unbroken: no heart lead
    for c in ("AS", "QS", "3D", "3C"):
        h.play(card(c))
    assert h.trick_winners == [1, 1] and h.points() == [0, 13, 0, 0]
    assert h.hearts_broken is qs_breaks  # rule 6: the queen does not break hearts by default
    expected = cards("KD 2H-JH") if qs_breaks else cards("KD")
    assert h.legal_moves() == expected


def test_hearts_broken_by_a_discard():
    h = deal(Rules(), *QS_BREAK_DEAL)
    play_tricks(h, 1)
    for c in ("AS", "3S", "QH"):  # seat 3 void in spades discards a heart
        h.play(card(c))
    assert h.hearts_broken
    h.play(card("3C"))
    assert h.legal_moves() == cards("KD 2H-JH")


def test_hearts_may_be_led_any_time_without_must_break():
    h = deal(Rules(must_break_hearts=False), *QS_BREAK_DEAL)
    play_tricks(h, 1)
    assert h.legal_moves() == cards("AS KD 2H-JH")


# Seat 1 wins trick 1 with AC and then holds only QS and hearts.
QS_AND_HEARTS_DEAL = ("2C-KC 2H", "AC QS 3H-KH", "2D-AD", "2S-JS KS AS AH")


@pytest.mark.parametrize(
    "instead, expected",
    [(False, "QS"), (True, "QS 3H-KH")],
)
def test_lead_hearts_instead_of_qs(instead, expected):
    h = deal(Rules(lead_hearts_instead_of_qs=instead), *QS_AND_HEARTS_DEAL)
    play_tricks(h, 1)
    assert h.trick_winners == [1] and not h.hearts_broken
    assert h.legal_moves() == cards(expected)


def test_only_qs_and_hearts_without_must_break():
    h = deal(Rules(must_break_hearts=False), *QS_AND_HEARTS_DEAL)
    play_tricks(h, 1)
    assert h.legal_moves() == cards("QS 3H-KH")


# ---------------------------------------------------------------- kitty
def test_kitty_3p_qs_to_first_trick_winner_and_moon():
    rules = Rules(n_players=3, deck_mode="kitty")
    h = deal(rules, "2C-AC 2D-5D", "6D-AD 2S-9S", "TS JS KS AS 2H-AH", kitty="QS")
    assert [len(x) for x in h.hands] == [17, 17, 17]
    play_lowest(h, 2)
    assert h.legal_moves() == cards("TS JS KS AS")  # rule 5: no hearts on trick 1
    play_lowest(h, 1)
    assert h.trick_winners == [0]
    assert card("QS") in h.taken[0] and h.points() == [13, 0, 0]  # the kitty's QS
    play_lowest(h)
    assert h.tricks_won == [17, 0, 0]
    assert h.points() == [26, 0, 0] and h.moon_shooter == 0  # the kitty counts for a moon
    assert h.scores() == [0, 26, 26]


def test_kitty_5p_points_to_first_trick_winner():
    rules = Rules(n_players=5, deck_mode="kitty")
    h = deal(
        rules,
        "2C-JC",  # 10 clubs
        "QC 2D-TD",  # 10
        "AC JD-AD 2S-6S",  # AC wins trick 1
        "KC 7S-JS KS AS 2H 3H",
        "4H-KH",
        kitty="QS AH",
    )
    assert h.current_player == 0 and h.legal_moves() == {card("2C")}
    play_tricks(h, 1)
    assert h.trick_winners == [2]
    assert h.points() == [0, 0, 15, 0, 0]  # seat 4's 4H + QS 13 + AH 1 from the kitty
    assert cards("QS AH") <= h.taken[2]
    play_lowest(h)
    assert sum(h.points()) == 26 and h.points()[2] >= 15


def test_kitty_holding_two_clubs_lowest_club_leads():
    rules = Rules(n_players=3, deck_mode="kitty")
    h = deal(rules, "4C-AC 2D-7D", "8D-AD 2S-JS", "3C QS KS AS 2H-AH", kitty="2C")
    assert h.current_player == 2 and h.first_lead_card == card("3C")
    assert h.legal_moves() == {card("3C")}


def test_kitty_lowest_club_any_club():
    rules = Rules(n_players=5, deck_mode="kitty", first_lead="any_club")
    h = deal(rules, "4C-KC", "AC 2D-TD", "JD-AD 2S-7S", "8S-AS 2H-4H", "5H-AH", kitty="2C 3C")
    assert h.current_player == 0 and h.first_lead_card == card("4C")
    assert h.legal_moves() == cards("4C-KC")


# ------------------------------------------------------------ JD bonus
@pytest.mark.parametrize(
    "moon, expected", [("others_plus", [-10, 26, 26, 26]), ("self_minus", [-36, 0, 0, 0])]
)
def test_jd_taken_by_the_moon_shooter(moon, expected):
    h = deal(Rules(jd_bonus=-10, moon=moon), *SUITS_DEAL)
    play_lowest(h)
    assert card("JD") in h.taken[0] and h.moon_shooter == 0
    assert h.scores() == expected


# Seat 1 wins trick 1 (AC) catching seat 2's JD, then seat 0 wins every later trick.
JD_OTHER_DEAL = ("2C-KC AD", "AC 3D-TD QD KD 2S 3S", "JD 4S-AS AH", "2D 2H-KH")


@pytest.mark.parametrize(
    "moon, expected",
    [
        ("others_plus", [0, 16, 26, 26]),
        ("self_minus", [-26, -10, 0, 0]),
        ("off", [26, -10, 0, 0]),
    ],
)
def test_jd_taken_by_another_player_with_moon(moon, expected):
    h = deal(Rules(jd_bonus=-10, moon=moon), *JD_OTHER_DEAL)
    play_tricks(h, 1)
    assert h.trick_winners == [1] and card("JD") in h.taken[1]
    play_lowest(h)
    assert h.tricks_won == [12, 1, 0, 0] and h.points() == [26, 0, 0, 0]
    assert h.scores() == expected


def test_jd_bonus_zero_leaves_scores():
    h = deal(Rules(), *JD_OTHER_DEAL)
    play_lowest(h)
    assert h.scores() == [0, 26, 26, 26]


# ------------------------------------------------- 5p remove and first leads
def test_five_players_remove_mode_three_of_clubs_leads():
    rules = Rules.preset("qdan5")
    hands = ("4C-KC", "AC 3D-JD", "QD-AD 2S-8S", "9S-AS 2H-5H", "3C 6H-AH")
    h = deal(rules, *hands)
    assert h.current_player == 4 and h.first_lead_card == card("3C")
    assert h.legal_moves() == {card("3C")}
    h.play(card("3C"))
    assert h.legal_moves() == cards("4C-KC")
    with pytest.raises(ValueError):  # 2C and 2D are out of the deck in 5p remove mode
        deal(rules, "2C 4C-QC", "AC 3D-JD", "QD-AD 2S-8S", "9S-AS 2H-5H", "3C 6H-AH")


def test_three_players_remove_mode():
    rules = Rules.preset("qdan3")
    assert 13 not in deck_cards(rules)
    h = deal(rules, "2C-AC 3D-6D", "7D-AD 2S-TS", "JS-AS 2H-AH")
    assert h.current_player == 0 and h.legal_moves() == {card("2C")}
    with pytest.raises(ValueError):
        deal(rules, "2C-AC 2D-5D", "7D-AD 2S-TS", "JS-AS 2H-AH")


def test_first_lead_any_club():
    h = deal(Rules(first_lead="any_club"), "2C-7C 2D-8D", "8C-AC 9D-AD", "2S-AS", "2H-AH")
    assert h.current_player == 0 and h.first_lead_card == card("2C")
    assert h.legal_moves() == cards("2C-7C")
    h.play(card("7C"))
    assert h.legal_moves() == cards("8C-AC")


def test_first_lead_any_by_left_of_dealer():
    rules = Rules(first_lead="any")
    hands = ("2C-AC", "2D-AD", "2S-AS", "2H-AH")
    h = deal(rules, *hands, dealer=1)
    assert h.current_player == 2 and h.first_lead_card is None
    assert h.legal_moves() == cards("2S-AS") - {card("QS")}  # rule 5 applies to the lead
    h = deal(rules, *hands, dealer=3)
    assert h.current_player == 0 and h.legal_moves() == cards("2C-AC")
    h = deal(rules, *hands, dealer=2)
    assert h.current_player == 3 and h.legal_moves() == cards("2H-AH")  # only hearts


def test_first_lead_any_spade_lead_followers():
    rules = Rules(first_lead="any")
    h = deal(rules, "2C-AC", "2D-KD QS", "2S-JS KS AS AD", "2H-AH", dealer=1)
    assert h.current_player == 2
    assert h.legal_moves() == cards("2S-JS KS AS AD")
    h.play(card("2S"))
    assert h.legal_moves() == cards("2H-AH")  # seat 3 void, only hearts
    h.play(card("2H"))
    assert h.legal_moves() == cards("2C-AC")
    h.play(card("2C"))
    assert h.legal_moves() == {card("QS")}  # must follow spades even with the queen
    h.play(card("QS"))
    assert h.trick_winners == [1] and h.points() == [0, 14, 0, 0]


def test_first_lead_any_follower_keeps_the_queen_when_able():
    h = deal(Rules(first_lead="any"), "2C-AC", "2D-QD QS KS", "2S-JS AS KD AD", "2H-AH", dealer=1)
    for c in ("2S", "2H", "2C"):
        h.play(card(c))
    assert h.legal_moves() == {card("KS")}  # rule 5: follow suit, but not with the queen
    h.play(card("KS"))
    assert h.trick_winners == [1] and h.points() == [0, 1, 0, 0]


@pytest.mark.parametrize("instead", [False, True])
def test_black_maria_queen_and_king_with_hearts_lead_a_spade(instead):
    # lead_hearts_instead_of_qs needs the queen to be the only non-heart: KS is one too
    rules = Rules(black_maria=True, first_lead="any", lead_hearts_instead_of_qs=instead)
    h = deal(rules, "2C-AC", "2D-AD", "2S-JS AS KH AH", "QS KS 2H-QH", dealer=2)
    assert h.current_player == 3 and h.legal_moves() == cards("QS KS")


@pytest.mark.parametrize("instead, expected", [(False, "QS"), (True, "QS 2H-KH")])
def test_first_lead_any_with_only_qs_and_hearts(instead, expected):
    rules = Rules(first_lead="any", lead_hearts_instead_of_qs=instead)
    h = deal(rules, "2C-AC", "2D-AD", "2S-JS KS AS AH", "QS 2H-KH")
    assert h.current_player == 1  # dealer 0
    h = deal(rules, "2C-AC", "2D-AD", "2S-JS KS AS AH", "QS 2H-KH", dealer=2)
    assert h.legal_moves() == cards(expected)


# ------------------------------------------------------------ Black Maria
BLACK_MARIA_SWEEP = ("2C-AC 3D-6D", "7D-AD 2S-TS", "JS-AS 2H-AH")


def test_black_maria_first_trick_excludes_ks_and_as():
    h = deal(Rules.preset("black_maria"), *BLACK_MARIA_SWEEP)
    play_lowest(h, 2)
    assert h.legal_moves() == {card("JS")}
    h2 = deal(Rules(n_players=3), *BLACK_MARIA_SWEEP)
    play_lowest(h2, 2)
    assert h2.legal_moves() == cards("JS KS AS")


@pytest.mark.parametrize(
    "moon, expected",
    [("others_plus", [0, 43, 43]), ("self_minus", [-43, 0, 0]), ("off", [43, 0, 0])],
)
def test_black_maria_moon_at_43(moon, expected):
    rules = Rules.preset("black_maria", moon=moon)
    assert rules.moon_total == 43
    h = deal(rules, *BLACK_MARIA_SWEEP)
    play_lowest(h)
    assert h.points() == [43, 0, 0]
    assert h.scores() == expected


def test_black_maria_card_points_and_moon_by_second_seat():
    rules = Rules.preset("black_maria")
    assert [card_points(rules, card(c)) for c in ("QS", "KS", "AS", "2H", "JS", "JD")] == [
        13,
        10,
        7,
        1,
        0,
        0,
    ]
    assert [card_points(Rules(), card(c)) for c in ("QS", "KS", "AS")] == [13, 0, 0]
    h = deal(rules, "2C-KC 3D-7D", "AC 8D-AD 2S-TS", "JS-AS 2H-AH")
    play_tricks(h, 1)
    assert h.trick_winners == [1] and h.points() == [0, 0, 0]
    play_tricks(h, 1)
    assert h.points() == [0, 13, 0]  # QS
    play_tricks(h, 1)
    assert h.points() == [0, 23, 0]  # KS
    play_tricks(h, 1)
    assert h.points() == [0, 30, 0]  # AS
    play_lowest(h)
    assert h.points() == [0, 43, 0] and h.moon_shooter == 1
    assert h.scores() == [43, 0, 43]


# -------------------------------------------------------------- passing
def test_passing_left_and_lead_card_passed_on():
    h = deal(Rules(), *SUITS_DEAL, pass_direction="left")
    assert h.phase == "pass" and h.current_player is None
    assert h.legal_moves() == set()
    with pytest.raises(ValueError):
        h.play(card("2C"))
    h.pass_cards(0, cards("2C 3C 4C"))
    assert h.phase == "pass"
    h.pass_cards(2, cards("QS KS AS"))
    h.pass_cards(1, cards("2D 3D 4D"))
    h.pass_cards(3, cards("AH KH QH"))
    assert h.phase == "play"
    assert h.hands[1] == cards("2C 3C 4C 5D-AD")
    assert h.hands[3] == cards("QS KS AS 2H-JH")
    assert h.hands[0] == cards("5C-AC QH KH AH")
    assert h.current_player == 1 and h.first_lead_card == card("2C")
    assert h.legal_moves() == {card("2C")}


@pytest.mark.parametrize(
    "direction, receiver",
    [("left", [1, 2, 3, 0]), ("right", [3, 0, 1, 2]), ("across", [2, 3, 0, 1])],
)
def test_pass_directions(direction, receiver):
    h = deal(Rules(), *SUITS_DEAL, pass_direction=direction)
    passed = [cards("2C 3C 4C"), cards("2D 3D 4D"), cards("2S 3S 4S"), cards("2H 3H 4H")]
    for seat in (3, 1, 0, 2):
        h.pass_cards(seat, passed[seat])
    for seat in range(4):
        assert passed[seat] <= h.hands[receiver[seat]]
        assert not passed[seat] & h.hands[seat]


def test_pass_three_players_right():
    h = deal(Rules(n_players=3), *BLACK_MARIA_SWEEP, pass_direction="right")
    h.pass_cards(0, cards("2C AC KC"))
    h.pass_cards(1, cards("7D 8D 9D"))
    h.pass_cards(2, cards("2H 3H 4H"))
    assert cards("2H 3H 4H") <= h.hands[1] and cards("2C AC KC") <= h.hands[2]
    assert h.current_player == 2 and h.legal_moves() == {card("2C")}


def test_no_passing_with_pass_count_zero():
    h = deal(Rules(pass_count=0), *SUITS_DEAL, pass_direction="left")
    assert h.phase == "play"


@pytest.mark.parametrize(
    "bad",
    [
        (0, "5C 6C"),  # too few
        (0, "5C 6C 7C 8C"),  # too many
        (0, "5C 6C 2D"),  # not held
        (4, "5C 6C 7C"),  # no such seat
        (1, "2C 3C 4C"),  # seat 1 does not hold these
        (2, "2C 3C 4C"),
    ],
)
def test_invalid_passes_leave_state_unchanged(bad):
    h = deal(Rules(), *SUITS_DEAL, pass_direction="across")
    h.pass_cards(3, cards("2H 3H 4H"))
    before = observable(h)
    seat, text = bad
    with pytest.raises(ValueError):
        h.pass_cards(seat, sorted(cards(text)))
    assert observable(h) == before


def test_invalid_passes_duplicate_and_twice():
    h = deal(Rules(), *SUITS_DEAL, pass_direction="right")
    before = observable(h)
    with pytest.raises(ValueError):
        h.pass_cards(0, [0, 0, 1])
    assert observable(h) == before
    h.pass_cards(0, [0, 1, 2])
    before = observable(h)
    with pytest.raises(ValueError):
        h.pass_cards(0, [3, 4, 5])
    assert observable(h) == before


def test_no_pass_in_play_phase():
    h = deal(Rules(), *SUITS_DEAL)
    before = observable(h)
    with pytest.raises(ValueError):
        h.pass_cards(0, cards("2C 3C 4C"))
    assert observable(h) == before


# ---------------------------------------------------------- invalid plays
def test_illegal_plays_leave_state_unchanged():
    h = deal(Rules(), *QS_BREAK_DEAL)
    for bad in ("3C", "AC", "2H", 52, -1):  # not 2C / not the leader's / not a card
        before = observable(h)
        with pytest.raises(ValueError):
            h.play(card(bad) if isinstance(bad, str) else bad)
        assert observable(h) == before
    play_tricks(h, 1)
    before = observable(h)
    for bad in ("2H", "JH", "QS"):  # unbroken hearts; a card seat 1 lacks
        with pytest.raises(ValueError):
            h.play(card(bad))
        assert observable(h) == before
    h.play(card("AS"))
    before = observable(h)
    with pytest.raises(ValueError):
        h.play(card("KH"))  # seat 2 holds spades: must follow
    assert observable(h) == before
    play_lowest(h)
    before = observable(h)
    with pytest.raises(ValueError):
        h.play(card("2C"))  # hand over
    assert observable(h) == before


KITTY3 = Rules(n_players=3, deck_mode="kitty")


@pytest.mark.parametrize(
    "rules, hands, kitty",
    [
        (Rules(), ("2C-AC", "2D-AD", "2S-AS", "2H-KH"), ""),  # 12 cards
        (Rules(), ("2C-AC", "2D-AD", "2S-AS", "2H-KH 2C"), ""),  # duplicate
        (Rules(), ("2C-AC", "2D-AD", "2S-AS"), ""),  # 3 hands
        (Rules(), ("2C-AC", "2D-AD", "2S-AS", "2H-AH"), "2C"),  # kitty in 4p
        (KITTY3, ("2C-AC 2D-5D", "6D-AD 2S-9S", "TS-AS 2H-AH"), ""),  # kitty missing
        (KITTY3, ("2C-AC 2D-5D", "6D-AD 2S-9S", "TS JS KS AS 2H-AH"), "AH"),  # AH twice
    ],
)
def test_invalid_deals(rules, hands, kitty):
    with pytest.raises(ValueError):
        deal(rules, *hands, kitty=kitty)


def test_invalid_deal_arguments():
    with pytest.raises(ValueError):
        deal(Rules(), *SUITS_DEAL, pass_direction="sideways")
    with pytest.raises(ValueError):
        deal(Rules(n_players=3), *BLACK_MARIA_SWEEP, pass_direction="across")
    with pytest.raises(ValueError):
        deal(Rules(), *SUITS_DEAL, dealer=4)


# ------------------------------------------------------------- game end
@pytest.mark.parametrize(
    "totals, continue_, share",
    [
        ([99, 40, 40, 70], None, None),  # nobody at the target
        ([100, 30, 40, 70], [1], [1]),  # the target reached exactly ends the game
        ([100, 40, 40, 70], None, [1, 2]),  # tie for lowest
        ([120, 40, 41, 70], [1], [1]),
        ([100, 100, 100, 100], None, [0, 1, 2, 3]),
    ],
)
def test_game_winners(totals, continue_, share):
    assert reference_game_winners(Rules(), totals) == continue_
    assert reference_game_winners(Rules(tie_rule="share"), totals) == share


def test_game_winners_quick_target():
    assert reference_game_winners(Rules.preset("quick"), [50, 10, 20, 30]) == [1]
    assert reference_game_winners(Rules.preset("quick"), [49, 10, 20, 30]) is None
    assert reference_game_winners(Rules(n_players=3), [100, -20, 5]) == [1]


def test_pass_direction_for_hand():
    four = [pass_direction_for_hand(Rules(), k) for k in range(1, 10)]
    assert four == ["left", "right", "across", "none"] * 2 + ["left"]
    three = [pass_direction_for_hand(Rules(n_players=3), k) for k in range(1, 8)]
    assert three == ["left", "right", "none"] * 2 + ["left"]
    assert pass_direction_for_hand(Rules(n_players=5), 2) == "right"
    assert pass_direction_for_hand(Rules(pass_cycle="across"), 4) == "across"
    assert pass_direction_for_hand(Rules(pass_cycle="right", n_players=5), 1) == "right"
    assert pass_direction_for_hand(Rules(pass_count=0), 1) == "none"
    assert pass_direction_for_hand(Rules(pass_cycle="none"), 1) == "none"
    with pytest.raises(ValueError):
        pass_direction_for_hand(Rules.preset("openspiel"), 1)


# ------------------------------------------------- random hands, every preset


def check_legal_set(rules: Rules, h, trick: list[int]) -> None:
    """Independent spot checks of the legal set against rules 3-6 (``trick``: cards so far)."""
    hand, legal = h.hands[h.current_player], h.legal_moves()
    assert legal and legal <= hand
    first_trick = not h.trick_winners
    if trick:
        led = trick[0] // 13
        if any(c // 13 == led for c in hand):
            assert all(c // 13 == led for c in legal)  # rule 4: follow suit
        elif not (first_trick and rules.no_points_first_trick):
            assert legal == hand  # void: anything
    elif not first_trick:
        if rules.must_break_hearts and not h.hearts_broken:
            non_hearts = {c for c in hand if c // 13 != 3}
            if not non_hearts:
                assert legal == hand
            elif not (rules.lead_hearts_instead_of_qs and non_hearts == {36}):
                assert legal == non_hearts  # rule 6
        else:
            assert legal == hand
    if first_trick and rules.no_points_first_trick:
        points = point_cards(rules)
        if legal & points:
            assert legal <= points  # rule 5: a point card only when nothing else is allowed


def check_score_pattern(rules: Rules, h) -> None:
    """docs/rules.md invariants: raw points, (0, T, T, ...) or (-T, 0, 0, ...), plus the bonuses."""
    points, scores, n, T = h.points(), h.scores(), rules.n_players, rules.moon_total
    base = list(scores)
    if rules.jd_bonus:
        jd_taker = next(s for s, taken in enumerate(h.taken) if card("JD") in taken)
        base[jd_taker] -= rules.jd_bonus
    sweeper = [s for s, taken in enumerate(h.taken) if point_cards(rules) <= taken]
    if rules.moon != "off" and sweeper:
        shooter = sweeper[0]
        assert h.moon_shooter == shooter and points[shooter] == T
        if rules.moon == "others_plus":
            assert base == [0 if i == shooter else T for i in range(n)]
        else:
            assert base == [-T if i == shooter else 0 for i in range(n)]
        return
    assert h.moon_shooter == -1
    for i in range(n):
        if h.tricks_won[i] == 0:
            base[i] -= rules.avoid_all_tricks_bonus
    assert base == points


@pytest.mark.parametrize("name", sorted(RULE_VARIANTS))
def test_random_hands_invariants(name):
    rules = RULE_VARIANTS[name]
    n = rules.n_players
    rng = random.Random(f"reference-{name}")
    for hand_number in range(1, 41):
        dealer = hand_number % n
        hands, kitty = deal_random(rules, rng, dealer)
        assert all(len(x) == rules.hand_size for x in hands) and len(kitty) == rules.kitty_size
        assert sorted([c for x in hands for c in x] + kitty) == sorted(deck_cards(rules))
        if rules.pass_cycle == "random":
            direction = rng.choice(["left", "right", "across", "none"])
        else:
            direction = pass_direction_for_hand(rules, hand_number)
        h = ENGINE.from_deal(rules, hands, direction, kitty, dealer)
        to_pass = list(range(n)) if h.phase == "pass" else []
        rng.shuffle(to_pass)  # passes are simultaneous: any order
        for seat in to_pass:
            assert h.phase == "pass"
            h.pass_cards(seat, rng.sample(sorted(h.hands[seat]), rules.pass_count))
        assert h.phase == "play"
        played: list[int] = []
        while h.phase == "play":
            trick = played[len(h.trick_winners) * n :]
            if not played and rules.first_lead == "two_clubs":
                assert h.legal_moves() == {h.first_lead_card}
            if not played and rules.first_lead == "any":
                assert h.current_player == (dealer + 1) % n
            check_legal_set(rules, h, trick)
            c = rng.choice(sorted(h.legal_moves()))
            h.play(c)
            played.append(c)
        # every card of the deck is played exactly once; kitty cards are taken, not played
        assert len(played) == len(set(played)) == n * rules.hand_size
        assert sorted(played + kitty) == sorted(deck_cards(rules))
        assert set().union(*h.taken) == deck_cards(rules)
        assert sum(len(t) for t in h.taken) == len(deck_cards(rules))
        assert sum(h.tricks_won) == rules.hand_size == len(h.trick_winners)
        assert all(not x for x in h.hands) and h.current_player is None
        if kitty:
            assert set(kitty) <= h.taken[h.trick_winners[0]]
        for k, winner in enumerate(h.trick_winners):  # the highest card of the led suit wins
            cards_k = played[k * n : (k + 1) * n]
            led = cards_k[0] // 13
            best = max(c for c in cards_k if c // 13 == led)
            assert set(cards_k) <= h.taken[winner] and best in h.taken[winner]
        assert sum(h.points()) == rules.moon_total
        check_score_pattern(rules, h)


def test_greedy_seat_shoots_the_moon_sometimes():
    """Random play rarely shoots the moon; seat 0 playing high and the others low does."""
    for rules in (Rules(), Rules(moon="self_minus", jd_bonus=-10), Rules.preset("black_maria")):
        rng = random.Random(7)
        moons = 0
        for _ in range(300):
            hands, kitty = deal_random(rules, rng)
            h = ENGINE.from_deal(rules, hands, "none", kitty)
            while h.phase == "play":
                legal = sorted(h.legal_moves())
                h.play(legal[-1] if h.current_player == 0 else legal[0])
            check_score_pattern(rules, h)
            moons += h.moon_shooter >= 0
        assert moons > 0
