"""``ismcts``: single-observer information-set MCTS, a new world every iteration.

Design note. SO-ISMCTS (Cowling, Powley and Whitehouse 2012) grows one tree whose nodes
are the deciding seat's information sets: a node is the sequence of cards played since
the decision, which every seat sees, so whose turn it is at a node is the same in every
world. Each iteration draws a fresh deal of the unseen cards from the engine's one
determinization sampler, descends the tree choosing only among the cards legal in that
deal, expands one untried legal card, plays the hand out with a cheap policy and backs up
every seat's score. A child's UCB uses its *availability* count (how often it was legal
when its parent was visited) instead of the parent's visits, since a card that is rarely
legal in the sampled deals must not look under-explored. Opponent nodes pick the child
best for the seat to move there (lowest own mean score), as in the paper's max^n backup.

Playout policies and the clock are shared with ``agents.mc`` and ``agents.pimc`` (they live
in ``agents.search``); the node pool and the world are allocated inside the decision
kernel, which takes value types only.
"""

from __future__ import annotations

import numpy as np

from agents.kinds import Parameter, Params, PolicyKind, param_indices
from agents.search import (
    MAX_EXPLORATION,
    MAX_ITERATIONS,
    MAX_MS,
    NO_NODE,
    ROLLOUT_GREEDY,
    ROLLOUTS,
    TIME_CHECK_EVERY,
    TIMED_NODE_CAPACITY,
    add_child,
    backup,
    budget_count,
    budget_deadline,
    card_count,
    init_node,
    mean_score,
    monotonic_ns,
    new_tree,
    new_worlds,
    play_out,
    ucb,
)
from hearts_sim._numba import njit
from hearts_sim.core.cards import N_CARDS, NO_CARD, card_bit, lowest_card, select_bit
from hearts_sim.core.rules import RulesTuple
from hearts_sim.engine.hand import legal_moves, moon_total, play_card
from hearts_sim.engine.rng import random_below
from hearts_sim.engine.sampler import sample_world
from hearts_sim.engine.state import PHASE_PLAY

PARAMETERS = (
    Parameter(
        "iterations",
        15000,
        "iterations per decision, each in a freshly sampled deal",
        low=1,
        high=MAX_ITERATIONS,
    ),
    Parameter(
        "c", 0.7, "UCB exploration constant (values are -score / moon total)", low=0, high=MAX_EXPLORATION
    ),
    Parameter("rollout", ROLLOUT_GREEDY, "playout policy below the tree", ROLLOUTS),
    Parameter(
        "epsilon", 0.1, "playouts: chance of a uniformly random card instead of the policy's", low=0, high=1
    ),
    Parameter(
        "ms",
        0.0,
        "ms per decision (0: use iterations; a timed search is not reproducible)",
        low=0,
        high=MAX_MS,
    ),
)
P = param_indices(PARAMETERS)

_ZERO = np.uint64(0)
_ONE = np.uint64(1)


@njit
def ismcts_play(
    params: Params, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, seed: np.uint64
) -> np.int64:
    """The most visited root card of an SO-ISMCTS search over ``seat``'s information set."""
    if card_count(legal) == 1:
        return lowest_card(legal)
    iterations = budget_count(params[P.iterations], 1, MAX_ITERATIONS)
    c = np.float64(params[P.c])
    rollout = np.int64(params[P.rollout])
    epsilon = np.float64(params[P.epsilon])
    deadline = budget_deadline(np.float64(params[P.ms]))
    n = state.n_players
    scale = 1.0 / moon_total(rules)
    capacity = TIMED_NODE_CAPACITY if deadline > 0 else iterations + 2
    tree = new_tree(capacity)  # a node's ``cards``: the cards that have a child
    init_node(tree, 0, NO_CARD, _ZERO, n)
    n_nodes = 1
    path = np.empty(N_CARDS + 1, dtype=np.int64)
    # a record taken from an array does not keep the array alive: index ``worlds`` afresh
    # in every iteration, or numba frees it after its last use and the record dangles
    worlds = new_worlds(1)
    rng = seed
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
        work = worlds[0]
        rng = sample_world(state, rules, seat, rng, work)
        node = np.int64(0)
        depth = 0
        path[0] = 0
        while work.phase == PHASE_PLAY:
            here = legal_moves(work, rules)
            untried = here & ~tree[node].cards
            if untried != _ZERO:
                # expansion: a legal card with no child yet, at random
                rng, k = random_below(rng, card_count(untried))
                card = select_bit(untried, k)
                child = n_nodes
                n_nodes += 1
                add_child(tree, node, child, card, n)
                tree[node].cards |= card_bit(card)
                # every legal sibling was available at this visit too
                sibling = child
                while sibling != NO_NODE:
                    tree[sibling].available += 1
                    sibling = tree[sibling].next
                    while sibling != NO_NODE and not (here >> np.uint64(tree[sibling].card)) & _ONE:
                        sibling = tree[sibling].next
                play_card(work, rules, card)
                depth += 1
                path[depth] = child
                break
            # selection among the children legal in this world, by availability-UCB
            mover = work.to_play
            best_child = np.int64(NO_NODE)
            best_value = -np.inf
            child = tree[node].first_child
            while child != NO_NODE:
                if (here >> np.uint64(tree[child].card)) & _ONE:
                    tree[child].available += 1
                    value = ucb(tree, child, mover, np.log(np.float64(tree[child].available)), c, scale)
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
        rng = play_out(work, rules, rng, rollout, epsilon)
        backup(tree, path, depth, work.scores, n)
    # the most visited root card (ties: the lower mean score)
    best = lowest_card(legal)
    best_visits = np.int64(-1)
    best_score = np.inf
    child = tree[0].first_child
    while child != NO_NODE:
        visits = tree[child].visits
        score = mean_score(tree, child, seat)
        if visits > best_visits or (visits == best_visits and score < best_score):
            best_visits = visits
            best_score = score
            best = tree[child].card
        child = tree[child].next
    return best


KIND = PolicyKind(
    "ismcts",
    "single-observer information-set MCTS, a new world every iteration",
    PARAMETERS,
    play=ismcts_play,
    passes_like="rule",
    searches=True,
)
