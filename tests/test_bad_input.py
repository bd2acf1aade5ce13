"""Bad input on the command line, every subcommand: one line on stderr, exit code 2, no traceback,
nothing written, and nothing run (every case is refused before any kernel is called).

Every case runs in a process of its own, forked from the test's process (which has imported
the toolkit once), several at a time, so the table can be long and the suite stays short; the
first case of each subcommand runs again through ``python -m hearts_sim`` in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hearts_sim.apps.cli import main

ROOT = Path(__file__).resolve().parents[1]
HUGE = "99999999999999999999"
SEED_TOO_BIG = str(2**64)

# (subcommand arguments, a fragment the one error line must contain). ``{tmp}`` is a scratch
# directory; ``{config:NAME}`` a config file written from CONFIGS; ``{file}`` a plain file.
CASES: list[tuple[list[str], str]] = [
    # ---- the command itself
    ([], "required: COMMAND (hearts-sim --help lists them; hearts-sim tournament plays a default"),
    (["nosuch"], "invalid choice: 'nosuch'"),
    (["tournment"], "invalid choice: 'tournment' (choose from 'bench', 'tournament', "),
    (["tournment"], "'serve'); did you mean 'tournament'?"),
    (["--nosuch"], "required: COMMAND"),
    (["rules", "extra"], "unrecognized arguments: extra"),
    (["agents", "--nosuch"], "unrecognized arguments: --nosuch"),
    (["agents", "nrmal"], "unknown agent or level 'nrmal': valid agents are random, "),  # as match says it
    (["agents", "rule", "nrmal"], "easy, hard, normal; did you mean 'normal'?"),
    # ---- tournament: counts, seeds, threads
    (["tournament", "lowest", "--deals", "0"], "--deals 0 is not valid"),
    (
        ["tournament", "lowest", "--chunk-deals", "0"],
        "--chunk-deals 0 is not valid",
    ),  # 0: automatic in Python
    (["tournament", "lowest", "--deals", "-5"], "--deals -5 is not valid"),
    (["tournament", "lowest", "--deals", "abc"], "--deals abc is not valid"),
    (["tournament", "lowest", "--deals", "2.7"], "--deals 2.7 is not valid"),
    (["tournament", "lowest", "--deals", "1e-3"], "--deals 1e-3 is not valid"),  # 1e3 is taken: whole
    (["tournament", "lowest", "--deals", HUGE], f"--deals {HUGE} is not valid"),
    (["tournament", "lowest", "--deals", ""], "is not valid"),
    (["tournament", "lowest", "--hands", "0"], "--hands 0 is not valid"),  # as written: it said --deals
    (["tournament", "lowest", "--hands", HUGE], "is not valid"),
    (["tournament", "lowest", "--deals", "2.5"], "--deals 2.5 is not valid"),
    (["tournament", "lowest", "--deals", "1e999999999"], "--deals 1e999999999 is not valid"),  # not built
    (["tournament", "lowest", "--deals"], "expected one argument"),
    (["tournament", "lowest", "--seed", "-1"], "--seed -1 is not valid"),
    (["tournament", "lowest", "--seed", SEED_TOO_BIG], "0 .. 2**64-1"),
    (["tournament", "lowest", "--seed", "1.5"], "--seed 1.5 is not valid"),
    (["tournament", "lowest", "--seed", "abc"], "--seed abc is not valid"),
    (  # it said 1 .. 1024 where --threads 3 said 1 .. 2 (this machine's cores)
        ["tournament", "lowest", "--threads", "0"],
        "cores; with --cluster, up to 1,024 per shard on the workers)",
    ),
    (["tournament", "lowest", "--threads", "-1"], "--threads -1 is not valid"),
    (["tournament", "lowest", "--threads", "100000"], "--threads 100000 is not valid"),
    (  # every game was cut off undecided after 1,000 hands: win rates of 0, ratings all the same
        ["tournament", "random", "lowest", "--games", "--rule", "target_score=100000"],
        "target_score=100000 cannot be reached: a game is cut off undecided after 1,000 hands",
    ),
    # here at most this machine's cores; with --cluster per shard on the workers (refused here)
    (
        ["match", "rule", "random", "--threads", "1000"],
        "cores; with --cluster, up to 1,024 per shard on the workers)",
    ),
    (["tournament", "lowest", "--threads", "two"], "--threads two is not valid"),
    # ---- tournament: rules
    (["tournament", "lowest", "--rules", "nosuchpreset"], "unknown rules preset 'nosuchpreset'"),
    (["tournament", "lowest", "--rules", ""], "--rules needs a value"),
    # the last preset silently won: qdan5 then quick played 4 players to 50
    (
        ["match", "rule", "random", "--rules", "qdan5", "--rules", "quick"],
        "--rules is given twice (qdan5 and quick): give it once, a preset and its switches together",
    ),
    (["tournament", "lowest", "--rule", "moon=sometimes"], "moon='sometimes' is not valid"),
    (["tournament", "lowest", "--rule", "nosuchswitch=1"], "unknown rule switch 'nosuchswitch'"),
    (["tournament", "lowest", "--rule", "moon"], "is not of the form key=value"),
    (["tournament", "lowest", "--rule", "n_players=6"], "n_players=6 is not supported"),
    (["tournament", "lowest", "--rule", "n_players=four"], "must be an integer"),
    (["tournament", "lowest", "--rule", "target_score=0"], "target_score=0 is out of range"),
    (["tournament", "lowest", "--rule", "target_score=999999999999999999999"], "is out of range"),
    (["tournament", "lowest", "--rule", "jd_bonus=5"], "jd_bonus=5 is out of range"),
    (["tournament", "lowest", "--rule", "moon=off", "--rule", "moon=self_minus"], "moon is set twice"),
    (["tournament", "--config", "{config:rule_twice}"], "moon is set twice (moon=off and moon=self_minus)"),
    (
        ["tournament", "lowest", "--rule", "moon=OFF"],
        "choose one of others_plus, self_minus, off; did you mean 'off'",
    ),
    (["tournament", "lowest", "--rule", "black_maria=maybe"], "choose true or false"),
    (["tournament", "lowest", "--rules", "qdan3", "--rule", "pass_cycle=across"], "pass_cycle='across'"),
    (["tournament", "lowest", "--rule", "deck_mode=kitty"], "deck_mode='kitty' needs 3 or 5 players"),
    (  # it played as pass_count=0 alone under another label, which pooled with nothing
        ["tournament", "lowest", "--rule", "pass_count=0", "--rule", "pass_cycle=left"],
        "pass_cycle='left' directs no pass: pass_count=0 never passes (drop pass_cycle)",
    ),
    # ---- tournament: agents and their parameters
    (["tournament", "nosuchagent"], "unknown agent 'nosuchagent'"),
    (["tournament", "lowest", ""], "an agent spec must be a non-empty string"),
    (["tournament", "mc(nosuch=1)"], "has no parameter 'nosuch'"),
    (["tournament", "mc(samples=-1)"], "mc: parameter samples='-1' is not valid: choose an integer in 1 .."),
    (["tournament", "mc(samples=0)"], "parameter samples='0' is not valid"),
    (["tournament", f"mc(samples={HUGE})"], "parameter samples"),
    (["tournament", "mc(samples=2.5)"], "choose an integer"),
    (["tournament", "mc(samples=many)"], "parameter samples='many'"),
    (["tournament", "mc(ms=-5)"], "parameter ms='-5' is not valid: choose a number in 0 .. 60000"),
    (["tournament", "mc(ms=nan)"], "parameter ms='nan'"),
    (["tournament", "mc(ms=inf)"], "parameter ms='inf'"),
    (["tournament", "mc(pass_samples=1)"], "parameter pass_samples='1'"),
    (["tournament", "mc(rollout=nosuch)"], "choose one of random, greedy, rule"),
    (["tournament", "mc(rollout=1)"], "choose one of random, greedy, rule"),
    (["tournament", "mc(samples=1,samples=2)"], "is given twice"),
    (["tournament", "mc(samples)"], "is not of the form name=value"),
    (["tournament", "ismcts(c=nan)"], "ismcts: parameter c='nan' is not valid: choose a number in 0 .. 100"),
    (["tournament", "ismcts(c=-1)"], "parameter c='-1'"),
    (["tournament", "ismcts(c=1e308)"], "parameter c='1e308'"),
    (["tournament", "ismcts(iterations=0)"], "parameter iterations='0'"),
    (["tournament", "ismcts(iterations=-3)"], "parameter iterations='-3'"),
    (["tournament", "ismcts(iterations=99999999)"], "parameter iterations='99999999'"),
    (["tournament", "ismcts(epsilon=5)"], "parameter epsilon='5'"),
    (["tournament", "ismcts(epsilon=-0.1)"], "parameter epsilon='-0.1'"),
    (["tournament", "ismcts(ms=1e9)"], "parameter ms='1e9'"),
    (["tournament", "ismcts(ms=nan)"], "parameter ms='nan'"),
    (["tournament", "ismcts(prior=-1)"], "parameter prior='-1'"),
    (["tournament", "ismcts(prior=nan)"], "parameter prior='nan'"),
    (["tournament", "ismcts(prior_weights=nosuch)"], "parameter prior_weights='nosuch' is not valid"),
    (["tournament", "pimc(c=nan,iterations=200)"], "pimc: parameter c='nan'"),
    (["tournament", "pimc(worlds=0)"], "parameter worlds='0'"),
    (["tournament", "pimc(worlds=-1)"], "parameter worlds='-1'"),
    (["tournament", "pimc(iterations=1e5)"], "parameter iterations='1e5'"),
    (
        ["tournament", "rule(careless=2)"],
        "rule: parameter careless='2' is not valid: choose a number in 0 .. 1",
    ),
    (["tournament", "rule(careless=-0.5)"], "parameter careless='-0.5'"),
    (["tournament", "rule(spade_guard=1.5)"], "parameter spade_guard='1.5'"),
    (["tournament", "rule(spade_guard=14)"], "parameter spade_guard='14'"),
    (["tournament", "rule(defend=44)"], "parameter defend='44'"),
    (["tournament", "rule(void_bonus=inf)"], "parameter void_bonus='inf'"),
    (["tournament", "rule(flush=2)"], "parameter flush='2'"),
    (["tournament", "random(x=1)"], "has no parameter 'x'"),
    (["tournament", "rule("], "unbalanced parentheses"),
    (["tournament", "rule)"], "unbalanced parentheses"),
    (["tournament", "pass=rule,pass=random"], "names the pass policy twice"),
    (["tournament", "pass=nosuch,play=rule"], "unknown agent 'nosuch'"),
    (["tournament", "pass=rule,bogus"], "combine policies as pass=NAME,play=NAME"),
    # one role alone played that policy in both, labelled as the plain policy
    (["tournament", "pass=lowest", "rule"], "'pass=lowest' names no play policy: write pass=lowest,play="),
    (["tournament", "play=hard", "rule"], "'play=hard' names no pass policy: write pass=NAME,play=hard"),
    (["tournament", "pass=rule,play=", "rule"], "'pass=rule,play=' names no play policy after play="),
    (["tournament", "1rule"], "malformed agent spec"),
    # ---- tournament: output, resume, repair, config, cluster
    (["tournament", "lowest", "--deals", "5", "--out", "/proc/hearts-sim-cannot-write"], "cannot write"),
    (
        ["tournament", "lowest", "--deals", "5", "--out", "{file}"],
        "is a file, not a folder: choose a new or empty",
    ),
    (["tournament", "lowest", "--deals", "5", "--out", "{tmp}/.."], "exists and is not an empty directory"),
    (["tournament", "lowest", "--out", ""], "--out needs a value"),
    (["tournament", "--resume", "/nonexistent-run"], "holds no tournament run"),
    (["tournament", "--resume", "{tmp}"], "holds no tournament run"),
    (["tournament", "--resume", "{run:empty_manifest}"], "holds no readable tournament configuration"),
    (["tournament", "--resume", "{run:list_manifest}"], "is not a tournament manifest"),
    (["tournament", "--resume", "{run:garbage_manifest}"], "cannot read"),
    (["tournament", "--resume", "{tmp}", "lowest"], "drop AGENT"),
    (["tournament", "--resume", "{tmp}", "--deals", "5"], "drop --deals"),
    (["tournament", "--resume", "{tmp}", "--seed", "0"], "drop --seed"),  # 0 == False: it was ignored
    (["tournament", "--resume", "{tmp}", "--out", "{tmp}/x"], "drop --out"),
    (["tournament", "--resume", "{tmp}", "--seed", "3"], "drop --seed"),
    (["tournament", "--resume", "{tmp}", "--rules", "qdan3"], "drop --rules"),
    (["tournament", "--resume", "{tmp}", "--games"], "drop --games"),
    (["tournament", "--resume", "{tmp}", "--chunk-deals", "4"], "drop --chunk-deals"),  # the manifest's
    (["tournament", "--resume", "{tmp}", "--config", "{config:good}"], "drop --config"),
    (["tournament", "--repair"], "--repair works with --resume"),
    (["tournament", "--config", "/nonexistent.toml"], "config file /nonexistent.toml does not exist"),
    (["tournament", "--config", "{config:not_toml}"], "cannot read config file"),
    (["tournament", "--config", "{config:unknown_key}"], "unknown key 'agent' (known: agents, chunk_deals, "),
    (["match", "--config", "{config:unknown_key}"], "threads); did you mean 'agents'?"),
    (["tournament", "--config", "{config:hands_text}"], "hands = 'abc' is not valid"),
    (["tournament", "--config", "{config:hands_float}"], "hands = 2.7 is not valid"),
    (["tournament", "--config", "{config:hands_bool}"], "hands = True is not valid"),
    (["tournament", "--config", "{config:deals_zero}"], "deals = 0 is not valid"),
    (["tournament", "--config", "{config:deals_and_hands}"], "sets 'deals' a second time"),
    (["tournament", "--config", "{config:games_text}"], "games = 'no' is not valid"),
    (["tournament", "--config", "{config:agents_text}"], "agents = 'rule' is not valid"),
    (["tournament", "--config", "{config:agents_numbers}"], "is not valid: choose a list of strings"),
    (["tournament", "--config", "{config:seed_negative}"], "seed = -1 is not valid"),
    (["tournament", "--config", "{config:seed_huge}"], f"seed = {2**64} is not valid"),
    (["tournament", "--config", "{config:threads_zero}"], "threads = 0 is not valid"),
    (["tournament", "--config", "{config:out_number}"], "out = 5 is not valid"),
    (["tournament", "--config", "{config:rule_text}"], "rule = 'moon=off' is not valid"),
    (["tournament", "--config", "{config:rules_unknown}"], "unknown rules preset"),
    (["tournament", "--config", "{config:bad_agent}"], "unknown agent 'nosuch'"),
    (["tournament", "lowest", "random", "--cluster", "bogus"], "--cluster 'bogus' is not an address"),
    (["tournament", "lowest", "random", "--cluster", "local:0"], "local:N needs a number"),
    (["tournament", "lowest", "random", "--cluster", "local:x"], "local:N needs a number"),
    (["tournament", "lowest", "random", "--cluster", "tcp://host:99999"], "is not an address"),
    (["tournament", "lowest", "random", "--cluster", "tcp://:8786"], "is not an address"),
    # ---- match
    (["match", "lowest"], "exactly 2 agents, got 1"),
    (["match", "lowest", "random", "highest"], "exactly 2 agents, got 3"),
    (["match", "--deals", "4"], "exactly 2 agents, got none"),  # it said 3: the tournament's default
    (["match", "easy(careless=0.5)", "lowest"], "'easy' is a level and takes no parameters: it is rule("),
    (["match", "lowest", "random", "--deals", "0"], "--deals 0 is not valid"),
    (["match", "lowest", "random", "--seed", "-1"], "--seed -1 is not valid"),
    (["match", "ismcts(c=nan)", "random", "--deals", "1"], "ismcts: parameter c='nan'"),
    (["match", "lowest", "nosuch"], "unknown agent 'nosuch'"),
    # a typo is answered with the name it most likely meant, after the valid ones
    (["match", "rule", "nrmal"], "unknown agent 'nrmal': valid agents are random, lowest, highest, rule"),
    (["match", "rule", "nrmal"], "easy, hard, normal; did you mean 'normal'?"),
    (["match", "rule", "ismcts(iteration=5)"], "; did you mean 'iterations'?"),
    (["match", "rule", "random", "--rules", "standrd"], "; did you mean 'standard'?"),
    (["match", "rule", "random", "--rule", "mooon=off"], "; did you mean 'moon'?"),
    (
        ["match", "rule", "random", "--rule", "moon=of"],
        "choose one of others_plus, self_minus, off; did you mean 'off'?",
    ),
    (["match", "--resume", "{tmp}", "lowest", "random"], "drop AGENT"),
    (["match", "--resume", "{tmp}", "--seed", "0"], "drop --seed"),
    (["match", "--config", "{config:three_agents}"], "exactly 2 agents, got 3"),
    (
        ["match", "lowest", "random", "--sprt", "0"],
        "--sprt 0 is not valid: choose a number above 0 and at most 43",
    ),
    (
        ["match", "lowest", "random", "--sprt", "-0.5"],
        "--sprt -0.5 is not valid: choose a number above 0 and",
    ),
    (["match", "lowest", "random", "--sprt", "nan"], "--sprt nan is not valid"),
    (["match", "lowest", "random", "--sprt", "50"], "--sprt 50 is not valid"),
    (
        ["match", "lowest", "random", "--sprt", "0.5", "--sprt-alpha", "0"],
        "choose a number above 0 and below 0.5",
    ),
    (
        ["match", "lowest", "random", "--sprt", "0.5", "--sprt-beta", "0.5"],
        "--sprt-beta 0.5 is not valid: choose a",
    ),
    (["match", "lowest", "random", "--sprt-alpha", "0.01"], "give --sprt GAIN too"),
    (["match", "lowest", "random", "--sprt", "0.5", "--sprt-null", "0.5"], "choose a gain below --sprt 0.5"),
    (["match", "lowest", "random", "--sprt-null", "0.2"], "give --sprt GAIN too"),
    (["match", "--resume", "{tmp}", "--sprt", "0.5"], "drop --sprt"),
    (["match", "lowest", "random", "--sprt", "0.5", "--games"], "not whole games"),
    (
        ["tournament", "lowest", "random", "--sprt", "0.5"],
        "unrecognized arguments: --sprt 0.5 (--sprt is an option of match)",
    ),
    # a near miss of the command's own option first: these were pointed at replay's --hand and
    # --game, and at tournament's --games, alone, or given no hint
    (
        ["match", "rule", "random", "--deals", "10", "--hands", "50"],
        "--deals 10 and --hands 50 are one option",
    ),
    (  # as written: it quoted the parsed 10
        ["match", "rule", "random", "--deals", "1e1", "--hands", "5"],
        "--deals 1e1 and --hands 5 are one option (--deals)",
    ),
    (
        ["match", "rule", "random", "--deals", "10", "--deals", "50"],
        "--deals is given twice (10 and 50): give",
    ),
    (["bench", "--hand", "10"], "--hand 10; did you mean '--hands'? (--hand is an option of replay)"),
    (
        ["tournament", "rule", "random", "--game"],
        "--game; did you mean '--games'? (--game is an option of replay)",
    ),
    (
        ["replay", "{run:good}", "--games"],
        "did you mean '--game'? (--games is an option of tournament and match and levels)",
    ),
    (
        ["match", "rule", "random", "--seeds", "3"],
        "unrecognized arguments: --seeds 3; did you mean '--seed'?",
    ),
    # ---- bench
    (["bench", "--hands", "0"], "--hands 0 is not valid"),
    (["bench", "--hands", HUGE], f"--hands {HUGE} is not valid"),
    (["bench", "--hands", "abc"], "--hands abc is not valid"),
    (["bench", "--threads", "0"], "--threads 0 is not valid"),
    (["bench", "--openspiel-hands", "-1"], "--openspiel-hands -1 is not valid"),
    # no abbreviations: --rule was once taken for --rules and refused as a preset 'n_players=3'
    (["bench", "--rep", "1"], "unrecognized arguments: --rep 1"),
    (["bench", "--rule", "moon=of"], "moon='of' is not valid: choose one of"),
    (["bench", "--rule", "n_players=3", "--rule", "n_players=5"], "n_players is set twice"),
    (["tournament", "rule", "random", "--deal", "5"], "unrecognized arguments: --deal 5"),
    (["bench", "--repeats", "0"], "--repeats 0 is not valid"),
    (["bench", "--repeats", "1000"], "--repeats 1000 is not valid"),
    (["bench", "--seed", "-1"], "--seed -1 is not valid"),
    (["bench", "--seed", SEED_TOO_BIG], "0 .. 2**64-1"),
    (["bench", "--rules", "nosuch"], "unknown rules preset 'nosuch'"),
    # ---- levels
    (["levels", "--ladder", "random"], "needs at least two agents"),
    (["levels", "--ladder", "random,nosuch"], "unknown agent 'nosuch'"),
    (  # the ladder given as words: "unrecognized arguments: easy", without a word of why
        ["levels", "--ladder", "random", "easy"],
        "easy (--ladder takes its agents as one word, commas between: --ladder random,easy)",
    ),
    (  # the same word earlier on the line (an --out easy) hid the hint
        ["levels", "--out", "easy", "--ladder", "random", "easy"],
        "easy (--ladder takes its agents as one word, commas between: --ladder random,easy)",
    ),
    (["tournament", "normal,easy"], "pass=NAME,play=NAME; to name 2 agents, give them apart: normal easy"),
    (["levels", "--ladder", ","], "needs at least two agents"),
    (["levels", "--ladder", "easy,normal,easy"], "names easy twice"),  # it measured easy over easy
    # an empty step was dropped: random,,easy measured random against easy, without a word
    (["levels", "--ladder", "random,,easy"], "has an empty step"),
    (["levels", "--ladder", "random,easy,"], "has an empty step"),
    (["levels", "--ladder", ",random,easy"], "has an empty step"),
    (["levels", "--deals", "0"], "--deals 0 is not valid"),
    (["levels", "--hands", "-1"], "--hands -1 is not valid"),
    (["levels", "--games", "0"], "--games 0 is not valid"),
    (["levels", "--table-deals", "0"], "--table-deals 0 is not valid"),
    (["levels", "--table-hands", "abc"], "--table-hands abc is not valid"),
    (["levels", "--search-deals", "-1"], "--search-deals -1 is not valid"),
    (["levels", "--search-hands", "0"], "--search-hands 0 is not valid"),
    (["levels", "--search-games", "0"], "--search-games 0 is not valid"),
    (["levels", "--search-table-deals", "0"], "--search-table-deals 0 is not valid"),
    (["levels", "--timing-hands", "0"], "--timing-hands 0 is not valid"),
    (["levels", "--seed", "-1"], "--seed -1 is not valid"),
    (["levels", "--threads", "0"], "--threads 0 is not valid"),
    (["levels", "--rules", "nosuch"], "unknown rules preset"),
    (["levels", "--rule", "moon=sometimes"], "moon='sometimes' is not valid"),
    # ---- tune
    (["tune", "rule"], "give at least one --param"),
    (["tune", "rule", "--param", "shoot"], "is not of the form name=lo:hi"),
    (["tune", "rule", "--param", "shoot=5"], "is not of the form name=lo:hi"),
    (["tune", "rule", "--param", "shoot=a:b"], "is not of the form name=lo:hi"),
    (["tune", "rule", "--param", "shoot=60:20"], "the low end exceeds the high end"),
    (["tune", "rule", "--param", "shoot=nan:20"], "the ends must be finite"),
    (["tune", "rule", "--param", "shoot=0:inf"], "the ends must be finite"),
    (["tune", "rule", "--param", "nosuch=1:2"], "has no parameter 'nosuch'"),
    (["tune", "rule", "--param", "careless=0:2"], "leaves its allowed range"),
    (["tune", "rule", "--param", "shoot=1:2", "--param", "shoot=3:4"], "has a range already"),
    (["tune", "mc", "--param", "rollout=0:2"], "set it in the spec"),
    (["tune", "nosuch", "--param", "x=1:2"], "unknown agent 'nosuch'"),
    (["tune", "pass=rule,play=random", "--param", "shoot=1:2"], "one policy kind at a time"),
    (["tune", "rule", "--param", "shoot=20:60", "--against", "nosuch"], "unknown agent 'nosuch'"),
    (["tune", "rule", "--param", "shoot=20:60", "--budget", "0"], "--budget 0 is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--budget", "10"], "is too small"),
    (["tune", "rule", "--param", "shoot=20:60", "--candidates", "1"], "--candidates 1 is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--weaker-by", "0"], "--weaker-by 0 is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--weaker-by", "nan"], "--weaker-by nan is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--seed", "-1"], "--seed -1 is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--threads", "0"], "--threads 0 is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--write-level", "../../evil"], "never a path"),
    (["tune", "rule", "--param", "shoot=20:60", "--write-level", "a/b"], "never a path"),
    (["tune", "rule", "--param", "shoot=20:60", "--write-level", "a b"], "never a path"),
    (["tune", "rule", "--param", "shoot=20:60", "--write-level", "lowest"], "built-in agent 'lowest'"),
    (["tune", "rule", "--param", "spade_guard=0.5:2.5"], "spade_guard is a whole number, so give whole"),
    (["tune", "rule", "--param", "shoot=20:60", "--description", "x"], "give that too"),  # it was ignored
    (["tune", "rule", "--max-ms", "5"], "--max-ms is the budget of the level that --write-level NAME writes"),
    (["tune", "rule", "--levels-dir", "{tmp}"], "--levels-dir is the folder of the level that --write-level"),
    (["tune", "rule", "--param", "shoot=20:60", "--write-level", "ismcts"], "built-in agent 'ismcts'"),
    (  # written beside its namesake, it broke every command that read that folder
        ["tune", "rule", "--param", "shoot=20:60", "--write-level", "normal", "--levels-dir", "{tmp}"],
        "the level normal is in",
    ),
    (
        ["tune", "rule", "--param", "shoot=20:60", "--write-level", "x", "--levels-dir", "/nonexistent"],
        "--levels-dir /nonexistent is not a directory",
    ),
    (  # os.access passes for root everywhere: the refusal came after the whole tune
        ["tune", "rule", "--param", "shoot=20:60", "--write-level", "x", "--levels-dir", "/proc"],
        "--levels-dir /proc is not writable (no file can be created in it)",
    ),
    (["tune", "rule", "--param", "shoot=20:60", "--max-ms", "-1"], "--max-ms -1 is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--max-ms", "nan"], "--max-ms nan is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--max-ms", "0"], "--max-ms 0 is not valid"),
    (["tune", "rule", "--param", "shoot=20:60", "--rules", "nosuch"], "unknown rules preset"),
    # ---- play
    (["play", "--seat", "5"], "--seat 5 is not valid"),
    (  # Game raised a ValueError there: a traceback (its check came on 2026-12-07)
        ["play", "--rule", "target_score=100000"],
        "target_score=100000 cannot be reached: a game is cut off undecided after 1,000 hands",
    ),
    (["play", "--seat", "-1"], "--seat -1 is not valid"),
    (
        ["play", "--seat", "3", "--rules", "qdan3"],
        "--seat 3 is not valid: choose a whole number in 0 .. 2 for 3",
    ),
    (["play", "--level", "nosuch"], "unknown agent 'nosuch'"),
    (["play", "--level", "ismcts(c=nan)"], "parameter c='nan'"),
    (["play", "--seed", "-1"], "--seed -1 is not valid"),
    (["play", "--seed", SEED_TOO_BIG], "0 .. 2**64-1"),
    (["play", "--rules", "nosuch"], "unknown rules preset"),
    (["play", "--rule", "moon=sometimes"], "moon='sometimes' is not valid"),
    # ---- report
    (["report"], "the following arguments are required: DIR"),
    (["report", "/nonexistent-run"], "/nonexistent-run does not exist"),
    # a part of a path over 255 bytes: OSError's traceback (ENAMETOOLONG) in most commands
    (["report", "x" * 300], "a name in it is too long for the file system"),
    (["replay", "x" * 300, "--row", "0"], "a name in it is too long for the file system"),
    (["tournament", "lowest", "--out", "{tmp}/" + "x" * 300], "a name in it is too long for the file system"),
    (["match", f"py:{'x' * 300}.py:Mine", "random"], "a name in it is too long for the file system"),
    (["report", "{file}"], "is not a directory"),
    (["report", "{tmp}"], "holds no records"),
    (["report", "{tmp}", "--min-points", "0"], "--min-points 0 is not valid"),
    (["report", "{tmp}", "--min-points", "44"], "--min-points 44 is not valid"),
    (["report", "{tmp}", "--min-points", "abc"], "--min-points abc is not valid"),
    (
        ["report", "{run:good}", "--min-points", "27"],
        "a hand under these rules has at most 26 points; choose 1 .. 26",
    ),
    (["report", "{run:truncated}"], "bytes, not the"),
    (["report", "{run:deleted}"], "is missing"),
    (["report", "{run:garbage}"], "SHA-256 differs"),
    (["report", "{run:edited}"], "chunks_done is 1 but 2 parts are listed"),
    (["report", "{run:good}", "{run:interrupted}"], "a report of 2 runs needs --out DIR"),
    (["report", "{run:good}", "{run:good}", "--out", "{tmp}"], "are the same run"),
    (["report", "{run:good}", "{run:truncated}", "--out", "{tmp}"], "runs of the same agents on seed"),
    # ---- replay
    (["replay"], "the following arguments are required: DIR"),
    (["replay", "{run:good}"], "say which hand: --row N, --moon, --failed, --worst NAME or --game G"),
    (["replay", "{run:good}", "--game", "0"], "holds hands of single deals, not the hands of games"),
    (["replay", "{run:good}", "--hand", "2"], "--hand and --seating pick within a game: add --game G"),
    (["replay", "{run:good}", "--game", "-1"], "--game -1 is not valid"),
    (["replay", "{run:good}", "--game", "0", "--hand", "0"], "--hand 0 is not valid"),
    (["replay", "{run:good}", "--game", "0", "--moon"], "--moon and --game pick different hands"),
    (["replay", "/nonexistent-run", "--moon"], "/nonexistent-run does not exist"),
    (["replay", "{tmp}", "--moon"], "holds no records"),
    (["replay", "{run:good}", "--row", "-1"], "--row -1 is not valid"),
    (["replay", "{run:good}", "--row", "x"], "--row x is not valid"),
    (["replay", "{run:good}", "--row", "100000"], "there is no row 100,000"),
    (["replay", "{run:good}", "--moon", "--failed"], "--moon and --failed pick different hands"),
    (["replay", "{run:good}", "--row", "1", "--moon"], "--row and --moon pick different hands"),
    (["replay", "{run:good}", "--row", "1", "--agent", "rule"], "add --moon or --failed"),
    (["replay", "{run:good}", "--row", "1", "--nth", "2"], "error: --nth picks among the moon shots or"),
    (["replay", "{run:good}", "--row", "1", "--min-points", "5"], "a failed attempt: add --failed"),
    (["replay", "{run:good}", "--moon", "--min-points", "5"], "--min-points is the size of a failed attempt"),
    (["replay", "{run:good}", "--moon", "--nth", "0"], "--nth 0 is not valid"),
    (["replay", "{run:good}", "--failed", "--min-points", "0"], "--min-points 0 is not valid"),
    (
        ["replay", "{run:good}", "--failed", "--min-points", "27"],
        "min_points 27 is not valid: a hand under these",
    ),
    (["replay", "{run:good}", "--moon", "--agent", "nosuch"], "no agent 'nosuch' in"),
    (["replay", "{run:good}", "--moon", "--nth", "100000"], "moon shots, not 100,000"),
    (["replay", "{run:truncated}", "--row", "0"], "bytes, not the"),
    (["replay", "{run:good}", "--worst", "nosuch"], "no agent 'nosuch' in"),
    (["replay", "{run:good}", "--worst", "rule", "--moon"], "--moon and --worst pick different hands"),
    (["replay", "{run:good}", "--worst", "rule", "--agent", "rule"], "--worst names the agent itself"),
    (["replay", "{run:good}", "--moon", "--against", "rule"], "add --worst NAME"),
    (["replay", "{run:good}", "--worst", "rule", "--nth", "0"], "--nth 0 is not valid"),
    (
        ["replay", "{run:good}", "--row", "0", "--ask", "hard"],
        "--ask is the agent --why or --why-pass asks: add --why T or --why-pass",
    ),
    (["replay", "{run:good}", "--row", "0", "--why", "0"], "--why 0 is not valid"),
    (["replay", "{run:good}", "--row", "0", "--why", "14"], "--why 14: this hand has tricks 1 .. 13"),
    (["replay", "{run:good}", "--row", "0", "--why", "1", "--ask", "hrad"], "did you mean 'hard'?"),
    (
        ["replay", "{run:good}", "--game", "0", "--why", "1"],
        "--why and --why-pass look into one hand: add --hand H",
    ),
    (
        ["replay", "{run:good}", "--row", "0", "--why-pass", "--ask", "normal"],
        "--ask normal: it passes without a search; ask a search agent",
    ),
    (
        ["replay", "{run:good}", "--row", "0", "--why", "1", "--ask", "rule"],
        "--ask rule: it plays without scoring its cards",
    ),
    (["combine"], "the following arguments are required: DIR"),
    (["combine", "/nonexistent-run"], "holds no tournament run"),
    (["combine", "{run:garbage_manifest}"], "cannot read"),
    (["combine", "{run:truncated}"], "bytes, not the"),
    (["combine", "{run:edited}"], "2 parts are listed; re-play the damaged chunks with"),
    (["combine", "{run:interrupted}"], "is unfinished (2 of 4 chunks)"),
    (["combine", "{run:good}", "{run:good}"], "are the same run: its deals would count twice"),
    (["combine", "{run:good}", "--json", "--nosuch"], "unrecognized arguments: --nosuch"),
    (["status"], "the following arguments are required: DIR"),
    (["status", "/nonexistent-run"], "holds no tournament run, tune or calibration"),
    (["status", "{run:garbage_manifest}"], "cannot read"),
    (["status", "{run:list_manifest}"], "is not a tournament manifest"),
    (["status", "{run:empty_manifest}"], "cannot be read as a run's manifest ('config' is missing)"),
    (["status", "{run:good}", "--nosuch"], "unrecognized arguments: --nosuch"),
    # ---- serve (each is refused before the server reads its first request)
    (["serve"], "serve needs --agent"),
    (["serve", "--agent", "nosuch"], "unknown agent 'nosuch'"),
    (["serve", "--agent", "ismcts(c=nan)"], "ismcts: parameter c='nan'"),
    (["serve", "--agent", "rule", "--rules", "nosuch"], "unknown rules preset"),
    (["serve", "--agent", "rule", "--rules", "qdan3", "--rules", "qdan5"], "--rules is given twice"),
    (["serve", "--agent", "rule", "--rule", "moon=sometimes"], "moon='sometimes' is not valid"),
    (["serve", "--agent", "rule", "--seed", "-1"], "--seed -1 is not valid"),
    (["serve", "--agent", "rule", "--seed", SEED_TOO_BIG], "0 .. 2**64-1"),
    (["serve", "--agent", "rule", "--port", "-1"], "--port -1 is not valid"),
    (["serve", "--agent", "rule", "--port", "70000"], "--port 70000 is not valid"),
    (["serve", "--agent", "rule", "--port", "http"], "--port http is not valid"),
    (["serve", "--agent", "rule", "--time-limit", "-5"], "--time-limit -5 is not valid"),
    (["serve", "--agent", "rule", "--time-limit", "nan"], "--time-limit nan is not valid"),
    (["serve", "--agent", "rule", "--time-limit", "inf"], "--time-limit inf is not valid"),
    (["serve", "--agent", "rule", "--time-limit", "soon"], "--time-limit soon is not valid"),
    (["serve", "--agent", "rule", "--max-line", "0"], "--max-line 0 is not valid"),
    (["serve", "--agent", "rule", "--max-line", "-1"], "--max-line -1 is not valid"),
    (["serve", "--agent", "rule", "--max-line", HUGE], "is not valid"),
    (["serve", "--agent", "rule", "--max-connections", "0"], "--max-connections 0 is not valid"),
    (
        ["serve", "--agent", "rule", "--max-connections", "8"],
        "--max-connections counts the connections of --port",
    ),
    (["tournament", "random", "rule", "--trust-agents"], "--trust-agents works with --resume DIR"),
    (["tune", "rule", "--param", "shoot=20:60", "--trust-agents"], "--trust-agents works with --resume DIR"),
]

CONFIGS = {
    "good": 'agents = ["lowest", "random"]\ndeals = 5\n',
    "not_toml": "agents = [lowest\n",
    "unknown_key": 'agent = ["lowest"]\n',
    "hands_text": 'hands = "abc"\n',
    "hands_float": "hands = 2.7\n",
    "hands_bool": "hands = true\n",
    "deals_zero": "deals = 0\n",
    "deals_and_hands": "deals = 5\nhands = 5\n",
    "games_text": 'games = "no"\n',
    "agents_text": 'agents = "rule"\n',
    "agents_numbers": "agents = [1, 2]\n",
    "seed_negative": "seed = -1\n",
    "seed_huge": f"seed = {2**64}\n",
    "threads_zero": "threads = 0\n",
    "out_number": "out = 5\n",
    "rule_text": 'rule = "moon=off"\n',
    "rule_twice": 'rule = ["moon=off", "moon=self_minus"]\n',
    "rules_unknown": 'rules = "nosuch"\n',
    "bad_agent": 'agents = ["nosuch"]\n',
    "three_agents": 'agents = ["lowest", "random", "highest"]\n',
}


def subcommand(args: list[str]) -> str:
    return args[0] if args and not args[0].startswith("-") else "(none)"


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The files and runs the cases name: configs, a plain file, and tournament runs with
    damaged records (from ``tests.records_damage``, shared with the resume tests)."""
    try:
        from tests.records_damage import damaged_runs
    except ImportError:  # tests/ on sys.path instead of the repository root
        from records_damage import damaged_runs  # type: ignore[no-redef]

    root = tmp_path_factory.mktemp("bad-input")
    (root / "scratch").mkdir()
    (root / "plain-file").write_text("not a directory\n")
    found = {"tmp": str(root / "scratch"), "file": str(root / "plain-file")}
    for name, text in CONFIGS.items():
        path = root / f"{name}.toml"
        path.write_text(text)
        found[f"config:{name}"] = str(path)
    for name, path in damaged_runs(root / "runs").items():
        found[f"run:{name}"] = str(path)
    return found


def _fill(arg: str, places: dict[str, str]) -> str:
    for name, value in places.items():
        arg = arg.replace("{" + name + "}", value)
    assert "{" not in arg, f"no place for {arg!r}"
    return arg


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


def _child(args: list[str], out: int, err: int) -> None:
    """In a forked process: ``hearts-sim ARGS`` as ``python -m hearts_sim`` runs it, stdin empty,
    stdout and stderr into ``out`` and ``err``; never returns."""
    code = 1
    try:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process ends below
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        sys.argv = ["hearts-sim", *args]
        code = main(args)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_forked(cases: list[list[str]], parallel: int = 8) -> list[Outcome]:
    """Every case in a process of its own, forked from this one (which has imported the toolkit
    once: a case costs milliseconds, not a second of imports), ``parallel`` at a time."""
    outcomes: list[Outcome | None] = [None] * len(cases)
    pending = list(enumerate(cases))
    running: dict[int, tuple[int, Any, Any]] = {}
    while pending or running:
        while pending and len(running) < parallel:
            index, args = pending.pop(0)
            out = tempfile.TemporaryFile()  # noqa: SIM115 - closed when the case is collected
            err = tempfile.TemporaryFile()  # noqa: SIM115
            pid = os.fork()
            if pid == 0:
                _child(args, out.fileno(), err.fileno())
            running[pid] = (index, out, err)
        for pid in list(running):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                index, out, err = running.pop(pid)
                out.seek(0)
                err.seek(0)
                outcomes[index] = Outcome(
                    os.waitstatus_to_exitcode(status), out.read().decode(), err.read().decode()
                )
                out.close()
                err.close()
        time.sleep(0.005)
    return [o for o in outcomes if o is not None]


def run_entry_point(args: list[str]) -> Outcome:
    """``python -m hearts_sim ARGS`` in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-m", "hearts_sim", *args],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return Outcome(result.returncode, result.stdout, result.stderr)


def _misbehaving(cases: list[tuple[list[str], str]], outcomes: list[Outcome]) -> list[str]:
    failures = []
    for (args, fragment), outcome in zip(cases, outcomes, strict=True):
        lines = outcome.stderr.strip().splitlines()
        if not (
            outcome.code == 2
            and len(lines) == 1
            and lines[0].startswith("hearts-sim: error: ")
            and fragment in lines[0]
            and "Traceback" not in outcome.stderr
            and not outcome.stdout
        ):
            failures.append(
                f"{args}: exit {outcome.code}, stderr {outcome.stderr!r}, stdout {outcome.stdout[:200]!r}"
            )
    return failures


def test_there_are_enough_cases_for_every_subcommand() -> None:
    counts = Counter(subcommand(args) for args, _ in CASES)
    assert len(CASES) >= 150
    for command in (
        "tournament",
        "match",
        "bench",
        "levels",
        "tune",
        "play",
        "report",
        "combine",
        "replay",
        "serve",
        "agents",
        "status",
    ):
        assert counts[command] >= 1, command


def test_counts_and_seeds_may_be_written_with_an_exponent() -> None:
    """``--deals 1e6`` is a whole number (it was refused as not one); a seed's exponent is exact
    to its last digit, and the old name parses the same."""
    from hearts_sim.apps.cli import build_parser

    parse = build_parser().parse_args
    assert parse(["tournament", "--deals", "1e6"]).deals == 1_000_000
    assert parse(["tournament", "--deals", "2.5E3", "--seed", "1.8446744073709551615e19"]).seed == 2**64 - 1
    assert parse(["bench", "--hands", "4e3"]).hands == 4000
    assert parse(["match", "a", "b", "--hands", "3e2"]).deals == 300


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a process per case")
def test_every_bad_input_is_one_line_and_exit_code_2(places: dict[str, str]) -> None:
    cases = [([_fill(arg, places) for arg in args], fragment) for args, fragment in CASES]
    failures = _misbehaving(cases, run_forked([args for args, _ in cases]))
    assert not failures, f"{len(failures)} of {len(CASES)} cases misbehave:\n" + "\n".join(failures)
    assert not os.listdir(places["tmp"]), "a refused command wrote into the scratch directory"


def test_numba_told_not_to_compile_is_one_line_not_a_traceback() -> None:
    """``NUMBA_DISABLE_JIT=1`` (a numba user's debugging switch): the kernels cannot run as plain
    Python, so the command line says so in one line with exit code 2, and importing the toolkit
    raises an ``ImportError`` that says so (it failed deep inside with ``AttributeError:
    'function' object has no attribute 'py_func'`` until 2026-12-06)."""
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    command = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "match", "rule", "random"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert command.returncode == 2 and command.stdout == ""
    assert command.stderr.startswith("hearts-sim: error: NUMBA_DISABLE_JIT is set")
    assert command.stderr.count("\n") == 1 and "Traceback" not in command.stderr
    library = subprocess.run(
        [sys.executable, "-c", "import hearts_sim; hearts_sim.Rules()"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert library.returncode == 1
    assert library.stderr.strip().splitlines()[-1].startswith("ImportError: NUMBA_DISABLE_JIT is set")


@pytest.mark.parametrize("value", ["0", "-3", "abc", ""])
def test_numba_given_no_thread_count_is_one_line_not_a_traceback(value: str) -> None:
    """``NUMBA_NUM_THREADS=0`` failed inside numba's import with a 26-line traceback, and ``abc``
    printed numba's traceback as a warning, then ran on every core."""
    command = subprocess.run(
        [sys.executable, "-m", "hearts_sim", "match", "rule", "random", "--deals", "1"],
        capture_output=True,
        text=True,
        env={**os.environ, "NUMBA_NUM_THREADS": value},
    )
    assert command.returncode == 2 and command.stdout == ""
    assert command.stderr == (
        f"hearts-sim: error: NUMBA_NUM_THREADS={value!r} is not valid: set it to a whole number of "
        "threads, 1 or more (or unset it for every core)\n"
    )


def test_a_thread_count_past_numba_num_threads_names_that_variable() -> None:
    """The cap on --threads was blamed on "this machine's cores" where NUMBA_NUM_THREADS set it."""
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    for command in (["bench", "--threads", "2"], ["match", "rule", "random", "--threads", "2"]):
        run = subprocess.run(
            [sys.executable, "-m", "hearts_sim", *command], capture_output=True, text=True, env=env
        )
        assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
        assert "choose a whole number in 1 .. 1 (NUMBA_NUM_THREADS=1, on a machine of " in run.stderr


def test_a_stream_without_the_suit_symbols_gets_letters_not_a_traceback(tmp_path: Path) -> None:
    """A replay printed where stdout cannot encode ``♣♦♠♥`` (``PYTHONIOENCODING=ascii`` here; a
    Windows console redirected to a file): the suits come out as letters, where the command
    ended in ``UnicodeEncodeError`` after its work until 2026-12-06."""
    run_dir = tmp_path / "run"
    assert main(["tournament", "rule", "random", "--deals", "2", "--out", str(run_dir), "--quiet"]) == 0
    command = [sys.executable, "-m", "hearts_sim", "replay", str(run_dir), "--row", "0"]
    utf8 = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "PYTHONIOENCODING": "utf-8"}
    )
    ascii_ = subprocess.run(command, capture_output=True, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert utf8.returncode == 0 and ascii_.returncode == 0, ascii_.stderr[-2000:]
    assert "\u2663" in utf8.stdout and ascii_.stderr == b""
    expected = utf8.stdout.translate(str.maketrans("\u2663\u2666\u2660\u2665", "CDSH"))
    assert ascii_.stdout.decode("ascii") == expected  # the same replay, every suit a letter


def test_a_scripts_cards_print_as_letters_where_the_symbols_cannot() -> None:
    """``run_script`` (the entry point of the experiments' scripts) printed ``♠Q`` to a stream
    that cannot encode it as a ``UnicodeEncodeError`` traceback, where the command line's
    commands printed letters."""
    script = (
        "from hearts_sim.apps.script import run_script\n"
        "from hearts_sim.core.cards import CardSet\n"
        "run_script(lambda: print(CardSet('QS 2C')))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, env={**os.environ, "PYTHONIOENCODING": "ascii"}
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"C2 SQ\n", b"")


def test_the_entry_point_behaves_the_same(places: dict[str, str]) -> None:
    """The first case of each subcommand once more, through ``python -m hearts_sim`` in fresh
    interpreters (in parallel): imports, the entry point and the exit code as a user meets them."""
    firsts = {subcommand(args): (args, fragment) for args, fragment in reversed(CASES)}
    cases = [([_fill(arg, places) for arg in args], fragment) for args, fragment in firsts.values()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(run_entry_point, [args for args, _ in cases]))
    failures = _misbehaving(cases, outcomes)
    assert not failures, "\n".join(failures)
