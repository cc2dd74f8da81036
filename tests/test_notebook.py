"""The tour notebook runs top to bottom in a real kernel."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "01_tour.ipynb"


@pytest.mark.slow
def test_tour_notebook_executes(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "analytic" in text and "fps" in text
    assert any("image/png" in o.get("data", {}) for o in outputs)


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
