"""Weights of the learned evaluation (agents/evaluation.py), one per ``FEATURES`` entry.

Written by ``python experiments/train_evaluation.py --hands 1000000 --rules standard
--rollout greedy --epsilon 0.086 --alpha 1.0 --seed 0``:
held-out R^2 0.476 over 400,000 rows.
"""

WEIGHTS = (
    +0.368159,  # bias
    +0.743532,  # own_points
    -0.217080,  # others_points
    -0.158294,  # unplayed_points
    -0.080403,  # holds_point_spade
    -0.085579,  # hearts_held
    +0.070444,  # high_hearts_held
    -0.194696,  # high_cards_held
    +0.780443,  # high_share
    +0.021975,  # guards_exposed
    -0.053358,  # low_spades_exposed
    -0.188191,  # voids
    +0.026651,  # on_lead
    +0.043934,  # moon_open
    -0.337571,  # moon_points
    -0.075872,  # tricks_left
)
