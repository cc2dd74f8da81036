"""The tour notebook runs top to bottom in a real kernel and renders every plot inline."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "01_tour.ipynb"
PLOTTING = ("plt.", "plot_gantt(", "plot_front(", ".plot.")


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
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "analytic" in text and "fps" in text and "candidate EPs" in text
    plotting = [c for c in code if any(p in c.source for p in PLOTTING)]
    assert len(plotting) >= 6
    for c in plotting:   # every plot is rendered inline, in its own cell
        assert any("image/png" in o.get("data", {}) for o in c.get("outputs", [])), c.source[:60]


HOPE_NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "hope.ipynb"


@pytest.mark.slow
def test_hope_notebook_executes(tmp_path):
    """Three schedulers place a small DAG, the exact model bounds them, the Gantt of each plan."""
    nb = nbformat.read(HOPE_NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "optimal: True" in text and "HOPE:LP" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)


PIM_NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "pim.ipynb"


def test_pim_notebook_draws_inline():
    nb = nbformat.read(PIM_NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in nb.cells)
    assert "matplotlib.use" not in source and "Agg" not in source


@pytest.mark.slow
def test_pim_notebook_executes(tmp_path):
    """The PIM paper's walk-through: DCG, profiling, the seven schemes, OPT against the MILP and a
    window's every path, what-ifs."""
    nb = nbformat.read(PIM_NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "V_c 222, E_c 262, V_d 469, E_d 686" in text and "3 node runs" in text and "optimal: True" in text
    plotting = [c for c in code if any(p in c.source for p in PLOTTING)]
    assert len(plotting) >= 3
    for c in plotting:
        assert any("image/png" in o.get("data", {}) for o in c.get("outputs", [])), c.source[:60]
NSGA2_NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "nsga2.ipynb"


@pytest.mark.slow
def test_nsga2_notebook_executes(tmp_path):
    nb = nbformat.read(NSGA2_NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "AlexNet on one CPU" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)
