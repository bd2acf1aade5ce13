"""The batched self-play loops: blocks of hands (or games), one state each, side by side on threads.

Every decision goes through the agents' dispatcher (``agents.dispatch``) with the seat's
integer policy code and parameter row. Each loop takes a ``KindSet`` (the policy kinds the
table seats) as its first argument: numba compiles, and caches on disk, one specialisation per
kind set, containing only those kinds' kernels. The dispatcher is bound here as a module
global, not passed in as a function argument: numba keys a function argument's type by object
identity, so such a kernel would miss the on-disk cache in every new process. This module
therefore sits above ``agents`` in the layering; the core (cards, rules, engine/, game) never
imports agents.

A job is (deal, seating): every seating replays the same deal, which is how duplicate
tournaments cancel card luck. Nothing is allocated inside a block's loop.

Parallel by blocks: a compiled kernel plays one block of jobs (``play_hand_block``: its share
of the jobs on its own scratch state), and ``in_blocks`` runs the blocks on Python threads; the
kernels release the GIL (``nogil``), so the threads run side by side. Not numba's ``prange``:
a parfor compiles its body again as a gufunc and re-optimises everything it calls at each of
its levels, which cost the default tournament's first run 12 of its 36 s (``hearts-sim bench
--startup``, README Speed); and numba's default threading layer cannot run two parallel regions
at once (a Dask worker's tasks had to take turns).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from numba.extending import overload

from agents.dispatch import code_chain, one_policy, pass_chain, play_chain, stateless_chain
from agents.kinds import MAX_PARAMS
from agents.registry import EXTERNAL_CODE
from hearts_sim._numba import max_threads, njit, njit_inline
from hearts_sim.core.cards import NO_CARD, card_bit, suit_of
from hearts_sim.core.rules import MAX_PLAYERS, TIE_SHARE
from hearts_sim.engine.hand import (
    MAX_HANDS_PER_GAME,
    breaks_hearts,
    deal_numbered_hand,
    decision_seed,
    decision_stream,
    game_winners,
    legal_mask,
    legal_moves,
    note_hearts_broken,
    pack_trick_winners,
    pass_cards,
    place_card,
    play_card,
    take_trick,
)
from hearts_sim.engine.observe import observe
from hearts_sim.engine.rng import derive_seed
from hearts_sim.engine.state import NO_SEAT, NO_SUIT, PHASE_PASS, PHASE_PLAY

MIXED_CODES = -1  # the seats of a table play different policies


@njit_inline
def _seat_codes(codes, seating: np.int64):
    """Row ``seating`` of a (seatings, MAX_PLAYERS) code array as a tuple (no refcounting per call)."""
    return (
        codes[seating, 0],
        codes[seating, 1],
        codes[seating, 2],
        codes[seating, 3],
        codes[seating, 4],
    )


assert MAX_PARAMS == 16, "param_row spells out one entry per parameter slot"
assert MAX_PLAYERS == 5, "_seat_codes spells out one entry per seat"


@njit_inline
def param_row(params, seating: np.int64, seat: np.int64):
    """One seat's parameter row as a tuple of ``MAX_PARAMS`` floats (numba needs the length spelt out)."""
    p = params[seating, seat]
    return (
        p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15],
    )  # fmt: skip


@njit_inline
def _seat_params(params, seating: np.int64):
    """Parameter rows of every seat of a seating, as a tuple of tuples."""
    return (
        param_row(params, seating, 0),
        param_row(params, seating, 1),
        param_row(params, seating, 2),
        param_row(params, seating, 3),
        param_row(params, seating, 4),
    )


@njit_inline
def seating_policies(pass_codes, pass_params, play_codes, play_params, seating: np.int64):
    """Row ``seating`` of the four policy arrays as the per-seat tuples the playouts take
    (``pass_codes, pass_params, play_codes, play_params``), to be passed on with ``*``."""
    return (
        _seat_codes(pass_codes, seating),
        _seat_params(pass_params, seating),
        _seat_codes(play_codes, seating),
        _seat_params(play_params, seating),
    )


def play_out_hand(kinds, state, rules, pass_codes, pass_params, play_codes, play_params):  # type: ignore[no-untyped-def]
    """Play a dealt hand to the end: every seat passes, then plays until done.

    Codes and parameter rows are per-seat tuples (``seating_policies``). When no seat's play
    policy reads the record, the tricks are played a trick at a time (``_stateless_tricks``).
    Compiled per kind set (a numba overload): the decisions are the set's dispatch chains,
    inlined, so a decision costs no call."""
    raise NotImplementedError("compiled code only")


@overload(play_out_hand)
def _play_out_hand(kinds, state, rules, pass_codes, pass_params, play_codes, play_params):  # type: ignore[no-untyped-def]
    choose_pass = pass_chain(kinds)
    choose_play = play_chain(kinds)
    stateless_codes = tuple(code for code, kind in kinds.kinds() if not kind.reads_state) or (MIXED_CODES,)
    play_out_stateless = _stateless_table(kinds)
    # A set of stateless kinds alone (random, lowest, highest: the benchmark's, many tests') is
    # always played a trick at a time, so its loop compiles no card-by-card play: numba prunes
    # the branch on this constant (a cold start 1.5 s shorter).
    card_by_card = any(kind.reads_state for _, kind in kinds.kinds())

    def impl(kinds, state, rules, pass_codes, pass_params, play_codes, play_params):  # type: ignore[no-untyped-def]
        n = state.n_players
        if state.phase == PHASE_PASS:
            for seat in range(n):
                seed = decision_seed(state, seat)
                pass_cards(
                    state,
                    rules,
                    seat,
                    choose_pass(pass_codes[seat], pass_params[seat], state, rules, seat, seed),
                )
        stateless = True
        for seat in range(n):
            stateless &= play_codes[seat] in stateless_codes
        if stateless:
            play_out_stateless(_table_code(state, play_codes), state, rules, play_codes)
        if card_by_card:
            while state.phase == PHASE_PLAY:
                seat = state.to_play
                legal = legal_moves(state, rules)
                seed = decision_seed(state, seat)
                play_card(
                    state,
                    rules,
                    choose_play(play_codes[seat], play_params[seat], state, rules, seat, legal, seed),
                )

    return impl


@njit
def play_out_states(kinds, states, rules, pass_codes, pass_params, play_codes, play_params) -> None:
    """``play_out_hand`` on ``states[0]``, callable from Python (tests, tools)."""
    play_out_hand(kinds, states[0], rules, pass_codes, pass_params, play_codes, play_params)


def _stateless_table(kinds):  # type: ignore[no-untyped-def]
    """(table code, state, rules, play_codes) -> play the hand out a trick at a time: a loop of its
    own for each kind of the set with ``own_loop`` (random), for a table where every seat plays
    it (self-play, the benchmark: the policy is then settled at compile time, worth ~10% of a
    random hand), and one for every other table of stateless policies (``_table_code`` tells which)."""
    own_loops = [(code, kind) for code, kind in kinds.kinds() if kind.own_loop]
    policies = {f"policy_{i}": one_policy(kind.stateless_play) for i, (_, kind) in enumerate(own_loops)}
    return code_chain(
        "stateless_tricks_of_set",
        "state, rules, play_codes",
        [(code, f"tricks(state, rules, play_codes, policy_{i})") for i, (code, _) in enumerate(own_loops)],
        "tricks(state, rules, play_codes, mixed)",
        tricks=_stateless_tricks,
        mixed=stateless_chain(kinds),
        **policies,
    )


@njit_inline
def _table_code(state, play_codes) -> np.int64:
    """The policy every seat plays, or ``MIXED_CODES``."""
    code = play_codes[0]
    for seat in range(1, state.n_players):
        code = code if play_codes[seat] == code else MIXED_CODES
    return code


@njit_inline
def _stateless_tricks(state, rules, play_codes, choose) -> None:
    """Play the hand out from the start of a trick; seat s plays ``choose(play_codes[s], legal,
    seed)`` (a stateless policy, or the chain over the set's stateless policies).

    The same cards and the same final record as ``play_card`` card by card, but the running
    values of a trick (seat, led suit, cards, the card winning it) stay in registers instead
    of making a round trip through the record between cards (``trick_cards`` is never
    written: it is empty at the start of a trick and again after it), and the winner is tracked
    card by card instead of searched for at the end (``hearts-sim bench``, one thread: 0.90 ->
    1.51 million random hands/s)."""
    n = state.n_players
    n_played = state.n_played
    broken = state.hearts_broken
    while state.phase == PHASE_PLAY:
        first_trick = state.trick_number == 0
        seat = state.leader
        winner = seat
        winning = NO_CARD
        led_suit = NO_SUIT
        trick = np.uint64(0)
        for i in range(n):
            legal = legal_mask(state.hands[seat], led_suit, first_trick, broken, state.first_lead_card, rules)
            n_played += 1
            card = choose(play_codes[seat], legal, decision_stream(state.seat_seeds[seat], n_played))
            place_card(state, seat, card, led_suit, n_played - 1)
            trick |= card_bit(card)
            suit = suit_of(card)
            if i == 0:
                led_suit = suit
            # the highest card of the led suit wins (as ``finish_trick``), without a branch
            beats = (suit == led_suit) & (card > winning)
            winning = card if beats else winning
            winner = seat if beats else winner
            seat = seat + 1 if seat + 1 < n else 0
        state.played |= trick
        note_hearts_broken(state, breaks_hearts(trick, rules))
        broken = state.hearts_broken
        take_trick(state, rules, winner, trick)
    state.n_played = n_played


@njit
def _write_hand_record(record, state, deal: np.int64, seating: np.int64) -> None:
    record.deal = deal
    _write_hand_fields(record, state, seating)


@njit
def _write_game_hand_record(record, state, game: np.int64, hand_number: np.int64, seating: np.int64) -> None:
    """Hand ``hand_number`` of a game as a GAME_HAND_RECORD, before its scores join the totals."""
    record.game = game
    record.game_hand = hand_number
    for s in range(MAX_PLAYERS):
        record.game_score[s] = state.game_scores[s]
    _write_hand_fields(record, state, seating)


@njit
def _write_hand_fields(record, state, seating: np.int64) -> None:
    """The fields HAND_RECORD and GAME_HAND_RECORD share, from a finished hand."""
    record.seating = seating
    record.hand_seed = state.hand_seed
    record.pass_offset = state.pass_offset
    record.dealer = state.dealer
    record.moon_shooter = state.moon_shooter
    record.qs_taker = state.qs_taker
    record.jd_taker = state.jd_taker
    record.hearts_broken_trick = state.hearts_broken_trick
    record.qs_trick = state.qs_trick
    record.point_tricks = state.point_tricks
    record.first_leader = state.trick_leaders[0]
    record.kitty = state.kitty
    for s in range(MAX_PLAYERS):  # seats past n: zeros, as ``start_hand`` left them
        record.dealt[s] = state.dealt[s]
        record.passed[s] = state.passed[s]
        record.points[s] = state.points[s]
        record.score[s] = state.scores[s]
        record.tricks[s] = state.tricks_won[s]
    record.trick_winners = pack_trick_winners(state)


# ---------------------------------------------------------------- blocks on threads
BLOCKS_PER_THREAD = 4  # more blocks than threads evens out the load
_THREADS = threading.local()  # per calling thread, as numba's own setting: a Dask task sets its own


def set_thread_count(threads: int) -> None:
    """How many threads ``in_blocks`` uses for calls from this thread (checked by the caller)."""
    _THREADS.count = threads


def thread_count() -> int:
    """The threads ``in_blocks`` uses for calls from this thread (default: ``max_threads()``)."""
    return int(getattr(_THREADS, "count", max_threads()))


def blocks_for(n_jobs: int) -> int:
    """How many blocks to cut ``n_jobs`` into for ``thread_count()`` threads."""
    return max(1, min(n_jobs, thread_count() * BLOCKS_PER_THREAD))


def in_blocks(kernel: Callable[..., None], n_blocks: int, *arguments: Any) -> None:
    """``kernel(*arguments, block, n_blocks)`` for every block, on up to ``thread_count()``
    threads (the calling one alone when that is 1). Interrupted (Ctrl-C) or failing, it drops
    the blocks not yet started and waits for those running, then raises. The kernel is compiled
    (or loaded from the cache) here first: compiled in a block's thread, a first run's Ctrl-C
    waited for the whole compile (20 s and more) before it said a word."""
    threads = min(thread_count(), n_blocks)
    overloads = getattr(kernel, "overloads", None)  # a numba dispatcher's compiled signatures
    if threads > 1 and overloads is not None:
        signature = tuple(kernel.typeof_pyval(a) for a in (*arguments, 0, n_blocks))  # type: ignore[attr-defined]
        if signature not in overloads:  # compile() takes numba's global lock even when compiled
            kernel.compile(signature)  # type: ignore[attr-defined]
    if threads == 1:
        for block in range(n_blocks):
            kernel(*arguments, block, n_blocks)
        return
    pool = ThreadPoolExecutor(threads, thread_name_prefix="hearts-sim-block")
    try:
        for future in [pool.submit(kernel, *arguments, block, n_blocks) for block in range(n_blocks)]:
            future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@njit
def _block_bounds(n_jobs: np.int64, n_blocks: np.int64, block: np.int64) -> tuple[np.int64, np.int64]:
    return block * n_jobs // n_blocks, (block + 1) * n_jobs // n_blocks


# ---------------------------------------------------------------- hands and games
@njit
def play_hand_block(
    kinds,
    rules,
    master_seed,
    first_deal,
    n_deals,
    pass_codes,
    pass_params,
    play_codes,
    play_params,
    states,
    records,
    block,
    n_blocks,
) -> None:
    """Deals ``first_deal .. first_deal + n_deals - 1``, each played in every seating: the jobs
    of block ``block`` of ``n_blocks`` (``in_blocks`` runs them all), on ``states[block]``.

    ``records[j]`` receives job j = (deal - first_deal) * n_seatings + seating. The hand
    seed depends on the deal index only, so any chunking and any blocks give the same records.
    """
    n_seatings = pass_codes.shape[0]
    state = states[block]
    start, stop = _block_bounds(n_deals * n_seatings, n_blocks, block)
    # job j is (deal j // n_seatings, seating j % n_seatings); counted, not divided, per job
    deal = first_deal + start // n_seatings
    seating = start % n_seatings
    for job in range(start, stop):
        deal_numbered_hand(state, rules, master_seed, deal)
        play_out_hand(
            kinds,
            state,
            rules,
            *seating_policies(pass_codes, pass_params, play_codes, play_params, seating),
        )
        _write_hand_record(records[job], state, deal, seating)
        seating += 1
        if seating == n_seatings:
            seating = 0
            deal += 1


@njit
def play_game(
    kinds, state, rules, game_seed, pass_codes, pass_params, play_codes, play_params, record, hands, at, end
) -> np.int64:
    """One game to the target score (rule 9), written into a GAME_RECORD; unless ``hands`` is
    empty, each hand also into ``hands[at]``, ``hands[at + 1]`` ... below ``end``.

    Hand h uses seed ``derive_seed(game_seed, h)``, the pass direction of hand h in the
    cycle, and dealer h mod n; ``state.game_scores`` shows the totals before each hand.
    Returns the next free index of ``hands``, or -1 when its hands did not fit below ``end``
    (the game is then to be played again elsewhere: it is a function of its seed).
    """
    keep = hands.shape[0] > 0
    start_game(state, game_seed, record)
    first = at
    hand_number = 0
    while True:
        deal_numbered_hand(state, rules, game_seed, hand_number)
        play_out_hand(kinds, state, rules, pass_codes, pass_params, play_codes, play_params)
        if keep:
            if at == end:
                return -1
            _write_game_hand_record(hands[at], state, record.game, hand_number, record.seating)
            at += 1
        hand_number += 1
        if finish_game_hand(state, rules, hand_number, record):
            for k in range(first, at):  # every hand of the game says who won it
                hands[k].game_winners = record.winners
            return at


@njit
def start_game(state, game_seed, record) -> None:
    """Zero the totals of a new game and its record."""
    for s in range(MAX_PLAYERS):
        record.moons[s] = 0
        record.points[s] = 0
        record.final_score[s] = 0
        state.game_scores[s] = 0
    record.game_seed = game_seed


@njit
def finish_game_hand(state, rules, hands_played, record) -> bool:
    """Add a finished hand to the game's totals and record; True when the game is over (written)."""
    n = rules.n_players
    for s in range(n):
        state.game_scores[s] += state.scores[s]
        record.points[s] += state.points[s]
    if state.moon_shooter >= 0:
        record.moons[state.moon_shooter] += 1
    winners = game_winners(state.game_scores, n, rules.target_score, rules.tie_rule == TIE_SHARE)
    if winners == 0 and hands_played < MAX_HANDS_PER_GAME:
        return False
    record.hands = hands_played
    record.winners = winners
    for s in range(n):
        record.final_score[s] = state.game_scores[s]
    return True


@njit
def play_game_block(
    kinds,
    rules,
    master_seed,
    first_job,
    n_jobs,
    pass_codes,
    pass_params,
    play_codes,
    play_params,
    states,
    records,
    hands,
    progress,
    block,
    n_blocks,
) -> None:
    """Jobs ``first_job ..`` (job = game * n_seatings + seating: each game in every seating),
    block ``block`` of ``n_blocks``, on ``states[block]``; job j's GAME_RECORD into
    ``records[j - first_job]``. Game g's seed is ``derive_seed(master_seed, g)``, so any
    chunking gives the same records.

    Unless ``hands`` is empty, every hand of the block's games goes into the block's share of
    it (``_block_bounds`` over its length), in job order. ``progress[block]`` receives the hands
    written and the first job (from ``first_job``) not played: the block's last job unless its
    share filled up first."""
    n_seatings = pass_codes.shape[0]
    start, stop = _block_bounds(n_jobs, n_blocks, block)
    at, end = _block_bounds(hands.shape[0], n_blocks, block)
    first_hand = at
    for job in range(start, stop):
        game = (first_job + job) // n_seatings
        seating = (first_job + job) % n_seatings
        records[job].game = game
        records[job].seating = seating
        next_at = play_game(
            kinds,
            states[block],
            rules,
            derive_seed(master_seed, game),
            *seating_policies(pass_codes, pass_params, play_codes, play_params, seating),
            records[job],
            hands,
            at,
            end,
        )
        if next_at < 0:
            progress[block, 0], progress[block, 1] = at - first_hand, job
            return
        at = next_at
    progress[block, 0], progress[block, 1] = at - first_hand, stop


# ---------------------------------------------------------------- lockstep blocks (external seats)
# A table with seats decided outside the compiled loop (agents.external) is played a block of
# jobs at a time: ``advance_hand_block`` / ``advance_game_block`` play every slot until an
# external seat must decide or the job ends;
# Python asks the agents (``observe_slots`` copies the waiting seats' information sets out)
# and ``apply_moves`` plays their moves; and again. A slot's ``status``:
SLOT_NEW, SLOT_ACTIVE, SLOT_DONE = -3, -2, -1  # >= 0: waiting on that seat
SLOT_HAND_OVER = -4  # a game's hand is over, its state kept until Python copied its record


def advance_hand(kinds, state, rules, pass_codes, pass_params, play_codes, play_params):  # type: ignore[no-untyped-def]
    """Play ``state`` on until an external seat (``EXTERNAL_CODE``) is to decide: returns that
    seat, or NO_SEAT once the hand is over. Compiled per kind set, like ``play_out_hand``; the
    same decisions with the same seeds (passes are simultaneous, so their order is free)."""
    raise NotImplementedError("compiled code only")


@overload(advance_hand)
def _advance_hand(kinds, state, rules, pass_codes, pass_params, play_codes, play_params):  # type: ignore[no-untyped-def]
    choose_pass = pass_chain(kinds)
    choose_play = play_chain(kinds)

    def impl(kinds, state, rules, pass_codes, pass_params, play_codes, play_params):  # type: ignore[no-untyped-def]
        n = state.n_players
        if state.phase == PHASE_PASS:
            for s in range(n):  # passes are simultaneous: the compiled seats pass first
                if not (state.passes_made >> s) & 1 and pass_codes[s] != EXTERNAL_CODE:
                    seed = decision_seed(state, s)
                    pass_cards(
                        state, rules, s, choose_pass(pass_codes[s], pass_params[s], state, rules, s, seed)
                    )
            for s in range(n):
                if state.phase == PHASE_PASS and not (state.passes_made >> s) & 1:
                    return s
        while state.phase == PHASE_PLAY:
            seat = state.to_play
            if play_codes[seat] == EXTERNAL_CODE:
                return seat
            legal, seed = legal_moves(state, rules), decision_seed(state, seat)
            play_card(
                state,
                rules,
                choose_play(play_codes[seat], play_params[seat], state, rules, seat, legal, seed),
            )
        return NO_SEAT

    return impl


@njit
def advance_hand_block(
    kinds,
    rules,
    master_seed,
    pass_codes,
    pass_params,
    play_codes,
    play_params,
    jobs,
    states,
    status,
    block,
    n_blocks,
) -> None:
    """Advance the slots of block ``block`` of ``n_blocks`` of a lockstep block of hands. Slot i
    plays job ``jobs[i]`` = (deal, seating) packed as deal * n_seatings + seating; it is dealt
    when ``status`` is SLOT_NEW."""
    n_seatings = pass_codes.shape[0]
    start, stop = _block_bounds(jobs.shape[0], n_blocks, block)
    for i in range(start, stop):
        if status[i] == SLOT_DONE or status[i] >= 0:
            continue
        deal, seating = jobs[i] // n_seatings, jobs[i] % n_seatings
        if status[i] == SLOT_NEW:
            deal_numbered_hand(states[i], rules, master_seed, deal)
        seat = advance_hand(
            kinds,
            states[i],
            rules,
            *seating_policies(pass_codes, pass_params, play_codes, play_params, seating),
        )
        status[i] = seat if seat != NO_SEAT else SLOT_DONE


@njit
def advance_game_block(
    kinds,
    rules,
    master_seed,
    pass_codes,
    pass_params,
    play_codes,
    play_params,
    jobs,
    states,
    status,
    hands_played,
    records,
    keep_hands,
    block,
    n_blocks,
) -> None:
    """``advance_hand_block`` for whole games: slot i plays game ``jobs[i]`` (packed as game *
    n_seatings + seating) hand after hand, its GAME_RECORD in ``records[i]``. With
    ``keep_hands`` a slot stops at the end of each hand (SLOT_HAND_OVER), for
    ``write_game_hand_records``, and goes on to the next at its next call."""
    n_seatings = pass_codes.shape[0]
    start, stop = _block_bounds(jobs.shape[0], n_blocks, block)
    for i in range(start, stop):
        if status[i] == SLOT_DONE or status[i] >= 0:
            continue
        _advance_game(
            kinds,
            rules,
            master_seed,
            pass_codes,
            pass_params,
            play_codes,
            play_params,
            jobs[i],
            n_seatings,
            states[i],
            status,
            hands_played,
            records[i],
            keep_hands,
            i,
        )


@njit
def _advance_game(
    kinds,
    rules,
    master_seed,
    pass_codes,
    pass_params,
    play_codes,
    play_params,
    job,
    n_seatings,
    state,
    status,
    hands_played,
    record,
    keep_hands,
    i,
) -> None:
    """Slot i of ``advance_game_block``: its game goes on until an external seat must decide, a
    hand is over (with ``keep_hands``), or the game ends."""
    game, seating = job // n_seatings, job % n_seatings
    game_seed = derive_seed(master_seed, game)
    if status[i] == SLOT_NEW:
        start_game(state, game_seed, record)
        record.game = game
        record.seating = seating
        hands_played[i] = 0
        deal_numbered_hand(state, rules, game_seed, 0)
    elif status[i] == SLOT_HAND_OVER and _next_game_hand(state, rules, game_seed, hands_played, record, i):
        status[i] = SLOT_DONE
        return
    while True:
        seat = advance_hand(
            kinds,
            state,
            rules,
            *seating_policies(pass_codes, pass_params, play_codes, play_params, seating),
        )
        if seat != NO_SEAT:
            status[i] = seat
            return
        if keep_hands:
            status[i] = SLOT_HAND_OVER
            return
        if _next_game_hand(state, rules, game_seed, hands_played, record, i):
            status[i] = SLOT_DONE
            return


@njit
def _next_game_hand(state, rules, game_seed, hands_played, record, i) -> bool:
    """Slot i's hand is over: add it to the game, and deal the next hand unless the game is
    over (True)."""
    hands_played[i] += 1
    if finish_game_hand(state, rules, hands_played[i], record):
        return True
    deal_numbered_hand(state, rules, game_seed, hands_played[i])
    return False


@njit
def observe_slots(states, rules, slots, status, observed, seeds) -> None:
    """The information sets of the waiting seats (``status[slot]``) into ``observed[k]`` for slot
    ``slots[k]``, and the loop's decision seed of each into ``seeds[k]``."""
    for k in range(slots.shape[0]):
        slot = slots[k]
        observe(states[slot], rules, status[slot], observed[k])
        seeds[k] = decision_seed(states[slot], status[slot])


@njit
def apply_moves(states, rules, slots, moves, status) -> None:
    """Play the external seats' moves: ``moves[k]`` for slot ``slots[k]``, whose seat
    ``status[slot]`` is to decide: a card to play, or a bitboard to pass."""
    for k in range(slots.shape[0]):
        slot = slots[k]
        state = states[slot]
        if state.phase == PHASE_PASS:
            pass_cards(state, rules, status[slot], np.uint64(moves[k]))
        else:
            play_card(state, rules, np.int64(moves[k]))
        status[slot] = SLOT_ACTIVE


@njit
def write_hand_records(states, jobs, n_seatings, slots, records, first_job) -> None:
    """The HAND_RECORDs of finished slots: slot ``slots[k]`` into ``records[jobs[slot] - first_job]``."""
    for k in range(slots.shape[0]):
        slot = slots[k]
        job = jobs[slot]
        _write_hand_record(records[job - first_job], states[slot], job // n_seatings, job % n_seatings)


@njit
def write_game_hand_records(states, jobs, n_seatings, slots, hands_played, records) -> None:
    """The GAME_HAND_RECORDs of the slots ``slots`` whose hand is over (SLOT_HAND_OVER), slot
    ``slots[k]`` into ``records[k]``."""
    for k in range(slots.shape[0]):
        slot = slots[k]
        job = jobs[slot]
        _write_game_hand_record(
            records[k], states[slot], job // n_seatings, hands_played[slot], job % n_seatings
        )
