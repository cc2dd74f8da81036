"""Figures a paper can print: the format follows the suffix everywhere a figure is written, PDF and
SVG bytes do not change from run to run, the library never switches matplotlib's backend, and sweep
plots draw geometric axes on log x, categories as categories and labels with units."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import assert_one_line_error, subprocess_env

from hetsim.figures import check_figure_path, figure_format
from hetsim.sweep.plot import is_geometric, label
from hetsim.sweep.plot import plot as sweep_plot

MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF-", ".svg": b"<?xml"}
SIM = ["simulate", "-p", "hikey970", "-w", "squeezenet", "-m", "B4:1-16|s4:17-26", "--frames", "6"]


@pytest.mark.parametrize("suffix", [".png", ".pdf", ".svg"])
def test_gantt_format_follows_suffix_and_bytes_repeat(hetsim, tmp_path, suffix):
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    for path in (a, b):
        r = hetsim(*SIM, "--gantt", str(path))
        assert r.returncode == 0, r.stderr
    assert a.read_bytes().startswith(MAGIC[suffix])
    assert a.read_bytes() == b.read_bytes()       # no date, no random ids


@pytest.mark.parametrize(("flag", "argv"), [
    ("--gantt", SIM),
    ("--plot", ["explore", "-p", "hikey970", "-w", "alexnet", "-a", "ES", "--depth", "2"]),
])
def test_figure_without_a_figure_suffix_is_refused_before_any_work(hetsim, tmp_path, flag, argv):
    out = tmp_path / "figure.jpg"
    r = hetsim(*argv, flag, str(out))
    assert_one_line_error(r, f"{flag} {out}: a figure is written as its suffix says; allowed: .png, .pdf, .svg")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_figure_format():
    assert [figure_format(f"x.{s}") for s in ("png", "PDF", "svg")] == ["png", "pdf", "svg"]
    for bad in ("x", "x.eps", "x.png.bak"):
        with pytest.raises(Exception, match="allowed: .png, .pdf, .svg"):
            check_figure_path(bad, "--out")


def test_library_leaves_the_backend_alone(tmp_path):
    """Importing every module that draws and drawing with it keeps the backend the user chose (a
    notebook's inline backend): no matplotlib.use in hetsim, the papers or the host tool."""
    code = f"""
import matplotlib
matplotlib.use("template")
import importlib, pkgutil
pkgs = []
for name in ("hetsim", "hetsim_papers", "hetsim_host"):   # the papers and the host tool where installed
    try:
        pkgs.append(importlib.import_module(name))
    except ImportError:
        pass
for pkg in pkgs:
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if ".tests" not in m.name and not m.name.endswith("__main__"):
            importlib.import_module(m.name)
import pandas as pd
from hetsim.sweep.plot import plot
from hetsim.sim.trace import plot_gantt
from hetsim.evaluation import simulate
from hetsim.platform import load_platform
from hetsim.workload import load_workload
from hetsim.mapping import load_mapping
p, w = load_platform("hikey970"), load_workload("alexnet")
plot_gantt(simulate(p, w, load_mapping("B4:1-9|s4:10-11", p, w), frames=3).intervals, r"{tmp_path / 'g.png'}")
t = pd.DataFrame({{"cell": [0, 1], "x": [1, 2], "status": ["ok", "ok"], "throughput_fps": [1.0, 2.0]}})
plot(t, "x", "throughput_fps")
assert matplotlib.get_backend() == "template", matplotlib.get_backend()
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(),
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def test_no_backend_switch_in_library_source():
    root = Path(__file__).resolve().parents[1]
    hits = [str(p.relative_to(root)) for pkg in ("hetsim", "hetsim_papers", "hetsim_host")
            if (root / pkg).is_dir() for p in (root / pkg).rglob("*.py")
            if "/tests/" not in str(p) and "matplotlib.use(" in p.read_text()]
    assert hits == []


def _table() -> pd.DataFrame:
    """A sweep over a geomspace axis, two seeds per point; the bottleneck moves from stage 1 to 2
    and is split between them at one point."""
    bw = [1, 4, 16, 64]
    rows = []
    for i, b in enumerate(bw):
        for seed in (0, 1):
            stage = 1 if i < 2 else 2
            if i == 1:
                stage = 1 + seed * 0        # both seeds agree
            if i == 2:
                stage = 2 if seed == 0 else 1   # a tie: the smaller stage is shown
            rows.append({"cell": len(rows), "memories.dram.bandwidth_GBps": b, "seed": seed, "status": "ok",
                         "throughput_fps": 10.0 * (i + 1) + seed, "bottleneck_stage": stage})
    return pd.DataFrame(rows)


def test_sweep_plot_log_axis_categories_and_units():
    import matplotlib.pyplot as plt

    t = _table()
    fig = sweep_plot(t, "memories.dram.bandwidth_GBps", "throughput_fps")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"                     # a geomspace axis
    assert ax.get_xlabel() == "memories.dram.bandwidth (GB/s)" and ax.get_ylabel() == "throughput (frames/s)"
    plt.close(fig)
    fig = sweep_plot(t, "memories.dram.bandwidth_GBps", "bottleneck_stage")
    ax = fig.axes[0]
    ys = list(ax.lines[0].get_ydata())
    assert ys == [1.0, 1.0, 1.0, 2.0]                    # the most frequent stage, never a mean such as 1.5
    assert ax.lines[0].get_drawstyle() == "steps-mid"
    assert all(float(v).is_integer() for v in ax.get_yticks())
    assert ax.get_ylabel() == "bottleneck stage"
    assert "most frequent" in fig._suptitle.get_text()
    plt.close(fig)
    linear = t.assign(**{"memories.dram.bandwidth_GBps": t["memories.dram.bandwidth_GBps"].map({1: 1, 4: 2, 16: 3, 64: 4})})
    fig = sweep_plot(linear, "memories.dram.bandwidth_GBps", "throughput_fps")
    assert fig.axes[0].get_xscale() == "linear"
    plt.close(fig)


def test_labels_and_geometric():
    assert label("energy_per_frame_J") == "energy per frame (J)"
    assert label("stream_throughput_fps") == "stream throughput (frames/s)"
    assert label("evaluations") == "evaluations"
    assert is_geometric([1, 2, 4, 8]) and is_geometric([64, 1, 8]) and not is_geometric([1, 2, 3])
    assert not is_geometric([1, 2]) and not is_geometric([-1, 1, -1, 4])


def test_plot_command_writes_pdf_and_svg(hetsim, tmp_path):
    out = tmp_path / "sweep"
    out.mkdir()
    _table().to_csv(out / "results.csv", index=False)
    for suffix in (".pdf", ".svg"):
        r = hetsim("plot", str(out), "--x", "memories.dram.bandwidth_GBps", "--y", "bottleneck_stage",
                   "--out", str(tmp_path / f"p{suffix}"))
        assert r.returncode == 0, r.stderr
        assert (tmp_path / f"p{suffix}").read_bytes().startswith(MAGIC[suffix])
    r = hetsim("plot", str(out), "--x", "memories.dram.bandwidth_GBps", "--y", "throughput_fps",
               "--out", str(tmp_path / "p.gif"))
    assert_one_line_error(r, "--out")
    assert not (tmp_path / "p.gif").exists()
