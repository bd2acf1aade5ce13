"""Weights of the learned playout policy (agents/playout_model.py), one per feature.

Written by
``python experiments/train_playout.py --teacher hard --rules standard --hands 200 --seed 0 --ridge 0.001``
(0 s):
8,368 decisions (1,676 held out): log-likelihood of the teacher's card -1.160 nats against
-1.405 uniform; likeliest card the teacher's 52.0%, greedy's 44.9%.
"""

import numpy as np

WEIGHTS = np.array(
    [
        -0.465490,  # lead_rank
        +0.169456,  # lead_surely_loses
        +0.766522,  # lead_higher_out
        +0.258582,  # lead_heart
        +0.831176,  # lead_spade_under_queen
        -0.657742,  # lead_queen
        -0.410899,  # lead_high_spade
        -3.759455,  # lead_suit_length
        -0.841064,  # follow_wins
        -1.530955,  # follow_wins_points
        +0.817519,  # follow_wins_last
        +2.455070,  # follow_duck_rank
        +1.037668,  # follow_win_rank
        -1.268625,  # follow_queen
        +0.142844,  # follow_high_spade
        +1.383737,  # discard_queen
        +1.133943,  # discard_heart_rank
        +0.152955,  # discard_heart
        +0.391729,  # discard_high_spade
        +1.454660,  # discard_rank
        +0.488580,  # discard_voids
        -2.401702,  # discard_suit_length
        +0.426235,  # shooting_rank
        -0.229639,  # defend_wins
        -0.239159,  # defend_gives_points
        -0.761263,  # points_taken_rank
    ]
)
