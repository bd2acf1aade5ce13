"""Weights of the learned play model (agents/play_model.py), one per feature of MOVE_FEATURES.

Written by
``python experiments/train_play_model.py runs/hard_play0.npz --ridge 0.001``:
8,368 decisions (1,664 held out): log-likelihood of the chosen card -1.235 nats against -1.443
uniform; likeliest card the chosen one 48.0%, greedy's 42.0%.
"""

WEIGHTS: tuple[float, ...] = (
    -0.558223,  # lead_rank
    +0.094199,  # lead_surely_loses
    +0.780588,  # lead_higher_out
    +0.273529,  # lead_heart
    +0.869225,  # lead_spade_under_queen
    -0.755656,  # lead_queen
    -0.480799,  # lead_high_spade
    -3.879946,  # lead_suit_length
    -0.781517,  # follow_wins
    -1.628545,  # follow_wins_points
    +0.812008,  # follow_wins_last
    +2.572598,  # follow_duck_rank
    +1.034260,  # follow_win_rank
    -1.356429,  # follow_queen
    +0.387074,  # follow_high_spade
    +1.475688,  # discard_queen
    +1.089608,  # discard_heart_rank
    +0.190225,  # discard_heart
    +0.310456,  # discard_high_spade
    +1.544081,  # discard_rank
    +0.529109,  # discard_voids
    -2.360250,  # discard_suit_length
    +0.371942,  # shooting_rank
    -0.203435,  # defend_wins
    +0.045941,  # defend_gives_points
    -0.806780,  # points_taken_rank
)
