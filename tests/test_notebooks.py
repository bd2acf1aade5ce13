"""The notebooks run from a clean kernel at their default size, draw their plots and show their
hand replays; they are stored without outputs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hearts_sim.studies.replay import MARK_STYLE

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
# notebook -> the fewest figures (image outputs) it must produce
EXPECTED_FIGURES = {"moon_shots.ipynb": 9, "levels.ipynb": 3, "your_agent.ipynb": 2, "learning.ipynb": 3}
# notebook -> (replays shown, of which with a marked trick): analysis.replay's HTML
EXPECTED_REPLAYS = {
    "moon_shots.ipynb": (6, 3),
    "levels.ipynb": (0, 0),
    "your_agent.ipynb": (2, 2),
    "learning.ipynb": (1, 1),
}
# notebook -> tables it must show, by a header cell of each: hard's card values in a replayed hand
EXPECTED_TABLES = {
    "moon_shots.ipynb": [],
    "levels.ipynb": [],
    "your_agent.ipynb": ["<th>chosen</th>"],
    "learning.ipynb": ["<th>points_per_hand</th>"],
}


def _html_outputs(notebook: object) -> list[str]:
    return [
        output["data"]["text/html"]
        for cell in notebook.cells  # type: ignore[attr-defined]
        if cell.cell_type == "code"
        for output in cell.outputs
        if "text/html" in output.get("data", {})
    ]


def _images(notebook: object) -> int:
    return sum(
        "image/png" in output.get("data", {})
        for cell in notebook.cells  # type: ignore[attr-defined]
        if cell.cell_type == "code"
        for output in cell.outputs
    )


@pytest.mark.parametrize("name", sorted(EXPECTED_FIGURES))
def test_notebook_is_stored_clean(name: str) -> None:
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    ids = [cell.get("id") for cell in notebook.cells]
    assert None not in ids and len(set(ids)) == len(ids), f"{name}: a cell without its own id (nbformat 4.5)"
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{name}: saved with outputs"


@pytest.fixture
def outside_jupyter() -> Iterator[None]:
    """``ipykernel`` out of ``sys.modules`` after the test where it was not before: nbclient imports
    it here, and every later run in this worker then drew its bar as in a notebook (``progress_shown``),
    failing the tests of runs nobody watches where they came after it."""
    before = set(sys.modules)
    yield
    for name in [name for name in sys.modules if name not in before and name.split(".")[0] == "ipykernel"]:
        del sys.modules[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED_FIGURES))
@pytest.mark.usefixtures("outside_jupyter")
def test_notebook_executes_and_plots(name: str, tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,  # per cell
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},  # run in a scratch folder
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on any error
    errors = [
        o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
    warned = [  # a reader sees these (tqdm's "IProgress not found" in every notebook without ipywidgets)
        o["text"]
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream" and o.get("name") == "stderr" and "Warning" in o["text"]
    ]
    assert not warned, warned
    stray = [  # a cell ending in a call whose value means nothing (threadpool_limits(...) showed)
        o["data"]["text/plain"]
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if " at 0x" in o.get("data", {}).get("text/plain", "")
    ]
    assert not stray, stray
    assert _images(notebook) >= EXPECTED_FIGURES[name]
    replays = [html for html in _html_outputs(notebook) if 'class="hs-replay"' in html]
    shown, marked = EXPECTED_REPLAYS[name]
    assert len(replays) >= shown
    assert sum(MARK_STYLE in html for html in replays) >= marked
    for header in EXPECTED_TABLES[name]:
        assert any(header in html for html in _html_outputs(notebook)), f"{name}: no table with {header}"
