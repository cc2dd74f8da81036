"""The PIM paper's notebook runs top to bottom in a real kernel and draws inline."""

from pathlib import Path

import nbformat
import pytest
from helpers import (
    assert_notebook_current,
    assert_notebook_reproduces,
    assert_plots_inline,
    execute_notebook,
)

NOTEBOOK = Path(__file__).parents[1] / "notebook.ipynb"


def test_pim_notebook_draws_inline():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    source = "\n".join(c.source for c in nb.cells)
    assert "matplotlib.use" not in source and "Agg" not in source


@pytest.mark.slow
def test_pim_notebook_executes(tmp_path):
    """The PIM paper's walk-through: DCG, profiling, the seven schemes, OPT against the MILP and a
    window's every path, what-ifs."""
    code, _, text = execute_notebook(NOTEBOOK, tmp_path)
    assert "V_c 222, E_c 262, V_d 469, E_d 686" in text and "3 node runs" in text and "optimal: True" in text
    assert_plots_inline(code, 3)


def test_notebook_outputs_are_committed_and_current():
    assert_notebook_current(NOTEBOOK)


@pytest.mark.slow
def test_notebook_outputs_reproduce():
    assert_notebook_reproduces(NOTEBOOK)
