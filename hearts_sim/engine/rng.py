"""Counter-based seeding and a tiny inline generator (splitmix64) for kernels.

Every hand's seed is ``derive_seed(master, hand_index)``; every random draw inside a
hand comes from a stream derived from (hand seed, purpose), so results do not depend
on batch size, chunking or thread count. ``np.random`` in a hot kernel is several
times slower than these few multiplies.
"""

from __future__ import annotations

import numpy as np

from hearts_sim._numba import njit
from hearts_sim.core.checks import is_integer, shown
from hearts_sim.core.errors import InputError

GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / the golden ratio: SplitMix64's odd step
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)

MAX_SEED = 2**64 - 1  # seeds are uint64: every value of 0 .. 2**64-1, nothing else
MAX_INDEX = 2**62  # hand, game and deal indices (int64 counters, with room for a run's offsets)
MAX_DEALS = 10**12  # deals (or games) of one run: beyond any machine, and x 120 seatings < MAX_INDEX


class SeedError(InputError):
    """A seed or index that is not an integer in its range; the message names it."""


def check_seed(value: object, name: str = "seed") -> int:
    """``value`` as a seed if it is an integer in 0 .. 2**64-1 (no bool, no float: 1.5 is not a
    seed, and 2**64 would silently wrap)."""
    return _check_integer(value, name, MAX_SEED, "2**64-1")


def check_index(value: object, name: str = "hand") -> int:
    """``value`` as a hand, game or deal index: an integer in 0 .. 2**62."""
    return _check_integer(value, name, MAX_INDEX, "2**62")


def _check_integer(value: object, name: str, high: int, high_text: str) -> int:
    if not is_integer(value) or not 0 <= value <= high:
        raise SeedError(f"{name}={shown(value)} is not valid: choose an integer in 0 .. {high_text}")
    return int(value)


# Stream purposes within a hand (the second argument of derive_seed).
STREAM_DEAL = 1
STREAM_PASS_DIRECTION = 2
STREAM_DECISION = 3  # + seat: the seat's decision streams (engine.hand.decision_seed)


@njit
def mix64(x: np.uint64) -> np.uint64:
    """splitmix64's finaliser: a bijection that scrambles every input bit into every output bit."""
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


@njit
def derive_seed(seed: np.uint64, counter: np.int64) -> np.uint64:
    """The seed of child ``counter`` of ``seed`` (hand of a run, hand of a game, stream of a hand).
    ``seed`` is taken as unsigned whatever its type: numba types a Python int below 2**63 as int64,
    and ``derive_seed(9, 0)`` mixed it signed (1321829707580529426, not table 0's seed
    5683797231007435960 of ``derive_seed(np.uint64(9), 0)``)."""
    return mix64(np.uint64(seed) ^ mix64(np.uint64(counter) * GOLDEN_GAMMA + GOLDEN_GAMMA))


@njit
def next_u64(state: np.uint64) -> tuple[np.uint64, np.uint64]:
    """One splitmix64 step: returns (new state, 64 random bits)."""
    state += GOLDEN_GAMMA
    return state, mix64(state)


@njit
def uniform_below(bits: np.uint64, n: np.int64) -> np.int64:
    """An integer in [0, n) from the top 32 of 64 random bits (multiply-shift, bias < 2**-26)."""
    return np.int64(((bits >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit
def random_below(state: np.uint64, n: np.int64) -> tuple[np.uint64, np.int64]:
    """(new state, uniform integer in [0, n)) by multiply-shift (bias < 2**-26 for n <= 52)."""
    state, bits = next_u64(state)
    return state, uniform_below(bits, n)


@njit
def random_unit(state: np.uint64) -> tuple[np.uint64, np.float64]:
    """(new state, uniform float in [0, 1)) from the top 53 bits."""
    state, bits = next_u64(state)
    return state, np.float64(bits >> np.uint64(11)) * (1.0 / 9007199254740992.0)
