"""Optional parts: a command that needs a package an extra brings, when it is missing, says which
extra in one line (exit 2); the table of extras matches pyproject.toml; a missing module no extra
brings is a bug and shows as one."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from helpers import assert_one_line_error

from hetsim.extras import EXTRAS, missing_extra

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())


def test_every_extra_named_exists_and_the_core_needs_none_of_them():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert set(EXTRAS.values()) <= set(extras)
    core = " ".join(PYPROJECT["project"]["dependencies"])
    assert not any(module in core for module in ("onnx", "pymoo", "ortools", "distributed"))
    assert "hetsim[all]" in extras["dev"]       # make test installs every optional part


def test_the_message_names_the_extra():
    line = missing_extra(ModuleNotFoundError("No module named 'ortools.sat'", name="ortools.sat"))
    assert line is not None and "pip install 'hetsim[ilp]'" in line and "'ortools'" in line
    assert missing_extra(ModuleNotFoundError("No module named 'nonsense'", name="nonsense")) is None


@pytest.mark.parametrize("module, extra", [("pymoo", "moo"), ("onnx", "onnx")])
def test_a_command_without_its_extra_is_one_line(hetsim, monkeypatch, module, extra):
    # the package made unimportable, as in an installation without the extra
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)
    if module == "pymoo":
        for name in [m for m in sys.modules if m.startswith("hetsim.exploration.moo")]:
            monkeypatch.delitem(sys.modules, name)
        run = hetsim("explore", "-p", "hikey970", "-w", "alexnet", "-a", "NSGA-II-pipe", "--max-trials", "10")
    else:
        run = hetsim("workloads", "export", "squeezenet", "--out", "x.onnx")
    assert_one_line_error(run, f"pip install 'hetsim[{extra}]'")


def test_listing_the_generated_networks_needs_no_onnx():
    """The networks' modules import onnx only when a network is built: `hetsim workloads list`
    works without the [onnx] extra, and building one then says which extra it needs."""
    code = (
        "import sys\n"
        "sys.modules['onnx'] = None\n"             # as in an installation without the extra
        "from hetsim.workload.networks import generated\n"
        "names = generated()\n"
        "assert {'resnet18-onnx', 'bert-small-p16', 'nasnet-large', 'alexnet-onnx'} <= set(names), names\n"
        "try:\n"
        "    names['resnet18-onnx']()\n"
        "except ModuleNotFoundError as e:\n"
        "    from hetsim.extras import missing_extra\n"
        "    print(missing_extra(e))\n"
    )
    assert "pip install 'hetsim[onnx]'" in _python(code)


def test_listing_the_experiments_needs_no_extra():
    """Papers register their experiments as "module:function": `hetsim reproduce --list` imports no
    experiment module, so it works without pymoo, ortools or onnx; running one that needs them
    then names the extra."""
    code = (
        "import sys\n"
        "for m in ('pymoo', 'ortools', 'onnx', 'onnxruntime'):\n"
        "    sys.modules[m] = None\n"              # as in an installation without the extras
        "from hetsim.experiment import load_papers\n"
        "registry = load_papers()\n"
        "assert {'e1', 'table2'} <= set(registry['nsga2']) and 'ablations' in registry['hope'], registry\n"
        "assert not [m for m in sys.modules if m.startswith('hetsim_papers.nsga2.experiments.')], 'imported'\n"
        "try:\n"
        "    registry['nsga2']['e1'].function\n"
        "except ModuleNotFoundError as e:\n"
        "    from hetsim.extras import missing_extra\n"
        "    print(missing_extra(e))\n"
    )
    assert "pip install 'hetsim[" in _python(code)


def _python(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter (it must succeed)."""
    import os
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                         env={**os.environ, "HETSIM_DISABLE_PLUGINS": "example"})
    assert out.returncode == 0, out.stderr
    return out.stdout
