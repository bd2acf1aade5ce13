"""``VectorEnv``: a batch of tables, one learner seat each, stepped in one numba call.

The learner holds one seat at every table; the other seats are any agent specs (levels
included), played inside numba by the agents' dispatcher. ``step`` applies the learner's
action at every table, lets the opponents reply, scores, starts the next hand where one
ended (auto-reset: the observation returned is the new hand's first) and observes, all in one
kernel call (``hearts_sim.env.kernels``). No Python runs per table.

    >>> import numpy as np
    >>> from hearts_sim.env import VectorEnv
    >>> env = VectorEnv(4, opponents="random", rules="standard")
    >>> obs, mask = env.reset(seed=1)
    >>> obs.shape, mask.shape
    ((4, 783), (4, 52))
    >>> rng = np.random.default_rng(0)
    >>> actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
    >>> obs, mask, reward, terminated, truncated, info = env.step(actions)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from agents.dispatch import KindSet
from agents.registry import AgentError, AgentSpec, parse_agent, seat_arrays
from hearts_sim.core.cards import N_CARDS, card_str
from hearts_sim.core.checks import counted, is_integer, shown
from hearts_sim.core.rules import Rules, resolve_rules
from hearts_sim.engine.encoding import OBS_SIZE
from hearts_sim.engine.rng import MAX_INDEX, SeedError, check_index, check_seed, derive_seed
from hearts_sim.engine.state import new_states
from hearts_sim.env.kernels import NO_TEACHER, REWARD_MODES, reset_tables, step_tables
from hearts_sim.game.hand_state import HandState
from hearts_sim.selfplay.simulate import available_memory, memory_size

Opponents = str | AgentSpec | Sequence[str | AgentSpec]
# tables in one VectorEnv: 11 to 15 KB each at a step's peak, measured (table_bytes: at most 17.2)
MAX_ENVS = 1 << 20
# a step's outputs for one table: observation, mask, reward, terminated, score, final observation,
# teacher's pick (``VectorEnv._new_outputs``)
_OUTPUT_BYTES = 4 * OBS_SIZE + N_CARDS + 4 + 1 + 8 + 4 * OBS_SIZE + 8


def table_bytes(copy: bool) -> int:
    """One table's memory at a step's peak, where hands end, at most: its state, the step's
    outputs (with ``copy``, the last step's too, still held), and the copy of the final
    observation that ``info["final_obs"]`` gives. 10.8 KB (17.2 with ``copy``); the peaks measured
    at 100,000 tables were 11.3 KB and 14.4 KB (numpy's zeros are paged in as written)."""
    return new_states(1).nbytes + 4 * 8 + _OUTPUT_BYTES * (2 if copy else 1) + 4 * OBS_SIZE


def check_room(n_envs: int, per_table: int, advice: str) -> None:
    """``ValueError`` in one line where ``n_envs`` tables of ``per_table`` bytes cannot fit in the
    memory this process can have (``available_memory``): 1,048,576 tables were numpy's
    ``MemoryError``, or the process killed mid-run, on a machine without the 15 GiB they need."""
    # in Python's integers: a numpy count's product wrapped (np.int32(10**6) tables came to 2 MB)
    need, memory = int(n_envs) * per_table, available_memory()
    if memory is not None and need > memory:
        raise ValueError(
            f"{counted(n_envs, 'table')} need about {memory_size(need)} at a step's peak, and "
            f"{memory_size(memory)} is available here: {advice}"
        )


class LearnerTable:
    """What every environment with a learner seat resolves once: rules, the learner's seat, the
    opponents in the other seats, the teacher, and their kernel arguments."""

    def __init__(
        self,
        opponents: Opponents,
        rules: Rules | str,
        seat: int,
        reward: str,
        teacher: str | AgentSpec | None,
    ):
        self.rules = resolve_rules(rules)
        n = self.rules.n_players
        if not is_integer(seat) or not 0 <= seat < n:
            raise ValueError(f"seat={shown(seat)}: choose a seat 0..{n - 1} for {n} players")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward={shown(reward)}: choose one of {', '.join(REWARD_MODES)}")
        self.seat = int(seat)
        self.reward_mode = REWARD_MODES.index(reward)
        if isinstance(opponents, (str, bytes)) or not isinstance(opponents, (Sequence, np.ndarray)):
            try:  # one for all: a spec, an agent
                others = [parse_agent(opponents)] * (n - 1)
            except AgentError:
                if isinstance(opponents, (str, AgentSpec)):
                    raise  # an unknown spec: its own message
                raise ValueError(
                    f"opponents={shown(opponents)}: name an agent spec for every other seat, or a list "
                    f"of {n - 1}, one per other seat"
                ) from None
        else:
            others = [parse_agent(spec) for spec in opponents]
            if len(others) != n - 1:
                raise ValueError(
                    f"{len(others)} opponents given for the {n - 1} other seats: name one spec per other "
                    f"seat, or one spec for all"
                )
        self.opponents = others
        self.teacher = parse_agent(teacher) if teacher is not None else None
        for agent in [*others, *([self.teacher] if self.teacher else [])]:
            if agent.external:
                raise ValueError(
                    f"{agent}: the environments play opponents and teachers inside numba; an external "
                    f"agent (a Python object, py: or exec:) cannot sit there"
                )
        seating = others[: self.seat] + [others[0]] + others[self.seat :]  # the learner's slot is unread
        kinds = {kind.name for agent in others for kind in agent.kinds()}
        if self.teacher is not None:
            kinds |= {kind.name for kind in self.teacher.kinds()}
        self.kinds = KindSet.of(kinds)
        self.policies = seat_arrays([seating, [self.teacher or others[0]] * n])
        if self.teacher is None:
            for codes in (self.policies[0], self.policies[2]):
                codes[1] = NO_TEACHER


def action_card(action: object) -> int:
    """One learner's action as a Python int: an integer, or a 0-d integer array (``np.argmax``'s);
    ``ValueError`` for anything else (1.5 is not card 1, nor is True)."""
    if isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        action = action.item()
    if not is_integer(action):
        raise ValueError(f"an action is a card index 0..{N_CARDS - 1}, not {shown(action)}")
    return int(action)


def action_text(card: int) -> str:
    """An action for a message: the card's name, or the index and what it should have been."""
    return card_str(card) if 0 <= card < N_CARDS else f"{card} (not a card index 0..{N_CARDS - 1})"


class VectorEnv:
    """``n_envs`` tables of Hearts with the learner in seat ``seat`` and ``opponents`` elsewhere.

    ``opponents``: one agent spec for every other seat, or one per other seat (in seat order).
    ``reward``: ``"hand"`` gives minus the hand's score when it ends; ``"trick"`` gives minus the
    points as the learner takes them, then the rest of minus the score at the end (the moon
    and bonuses), so a hand's rewards add up to minus its score either way. ``teacher``: an
    agent spec whose choice for the learner's position is returned as ``info["teacher_action"]``
    (its pass one card at a time, lowest first), for imitation learning. ``copy=False``
    returns the environment's own buffers, overwritten by the next step (faster).

    Actions are card indices (``hearts_sim.core.cards``); while passing, each step picks one
    card and the pass is made once ``pass_count`` are picked. An illegal action raises
    ``ValueError`` before any table moves.
    """

    observation_size = OBS_SIZE
    n_actions = N_CARDS

    def __init__(
        self,
        n_envs: int,
        opponents: Opponents = "random",
        rules: Rules | str = "standard",
        *,
        seat: int = 0,
        reward: str = "hand",
        teacher: str | AgentSpec | None = None,
        autoreset: bool = True,
        copy: bool = True,
    ):
        if not is_integer(n_envs) or not 0 < n_envs <= MAX_ENVS:
            raise ValueError(f"n_envs must be a whole number in 1 .. {MAX_ENVS:,}, not {shown(n_envs)}")
        self.table = LearnerTable(opponents, rules, seat, reward, teacher)
        self.rules = self.table.rules
        self.seat = self.table.seat
        for name, value in (("autoreset", autoreset), ("copy", copy)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, not {shown(value)}")
        if not autoreset and n_envs > 1:  # hands end at different steps: one table would hold the rest
            raise ValueError(
                "autoreset=False is for one table (SeatEnv's): with several, a table whose hand ended "
                "first could take no action, and reset() restarts them all"
            )
        advice = "use fewer tables" + (", or copy=False" if copy else "")
        check_room(n_envs, table_bytes(bool(copy)), advice)
        self.n_envs = int(n_envs)
        self.autoreset = bool(autoreset)
        self.copy = bool(copy)
        n = self.n_envs
        self._env_seeds = np.zeros(n, dtype=np.uint64)
        self._episodes = np.zeros(n, dtype=np.int64)
        self._states = new_states(n)
        self._pending = np.zeros(n, dtype=np.uint64)
        self._rewarded = np.zeros(n, dtype=np.int64)
        self._outputs = self._new_outputs()
        self._rules_tuple = tuple(self.rules.to_tuple())  # the kernels rebuild KernelRules
        self._never = np.zeros(n, dtype=np.bool_)  # truncated (copy=False): every hand ends
        self._never.flags.writeable = False
        self._master: int | None = None  # the seed of the last reset
        self._group = 1  # and its group
        self._ready = False
        self._closed = False

    def _new_outputs(self) -> tuple[np.ndarray, ...]:
        n = self.n_envs
        return (
            np.zeros((n, OBS_SIZE), dtype=np.float32),  # observations
            np.zeros((n, N_CARDS), dtype=np.int8),  # action masks
            np.zeros(n, dtype=np.float32),  # rewards
            np.zeros(n, dtype=np.bool_),  # terminated
            np.zeros(n, dtype=np.int64),  # the learner's score, where terminated
            np.zeros((n, OBS_SIZE), dtype=np.float32),  # final observations, where terminated
            np.full(n, -1, dtype=np.int64),  # teacher actions
        )

    def _kernel_prefix(self) -> tuple[Any, ...]:
        return (self.table.kinds, self._rules_tuple, self.seat, self.table.policies)

    @property
    def _tables(self) -> tuple[np.ndarray, ...]:
        return (self._env_seeds, self._episodes, self._states, self._pending, self._rewarded)

    def reset(
        self, seed: int | None = None, episode: int | None = None, *, group: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every table starts episode ``episode``: table ``i``'s episode ``k`` deals
        ``HandState.deal(rules, seed=derive_seed(seed, i // group), hand=k)``. Returns
        (observations, masks). ``seed`` defaults to the last reset's (0 on the first), and
        ``episode`` to 0 with a seed given, else to the episode after the furthest any table has
        reached: ``reset()`` moves on to new hands, as Gymnasium's ``reset()`` does.

        ``group=K`` seats the tables in groups of ``K`` neighbours that are dealt the same hands,
        episode after episode, with the same random streams for the opponents: what differs
        between them is the learner's play (a group baseline for policy gradients, as duplicate
        play cancels card luck). ``group`` defaults to the last reset's too (1 on the first: every
        table its own deals), so ``reset()`` keeps a group baseline (until 2026-12-07 it fell back
        to 1 without a word)."""
        self._check_open()
        if seed is None:
            seed, moved_on = self._master or 0, self._master is not None
        else:
            seed, moved_on = check_seed(seed), False
        if episode is None:
            episode = int(self._episodes.max()) + 1 if moved_on else 0
            if episode > MAX_INDEX:  # the tables stepped past the last episode (autoreset)
                raise SeedError(
                    f"the tables have played every episode of seed {seed} (0 .. 2**62): "
                    "reset with another seed"
                )
        master, episode = np.uint64(seed), check_index(episode, "episode")
        group = self._group if group is None else group
        if not is_integer(group) or not 0 < group <= self.n_envs:
            raise ValueError(
                f"group must be a whole number in 1 .. {self.n_envs:,} (n_envs), not {shown(group)}"
            )
        self._env_seeds[:] = [derive_seed(master, i // int(group)) for i in range(self.n_envs)]
        self._episodes[:] = episode
        outputs = self._new_outputs() if self.copy else self._outputs
        reset_tables(*self._kernel_prefix(), self._tables, outputs)
        self._outputs = outputs
        self._master, self._group, self._ready = int(master), int(group), True
        return outputs[0], outputs[1]

    def step(
        self, actions: np.ndarray | Sequence[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """(observations, masks, rewards, terminated, truncated, info) after the learner's ``actions``.

        ``info``: ``score`` (the learner's hand score, where terminated), ``final_obs`` (the
        terminal observations of the tables that ended, in table order), and with a teacher
        ``teacher_action``. Truncation never happens: every hand ends."""
        self._check_ready("step()")
        array = np.asarray(actions)
        if array.shape != (self.n_envs,) or array.dtype.kind not in "iu":
            raise ValueError(
                f"actions must be {self.n_envs} integer card indices, not {array.dtype} {array.shape}"
            )
        outputs = self._new_outputs() if self.copy else self._outputs
        t = self.table
        illegal = step_tables(
            *self._kernel_prefix(),
            t.reward_mode,
            self.autoreset,
            # the one layout the kernel is compiled for: a strided or read-only array (a column
            # of a 2-D array, JAX's) was a new signature, compiled afresh for 5 to 7 s
            np.require(array, np.int64, ["C_CONTIGUOUS", "WRITEABLE"]),
            self._tables,
            outputs,
        )
        if illegal >= 0:
            self._refuse(int(illegal), int(array[illegal]))
        self._outputs = outputs
        observations, masks, rewards, terminated, scores, final_observations, teacher_actions = outputs
        info = {"score": scores, "final_obs": final_observations[terminated]}
        if t.teacher is not None:
            info["teacher_action"] = teacher_actions
        truncated = np.zeros(self.n_envs, dtype=np.bool_) if self.copy else self._never
        return observations, masks, rewards, terminated, truncated, info

    def close(self) -> None:
        """Let the tables go (their memory with them); any later call but ``close`` is refused."""
        self._closed, self._ready = True, False
        empty = [np.empty(0, a.dtype) for a in self._tables]  # new arrays: a slice would hold the tables
        self._env_seeds, self._episodes, self._states, self._pending, self._rewarded = empty
        self._outputs = ()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the environment is closed: make a new one")

    def _check_ready(self, what: str) -> None:
        """Open and reset: before the first ``reset`` the tables are zeros, which read as a hand
        (``pass none``, no cards) where they were shown."""
        self._check_open()
        if not self._ready:
            raise RuntimeError(f"call reset() before {what}")

    def _refuse(self, i: int, card: int) -> NoReturn:
        """The ``ValueError`` for table ``i``'s illegal ``card`` (no table has moved)."""
        if not self._outputs[1][i].any():
            raise ValueError(f"table {i}: the hand is over; call reset()")
        raise ValueError(f"table {i}: {action_text(card)} is not legal now; legal: {self.legal_cards(i)}")

    def _table(self, i: object) -> int:
        """``i`` as a table index 0 .. n_envs-1; ``ValueError`` otherwise (-1 is not the last)."""
        self._check_ready("looking at a table")
        if not is_integer(i) or not 0 <= i < self.n_envs:
            raise ValueError(f"table {shown(i)}: choose 0 .. {self.n_envs - 1} ({self.n_envs} tables)")
        return int(i)

    def legal_cards(self, i: int) -> str:
        """Table ``i``'s legal cards, written out (for messages and notebooks)."""
        i = self._table(i)
        return " ".join(card_str(int(c)) for c in np.flatnonzero(self._outputs[1][i])) or "none"

    def hand_state(self, i: int) -> HandState:
        """Table ``i`` as a ``HandState`` (a view: it changes as the table is stepped), to print or
        inspect it; do not step it."""
        i = self._table(i)
        return HandState(self.rules, self._states[i : i + 1])

    @property
    def teacher_actions(self) -> np.ndarray | None:
        """The teacher's pick for every table's current position, after ``reset`` as after each
        ``step`` (whose ``info["teacher_action"]`` holds the same; -1 where a hand is over and
        not reset); None without a teacher. With ``copy=False`` the environment's own buffer."""
        if self.table.teacher is None:
            return None
        self._check_ready("asking for the teacher's actions")
        return self._outputs[6].copy() if self.copy else self._outputs[6]

    def episodes(self) -> np.ndarray:
        """The episode each table is playing (its hand index within its seed)."""
        self._check_ready("asking for the episodes")
        return self._episodes.copy()

    @property
    def seed(self) -> int | None:
        """The seed of the last ``reset`` (None before the first)."""
        return self._master
