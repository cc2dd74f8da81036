"""The tour notebook runs top to bottom in a real kernel and renders every plot inline (each paper's
notebook is tested with the paper: hetsim_papers/<paper>/tests/test_notebook.py)."""

from pathlib import Path

import nbformat
import pytest
from helpers import assert_plots_inline, execute_notebook

NOTEBOOKS = Path(__file__).parents[1] / "notebooks"
NOTEBOOK = NOTEBOOKS / "01_tour.ipynb"


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
    from hetsim.exploration import algorithms

    if "Shisha" not in {a.name for a in algorithms()}:
        pytest.skip("the tour compares Shisha (the shisha plugin, not installed) with SA and ES")
    code, _, text = execute_notebook(NOTEBOOK, tmp_path)
    assert "analytic" in text and "fps" in text and "candidate EPs" in text
    assert_plots_inline(code, 6)
