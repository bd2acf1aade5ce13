"""A policy over the environments' observations, seated at the tables: ``PolicyAgent``, and
``observation_vector``.

The decisive check: the ``net`` agent's own network, run as a ``PolicyAgent`` from Python, plays
exactly the hands the compiled ``net`` plays, passes included. That holds only if the table
encodes its positions as the compiled agent and the environments do, and if the pass is picked
card by card as they pick it; and a replay, which asks through ``Observation``s (``observation_vector``),
must find the same cards.
"""

from __future__ import annotations

import traceback

import numpy as np
import pytest

from agents.external import ExternalAgentError
from agents.kinds import AgentError
from agents.net import DEFAULT_WEIGHTS, WEIGHT_NAMES, network, network_policy
from hearts_sim.core.cards import N_CARDS, card_str
from hearts_sim.env import VectorEnv
from hearts_sim.env.policy import PolicyAgent, observation_vector
from hearts_sim.game.hand_state import HandState
from hearts_sim.selfplay.simulate import simulate
from hearts_sim.studies import analysis as an

# what plain ``net`` plays, from Python: its network and logits kernel, the best allowed card
net_policy = network_policy(network(WEIGHT_NAMES.index(DEFAULT_WEIGHTS)))


def _without_names(frame):  # type: ignore[no-untyped-def]
    return frame[[c for c in frame.columns if not c.startswith("agent")]]


@pytest.mark.parametrize("rules", ["standard", "qdan5", "black_maria"])
def test_the_nets_network_as_a_policy_agent_plays_the_net_agents_hands(rules: str) -> None:
    agent = PolicyAgent(net_policy, name="net_in_python")
    seats = {"standard": ["rule", "net", "easy"], "qdan5": ["rule", "net", "easy", "random"]}
    others = seats.get(rules, ["rule", "net"])
    ours = simulate(rules, [agent, *others], hands=120, seed=3)
    compiled = simulate(rules, ["net", *others], hands=120, seed=3)
    assert (ours["agent_0"] == "py:net_in_python").all()
    assert _without_names(ours).equals(_without_names(compiled))


def test_the_tables_fast_path_and_the_observation_path_decide_alike() -> None:
    """At a table a PolicyAgent's positions are encoded from the records (no ``Observation``
    built); a replay asks it through ``choose_pass``/``choose_play`` with the rebuilt
    observations. Every replayed hand checks out against its record."""
    agent = PolicyAgent(net_policy, name="net_in_python")
    hands = simulate("qdan5", [agent, "rule", "easy", "net", "random"], hands=40, seed=8)
    for _, row in hands.iterrows():
        an.replay(row, agents={"py:net_in_python": agent})  # raises ReplayError on a difference


def test_observation_vector_gives_what_the_environment_gives() -> None:
    """At every position of the learner, picks toward a pass included, ``observation_vector`` of the table's
    observation equals the environment's observation and mask."""
    env = VectorEnv(1, "rule", "qdan5", seat=2)
    obs, mask = env.reset(seed=6)
    rng = np.random.default_rng(6)
    picks: list[int] = []
    compared = 0
    for _ in range(3 * 12):
        state = env.hand_state(0)
        vector, allowed = observation_vector(state.observation(2), picks if state.phase == "pass" else ())
        assert np.array_equal(vector, obs[0]) and np.array_equal(allowed, mask[0])
        compared += 1
        card = int(rng.choice(np.flatnonzero(mask[0])))
        picks = picks + [card] if state.phase == "pass" else []
        obs, mask, _, terminated, _, _ = env.step([card])
        if terminated[0] or len(picks) == 3:
            picks = []
    assert compared == 36


def test_a_policy_agent_decides_positions_in_one_batch() -> None:
    sizes: list[int] = []

    def lowest(observations: np.ndarray, masks: np.ndarray) -> list[int]:
        sizes.append(len(observations))
        return [int(np.flatnonzero(m)[0]) for m in masks]

    simulate("standard", [PolicyAgent(lowest), "lowest", "lowest", "lowest"], hands=64, seed=1)
    assert max(sizes) >= 32  # the lockstep block's positions together, not one call each


def test_a_policy_agents_bad_answers_are_one_line_errors() -> None:
    def never_allowed(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return (masks == 0).argmax(axis=1)

    for policy, words in (
        (never_allowed, r"its policy chose \d+ \(\w\w\), not one of the cards it may pick: \w+"),
        (lambda o, m: [0], r"its policy returned 1 values for \d+ positions"),
        (lambda o, m: ["QS"] * len(o), r"its policy chose 'QS', not a card index 0..51 \(an integer\)"),
        (lambda o, m: m.argmax(axis=1).astype(float), r"its policy chose \d+\.0, not a card index 0..51"),
        (lambda o, m: None, r"its policy returned None, not a card for each of the \d+ positions"),
    ):
        with pytest.raises(ExternalAgentError, match=f"agent py:bad: {words} .*deal") as refused:
            simulate("standard", [PolicyAgent(policy, name="bad"), "rule", "rule", "rule"], hands=64, seed=1)
        assert refused.value.__cause__ is None  # the line says it all: no frames of the toolkit's checks


def test_a_policy_agent_whose_code_raises_shows_its_own_line() -> None:
    """The error a policy's own code raised is the cause of the table's one-line error, so its
    traceback shows the policy's line (until 2026-12-06 it was dropped: ``from None``)."""

    def broken(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masks.argmax(axis=1) + 1 / 0

    with pytest.raises(ExternalAgentError, match="agent py:broken: raised ZeroDivisionError") as failed:
        simulate("standard", [PolicyAgent(broken, name="broken"), "rule", "rule", "rule"], hands=8, seed=1)
    cause = failed.value.__cause__
    assert isinstance(cause, ZeroDivisionError)
    assert traceback.extract_tb(cause.__traceback__)[-1].name == "broken"
    with pytest.raises(AgentError, match="needs a callable policy"):
        PolicyAgent("net")  # type: ignore[arg-type]
    with pytest.raises(AgentError, match="name 'my agent' is not valid"):
        PolicyAgent(net_policy, name="my agent")


def test_observation_vector_refuses_pending_cards_that_cannot_be_pending() -> None:
    state = HandState.deal("standard", seed=2)
    observation = state.observation(0)
    held = list(state.hand(0))
    vector, mask = observation_vector(observation, [held[0]])
    assert mask[held[0]] == 0 and mask.sum() == 12  # the picked card may not be picked again
    assert np.array_equal(vector, observation_vector(observation, card_str(held[0]))[0])  # as a string too
    not_held = next(c for c in range(N_CARDS) if c not in held)
    for pending, words in (
        ([not_held], "not in the seat's hand"),
        (held[:3], "but a pass is 3 cards"),
        ([99], "card index 99 is out of range"),
        ("QX", "malformed card"),
    ):
        with pytest.raises(ValueError, match=words):
            observation_vector(observation, pending)
    for seat in range(4):
        state.pass_cards(seat, list(state.hand(seat))[:3])
    with pytest.raises(ValueError, match="the seat is not passing"):
        observation_vector(state.observation(0), [list(state.hand(0))[0]])
    with pytest.raises(ValueError, match="observation_vector needs an Observation"):
        observation_vector(state)  # type: ignore[arg-type]
