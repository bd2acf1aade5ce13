"""The dispatcher composed per kind set: only the seated kinds compile, and caches stay valid.

A loop is compiled (and cached on disk) once per ``KindSet``. A table of baseline and rule
agents must never compile a search agent, a second process must load the loop from numba's
cache, and a kind set's type must change exactly when a source its kernels are built from
changes (numba's cache alone checks only the loop's own file).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from numba import typeof

from agents.dispatch import CHEAP_KINDS, KindSet, _kind_set, source_modules
from agents.registry import KIND_BY_NAME, KINDS
from hearts_sim.core.rules import PRESETS, Rules
from hearts_sim.game.hand_state import HandState
from hearts_sim.selfplay.simulate import Table, run_hands

try:  # the stepping helpers of the agent API tests
    from tests.hand_checks import assert_record_is_hand, loop_hand
except ImportError:  # tests/ on sys.path instead of the repository root
    from hand_checks import assert_record_is_hand, loop_hand  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent

_PROBE = """
import json
from hearts_sim.selfplay.loops import play_hand_block
from hearts_sim.selfplay.simulate import Table, run_hands
from agents import belief, evaluation, ismcts, mc, net, passing, pimc
from hearts_sim.engine import inference, sampler
run_hands(Table.build("standard", [["random", "lowest", "rule", "easy"]]), 0, 0, 20)
kernels = (ismcts.ismcts_play, pimc.pimc_play, mc.mc_play, mc.mc_pass, sampler.sample_world,
           sampler.sample_world_into, passing.searched_pass, belief.belief_pool, evaluation.evaluate,
           inference.draw_world, net.policy_logits)
search = {k.__name__: len(k.signatures) for k in kernels}
print(json.dumps({"search_compiled": search, "hits": sum(play_hand_block.stats.cache_hits.values()),
                  "misses": sum(play_hand_block.stats.cache_misses.values())}))
"""


def _probe(cache: Path) -> dict[str, object]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    run = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_baseline_table_never_compiles_a_search_agent_and_its_loop_is_cached(tmp_path: Path) -> None:
    cold = _probe(tmp_path)  # an empty cache: everything this table needs compiles, nothing else
    assert cold["search_compiled"] == {name: 0 for name in cold["search_compiled"]}  # type: ignore[union-attr]
    assert cold["misses"] == 1 and cold["hits"] == 0
    warm = _probe(tmp_path)  # a fresh process: the specialised loop comes from the disk cache
    assert warm["hits"] == 1 and warm["misses"] == 0


_PORTABLE_PROBE = """
import json
import numpy as np
from hearts_sim.core.cards import HAS_PDEP, select_bit, select_card_bit
from hearts_sim.core.rules import Rules
from hearts_sim.game.hand_state import HandState

masks = [int(m) for m in np.random.default_rng(5).integers(1, 2**52, size=50, dtype=np.uint64)]
bits = [[int(select_bit(np.uint64(m), np.int64(k))) for k in range(m.bit_count())] for m in masks]
card_bits = [[int(select_card_bit(np.uint64(m), np.int64(k))) for k in range(m.bit_count())] for m in masks]
dealt = [[sorted(HandState.deal(Rules(), seed=s, hand=0).dealt(p)) for p in range(4)] for s in range(3)]
print(json.dumps({"pdep": HAS_PDEP, "masks": masks, "bits": bits, "card_bits": card_bits, "dealt": dealt}))
"""


def test_a_portable_build_for_a_generic_cpu_runs_and_deals_the_same_cards(tmp_path: Path) -> None:
    """``NUMBA_CPU_NAME=generic``, numba's portable cache (no BMI2, no POPCNT): the kernels must
    not use pdep there (LLVM aborted the process on it until 2026-12-06), and the portable
    selection picks the same bits, so the same seeds deal the same hands."""
    env = {**os.environ, "NUMBA_CPU_NAME": "generic", "NUMBA_CACHE_DIR": str(tmp_path)}
    env.pop("NUMBA_CPU_FEATURES", None)
    run = subprocess.run([sys.executable, "-c", _PORTABLE_PROBE], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    probe = json.loads(run.stdout)
    assert probe["pdep"] is False
    for mask, bits, card_bits in zip(probe["masks"], probe["bits"], probe["card_bits"], strict=True):
        assert bits == [i for i in range(64) if mask >> i & 1]  # the k-th set bit, for every k
        assert card_bits == [1 << i for i in bits]
    here = [[sorted(HandState.deal(Rules(), seed=s, hand=0).dealt(p)) for p in range(4)] for s in range(3)]
    assert probe["dealt"] == here  # this process: the host's own build (pdep where it has BMI2)


_CALLER = """
from hearts_sim._numba import njit
from hearts_sim.callee import value

@njit
def call():
    return value()
"""
_CALLEE = """
from hearts_sim._numba import njit

@njit
def value():
    return {value}
"""
_CALL = "from hearts_sim.caller import call; print(call(), call.stats.cache_hits[call.signatures[0]])"
# An install whose __pycache__ this user cannot write (a root-owned site-packages; the tests run
# as root, who may write anywhere, so the refusal is simulated): numba falls back to ~/.cache.
_READ_ONLY_TREE = """
from hearts_sim._numba import _numba_locator
def _refuse(self):
    raise PermissionError("read-only install")
_numba_locator("InTreeCacheLocator").ensure_cache_path = _refuse
"""


@pytest.mark.parametrize("writable_tree", [True, False], ids=["pycache", "user-wide cache"])
def test_editing_a_module_invalidates_the_cached_functions_of_the_modules_that_import_it(
    tmp_path: Path, writable_tree: bool
) -> None:
    """numba stamps a cached function with its own file, and the cache holds the code of what it
    calls: an edited callee in another file kept running from the caller's cache (agents/passing.py
    under agents/ismcts.py's cached pass). ``hearts_sim._numba`` stamps a project function with
    the sources of every module its file imports, in ``__pycache__`` and, where that cannot be
    written, in the user's cache folder (there it kept the stale code until 2026-12-06). A
    two-module package in a scratch tree: call, edit the callee only, call again in a fresh
    process."""
    package = tmp_path / "hearts_sim"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_numba.py").write_text((ROOT / "hearts_sim" / "_numba.py").read_text())
    (package / "caller.py").write_text(_CALLER)
    home = tmp_path / "home"  # the user-wide cache: $XDG_CACHE_HOME/numba
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "NUMBA_CACHE_DIR": "", "XDG_CACHE_HOME": str(home)}

    def call(value: int) -> tuple[int, int]:
        (package / "callee.py").write_text(_CALLEE.format(value=value))
        command = [sys.executable, "-c", ("" if writable_tree else _READ_ONLY_TREE) + _CALL]
        run = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        result, hits = run.stdout.split()
        return int(result), int(hits)

    assert call(1) == (1, 0)  # compiled, and cached
    assert call(1) == (1, 1)  # a fresh process: from the cache
    assert call(2) == (2, 0)  # the callee changed: the caller's cache entry is stale, recompiled
    assert call(2) == (2, 1)
    cached_in = package / "__pycache__" if writable_tree else home / "numba"
    assert any(cached_in.rglob("caller.call-*.nbi")), "the cache is not where it should be"


_SCRIPT = """
from hearts_sim._numba import njit
from hearts_sim.callee import value

@njit
def call():
    return value()

print(call(), call.stats.cache_hits[call.signatures[0]])
"""


def test_editing_a_module_invalidates_the_cached_functions_of_a_script_that_imports_it(
    tmp_path: Path,
) -> None:
    """The same for a script of the project tree outside the packages (experiments/train_shape.py
    kept filling its rows with the features of an edited ``agents/shape.py`` from its cache)."""
    package = tmp_path / "hearts_sim"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_numba.py").write_text((ROOT / "hearts_sim" / "_numba.py").read_text())
    (tmp_path / "experiments").mkdir()
    script = tmp_path / "experiments" / "script.py"
    script.write_text(_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "NUMBA_CACHE_DIR": ""}

    def call(value: int) -> tuple[int, int]:
        (package / "callee.py").write_text(_CALLEE.format(value=value))
        run = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        assert run.returncode == 0, run.stderr
        result, hits = run.stdout.split()
        return int(result), int(hits)

    assert call(1) == (1, 0)
    assert call(1) == (1, 1)
    assert call(2) == (2, 0)  # the callee changed: the script's cache entry is stale, recompiled
    assert call(2) == (2, 1)


# Whether numba caches, and a deal's first hand, in a fresh process; then its RuntimeWarnings.
_DEAL = """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from hearts_sim import _numba
    from hearts_sim.core.rules import Rules
    from hearts_sim.game.hand_state import HandState
    print(_numba.CACHING, sorted(HandState.deal(Rules(), seed=1, hand=0).dealt(0)))
print(*[str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)], sep="\\n")
"""
_NO_CACHE_FOLDER = (
    """
from numba.core import caching

def _refuse(self):
    raise PermissionError("read-only file system")

caching._CacheLocator.ensure_cache_path = _refuse  # every folder numba could cache in
"""
    + _DEAL
)


def test_without_a_writable_cache_folder_the_kernels_compile_every_time_and_a_warning_says_so() -> None:
    """A read-only container, or a serverless function whose home cannot be written: numba found
    no folder for its cache and refused every ``cache=True`` kernel on import (``RuntimeError:
    cannot cache function 'popcount': no locator available``) until 2026-12-06. Now the kernels
    compile uncached, once per process, with one warning naming ``NUMBA_CACHE_DIR``."""
    run = subprocess.run([sys.executable, "-c", _NO_CACHE_FOLDER], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    result, *warned = run.stdout.strip().splitlines()
    assert result == f"False {sorted(HandState.deal(Rules(), seed=1, hand=0).dealt(0))}"
    assert len(warned) == 1 and "set NUMBA_CACHE_DIR to a writable folder" in warned[0]


_CACHE_IO_FAILS = """
import errno
import sys
from numba.core import caching

def _fail(*args, **kwargs):
    raise OSError(errno.{code}, "{reason}")

if "{method}":
    setattr(caching.IndexDataCacheFile, "{method}", _fail)
{run}
"""


def _with_cache_io_failing(
    cache: Path, method: str, code: str, reason: str, run: str
) -> subprocess.CompletedProcess:
    script = _CACHE_IO_FAILS.format(method=method, code=code, reason=reason, run=run)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env)


def test_a_cache_that_cannot_be_written_or_read_costs_only_the_cache(tmp_path: Path) -> None:
    """A full disk or a spent quota under numba's cache folder: every command compiled its
    kernels and then died saving them (``OSError: [Errno 28] No space left on device`` from
    numba's caching, exit 1) until 2026-12-06. Now a failed save keeps the kernels for the
    process, a failed read compiles them again, and one warning says so."""
    expected = f"True {sorted(HandState.deal(Rules(), seed=1, hand=0).dealt(0))}"  # cached

    def deal(method: str, code: str, reason: str) -> list[str]:
        run = _with_cache_io_failing(tmp_path, method, code, reason, _DEAL)
        assert run.returncode == 0, run.stderr[-2000:]
        result, *warned = run.stdout.strip().splitlines()
        assert result == expected
        return warned

    [warned] = deal("_open_for_write", "ENOSPC", "No space left on device")
    assert f"numba cannot use its cache in {tmp_path} (No space left on device)" in warned
    assert "set NUMBA_CACHE_DIR" in warned
    assert not list(tmp_path.rglob("*.nbi"))  # nothing saved
    assert deal("", "EIO", "unused") == []  # nothing fails: the cache is written
    assert list(tmp_path.rglob("*.nbi"))
    [warned] = deal("_load_index", "EIO", "Input/output error")
    assert "(Input/output error)" in warned


@pytest.mark.parametrize("damage", ["truncate the index", "empty the data", "garble the index"])
def test_a_damaged_cache_entry_is_compiled_again_and_written_anew(tmp_path: Path, damage: str) -> None:
    """An entry cut short (a full disk as a warmed cache was copied into place) or overwritten:
    every later process that loaded it ended in numba's traceback (``UnpicklingError: pickle data
    was truncated``, ``EOFError: Ran out of input``) until the file was deleted by hand. Now it is
    compiled again and written anew, with one warning naming it, and the next process is silent."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}

    def deal() -> list[str]:
        run = subprocess.run([sys.executable, "-c", _DEAL], capture_output=True, text=True, cwd=ROOT, env=env)
        assert run.returncode == 0, run.stderr[-2000:]
        result, *warned = run.stdout.strip().splitlines()
        assert result == f"True {sorted(HandState.deal(Rules(), seed=1, hand=0).dealt(0))}"
        return warned

    assert deal() == []  # compiled into the fresh cache
    index = next(tmp_path.rglob("hand.deal_numbered_hand-*.nbi"))
    data = next(tmp_path.rglob("hand.deal_numbered_hand-*.nbc"))
    if damage == "truncate the index":
        index.write_bytes(index.read_bytes()[:10])
    elif damage == "empty the data":
        data.write_bytes(b"")
    else:
        index.write_bytes(bytes(range(200)))
    [warned] = deal()
    assert f"numba's cache entry {index} (or its data beside it) was damaged (" in warned
    assert warned.endswith("): compiled again, and written anew")
    assert deal() == []  # written anew


def test_a_failure_to_save_a_cache_entry_that_is_no_io_error_is_numbas_to_raise(tmp_path: Path) -> None:
    """Only loads read a failure as a damaged entry: a save that fails otherwise (numba unable to
    pickle what it compiled) is a bug to see, not a warning saying the entry was written anew."""
    failing = "from numba.core import caching\n\ndef _fail(*args, **kwargs):\n"
    failing += "    raise TypeError('cannot pickle')\n\ncaching.IndexDataCacheFile.save = _fail\n" + _DEAL
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", failing], capture_output=True, text=True, cwd=ROOT, env=env)
    assert run.returncode == 1 and run.stderr.rstrip().endswith("TypeError: cannot pickle"), run.stderr[
        -2000:
    ]


def test_a_cache_folder_numba_cannot_use_is_named(tmp_path: Path) -> None:
    """``NUMBA_CACHE_DIR`` naming a file (or a read-only folder): numba passed it over without a
    word and cached elsewhere, so a container that set it compiled again at every start."""
    (tmp_path / "a file").write_text("not a folder")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "a file")}
    run = subprocess.run([sys.executable, "-c", _DEAL], capture_output=True, text=True, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    result, *warned = run.stdout.strip().splitlines()
    assert result == f"True {sorted(HandState.deal(Rules(), seed=1, hand=0).dealt(0))}"  # cached elsewhere
    assert warned == [
        f"NUMBA_CACHE_DIR={tmp_path / 'a file'} is not a folder numba can write: it caches in the next "
        "one it can (the install's __pycache__, or ~/.cache/numba); point it at a writable folder"
    ]


def test_the_command_line_prints_a_warning_in_one_line(tmp_path: Path) -> None:
    match = "sys.argv = ['hearts-sim', 'match', 'random', 'lowest', '--deals', '1']\n"
    match += "from hearts_sim.__main__ import run\nsys.exit(run())"
    run = _with_cache_io_failing(tmp_path, "_open_for_write", "ENOSPC", "No space left on device", match)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "random - lowest:" in run.stdout
    warned = [line for line in run.stderr.splitlines() if "warn" in line]
    assert warned == [
        f"hearts-sim: warning: numba cannot use its cache in {tmp_path} (No space left on device): "
        "kernels compile in every process until it can; free space there or set NUMBA_CACHE_DIR "
        "to another folder"
    ]


def test_numba_s_locators_are_found_under_either_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba before 0.60 (0.59 is the floor) names its cache locators with a leading underscore:
    ``hearts_sim._numba`` failed on import there until 2026-12-06."""
    from numba.core import caching

    from hearts_sim._numba import ProjectStampLocator, _numba_locator

    numba_s = _numba_locator("InTreeCacheLocator")
    assert issubclass(ProjectStampLocator, numba_s)
    monkeypatch.delattr(caching, "InTreeCacheLocator", raising=False)
    monkeypatch.setattr(caching, "_InTreeCacheLocator", numba_s, raising=False)
    assert _numba_locator("InTreeCacheLocator") is numba_s


def test_a_kind_set_depends_on_the_sources_of_its_kinds_only() -> None:
    baseline = set(source_modules(("lowest", "random", "rule")))
    searching = set(source_modules(("ismcts",)))
    assert "agents.ismcts" not in baseline and "agents.mc" not in baseline
    assert {"agents.ismcts", "agents.search", "agents.rule", "agents.passing"} <= searching
    assert {"hearts_sim.engine.hand", "hearts_sim.core.rules", "agents.dispatch"} <= baseline & searching


def test_kind_sets_name_their_kinds_with_the_kinds_they_pass_like(monkeypatch: pytest.MonkeyPatch) -> None:
    cheap = {"random", "lowest", "highest"}
    assert set(KindSet.of(["pimc"]).names) == {"pimc"} | cheap  # the search agents pass by their own search
    lazy = dataclasses.replace(KIND_BY_NAME["pimc"], scored_pass=None, passes_like="rule")
    monkeypatch.setitem(KIND_BY_NAME, "pimc", lazy)  # a kind without a pass policy of its own
    _kind_set.cache_clear()
    try:
        assert set(KindSet.of(["pimc"]).names) == {"pimc", "rule"} | cheap
    finally:
        monkeypatch.undo()
        _kind_set.cache_clear()
    assert KindSet.of(["random", "random"]).names == ("random", "lowest", "highest")
    every = KindSet(range(len(KINDS)))
    assert every.names == tuple(kind.name for kind in KINDS)
    assert KindSet.of(["rule"]).stamp != KindSet.of(["ismcts"]).stamp


def test_every_set_holds_the_stateless_kinds_so_their_mixes_share_one_loop() -> None:
    assert {"random", "lowest", "highest"} == CHEAP_KINDS

    def loop_type(*names: str) -> object:  # what numba specialises a loop on
        return typeof(KindSet.of(names))

    assert loop_type("random") == loop_type("lowest", "highest") == loop_type("random", "lowest")
    assert loop_type("rule") == loop_type("rule", "highest") == loop_type("random", "rule")
    assert loop_type("rule") != loop_type("random")  # rule reads the record: not a cheap kind
    assert loop_type("ismcts") == loop_type("ismcts", "random") != loop_type("ismcts", "rule")
    assert "ismcts" not in KindSet.of(["rule", "random"]).names


# one compiled policy of every kind (small budgets; the search knobs on), in two seatings
EVERY_KIND = ("mc(samples=3,belief=20)", "rule", "pimc(iterations=40,worlds=2,pass_rollouts=60)", "random",
              "ismcts(iterations=40,stretch=2,cutoff=2,belief=20)", "lowest", "net", "highest")  # fmt: skip


def test_every_compiled_kind_is_listed() -> None:
    listed = {spec.split("(")[0] for spec in EVERY_KIND}
    assert listed == {kind.name for kind in KINDS if not kind.external}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_kind_at_a_mixed_table_decides_as_its_own_kind_alone(preset: str) -> None:
    """The loop compiled for every kind at once writes, for each seating, the hand that stepping
    each decision through its own kind's compiled dispatcher (a kind set of one) plays: same
    passes, points, scores and trick winners, under every preset. Composing kinds into one loop
    changes no decision."""
    rules = Rules.preset(preset)
    n = rules.n_players
    seatings = [[EVERY_KIND[(start * n + seat) % len(EVERY_KIND)] for seat in range(n)] for start in range(3)]
    table = Table.build(rules, seatings)
    assert set(table.kind_set().names) >= {spec.split("(")[0] for spec in EVERY_KIND}
    for deal in (0, 1):
        records = run_hands(table, 5, deal, 1)
        for record, seating in zip(records, seatings, strict=True):
            state, _, _ = loop_hand(rules, seating, seed=5, deal=deal)
            assert_record_is_hand(record, state, rules)


def test_a_warning_on_the_command_line_is_plain_text() -> None:
    """numba words some warnings in terminal escape codes (bold), which a log file shows as
    ``ESC[1m``: the command line's one-line warning drops them."""
    from hearts_sim.__main__ import _one_line

    line = _one_line(UserWarning("\x1b[1mCannot do that\x1b[0m"), UserWarning, "file.py", 1)
    assert line == "hearts-sim: warning: Cannot do that\n"


def test_ctrl_c_while_the_toolkit_loads_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C in the first half second, while the command line's modules import (before its own
    handler), was a 47-line traceback."""
    import sys
    import types

    from hearts_sim.__main__ import run

    class Loading(types.ModuleType):
        def __getattr__(self, name: str) -> object:
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "hearts_sim.apps.cli", Loading("hearts_sim.apps.cli"))
    assert run() == 130
    assert capsys.readouterr().err == "hearts-sim: interrupted\n"


def _parsed_imports(path: Path) -> frozenset[str]:
    """The project modules ``path`` imports, as Python's parser reads them (the stamps' reference)."""
    import ast

    from hearts_sim._numba import _module_file

    imports: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            imports.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imports.add(node.module)
            imports.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(name for name in imports if _module_file(name) is not None)


def test_the_source_stamps_read_every_import_the_parser_sees() -> None:
    """The stamps read a module's imports from its text (a pattern, not ``ast``: a quarter of a
    second of every command); one it missed would leave a kernel cached against a module edited
    since. Every module of the packages and every script: the same imports as the parser's; the
    tests (whose kernels a stamp covers too): none missed (their scripts in strings add some)."""
    from hearts_sim._numba import _source_and_imports

    root = Path(__file__).resolve().parent.parent
    files = [*root.glob("hearts_sim/**/*.py"), *root.glob("agents/**/*.py"), *root.glob("experiments/*.py")]
    differ = {
        str(path.relative_to(root)): (_parsed_imports(path), _source_and_imports(path)[1])
        for path in files
        if _parsed_imports(path) != _source_and_imports(path)[1]
    }
    assert len(files) > 80 and not differ, differ
    tests = sorted(root.glob("tests/*.py"))
    missed = {path.name: _parsed_imports(path) - _source_and_imports(path)[1] for path in tests}
    assert len(tests) > 40 and not any(missed.values()), missed


def test_the_import_pattern_reads_every_form(tmp_path: Path) -> None:
    from hearts_sim._numba import _source_and_imports

    source = tmp_path / "probe.py"
    source.write_text(
        "import hearts_sim.core.cards as c, hearts_sim.engine.hand  # two\n"
        "from hearts_sim.engine import (\n    sampler,  # the worlds\n    rng as r,\n)\n"
        "def f():\n    from agents import mc, pimc  # lazily\n"
        "from . import ignored\n"
        "from hearts_sim.studies import stats, \\\n    replay\n"  # a backslash continuation
        "import os; import hearts_sim.studies.tune; from agents import belief; from agents import ismcts\n"
        "if os: import hearts_sim.studies.cluster\n"
        "from hearts_sim.engine import (  # a) note\n    observe,\n)\n"
    )
    found = _source_and_imports(source)[1]
    assert found == _parsed_imports(source)
    assert {
        "hearts_sim.engine.sampler",
        "hearts_sim.engine.rng",
        "agents.pimc",
        "hearts_sim.studies.replay",
    } <= found
    assert {
        "hearts_sim.studies.tune",
        "agents.ismcts",
        "hearts_sim.studies.cluster",
        "hearts_sim.engine.observe",
    } <= found
