"""Layer 1, the vocabulary every other layer speaks: cards as bits (``cards``) and the rules with
every variant switch (``rules``). Nothing here plays a hand."""
