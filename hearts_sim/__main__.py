"""``python -m hearts_sim`` is ``hearts-sim``."""

import sys

from hearts_sim.apps.cli import main

sys.exit(main())
