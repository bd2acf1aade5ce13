"""Gymnasium environments: ``SeatEnv`` (one table, the learner in one seat) and ``GymVectorEnv``
(``VectorEnv`` behind Gymnasium's vector API). Both run the opponents inside numba.

Observations are ``{"observation": float32[OBS_SIZE], "action_mask": int8[52]}`` (PettingZoo's
convention for masked actions, shared with ``aec_env``); an action is a card index.

    >>> from hearts_sim.env import SeatEnv
    >>> env = SeatEnv(opponents="normal", rules="standard")
    >>> obs, info = env.reset(seed=3)
    >>> obs["observation"].shape, int(obs["action_mask"].sum())
    ((783,), 13)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.registry import AgentSpec
from hearts_sim.core.cards import N_CARDS
from hearts_sim.core.checks import is_integer, shown
from hearts_sim.core.errors import MissingExtra
from hearts_sim.core.rules import Rules
from hearts_sim.engine.encoding import OBS_SIZE
from hearts_sim.engine.rng import check_seed
from hearts_sim.env.vector import MAX_ENVS, Opponents, VectorEnv, action_card, check_room, table_bytes

try:  # the optional extra learn: importing this module without it names it (MissingExtra)
    import gymnasium
    from gymnasium import logger, spaces
    from gymnasium.vector import AutoresetMode
    from gymnasium.vector.utils import batch_space
except ModuleNotFoundError as missing:
    raise MissingExtra("hearts_sim.env.gym", missing.name or "gymnasium", "learn") from None


def observation_space() -> spaces.Dict:
    """The space of one seat's observation: the encoding (every value in [0, 1]) and the mask."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, shape=(OBS_SIZE,), dtype=np.float32),
            "action_mask": spaces.Box(0, 1, shape=(N_CARDS,), dtype=np.int8),
        }
    )


# what Gymnasium's batched observation space holds per table: low and high bounds (float32 for the
# encoding, int8 for the mask) and the flags of which are finite
SPACE_BYTES = 2 * (4 + 1) * OBS_SIZE + 2 * (1 + 1) * N_CARDS

RENDER_MODES = ("ansi", "human")


def check_render_mode(render_mode: str | None) -> str | None:
    """``render_mode`` if it is None or one of ``RENDER_MODES``; ``ValueError`` otherwise."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode={shown(render_mode)}: choose one of {', '.join(RENDER_MODES)}")
    return render_mode


def rendered(render_mode: str | None, text: Callable[[], Any]) -> Any:
    """Gymnasium's convention for ``render()``: ``"ansi"`` returns the ``text()``, ``"human"``
    prints it and returns None, and without a render mode a warning says how to choose one."""
    if render_mode is None:
        logger.warn("render() without a render_mode: make the environment with render_mode='ansi' or 'human'")
        return None
    view = text()
    if render_mode == "human":
        print("\n\n".join(view) if isinstance(view, tuple) else view)  # a vector's tables, apart
        return None
    return view


class SeatEnv(gymnasium.Env[dict[str, np.ndarray], np.int64]):
    """One hand of Hearts per episode, the learner in ``seat``, ``opponents`` (any agent spec, or
    one per other seat) in the others; ``reward`` and ``teacher`` as in ``VectorEnv``.

    ``reset(seed=S)`` deals hand 0 of ``S`` (``HandState.deal(rules, seed=derive_seed(S, 0),
    hand=0)``: the same as table 0 of ``VectorEnv.reset(S)``), and each later ``reset()`` the
    next hand of that seed. ``info``: ``score`` at the end, and ``teacher_action`` with a teacher.

    An illegal card ends the episode with a reward of minus the moon total (26, or 43 under Black
    Maria: no hand scores worse; with ``reward="trick"``, on top of the rewards already paid) and
    ``info["illegal"]``, the convention of PettingZoo's classic games for learners that ignore
    the mask; ``on_illegal="raise"`` raises ``ValueError`` instead. An
    action that is no card (outside ``Discrete(52)``: -1, 52, 1.5) is a ``ValueError`` either way."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}  # fps: Gymnasium warns without one

    def __init__(
        self,
        opponents: Opponents = "normal",
        rules: Rules | str = "standard",
        *,
        seat: int = 0,
        reward: str = "hand",
        teacher: str | AgentSpec | None = None,
        on_illegal: str = "end",
        render_mode: str | None = None,
    ):
        if on_illegal not in ("end", "raise"):
            raise ValueError(f"on_illegal={shown(on_illegal)}: choose end or raise")
        self.render_mode = check_render_mode(render_mode)
        self._env = VectorEnv(
            1, opponents, rules, seat=seat, reward=reward, teacher=teacher, autoreset=False, copy=False
        )
        self.rules = self._env.rules
        self.on_illegal = on_illegal
        self.observation_space = observation_space()  # type: ignore[assignment]
        self.action_space = spaces.Discrete(N_CARDS)
        self._master: int | None = None
        self._episode = 0
        self._done = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        seed = check_seed(seed) if seed is not None else None  # before Gymnasium's own, less clear check
        super().reset(seed=seed)
        if seed is not None or self._master is None:
            # no seed on the first reset: one from Gymnasium's entropy-seeded generator
            self._master = seed if seed is not None else int(self.np_random.integers(2**63))
            self._episode = 0
        else:
            self._episode += 1
        observations, masks = self._env.reset(self._master, episode=self._episode)
        self._done = False
        if self.render_mode == "human":
            self.render()
        return self._observation(observations[0], masks[0]), self._info(masks[0])

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        self._env._check_ready("step()")  # not "the hand is over" before the first hand
        if self._done:
            raise RuntimeError("the hand is over: call reset() before step()")
        observations, masks = self._env._outputs[0], self._env._outputs[1]
        card = action_card(action)
        if not (0 <= card < N_CARDS and masks[0, card]):
            if self.on_illegal == "end" and 0 <= card < N_CARDS:  # not a card: refused, as elsewhere
                self._done = True
                penalty = -float(self.rules.moon_total)
                # the position it failed in, with nothing left to pick (as action_masks() says)
                final = self._observation(observations[0], np.zeros_like(masks[0]))
                return final, penalty, True, False, {"illegal": True}
            self._env._refuse(0, card)
        observations, masks, rewards, terminated, _, info = self._env.step(np.array([card], dtype=np.int64))
        self._done = bool(terminated[0])
        extra = {"score": int(info["score"][0])} if self._done else {}
        if self.render_mode == "human":
            self.render()
        return (
            self._observation(observations[0], masks[0]),
            float(rewards[0]),
            self._done,
            False,
            {**self._info(masks[0]), **extra},
        )

    def action_masks(self) -> np.ndarray:
        """The cards the learner may pick now, as booleans (the observation's ``action_mask``;
        all False once the hand is over): the method sb3-contrib's ``MaskablePPO`` asks an
        environment for."""
        self._env._check_ready("action_masks()")  # all False before the first reset, as if over
        return self._env._outputs[1][0].astype(bool) & (not self._done)

    def close(self) -> None:
        self._env.close()

    def _observation(self, observation: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": observation.copy(), "action_mask": mask.copy()}

    def _info(self, mask: np.ndarray) -> dict[str, Any]:
        info: dict[str, Any] = {}
        teacher_actions = self._env.teacher_actions
        if teacher_actions is not None and not self._done:
            info["teacher_action"] = int(teacher_actions[0])
        return info

    def render(self) -> str | None:  # type: ignore[override]
        """The table as text (every hand shown: a debugging view, not the learner's): returned
        under ``render_mode="ansi"``, printed under ``"human"``."""
        return rendered(self.render_mode, lambda: str(self._env.hand_state(0)))


class GymVectorEnv(gymnasium.vector.VectorEnv):  # type: ignore[type-arg]
    """``VectorEnv`` under Gymnasium's vector API: dict observations (batched), same-step
    auto-reset (``info["final_obs"]``, an object array with the last observation of each table
    that ended, and ``info["final_info"]``, ``{"score": ..., "_score": ...}``, each with its
    ``_final_obs`` / ``_final_info`` mask, as Gymnasium's ``SyncVectorEnv`` gives them),
    ``info["score"]`` where a hand ended, and with a teacher ``info["teacher_action"]`` after
    ``reset`` and every step.

    ``reset(seed=S)`` starts episode 0 of every table (table ``i`` plays from ``derive_seed(S,
    i)``); a later ``reset()`` the episode after the furthest any table has reached, so a run is
    reproducible from its first seed; a first ``reset()`` without one draws it from the OS."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": list(RENDER_MODES)}

    def __init__(
        self,
        num_envs: int,
        opponents: Opponents = "normal",
        rules: Rules | str = "standard",
        *,
        seat: int = 0,
        reward: str = "hand",
        teacher: str | AgentSpec | None = None,
        render_mode: str | None = None,
    ):
        self.render_mode = check_render_mode(render_mode)
        if is_integer(num_envs) and 0 < num_envs <= MAX_ENVS:  # else VectorEnv's own refusal
            check_room(num_envs, table_bytes(copy=True) + SPACE_BYTES, "use fewer tables, or VectorEnv")
        self._env = VectorEnv(num_envs, opponents, rules, seat=seat, reward=reward, teacher=teacher)
        self.num_envs = self._env.n_envs
        self.single_observation_space = observation_space()
        self.single_action_space = spaces.Discrete(N_CARDS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        if isinstance(seed, list):
            raise ValueError("GymVectorEnv takes one seed: table i plays from derive_seed(seed, i)")
        if options:  # Gymnasium's reset_mask among them: every table resets itself as its hand ends
            raise ValueError(
                f"GymVectorEnv.reset takes no options (given: {', '.join(map(str, options))}): it resets "
                "every table, and each table starts its next hand by itself when one ends"
            )
        seed = check_seed(seed) if seed is not None else None
        super().reset(seed=seed)  # np_random, seeded as Gymnasium's own vector envs seed it
        if seed is None and self._env.seed is None:  # no seed on the first reset: one from the OS
            seed = int(np.random.default_rng().integers(2**63))
        observations, masks = self._env.reset(seed)  # none: the next hands of the same seed
        if self.render_mode == "human":
            self.render()
        teacher_actions = self._env.teacher_actions
        return {"observation": observations, "action_mask": masks}, self._teacher_info(teacher_actions)

    def _teacher_info(self, teacher_actions: np.ndarray | None) -> dict[str, np.ndarray]:
        """The teacher's picks, with Gymnasium's mask beside them: every table has one."""
        if teacher_actions is None:
            return {}
        return {"teacher_action": teacher_actions, "_teacher_action": np.ones(self.num_envs, dtype=np.bool_)}

    def step(
        self, actions: Any
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        observations, masks, rewards, terminated, truncated, info = self._env.step(np.asarray(actions))
        # Gymnasium's convention: "_score" marks the tables whose "score" is one (those that ended)
        out: dict[str, Any] = {"score": info["score"], "_score": terminated.copy()}
        out |= self._teacher_info(info.get("teacher_action"))
        if terminated.any():
            final = np.empty(self.num_envs, dtype=object)
            ended = np.flatnonzero(terminated)
            for row, i in enumerate(ended):
                final[i] = {"observation": info["final_obs"][row], "action_mask": np.zeros(N_CARDS, np.int8)}
            out["final_obs"], out["_final_obs"] = final, terminated.copy()
            # SeatEnv's info at the end of a hand, batched as Gymnasium batches infos
            ended_info = {"score": info["score"].copy(), "_score": terminated.copy()}
            out["final_info"], out["_final_info"] = ended_info, terminated.copy()
        if self.render_mode == "human":
            self.render()
        return {"observation": observations, "action_mask": masks}, rewards, terminated, truncated, out

    def close_extras(self, **kwargs: Any) -> None:
        self._env.close()

    def render(self) -> tuple[str, ...] | None:  # type: ignore[override]
        """Every table as text (each hand shown: a debugging view), one string per table:
        returned under ``render_mode="ansi"``, printed under ``"human"``."""
        tables = range(self.num_envs)
        return rendered(self.render_mode, lambda: tuple(str(self._env.hand_state(i)) for i in tables))


# Gymnasium's registry: gymnasium.make(ENV_ID, opponents=..., rules=...) makes a SeatEnv and
# gymnasium.make_vec(ENV_ID, num_envs=N, vectorization_mode="vector_entry_point") a GymVectorEnv,
# once this module is imported ("hearts_sim.env.gym:HeartsSeat-v0" imports it from make itself).
ENV_ID = "HeartsSeat-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        ENV_ID, entry_point="hearts_sim.env.gym:SeatEnv", vector_entry_point="hearts_sim.env.gym:GymVectorEnv"
    )
