"""A policy trained in the environments, seated at every table: ``PolicyAgent`` and ``observation_vector``.

A policy learned on ``VectorEnv``, ``SeatEnv`` or ``GymVectorEnv`` (a torch module, an sb3
model, plain numpy) maps the environments' observation vector and action mask to a card. Wrapped
in ``PolicyAgent`` it is an agent like any other (``agents.external``): it plays matches,
tournaments, levels and ``simulate`` beside the built-in agents, in the same process, without
writing weights or compiling anything. It sees what it saw in training: at a table its
positions are encoded from the table's records (``decide_records``), elsewhere (a replay,
``agents.load``, ``hearts-sim serve``) from ``Observation``s (``observation_vector``), both by the
environments' own kernel (``hearts_sim.engine.encoding``). The pass is ``pass_count`` picks,
each seeing the cards picked before it, as the environments pass.

It decides in batches: every position of a lockstep block waiting on it goes through the policy
in one call, so a network's forward pass is over hundreds of rows at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.external import AnswerRefused
from agents.kinds import AgentError
from hearts_sim.core.cards import N_CARDS, card_str, cards_str, parse_cards
from hearts_sim.core.checks import is_integer, shown
from hearts_sim.core.rules import Rules
from hearts_sim.engine.encoding import OBS_SIZE, encode_seats
from hearts_sim.env.kernels import table_observe
from hearts_sim.game.observation import CardsLike, Observation

# observations (float32, n x OBS_SIZE) and masks (int8, n x 52) -> n card indices
BatchPolicy = Callable[[np.ndarray, np.ndarray], Any]


def observation_vector(observation: Observation, pending: CardsLike = ()) -> tuple[np.ndarray, np.ndarray]:
    """The seat of ``observation`` as the environments see it: the float32 observation vector
    (``OBS_SIZE``) and the int8 mask of the cards it may pick now (all zero unless it is to pass
    or play). ``pending``: the cards already picked toward a pass not yet made (while passing,
    fewer than ``pass_count`` of the seat's cards; ``"QS 2C"``, indices or a ``CardSet``).
    Raises ``ValueError`` for any other ``pending``."""
    if not isinstance(observation, Observation):
        raise ValueError(f"observation_vector needs an Observation, not {shown(observation)}")
    picked = parse_cards(pending)
    if picked:
        held = observation.hand.mask
        if observation.phase != "pass":
            raise ValueError(f"pending cards {cards_str(picked)} given, but the seat is not passing")
        if picked & ~held:
            raise ValueError(f"pending: {cards_str(picked & ~held)} not in the seat's hand")
        if picked.bit_count() >= observation.rules.pass_count:
            raise ValueError(
                f"pending: {cards_str(picked)}, but a pass is {observation.rules.pass_count} cards"
            )
    vector = np.empty(OBS_SIZE, dtype=np.float32)
    mask = np.empty(N_CARDS, dtype=np.int8)
    _observe_into(observation, picked, vector, mask)
    return vector, mask


def _observe_into(observation: Observation, pending: int, vector: np.ndarray, mask: np.ndarray) -> None:
    rules = tuple(observation.rules.to_tuple())  # a plain tuple, as the tables and environments pass it
    # acting: the mask is the kernel's action_cards, already empty unless the seat is to pass or play
    table_observe(observation.to_state(), rules, observation.seat, np.uint64(pending), True, vector, mask)


class PolicyAgent:
    """``policy(observations, masks) -> cards`` as an agent: a batch of observation vectors
    (float32, n x ``OBS_SIZE``) and masks (int8, n x 52, the cards each row may pick) in, n card
    indices out (a list, an array or a tensor of integers).

    ``name`` (letters, digits, ``_``) is how its records name it, ``py:NAME``: give the object
    again under that name to replay or resume them (``an.replay(row, agents={"py:NAME": agent})``).
    A card that is not one of the row's allowed cards raises ``ValueError``: at a table, the run
    stops with one line naming the agent, the card and the position.

    >>> first_allowed = lambda observations, masks: masks.argmax(axis=1)
    >>> agent = PolicyAgent(first_allowed, name="lowest_card")
    >>> agent.name
    'py:lowest_card'
    """

    def __init__(self, policy: BatchPolicy, name: str = "PolicyAgent"):
        if not callable(policy):
            raise AgentError(f"PolicyAgent needs a callable policy(observations, masks), not {shown(policy)}")
        if not isinstance(name, str) or not re.fullmatch(r"\w+", name):
            raise AgentError(f"PolicyAgent name {shown(name)} is not valid: letters, digits and _ only")
        self.policy = policy
        self.name = f"py:{name}"

    def __repr__(self) -> str:
        return f"PolicyAgent({self.name})"

    def act_batch(self, observations: Sequence[Observation]) -> list[Any]:
        """A card to play, or the cards to pass, for each observation (its phase says which)."""
        n = len(observations)
        vectors = np.empty((n, OBS_SIZE), dtype=np.float32)
        masks = np.empty((n, N_CARDS), dtype=np.int8)
        # a pass is pass_count rounds of picks (each seeing the ones before); a play one round
        picks_wanted = [o.rules.pass_count if o.phase == "pass" else 1 for o in observations]
        picks: list[list[int]] = [[] for _ in range(n)]
        for round_ in range(max(picks_wanted, default=0)):
            rows = [i for i in range(n) if round_ < picks_wanted[i]]
            for i in rows:
                _observe_into(observations[i], parse_cards(picks[i]), vectors[i], masks[i])
            for i, card in zip(rows, self._ask(vectors[rows], masks[rows]), strict=True):
                picks[i].append(card)
        return [p if o.phase == "pass" else p[0] for o, p in zip(observations, picks, strict=True)]

    def decide_records(
        self, states: np.ndarray, rules: Rules, slots: np.ndarray, seats: np.ndarray, passing: bool
    ) -> np.ndarray:
        """The table's fast path (``hearts_sim.selfplay.lockstep``): the moves of seats ``seats``
        waiting in records ``states[slots]``, all passing or all playing: cards, or pass bitboards.

        The records hold every hand, so this is for the toolkit's own tables, never an agent's
        code: the positions are encoded straight from them by ``encode_observation``, which
        reads a seat's information set only (the environments' guarantee), skipping the
        ``Observation`` each would otherwise be rebuilt from. The same vectors either way, so
        the same moves (tests/test_policy_agent.py)."""
        n = len(slots)
        vectors = np.empty((n, OBS_SIZE), dtype=np.float32)
        masks = np.empty((n, N_CARDS), dtype=np.int8)
        picked = np.zeros(n, dtype=np.uint64)
        rule_values = tuple(rules.to_tuple())
        for _ in range(rules.pass_count if passing else 1):
            encode_seats(states, rule_values, slots, seats, picked, vectors, masks)
            cards = np.array(self._ask(vectors, masks), dtype=np.uint64)
            if not passing:
                return cards
            picked |= np.uint64(1) << cards
        return picked

    def choose_pass(self, observation: Observation) -> list[int]:
        return list(self.act_batch([observation])[0])

    def choose_play(self, observation: Observation) -> int:
        return int(self.act_batch([observation])[0])

    def _ask(self, vectors: np.ndarray, masks: np.ndarray) -> list[int]:
        """The policy's card for every row, each checked against the row's mask (a ``ValueError``
        otherwise, which the table reports with the agent's name and the position)."""
        answer = self.policy(vectors, masks)
        try:
            cards = np.asarray(answer).reshape(-1).tolist()
        except Exception as error:  # a tensor on a device, a ragged list...
            raise AnswerRefused(f"its policy returned {shown(answer)}: {error}") from None
        if np.ndim(answer) == 0:  # None, a bare number: no card per position
            raise AnswerRefused(
                f"its policy returned {shown(answer)}, not a card for each of the {len(vectors)} positions"
            )
        if len(cards) != len(vectors):
            raise AnswerRefused(f"its policy returned {len(cards)} values for {len(vectors)} positions")
        for card, mask in zip(cards, masks, strict=True):
            if not is_integer(card) or not 0 <= card < N_CARDS:  # 0.0 is no card, though it equals 0
                raise AnswerRefused(
                    f"its policy chose {shown(card)}, not a card index 0..{N_CARDS - 1} (an integer)"
                )
            if not mask[card]:
                allowed = " ".join(card_str(int(c)) for c in np.flatnonzero(mask))
                raise AnswerRefused(
                    f"its policy chose {card} ({card_str(card)}), not one of the cards it may pick: {allowed}"
                )
        return [int(card) for card in cards]
