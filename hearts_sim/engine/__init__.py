"""numba kernels: the rules of a hand (``hand``), seeding (``rng``) and the state layout
(``state``). The batched self-play loops that drive them are ``hearts_sim.selfplay``."""
