"""``agents.load``: any agent as a Python object that decides from an ``Observation``.

For a game site, a notebook or a server: ``load(spec)`` takes a level name or any agent spec
(``rule``, ``pass=lowest,play=mc(samples=8)``; names resolve through ``parse_agent``, which
also looks up the stored levels) and returns an ``Agent``::

    >>> import agents
    >>> from hearts_sim import HandState, card_str
    >>> state = HandState.deal("standard", seed=7)
    >>> agent = agents.load("lowest")
    >>> [card_str(c) for c in agent.choose_pass(state.observation(0))]
    ['AD', 'KS', 'AH']

How a decision is made, and why it equals the batched loop's: the observation is rebuilt
into a ``HAND_STATE`` record whose information-set fields equal the real hand's and whose
hidden cards are one consistent deal (``Observation.to_state``); the dispatcher then runs on
it exactly as ``hearts_sim.selfplay.loops.play_out_hand`` does, with the random stream
``decision_seed(state, seat)`` derived from the hand seed. Pass ``hand_seed`` (the seed the
hand was dealt from: ``HandState.record["hand_seed"]``, the ``seed`` column of ``simulate``)
to reproduce the loop's decisions exactly. Without it the hand seed is derived from the
agent's ``seed``, the seat and its dealt cards: the same observation always gets the same
decision, whatever was asked before (no hidden state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from agents.dispatch import loop_pass, loop_play
from agents.external import EngineOptions, external_moves
from agents.kinds import AgentError, card_stats, pass_stats
from agents.passing import PASS_ROLLOUTS
from agents.registry import AgentSpec, Policy, parse_agent
from hearts_sim.core.cards import card_str, cards_of, cards_str
from hearts_sim.core.checks import shown
from hearts_sim.core.rules import Rules
from hearts_sim.engine.hand import decision_seed
from hearts_sim.engine.rng import SeedError, check_seed, derive_seed
from hearts_sim.engine.state import PHASE_DONE, PHASE_PASS
from hearts_sim.game.hand_state import HandState, IllegalMoveError
from hearts_sim.game.observation import Observation


@dataclass(frozen=True)
class Agent:
    """An agent spec bound to a seed; ``choose_pass`` / ``choose_play`` decide from an observation."""

    spec: AgentSpec
    seed: int = 0

    def __post_init__(self) -> None:
        check_seed(self.seed)

    @property
    def name(self) -> str:
        """The agent's name as tables and records show it: its spec, ``ismcts(iterations=800)``."""
        return self.spec.name

    def __repr__(self) -> str:  # the spec's name, not its kinds' kernels and declarations
        return f"Agent({self.name!r}, seed={self.seed})"

    def hand_seed(self, observation: Observation) -> int:
        """The hand seed used when none is given: from this agent's seed, the seat and its dealt
        cards, so a decision depends on the observation alone."""
        self._check_observation(observation)
        base = derive_seed(np.uint64(self.seed), observation.dealt.mask)
        return int(derive_seed(np.uint64(base), observation.seat))  # numba returns a Python int

    def state(self, observation: Observation, hand_seed: int | None = None) -> np.ndarray:
        """The rebuilt one-element ``HAND_STATE`` array this agent decides on."""
        self._check_observation(observation)
        seed = self.hand_seed(observation) if hand_seed is None else check_seed(hand_seed, "hand_seed")
        return observation.to_state(seed)

    def choose_pass(self, observation: Observation, hand_seed: int | None = None) -> list[int]:
        """The cards to pass, lowest first. Raises ``IllegalMoveError`` unless the seat is to pass."""
        states = self._turn(observation, hand_seed, want_pass=True)
        return cards_of(self._decide(self.spec.pass_policy, states, observation))

    def choose_play(self, observation: Observation, hand_seed: int | None = None) -> int:
        """The card to play. Raises ``IllegalMoveError`` unless the seat is to play."""
        states = self._turn(observation, hand_seed, want_pass=False)
        return self._decide(self.spec.play_policy, states, observation)

    def _turn(self, observation: Observation, hand_seed: int | None, want_pass: bool) -> np.ndarray:
        """``state`` for a decision the seat is to make now: a pass (``want_pass``) or a play;
        ``IllegalMoveError`` otherwise."""
        states = self.state(observation, hand_seed)
        _check_turn(states, observation, want_pass)
        return states

    def _search_inputs(
        self, observation: Observation, hand_seed: int | None, want_pass: bool
    ) -> tuple[Any, tuple[Any, ...], int, np.uint64]:
        """What a search kernel takes for this decision (``_turn``'s): the state record, the
        rules tuple, the seat and its decision seed."""
        record = self._turn(observation, hand_seed, want_pass)[0]
        seat = observation.seat
        return record, observation.rules.to_tuple(), seat, np.uint64(decision_seed(record, seat))

    @property
    def scores_cards(self) -> bool:
        """Whether its play scores every legal card (a search agent): ``card_values`` explains it."""
        return self.spec.play_policy.kind.scored_play is not None

    @property
    def scores_passes(self) -> bool:
        """Whether its pass scores candidate passes (a search agent): ``pass_values`` explains it."""
        return self.spec.pass_policy.kind.scored_pass is not None

    @property
    def searches_passes(self) -> bool:
        """Whether its passes are searched: ``scores_passes``, and ``pimc`` and ``ismcts`` with
        ``pass_rollouts`` (without, they pass as ``rule`` does: ``pass_values`` is one row, no
        playouts behind it)."""
        policy = self.spec.pass_policy
        return self.scores_passes and dict(policy.values).get(PASS_ROLLOUTS.name, 1) > 0

    def card_values(self, observation: Observation, hand_seed: int | None = None) -> pd.DataFrame:
        """What a search agent's play weighs: one row per legal card, best first, with ``points``
        the seat's mean hand score over the search's playouts after that card (lower is better),
        ``weight`` the playouts (``ismcts``) or sampled worlds (``mc``, ``pimc``) behind it, and
        ``chosen`` the card ``choose_play`` plays (the same search, seed and kernel: its
        ``scored_play``; ``ismcts`` plays its most visited card by default, which need not have
        the lowest mean). A forced card is played without a search: one row, ``points`` NaN.
        Raises ``AgentError`` for an agent that plays without scoring its cards (``rule``, a
        ``py:`` agent, ...), ``IllegalMoveError`` unless the seat is to play."""
        policy = self.spec.play_policy
        if not self.scores_cards:
            raise AgentError(
                f"{self.name} plays by {_decider(policy)}, which scores no cards: card_values explains "
                "the search agents (mc, pimc, ismcts, and the levels built on them, such as hard)"
            )
        record, rules, seat, seed = self._search_inputs(observation, hand_seed, want_pass=False)
        moves = observation.legal_moves()
        legal = list(moves)
        values, weights = card_stats()
        chosen = legal[0]
        if len(legal) > 1:
            legal_mask = np.uint64(moves.mask)
            scored = policy.kind.scored_play
            chosen = int(scored(policy.row, record, rules, seat, legal_mask, seed, values, weights))
        table = pd.DataFrame(
            {
                "card": [card_str(card) for card in legal],
                "points": values[legal],
                "weight": weights[legal],
                "chosen": [card == chosen for card in legal],
            }
        )
        return table.sort_values("points", kind="stable", na_position="last", ignore_index=True)

    def pass_values(self, observation: Observation, hand_seed: int | None = None) -> pd.DataFrame:
        """What a search agent's pass weighs: one row per candidate pass (``cards``, lowest card
        first), best first, with ``points`` the seat's mean hand score over the playouts of that
        pass (the other seats passing like ``rule``, everyone playing the agent's playout policy),
        ``weight`` their number, and ``chosen`` the pass ``choose_pass`` makes (the same search,
        seed and kernel). The searched pass (``pimc``, ``ismcts``) halves its candidates round by
        round and chooses the last one left, so a candidate dropped early, on fewer playouts, may
        show a lower mean than the chosen one; ``mc`` keeps the rule agent's pass unless another
        candidate beats it by a margin. A pass made without a search (across, or
        ``pass_rollouts=0``: the rule agent's) is one row, ``points`` NaN. Raises ``AgentError``
        for an agent that passes without scoring passes, ``IllegalMoveError`` unless the seat is
        to pass."""
        policy = self.spec.pass_policy
        if not self.scores_passes:
            raise AgentError(
                f"{self.name} passes by {_decider(policy)}, which scores no passes: pass_values explains "
                "the search agents' passes (mc, and pimc or ismcts with pass_rollouts, such as hard)"
            )
        record, rules, seat, seed = self._search_inputs(observation, hand_seed, want_pass=True)
        cards, values, weights = pass_stats()
        chosen = int(policy.kind.scored_pass(policy.row, record, rules, seat, seed, cards, values, weights))
        found = [
            (cards_str(int(c)), float(v), int(w), int(c) == chosen)
            for c, v, w in zip(cards, values, weights, strict=True)
            if c
        ]
        if not found:  # the rule agent's pass, made without a search
            found = [(cards_str(chosen), np.nan, 0, True)]
        table = pd.DataFrame(found, columns=["cards", "points", "weight", "chosen"])
        return table.sort_values("points", kind="stable", na_position="last", ignore_index=True)

    def _decide(self, policy: Policy, states: np.ndarray, observation: Observation) -> int:
        return decide(policy, states[0], observation.rules, observation.seat, self.name, lambda: observation)

    def act(self, observation: Observation, hand_seed: int | None = None) -> list[int] | int:
        """Whichever decision the observation asks for: a pass (list of cards) or a play (a card)."""
        self._check_observation(observation)
        if observation.phase == "pass":
            return self.choose_pass(observation, hand_seed)
        return self.choose_play(observation, hand_seed)

    def _check_observation(self, observation: object) -> None:
        if not isinstance(observation, Observation):
            raise TypeError(
                f"{self.name} decides from an Observation (HandState.observation(seat) or "
                f"Observation.from_history(...)), not {type(observation).__name__} {shown(observation)}"
            )

    def warm_up(self, rules: Rules | str = "standard", explain: bool = False) -> None:
        """Compile (or load from numba's cache) every kernel a decision needs, before timing matters;
        with ``explain`` also those that explain one (``card_values``, ``pass_values``) for a search
        agent, a few seconds more: a server's first explained play took 4 to 8 s in every fresh
        worker, past a short time limit."""
        state = HandState.deal(rules, seed=0)
        if state.phase == "pass":
            for passer in range(state.n_players):
                if passer == 0 and explain and self.scores_passes:
                    self.pass_values(state.observation(passer))
                state.pass_cards(passer, self.choose_pass(state.observation(passer)))
        explained = not (explain and self.scores_cards)
        while (player := state.current_player) is not None:
            observation = state.observation(player)
            if not explained and len(observation.legal_moves()) > 1:  # a forced card is not searched
                self.card_values(observation)
                explained = True
            state.play(self.choose_play(observation))
            if explained:
                return


def decide(
    policy: Policy, record: Any, rules: Rules, seat: int, name: str, observe: Callable[[], Observation]
) -> int:
    """The move ``policy`` makes for ``seat`` on the ``HAND_STATE`` record of its hand (a pass as a
    bitboard, or a card), as the self-play loops make it: a compiled policy through the
    dispatcher, an outside one (``py:``, ``exec:``, an object) asked by ``external_moves`` with
    the seat's observation (``observe()``, built only then), each with the seat's ``decision_seed``."""
    passing = int(record["phase"]) == PHASE_PASS
    if policy.external is None:
        return (loop_pass if passing else loop_play)(policy, record, rules.to_tuple(), seat, name)
    seeds, hand_seeds = [int(decision_seed(record, seat))], [int(record["hand_seed"])]
    where = f"seat {seat}, {'passing' if passing else 'playing'}"
    return external_moves(
        policy.external, [observe()], passing, seeds, hand_seeds, rules, EngineOptions(), lambda _: where
    )[0]


def _decider(policy: Policy) -> str:
    """What decides for ``policy``, for a message: its kind, or an outside agent's own code."""
    return "its own code" if policy.kind.external else policy.kind.name


def _check_turn(states: np.ndarray, observation: Observation, want_pass: bool) -> None:
    record = states[0]
    seat = observation.seat
    phase = int(record["phase"])
    if phase == PHASE_DONE:
        raise IllegalMoveError(f"seat {seat} is not to move: the hand is over")
    if phase == PHASE_PASS:
        if observation.passed:
            raise IllegalMoveError(f"seat {seat} is not to move: it has passed and waits for the others")
        if not want_pass:
            raise IllegalMoveError(f"seat {seat} is to pass, not to play")
        return
    if want_pass:
        raise IllegalMoveError("no passing now: the hand is in the play phase")
    to_play = int(record["to_play"])
    if to_play != seat and not observation.plays and int(record["first_lead_card"]) >= 0:
        # who holds the opening club is not known before it is played
        opening = card_str(int(record["first_lead_card"]))
        raise IllegalMoveError(f"seat {seat} is not to move: the holder of {opening} leads the first trick")
    if to_play != seat:
        raise IllegalMoveError(f"seat {seat} is not to move: seat {to_play} is to play")
    if not observation.to_move:  # kitty mode, before the first card: the opening club may lie elsewhere
        raise IllegalMoveError(f"seat {seat} is not to move")


def load(spec: str | AgentSpec, seed: int = 0) -> Agent:
    """An ``Agent`` from a level name or any agent spec; ``seed`` picks its random streams when a
    decision is asked without the hand seed. Raises ``AgentError`` for an unknown name."""
    try:
        seed = check_seed(seed)
    except SeedError as error:
        raise AgentError(str(error)) from None
    return Agent(parse_agent(spec), seed)
