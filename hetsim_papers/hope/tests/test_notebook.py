"""HOPE's notebook runs top to bottom in a real kernel."""

from pathlib import Path

import pytest
from helpers import assert_notebook_current, assert_notebook_reproduces, execute_notebook

NOTEBOOK = Path(__file__).parents[1] / "notebook.ipynb"


@pytest.mark.slow
def test_hope_notebook_executes(tmp_path):
    """Three schedulers place a small DAG, the exact model bounds them, the Gantt of each plan."""
    _, outputs, text = execute_notebook(NOTEBOOK, tmp_path)
    assert "optimal: True" in text and "HOPE:LP" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)


def test_notebook_outputs_are_committed_and_current():
    assert_notebook_current(NOTEBOOK)


@pytest.mark.slow
def test_notebook_outputs_reproduce():
    assert_notebook_reproduces(NOTEBOOK)
