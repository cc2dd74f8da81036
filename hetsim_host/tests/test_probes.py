"""The research probes of hetsim_host/probes (docs/fidelity.md): each one runs as a module, and the
parts that turn saved runs into the page's tables compute what they say. Nothing here measures."""

from __future__ import annotations

import importlib
import json
import sys

import numpy as np
import pytest

from hetsim_host.probes import fidelity, pool_taps

PROBES = ["fidelity", "gemv_lead", "gemm_after_gap", "pool_taps"]


@pytest.mark.parametrize("name", PROBES)
def test_every_probe_runs_as_a_module(monkeypatch, capsys, name):
    mod = importlib.import_module(f"hetsim_host.probes.{name}")
    monkeypatch.setattr(sys, "argv", [f"python -m hetsim_host.probes.{name}", "--help"])
    with pytest.raises(SystemExit) as e:
        mod.main()
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith("usage: python -m hetsim_host.probes.")


def _row(run: str, network: str, model: str, layer: float, mapping: float) -> dict:
    return {"run": run, "network": network, "model": model, "layer_mape": layer, "mapping_err": mapping}


def test_the_analysis_table_is_the_median_over_runs_of_the_mean_over_networks():
    rows = [_row("run1", "a", "gemm2", 0.04, 0.02), _row("run1", "b", "gemm2", 0.08, 0.06),
            _row("run2", "a", "gemm2", 0.10, 0.01), _row("run2", "b", "gemm2", 0.12, 0.03),
            _row("run3", "a", "gemm2", 0.07, 0.05), _row("run3", "b", "gemm2", 0.07, 0.05)]
    lines = fidelity.analysis_table(rows).splitlines()
    # per network: every run, and their median
    assert "| a | gemm2 | 4.0%, 10.0%, 7.0% | 7.0% | 2.0%, 1.0%, 5.0% | 2.0% |" in lines
    # per model: run means 6 %, 11 %, 7 % (median 7 %); run medians of the mapping errors 4 %, 2 %, 5 %
    assert lines[-1] == "| gemm2 | 7.0% (6.0%-11.0%) | 4.0% (2.0%-5.0%) |"


def test_gemv_rows_come_from_a_rows_file_or_a_later_calibration():
    rows = [{"k": 1024, "m": 1000, "threads": 1, "time_s": 2e-4}]
    assert fidelity.gemv_rows({"rows": rows}) == rows
    assert fidelity.gemv_rows({"measurements": {"gemv": rows, "gemm": []}}) == rows
    with pytest.raises(SystemExit, match="no cold-GEMV rows"):
        fidelity.gemv_rows({"measurements": {"gemm": []}})


def test_the_summary_reads_each_runs_reports(tmp_path):
    for i, (layer, errs) in enumerate([(0.05, [0.01, -0.03, 0.02]), (0.07, [0.04, 0.0, -0.01])], start=1):
        d = tmp_path / f"run{i}" / "alexnet"
        d.mkdir(parents=True)
        rep = {"costs": ["roofline"], "layer_mape_by_cost": {"roofline": layer},
               "mappings": [{"by_cost": {"roofline": {"error": e}}} for e in errs]}
        (d / "report.json").write_text(json.dumps(rep))
    assert fidelity.summary(tmp_path).splitlines()[-1] == "| alexnet | roofline | 5.0%, 7.0% | 6.0% | 2.0%, 1.0% | 1.5% |"


@pytest.mark.parametrize("out", pool_taps.OUTPUTS)
@pytest.mark.parametrize("kernel, stride", pool_taps.WINDOWS)
def test_the_pool_probe_builds_each_window_on_the_same_output(out, kernel, stride):
    op = pool_taps.pool_op("maxpool", out, kernel, stride)
    assert tuple(op.out_shape) == out
    h, w, c = out
    # a 1x1 stride-2 window reads one input pixel per output pixel (Op.input_bytes: what the windows
    # cover); the others read all their input
    in_elements = h * w * c if stride > kernel else int(np.prod(tuple(op.in_shape)))
    assert op.input_bytes == 4 * in_elements
    assert op.output_bytes == 4 * h * w * c
