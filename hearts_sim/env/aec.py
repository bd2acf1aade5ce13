"""PettingZoo AEC environment: one hand of Hearts, every seat an agent.

Agents are ``player_0 .. player_{n-1}`` (seat order). Observations are ``{"observation":
float32[OBS_SIZE], "action_mask": int8[52]}`` (``hearts_sim.engine.encoding``; the mask is empty
for an agent that is not to act), an action is a card index. The pass is ``pass_count``
sequential picks by each seat in turn, as in OpenSpiel; nobody sees another seat's picks, and
the exchange happens after the last seat's last pick. Rewards: minus each seat's score when the
hand ends (``reward="hand"``), or minus the points as they are taken and the rest of minus the
score at the end (``reward="trick"``); either way a hand's rewards add up to minus its score.
An illegal action raises ``ValueError`` and changes nothing.

    >>> from hearts_sim.env import aec_env
    >>> env = aec_env(rules="standard")
    >>> env.reset(seed=7)
    >>> env.agent_selection, int(env.observe("player_0")["action_mask"].sum())
    ('player_0', 13)

``reset(seed=S)`` deals hand 0 of ``S``, exactly ``HandState.deal(rules, seed=S, hand=0)`` and
``simulate(rules, seed=S)``'s first hand; each later ``reset()`` deals the next hand of ``S``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hearts_sim.core.cards import N_CARDS
from hearts_sim.core.checks import shown
from hearts_sim.core.errors import MissingExtra
from hearts_sim.core.rules import Rules, resolve_rules
from hearts_sim.engine.encoding import OBS_SIZE
from hearts_sim.engine.rng import check_seed
from hearts_sim.engine.state import new_states

try:  # the optional extra learn: importing this module without it names it (MissingExtra)
    from gymnasium import spaces
    from pettingzoo import AECEnv
except ModuleNotFoundError as missing:
    raise MissingExtra("hearts_sim.env.aec", missing.name or "pettingzoo", "learn") from None

from hearts_sim.env.gym import RENDER_MODES, check_render_mode, observation_space, rendered
from hearts_sim.env.kernels import REWARD_MODES, seat_to_act, table_observe, table_step
from hearts_sim.env.vector import action_card, action_text
from hearts_sim.game.hand_state import HandState


class HeartsAEC(AECEnv):  # type: ignore[misc]
    """One hand of Hearts for ``rules.n_players`` agents (see the module docstring)."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "hearts_v0", "is_parallelizable": False}

    def __init__(self, rules: Rules | str = "standard", reward: str = "hand", render_mode: str | None = None):
        super().__init__()
        if reward not in REWARD_MODES:
            raise ValueError(f"reward={shown(reward)}: choose one of {', '.join(REWARD_MODES)}")
        self.render_mode = check_render_mode(render_mode)
        self.rules = resolve_rules(rules)
        self.reward_mode = REWARD_MODES.index(reward)
        self._rules_tuple = tuple(self.rules.to_tuple())  # the kernels rebuild KernelRules
        self.possible_agents = [f"player_{seat}" for seat in range(self.rules.n_players)]
        self._seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.observation_spaces = {agent: observation_space() for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(N_CARDS) for agent in self.possible_agents}
        self._states = new_states(1)
        self._master: int | None = None
        self._hand = 0
        self._closed = False

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ the hand
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._check_open()
        if seed is not None:
            self._master, self._hand = check_seed(seed), 0
        elif self._master is None:  # no seed on the first reset: one from the OS's entropy
            self._master, self._hand = int(np.random.default_rng().integers(2**63)), 0
        else:
            self._hand += 1
        # HandState.deal, on this environment's one-record array
        self._states[:] = HandState.deal(self.rules, seed=self._master, hand=self._hand)._states
        n = self.rules.n_players
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._pending = np.zeros(n, dtype=np.uint64)
        self._rewarded = np.zeros(n, dtype=np.int64)
        self._step_rewards = np.zeros(n, dtype=np.float64)
        self.agent_selection = self.possible_agents[int(seat_to_act(self._states[0]))]
        if self.render_mode == "human":
            self.render()

    def _check_open(self) -> None:
        """``RuntimeError`` after ``close()``, as the other environments say (it played on)."""
        if self._closed:
            raise RuntimeError("the environment is closed: make a new one")

    def _started(self, call: str) -> None:
        """``RuntimeError`` before the first ``reset()`` (no hand is dealt yet: its record is
        zeros, which printed as a hand) or after ``close()``."""
        self._check_open()
        if self._master is None:
            raise RuntimeError(f"call reset() before {call}: no hand is dealt yet")

    def _playing(self, call: str) -> None:
        """``_started``, and an agent still to take a step (PettingZoo's own ``last()`` raised a
        bare ``KeyError: 'player_3'`` once every agent was done)."""
        self._started(call)
        if not self.agents:  # every agent has taken its last (None) step
            raise RuntimeError("the hand is over and every agent is done: call reset()")

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._playing("last()")
        return super().last(observe)  # type: ignore[no-any-return]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._started("observe()")
        if agent not in self._seats:
            raise ValueError(f"unknown agent {shown(agent)}: choose {', '.join(self.possible_agents)}")
        seat = self._seats[agent]
        observation = np.empty(OBS_SIZE, dtype=np.float32)
        mask = np.empty(N_CARDS, dtype=np.int8)
        acting = agent == self.agent_selection and not self.terminations.get(agent, True)
        table_observe(self._states, self._rules_tuple, seat, self._pending[seat], acting, observation, mask)
        return {"observation": observation, "action_mask": mask}

    def step(self, action: Any) -> None:
        self._playing("step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self._seats[agent]
        card = action_card(action)
        legal, next_seat = False, -1
        if 0 <= card < N_CARDS:  # the kernel takes an int64
            legal, next_seat = table_step(
                self._states,
                self._rules_tuple,
                seat,
                card,
                self._pending,
                self.reward_mode,
                self._rewarded,
                self._step_rewards,
            )
        if not legal:
            raise ValueError(f"{agent} cannot pick {action_text(card)} now")
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict(zip(self.possible_agents, self._step_rewards.tolist(), strict=True))
        if next_seat < 0:
            self.terminations = dict.fromkeys(self.agents, True)
            scores = self._states[0]["scores"]
            self.infos = {name: {"score": int(scores[s])} for s, name in enumerate(self.possible_agents)}
        else:
            self.agent_selection = self.possible_agents[next_seat]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ------------------------------------------------------------------ display
    def render(self) -> str | None:
        """The whole table as text (every hand shown: a debugging view): returned under
        ``render_mode="ansi"``, printed under ``"human"``."""
        return rendered(self.render_mode, lambda: str(self.hand_state()))  # type: ignore[no-any-return]

    def close(self) -> None:
        """Any later call but ``close`` is refused, as in the other environments."""
        self._closed = True

    def hand_state(self) -> HandState:
        """The table as a ``HandState`` (a view), to inspect or print it; step the environment, not it."""
        self._started("looking at the table")
        return HandState(self.rules, self._states)


def aec_env(
    rules: Rules | str = "standard", reward: str = "hand", render_mode: str | None = None
) -> HeartsAEC:
    """The PettingZoo AEC environment for ``rules`` (a preset name or a ``Rules``)."""
    return HeartsAEC(rules=rules, reward=reward, render_mode=render_mode)
