"""Weights of the learned shape model (agents/shape.py): ``FEATURES`` times the length, then
times being void.

Written by ``python experiments/train_shape.py fit runs/shape_hard_a.npz runs/shape_hard_b.npz --per-hand 20
--pool 100 --trust 0.449 --l2 0.0001 --seed 0``: 24,800 positions;
held-out log P(true world) -3.3289 against -4.4512 with the surprises alone
(uniform: -4.6151).
"""

WEIGHTS: tuple[float, ...] = (
    -0.000000,  # bias
    -0.000000,  # hearts
    -0.000000,  # spades
    -0.000000,  # clubs
    -0.460398,  # passed_to_me
    +0.299565,  # passed_by_me
    -0.278451,  # led
    -0.628675,  # led_high
    +0.153848,  # led_early
    -0.780429,  # discarded
    +0.362949,  # discarded_high
    -0.197969,  # followed_over
    -0.030043,  # followed_under
    -0.000000,  # progress
    +0.000000,  # other_voids
    +0.000000,  # own
    +0.000000,  # hidden
    +2.774628,  # bias (void)
    -4.336078,  # hearts (void)
    -0.265515,  # spades (void)
    +0.103288,  # clubs (void)
    +0.109291,  # passed_to_me (void)
    +0.000000,  # passed_by_me (void)
    -1.225957,  # led (void)
    -0.747296,  # led_high (void)
    +0.582769,  # led_early (void)
    -0.571011,  # discarded (void)
    -0.150012,  # discarded_high (void)
    -1.346632,  # followed_over (void)
    -1.394207,  # followed_under (void)
    +4.574439,  # progress (void)
    +0.362807,  # other_voids (void)
    -3.953044,  # own (void)
    -4.058649,  # hidden (void)
)
