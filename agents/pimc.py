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

With ``belief`` > 0 the worlds are drawn from a pool of that many sampled worlds weighted by
how likely the other seats' plays are in each (``agents.belief``). The pass is searched
(``agents.passing``, ``pass_rollouts`` playouts; 0: the rule agent's pass).

The clock, the playout policies and the playouts are shared with ``agents.mc`` and
``agents.ismcts``: they live in ``agents.search``.
"""

from __future__ import annotations

import numpy as np

from agents.belief import BELIEF_PARAMETERS, next_world, weighted_pool
from agents.kinds import Parameter, Params, PolicyKind, param_indices
from agents.passing import PASS_ROLLOUTS, searched_pass_kernel
from agents.search import (
    MAX_EXPLORATION,
    MAX_ITERATIONS,
    MAX_SAMPLES,
    NO_NODE,
    NS_PER_MS,
    PLAYOUT_EPSILON,
    ROLLOUT_GREEDY,
    ROLLOUTS,
    TIME_CHECK_EVERY,
    TIMED_NODE_CAPACITY,
    TIMED_SEARCH,
    add_child,
    backup,
    budget_count,
    budget_ms,
    card_count,
    init_node,
    lowest_mean_card,
    mean_score,
    monotonic_ns,
    new_tree,
    new_worlds,
    play_out,
    ucb,
)
from hearts_sim._numba import njit
from hearts_sim.core.cards import N_CARDS, NO_CARD, card_bit, select_bit
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.hand import legal_moves, moon_total, play_card
from hearts_sim.engine.rng import random_below
from hearts_sim.engine.sampler import new_sampler_scratch
from hearts_sim.engine.state import PHASE_PLAY

PARAMETERS = (
    Parameter(
        "iterations",
        40000,
        "UCT iterations per decision, split evenly across the worlds",
        low=1,
        high=MAX_ITERATIONS,
    ),
    Parameter("worlds", 20, "deals of the unseen cards sampled per decision", low=1, high=MAX_SAMPLES),
    Parameter(
        "c", 0.7, "UCT exploration constant (values are -score / moon total)", low=0, high=MAX_EXPLORATION
    ),
    Parameter("rollout", ROLLOUT_GREEDY, "playout policy below the tree", ROLLOUTS),
    PLAYOUT_EPSILON,
    TIMED_SEARCH,
    *BELIEF_PARAMETERS,
    PASS_ROLLOUTS,
)
P = param_indices(PARAMETERS)

_ZERO = np.uint64(0)
_ONE = np.uint64(1)


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
    tree,
    root_value,
    root_count,
) -> np.uint64:
    """UCT over the perfect-information game of ``worlds[0]``; adds each root card's mean
    score of the mover to ``root_value[card]`` and 1 to ``root_count[card]``. A node's
    ``cards`` are its legal cards without a child yet."""
    n = worlds[0].n_players
    scale = 1.0 / moon_total(rules)
    capacity = tree.shape[0]
    root_seat = worlds[0].to_play
    init_node(tree, 0, NO_CARD, legal_moves(worlds[0], rules), n)
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
        while work.phase == PHASE_PLAY and tree[node].cards == _ZERO:
            mover = work.to_play
            parent_log = np.log(np.float64(tree[node].visits))
            best_child = np.int64(NO_NODE)
            best_value = -np.inf
            child = tree[node].first_child
            while child != NO_NODE:
                value = ucb(tree, child, mover, parent_log, c, scale)
                if value > best_value:
                    best_value = value
                    best_child = child
                child = tree[child].next
            if best_child == NO_NODE:  # no value compares (an exploration constant of NaN)
                break
            node = best_child
            play_card(work, rules, tree[node].card)
            depth += 1
            path[depth] = node
        # expansion: one untried card, chosen at random
        if work.phase == PHASE_PLAY:
            untried = tree[node].cards
            rng, k = random_below(rng, card_count(untried))
            card = select_bit(untried, k)
            tree[node].cards = untried & ~card_bit(card)
            child = n_nodes
            n_nodes += 1
            add_child(tree, node, child, card, n)
            play_card(work, rules, card)
            tree[child].cards = legal_moves(work, rules) if work.phase == PHASE_PLAY else _ZERO
            depth += 1
            path[depth] = child
            rng = play_out(work, rules, rng, rollout, epsilon)
        backup(tree, path, depth, work.scores, n)
    child = tree[0].first_child
    while child != NO_NODE:
        root_value[tree[child].card] += mean_score(tree, child, root_seat)
        root_count[tree[child].card] += 1
        child = tree[child].next
    return rng


@njit
def pimc_play(
    params: Params,
    state,
    rules: RulesTuple,
    seat: np.int64,
    legal: np.uint64,
    seed: np.uint64,
    values,
    weights,
) -> np.int64:
    """The legal card (of two or more) with the lowest mean score over ``worlds`` UCT searches of
    sampled deals; ``values[card]`` a root card's mean score for ``seat`` over the worlds whose
    search tried it, ``weights[card]`` their number."""
    iterations = budget_count(params[P.iterations], 1, MAX_ITERATIONS)
    n_worlds = budget_count(params[P.worlds], 1, MAX_SAMPLES)
    c = np.float64(params[P.c])
    rollout = np.int64(params[P.rollout])
    epsilon = np.float64(params[P.epsilon])
    ms = budget_ms(np.float64(params[P.ms]))  # 0: no time budget, each world's share of it else
    start = monotonic_ns() if ms > 0.0 else np.int64(0)
    per_world = max(iterations // n_worlds, np.int64(1))
    capacity = TIMED_NODE_CAPACITY if ms > 0.0 else per_world + 2
    tree = new_tree(capacity)
    root_value = np.zeros(N_CARDS, dtype=np.float64)
    root_count = np.zeros(N_CARDS, dtype=np.int64)
    worlds = new_worlds(2)
    rng = seed
    rng, pool, cumulative, pool_size = weighted_pool(
        state, rules, seat, rng, params[P.belief], params[P.trust], params[P.shape], params[P.plays]
    )
    plan, card_rows = new_sampler_scratch()
    for w in range(n_worlds):
        deadline = np.int64(0)
        if ms > 0.0:
            deadline = start + np.int64(ms * NS_PER_MS * (w + 1) / n_worlds)
        rng = next_world(state, rules, seat, rng, pool, cumulative, pool_size, worlds[0], plan, card_rows)
        rng = _uct_world(
            worlds,
            rules,
            per_world,
            deadline,
            c,
            rollout,
            epsilon,
            rng,
            tree,
            root_value,
            root_count,
        )
    for card in range(N_CARDS):
        if root_count[card] > 0:
            values[card] = root_value[card] / np.float64(root_count[card])
            weights[card] = root_count[card]
    return lowest_mean_card(legal, values, weights)


KIND = PolicyKind(
    "pimc",
    "determinized search: UCT in each sampled world, averaged across worlds",
    PARAMETERS,
    scored_play=pimc_play,
    scored_pass=searched_pass_kernel(PARAMETERS),
    searches=True,
)
