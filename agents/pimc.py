"""``pimc``: determinized search: UCT in each sampled world, averaged across worlds.

Design note. Perfect-information Monte Carlo (Ginsberg's GIB, Sturtevant's Hearts
player) samples ``worlds`` deals of the unseen cards that agree with everything the
seat knows (the engine's one determinization sampler), searches each world as a
perfect-information game with UCT, and plays the legal card whose root value,
averaged over the worlds, is best. Each tree node stores the sum of every seat's
hand score (max^n backup: a node's mover picks the child with the lowest mean score
of its own), so the same tree serves 3, 4 and 5 players and every scoring switch
(moon, JD bonus, Black Maria, kitty) comes straight from the engine's ``play_card``.

The worlds are plain ``HAND_STATE`` records stepped by the engine's own kernels:
a search never re-implements a rule. Everything the search allocates (worlds,
node pool) is made inside the decision kernel, which takes value types only.

The helpers under "shared search pieces" (clock, playout policies, playouts) are used
by ``agents.ismcts`` too.
"""

from __future__ import annotations

import time

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from agents import codes
from agents.kinds import Parameter, Params, PolicyKind
from agents.rule import DEFAULT_PARAMS as RULE_DEFAULT_PARAMS
from agents.rule import rule_play
from hearts_sim._numba import njit, njit_inline
from hearts_sim.cards import (
    AS_BIT,
    HEARTS_MASK,
    KS_BIT,
    N_CARDS,
    NO_CARD,
    QS_BIT,
    SUIT_MASKS,
    card_bit,
    highest_card,
    highest_ranked_card,
    lowest_card,
    popcount,
    select_bit,
    suit_of,
)
from hearts_sim.engine.hand import card_points, legal_moves, play_card, point_cards
from hearts_sim.engine.rng import random_below, random_unit
from hearts_sim.engine.sampler import sample_world
from hearts_sim.engine.state import HAND_STATE, PHASE_PLAY
from hearts_sim.rules import (
    MAX_PLAYERS,
    R_BLACK_MARIA,
    RulesTuple,
)

ROLLOUTS = ("random", "greedy", "rule")
ROLLOUT_RANDOM, ROLLOUT_GREEDY, ROLLOUT_RULE = range(3)

KIND = PolicyKind(
    "pimc",
    codes.PIMC,
    "determinized search: UCT in each sampled world, averaged across worlds",
    (
        Parameter("iterations", 40000, "UCT iterations per decision, split evenly across the worlds"),
        Parameter("worlds", 20, "deals of the unseen cards sampled per decision"),
        Parameter("c", 0.7, "UCT exploration constant (values are -score / moon total)"),
        Parameter("rollout", ROLLOUT_GREEDY, "playout policy below the tree", ROLLOUTS),
        Parameter("epsilon", 0.1, "playouts: chance of a uniformly random card instead of the policy's"),
        Parameter("ms", 0.0, "ms per decision (0: use iterations; a timed search is not reproducible)"),
    ),
)

_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_NS_PER_MS = 1_000_000.0
TIME_CHECK_EVERY = 8  # iterations between clock reads in timed searches (a read costs ~25 ns)
TIMED_NODE_CAPACITY = 1 << 18  # node pool of a timed search (np.empty: untouched pages cost nothing)

# ================================================================ shared search pieces
_CLOCK_MONOTONIC = getattr(time, "CLOCK_MONOTONIC", 1)


@intrinsic
def _monotonic_ns(typingctx):  # type: ignore[no-untyped-def]
    """libc's ``clock_gettime(CLOCK_MONOTONIC)`` in ns, called from compiled code.

    Not ``numba.objmode``: an object-mode block takes the GIL, which would serialise the
    threads of the parallel self-play loop whenever timed agents play; this plain
    external call (vDSO, ~25 ns) needs no GIL and caches cleanly.
    """

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i32, i64 = ir.IntType(32), ir.IntType(64)
        timespec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
        fn = builder.module.globals.get("clock_gettime")
        if fn is None:
            fn = ir.Function(builder.module, fnty, "clock_gettime")
        slot = builder.alloca(timespec)
        builder.call(fn, [ir.Constant(i32, _CLOCK_MONOTONIC), slot])
        zero = ir.Constant(i32, 0)
        seconds = builder.load(builder.gep(slot, [zero, zero]))
        nanoseconds = builder.load(builder.gep(slot, [zero, ir.Constant(i32, 1)]))
        return builder.add(builder.mul(seconds, ir.Constant(i64, 1_000_000_000)), nanoseconds)

    return types.int64(), codegen


@njit
def monotonic_ns() -> np.int64:
    """A monotonic clock in nanoseconds, readable inside kernels (for time budgets)."""
    return _monotonic_ns()  # type: ignore[call-arg]


@njit_inline
def card_count(mask: np.uint64) -> np.int64:
    """Number of cards in a bitboard, as an int64 (``popcount`` answers uint64)."""
    return np.int64(popcount(mask))  # type: ignore[call-arg]


@njit
def budget_deadline(ms: np.float64) -> np.int64:
    """The clock reading at which a search of ``ms`` milliseconds stops (0: no time budget)."""
    if ms <= 0.0:
        return np.int64(0)
    return monotonic_ns() + np.int64(ms * _NS_PER_MS)


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
    if rules[R_BLACK_MARIA]:
        if legal & KS_BIT:
            return rng, highest_card(legal & KS_BIT)
        if legal & AS_BIT:
            return rng, highest_card(legal & AS_BIT)
    hearts = legal & HEARTS_MASK
    if hearts != _ZERO:
        return rng, highest_card(hearts)
    return rng, highest_ranked_card(legal)


@njit_inline
def playout_card(state, rules: RulesTuple, legal: np.uint64, rng: np.uint64, rollout: np.int64, epsilon):
    """One playout move by policy ``rollout`` (ROLLOUT_*), or with chance ``epsilon`` a
    uniformly random card (keeps playouts of a deterministic policy diverse): (rng, card)."""
    count = card_count(legal)
    rng, u = random_unit(rng)
    if rollout == ROLLOUT_RANDOM or u < epsilon or count == 1:
        rng, k = random_below(rng, count)
        return rng, select_bit(legal, k)
    if rollout == ROLLOUT_GREEDY:
        return greedy_play(state, rules, legal, rng)
    return rng, rule_play(RULE_DEFAULT_PARAMS, state, rules, state.to_play, legal, rng)


@njit_inline
def play_out(state, rules: RulesTuple, rng: np.uint64, rollout: np.int64, epsilon: np.float64) -> np.uint64:
    """Play the world to the end of the hand with the playout policy; returns the rng."""
    while state.phase == PHASE_PLAY:
        legal = legal_moves(state, rules)
        rng, card = playout_card(state, rules, legal, rng, rollout, epsilon)
        play_card(state, rules, card)
    return rng


@njit
def moon_total(rules: RulesTuple) -> np.float64:
    """The points in the deck (26, or 43 with Black Maria): the scale of every search value."""
    return np.float64(card_points(point_cards(rules), rules))


@njit
def new_worlds(count: np.int64):
    """``count`` scratch ``HAND_STATE`` records (worlds and working copies) for one decision."""
    return np.zeros(count, dtype=HAND_STATE)


# ================================================================ pimc
@njit
def _uct_world(
    worlds,
    rules: RulesTuple,
    iterations: np.int64,
    deadline: np.int64,
    c: np.float64,
    rollout: np.int64,
    epsilon: np.float64,
    rng: np.uint64,
    node_card,
    node_first_child,
    node_next,
    node_untried,
    node_visits,
    node_sums,
    root_value,
    root_count,
) -> np.uint64:
    """UCT over the perfect-information game of ``worlds[0]``; adds each root card's mean
    score of the mover to ``root_value[card]`` and 1 to ``root_count[card]``."""
    n = worlds[0].n_players
    scale = 1.0 / moon_total(rules)
    capacity = node_card.shape[0]
    root_seat = worlds[0].to_play
    node_card[0] = NO_CARD
    node_first_child[0] = -1
    node_next[0] = -1
    node_untried[0] = legal_moves(worlds[0], rules)
    node_visits[0] = 0
    for s in range(n):
        node_sums[0, s] = 0.0
    n_nodes = 1
    path = np.empty(N_CARDS + 1, dtype=np.int64)
    iteration = 0
    while True:
        if deadline > 0:
            if iteration % TIME_CHECK_EVERY == 0 and monotonic_ns() >= deadline:
                break
        elif iteration >= iterations:
            break
        if n_nodes + 1 >= capacity:
            break
        iteration += 1
        worlds[1] = worlds[0]
        work = worlds[1]
        node = np.int64(0)
        depth = 0
        path[0] = 0
        # selection: descend while the node is fully expanded
        while work.phase == PHASE_PLAY and node_untried[node] == _ZERO:
            mover = work.to_play
            parent_log = np.log(np.float64(node_visits[node]))
            best_child = np.int64(-1)
            best_value = -np.inf
            child = node_first_child[node]
            while child >= 0:
                visits = np.float64(node_visits[child])
                value = -node_sums[child, mover] / visits * scale + c * np.sqrt(parent_log / visits)
                if value > best_value:
                    best_value = value
                    best_child = child
                child = node_next[child]
            node = best_child
            play_card(work, rules, node_card[node])
            depth += 1
            path[depth] = node
        # expansion: one untried card, chosen at random
        if work.phase == PHASE_PLAY:
            untried = node_untried[node]
            rng, k = random_below(rng, card_count(untried))
            card = select_bit(untried, k)
            node_untried[node] = untried & ~card_bit(card)
            child = n_nodes
            n_nodes += 1
            node_card[child] = card
            node_next[child] = node_first_child[node]
            node_first_child[node] = child
            node_first_child[child] = -1
            node_visits[child] = 0
            for s in range(n):
                node_sums[child, s] = 0.0
            play_card(work, rules, card)
            node_untried[child] = legal_moves(work, rules) if work.phase == PHASE_PLAY else _ZERO
            depth += 1
            path[depth] = child
            rng = play_out(work, rules, rng, rollout, epsilon)
        # backup: every seat's score, max^n style
        for d in range(depth + 1):
            node = path[d]
            node_visits[node] += 1
            for s in range(n):
                node_sums[node, s] += np.float64(work.scores[s])
    child = node_first_child[0]
    while child >= 0:
        card = node_card[child]
        root_value[card] += node_sums[child, root_seat] / np.float64(node_visits[child])
        root_count[card] += 1
        child = node_next[child]
    return rng


@njit
def pimc_play(
    params: Params, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, seed: np.uint64
) -> np.int64:
    """The legal card with the lowest mean score over ``worlds`` UCT searches of sampled deals."""
    if card_count(legal) == 1:
        return lowest_card(legal)
    iterations = max(np.int64(params[0]), np.int64(1))
    n_worlds = max(np.int64(params[1]), np.int64(1))
    c = np.float64(params[2])
    rollout = np.int64(params[3])
    epsilon = np.float64(params[4])
    ms = np.float64(params[5])
    start = monotonic_ns() if ms > 0.0 else np.int64(0)
    per_world = max(iterations // n_worlds, np.int64(1))
    capacity = TIMED_NODE_CAPACITY if ms > 0.0 else per_world + 2
    node_card = np.empty(capacity, dtype=np.int64)
    node_first_child = np.empty(capacity, dtype=np.int64)
    node_next = np.empty(capacity, dtype=np.int64)
    node_untried = np.empty(capacity, dtype=np.uint64)
    node_visits = np.empty(capacity, dtype=np.int64)
    node_sums = np.empty((capacity, MAX_PLAYERS), dtype=np.float64)
    root_value = np.zeros(N_CARDS, dtype=np.float64)
    root_count = np.zeros(N_CARDS, dtype=np.int64)
    worlds = new_worlds(2)
    rng = seed
    for w in range(n_worlds):
        deadline = np.int64(0)
        if ms > 0.0:
            deadline = start + np.int64(ms * _NS_PER_MS * (w + 1) / n_worlds)
        rng = sample_world(state, rules, seat, rng, worlds[0])
        rng = _uct_world(
            worlds,
            rules,
            per_world,
            deadline,
            c,
            rollout,
            epsilon,
            rng,
            node_card,
            node_first_child,
            node_next,
            node_untried,
            node_visits,
            node_sums,
            root_value,
            root_count,
        )
    best = lowest_card(legal)
    best_value = np.inf
    remaining = legal
    while remaining != _ZERO:
        card = lowest_card(remaining)
        remaining &= remaining - _ONE
        if root_count[card] > 0:
            value = root_value[card] / np.float64(root_count[card])
            if value < best_value:
                best_value = value
                best = card
    return best
