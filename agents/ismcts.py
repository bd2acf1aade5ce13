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

Worlds come from the uniform sampler, or (``belief`` > 0) from a pool of that many sampled
worlds weighted by how likely the other seats' plays are in each (``agents.belief``).

Time by need: a forced card is played at once; ``iterations`` is the budget of a quiet
decision, and up to ``stretch`` times that goes to a decision that matters (the queen of
spades still out and not in hand, a moon still possible) or that is close (the two most
visited cards within ``CLOSE`` of each other), never past the cost of ``STRETCH_CARDS`` card
plays (iterations early in a hand play more cards, so cost more). A search also stops as
soon as no other card can overtake the most visited one within the budget left, which changes
no decision under ``final=visits``. Every budget counts iterations, so a decision is
reproducible from its seed.

The card played is the most visited at the root (``final=visits``), or (``final=mean``) the one
with the lowest mean score among the cards with at least half the top visits: UCB spreads
its visits by the exploration term as much as by the scores, so among well-explored cards the
mean is the better estimate. In Chaslot et al.'s names for the final-move rules, ``visits`` is
the robust child and ``mean`` the max child restricted to well-visited cards. ``mean`` pays in small
searches (2,000 iterations), not at ``hard``'s budget (docs/hard.md).

With ``prior`` > 0 the root's card choice is biased, as in PUCT (AlphaZero's selection), by a
network's policy ``p`` (``prior_weights``: a shipped weights file, plain ``net``'s by default): a
card's UCB value gains ``prior * p(card) * sqrt(N) / (1 + n)``, ``N`` the root's visits and ``n``
the card's, a push toward the cards the network likes that fades as they are tried. It reads only
the deciding seat's information set (the network's observation is the same in every world), so it
costs one network evaluation a decision. The shipped weights are frozen into
``ismcts_play``, so the kind declares their digest, as ``net`` does its files'; a user's own files
(``$HEARTS_SIM_WEIGHTS``) never key, nor recompile, a table that seats ``ismcts``.

With ``cutoff`` > 0 a playout stops after that many tricks and the learned evaluation
(``agents.evaluation``) scores the world instead. The pass is searched (``agents.passing``,
``pass_rollouts`` playouts; 0: the rule agent's pass).

Playout policies and the clock are shared with ``agents.mc`` and ``agents.pimc`` (they live
in ``agents.search``); the node pool and the world are allocated inside the decision
kernel, which takes value types only.
"""

from __future__ import annotations

import numpy as np

from agents.belief import BELIEF_PARAMETERS, next_world, weighted_pool
from agents.evaluation import N_FEATURES, evaluate
from agents.kinds import Parameter, Params, PolicyKind, param_indices
from agents.net import DEFAULT_WEIGHTS, SHIPPED_DIGEST, SHIPPED_NAMES, play_prior
from agents.passing import PASS_ROLLOUTS, searched_pass_kernel
from agents.search import (
    MAX_EXPLORATION,
    MAX_ITERATIONS,
    NO_NODE,
    PLAYOUT_EPSILON,
    ROLLOUT_GREEDY,
    ROLLOUTS,
    TIME_CHECK_EVERY,
    TIMED_NODE_CAPACITY,
    TIMED_SEARCH,
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
    play_tricks,
    ucb,
)
from hearts_sim._numba import njit, njit_uncached
from hearts_sim.core.cards import N_CARDS, NO_CARD, QS_BIT, card_bit, lowest_card, select_bit
from hearts_sim.core.rules import MAX_PLAYERS, MOON_OFF, RulesTuple
from hearts_sim.engine.hand import hand_size, legal_moves, moon_total, play_card, point_holder
from hearts_sim.engine.rng import random_below
from hearts_sim.engine.sampler import new_sampler_scratch
from hearts_sim.engine.state import NO_SEAT, PHASE_PLAY

FINALS = ("visits", "mean")  # how the root card is chosen (``final``)
FINAL_VISITS, FINAL_MEAN = range(len(FINALS))
MAX_STRETCH = 100.0  # the card-play ceiling (STRETCH_CARDS) binds long before
MAX_CUTOFF = 52  # tricks: anything at or above the tricks left plays to the end
MAX_PRIOR = 100.0  # a prior this heavy already plays the network's card

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
    PLAYOUT_EPSILON,
    TIMED_SEARCH,
    *BELIEF_PARAMETERS,
    Parameter(
        "stretch",
        1.0,
        "up to this many times the iterations for a decision that matters",
        low=1,
        high=MAX_STRETCH,
    ),
    PASS_ROLLOUTS,
    Parameter(
        "cutoff",
        0,
        "playouts: tricks played before the learned evaluation (0: to the end)",
        low=0,
        high=MAX_CUTOFF,
    ),
    Parameter(
        "final",
        FINAL_VISITS,
        "the root card: the most visited, or the lowest mean score among those with half the top visits",
        FINALS,
    ),
    Parameter(
        "prior",
        0.0,
        "root: weight of a network's policy (prior_weights) as a PUCT prior (0: none)",
        low=0,
        high=MAX_PRIOR,
    ),
    Parameter(
        "prior_weights",
        SHIPPED_NAMES.index(DEFAULT_WEIGHTS),
        "the network of the prior: a shipped weights file (agents/weights/)",
        SHIPPED_NAMES,
    ),
)
P = param_indices(PARAMETERS)

# A stretched search costs at most this many card plays, an iteration counting the cards left in
# the hand plus ITERATION_OVERHEAD for drawing its world and walking the tree (fitted to the
# CPU time of iterations over a weighted pool, 3 hands on the development machine): about
# 35 ms there, whatever the stage of the hand.
STRETCH_CARDS = 1_200_000
ITERATION_OVERHEAD = 13
CLOSE = 0.8  # the runner-up has this share of the leader's visits or more: a close decision
EXTEND = 0.5  # a close decision gets this share of ``iterations`` more at a time, up to the stretch
CHECK_EVERY = 256  # iterations between looks at the root's visit counts
STAKE_QUEEN = 0.5  # share of the stretch given up front when the queen of spades is still out
STAKE_MOON = 0.5  # ... and when a moon is still possible

_ZERO = np.uint64(0)
_ONE = np.uint64(1)


@njit
def decision_stakes(state, rules: RulesTuple, seat: np.int64) -> float:
    """How much a decision matters before any search, 0 to 1: the queen of spades is still out
    and not in hand; every point taken so far lies in one pile (a moon is still possible)."""
    stakes = 0.0
    if not (state.played | state.hands[seat]) & QS_BIT:
        stakes += STAKE_QUEEN
    if rules.moon != MOON_OFF and point_holder(state)[0] != NO_SEAT:
        stakes += STAKE_MOON
    return stakes


@njit
def root_leaders(tree) -> tuple[np.int64, np.int64]:
    """Visits of the most and the second most visited root card."""
    best = np.int64(0)
    second = np.int64(0)
    child = tree[0].first_child
    while child != NO_NODE:
        visits = tree[child].visits
        if visits > best:
            second = best
            best = visits
        elif visits > second:
            second = visits
        child = tree[child].next
    return best, second


@njit
def root_card(tree, legal: np.uint64, seat: np.int64, final: np.int64) -> np.int64:
    """The card to play after the search (``final``: FINAL_*): the most visited root card (ties:
    the lower mean score), or the lowest mean score among the cards with half the top visits."""
    top, _ = root_leaders(tree)
    least = top if final == FINAL_VISITS else (top + 1) // 2
    best = lowest_card(legal)
    best_score = np.inf
    child = tree[0].first_child
    while child != NO_NODE:
        score = mean_score(tree, child, seat)
        if tree[child].visits >= least and score < best_score:
            best_score = score
            best = tree[child].card
        child = tree[child].next
    return best


@njit_uncached  # it freezes the shipped networks in (``prior``)
def ismcts_play(
    params: Params,
    state,
    rules: RulesTuple,
    seat: np.int64,
    legal: np.uint64,
    seed: np.uint64,
    values,
    weights,
) -> np.int64:
    """The root card (``final``) of an SO-ISMCTS search over ``seat``'s information set (two or
    more ``legal`` cards), with the root's statistics for ``seat``: ``values[card]`` the mean
    hand score of the playouts through the card, ``weights[card]`` their number."""
    prior = np.zeros(N_CARDS, dtype=np.float64)
    if params[P.prior] > 0:
        play_prior(np.int64(params[P.prior_weights]), state, rules, seat, legal, prior)
    tree = ismcts_search(params, state, rules, seat, legal, seed, prior)
    child = tree[0].first_child
    while child != NO_NODE:
        values[tree[child].card] = mean_score(tree, child, seat)
        weights[tree[child].card] = tree[child].visits
        child = tree[child].next
    return root_card(tree, legal, seat, np.int64(params[P.final]))


@njit
def ismcts_search(
    params: Params, state, rules: RulesTuple, seat: np.int64, legal: np.uint64, seed: np.uint64, prior
):
    """The tree of an SO-ISMCTS search over ``seat``'s information set (two or more ``legal``
    cards); ``prior[card]``, the probabilities of a policy, biases the root (``params[P.prior]``)."""
    iterations = budget_count(params[P.iterations], 1, MAX_ITERATIONS)
    c = np.float64(params[P.c])
    rollout = np.int64(params[P.rollout])
    epsilon = np.float64(params[P.epsilon])
    deadline = budget_deadline(np.float64(params[P.ms]))
    stretch = min(np.float64(params[P.stretch]), MAX_STRETCH) if params[P.stretch] > 1.0 else 1.0  # NaN: 1
    cutoff = budget_count(params[P.cutoff], np.int64(0), np.int64(MAX_CUTOFF))
    prior_weight = np.float64(params[P.prior])
    features = np.empty(N_FEATURES, dtype=np.float64)
    values = np.zeros(MAX_PLAYERS, dtype=np.float64)
    n = state.n_players
    scale = 1.0 / moon_total(rules)
    cards_left = hand_size(rules) * n - state.n_played  # every iteration plays them all
    affordable = STRETCH_CARDS // (cards_left + ITERATION_OVERHEAD)
    ceiling = max(iterations, min(np.int64(iterations * stretch), affordable))
    planned = iterations + np.int64((ceiling - iterations) * decision_stakes(state, rules, seat))
    capacity = TIMED_NODE_CAPACITY if deadline > 0 else ceiling + 2
    tree = new_tree(capacity)  # a node's ``cards``: the cards that have a child
    init_node(tree, 0, NO_CARD, _ZERO, n)
    n_nodes = 1
    path = np.empty(N_CARDS + 1, dtype=np.int64)
    # a record taken from an array does not keep the array alive: index ``worlds`` afresh
    # in every iteration, or numba frees it after its last use and the record dangles
    worlds = new_worlds(1)
    rng = seed
    rng, pool, cumulative, pool_size = weighted_pool(
        state, rules, seat, rng, params[P.belief], params[P.trust], params[P.shape], params[P.plays]
    )
    plan, card_rows = new_sampler_scratch()
    iteration = 0
    while True:
        if deadline > 0:
            if iteration % TIME_CHECK_EVERY == 0 and monotonic_ns() >= deadline:
                break
        else:
            if iteration % CHECK_EVERY == 0 or iteration >= planned:
                best, second = root_leaders(tree)
                left = planned - iteration
                # nothing left can change the card, nor make the decision close: stop here
                if best - second > left and second + left < CLOSE * best:
                    break
                if iteration >= planned:
                    if planned >= ceiling or second < CLOSE * best:
                        break
                    planned = min(planned + np.int64(EXTEND * iterations), ceiling)
        if n_nodes + 1 >= capacity:
            break
        iteration += 1
        work = worlds[0]
        rng = next_world(state, rules, seat, rng, pool, cumulative, pool_size, work, plan, card_rows)
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
                    if node == 0 and prior_weight > 0:  # PUCT's prior term, fading as the card is tried
                        share = prior_weight * prior[tree[child].card]
                        value += share * np.sqrt(np.float64(tree[0].visits)) / (1.0 + tree[child].visits)
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
        if cutoff > 0:
            rng = play_tricks(work, rules, rng, rollout, epsilon, cutoff)
            if work.phase == PHASE_PLAY:
                evaluate(work, rules, features, values)
                backup(tree, path, depth, values, n)
                continue
        rng = play_out(work, rules, rng, rollout, epsilon)
        backup(tree, path, depth, work.scores, n)
    return tree


KIND = PolicyKind(
    "ismcts",
    "single-observer information-set MCTS, a new world every iteration",
    PARAMETERS,
    scored_play=ismcts_play,
    scored_pass=searched_pass_kernel(PARAMETERS),
    searches=True,
    data=SHIPPED_DIGEST,  # ``prior``: the shipped networks are frozen into ismcts_play
)
