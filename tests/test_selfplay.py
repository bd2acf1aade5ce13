"""The self-play loop's trick-at-a-time playout for stateless policies against the engine
played card by card.

``play_out_hand`` plays tables whose policies read only their legal cards and seed
(random, lowest, highest) without keeping the record current between cards
(``selfplay.loops._stateless_tricks``). That is an optimisation, not a second set of rules: it
must choose the same cards and leave exactly the record that ``HandState.play`` (the
engine's ``play_card``, card by card) leaves, field by field, under every rules set.

Also the loops' parallel driver (``selfplay.loops.in_blocks``), which runs their blocks on threads.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.baseline import highest_play, lowest_play, random_pass, random_play
from agents.dispatch import KindSet
from agents.kinds import MAX_PARAMS
from agents.registry import code_of
from hearts_sim import HandState, Rules
from hearts_sim.core.rules import MAX_PLAYERS
from hearts_sim.engine.hand import decision_seed
from hearts_sim.engine.state import HAND_STATE, new_states

try:
    from tests.rule_variants import RULE_VARIANTS, SWITCH_SETTINGS, rules_strategy
except ImportError:  # tests/ itself on sys.path (rootdir-less import mode)
    from rule_variants import RULE_VARIANTS, SWITCH_SETTINGS, rules_strategy  # type: ignore[no-redef]

from hearts_sim._numba import max_threads
from hearts_sim.selfplay.loops import (
    BLOCKS_PER_THREAD,
    blocks_for,
    in_blocks,
    play_out_states,
    set_thread_count,
    thread_count,
)
from hearts_sim.selfplay.records import HAND_RECORD
from hearts_sim.selfplay.simulate import Table, run_hands

PLAYS = {code_of("random"): "random", code_of("lowest"): "lowest", code_of("highest"): "highest"}
NO_PARAMS = (0.0,) * MAX_PARAMS


def _card_by_card(state: HandState, seat_codes: list[int]) -> None:
    """Play ``state`` out through ``HandState.play`` with the baseline policies in Python's loop."""
    while state.phase == "play":
        seat = state.current_player
        legal = np.uint64(int(state.legal_moves()))
        code = seat_codes[seat]
        if code == code_of("random"):
            card = random_play(legal, np.uint64(decision_seed(state.record, seat)))
        elif code == code_of("lowest"):
            card = lowest_play(legal, np.uint64(0))
        else:
            card = highest_play(legal, np.uint64(0))
        state.play(int(card))


def _passed(rules: Rules, seed: int, hand: int) -> HandState:
    """Hand ``hand`` of a seed, after every seat passed random cards (the play phase)."""
    state = HandState.deal(rules, seed, hand)
    if state.phase == "pass":
        for seat in range(rules.n_players):
            seed_bits = np.uint64(decision_seed(state.record, seat))
            dealt = np.uint64(int(state.record["dealt"][seat]))
            state.pass_cards(seat, int(random_pass(dealt, rules.to_tuple(), seed_bits)))
    return state


def assert_stateless_playout_is_card_by_card(
    rules: Rules, seed: int, hand: int, seat_codes: list[int]
) -> None:
    stepped = _passed(rules, seed, hand)
    batched = new_states(1)
    batched[0] = stepped.record  # a copy, at the same point
    _card_by_card(stepped, seat_codes)
    padded = tuple(seat_codes) + (code_of("random"),) * (MAX_PLAYERS - len(seat_codes))
    play_out_states(
        KindSet.of(["random", "lowest", "highest"]),
        batched,
        rules.to_tuple(),
        padded,
        (NO_PARAMS,) * MAX_PLAYERS,
        padded,
        (NO_PARAMS,) * MAX_PLAYERS,
    )
    where = f"{rules.describe()}, seed {seed}, hand {hand}, seats {[PLAYS[c] for c in seat_codes]}"
    assert stepped.phase == "done", where
    for field in HAND_STATE.names:
        assert np.array_equal(batched[0][field], stepped.record[field]), f"{field} differs: {where}"


def _tables(n: int) -> list[list[int]]:
    """Self-play tables of each stateless policy and two mixed ones."""
    mixed = [code_of("random"), code_of("lowest"), code_of("highest"), code_of("lowest"), code_of("random")][
        :n
    ]
    return [[code] * n for code in PLAYS] + [mixed, mixed[::-1]]


@pytest.mark.parametrize("name", sorted(RULE_VARIANTS))
def test_stateless_playout_leaves_the_card_by_card_record(name: str) -> None:
    rules = RULE_VARIANTS[name]
    for hand in range(12):
        for seat_codes in _tables(rules.n_players):
            assert_stateless_playout_is_card_by_card(rules, 17, hand, seat_codes)


@settings(SWITCH_SETTINGS, max_examples=60)
@given(
    rules=rules_strategy, seed=st.integers(0, 2**64 - 1), hand=st.integers(0, 10**6), table=st.integers(0, 4)
)
def test_stateless_playout_random_switches(rules: Rules, seed: int, hand: int, table: int) -> None:
    assert_stateless_playout_is_card_by_card(rules, seed, hand, _tables(rules.n_players)[table])


def test_run_hands_writes_every_field_of_out() -> None:
    """``simulate`` hands the kernel uninitialised chunks of one array: every byte must be written."""
    table = Table.build("qdan5", [["random", "lowest", "rule", "highest", "random"]])
    expected = run_hands(table, 3, 10, 50)
    out = np.empty(50, dtype=HAND_RECORD)
    out.view(np.uint8)[:] = 0xA5  # garbage
    assert run_hands(table, 3, 10, 50, out) is out
    assert out.tobytes() == expected.tobytes()
    with pytest.raises(ValueError, match="out must hold 50 records"):
        run_hands(table, 3, 10, 50, out[:49])


# ---------------------------------------------------------------- blocks on threads
@contextlib.contextmanager
def threads_set(threads: int) -> Iterator[None]:
    """This thread's ``in_blocks`` thread count for the block, then the count it had before."""
    before = thread_count()
    set_thread_count(threads)
    try:
        yield
    finally:
        set_thread_count(before)


def test_in_blocks_calls_every_block_once_side_by_side_on_the_threads_set() -> None:
    """The loops' parallel driver: each block once, with the block count, on as many threads as
    set for the calling thread (two blocks meet at a barrier: they must run at the same time)."""
    meet = threading.Barrier(2, timeout=10)
    calls: list[tuple[str, int, int, str]] = []

    def kernel(tag: str, block: int, n_blocks: int) -> None:
        if block < 2:
            meet.wait()
        calls.append((tag, block, n_blocks, threading.current_thread().name))

    with threads_set(2):
        in_blocks(kernel, 5, "job")
        assert blocks_for(3) == 3 and blocks_for(10**6) == 2 * BLOCKS_PER_THREAD
    assert sorted(call[:3] for call in calls) == [("job", b, 5) for b in range(5)]
    assert threading.current_thread().name not in {call[3] for call in calls}


def test_in_blocks_compiles_a_numba_kernel_in_the_calling_thread_first() -> None:
    """A first run compiled the loop in a block's thread, and Ctrl-C (delivered to the calling
    thread) waited for the whole compile, 20 s and more. A real kernel is compiled here before
    its blocks start, once, and a compiled one is not asked again (``compile`` takes numba's
    global lock even then)."""
    compiled_in: list[str] = []

    @numba.njit
    def kernel(out: np.ndarray, block: int, n_blocks: int) -> None:
        out[block] = n_blocks

    compile_for = kernel.compile

    def compile_here(signature: Any) -> Any:
        compiled_in.append(threading.current_thread().name)
        return compile_for(signature)

    kernel.compile = compile_here  # type: ignore[method-assign]
    out = np.zeros(4, dtype=np.int64)
    with threads_set(2):
        in_blocks(kernel, 4, out)
        in_blocks(kernel, 4, out)
    assert compiled_in == [threading.current_thread().name]  # here, and once
    assert out.tolist() == [4, 4, 4, 4]


def test_in_blocks_on_one_thread_runs_in_the_caller_and_a_failure_stops_the_rest() -> None:
    ran: list[int] = []

    def kernel(block: int, n_blocks: int) -> None:
        ran.append(block)
        if block == 1:
            raise RuntimeError("block 1 failed")

    with threads_set(1), pytest.raises(RuntimeError, match="block 1 failed"):
        in_blocks(kernel, 4)
    assert ran == [0, 1]


def test_the_thread_count_is_a_setting_of_the_calling_thread() -> None:
    """A Dask worker runs tasks on several threads, each setting its own count."""
    seen: list[int] = []
    with threads_set(1):
        other = threading.Thread(target=lambda: seen.append(thread_count()))
        other.start()
        other.join()
        assert thread_count() == 1
    assert seen == [max_threads()]  # a thread that never set it: every core


def test_hand_k_of_a_seed_is_one_hand_whatever_type_the_seed_arrives_as() -> None:
    """``deal_numbered_hand`` and ``seed_hand`` are the one numbering of hands and of the seats'
    streams: a Python int seed arrives as int64, which derive_seed mixed otherwise than the
    uint64 every caller passes, and dealt another hand."""
    from hearts_sim.engine.hand import deal_numbered_hand, seed_hand
    from hearts_sim.engine.state import new_states
    from hearts_sim.game.hand_state import HandState

    rules = Rules.preset("qdan3").to_tuple()
    as_int, as_uint = new_states(1), new_states(1)
    deal_numbered_hand(as_int[0], rules, 12345, 3)
    deal_numbered_hand(as_uint[0], rules, np.uint64(12345), 3)
    assert (as_int == as_uint).all() and (as_int == HandState.deal("qdan3", seed=12345, hand=3)._states).all()
    seed_hand(as_int[0], 99)
    seed_hand(as_uint[0], np.uint64(99))
    assert (as_int == as_uint).all()
