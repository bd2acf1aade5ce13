"""Reusable checks for any agent spec, and the helpers they share with the sampler tests.

* ``assert_plays_legally(spec)``: the agent in some seats of batched self-play under
  every table size and deck mode (records checked against the invariants), then
  stepped through ``HandState`` via the dispatcher: every card legal, every pass valid.
* ``assert_no_peeking(spec)``: from real positions, the hidden cards (other hands, the
  kitty, the others' deals, passes and piles, the hidden seeds) are re-dealt with the
  determinization sampler, consistently with everything the agent may know; its
  decision for the same random stream must not change.
* ``qs_dump_position``: a fixed position where the queen of spades should be dumped.
* ``real_positions``, ``check_world``: decision points from self-play, and a
  from-scratch consistency check of a sampled world (used by tests/test_sampler.py).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import numpy as np

from agents.registry import AgentSpec, parse_agent
from hearts_sim.core.cards import CLUBS_MASK, NO_CARD, SUIT_MASKS, card_str, cards_str
from hearts_sim.core.rules import Rules, resolve_rules
from hearts_sim.engine.hand import card_points, deck_cards
from hearts_sim.engine.sampler import copy_state, sample_world
from hearts_sim.engine.state import PHASE_PASS, new_states
from hearts_sim.game.hand_state import HandState
from hearts_sim.selfplay.invariants import check_hand_records
from hearts_sim.selfplay.simulate import simulate
from hearts_sim.studies.positions import Decide, decision_seed_of, real_positions, spec_decider

# Every table size, both deck modes and the scoring variants an agent must cope with.
CHECK_RULES: dict[str, Rules] = {
    "standard": Rules(),
    "openspiel": Rules.preset("openspiel"),
    "omnibus": Rules.preset("omnibus"),
    "black_maria": Rules.preset("black_maria"),
    "qdan3": Rules.preset("qdan3"),
    "qdan5": Rules.preset("qdan5"),
    "kitty3": Rules.preset("qdan3", deck_mode="kitty"),
    "kitty5": Rules.preset("qdan5", deck_mode="kitty", first_lead="any_club"),
    "kitty3_maria": Rules.preset("black_maria", deck_mode="kitty", moon="self_minus"),
    "any_lead": Rules(first_lead="any", must_break_hearts=False, pass_cycle="across"),
}


# ---------------------------------------------------------------- legality
def assert_plays_legally(
    spec: str | AgentSpec,
    rules_set: Iterable[Rules] | None = None,
    hands: int = 200,
    stepped_hands: int = 6,
    seed: int = 0,
) -> None:
    """The agent plays only legal cards and valid passes under every rules set.

    Batched: ``hands`` hands per rules set with the agent in seat 0 and every other seat
    alternating with random, records checked against the invariants. Stepped: every
    seat is the agent, each pass checked by ``HandState.pass_cards`` and each card by
    ``HandState.play`` (both raise on anything illegal), plus an explicit legal-set test."""
    agent = parse_agent(spec)
    decide = spec_decider(agent)
    for rules in CHECK_RULES.values() if rules_set is None else rules_set:
        n = rules.n_players
        seats: list[str | AgentSpec] = [agent if s % 2 == 0 else "random" for s in range(n)]
        frame = simulate(rules, seats, hands=hands, seed=seed, threads=1, progress=False)
        assert len(frame) == hands
        records = _records_of(frame, rules)
        check_hand_records(records, rules)
        array = rules.to_tuple()
        for hand in range(stepped_hands):
            state = HandState.deal(rules, seed=seed + 1, hand=hand)
            if state.phase == "pass":
                for s in range(n):
                    cards = decide(state.record, array, s, decision_seed_of(state.record, s))
                    assert cards.bit_count() == rules.pass_count, f"{agent}: passed {cards:#x}"
                    assert cards & ~int(state.record["dealt"][s]) == 0, f"{agent}: passed unheld cards"
                    state.pass_cards(s, cards)
            while state.phase == "play":
                seat = state.current_player
                assert seat is not None
                card = decide(state.record, array, seat, decision_seed_of(state.record, seat))
                legal = state.legal_moves()
                assert card in legal, f"{agent} played {card_str(card)}, legal {legal} ({rules.describe()})"
                state.play(card)


def _records_of(frame, rules: Rules) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The DataFrame columns the invariant checker reads, back as a HAND_RECORD array."""
    from hearts_sim.selfplay.records import HAND_RECORD

    records = np.zeros(len(frame), dtype=HAND_RECORD)
    for column in (
        "deal",
        "seating",
        "moon_shooter",
        "qs_taker",
        "jd_taker",
        "qs_trick",
        "point_tricks",
        "trick_winners",
    ):
        records[column] = frame[column].to_numpy()
    records["kitty"] = frame["kitty"].to_numpy() if "kitty" in frame else 0
    for field in ("dealt", "passed", "points", "score", "tricks"):
        for seat in range(rules.n_players):
            records[field][:, seat] = frame[f"{field}_{seat}"].to_numpy()
    return records


# ---------------------------------------------------------------- no peeking
def hidden_alternatives(state: HandState, seat: int, count: int, seed: int = 0) -> list[np.ndarray]:
    """``count`` states equal to ``state`` in everything ``seat`` may know, with the hidden
    cards re-dealt by the sampler (other hands, kitty, others' deals, passes and piles,
    hidden seeds): each a one-record array."""
    array = state._rules_array
    out = []
    rng = np.uint64(seed * 2 + 1)
    for _ in range(count):
        alternative = new_states(1)
        rng = np.uint64(sample_world(state.record, array, seat, rng, alternative[0]))
        out.append(alternative)
    return out


def assert_no_peeking(
    spec: str | AgentSpec | Decide,
    positions: Sequence[tuple[HandState, int]] | None = None,
    rules_set: Iterable[Rules] | None = None,
    per_rules: int = 12,
    alternatives: int = 3,
    seed: int = 0,
) -> int:
    """The agent's decision depends only on its information set; returns the number of
    comparisons made. ``spec`` may also be a decision function (record, rules, seat, seed).

    Positions default to ``per_rules`` real decision points per rules set of ``CHECK_RULES``.
    """
    decide = spec if callable(spec) else spec_decider(spec)
    if positions is None:
        positions = [
            pos
            for i, rules in enumerate(CHECK_RULES.values() if rules_set is None else rules_set)
            for pos in real_positions(rules, per_rules, seed=seed + 100 * i)
        ]
    compared = differing = 0
    for index, (state, seat) in enumerate(positions):
        array = state._rules_array
        decision_seed_ = decision_seed_of(state.record, seat)
        original = decide(state.record, array, seat, decision_seed_)
        for alternative in hidden_alternatives(state, seat, alternatives, seed=seed + index):
            record = alternative[0]
            differing += _hidden_differs(state.record, record, seat, state.n_players)
            moved = decide(record, array, seat, decision_seed_)
            assert moved == original, (
                f"decision changed with the hidden cards ({_describe(original, state)} -> "
                f"{_describe(moved, state)}) at\n{state}"
            )
            compared += 1
    assert differing > compared // 2, "the alternatives hardly differed: the check has no teeth"
    return compared


def _hidden_differs(a: np.void, b: np.void, seat: int, n: int) -> bool:
    return any(int(a["hands"][o]) != int(b["hands"][o]) for o in range(n) if o != seat) or int(
        a["kitty"]
    ) != int(b["kitty"])


def _describe(move: int, state: HandState) -> str:
    if state.phase == "pass":
        return cards_str(move)
    return card_str(move)


# ---------------------------------------------------------------- sampled-world consistency
PUBLIC_FIELDS = (
    "played",
    "trick_mask",
    "trick_cards",
    "leader",
    "to_play",
    "n_in_trick",
    "trick_number",
    "history",
    "trick_leaders",
    "trick_winners",
    "n_played",
    "void_suits",
    "tricks_won",
    "points",
    "hearts_broken",
    "hearts_broken_trick",
    "n_players",
    "phase",
    "pass_offset",
    "dealer",
    "first_lead_card",
    "game_scores",
)


def _bits(mask: int) -> int:
    return int(mask).bit_count()


def played_by_seat(record: np.void) -> tuple[list[int], list[int]]:
    """(cards each seat played, cards each seat won in completed tricks), from the public history."""
    n = int(record["n_players"])
    played = [0] * n
    won = [0] * n
    for i in range(int(record["n_played"])):
        trick = i // n
        player = (int(record["trick_leaders"][trick]) + i % n) % n
        bit = 1 << int(record["history"][i])
        played[player] |= bit
        if trick < int(record["trick_number"]):
            won[int(record["trick_winners"][trick])] |= bit
    return played, won


def check_world(state: np.void, world: np.void, rules: Rules, seat: int) -> None:
    """Assert a sampled world agrees with everything ``seat`` knows and is self-consistent."""
    n = rules.n_players
    array = rules.to_tuple()
    deck = int(deck_cards(array))
    # with any_club and a kitty the opening club is hidden: each world carries its own
    lead_hidden = rules.first_lead == "any_club" and rules.kitty_size > 0
    for name in PUBLIC_FIELDS:
        if name == "first_lead_card" and lead_hidden:
            continue
        assert np.array_equal(state[name], world[name]), f"public field {name} changed"
    for name in ("hands", "dealt", "passed", "received", "taken"):
        assert int(state[name][seat]) == int(world[name][seat]), f"the seat's own {name} changed"
    hands = [int(world["hands"][o]) for o in range(n)]
    kitty = int(world["kitty"])
    played = int(world["played"])
    assert _bits(kitty) == rules.kitty_size
    union = kitty | played
    for o in range(n):
        assert _bits(hands[o]) == _bits(int(state["hands"][o])), f"seat {o} holds the wrong number"
        assert union & hands[o] == 0, f"seat {o} holds a card twice"
        union |= hands[o]
        for suit in range(4):
            if int(world["void_suits"][o]) >> suit & 1:
                assert hands[o] & int(SUIT_MASKS[suit]) == 0, f"seat {o} holds a suit it showed void"
    assert union == deck and _bits(union) == _bits(deck), "hands, kitty and played cards are not the deck"
    assert kitty & played == 0
    playing = int(world["phase"]) != PHASE_PASS
    offset = int(world["pass_offset"])
    if playing and offset and rules.pass_count:
        receiver = (seat + offset) % n
        known = int(state["passed"][seat]) & ~played
        assert known & ~hands[receiver] == 0, "a passed card left the receiver"
    lead = int(world["first_lead_card"])
    if playing and lead != NO_CARD:
        if not played >> lead & 1:
            assert hands[int(world["trick_leaders"][0])] >> lead & 1, "the leader lost the first-lead card"
        assert (1 << lead) - 1 & int(CLUBS_MASK) & deck & ~played & ~kitty == 0, "a low club left the kitty"
    played_cards, won = played_by_seat(world)
    if playing and lead_hidden:
        start_clubs = [(hands[o] | played_cards[o]) & int(CLUBS_MASK) for o in range(n)]
        lowest_club = min((clubs & -clubs).bit_length() - 1 for clubs in start_clubs if clubs)
        holder = next(o for o in range(n) if start_clubs[o] >> lowest_club & 1)
        assert holder == int(world["trick_leaders"][0]), "the leader did not hold the lowest club"
        assert lead == lowest_club, "the world's opening club is not its own"
    if playing and int(world["trick_number"]) > 0:
        won[int(world["trick_winners"][0])] |= kitty
        raw_points = sum(int(p) for p in world["points"][:n])
        completed = played & ~int(world["trick_mask"])
        assert card_points(np.uint64(kitty), array) == raw_points - card_points(np.uint64(completed), array)
    for o in range(n):
        assert int(world["taken"][o]) == won[o], f"seat {o}'s pile does not match the tricks it won"
        dealt, passed, received = (int(world[f][o]) for f in ("dealt", "passed", "received"))
        assert _bits(dealt) == rules.hand_size, f"seat {o} was dealt {_bits(dealt)} cards"
        assert passed & ~dealt == 0 and received & dealt == 0
        if playing:
            assert (dealt & ~passed) | received == hands[o] | played_cards[o], f"seat {o}'s deal"
            assert passed == int(world["received"][(o + offset) % n]) if offset else passed == 0
        else:
            assert received == 0 and (o == seat or (dealt == hands[o] and passed == 0))
    dealt_union = kitty
    for o in range(n):
        assert dealt_union & int(world["dealt"][o]) == 0
        dealt_union |= int(world["dealt"][o])
    assert dealt_union == deck
    assert int(world["hand_seed"]) != int(state["hand_seed"]) or int(state["hand_seed"]) == 0


def play_world_out(world: np.ndarray, rules: Rules, seed: int = 0) -> HandState:
    """Finish a sampled world with random legal cards (random passes first); returns it done."""
    copied = new_states(1)
    copy_state(world[0], copied[0])
    state = HandState(rules, copied)
    chooser = random.Random(seed)
    if state.phase == "pass":
        for s in range(rules.n_players):
            if not int(copied[0]["passes_made"]) >> s & 1:
                state.pass_cards(s, chooser.sample(list(state.hand(s)), rules.pass_count))
    while state.phase == "play":
        state.play(chooser.choice(list(state.legal_moves())))
    return state


# ---------------------------------------------------------------- strength in duplicate
def duplicate_seatings(a: str | AgentSpec, b: str | AgentSpec, n_players: int) -> list[list[str | AgentSpec]]:
    """Every mix of A and B over the seats with at least one of each (14 with four seats)."""
    return [[a if mask >> s & 1 else b for s in range(n_players)] for mask in range(1, (1 << n_players) - 1)]


def duplicate_difference(
    a: str | AgentSpec,
    b: str | AgentSpec,
    rules: Rules | str = "standard",
    deals: int = 1000,
    seed: int = 0,
    threads: int | None = 1,
) -> tuple[float, float]:
    """A's mean score per hand minus B's, each deal played in every seating: (mean, 95% half-width).

    Per deal, A's mean over all its seats in all seatings minus B's; the interval is over deals."""
    from hearts_sim.selfplay.simulate import Table, run_hands, set_threads

    rules = resolve_rules(rules)
    seatings = duplicate_seatings(a, b, rules.n_players)
    table = Table.build(rules, seatings)
    set_threads(threads)
    records = run_hands(table, seed, 0, deals)
    n = rules.n_players
    is_a = np.array([[1.0 if mask >> s & 1 else 0.0 for s in range(n)] for mask in range(1, (1 << n) - 1)])
    scores = records["score"][:, :n].astype(np.float64).reshape(deals, len(seatings), n)
    a_mean = (scores * is_a).sum(axis=(1, 2)) / is_a.sum()
    b_mean = (scores * (1 - is_a)).sum(axis=(1, 2)) / (1 - is_a).sum()
    difference = a_mean - b_mean
    return float(difference.mean()), float(1.96 * difference.std(ddof=1) / np.sqrt(deals))


def qs_dump_position() -> tuple[HandState, int]:
    """Trick 2: seat 3 leads KC and wins it whatever happens; seat 1, void in clubs and
    holding QS with three small spades, is to play: the queen goes to seat 3 (no moon
    threat: the hearts are spread)."""
    state = HandState.from_deal(
        "standard",
        [
            "2C 3C 4C 5C 6C 7C 2D 3D 4D 2H 3H 4H 5H",
            "QS 2S 3S 4S 5D 6D 7D 8D 6H 7H 8H 9H 10H",
            "8C 9C 10C 5S 6S 7S 8S 9D 10D JD JH QH KH",
            "JC QC KC AC 9S 10S JS KS AS QD KD AD AH",
        ],
    )
    for card in ("2C", "5D", "8C", "AC", "KC", "3C"):
        state.play(card)
    assert state.current_player == 1
    return state, 1
