"""The folders are the layers: no module imports from a layer above its own.

The layer order is written once, here (``hearts_sim/__init__.py`` describes it). Imports are
read from the source (module level and inside functions alike; ``if TYPE_CHECKING:`` blocks
aside, since they never run), so a lazy import cannot hide an upward dependency.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Lowest first; a module may import from its own layer and the ones below.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("hearts_sim._numba", "hearts_sim"),  # the numba flags; the package's lazy facade
    ("hearts_sim.core",),
    ("hearts_sim.engine",),
    ("hearts_sim.game",),
    ("agents",),
    ("hearts_sim.selfplay", "hearts_sim.env"),
    ("hearts_sim.studies", "hearts_sim.analysis"),  # the second: the first's analysis by its short name
    ("hearts_sim.apps", "hearts_sim.__main__"),
)


def layer_of(module: str) -> int:
    """The layer of a project module: the longest prefix listed in ``LAYERS``."""
    best, rank = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), index
    if rank < 0:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return rank


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in ("hearts_sim", "agents"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every project import that runs."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    modules = project_modules()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            found.append((node.lineno, base))
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            found.extend((node.lineno, name) for name in submodules if name in modules)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return [(line, name) for line, name in found if name.split(".")[0] in ("hearts_sim", "agents")]


def test_every_module_has_a_layer() -> None:
    for module in project_modules():
        layer_of(module)


def test_no_import_runs_upward() -> None:
    upward = []
    for module, path in project_modules().items():
        own = layer_of(module)
        for line, imported in imports_of(path, module):
            if layer_of(imported) > own:
                upward.append(
                    f"{path.relative_to(ROOT)}:{line}: {module} (layer {own}) imports {imported} "
                    f"(layer {layer_of(imported)})"
                )
    assert not upward, "imports that run upward:\n" + "\n".join(upward)


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    """The walk finds imports inside functions too, and skips TYPE_CHECKING blocks."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from hearts_sim.core import cards\n"
        "if TYPE_CHECKING:\n    from hearts_sim.apps import cli\n"
        "def f():\n    from hearts_sim.studies import tournament\n"
    )
    found = [name for _, name in imports_of(source, "hearts_sim.engine.probe")]
    assert "hearts_sim.studies.tournament" in found and "hearts_sim.apps.cli" not in found
    assert layer_of("hearts_sim.studies.tournament") > layer_of("hearts_sim.engine.probe")


def test_experiments_import_nothing_from_the_tests() -> None:
    """experiments/ is the toolkit used as its users use it: a script that imported a helper of
    tests/ (belief_likelihood.py's real_positions, through a sys.path insert, until 2026-12-07)
    ran only in a checkout with the suite beside it; what both need lives in the package."""
    helpers = {"tests", *(path.stem for path in (ROOT / "tests").glob("*.py"))}
    found = []
    for path in sorted((ROOT / "experiments").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            found += [f"{path.name}:{node.lineno}: {n}" for n in names if n.split(".")[0] in helpers]
    assert not found, "experiments import test helpers:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "first", ["import agents", "from agents.registry import parse_agent", "from hearts_sim.core import cards"]
)
def test_any_import_order_works_in_a_fresh_process(first: str) -> None:
    """The agents <-> hearts_sim cycle is gone, not hidden by an import order."""
    script = f"{first}\nimport hearts_sim\nfrom hearts_sim import simulate\nprint(len(simulate(hands=3)))"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "3"


def test_importing_agents_loads_no_layer_above_it() -> None:
    script = (
        "import sys, agents\n"
        "loaded = [m for m in sys.modules if m.startswith(('hearts_sim.selfplay', 'hearts_sim.studies',"
        " 'hearts_sim.apps'))]\nprint(loaded)"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def unguarded_helper_imports(source: str) -> list[int]:
    """Lines of ``tests.`` imports (module level or in a function) outside a ``try`` that falls back
    on ImportError.

    CI runs the ``pytest`` command, which puts ``tests/`` on the path but not the repository root
    (``python -m pytest`` adds the root too): there ``from tests.signals import ...`` fails to
    collect the whole module unless it falls back to ``from signals import ...``.
    """

    def from_tests(node: ast.stmt) -> bool:
        if isinstance(node, ast.ImportFrom):
            return (node.module or "").split(".")[0] == "tests"
        return isinstance(node, ast.Import) and any(a.name.split(".")[0] == "tests" for a in node.names)

    def falls_back(node: ast.Try) -> bool:
        caught = [h.type for h in node.handlers]
        return any(isinstance(t, ast.Name) and t.id in ("ImportError", "ModuleNotFoundError") for t in caught)

    lines: list[int] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Try) and falls_back(node):
            return
        if isinstance(node, ast.stmt) and from_tests(node):
            lines.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return lines


def test_test_modules_import_their_helpers_as_ci_runs_them() -> None:
    unguarded = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        for line in unguarded_helper_imports(path.read_text())
    ]
    assert not unguarded, "imports of tests.* with no fallback for the pytest command:\n" + "\n".join(
        unguarded
    )


def test_the_helper_import_check_sees_an_unguarded_import() -> None:
    guarded = (
        "try:\n    from tests.signals import started\nexcept ImportError:\n    from signals import started\n"
    )
    assert unguarded_helper_imports(guarded) == []
    assert unguarded_helper_imports("import os\nfrom tests.signals import started\n") == [2]
    assert unguarded_helper_imports("def f():\n    from tests import signals\n") == [2]
    assert unguarded_helper_imports("try:\n    import tests.signals\nexcept KeyError:\n    pass\n") == [2]


def private_imports(path: Path, module: str) -> list[str]:
    """``from <project module> import _name`` lines of ``path`` that reach into another module."""
    found = []
    for line, imported, name in _imported_names(path, module):
        if name.startswith("_") and not name.startswith("__") and imported != module:
            found.append(
                f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}: {imported}.{name}"
            )
    return found


def _imported_names(path: Path, module: str) -> list[tuple[int, str, str]]:
    """(line, module, name) of every ``from <project module> import name`` in ``path``."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            if base.split(".")[0] in ("hearts_sim", "agents"):
                names += [(node.lineno, base, alias.name) for alias in node.names]
    return names


def test_no_module_imports_another_modules_private_names() -> None:
    """A name with a leading underscore is its module's own: one that another module needs is
    public (``selfplay.loops.param_row``, imported by the environment's kernels as ``_param_row``
    until 2026-12-07). The scripts of experiments/ are held to it too."""
    found = []
    for module, path in project_modules().items():
        found += private_imports(path, module)
    for path in sorted((ROOT / "experiments").glob("*.py")):
        found += private_imports(path, f"experiments.{path.stem}")
    assert not found, "private names imported from another module:\n" + "\n".join(found)


def test_the_private_import_check_sees_one(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        "from hearts_sim.selfplay.loops import _seat_codes, seating_policies\nfrom . import _x\n"
    )
    found = private_imports(source, "hearts_sim.env.probe")
    assert [line.split(": ")[1] for line in found] == [
        "hearts_sim.selfplay.loops._seat_codes",
        "hearts_sim.env._x",
    ]
