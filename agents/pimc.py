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

The clock, the playout policies and the playouts are shared with ``agents.mc`` and
``agents.ismcts``: they live in ``agents.search``.
"""

from __future__ import annotations

import numpy as np

from agents.kinds import Parameter, Params, PolicyKind, param_indices
from agents.search import (
    NS_PER_MS,
    ROLLOUT_GREEDY,
    ROLLOUTS,
    TIME_CHECK_EVERY,
    TIMED_NODE_CAPACITY,
    card_count,
    monotonic_ns,
    new_worlds,
    play_out,
)
from hearts_sim._numba import njit
from hearts_sim.core.cards import N_CARDS, NO_CARD, card_bit, lowest_card, select_bit
from hearts_sim.core.rules import MAX_PLAYERS, RulesTuple
from hearts_sim.engine.hand import legal_moves, moon_total, play_card
from hearts_sim.engine.rng import random_below
from hearts_sim.engine.sampler import sample_world
from hearts_sim.engine.state import PHASE_PLAY

PARAMETERS = (
    Parameter("iterations", 40000, "UCT iterations per decision, split evenly across the worlds"),
    Parameter("worlds", 20, "deals of the unseen cards sampled per decision"),
    Parameter("c", 0.7, "UCT exploration constant (values are -score / moon total)"),
    Parameter("rollout", ROLLOUT_GREEDY, "playout policy below the tree", ROLLOUTS),
    Parameter("epsilon", 0.1, "playouts: chance of a uniformly random card instead of the policy's"),
    Parameter("ms", 0.0, "ms per decision (0: use iterations; a timed search is not reproducible)"),
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
    iterations = max(np.int64(params[P.iterations]), np.int64(1))
    n_worlds = max(np.int64(params[P.worlds]), np.int64(1))
    c = np.float64(params[P.c])
    rollout = np.int64(params[P.rollout])
    epsilon = np.float64(params[P.epsilon])
    ms = np.float64(params[P.ms])
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
            deadline = start + np.int64(ms * NS_PER_MS * (w + 1) / n_worlds)
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


KIND = PolicyKind(
    "pimc",
    "determinized search: UCT in each sampled world, averaged across worlds",
    PARAMETERS,
    play=pimc_play,
    passes_like="rule",
    searches=True,
)
