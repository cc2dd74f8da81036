"""Pipe-it's notebook: committed with its outputs, current, and re-executed in a real kernel."""

from pathlib import Path

import pytest
from helpers import assert_notebook_current, assert_notebook_reproduces

NOTEBOOK = Path(__file__).parents[1] / "notebook.ipynb"


def test_notebook_outputs_are_committed_and_current():
    assert_notebook_current(NOTEBOOK)


@pytest.mark.slow
def test_notebook_outputs_reproduce():
    """Executed again, it prints what is committed (the designs against the single clusters, the s4/B4 ratios)."""
    assert_notebook_reproduces(NOTEBOOK)
