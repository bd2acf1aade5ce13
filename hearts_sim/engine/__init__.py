"""numba kernels: rules of a hand (``hand``), seeding (``rng``), state layout (``state``)
and the batched self-play loops (``selfplay``)."""
