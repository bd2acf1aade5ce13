"""Layer 6, what researchers run on top of self-play: duplicate tournaments and their statistics,
clusters, tuning, level calibration, moon-shot analysis and reports, the speed benchmark."""
