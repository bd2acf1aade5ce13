"""Self-consistency of the OpenSpiel oracle (tests/openspiel_oracle.py) and the facts it documents."""

from __future__ import annotations

import pytest

pyspiel = pytest.importorskip("pyspiel")

try:
    from tests import openspiel_oracle as oracle
except ImportError:  # tests/ on sys.path instead of the repository root
    import openspiel_oracle as oracle

SEEDS = range(40)


@pytest.fixture(scope="module")
def random_hands():
    return [oracle.play_random_openspiel_hand(s) for s in SEEDS]


def test_card_numbering_matches_openspiel_names():
    state = pyspiel.load_game("hearts").new_initial_state()
    state.apply_action(0)  # past the pass-direction node, action_to_string names cards
    for card in range(52):
        os_action = oracle.our_to_os(card)
        assert oracle.os_to_our(os_action) == card
        assert state.action_to_string(os_action) == oracle.card_name(card)
    assert (oracle.our_to_os(0), oracle.our_to_os(36), oracle.our_to_os(51)) == (0, 43, 50)
    assert oracle.card_name(36) == "QS" and oracle.card_name(51) == "AH"


def test_pass_direction_node():
    state = pyspiel.load_game("hearts").new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)]
    names = [state.action_to_string(a) for a in range(4)]
    assert names == ["No Pass", "Left", "Across", "Right"]
    assert [oracle.ACTION_TO_DIRECTION[a] for a in range(4)] == ["none", "left", "across", "right"]


def test_random_hand_is_well_formed(random_hands):
    for h in random_hands:
        assert sorted(c for hand in h["hands"] for c in hand) == list(range(52))
        cards = [c for _, c in h["plays"]]
        assert sorted(cards) == list(range(52))  # every card played exactly once
        assert len(h["legal_sets"]) == 52
        assert all(c in legal for (_, c), legal in zip(h["plays"], h["legal_sets"], strict=True))
        assert h["plays"][0][1] == 0 and h["legal_sets"][0] == {0}  # 2C leads
        assert sum(h["points"]) == 26
        assert h["terminal"]


def test_passes_follow_direction(random_hands):
    for h in random_hands:
        off = oracle.DIRECTION_OFFSET[h["pass_direction"]]
        if off == 0:
            assert h["passes"] == [[], [], [], []]
        held = [set(hand) for hand in h["hands"]]
        for s in range(4):
            assert len(h["passes"][s]) == (0 if off == 0 else 3)
            assert set(h["passes"][s]) <= held[s]
        for s in range(4):
            giver = (s - off) % 4
            expected = (held[s] - set(h["passes"][s])) | set(h["passes"][giver])
            assert {c for seat, c in h["plays"] if seat == s} == expected


def test_returns_formula(random_hands):
    for h in random_hands:
        if h["moon_shooter"] < 0:
            assert h["returns"] == [26.0 - p for p in h["points"]]
        else:
            assert h["points"][h["moon_shooter"]] == 26
            assert h["returns"] == [26.0 if s == h["moon_shooter"] else 0.0 for s in range(4)]


def test_replay_reproduces_random_hand(random_hands):
    for h in random_hands[:15]:
        r = oracle.replay_in_openspiel(h["hands"], h["pass_direction"], h["passes"], h["plays"])
        for key in ("legal_sets", "points", "returns", "moon_shooter", "plays"):
            assert r[key] == h[key], key


def test_replay_prefix_reports_next_move(random_hands):
    h = random_hands[0]
    r = oracle.replay_in_openspiel(h["hands"], h["pass_direction"], h["passes"], h["plays"][:10])
    assert not r["terminal"] and r["returns"] is None
    assert r["legal_sets"] == h["legal_sets"][:10]
    assert r["to_play"] == h["plays"][10][0]
    assert r["next_legal"] == h["legal_sets"][10]


def test_replay_rejects_illegal_moves(random_hands):
    h = random_hands[0]
    seat, _ = h["plays"][0]
    not_2c = next(c for s, c in h["plays"] if s == seat and c != 0)  # a card the leader holds
    with pytest.raises(oracle.OpenSpielRejectedMove, match="OpenSpiel allows"):
        oracle.replay_in_openspiel(h["hands"], h["pass_direction"], h["passes"], [(seat, not_2c)])
    with pytest.raises(oracle.OpenSpielRejectedMove, match="expects seat"):
        oracle.replay_in_openspiel(h["hands"], h["pass_direction"], h["passes"], [((seat + 1) % 4, 0)])


def _play_out(hands, direction, passes, policy):
    """Build a full hand move by move through prefix replays; policy(seat, legal) -> card."""
    plays = []
    while True:
        r = oracle.replay_in_openspiel(hands, direction, passes, plays)
        if r["terminal"]:
            return r
        plays.append((r["to_play"], policy(r["to_play"], r["next_legal"])))


def test_moon_shot_scoring():
    top = [12, 11, 10, 25, 24, 23, 38, 37, 36, 35, 51, 50, 49]  # AKQ C, AKQ D, AKQJ S, AKQ H
    rest = [c for c in range(52) if c not in top]
    hands = [top, rest[0::3], rest[1::3], rest[2::3]]
    r = _play_out(
        hands, "none", [[], [], [], []], lambda seat, legal: max(legal) if seat == 0 else min(legal)
    )
    assert r["moon_shooter"] == 0
    assert r["points"] == [26, 0, 0, 0]
    assert r["returns"] == [26.0, 0.0, 0.0, 0.0]


def test_first_trick_exception_and_qs_breaks_hearts():
    clubs, diamonds = list(range(13)), list(range(13, 26))
    spades, hearts = list(range(26, 39)), list(range(39, 52))
    hands = [
        [0] + diamonds[1:],  # 2C + 3D..AD
        [36] + hearts[1:],  # QS + 3H..AH: only points cards
        clubs[1:] + [39],  # 3C..AC + 2H
        [13] + [c for c in spades if c != 36],  # 2D + spades without QS
    ]
    r = oracle.replay_in_openspiel(hands, "none", [[], [], [], []], [(0, 0)])
    # void on the first trick holding only hearts + QS: any card, QS included
    assert r["to_play"] == 1 and r["next_legal"] == set(hands[1])
    r = oracle.replay_in_openspiel(hands, "none", [[], [], [], []], [(0, 0), (1, 36)])
    assert r["next_legal"] == set(clubs[1:])  # seat 2 must follow clubs
    r = oracle.replay_in_openspiel(hands, "none", [[], [], [], []], [(0, 0), (1, 36), (2, 12)])
    assert r["next_legal"] == {13} | (set(spades) - {36})  # void: no hearts/QS (has none anyway)
    r = oracle.replay_in_openspiel(hands, "none", [[], [], [], []], [(0, 0), (1, 36), (2, 12), (3, 13)])
    # seat 2 won with AC and leads; QS (played) broke hearts, so 2H may be led
    assert r["to_play"] == 2 and 39 in r["next_legal"]
    assert r["points"] == [0, 0, 13, 0]
