"""The tour notebook runs top to bottom in a real kernel and renders every plot inline."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).parents[1] / "notebooks"
NOTEBOOK = NOTEBOOKS / "01_tour.ipynb"
HOPE_NOTEBOOK = NOTEBOOKS / "hope.ipynb"
PIM_NOTEBOOK = NOTEBOOKS / "pim.ipynb"
NSGA2_NOTEBOOK = NOTEBOOKS / "nsga2.ipynb"
PLOTTING = ("plt.", "plot_gantt(", "plot_front(", ".plot.")


def _execute(notebook: Path, tmp_path) -> tuple[list, list, str]:
    """Run ``notebook`` top to bottom in a kernel (in ``tmp_path``), check no cell raised, and
    return its code cells, their outputs and the text they printed."""
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    return code, outputs, text


def _assert_plots_inline(code: list, at_least: int) -> None:
    """At least ``at_least`` cells plot, and every one renders its plot inline, in its own cell."""
    plotting = [c for c in code if any(p in c.source for p in PLOTTING)]
    assert len(plotting) >= at_least
    for c in plotting:
        assert any("image/png" in o.get("data", {}) for o in c.get("outputs", [])), c.source[:60]


def test_tour_notebook_draws_inline():
    """Run in Jupyter, a notebook that calls matplotlib.use('Agg') shows no figure at all; the
    tour leaves the backend to the kernel (inline)."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in nb.cells)
    assert "matplotlib.use" not in source and "Agg" not in source
    headings = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "markdown"]
    assert any("Explore" in h for h in headings) and any("What if" in h for h in headings)
    assert any("accelerator" in h for h in headings)


@pytest.mark.slow
def test_tour_notebook_executes(tmp_path):
    code, _, text = _execute(NOTEBOOK, tmp_path)
    assert "analytic" in text and "fps" in text and "candidate EPs" in text
    _assert_plots_inline(code, 6)


@pytest.mark.slow
def test_hope_notebook_executes(tmp_path):
    """Three schedulers place a small DAG, the exact model bounds them, the Gantt of each plan."""
    _, outputs, text = _execute(HOPE_NOTEBOOK, tmp_path)
    assert "optimal: True" in text and "HOPE:LP" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)


def test_pim_notebook_draws_inline():
    nb = nbformat.read(PIM_NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in nb.cells)
    assert "matplotlib.use" not in source and "Agg" not in source


@pytest.mark.slow
def test_pim_notebook_executes(tmp_path):
    """The PIM paper's walk-through: DCG, profiling, the seven schemes, OPT against the MILP and a
    window's every path, what-ifs."""
    code, _, text = _execute(PIM_NOTEBOOK, tmp_path)
    assert "V_c 222, E_c 262, V_d 469, E_d 686" in text and "3 node runs" in text and "optimal: True" in text
    _assert_plots_inline(code, 3)


@pytest.mark.slow
def test_nsga2_notebook_executes(tmp_path):
    _, outputs, text = _execute(NSGA2_NOTEBOOK, tmp_path)
    assert "AlexNet on one CPU" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)
