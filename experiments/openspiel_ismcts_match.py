"""Our search agents against OpenSpiel's C++ IS-MCTS bot, in duplicate, on OpenSpiel's rules.

Every deal (our ``openspiel`` preset: the queen breaks hearts, a random pass direction
that includes no pass) is played in all 14 seatings of agent A (ours) and B (OpenSpiel's
``ISMCTSBot``) over the 4 seats. A pyspiel state is driven in lockstep with our
``HandState``: the same deal, direction, passes and plays, the seat to move and the legal
set checked equal at every card, and the final scores checked equal (``26 - returns``).

Passing: each side passes with its own policy where OpenSpiel allows. Our seats pass with the
agent's own pass policy. OpenSpiel's bot passes itself at seat 0; at seats 1 to 3 it cannot
(``ResampleFromInfostate`` is wrong during the pass phase unless the searching player is seat
0: it crashes), so those seats pass with ``--openspiel-pass`` (default ``rule``). With
``--pass-agent X`` one pass policy of ours passes for all four seats instead, and the match
compares card play only (the README's earlier figures).

    python experiments/openspiel_ismcts_match.py                      # small: 2 deals, ismcts
    python experiments/openspiel_ismcts_match.py --agent pimc --deals 20 --workers 2
    python experiments/openspiel_ismcts_match.py --agent hard --sims 10000 --deals 40 --workers 2

Prints A's and B's mean score per hand, A minus B with a 95% confidence interval over
deals (negative: A takes fewer points), and the mean time per decision of each side. Our side
is reproducible from ``--seed``; OpenSpiel's bot is not (two ``ISMCTSBot`` of the same seed in
one process play different cards), so a rerun gives other figures within the interval.
"""

from __future__ import annotations

import itertools
import multiprocessing
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from agents.dispatch import loop_pass, loop_play
from agents.registry import parse_agent
from hearts_sim.apps.script import ScriptParser, master_seed, number, run_script, whole
from hearts_sim.engine.rng import derive_seed
from hearts_sim.game.hand_state import HandState
from hearts_sim.studies.openspiel_peer import DIRECTION_TO_ACTION, os_to_our, our_to_os
from hearts_sim.studies.stats import mean_interval

N_SEATS = 4
TOTAL_POINTS = 26
SEATINGS = [mix for mix in itertools.product((True, False), repeat=N_SEATS) if 0 < sum(mix) < N_SEATS]


@dataclass(frozen=True)
class MatchConfig:
    agent: str = "ismcts"
    pass_agent: str = ""  # one pass policy for all four seats; empty: each side passes its own way
    openspiel_pass: str = "rule"  # OpenSpiel's seats 1-3 (its bot can pass only at seat 0)
    sims: int = 1000
    uct_c: float = 2.0
    seed: int = 0


def _openspiel_bot(config: MatchConfig, seed: int):  # type: ignore[no-untyped-def]
    import pyspiel

    return pyspiel.ISMCTSBot(
        seed,
        pyspiel.RandomRolloutEvaluator(1, seed),
        config.uct_c,
        config.sims,
        -1,  # max_world_samples: unlimited
        pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        False,  # use_observation_string
        False,  # allow_inconsistent_action_sets
    )


def play_seating(config: MatchConfig, deal: int, ours: tuple[bool, ...]) -> tuple[list[int], list[float]]:
    """One hand of deal ``deal``; ``ours[s]``: seat s is agent A. Returns (scores, decision
    seconds of A then B summed, as [a_time, a_count, b_time, b_count])."""
    import pyspiel

    state = HandState.deal("openspiel", seed=config.seed, hand=deal)
    rules = state.rules.to_tuple()
    agent = parse_agent(config.agent).play_policy
    ours_pass = parse_agent(config.pass_agent or config.agent).pass_policy
    theirs_pass = parse_agent(config.pass_agent or config.openspiel_pass).pass_policy
    bot_seed = int(derive_seed(np.uint64(config.seed), deal * 64 + SEATINGS.index(ours))) >> 33
    bot = _openspiel_bot(config, bot_seed)

    game = pyspiel.load_game("hearts")
    os_state = game.new_initial_state()
    os_state.apply_action(DIRECTION_TO_ACTION[state.pass_direction])
    dealt = [sorted(state.dealt(s)) for s in range(N_SEATS)]
    for i in range(13):  # OpenSpiel deals card i to seat i % 4
        for seat in range(N_SEATS):
            os_state.apply_action(our_to_os(dealt[seat][i]))

    timing = [0.0, 0.0, 0.0, 0.0]
    if state.phase == "pass":
        passes = []
        for seat in range(N_SEATS):  # simultaneous: every pass is chosen before any is applied
            start = time.perf_counter()
            if not ours[seat] and seat == 0 and not config.pass_agent:
                cards = 0  # OpenSpiel's bot passes below, one card at a time
            else:
                passer = ours_pass if ours[seat] else theirs_pass
                cards = loop_pass(passer, state.record, rules, seat)
            passes.append(cards)
            if ours[seat]:
                timing[0] += time.perf_counter() - start
                timing[1] += 1
        for seat in range(N_SEATS):  # seat 0's three cards, then seat 1's, ...
            if seat == 0 and not passes[0]:
                start = time.perf_counter()
                for _ in range(3):
                    action = bot.step(os_state)
                    passes[0] |= 1 << os_to_our(action)
                    os_state.apply_action(action)
                timing[2] += time.perf_counter() - start
                timing[3] += 1
                continue
            for card in range(52):
                if passes[seat] >> card & 1:
                    os_state.apply_action(our_to_os(card))
        for seat in range(N_SEATS):
            state.pass_cards(seat, passes[seat])

    while state.phase == "play":
        seat = state.current_player
        assert seat is not None and os_state.current_player() == seat, "seat to move differs"
        legal = int(state.legal_moves())
        os_legal = sum(1 << os_to_our(a) for a in os_state.legal_actions())
        assert legal == os_legal, f"legal sets differ: ours {legal:#x}, OpenSpiel {os_legal:#x}"
        start = time.perf_counter()
        card = loop_play(agent, state.record, rules, seat) if ours[seat] else os_to_our(bot.step(os_state))
        side = 0 if ours[seat] else 2
        if legal & (legal - 1):  # time only real choices
            timing[side] += time.perf_counter() - start
            timing[side + 1] += 1
        state.play(card)
        os_state.apply_action(our_to_os(card))
    scores = [int(x) for x in state.scores()]
    returns = os_state.returns()
    assert scores == [TOTAL_POINTS - int(r) for r in returns], f"scores {scores} vs returns {returns}"
    return scores, timing


DealResult = tuple[float, float, float, list[float]]


def play_deal(args: tuple[MatchConfig, int]) -> DealResult:
    """All 14 seatings of one deal: (A's mean score, B's mean score, A - B, timing sums)."""
    config, deal = args
    a_scores: list[int] = []
    b_scores: list[int] = []
    timing = [0.0, 0.0, 0.0, 0.0]
    for ours in SEATINGS:
        scores, t = play_seating(config, deal, ours)
        for seat in range(N_SEATS):
            (a_scores if ours[seat] else b_scores).append(scores[seat])
        timing = [x + y for x, y in zip(timing, t, strict=True)]
    a, b = float(np.mean(a_scores)), float(np.mean(b_scores))
    return a, b, a - b, timing


def _reported(results: Iterable[DealResult], jobs: list[tuple[MatchConfig, int]]) -> list[DealResult]:
    """The deals' results, each reported on stderr as it arrives (a long run keeps its record)."""
    out = []
    for (_, deal), result in zip(jobs, results, strict=True):
        print(f"deal {deal}: A - B {result[2]:+.3f}", file=sys.stderr, flush=True)
        out.append(result)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = ScriptParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="ismcts", help="our agent spec (A), e.g. pimc or ismcts(ms=50)")
    parser.add_argument(
        "--pass-agent", default="", help="one pass policy for all four seats (default: each side its own)"
    )
    parser.add_argument(
        "--openspiel-pass",
        default="rule",
        help="the pass policy of OpenSpiel's seats 1-3 (its bot passes at 0)",
    )
    parser.add_argument(
        "--deals", type=whole("--deals", 1, 1_000_000), default=2, help="deals, each played in 14 seatings"
    )
    parser.add_argument(
        "--sims",
        type=whole("--sims", 1, 10_000_000),
        default=1000,
        help="OpenSpiel IS-MCTS simulations per move",
    )
    parser.add_argument(
        "--uct-c",
        type=number("--uct-c", 0, open_low=True),
        default=2.0,
        help="OpenSpiel IS-MCTS exploration constant",
    )
    parser.add_argument("--seed", type=master_seed(), default=0)
    parser.add_argument("--first-deal", type=whole("--first-deal", 0, 2**40), default=0)
    parser.add_argument(
        "--workers", type=whole("--workers", 1, 1024), default=1, help="processes (deals are independent)"
    )
    args = parser.parse_args(argv)
    for spec in (args.agent, args.pass_agent or args.agent, args.openspiel_pass):
        parse_agent(spec)  # an unknown name before any deal is played
    config = MatchConfig(args.agent, args.pass_agent, args.openspiel_pass, args.sims, args.uct_c, args.seed)
    jobs = [(config, d) for d in range(args.first_deal, args.first_deal + args.deals)]
    started = time.perf_counter()
    if args.workers > 1:
        with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
            results = _reported(pool.imap(play_deal, jobs, chunksize=1), jobs)
    else:
        results = _reported(map(play_deal, jobs), jobs)
    a, b, diff = (np.array([r[i] for r in results]) for i in range(3))
    timing = np.sum([r[3] for r in results], axis=0)
    _, half = mean_interval(diff)
    passes = (
        f"passes by {args.pass_agent}"
        if args.pass_agent
        else f"own passes (OpenSpiel's bot at seat 0, {args.openspiel_pass} at its seats 1-3)"
    )
    print(
        f"A = {args.agent} vs B = OpenSpiel ISMCTSBot(sims={args.sims}, uct_c={args.uct_c}, random rollouts, "
        f"max visits), rules openspiel, {passes}"
    )
    elapsed = time.perf_counter() - started
    print(f"{len(diff)} deals x {len(SEATINGS)} seatings, seed {args.seed}, {elapsed:.0f} s")
    print(f"mean score per hand: A {a.mean():.3f}, B {b.mean():.3f}")
    print(f"A - B = {diff.mean():+.3f} ± {half:.3f} points/hand (95% CI over deals)")
    print("per deal A - B:", " ".join(f"{d:+.3f}" for d in diff))
    print(
        f"time per decision (choices and passes): A {1000 * timing[0] / max(timing[1], 1):.1f} ms, "
        f"B {1000 * timing[2] / max(timing[3], 1):.1f} ms"
    )


if __name__ == "__main__":
    run_script(main)
