"""The hybrid-partitioning notebook runs top to bottom in a real kernel."""

from pathlib import Path

import pytest
from helpers import assert_notebook_current, assert_notebook_reproduces, execute_notebook

NOTEBOOK = Path(__file__).parents[1] / "notebook.ipynb"


@pytest.mark.slow
def test_nsga2_notebook_executes(tmp_path):
    _, outputs, text = execute_notebook(NOTEBOOK, tmp_path)
    assert "AlexNet on one CPU" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)


def test_notebook_outputs_are_committed_and_current():
    assert_notebook_current(NOTEBOOK)


@pytest.mark.slow
def test_notebook_outputs_reproduce():
    assert_notebook_reproduces(NOTEBOOK)
