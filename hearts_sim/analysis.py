"""``hearts_sim.analysis``: the analysis of per-hand records (``hearts_sim.studies.analysis``) by
its short name, for ``import hearts_sim.analysis as an`` (it was ModuleNotFoundError) as for
``from hearts_sim import analysis as an``. Every name is that module's own object; a name not
exported (``_frame``) is looked up there too."""

from typing import Any

from hearts_sim.studies import analysis as _analysis
from hearts_sim.studies.analysis import *  # noqa: F403


def __getattr__(name: str) -> Any:
    return getattr(_analysis, name)


def __dir__() -> list[str]:
    return dir(_analysis)
