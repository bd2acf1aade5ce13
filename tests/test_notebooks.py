"""The notebooks run from a clean kernel at their default size and draw their plots; they are
stored without outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
# notebook -> the fewest figures (image outputs) it must produce
EXPECTED_FIGURES = {"moon_shots.ipynb": 7, "levels.ipynb": 3}


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
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{name}: saved with outputs"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPECTED_FIGURES))
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
    assert _images(notebook) >= EXPECTED_FIGURES[name]
