"""The environments' numba kernels: one learner seat among opponents that the agents' dispatcher
plays, a batch of tables advanced in one call.

Every rule is the engine's (``deal_hand``, ``pass_cards``, ``legal_moves``, ``play_card``);
opponents decide through ``agents.dispatch`` with the loop's random streams
(``decision_seed``), exactly as ``selfplay.loops.play_out_hand`` has them decide, and the
observation is ``engine.encoding``'s. Like the self-play loops, these kernels take a
``KindSet`` first, so numba compiles (and caches) them for the opponents' kinds only, and this
module sits above ``agents``.

Table ``i`` plays episode ``k`` from the hand seed ``derive_seed(env_seeds[i], k)`` with the
pass direction and dealer of hand ``k`` of a game: exactly ``HandState.deal(rules,
seed=env_seeds[i], hand=k)``. A table's trajectory therefore depends on its own seed and
actions only, never on how many tables share the batch.

Who plays what arrives as ``agents.registry.seat_arrays`` of two seatings: row 0 the
opponents (the learner's own slot is never read), row 1 the teacher in every seat (an agent
whose choice for the learner's position is reported beside the observation, for imitation
learning; codes ``NO_TEACHER`` for none). The kernels turn them into per-seat tuples as the
self-play loops do: arrays cross into numba far faster than nested tuples. For the same reason
the entry points take the rules as a plain tuple (``tuple(rules.to_tuple())``) and rebuild the
``KernelRules`` inside: typing a named tuple argument costs ~4 us per call, a plain one ~0.3 us,
which counts when Python steps one table at a time.
"""

from __future__ import annotations

import numpy as np

from agents.dispatch import choose_pass, choose_play
from hearts_sim._numba import njit, njit_inline
from hearts_sim.core.cards import N_CARDS, card_bit, has_card, lowest_card, popcount
from hearts_sim.core.rules import KernelRules
from hearts_sim.engine.encoding import action_cards, encode_observation, write_action_mask
from hearts_sim.engine.hand import (
    deal_numbered_hand,
    decision_seed,
    legal_moves,
    pass_cards,
    play_card,
)
from hearts_sim.engine.state import PHASE_DONE, PHASE_PASS, PHASE_PLAY
from hearts_sim.selfplay.loops import param_row, seating_policies  # the loops' row-to-tuple helpers

REWARD_HAND, REWARD_TRICK = 0, 1  # the final score only; or points as they are taken, then the rest
REWARD_MODES = ("hand", "trick")
NO_TEACHER = -1
_ZERO = np.uint64(0)


@njit
def apply_action(state, rules, seat: np.int64, card: np.int64, pending: np.uint64) -> np.uint64:
    """``seat`` picks ``card``: one card toward its pass (the engine records the pass once
    ``pass_count`` are picked), or the card it plays. Returns the cards picked toward a pass
    not yet recorded."""
    if state.phase == PHASE_PASS:
        pending |= card_bit(card)
        if np.int64(popcount(pending)) < rules.pass_count:
            return pending
        pass_cards(state, rules, seat, pending)
        return _ZERO
    play_card(state, rules, card)
    return _ZERO


@njit
def advance_opponents(kinds, state, rules, learner: np.int64, opponents) -> None:
    """Opponents play until the learner is to play or the hand is over."""
    _, _, play_codes, play_params = opponents
    while state.phase == PHASE_PLAY and state.to_play != learner:
        seat = state.to_play
        legal = legal_moves(state, rules)
        card = choose_play(
            kinds, play_codes[seat], play_params[seat], state, rules, seat, legal, decision_seed(state, seat)
        )
        play_card(state, rules, card)


@njit
def start_episode(kinds, state, rules, env_seed: np.uint64, episode: np.int64, learner: np.int64, opponents):
    """Deal episode ``episode`` of a table; the opponents pass (the exchange waits for the
    learner's pass) and play up to the learner's first decision."""
    pass_codes, pass_params, _, _ = opponents
    n = rules.n_players
    deal_numbered_hand(state, rules, env_seed, episode)
    if state.phase == PHASE_PASS:
        for seat in range(n):
            if seat != learner:
                cards = choose_pass(
                    kinds, pass_codes[seat], pass_params[seat], state, rules, seat, decision_seed(state, seat)
                )
                pass_cards(state, rules, seat, cards)
    advance_opponents(kinds, state, rules, learner, opponents)


@njit
def teacher_action(kinds, state, rules, learner: np.int64, pending: np.uint64, teacher) -> np.int64:
    """The card the teacher would pick for the learner now: its play, or while passing the
    lowest card of its pass not picked yet."""
    pass_code, pass_params, play_code, play_params = teacher
    seed = decision_seed(state, learner)
    if state.phase == PHASE_PASS:
        cards = choose_pass(kinds, pass_code, pass_params, state, rules, learner, seed)
        return lowest_card(cards & ~pending)
    legal = legal_moves(state, rules)
    return choose_play(kinds, play_code, play_params, state, rules, learner, legal, seed)


@njit_inline
def _opponents(policies):
    """Row 0 of the policy arrays as the per-seat tuples ``advance_opponents`` reads."""
    pass_codes, pass_params, play_codes, play_params = policies
    return seating_policies(pass_codes, pass_params, play_codes, play_params, 0)


@njit_inline
def _teacher(policies, learner):
    """The teacher's (pass code, pass params, play code, play params), from row 1."""
    pass_codes, pass_params, play_codes, play_params = policies
    return (
        pass_codes[1, learner],
        param_row(pass_params, 1, learner),
        play_codes[1, learner],
        param_row(play_params, 1, learner),
    )


@njit_inline
def observe(kinds, state, rules, learner, pending, teacher, i, outputs) -> None:
    """Row ``i`` of the outputs: the learner's observation, its action mask and the teacher's card."""
    observations, masks, _, _, _, _, teacher_actions = outputs
    encode_observation(state, rules, learner, pending, observations[i])
    write_action_mask(action_cards(state, rules, learner, pending), masks[i])
    if teacher[0] != NO_TEACHER:  # -1 once the hand is over (copy=False reuses the buffer)
        over = state.phase == PHASE_DONE
        teacher_actions[i] = -1 if over else teacher_action(kinds, state, rules, learner, pending, teacher)


@njit_inline
def _reset_one(kinds, rules, learner, opponents, teacher, i, tables, outputs) -> None:
    env_seeds, episodes, states, pending, rewarded = tables
    state = states[i]
    start_episode(kinds, state, rules, env_seeds[i], episodes[i], learner, opponents)
    pending[i] = _ZERO
    rewarded[i] = 0
    observe(kinds, state, rules, learner, pending[i], teacher, i, outputs)


@njit
def reset_tables(kinds, rule_values, learner, policies, tables, outputs) -> None:
    """Start episode ``episodes[i]`` at every table ``i`` and observe it.

    ``tables``: (env seeds, episodes, states, pending picks, rewards given this hand);
    ``outputs``: (observations, masks, rewards, terminated, scores, final observations, teacher
    actions). One thread: a learner's batch is its parallelism, and a serial loop lets numba
    keep the arrays' reference counts out of the per-table work."""
    rules = KernelRules(*rule_values)
    opponents, teacher = _opponents(policies), _teacher(policies, learner)
    for i in range(tables[2].shape[0]):
        _reset_one(kinds, rules, learner, opponents, teacher, i, tables, outputs)


@njit_inline
def may_pick(state, rules, seat: np.int64, card: np.int64, pending: np.uint64) -> bool:
    """Whether ``seat`` may pick ``card`` now: a card it may play, or a card of its hand toward its
    pass (``pending``: the cards already picked)."""
    return 0 <= card < N_CARDS and has_card(action_cards(state, rules, seat, pending), card)


@njit_inline
def return_so_far(state, seat: np.int64, reward_mode: np.int64) -> np.int64:
    """``seat``'s return so far: minus its score once the hand is over; with per-trick rewards,
    minus the points it took so far before that (the final step settles the moon and bonuses)."""
    if state.phase == PHASE_DONE:
        return -state.scores[seat]
    return -state.points[seat] if reward_mode == REWARD_TRICK else 0


@njit_inline
def _step_one(kinds, rules, learner, opponents, teacher, reward_mode, autoreset, i, actions, tables, outputs):
    _, episodes, states, pending, rewarded = tables
    _, _, rewards, terminated, scores, final_observations, _ = outputs
    state = states[i]
    pending[i] = apply_action(state, rules, learner, actions[i], pending[i])
    advance_opponents(kinds, state, rules, learner, opponents)
    done = state.phase == PHASE_DONE
    target = return_so_far(state, learner, reward_mode)
    rewards[i] = target - rewarded[i]
    rewarded[i] = target
    terminated[i] = done
    scores[i] = state.scores[learner] if done else 0  # copy=False reuses the buffers: no stale score
    if not done:
        observe(kinds, state, rules, learner, pending[i], teacher, i, outputs)
        return
    encode_observation(state, rules, learner, _ZERO, final_observations[i])
    if autoreset:
        episodes[i] += 1
        _reset_one(kinds, rules, learner, opponents, teacher, i, tables, outputs)
    else:
        observe(kinds, state, rules, learner, pending[i], teacher, i, outputs)


@njit
def first_illegal(rules, learner, actions, tables) -> np.int64:
    """The first table whose action is not a card the learner may pick now, or -1."""
    _, _, states, pending, _ = tables
    for i in range(states.shape[0]):
        if not may_pick(states[i], rules, learner, actions[i], pending[i]):
            return i
    return -1


@njit
def step_tables(
    kinds, rule_values, learner, policies, reward_mode, autoreset, actions, tables, outputs
) -> np.int64:
    """The learner's action at every table, the opponents' replies, the rewards, and (with
    ``autoreset``) the next episode where a hand ended; then every table's observation.

    Returns -1, or (having changed nothing) the first table whose action is illegal."""
    rules = KernelRules(*rule_values)
    illegal = first_illegal(rules, learner, actions, tables)
    if illegal >= 0:
        return illegal
    opponents, teacher = _opponents(policies), _teacher(policies, learner)
    for i in range(tables[2].shape[0]):
        _step_one(
            kinds, rules, learner, opponents, teacher, reward_mode, autoreset, i, actions, tables, outputs
        )
    return -1


# ---------------------------------------------------------------- one table stepped from Python
# A one-record array, not a record: a record crosses into numba in ~40 us, an array in ~1 us.
@njit
def seat_to_act(state) -> np.int64:
    """While passing, the first seat yet to pass (the seats pick in turn); then the player to
    move; -1 once the hand is over."""
    if state.phase == PHASE_PASS:
        seat = np.int64(0)
        while (state.passes_made >> seat) & 1:
            seat += 1
        return seat
    return state.to_play if state.phase == PHASE_PLAY else np.int64(-1)


@njit
def table_step(
    states, rule_values, seat: np.int64, card: np.int64, pending, reward_mode: np.int64, rewarded, rewards
):
    """``seat`` picks ``card`` at ``states[0]`` if it may (an illegal pick changes nothing), and
    every seat's reward since the last step goes into ``rewards``. ``pending[s]``: the cards seat
    ``s`` picked toward a pass not yet recorded; ``rewarded[s]``: its rewards so far this hand.
    Returns (legal, the seat to act next or -1)."""
    rules = KernelRules(*rule_values)
    state = states[0]
    if not may_pick(state, rules, seat, card, pending[seat]):
        return False, seat
    pending[seat] = apply_action(state, rules, seat, card, pending[seat])
    for s in range(state.n_players):
        target = return_so_far(state, s, reward_mode)
        rewards[s] = target - rewarded[s]
        rewarded[s] = target
    return True, seat_to_act(state)


@njit
def table_observe(
    states, rule_values, seat: np.int64, pending: np.uint64, acting: bool, observation, mask
) -> None:
    """``seat``'s observation of ``states[0]``, and its action mask (empty unless ``acting``)."""
    rules = KernelRules(*rule_values)
    state = states[0]
    encode_observation(state, rules, seat, pending, observation)
    write_action_mask(action_cards(state, rules, seat, pending) if acting else _ZERO, mask)
