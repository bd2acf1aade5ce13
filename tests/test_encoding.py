"""The observation encoding (``hearts_sim.engine.encoding``): it equals a slow reference built from
the seat's ``Observation`` and the public trick, field by field, under every preset; it does not
change when the hidden cards are re-dealt consistently with what the seat knows, and it does
change with the seat's own cards; the README documents every field."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from hearts_sim.core.cards import N_RANKS
from hearts_sim.core.rules import PASS_DIRECTIONS, Rules
from hearts_sim.engine.encoding import (
    FIELD_OFFSETS,
    OBS_SIZE,
    OBSERVATION_FIELDS,
    encode_observation,
)
from hearts_sim.engine.state import new_states
from hearts_sim.game.hand_state import HandState

try:
    from tests.agent_checks import CHECK_RULES, hidden_alternatives
    from tests.hand_checks import encode
except ImportError:  # tests/ itself on sys.path
    from agent_checks import CHECK_RULES, hidden_alternatives  # type: ignore[no-redef]
    from hand_checks import encode  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]


def reference(state: HandState, seat: int, pending: int = 0) -> np.ndarray:
    """The observation, written from ``state.observation(seat)`` (the information set) and the
    public current trick, one field at a time, in plain Python."""
    obs = state.observation(seat)
    rules = state.rules
    n = rules.n_players
    vector = np.zeros(OBS_SIZE, dtype=np.float32)

    def put(field: str, index: int, value: float = 1.0) -> None:
        vector[FIELD_OFFSETS[field] + index] = value

    slot = {s: (s - seat) % n for s in range(n)}
    passing = state.phase == "pass"
    for card in obs.hand:
        if not (passing and pending >> card & 1):
            put("hand", card)
    for card in list(obs.passed) + [c for c in range(52) if pending >> c & 1]:
        put("passed", card)
    for card in obs.received:
        put("received", card)
    for card in obs.kitty:
        put("kitty", card)
    led: int | None = None
    for i, (player, card) in enumerate(obs.plays):
        put("played", slot[player] * 52 + card)
        if i % n == 0:
            led = card // N_RANKS
        elif card // N_RANKS != led:
            put("voids", slot[player] * 4 + (led or 0))
    for player, card in state.trick:
        put("trick", slot[player] * 52 + card)
    if state.phase == "play":
        put("leader", slot[int(state.record["leader"])])
        put("phase", 1)
    if passing:
        put("phase", 0)
    for s in range(n):
        put("points", slot[s], obs.points[s] / rules.moon_total)
        put("tricks", slot[s], state.trick_winners.count(s) / rules.hand_size)
    put("pass_direction", PASS_DIRECTIONS.index(obs.pass_direction))
    put("hearts_broken", 0, float(obs.hearts_broken))
    put("trick_number", 0, state.trick_number / rules.hand_size)
    put("players", n - 3)
    switches = [
        rules.deck_mode == "kitty",
        rules.black_maria,
        rules.jd_bonus != 0,
        rules.avoid_all_tricks_bonus != 0,
        rules.qs_breaks_hearts,
        rules.must_break_hearts,
        rules.no_points_first_trick,
        rules.moon == "self_minus",
        rules.moon == "off",
    ]
    for i, on in enumerate(switches):
        put("rules", i, float(on))
    return vector


def positions(rules: Rules, count: int, seed: int) -> list[tuple[HandState, int, int]]:
    """(state, seat, its pending pass picks) at random points of random hands: while passing
    (some seats passed, the seat part-way through its picks), before the first card, mid-hand
    and after the last card."""
    chooser = random.Random(seed)
    out = []
    total = rules.hand_size * rules.n_players
    for hand in range(count):
        state = HandState.deal(rules, seed=seed, hand=hand)
        stage = chooser.choice(["pass", "start", "mid", "mid", "end"])
        if state.phase == "pass":
            passing = chooser.randrange(rules.n_players) if stage == "pass" else rules.n_players
            for s in range(passing):
                state.pass_cards(s, chooser.sample(list(state.hand(s)), rules.pass_count))
            if stage == "pass":
                picks = chooser.sample(list(state.hand(passing)), chooser.randrange(rules.pass_count))
                out.append((state, passing, sum(1 << c for c in picks)))
                continue
        stop = {"start": 0, "end": total}.get(stage, chooser.randrange(1, total))
        for _ in range(stop):
            state.play(chooser.choice(list(state.legal_moves())))
        out.append((state, chooser.randrange(rules.n_players), 0))
    return out


@pytest.mark.parametrize("name", list(CHECK_RULES))
def test_the_kernel_equals_the_reference(name: str) -> None:
    for state, seat, pending in positions(CHECK_RULES[name], 40, seed=len(name)):
        vector, cards = encode(state, seat, pending)
        expected = reference(state, seat, pending)
        for field, length, _ in OBSERVATION_FIELDS:
            at = FIELD_OFFSETS[field]
            assert np.array_equal(vector[at : at + length], expected[at : at + length]), (
                f"{name}: field {field} differs for seat {seat} at\n{state}"
            )
        assert ((vector >= 0) & (vector <= 1)).all()
        if state.phase == "play" and state.current_player == seat:
            assert cards == state.legal_moves().mask
        elif state.phase == "pass" and not int(state.record["passes_made"]) >> seat & 1:
            assert cards == state.hand(seat).mask & ~pending
        else:
            assert cards == 0


@pytest.mark.parametrize("name", ["qdan3", "standard", "qdan5"])
def test_the_kernel_reads_only_its_arrays(name: str) -> None:
    """Run as Python, where numpy checks every index (compiled, numba checks none), the kernel
    equals its compiled self at every stage of a hand, the finished hand included (3 players:
    17 tricks, and a walk of ``trick_number + 1`` leaders read one past the 17th)."""
    for state, seat, pending in positions(CHECK_RULES[name], 30, seed=5):
        record = state._states.view(np.recarray)[0]  # attribute access, as numba gives the kernel
        interpreted = np.zeros(OBS_SIZE, dtype=np.float32)
        encode_observation.py_func(record, state._rules_array, seat, np.uint64(pending), interpreted)
        assert np.array_equal(interpreted, encode(state, seat, pending)[0])


@pytest.mark.parametrize("name", list(CHECK_RULES))
def test_hidden_cards_do_not_leak_and_own_cards_show(name: str) -> None:
    """Re-dealing what the seat cannot see (other hands, the kitty, the others' passes) keeps
    its observation; moving one of its own cards to another seat changes it."""
    compared = changed_hidden = 0
    for index, (state, seat, pending) in enumerate(positions(CHECK_RULES[name], 24, seed=100 + len(name))):
        if state.phase == "done":
            continue
        original, cards = encode(state, seat, pending)
        for world in hidden_alternatives(state, seat, 3, seed=index):
            moved, moved_cards = encode(state, seat, pending, records=world)
            assert np.array_equal(moved, original), f"{name}: the observation saw hidden cards at\n{state}"
            assert moved_cards == cards
            compared += 1
            n = state.n_players
            changed_hidden += any(
                int(world[0]["hands"][o]) != int(state.record["hands"][o]) for o in range(n) if o != seat
            )
            # one of the seat's own cards swapped with another seat's: the seat sees it
            other = next(o for o in range(n) if o != seat and int(world[0]["hands"][o]))
            mine = int(world[0]["hands"][seat]) & ~pending & ~int(world[0]["passed"][seat])
            if not mine:
                continue
            exchange = (mine & -mine) | (int(world[0]["hands"][other]) & -int(world[0]["hands"][other]))
            swapped = world.copy()
            for s in (seat, other):
                swapped[0]["hands"][s] = np.uint64(int(swapped[0]["hands"][s]) ^ exchange)
            assert not np.array_equal(encode(state, seat, pending, records=swapped)[0], original)
    assert compared and changed_hidden > compared // 2, "the alternatives hardly differed: no teeth"


def test_the_fields_tile_the_vector_and_the_readme_documents_each() -> None:
    assert sum(length for _, length, _ in OBSERVATION_FIELDS) == OBS_SIZE == FIELD_OFFSETS["end"]
    readme = (ROOT / "README.md").read_text()
    for field, length, _ in OBSERVATION_FIELDS:
        row = re.search(rf"^\| `{field}` \| {FIELD_OFFSETS[field]} \| {length} \|", readme, re.MULTILINE)
        assert row, f"README.md documents no row for observation field {field} (offset, length)"


def test_a_blank_record_encodes_without_error() -> None:
    states = new_states(1)
    states[0]["n_players"] = 4
    out = np.full(OBS_SIZE, 7.0, dtype=np.float32)
    encode_observation(states[0], Rules().to_tuple(), 0, np.uint64(0), out)
    assert out.max() <= 1.0  # every value rewritten
