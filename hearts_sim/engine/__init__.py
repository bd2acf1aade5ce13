"""Layer 2, numba kernels: the rules of a hand on a record (``hand``), the record's layout
(``state``), seeding (``rng``) and the determinization sampler (``sampler``)."""
