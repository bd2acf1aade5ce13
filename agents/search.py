"""Shared search pieces: clock and time budgets, playout policies, playouts, the search tree.

Design note. The search agents (``mc``, ``pimc``, ``ismcts``) all score a card by playing
sampled worlds to the end of the hand with a cheap policy in every seat, and may all run
on a time budget; what they share lives here, once. The playout policies are one
enumeration, ``ROLLOUTS``, the ``rollout`` parameter of every search agent:

* ``random``: a uniformly random legal card, one draw of the stream per card (the
  stream ``mc.lean_random_value`` replays without the engine);
* ``greedy``: a few-line heuristic (``greedy_play``);
* ``rule``: the rule agent with its default parameters;
* ``guard``: ``greedy``, except that a seat plays the rule agent's card while one opponent
  holds every point taken (at least the rule agent's ``defend``): greedy players duck and dump
  their points on whoever wins, so in their playouts a moon meets no defence.
* ``race``: ``greedy``, except that every seat plays the rule agent's card while one seat holds
  every point taken (at least ``defend``): the holder plays for every trick, the others defend.
  In ``guard`` playouts the would-be shooter still ducks like a greedy player, so the defence
  answers a moon nobody is playing for; here the race is run by both sides.

A playout steps a plain ``HAND_STATE`` with the engine's own kernels, so it never
re-implements a rule. ``pimc`` and ``ismcts`` grow trees of one node layout (``TREE_NODE``:
children as a linked list, every seat's score sum for max^n backup) with one set of node
operations (``add_child``, ``ucb``, ``backup``). The clock is read by an LLVM intrinsic rather than
``numba.objmode``, which would take the GIL and serialise the parallel self-play loop.
"""

from __future__ import annotations

import ctypes
import sys
import time

import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from agents import rule
from agents.baseline import pass_extremes, random_pass
from agents.kinds import Parameter
from agents.rule import DEFAULT_PARAMS as RULE_DEFAULT_PARAMS
from agents.rule import moon_status, rule_pass, rule_play
from hearts_sim._numba import njit, njit_inline
from hearts_sim.core.cards import (
    AS_BIT,
    HEARTS_MASK,
    KS_BIT,
    QS_BIT,
    SUIT_MASKS,
    highest_card,
    highest_ranked_card,
    lowest_card,
    popcount,
    select_bit,
    suit_of,
)
from hearts_sim.core.rules import MAX_PLAYERS, MOON_OFF, RulesTuple
from hearts_sim.engine.hand import legal_moves, pass_cards, play_card, point_holder
from hearts_sim.engine.rng import next_u64, random_below, random_unit
from hearts_sim.engine.state import HAND_STATE, NO_SEAT, PHASE_PASS, PHASE_PLAY

ROLLOUTS = ("random", "greedy", "rule", "guard", "race")
ROLLOUT_RANDOM, ROLLOUT_GREEDY, ROLLOUT_RULE, ROLLOUT_GUARD, ROLLOUT_RACE = range(len(ROLLOUTS))
_RULE_DEFEND = RULE_DEFAULT_PARAMS[rule.P.defend]

NS_PER_MS = 1_000_000.0
TIME_CHECK_EVERY = 8  # iterations between clock reads in timed searches (a read costs ~25 ns)
TIMED_NODE_CAPACITY = 1 << 18  # node pool of a timed search (np.empty: untouched pages cost nothing)
# The budgets a search parameter may ask for. The parameters declare them as their ranges, and
# the kernels clamp to them again (``budget_count``, ``budget_ms``), so no node pool is
# sized and no loop is bounded by an unchecked value.
MAX_ITERATIONS = 2_000_000  # a tree of this many nodes takes 176 MB (TREE_NODE: 88 bytes)
MAX_SAMPLES = 1_000_000  # sampled worlds or deals per decision
MAX_MS = 60_000.0  # one minute per decision
MAX_EXPLORATION = 100.0  # UCB's c; values are scaled to about [-1, 0]

# the tree searches' (pimc, ismcts) playout noise and clock, declared once
PLAYOUT_EPSILON = Parameter(
    "epsilon", 0.1, "playouts: chance of a uniformly random card instead of the policy's", low=0, high=1
)
TIMED_SEARCH = Parameter(
    "ms", 0.0, "ms per decision (0: use iterations; a timed search is not reproducible)", low=0, high=MAX_MS
)

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_CLOCK_MONOTONIC = getattr(time, "CLOCK_MONOTONIC", 1)
# Windows' C runtime has no clock_gettime: the compiled searches failed to link there (every
# search agent, ``hard`` too); kernel32's performance counter stands in for it
_WINDOWS_CLOCK = sys.platform == "win32"
_PERFORMANCE_COUNTER = "QueryPerformanceCounter"


def _performance_frequency() -> int:
    """The performance counter's ticks a second (Windows; fixed at boot)."""
    frequency = ctypes.c_int64()
    ctypes.windll.kernel32.QueryPerformanceFrequency(ctypes.byref(frequency))  # type: ignore[attr-defined]
    return frequency.value


if _WINDOWS_CLOCK:  # at import: a kernel loaded from numba's cache links against it too
    _counter = ctypes.windll.kernel32.QueryPerformanceCounter  # type: ignore[attr-defined]
    llvm_binding.add_symbol(_PERFORMANCE_COUNTER, ctypes.cast(_counter, ctypes.c_void_p).value)


def _external(builder, name, returns, arguments):  # type: ignore[no-untyped-def]
    """The C function ``name`` declared once in the module being built."""
    fn = builder.module.globals.get(name)
    return fn if fn is not None else ir.Function(builder.module, ir.FunctionType(returns, arguments), name)


# ---------------------------------------------------------------- clock and time budgets
@intrinsic
def _monotonic_ns(typingctx):  # type: ignore[no-untyped-def]
    """libc's ``clock_gettime(CLOCK_MONOTONIC)`` in ns (on Windows, kernel32's
    ``QueryPerformanceCounter`` scaled to ns), called from compiled code.

    Not ``numba.objmode``: an object-mode block takes the GIL, which would serialise the
    threads of the parallel self-play loop whenever timed agents play; this plain
    external call (vDSO, ~25 ns) needs no GIL and caches cleanly.
    """

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i32, i64 = ir.IntType(32), ir.IntType(64)
        billion = ir.Constant(i64, 1_000_000_000)
        if _WINDOWS_CLOCK:
            slot = builder.alloca(i64)
            builder.call(_external(builder, _PERFORMANCE_COUNTER, i32, [i64.as_pointer()]), [slot])
            ticks, frequency = builder.load(slot), ir.Constant(i64, _performance_frequency())
            # whole seconds, then the rest: ticks * 10**9 overflows after 15 minutes at 10 MHz
            seconds, rest = builder.sdiv(ticks, frequency), builder.srem(ticks, frequency)
            return builder.add(
                builder.mul(seconds, billion), builder.sdiv(builder.mul(rest, billion), frequency)
            )
        timespec = ir.LiteralStructType([i64, i64])
        slot = builder.alloca(timespec)
        clock_gettime = _external(builder, "clock_gettime", i32, [i32, timespec.as_pointer()])
        builder.call(clock_gettime, [ir.Constant(i32, _CLOCK_MONOTONIC), slot])
        zero = ir.Constant(i32, 0)
        seconds = builder.load(builder.gep(slot, [zero, zero]))
        nanoseconds = builder.load(builder.gep(slot, [zero, ir.Constant(i32, 1)]))
        return builder.add(builder.mul(seconds, billion), nanoseconds)

    return types.int64(), codegen


@njit
def monotonic_ns() -> np.int64:
    """A monotonic clock in nanoseconds, readable inside kernels (for time budgets)."""
    return _monotonic_ns()  # type: ignore[call-arg]


@njit
def budget_ms(ms: np.float64) -> float:
    """A time budget of ``ms`` milliseconds, at most ``MAX_MS`` (0: none, NaN too)."""
    if not ms > 0.0:
        return 0.0
    return min(float(ms), MAX_MS)


@njit
def budget_deadline(ms: np.float64) -> np.int64:
    """The clock reading at which a search of ``ms`` milliseconds stops (``budget_ms``; 0: no
    time budget)."""
    budget = budget_ms(ms)
    return monotonic_ns() + np.int64(budget * NS_PER_MS) if budget > 0.0 else np.int64(0)


@njit
def budget_count(value: np.float64, low: np.int64, high: np.int64) -> np.int64:
    """A count parameter as an integer in ``low .. high`` (NaN: ``low``), converted only once
    it is in range: a float beyond int64 has no defined integer value."""
    if not value >= low:
        return low
    if value >= high:
        return high
    return np.int64(value)


# ---------------------------------------------------------------- small helpers
@njit_inline
def card_count(mask: np.uint64) -> np.int64:
    """Number of cards in a bitboard, as an int64 (``popcount`` answers uint64)."""
    return np.int64(popcount(mask))


# Scratch records of a sampling search (mc's plays, the searched passes): the sampled world and
# the copy a rollout plays on. Always used as worlds[WORLD] / worlds[TRIAL]: a record taken out
# of the array once does not keep the array alive, and numba frees an array after its last use.
WORLD, TRIAL, SCRATCH_WORLDS = 0, 1, 2


@njit
def new_worlds(count: np.int64):
    """``count`` scratch ``HAND_STATE`` records (worlds and working copies) for one decision."""
    return np.zeros(count, dtype=HAND_STATE)


# ---------------------------------------------------------------- playout policies
@njit_inline
def greedy_play(state, rules: RulesTuple, legal: np.uint64, rng: np.uint64):
    """A cheap card-play heuristic for playouts: returns (rng, card).

    Leads the lowest card of a suit picked at random (weighted by length); follows with
    the highest card that still loses the trick, else (last to play) the highest card
    but the queen, else the lowest; when void, discards QS (KS, AS under Black Maria),
    then the highest heart, then the highest card.
    """
    if state.n_in_trick == 0:
        rng, k = random_below(rng, card_count(legal))
        suit = suit_of(select_bit(legal, k))
        return rng, lowest_card(legal & SUIT_MASKS[suit])
    led = suit_of(state.trick_cards[state.leader])
    follow = legal & SUIT_MASKS[led]
    if follow != _ZERO:
        winning = highest_card(state.trick_mask & SUIT_MASKS[led])
        below = follow & ((_ONE << np.uint64(winning)) - _ONE)
        if below != _ZERO:
            return rng, highest_card(below)
        if state.n_in_trick == state.n_players - 1:
            safe = follow & ~QS_BIT
            return rng, highest_card(safe if safe != _ZERO else follow)
        return rng, lowest_card(follow)
    if legal & QS_BIT:
        return rng, highest_card(legal & QS_BIT)
    if rules.black_maria:
        if legal & KS_BIT:
            return rng, highest_card(legal & KS_BIT)
        if legal & AS_BIT:
            return rng, highest_card(legal & AS_BIT)
    hearts = legal & HEARTS_MASK
    if hearts != _ZERO:
        return rng, highest_card(hearts)
    return rng, highest_ranked_card(legal)


@njit_inline
def moon_threat(state, rules: RulesTuple) -> bool:
    """Whether the seat to play faces a moon: one opponent holds every point taken, at least the
    rule agent's ``defend`` (``guard`` playouts then play the rule agent's defence)."""
    if rules.moon == MOON_OFF:
        return False
    return moon_status(state, state.to_play, np.inf, 0.0, _RULE_DEFEND) >= 0


@njit_inline
def moon_race(state, rules: RulesTuple) -> bool:
    """Whether one seat holds every point taken, at least the rule agent's ``defend`` (``race``
    playouts then play the rule agent's card in every seat: the holder shoots, the others defend)."""
    holder, taken = point_holder(state)
    return rules.moon != MOON_OFF and holder != NO_SEAT and taken >= _RULE_DEFEND


@njit_inline
def playout_card(state, rules: RulesTuple, legal: np.uint64, rng: np.uint64, rollout: np.int64, epsilon):
    """One playout move by policy ``rollout`` (ROLLOUT_*): (rng, card).

    ``random`` draws exactly one number per card. The other policies first draw whether
    to play a uniformly random card instead (chance ``epsilon``, or a forced card): that
    keeps the playouts of a deterministic policy diverse."""
    count = card_count(legal)
    if rollout != ROLLOUT_RANDOM:
        rng, u = random_unit(rng)
        if u >= epsilon and count > 1:
            if (
                rollout == ROLLOUT_GREEDY
                or (rollout == ROLLOUT_GUARD and not moon_threat(state, rules))
                or (rollout == ROLLOUT_RACE and not moon_race(state, rules))
            ):
                return greedy_play(state, rules, legal, rng)
            return rng, rule_play(RULE_DEFAULT_PARAMS, state, rules, state.to_play, legal, rng)
    rng, k = random_below(rng, count)
    return rng, select_bit(legal, k)


@njit_inline
def play_out(state, rules: RulesTuple, rng: np.uint64, rollout: np.int64, epsilon: np.float64) -> np.uint64:
    """Play the world to the end of the hand with the playout policy; returns the rng."""
    while state.phase == PHASE_PLAY:
        legal = legal_moves(state, rules)
        rng, card = playout_card(state, rules, legal, rng, rollout, epsilon)
        play_card(state, rules, card)
    return rng


@njit_inline
def play_tricks(state, rules: RulesTuple, rng: np.uint64, rollout: np.int64, epsilon: np.float64, tricks):
    """Play on with the playout policy until ``tricks`` more tricks are complete (the current one,
    if begun, counting as the first) or the hand ends; returns the rng."""
    stop = state.trick_number + tricks
    while state.phase == PHASE_PLAY and not (state.trick_number >= stop and state.n_in_trick == 0):
        legal = legal_moves(state, rules)
        rng, card = playout_card(state, rules, legal, rng, rollout, epsilon)
        play_card(state, rules, card)
    return rng


@njit
def pass_and_play_out(
    state, rules: RulesTuple, passing: np.int64, playing: np.int64, rng: np.uint64
) -> np.uint64:
    """Play ``state`` to the end with playout policy ``playing`` (ROLLOUT_*) in every seat; the
    seats still to pass pass first as playout policy ``passing`` would (the rule agent's pass,
    the highest cards, or random)."""
    if state.phase == PHASE_PASS:
        for s in range(state.n_players):
            if not (state.passes_made >> s) & 1:
                if passing == ROLLOUT_RULE:
                    cards = rule_pass(RULE_DEFAULT_PARAMS, state, rules, s, rng)
                elif passing in (ROLLOUT_GREEDY, ROLLOUT_GUARD, ROLLOUT_RACE):
                    cards = pass_extremes(state.dealt[s], rules, True)
                else:
                    rng, bits = next_u64(rng)
                    cards = random_pass(state.dealt[s], rules, bits)
                pass_cards(state, rules, s, cards)
    return play_out(state, rules, rng, playing, 0.0)


# ---------------------------------------------------------------- the search tree (pimc, ismcts)
# One record per node. Children form a linked list (``first_child``, then ``next``), newest
# first; ``sums`` holds every seat's total hand score over the playouts through the node, so
# the mover at any node can pick the child best for itself (max^n), for 3, 4 or 5 players.
TREE_NODE = np.dtype(
    [
        ("card", np.int64),  # the card played to reach the node (NO_CARD at the root)
        ("first_child", np.int64),  # -1: no child yet
        ("next", np.int64),  # the next sibling, -1: none
        ("cards", np.uint64),  # pimc: legal cards without a child yet; ismcts: cards with a child
        ("visits", np.int64),
        ("available", np.int64),  # ismcts: visits of the parent in which this card was legal
        ("sums", np.float64, MAX_PLAYERS),
    ]
)
NO_NODE = -1


@njit
def new_tree(capacity: np.int64):
    """A node pool of ``capacity`` nodes (``np.empty``: untouched pages cost nothing)."""
    return np.empty(capacity, dtype=TREE_NODE)


@njit_inline
def init_node(tree, node: np.int64, card: np.int64, cards: np.uint64, n: np.int64) -> None:
    """Node ``node`` fresh: no children, no visits, zero sums for the ``n`` seats."""
    tree[node].card = card
    tree[node].first_child = NO_NODE
    tree[node].next = NO_NODE
    tree[node].cards = cards
    tree[node].visits = 0
    tree[node].available = 0
    for s in range(n):
        tree[node].sums[s] = 0.0


@njit_inline
def add_child(tree, parent: np.int64, child: np.int64, card: np.int64, n: np.int64) -> None:
    """Make the free node ``child`` (reached by ``card``) the first child of ``parent``."""
    init_node(tree, child, card, _ZERO, n)
    tree[child].next = tree[parent].first_child
    tree[parent].first_child = child


@njit_inline
def ucb(tree, child: np.int64, mover: np.int64, log_count: np.float64, c: np.float64, scale: np.float64):
    """UCB1 of ``child`` for the seat to move: its mean value (-score, scaled by ``scale`` to
    about [-1, 0]) plus ``c`` times the exploration term; ``log_count`` is the log of the
    parent's visits (pimc) or of the child's availability (ismcts)."""
    visits = np.float64(tree[child].visits)
    return -tree[child].sums[mover] / visits * scale + c * np.sqrt(log_count / visits)


@njit_inline
def backup(tree, path, depth: np.int64, scores, n: np.int64) -> None:
    """Count a playout whose final hand ``scores`` came through ``path[0..depth]``."""
    for d in range(depth + 1):
        node = path[d]
        tree[node].visits += 1
        for s in range(n):
            tree[node].sums[s] += np.float64(scores[s])


@njit
def lowest_mean_card(legal: np.uint64, values, weights) -> np.int64:
    """The legal card with the lowest mean among those tried (ties: the lower card index; none
    tried: the lowest legal card)."""
    best = lowest_card(legal)
    best_value = np.inf
    cards = legal
    while cards != _ZERO:
        card = lowest_card(cards)
        cards &= cards - _ONE
        if weights[card] > 0 and values[card] < best_value:
            best_value = values[card]
            best = card
    return best


@njit_inline
def mean_score(tree, node: np.int64, seat: np.int64) -> np.float64:
    """``seat``'s mean hand score over the playouts through ``node`` (0 before any)."""
    return tree[node].sums[seat] / np.float64(max(tree[node].visits, np.int64(1)))
