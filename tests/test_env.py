"""The learning environments: PettingZoo's and Gymnasium's own checks, and every environment
stepped against ``HandState`` with the same moves (masks, observations, rewards, final scores)
under every preset; VectorEnv's statistics and its independence from the batch size."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from hearts_sim.core.rules import Rules
from hearts_sim.engine.encoding import OBS_SIZE
from hearts_sim.engine.hand import decision_seed
from hearts_sim.engine.rng import SeedError, derive_seed
from hearts_sim.game.hand_state import HandState
from hearts_sim.selfplay.simulate import simulate

try:
    from tests.agent_checks import CHECK_RULES, spec_decider
    from tests.hand_checks import encode
except ImportError:  # tests/ itself on sys.path
    from agent_checks import CHECK_RULES, spec_decider  # type: ignore[no-redef]
    from hand_checks import encode  # type: ignore[no-redef]

pettingzoo = pytest.importorskip("pettingzoo", reason="pip install -e '.[dev]' (pettingzoo)")
gymnasium = pytest.importorskip("gymnasium", reason="pip install -e '.[dev]' (gymnasium)")

from hearts_sim.env import GymVectorEnv, PolicyAgent, SeatEnv, VectorEnv, aec_env  # noqa: E402
from hearts_sim.env.gym import ENV_ID  # noqa: E402

PRESET_NAMES = list(CHECK_RULES)


def bits(mask: np.ndarray) -> int:
    return sum(1 << int(c) for c in np.flatnonzero(mask))


# ---------------------------------------------------------------- the libraries' own checks
@pytest.mark.parametrize("name", ["standard", "qdan5", "kitty3_maria"])
def test_pettingzoo_api_and_seed_tests_pass(name: str) -> None:
    from pettingzoo.test import api_test, seed_test

    rules = CHECK_RULES[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # api_test reports most problems as warnings
        api_test(aec_env(rules, render_mode="ansi"), num_cycles=300)
    # Dict observations (the observation and its action mask) are PettingZoo's own convention
    # for masked actions; api_test advises against them for every game not on its own list
    advice = ("Observation is not a NumPy array", "Observation space for each agent probably should be")
    assert [str(w.message) for w in caught if not str(w.message).startswith(advice)] == []
    seed_test(lambda: aec_env(rules, reward="trick"), num_cycles=100)


@pytest.mark.parametrize("name", ["standard", "kitty5", "black_maria"])
def test_gymnasium_check_env_passes(name: str) -> None:
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(SeatEnv("rule", CHECK_RULES[name]), skip_render_check=True)


# ---------------------------------------------------------------- AEC against HandState
@pytest.mark.parametrize("reward", ["hand", "trick"])
@pytest.mark.parametrize("name", PRESET_NAMES)
def test_aec_steps_like_handstate(name: str, reward: str) -> None:
    rules = CHECK_RULES[name]
    env = aec_env(rules, reward=reward)
    rng = np.random.default_rng(len(name))
    for hand in range(2):
        env.reset(seed=5) if hand == 0 else env.reset()
        replica = HandState.deal(rules, seed=5, hand=hand)
        picks = [0] * rules.n_players
        returns = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            observation, reward_, terminated, _, info = env.last()
            returns[agent] += reward_
            if terminated:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            mask = bits(observation["action_mask"])
            if replica.phase == "pass":
                assert seat == min(
                    s for s in range(rules.n_players) if not int(replica.record["passes_made"]) >> s & 1
                )
                assert mask == replica.hand(seat).mask & ~picks[seat]
            else:
                assert seat == replica.current_player
                assert mask == replica.legal_moves().mask
            expected, _ = encode(replica, seat, picks[seat])
            assert np.array_equal(observation["observation"], expected)
            card = int(rng.choice(np.flatnonzero(observation["action_mask"])))
            env.step(card)
            if replica.phase == "pass":
                picks[seat] |= 1 << card
                if picks[seat].bit_count() == rules.pass_count:
                    replica.pass_cards(seat, picks[seat])
            else:
                replica.play(card)
        scores = replica.scores()
        assert [returns[a] for a in env.possible_agents] == [-float(s) for s in scores]


def test_aec_refuses_an_illegal_card_and_changes_nothing() -> None:
    env = aec_env("standard")
    env.reset(seed=1)
    before = env.observe(env.agent_selection)
    with pytest.raises(ValueError, match="cannot pick"):
        env.step(int(np.flatnonzero(before["action_mask"] == 0)[0]))
    after = env.observe(env.agent_selection)
    assert np.array_equal(before["observation"], after["observation"])


def test_derive_seed_takes_a_python_int_as_the_seed_it_is() -> None:
    """The README's seeding formula, ``derive_seed(seed, i)``, called with a plain int: numba typed
    9 as int64 and mixed it signed, so table 0's seed came out 1321829707580529426, not
    5683797231007435960. In a fresh process: the first call decides the specialisation."""
    script = (
        "import numpy as np\n"
        "from hearts_sim.engine.rng import derive_seed\n"
        "plain = [int(derive_seed(9, i)) for i in range(3)]\n"
        "print(plain == [int(derive_seed(np.uint64(9), i)) for i in range(3)], plain[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["True", "5683797231007435960"], done.stderr


# ---------------------------------------------------------------- VectorEnv against HandState
class Replica:
    """One table of a VectorEnv, replayed in ``HandState`` with the dispatcher's decisions."""

    def __init__(self, rules: Rules, seed: int, table: int, seat: int, opponents: str, teacher: str | None):
        self.rules, self.seat, self.episode = rules, seat, 0
        self.env_seed = int(derive_seed(np.uint64(seed), table))
        self.opponent, self.teacher = spec_decider(opponents), spec_decider(teacher) if teacher else None
        self.deal()

    def deal(self) -> None:
        self.state = HandState.deal(self.rules, seed=self.env_seed, hand=self.episode)
        self.picks, self.rewarded = 0, 0
        if self.state.phase == "pass":
            for s in range(self.rules.n_players):
                if s != self.seat:
                    self.state.pass_cards(s, self.decide(self.opponent, s))
        self.advance()

    def decide(self, decider, seat):  # type: ignore[no-untyped-def]
        record = self.state.record
        return decider(record, self.state._rules_array, seat, np.uint64(decision_seed(record, seat)))

    def advance(self) -> None:
        while self.state.phase == "play" and self.state.current_player != self.seat:
            self.state.play(self.decide(self.opponent, self.state.current_player))

    def mask(self) -> int:
        if self.state.phase == "pass":
            return self.state.hand(self.seat).mask & ~self.picks
        return self.state.legal_moves().mask

    def teacher_card(self) -> int:
        choice = self.decide(self.teacher, self.seat)
        return (
            (choice & ~self.picks & -(choice & ~self.picks)).bit_length() - 1
            if self.state.phase == "pass"
            else choice
        )

    def step(self, card: int, reward_mode: str) -> tuple[float, int | None]:
        """Play the learner's card and the replies; (reward, score if the hand ended)."""
        if self.state.phase == "pass":
            self.picks |= 1 << card
            if self.picks.bit_count() == self.rules.pass_count:
                self.state.pass_cards(self.seat, self.picks)
                self.picks = 0
        else:
            self.state.play(card)
        self.advance()
        if self.state.phase == "done":
            score = int(self.state.scores()[self.seat])
            reward = -score - self.rewarded
            self.episode += 1
            self.deal()
            return reward, score
        target = -int(self.state.points()[self.seat]) if reward_mode == "trick" else 0
        reward, self.rewarded = target - self.rewarded, target
        return reward, None


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_vector_env_steps_like_handstate_with_the_dispatcher(name: str) -> None:
    """Masks, observations, teacher picks, rewards and final scores of every table equal a
    ``HandState`` replay whose opponents decide through the dispatcher with the loop's seeds."""
    rules = CHECK_RULES[name]
    seat = len(name) % rules.n_players
    reward_mode = "trick" if len(name) % 2 else "hand"
    opponents, teacher = ("rule", "random") if len(name) % 3 else ("random", "rule")
    env = VectorEnv(3, opponents, rules, seat=seat, reward=reward_mode, teacher=teacher)
    replicas = [Replica(rules, 11, i, seat, opponents, teacher) for i in range(3)]
    obs, mask = env.reset(seed=11)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(2 * (rules.hand_size + rules.pass_count)):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        teacher_actions = env.teacher_actions  # after reset (the first position) as after a step
        for i, replica in enumerate(replicas):
            assert bits(mask[i]) == replica.mask()
            assert np.array_equal(obs[i], encode(replica.state, seat, replica.picks)[0])
            assert teacher_actions[i] == replica.teacher_card()
        obs, mask, rewards, terminated, truncated, info = env.step(actions)
        assert np.array_equal(info["teacher_action"], env.teacher_actions)
        for i, replica in enumerate(replicas):
            reward, score = replica.step(int(actions[i]), reward_mode)
            assert rewards[i] == reward
            assert terminated[i] == (score is not None) and not truncated[i]
            if score is not None:
                assert info["score"][i] == score
                ended += 1
    assert ended >= 3
    assert list(env.episodes()) == [r.episode for r in replicas]


def test_a_random_learner_scores_like_random_self_play() -> None:
    """Mean reward of a uniform random learner among random opponents = minus the mean score
    of a seat in random self-play (``simulate``), within a 99% interval of the difference."""
    env = VectorEnv(512, "random", copy=False)
    obs, mask = env.reset(seed=3)
    rng = np.random.default_rng(3)
    returns: list[np.ndarray] = []
    while sum(len(r) for r in returns) < 40_000:
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        obs, mask, rewards, terminated, _, info = env.step(actions)
        returns.append(rewards[terminated].astype(np.float64))
    learner = np.concatenate(returns)
    self_play = -simulate("standard", "random", hands=40_000, seed=4, threads=1)["score_0"].to_numpy()
    difference = learner.mean() - self_play.mean()
    error = np.sqrt(learner.var(ddof=1) / len(learner) + self_play.var(ddof=1) / len(self_play))
    assert abs(difference) < 2.576 * error, (learner.mean(), self_play.mean(), error)


def test_trajectories_do_not_depend_on_the_batch_size() -> None:
    def trajectory(n_envs: int) -> list[tuple[np.ndarray, ...]]:
        env = VectorEnv(n_envs, "normal", "qdan3", reward="trick")
        obs, mask = env.reset(seed=21)
        pickers = [np.random.default_rng(i) for i in range(n_envs)]
        out = []
        for _ in range(40):
            actions = np.array([p.choice(np.flatnonzero(m)) for p, m in zip(pickers, mask, strict=True)])
            out.append((obs[:3].copy(), mask[:3].copy()))
            obs, mask, rewards, terminated, _, _ = env.step(actions)
            out.append((rewards[:3].copy(), terminated[:3].copy()))
        return out

    small, large = trajectory(3), trajectory(8)
    assert all(
        np.array_equal(a, b) for x, y in zip(small, large, strict=True) for a, b in zip(x, y, strict=True)
    )


def test_a_group_of_tables_is_dealt_the_same_hands_and_differs_by_the_learners_play() -> None:
    """``reset(group=K)``: table ``i`` plays the deals of table ``i // K`` of ``group=1``, hand
    after hand, with the opponents' random streams too (``mc`` samples its worlds, ``random``
    draws its cards): tables of a group given the same actions stay equal, and a group's tables
    played apart differ only by the learner's cards."""
    opponents = ["mc(samples=4)", "random", "normal", "rule"]
    grouped, single = VectorEnv(6, opponents, "qdan5"), VectorEnv(2, opponents, "qdan5")
    obs, mask = grouped.reset(seed=8, group=3)
    reference, _ = single.reset(seed=8)
    assert all(np.array_equal(obs[i], reference[i // 3]) for i in range(6))
    rng = np.random.default_rng(8)
    parted = False
    for _ in range(40):  # two hands and more of each table
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        actions[1:3], actions[4] = actions[0], actions[3]  # table 5 apart from its group
        obs, mask, _, terminated, _, info = grouped.step(actions)
        reference, _, _, ended, _, _ = single.step(actions[[0, 3]])
        assert np.array_equal(obs[:3], [reference[0]] * 3) and np.array_equal(obs[3:5], [reference[1]] * 2)
        assert np.array_equal(terminated, np.repeat(ended, 3))  # a group's hands end together
        parted |= not np.array_equal(obs[5], obs[3])
    assert parted and min(single.episodes()) >= 2
    assert np.array_equal(grouped.episodes(), np.repeat(single.episodes(), 3))
    for group in (0, 7, 1.5, True):
        with pytest.raises(ValueError, match=f"group must be a whole number in 1 .. 6 .n_envs., not {group}"):
            grouped.reset(seed=1, group=group)  # type: ignore[arg-type]


def test_reset_without_a_group_keeps_the_last_ones() -> None:
    """``reset()`` keeps the last reset's seed and went back to ``group=1`` without a word: a
    policy-gradient loop that moved on to new hands so lost its group baseline."""
    env = VectorEnv(6, "random")
    env.reset(seed=4, group=3)
    obs, _ = env.reset()  # the next hands, still three tables a deal
    assert all(np.array_equal(obs[i], obs[i // 3 * 3]) for i in range(6))
    assert not np.array_equal(obs[0], obs[3])
    obs, _ = env.reset(group=1)
    assert not any(np.array_equal(obs[i], obs[i + 1]) for i in range(5))
    env.reset(seed=5, group=2)
    obs, _ = env.reset(seed=6)  # a new seed keeps the group too
    assert np.array_equal(obs[0], obs[1]) and not np.array_equal(obs[1], obs[2])


def test_vector_env_refuses_bad_actions_and_arguments() -> None:
    env = VectorEnv(2, "random")
    with pytest.raises(RuntimeError, match="reset"):
        env.step([0, 0])
    obs, mask = env.reset(seed=1)
    legal = [int(np.flatnonzero(m)[0]) for m in mask]
    with pytest.raises(ValueError, match="table 1: .* is not legal now; legal: "):
        env.step([legal[0], int(np.flatnonzero(mask[1] == 0)[0])])
    untouched = VectorEnv(2, "random")
    untouched.reset(seed=1)
    assert np.array_equal(env.step(legal)[0], untouched.step(legal)[0])  # the refused step moved nothing
    with pytest.raises(ValueError, match="not a card index"):
        env.step([52, 0])
    with pytest.raises(ValueError, match="2 integer card indices"):
        env.step([0.5, 1.0])
    for kwargs, words in [
        ({"n_envs": 0}, "n_envs must be a whole number in 1 .. 1,048,576"),
        ({"n_envs": 2**53 + 1}, "n_envs must be a whole number in 1"),  # was a MemoryError
        ({"n_envs": 1, "seat": 4}, "seat=4"),
        ({"n_envs": 1, "reward": "points"}, "reward="),
        ({"n_envs": 1, "opponents": ["random"] * 2}, "2 opponents given for the 3 other seats"),
        ({"n_envs": 1, "opponents": "nobody"}, "unknown agent 'nobody'"),
        ({"n_envs": 1, "teacher": "exec:hearts-sim serve"}, "an external agent .* cannot sit there"),
        ({"n_envs": 1, "opponents": None}, "opponents=None: name an agent spec for every other seat"),
        ({"n_envs": 1, "opponents": 3}, "opponents=3: name an agent spec"),  # were raw TypeErrors
        ({"n_envs": 1, "copy": "no"}, "copy must be True or False, not 'no'"),
        ({"n_envs": 1, "autoreset": None}, "autoreset must be True or False, not None"),
        # a table whose hand ended first refused every later step: the others were stuck
        ({"n_envs": 2, "autoreset": False}, "autoreset=False is for one table"),
        # bytes were read as a list of ints ("110 is neither an agent spec"), an agent object
        # not in a list as no spec at all
        ({"n_envs": 1, "opponents": b"normal"}, "opponents=b'normal': name an agent spec"),
        ({"n_envs": 1, "opponents": PolicyAgent(lambda rows: [0] * len(rows))}, "cannot sit there"),
    ]:
        with pytest.raises(ValueError, match=words):
            VectorEnv(**kwargs)  # type: ignore[arg-type]
    for table in (2, -1, 1.5):  # -1 was an IndexError deep in HandState, not the last table
        with pytest.raises(ValueError, match=f"table {table}: choose 0 .. 1 .2 tables."):
            env.hand_state(table)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=f"table {table}: choose 0 .. 1"):
            env.legal_cards(table)  # type: ignore[arg-type]
    # an episode out of range is refused, not overflowed (seeds: the next test)
    for episode in (-1, 2**64, 1.5):
        with pytest.raises(ValueError, match=f"episode={episode!r} is not valid"):
            env.reset(episode=episode)  # type: ignore[arg-type]


def test_shared_buffers_hold_no_stale_values() -> None:
    """With ``copy=False`` the kernel writes into the same buffers every step: a step that ends
    no hand gave the score of the last hand that ended, and a table whose hand is over (no
    auto-reset) kept the teacher's previous pick where the docstring promises -1."""
    shared = VectorEnv(3, "random", teacher="lowest", copy=False)
    fresh = VectorEnv(3, "random", teacher="lowest")
    shared.reset(seed=0)
    fresh.reset(seed=0)
    ended = 0
    for _ in range(40):
        picks = fresh.teacher_actions
        assert np.array_equal(shared.teacher_actions, picks)
        *_, terminated, _, info = shared.step(picks)
        *_, expected = fresh.step(picks)
        assert np.array_equal(info["score"], expected["score"])
        assert not info["score"][~terminated].any()
        ended += int(terminated.sum())
    assert ended > 3
    held = VectorEnv(1, "random", teacher="lowest", autoreset=False, copy=False)
    held.reset(seed=0)
    terminated = np.zeros(1, bool)
    while not terminated.all():
        *_, terminated, _, _ = held.step(held.teacher_actions.copy())
    assert held.teacher_actions.tolist() == [-1]


def test_a_strided_or_read_only_action_array_compiles_nothing_new() -> None:
    """A column of a 2-D array, or a read-only array (JAX's), was a new numba signature for the
    step kernel: 5 to 7 s of compiling, in silence, per opponent set."""
    from hearts_sim.env.kernels import step_tables

    env = VectorEnv(2, "random")
    obs, mask = env.reset(seed=3)
    env.step(np.argmax(mask, axis=1))
    compiled = len(step_tables.overloads)
    mask = env.step(np.argmax(env.step(np.argmax(env._outputs[1], axis=1))[1], axis=1))[1]
    strided = np.stack([np.argmax(mask, axis=1), np.zeros(2, np.int64)], axis=1)[:, 0]
    assert not strided.flags.c_contiguous
    mask = env.step(strided)[1]
    read_only = np.argmax(mask, axis=1)
    read_only.flags.writeable = False
    env.step(read_only)
    assert len(step_tables.overloads) == compiled


def test_per_trick_rewards_add_up_to_minus_the_score() -> None:
    env = VectorEnv(16, "easy", "omnibus", reward="trick", copy=False)
    obs, mask = env.reset(seed=2)
    rng = np.random.default_rng(2)
    running = np.zeros(16)
    checked = 0
    for _ in range(200):
        obs, mask, rewards, terminated, _, info = env.step(np.argmax(rng.random(mask.shape) * mask, axis=1))
        running += rewards
        checked += int(terminated.sum())
        assert np.array_equal(running[terminated], -info["score"][terminated])
        running[terminated] = 0
    assert checked > 100


# ---------------------------------------------------------------- Gymnasium wrappers
def test_seat_env_plays_table_zero_of_the_vector_env() -> None:
    seat_env = SeatEnv("normal", "qdan5", seat=2, teacher="normal")
    vector = VectorEnv(2, "normal", "qdan5", seat=2)
    observation, info = seat_env.reset(seed=9)
    obs, mask = vector.reset(seed=9)
    done = False
    while not done:
        assert np.array_equal(observation["observation"], obs[0])
        assert np.array_equal(observation["action_mask"], mask[0])
        assert np.array_equal(seat_env.action_masks(), mask[0] == 1)  # sb3-contrib's MaskablePPO
        card = info["teacher_action"]
        observation, reward, done, _, info = seat_env.step(card)
        obs, mask, rewards, terminated, _, vinfo = vector.step([card, np.flatnonzero(mask[1])[0]])
        assert reward == rewards[0] and done == terminated[0]
    assert info["score"] == vinfo["score"][0]
    assert seat_env.action_masks().dtype == bool and not seat_env.action_masks().any()  # over
    observation, info = seat_env.reset()  # the next hand of the same seed
    assert np.array_equal(observation["observation"], obs[0])


def test_seat_env_ends_an_episode_on_an_illegal_card_or_raises() -> None:
    env = SeatEnv("random")
    observation, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    final, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -26.0 and info == {"illegal": True}
    assert not final["action_mask"].any() and not env.action_masks().any()  # nothing left to pick
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    strict = SeatEnv("random", on_illegal="raise")
    strict.reset(seed=1)
    with pytest.raises(ValueError, match="not legal now"):
        strict.step(illegal)


def test_gym_vector_env_reports_final_observations() -> None:
    env = GymVectorEnv(4, "random", "qdan3")
    assert env.observation_space["observation"].shape == (4, OBS_SIZE)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(20):  # 3 picks and 17 cards
        obs, rewards, terminated, truncated, info = env.step(
            np.argmax(rng.random((4, 52)) * obs["action_mask"], axis=1)
        )
        assert env.observation_space.contains(obs)
    assert terminated.all() and np.array_equal(info["_final_obs"], terminated)
    assert all(final["observation"].shape == (OBS_SIZE,) for final in info["final_obs"])
    assert (rewards == -info["score"]).all()
    assert np.array_equal(info["_score"], terminated)  # the tables whose score is one
    # batched as Gymnasium's SyncVectorEnv batches its environments' infos (it was an object
    # array of dicts, so info["final_info"]["score"] failed)
    assert np.array_equal(info["final_info"]["score"], info["score"])
    assert np.array_equal(info["final_info"]["_score"], terminated)
    *_, info = env.step(np.argmax(obs["action_mask"], axis=1))  # a new hand's first pick
    assert not info["_score"].any() and "final_info" not in info


def test_gym_vector_env_reset_without_a_seed_goes_on_from_the_first_seed() -> None:
    """A ``reset()`` without a seed after a seeded one drew a new seed from the OS, so a run
    was not reproducible from its seed (SeatEnv, aec_env and Gymnasium's SyncVectorEnv go on
    with the next hands)."""

    def run() -> list[np.ndarray]:
        env = GymVectorEnv(3, "random")
        first = env.reset(seed=0)[0]["observation"]
        for _ in range(5):
            env.step(np.argmax(env._env._outputs[1], axis=1))
        return [first, env.reset()[0]["observation"], env.reset()[0]["observation"]]

    one, two = run(), run()
    assert all(np.array_equal(a, b) for a, b in zip(one, two, strict=True))
    assert not np.array_equal(one[0], one[1]) and not np.array_equal(one[1], one[2])  # new hands
    vector = VectorEnv(3, "random")
    assert np.array_equal(one[1], vector.reset(0, episode=1)[0])  # the episode after the furthest


def test_vector_env_reset_without_a_seed_moves_on_to_new_hands() -> None:
    """``VectorEnv.reset()`` went back to episode 0 of seed 0 every time: a training loop that
    called it dealt the same hands for ever. Now it goes on as ``GymVectorEnv.reset()`` does."""
    env, other = VectorEnv(3, "random"), VectorEnv(3, "random")
    first = env.reset()[0]
    assert env.seed == 0 and np.array_equal(first, other.reset(seed=0)[0])
    assert np.array_equal(env.reset()[0], other.reset(0, episode=1)[0])
    assert env.episodes().tolist() == [1, 1, 1]
    env.reset(seed=5, episode=3)
    assert np.array_equal(env.reset()[0], other.reset(5, episode=4)[0])  # the last seed's next hands
    assert np.array_equal(env.reset(episode=0)[0], other.reset(5)[0])


def test_every_environment_refuses_use_after_close() -> None:
    """``close()`` lets the tables go; a later call is one ``RuntimeError``, where a closed
    ``GymVectorEnv`` or ``SeatEnv`` went on stepping (and ``VectorEnv`` had no ``close``)."""
    vector = VectorEnv(2, "random")
    vector.reset(seed=0)
    vector.close()
    assert vector._states.nbytes == 0 and vector._states.base is None  # a slice kept the tables alive
    vector.close()  # twice is fine
    for call in (
        lambda: vector.step([0, 0]),
        vector.reset,
        lambda: vector.legal_cards(0),
        lambda: vector.hand_state(0),
        vector.episodes,
    ):
        with pytest.raises(RuntimeError, match="the environment is closed"):
            call()
    gym_vector = GymVectorEnv(2, "random")
    obs, _ = gym_vector.reset(seed=0)
    gym_vector.close()
    with pytest.raises(RuntimeError, match="the environment is closed"):
        gym_vector.step(np.argmax(obs["action_mask"], axis=1))
    seat = SeatEnv("random")
    obs, _ = seat.reset(seed=0)
    seat.close()
    with pytest.raises(RuntimeError, match="the environment is closed"):
        seat.step(int(np.argmax(obs["action_mask"])))
    with pytest.raises(RuntimeError, match="the environment is closed"):
        seat.action_masks()


def test_gym_vector_env_follows_gymnasiums_vector_conventions() -> None:
    """Its ``np_random`` is seeded by ``reset(seed=)``, a teacher's picks come with their mask,
    ``truncated`` is a fresh array, and ``options`` (a partial reset's ``reset_mask``) are
    refused: they were ignored, and every table reset."""
    one, two = GymVectorEnv(3, "random", teacher="rule"), GymVectorEnv(3, "random")
    obs, info = one.reset(seed=1)
    two.reset(seed=1)
    assert one.np_random.integers(2**62) == two.np_random.integers(2**62)
    assert info["_teacher_action"].tolist() == [True] * 3
    _, _, _, truncated, info = one.step(info["teacher_action"])
    assert info["_teacher_action"].all() and not truncated.any()
    truncated[0] = True  # was one shared read-only array: "assignment destination is read-only"
    assert not one.step(info["teacher_action"])[3].any()
    with pytest.raises(ValueError, match="takes no options .given: reset_mask."):
        one.reset(options={"reset_mask": np.array([True, False, False])})
    assert one.reset(options={})[0]["observation"].shape == (3, OBS_SIZE)


def test_tables_that_cannot_fit_in_memory_are_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch's tables take 11 to 23 KB each at a step's peak (the README said 5 KB): a
    batch larger than the memory available was numpy's ``MemoryError`` or the process killed."""
    import hearts_sim.env.vector as vector_module

    monkeypatch.setattr(vector_module, "available_memory", lambda: 2**30)
    with pytest.raises(ValueError, match=r"100,000 tables need about 1\.6 GiB at a step's peak, and 1\.0"):
        VectorEnv(100_000, "random")
    with pytest.raises(ValueError, match="use fewer tables, or VectorEnv"):
        GymVectorEnv(50_000, "random")  # its batched space's bounds on top
    assert VectorEnv(60_000, "random", copy=False).n_envs == 60_000  # 10.8 KB a table fits
    for count in (np.int32(1_000_000), np.uint8(100)):  # counted in numpy's type: a product that
        with pytest.raises(ValueError, match=" tables need about "):  # wrapped, or OverflowError
            VectorEnv(count, "random") if count > 255 else vector_module.check_room(count, 2**24, "")
    monkeypatch.setattr(vector_module, "available_memory", lambda: None)  # nothing says: no check
    assert VectorEnv(100_000, "random").n_envs == 100_000


def test_render_follows_gymnasiums_convention(capsys: pytest.CaptureFixture[str]) -> None:
    """``render_mode="human"`` prints and returns None (SeatEnv returned the text and printed
    nothing, which Gymnasium's checker warns of); ``"ansi"`` returns it; no mode warns."""
    human = SeatEnv("random", render_mode="human")
    human.reset(seed=1)
    assert capsys.readouterr().out.startswith("standard | pass")  # reset shows the table too
    assert human.render() is None and capsys.readouterr().out.startswith("standard | pass")
    with pytest.warns(UserWarning, match="render_mode='ansi' or 'human'"):
        assert SeatEnv("random").render() is None
    for env in (GymVectorEnv(2, "random", render_mode="human"), aec_env(render_mode="human")):
        env.reset(seed=1)  # shown at every reset, as SeatEnv shows it
        assert capsys.readouterr().out.startswith("standard | pass")
    vector = GymVectorEnv(2, "random", render_mode="ansi")
    vector.reset(seed=1)
    tables = vector.render()
    assert isinstance(tables, tuple) and len(tables) == 2 and tables[0] != tables[1]
    made = gymnasium.make_vec(
        ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", render_mode="ansi", opponents="random"
    )  # a TypeError: GymVectorEnv took no render_mode
    made.reset(seed=1)
    assert made.render() == tables
    for mode in ("rgb_array", 1):
        with pytest.raises(ValueError, match="render_mode=.*: choose one of ansi, human"):
            GymVectorEnv(2, "random", render_mode=mode)  # type: ignore[arg-type]


def test_the_aec_environment_refuses_calls_before_reset_and_after_the_end() -> None:
    """Before ``reset()`` they raised AttributeError (no agent_selection); a step once every
    agent was done, a KeyError naming a player."""
    env = aec_env(render_mode="ansi")
    for call in (lambda: env.observe("player_0"), lambda: env.step(0), env.last, env.render, env.hand_state):
        with pytest.raises(RuntimeError, match="call reset.. before .*: no hand is dealt yet"):
            call()  # render and hand_state printed the zeroed record as a hand
    env.reset(seed=2)
    for _agent in env.agent_iter():
        observation, _, terminated, _, _ = env.last()
        env.step(None if terminated else int(np.flatnonzero(observation["action_mask"])[0]))
    for call in (lambda: env.step(0), lambda: env.step(None), env.last):  # last(): KeyError 'player_3'
        with pytest.raises(RuntimeError, match="the hand is over and every agent is done: call reset"):
            call()
    env.reset()
    assert env.agent_selection == "player_0"


def test_the_table_environments_refuse_a_look_before_the_first_reset() -> None:
    """Before ``reset()`` the tables are zeros: ``hand_state``, ``legal_cards``, ``render`` and
    ``action_masks`` showed them as a hand (``pass none``, no cards, nothing legal), and
    ``SeatEnv.step`` said "the hand is over"."""
    vector, seat = VectorEnv(2, "random"), SeatEnv("random", render_mode="ansi")
    gym_vector = GymVectorEnv(2, "random", render_mode="ansi")
    for call in (
        lambda: vector.hand_state(0),
        lambda: vector.legal_cards(0),
        vector.episodes,
        seat.render,
        seat.action_masks,
        gym_vector.render,
    ):
        with pytest.raises(RuntimeError, match=r"^call reset\(\) before "):
            call()
    with pytest.raises(RuntimeError, match=r"^call reset\(\) before step\(\)$"):
        seat.step(0)
    seat.reset(seed=1)
    assert seat.action_masks().sum() == 13 and "trick 1" in seat.render()


def test_a_closed_aec_environment_refuses_every_call() -> None:
    """Its ``close()`` did nothing, and it played on; the other environments refuse."""
    env = aec_env()
    env.reset(seed=1)
    env.close()
    env.close()  # twice is fine
    for call in (lambda: env.step(0), env.last, env.reset, lambda: env.observe("player_0"), env.hand_state):
        with pytest.raises(RuntimeError, match="the environment is closed: make a new one"):
            call()


def test_autoreset_past_the_last_episode_says_so_on_the_next_reset() -> None:
    """Tables stepped past episode 2**62 by their autoreset: a later ``reset()`` blamed an
    ``episode=`` that nobody passed."""
    env = VectorEnv(2, "random")
    obs, mask = env.reset(seed=0, episode=2**62)
    while env.episodes().max() <= 2**62:
        obs, mask, *_ = env.step(np.argmax(mask, axis=1))
    with pytest.raises(
        SeedError, match=r"played every episode of seed 0 \(0 .. 2\*\*62\): reset with another"
    ):
        env.reset()


def test_gym_vector_env_gives_the_teachers_pick_from_the_first_position() -> None:
    """With a teacher, ``reset``'s info holds its pick for every table's first position (it was
    empty, so DAgger on this wrapper had no target for a hand's first decision), the same pick
    as ``VectorEnv`` on the same seed, a legal one, and every step's info the next."""
    env = GymVectorEnv(3, "random", teacher="rule")
    vector = VectorEnv(3, "random", teacher="rule")
    obs, info = env.reset(seed=4)
    vector.reset(seed=4)
    for _ in range(6):
        picks = info["teacher_action"]
        assert np.array_equal(picks, vector.teacher_actions)
        assert all(obs["action_mask"][i, card] for i, card in enumerate(picks))
        obs, _, _, _, info = env.step(picks)
        vector.step(picks)
    assert "teacher_action" not in GymVectorEnv(2, "random").reset(seed=4)[1]
    assert VectorEnv(2, "random").teacher_actions is None


def test_a_seed_is_refused_not_truncated_by_every_environment() -> None:
    """1.5 was played as seed 1 by the PettingZoo environment, and -1 wrapped round to 2**64-1
    in the vector environment: both are one-line refusals now, as everywhere else."""
    for make in (aec_env, lambda: GymVectorEnv(2), lambda: VectorEnv(2)):
        env = make()
        for seed in (1.5, -1, True, 2**64, float("inf")):
            with pytest.raises(ValueError, match="is not valid: choose an integer in 0 .. 2\\*\\*64-1"):
                env.reset(seed=seed)  # type: ignore[arg-type]


def test_an_action_is_a_card_index_in_every_single_table_environment() -> None:
    """``int(action)`` played 1.5 and True as card 1, and 2**64 raised OverflowError in the
    PettingZoo environment; a 0-d integer array (``np.argmax``'s) is a card like any integer."""
    aec = aec_env("standard")
    aec.reset(seed=1)
    legal = int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0])
    strict = SeatEnv("random", on_illegal="raise")
    observation, _ = strict.reset(seed=np.int64(1))  # Gymnasium's own check refused numpy seeds
    assert np.array_equal(observation["observation"], SeatEnv("random").reset(seed=1)[0]["observation"])
    ending = SeatEnv("random")  # on_illegal="end" ends the hand on an illegal card, not on a non-card
    ending.reset(seed=1)
    for env in (aec, strict, ending):
        for action in (1.5, True, "2C", None):
            with pytest.raises(ValueError, match=f"an action is a card index 0..51, not {action!r}"):
                env.step(action)
    for action in (2**64, -1, 52):
        with pytest.raises(ValueError, match=f"cannot pick {action} \\(not a card index 0..51\\) now"):
            aec.step(action)
        for seat_env in (strict, ending):  # outside Discrete(52): no move to end the hand on
            with pytest.raises(ValueError, match=f"{action} \\(not a card index 0..51\\) is not legal now"):
                seat_env.step(action)
    with pytest.raises(ValueError, match="unknown agent 'player_9': choose player_0, player_1"):
        aec.observe("player_9")
    aec.step(np.array(legal))  # a 0-d array
    strict_legal = int(np.flatnonzero(observation["action_mask"])[0])
    strict.step(np.array(strict_legal))


def test_gymnasium_makes_the_environments_by_id() -> None:
    """``gymnasium.make`` gives the ``SeatEnv`` its arguments describe (the same hand as one made
    directly, without a warning from Gymnasium's checker); ``make_vec`` a ``GymVectorEnv``
    through the vector entry point, or Gymnasium's own vectors of ``SeatEnv``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        made = gymnasium.make("hearts_sim.env.gym:HeartsSeat-v0", opponents="easy", rules="qdan5", seat=2)
        direct = SeatEnv("easy", "qdan5", seat=2)
        (obs, _), (expected, _) = made.reset(seed=3), direct.reset(seed=3)
        done = False
        while not done:
            assert np.array_equal(obs["observation"], expected["observation"])
            card = int(np.flatnonzero(obs["action_mask"])[-1])
            obs, reward, done, _, info = made.step(card)
            expected, expected_reward, _, _, _ = direct.step(card)
            assert reward == expected_reward
        assert "score" in info and not made.get_wrapper_attr("action_masks")().any()
        shown = gymnasium.make(ENV_ID, render_mode="ansi", opponents="random")  # it warned: no render fps
        shown.reset(seed=1)
        assert shown.render().startswith("standard | pass | pass left | trick 1")
    vector = gymnasium.make_vec(ENV_ID, num_envs=3, vectorization_mode="vector_entry_point", opponents="rule")
    assert isinstance(vector, GymVectorEnv) and vector.num_envs == 3
    assert vector.reset(seed=1)[0]["observation"].shape == (3, OBS_SIZE)
    synced = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", opponents="rule")
    assert synced.reset(seed=1)[0]["action_mask"].shape == (2, 52)


_WITHOUT = """
import sys
for library in {blocked!r}:
    sys.modules[library] = None  # as if not installed: importing it raises ModuleNotFoundError
import hearts_sim.env as env
print(env.VectorEnv.__name__)
try:
    getattr(env, {name!r})
except ModuleNotFoundError as error:
    print(error)
"""


@pytest.mark.parametrize(
    ("name", "blocked", "named"),
    [
        ("SeatEnv", ("gymnasium",), "gymnasium"),
        ("GymVectorEnv", ("gymnasium", "pettingzoo"), "gymnasium"),
        ("aec_env", ("pettingzoo",), "pettingzoo"),
        ("HeartsAEC", ("gymnasium", "pettingzoo"), "gymnasium"),  # the first it imports
    ],
)
def test_an_environment_without_its_library_names_the_one_to_install(
    name: str, blocked: tuple[str, ...], named: str
) -> None:
    """Without the ``learn`` extra, ``VectorEnv`` still loads and each other environment names
    the library it lacks; ``aec_env`` without Gymnasium ended in a bare ``No module named
    'gymnasium'`` until 2026-12-06 (the PettingZoo module imports Gymnasium's spaces first)."""
    code = _WITHOUT.format(name=name, blocked=blocked)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "VectorEnv",
        f'hearts_sim.env.{name} needs {named}: pip install "hearts-sim[learn]" (in a checkout: '
        f'pip install -e ".[learn]"), or pip install {named}',
    ]
