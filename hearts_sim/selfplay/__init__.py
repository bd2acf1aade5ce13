"""Layer 5, above ``agents``: the batched self-play loops that bind the agents' dispatcher
(``loops``), the record schemas and Parquet layout (``records``), ``simulate`` and the
invariants every recorded hand satisfies."""
