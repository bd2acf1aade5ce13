"""The determinization sampler (hearts_sim/engine/sampler.py): consistent, uniform, blind.

* every sampled world from real self-play positions, under every table size and deck
  mode, agrees with what the seat knows and plays out to a legal, fully scored hand;
* on small endgames, where every consistent deal can be enumerated, the sampled deals
  are uniform (chi-square), including positions with crossing voids;
* sampling from two states that differ only in hidden information, with the same
  random stream, gives byte-identical worlds.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

from agents.belief import IGNORE_PLAYS, belief_pool, surprises
from hearts_sim.core.cards import CLUBS_MASK, SUIT_MASKS
from hearts_sim.core.rules import Rules
from hearts_sim.engine.hand import card_points, deck_cards, point_cards
from hearts_sim.engine.inference import (
    EVENT_CARD,
    EVENT_LATER,
    EVENT_MOVER,
    draw_index,
    draw_world,
    effective_size,
    held_then,
    new_events,
    new_pool,
    play_events,
    temper,
)
from hearts_sim.engine.sampler import copy_state, sample_world, world_fits
from hearts_sim.engine.state import HAND_STATE, PHASE_PASS, new_states

try:
    from tests.agent_checks import CHECK_RULES, check_world, play_world_out, played_by_seat, real_positions
except ImportError:  # tests/ itself on sys.path
    from agent_checks import (  # type: ignore[no-redef]
        CHECK_RULES,
        check_world,
        play_world_out,
        played_by_seat,
        real_positions,
    )


def _sample(record: np.void, rules: Rules, seat: int, rng: int) -> tuple[np.ndarray, int]:
    world = new_states(1)
    rng = int(sample_world(record, rules.to_tuple(), seat, np.uint64(rng), world[0]))
    return world, rng


def test_copy_state_copies_every_field() -> None:
    source = np.frombuffer(np.random.default_rng(1).bytes(HAND_STATE.itemsize), dtype=HAND_STATE).copy()
    target = new_states(1)
    copy_state(source[0], target[0])
    # padding bytes are not fields: compare field by field
    for name in HAND_STATE.names:
        assert np.array_equal(source[0][name], target[0][name]), name


@pytest.mark.parametrize("label", list(CHECK_RULES))
def test_worlds_are_consistent_and_playable(label: str) -> None:
    rules = CHECK_RULES[label]
    positions = real_positions(rules, 40, seed=7, spec="random")
    positions += real_positions(rules, 25, seed=8, spec="rule")
    rng = 3
    for i, (state, seat) in enumerate(positions):
        for _ in range(3):
            world, rng = _sample(state.record, rules, seat, rng)
            check_world(state.record, world[0], rules, seat)
        done = play_world_out(world, rules, seed=i)
        assert int(done.points().sum()) == rules.moon_total


@pytest.mark.parametrize("label", list(CHECK_RULES))
def test_never_reads_hidden_information(label: str) -> None:
    """Two states that differ only in what the seat cannot see give identical worlds."""
    rules = CHECK_RULES[label]
    differed = 0
    for state, seat in real_positions(rules, 30, seed=11):
        alternative, _ = _sample(state.record, rules, seat, 99)
        differed += any(
            int(alternative[0]["hands"][o]) != int(state.record["hands"][o])
            for o in range(rules.n_players)
            if o != seat
        )
        first, _ = _sample(state.record, rules, seat, 5)
        second, _ = _sample(alternative[0], rules, seat, 5)
        assert first.tobytes() == second.tobytes()
    assert differed >= 20


def test_the_kitty_taker_knows_the_kitty() -> None:
    rules = CHECK_RULES["kitty5"]
    checked = 0
    for state, seat in real_positions(rules, 60, seed=4, stage=(0.3, 0.9)):
        if state.record["trick_winners"][0] == seat:
            world, _ = _sample(state.record, rules, seat, 1)
            assert int(world[0]["kitty"]) == int(state.record["kitty"])
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize("label", ["standard", "kitty3", "kitty5"])
def test_world_fits_accepts_sampled_worlds_and_rejects_broken_ones(label: str) -> None:
    """``world_fits`` is the sampler's contract, checked on a result: every sampled world fits;
    a card moved between two other seats (a wrong hand size), or a kitty card swapped with a
    played one, does not."""
    rules = CHECK_RULES[label]
    array = rules.to_tuple()
    for state, seat in real_positions(rules, 20, seed=5, stage=(0.1, 0.8)):
        world, _ = _sample(state.record, rules, seat, 2)
        assert world_fits(state.record, array, seat, world[0])
        a, b = [o for o in range(rules.n_players) if o != seat][:2]
        moved = world.copy()
        card = int(moved[0]["hands"][a]) & -int(moved[0]["hands"][a])
        if card:
            moved[0]["hands"][a] ^= np.uint64(card)
            moved[0]["hands"][b] ^= np.uint64(card)
            assert not world_fits(state.record, array, seat, moved[0])
        if rules.kitty_size and int(world[0]["played"]):
            swapped = world.copy()
            swapped[0]["kitty"] = np.uint64(int(world[0]["played"]) & -int(world[0]["played"]))
            assert not world_fits(state.record, array, seat, swapped[0])


# ---------------------------------------------------------------- uniformity on small endgames
def consistent_deals(record: np.void, rules: Rules, seat: int) -> list[tuple[int, ...]]:
    """Every deal of the unseen cards (other hands in seat order, then the kitty) that agrees
    with the seat's knowledge, by brute force from the definitions in docs/rules.md."""
    n = rules.n_players
    array = rules.to_tuple()
    played = int(record["played"])
    taken_kitty = int(record["trick_number"]) > 0
    kitty_known = taken_kitty and int(record["trick_winners"][0]) == seat
    unseen = int(deck_cards(array)) & ~int(record["hands"][seat]) & ~played & ~int(record["taken"][seat])
    others = [o for o in range(n) if o != seat]
    sizes = [int(record["hands"][o]).bit_count() for o in others]
    if rules.kitty_size and not kitty_known:
        sizes.append(rules.kitty_size)
    cards = [c for c in range(52) if unseen >> c & 1]
    offset = int(record["pass_offset"])
    known_passed = int(record["passed"][seat]) & ~played if offset else 0
    receiver = (seat + offset) % n
    lead = int(record["first_lead_card"])
    leader = int(record["trick_leaders"][0])
    completed = played & ~int(record["trick_mask"])
    kitty_value = sum(int(p) for p in record["points"][:n]) - card_points(np.uint64(completed), array)
    allowed = [
        [not (o < len(others) and int(record["void_suits"][others[o]]) >> (c // 13) & 1) for c in cards]
        for o in range(len(sizes))
    ]
    deals = []
    masks = [0] * len(sizes)

    def place(i: int) -> None:  # card i to every slot with room that may hold it
        if i == len(cards):
            hands = dict(zip(others, masks, strict=False))
            kitty = masks[-1] if len(sizes) > len(others) else 0
            if known_passed and known_passed & ~hands[receiver]:
                return
            if lead >= 0 and unseen >> lead & 1 and not hands[leader] >> lead & 1:
                return
            if len(sizes) > len(others):
                if lead >= 0 and ((1 << lead) - 1) & int(CLUBS_MASK) & unseen & ~kitty:
                    return
                if taken_kitty and card_points(np.uint64(kitty), array) != kitty_value:
                    return
            deals.append(tuple(masks))
            return
        for slot, size in enumerate(sizes):
            if allowed[slot][i] and masks[slot].bit_count() < size:
                masks[slot] |= 1 << cards[i]
                place(i + 1)
                masks[slot] ^= 1 << cards[i]

    place(0)
    return deals


def _world_key(world: np.void, rules: Rules, seat: int, with_kitty: bool) -> tuple[int, ...]:
    key = [int(world["hands"][o]) for o in range(rules.n_players) if o != seat]
    return tuple(key + [int(world["kitty"])]) if with_kitty else tuple(key)


def chi_square_limit(degrees: int, z: float = 4.0) -> float:
    """Upper quantile of chi-square (Wilson-Hilferty); z=4 is a one-sided p of about 3e-5."""
    k = max(degrees, 1)
    return k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3


Sample = Callable[[np.void, tuple[int, ...], int, np.uint64, np.void], np.uint64]


def assert_uniform(
    record: np.void,
    rules: Rules,
    seat: int,
    per_deal: int = 60,
    seed: int = 0,
    sample: Sample = sample_world,  # type: ignore[assignment]
) -> int:
    """Chi-square of ``sample``'s deals against the uniform law over every consistent deal."""
    deals = consistent_deals(record, rules, seat)
    assert deals, "the real deal itself is consistent"
    with_kitty = len(deals[0]) > rules.n_players - 1
    counts: Counter[tuple[int, ...]] = Counter()
    world = new_states(1)
    array = rules.to_tuple()
    rng = np.uint64(seed * 7919 + 1)
    samples = per_deal * len(deals)
    for _ in range(samples):
        rng = np.uint64(sample(record, array, seat, rng, world[0]))
        counts[_world_key(world[0], rules, seat, with_kitty)] += 1
    assert set(counts) <= set(deals), "a sampled deal is not consistent"
    expected = samples / len(deals)
    statistic = sum((counts[d] - expected) ** 2 / expected for d in deals)
    assert statistic < chi_square_limit(len(deals) - 1), (statistic, len(deals))
    return len(deals)


MAX_DEALS = 2000  # endgames small enough to enumerate and to sample 60 times per deal


def _deal_bound(record: np.void, rules: Rules, seat: int) -> int:
    """Deals of the unseen cards to the other hands and the kitty, ignoring every constraint."""
    unseen = int(deck_cards(rules.to_tuple())) & ~int(record["hands"][seat]) & ~int(record["played"])
    sizes = [int(record["hands"][o]).bit_count() for o in range(rules.n_players) if o != seat]
    bound = math.factorial(unseen.bit_count())
    for size in [*sizes, unseen.bit_count() - sum(sizes)]:
        bound //= math.factorial(size)
    return bound


def _small_endgames(rules: Rules, count: int, seed: int) -> list[tuple[object, int]]:
    out = []
    for state, seat in real_positions(rules, 12 * count, seed=seed, stage=(0.7, 0.95), pass_probability=0):
        unseen = int(deck_cards(rules.to_tuple())) & ~int(state.record["hands"][seat])
        if (unseen & ~int(state.record["played"])).bit_count() >= 4 and _deal_bound(
            state.record, rules, seat
        ) <= MAX_DEALS:
            out.append((state, seat))
        if len(out) == count:
            break
    return out


@pytest.mark.parametrize("label", ["standard", "kitty3", "kitty5", "qdan5"])
def test_uniform_on_small_endgames(label: str) -> None:
    rules = CHECK_RULES[label]
    endgames = _small_endgames(rules, 6, seed=21)
    assert len(endgames) >= 4
    for i, (state, seat) in enumerate(endgames):
        assert_uniform(state.record, rules, seat, seed=i)  # type: ignore[attr-defined]


def test_uniform_with_crossing_voids() -> None:
    """Seat a void in one suit, seat b in another: the allowed slots cross, so the exact
    correction (rejection with prod A_i / B_i) is what keeps the deal uniform."""
    rules = Rules()
    tested = 0
    chooser = random.Random(5)
    for state, seat in _small_endgames(rules, 60, seed=31):
        array = new_states(1)
        copy_state(state.record, array[0])
        record = array[0]
        unseen = int(deck_cards(rules.to_tuple())) & ~int(record["hands"][seat]) & ~int(record["played"])
        others = [o for o in range(4) if o != seat]
        chooser.shuffle(others)
        marked = []
        for o in others:  # mark a suit void that the seat truly lacks, with unseen cards in it
            options = [
                s
                for s in range(4)
                if not int(record["hands"][o]) & int(SUIT_MASKS[s])
                and unseen & int(SUIT_MASKS[s])
                and not int(record["void_suits"][o]) >> s & 1
                and s not in marked
            ]
            if options and len(marked) < 2:
                suit = chooser.choice(options)
                record["void_suits"][o] |= 1 << suit
                marked.append(suit)
        if len(marked) < 2 or record["phase"] == PHASE_PASS:
            continue
        assert_uniform(record, rules, seat, seed=tested)
        tested += 1
        if tested == 5:
            break
    assert tested >= 3


def test_consistent_when_every_opponent_shows_a_different_void() -> None:
    """Three seats void in three different suits mid-hand: the hardest crossing structure,
    where the exactness test may keep failing and the swap-mixing fallback takes over."""
    rules = Rules()
    array = rules.to_tuple()
    tested = 0
    for state, seat in real_positions(rules, 300, seed=41, spec="rule", stage=(0.3, 0.7), pass_probability=0):
        record = new_states(1)
        copy_state(state.record, record[0])
        unseen = int(deck_cards(array)) & ~int(record[0]["hands"][seat]) & ~int(record[0]["played"])
        used: list[int] = []
        for o in (o for o in range(4) if o != seat):
            options = [
                s
                for s in range(4)
                if s not in used
                and not int(record[0]["hands"][o]) & int(SUIT_MASKS[s])
                and unseen & int(SUIT_MASKS[s])
            ]
            if options:
                used.append(options[0])
                record[0]["void_suits"][o] |= 1 << options[0]
        if len(used) < 3:
            continue
        rng = 1
        for _ in range(40):
            world, rng = _sample(record[0], rules, seat, rng)
            check_world(record[0], world[0], rules, seat)
        tested += 1
        if tested == 8:
            break
    assert tested >= 3


def test_the_opening_club_stays_hidden_with_any_club_and_a_kitty() -> None:
    """``any_club`` with a kitty: the leader may open with any club, so which club was the lowest
    dealt out, and which low clubs lie in the kitty, is hidden from the other seats. Swap a low
    club of the kitty with a pointless card of the leader: the seat cannot tell the two apart
    (the leader still holds the lowest club), so the sampler must deal the same worlds."""
    rules = CHECK_RULES["kitty5"]
    assert rules.first_lead == "any_club"
    array = rules.to_tuple()
    clubs = int(CLUBS_MASK)
    tested = 0
    for state, seat in real_positions(rules, 200, seed=13, stage=(0.02, 0.4), pass_probability=0):
        record = state.record
        leader = int(record["trick_leaders"][0])
        kitty = int(record["kitty"])
        low_clubs = kitty & clubs & ((1 << int(record["first_lead_card"])) - 1)
        if leader == seat or not low_clubs or int(record["void_suits"][leader]) & 1:
            continue
        # a card of the leader's the seat knows nothing of, worth no points (the kitty's are public)
        ruled_out = int(record["passed"][seat]) | clubs | int(point_cards(array))
        free = int(record["hands"][leader]) & ~ruled_out
        options = [c for c in range(52) if free >> c & 1]
        if not options:
            continue
        alternative = new_states(1)
        copy_state(record, alternative[0])
        club, other = (low_clubs & -low_clubs).bit_length() - 1, options[0]
        alternative[0]["kitty"] = np.uint64(kitty ^ (1 << club) ^ (1 << other))
        alternative[0]["hands"][leader] ^= np.uint64((1 << club) | (1 << other))
        alternative[0]["first_lead_card"] = club
        first, _ = _sample(record, rules, seat, 17)
        second, _ = _sample(alternative[0], rules, seat, 17)
        assert first.tobytes() == second.tobytes()
        check_world(alternative[0], second[0], rules, seat)
        tested += 1
    assert tested >= 5


# ---------------------------------------------------------------- the weighted sampler (inference)
def _weighted_pool(
    record: np.void,
    rules: Rules,
    seat: int,
    rng: int,
    size: int,
    trust: float,
    shape: float = 0.0,
    plays: float = 0.0,
):  # type: ignore[no-untyped-def]
    pool, cumulative = new_pool(size)
    array = rules.to_tuple()
    rng, power = belief_pool(record, array, seat, np.uint64(rng), pool, cumulative, trust, shape, plays)
    return pool, cumulative, int(rng), float(power)


@pytest.mark.parametrize("label", list(CHECK_RULES))
def test_weighted_worlds_are_consistent_and_playable(label: str) -> None:
    """Every world of a weighted pool, and every world drawn from it, agrees with what the seat
    knows: the weights only choose among the sampler's worlds (the surprises alone, with the
    shape tilt, with the play model)."""
    rules = CHECK_RULES[label]
    positions = real_positions(rules, 12, seed=17, spec="rule") + real_positions(rules, 8, seed=18)
    rng = 5
    for i, (state, seat) in enumerate(positions):
        shape, plays = float(i % 3 == 1), float(i % 3 == 2)
        pool, cumulative, rng, _ = _weighted_pool(state.record, rules, seat, rng, 8, 0.5, shape, plays)
        assert np.all(np.diff(cumulative) >= 0) and cumulative[-1] == pytest.approx(1.0)
        for world in pool:
            check_world(state.record, world, rules, seat)
        drawn = new_states(1)
        rng = int(draw_world(pool, cumulative, 8, np.uint64(rng), drawn[0]))
        check_world(state.record, drawn[0], rules, seat)
        done = play_world_out(drawn, rules, seed=i)
        assert int(done.points().sum()) == rules.moon_total


def _ignoring_plays(record, rules, seat, rng, world):  # type: ignore[no-untyped-def]
    """One draw of the weighted sampler whose model ignores the plays (a fresh pool of 4)."""
    pool, cumulative = new_pool(4)
    rng, _ = belief_pool(record, rules, seat, rng, pool, cumulative, IGNORE_PLAYS, 0.0, 0.0)
    return draw_world(pool, cumulative, 4, np.uint64(rng), world)


@pytest.mark.parametrize("label", ["standard", "kitty5"])
def test_weighted_sampler_with_a_model_that_ignores_the_plays_is_uniform(label: str) -> None:
    """Same law as the uniform sampler (chi-square against every consistent deal)."""
    rules = CHECK_RULES[label]
    endgames = _small_endgames(rules, 4, seed=21)
    assert len(endgames) >= 3
    for i, (state, seat) in enumerate(endgames):
        assert_uniform(state.record, rules, seat, seed=i, sample=_ignoring_plays)  # type: ignore[attr-defined]


def test_weighted_sampler_predicts_the_hands_of_players_it_models() -> None:
    """Against rule players (the model), the weighted pool puts more probability on where the
    hidden cards really are than the uniform one (the same pool, paired over positions)."""
    rules = CHECK_RULES["standard"]
    gains = []
    for state, seat in real_positions(rules, 40, seed=23, spec="rule", pass_probability=0, stage=(0.2, 0.8)):
        hands = [int(h) for h in state.record["hands"][:4]]
        scores = []
        for trust in (IGNORE_PLAYS, 0.5):
            pool, cumulative, _, _ = _weighted_pool(state.record, rules, seat, 99, 300, trust)
            weights = np.diff(cumulative, prepend=0.0)
            score = 0.0  # sum over hidden cards of log(weight of the worlds putting it where it is)
            for o in (o for o in range(4) if o != seat):
                held = np.array([int(w["hands"][o]) for w in pool], dtype=np.uint64)
                for card in (c for c in range(52) if hands[o] >> c & 1):
                    share = weights[(held >> np.uint64(card)) & np.uint64(1) == 1].sum()
                    score += float(np.log(share + 1e-3))
            scores.append(score)
        gains.append(scores[1] - scores[0])
    mean, half = float(np.mean(gains)), 1.96 * float(np.std(gains, ddof=1)) / np.sqrt(len(gains))
    assert mean - half > 0, (mean, half)


def test_tempering_keeps_an_effective_pool() -> None:
    log_weights = np.array([0.0, -50.0, -60.0, -70.0, -1.0, -2.0, -80.0, -90.0])
    cumulative = np.empty(8)
    power = temper(log_weights, 8, 4.0, cumulative)
    assert 0.0 < power < 1.0
    assert effective_size(log_weights, 8, power) >= 4.0 - 1e-6
    assert effective_size(log_weights, 8, min(1.0, power + 0.01)) < 4.0  # the largest such power
    assert np.all(np.diff(cumulative) >= 0) and cumulative[-1] == pytest.approx(1.0)
    equal = np.empty(8)
    assert temper(np.full(8, -3.0), 8, 8.0, equal) == 1.0
    assert np.allclose(equal, np.arange(1, 9) / 8)
    counts = np.zeros(8)
    rng = np.uint64(3)
    for _ in range(8000):
        next_rng, i = draw_index(equal, 8, rng)
        rng = np.uint64(next_rng)
        counts[i] += 1
    assert np.abs(counts - 1000).max() < 5 * np.sqrt(1000)


@pytest.mark.parametrize("label", ["standard", "kitty5", "kitty3_maria", "any_lead"])
def test_play_events_are_the_public_facts_of_each_play(label: str) -> None:
    """One event per card another seat played to a led trick, with the suit led, the card then
    winning, the points in the trick and the cards its player played from then on; in the true
    world the player held the card then, and the surprises of the truth are counted like any."""
    rules = CHECK_RULES[label]
    array = rules.to_tuple()
    for state, seat in real_positions(rules, 15, seed=29, spec="rule", pass_probability=0):
        record = state.record
        events = new_events()
        count = int(play_events(record, array, seat, events))
        plays = [(int(record["history"][i]), i % rules.n_players) for i in range(int(record["n_played"]))]
        played, _ = played_by_seat(record)
        mover = {c: o for o in range(rules.n_players) for c in range(52) if played[o] >> c & 1}
        expected = [(c, mover[c]) for c, position in plays if position and mover[c] != seat]
        assert [(int(events[e, EVENT_CARD]), int(events[e, EVENT_MOVER])) for e in range(count)] == expected
        for e in range(count):
            card, who = expected[e]
            assert int(held_then(record, events, e)) >> card & 1
            assert int(events[e, EVENT_LATER]) & ~played[who] == 0
        assert surprises(record, array, seat, events, count) >= 0
