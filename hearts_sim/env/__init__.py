"""Learning environments: PettingZoo (``aec_env``), Gymnasium (``SeatEnv``, ``GymVectorEnv``) and a
batched numba ``VectorEnv``, all on the engine's kernels and one observation encoding
(``hearts_sim.engine.encoding``); and ``PolicyAgent``, a policy over that observation seated at
the tables (``observation_vector`` encodes a table's ``Observation`` as the environments do).

``VectorEnv`` needs nothing beyond the toolkit; the PettingZoo and Gymnasium classes need the
optional extra ``learn`` (``pip install "hearts-sim[learn]"``; without it a ``MissingExtra``
error says so). Names are loaded on first use, so importing this package never imports either
library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hearts_sim.core.errors import MissingExtra

_EXPORTS = {
    "VectorEnv": "hearts_sim.env.vector",
    "SeatEnv": "hearts_sim.env.gym",
    "GymVectorEnv": "hearts_sim.env.gym",
    "aec_env": "hearts_sim.env.aec",
    "HeartsAEC": "hearts_sim.env.aec",
    "OBS_SIZE": "hearts_sim.engine.encoding",
    "OBSERVATION_FIELDS": "hearts_sim.engine.encoding",
    "encode_observation": "hearts_sim.engine.encoding",
    "PolicyAgent": "hearts_sim.env.policy",
    "observation_vector": "hearts_sim.env.policy",
}
# the optional libraries each module imports (the PettingZoo environment uses Gymnasium's spaces)
_NEEDS = {"hearts_sim.env.gym": ("gymnasium",), "hearts_sim.env.aec": ("gymnasium", "pettingzoo")}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from hearts_sim.engine.encoding import OBS_SIZE, OBSERVATION_FIELDS, encode_observation  # noqa: F401
    from hearts_sim.env.aec import HeartsAEC, aec_env  # noqa: F401
    from hearts_sim.env.gym import GymVectorEnv, SeatEnv  # noqa: F401
    from hearts_sim.env.policy import PolicyAgent, observation_vector  # noqa: F401
    from hearts_sim.env.vector import VectorEnv  # noqa: F401


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hearts_sim.env' has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as error:
        library = error.name
        if library not in _NEEDS.get(module, ()):
            raise
        raise MissingExtra(f"hearts_sim.env.{name}", library, "learn") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
