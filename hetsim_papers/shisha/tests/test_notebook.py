"""Shisha's notebook: committed with its outputs, current, and re-executed in a real kernel."""

from pathlib import Path

import pytest
from helpers import assert_notebook_current, assert_notebook_reproduces

NOTEBOOK = Path(__file__).parents[1] / "notebook.ipynb"


def test_notebook_outputs_are_committed_and_current():
    assert_notebook_current(NOTEBOOK)


@pytest.mark.slow
def test_notebook_outputs_reproduce():
    """Executed again, it prints what is committed (Shisha against the baselines on C2, and outside its home on rk3588)."""
    assert_notebook_reproduces(NOTEBOOK)
