"""``hearts_sim.analysis``: the analysis of per-hand records by its short name, the module
``hearts_sim.studies.analysis`` itself (``import hearts_sim.analysis as an`` and ``from
hearts_sim import analysis as an`` give that one module; the first was ModuleNotFoundError)."""

import sys

from hearts_sim.studies.analysis import *  # noqa: F403  (its names, for type checkers and readers)

sys.modules[__name__] = sys.modules["hearts_sim.studies.analysis"]
