"""The CPU side of the ``pim:`` block fitted from measured per-op times (issue 30), by the generic
``hetsim calibrate platform --cost pim --fit ...``: it recovers known values from times the model
itself priced, leaves out the ops the model's CPU_P cannot run, and reads real ONNX Runtime
profiles of BERT-small run on this machine."""

from __future__ import annotations

import json
import os

import onnx
import pandas as pd
import pytest
import yaml

from hetsim.cli import main
from hetsim.cost import make_cost_model
from hetsim.cost.ort_profile import run_ort_profiles
from hetsim.platform import load_platform
from hetsim.workload import load_workload
from hetsim_papers.pim.networks import CPU_P_OP_TYPES, bert_small

NETWORK = "bert-small-p16"
C = "core_types.cortex-a53.pim"
#: The CPU side of the model, with bounds that hold the shipped values.
BOUNDS = {"op_overhead_us": "0.01:1e4", "elementwise_ns": "1e-4:1e3", "function_factor": "0.1:100",
          "matmul_ns_per_weight": "1e-4:1e3", "matmul_ns_per_mac": "1e-5:100",
          "parallel_speedup_elementwise": "1:64", "parallel_overhead_elementwise_us": "1e-3:1e4",
          "parallel_speedup_matmul": "1:64", "parallel_overhead_matmul_us": "1e-3:1e4"}


U = "accelerators.PIM.pim"
#: The PIM unit's per-op side (a board whose ONNX Runtime has the PIM's provider profiles it too).
UNIT_BOUNDS = {"op_overhead_us": "0.01:1e4", "elementwise_ns": "1e-4:1e3", "transpose_ns_per_weight": "1e-3:1e4"}


def _fit_args(unit: bool = False) -> list[str]:
    return [a for k, b in BOUNDS.items() for a in ("--fit", f"{C}.{k}={b}")] + \
        [a for k, b in (UNIT_BOUNDS.items() if unit else ()) for a in ("--fit", f"{U}.{k}={b}")]


def test_the_fit_recovers_the_values_that_priced_the_ops(tmp_path, capsys):
    """Per-op times priced by the pim model with pim-zynq's values on CPU_S, CPU_P and PIM (and
    rows for ops CPU_P or PIM cannot run, at any time) give back those values, and the unrunnable
    rows are left out."""
    platform = load_platform("pim-zynq")
    cost = make_cost_model(platform, model="pim", workload=load_workload(NETWORK))
    rows, unrunnable = [], 0
    for op in load_workload(NETWORK).ops:
        for ep in ("CPU_S", "CPU_P", "PIM"):
            if cost.supports(op, platform.ep(ep)):
                rows.append({"network": NETWORK, "op": op.name, "ep": ep, "time_s": cost.op_time(op, platform.ep(ep))})
            else:
                rows.append({"network": NETWORK, "op": op.name, "ep": ep, "time_s": 1.0})
                unrunnable += 1
    csv = tmp_path / "ops.csv"
    pd.DataFrame(rows).to_csv(csv, index=False)
    out = tmp_path / "fitted.yaml"
    main(["calibrate", "platform", "pim-zynq", "-m", str(csv), "--cost", "pim", *_fit_args(unit=True), "--out",
          str(out), "--json"])
    printed = json.loads(capsys.readouterr().out)
    got = printed["values"]
    assert len(printed["left_out"]) == unrunnable
    cpu = platform.core_type("cortex-a53").pim
    for field in ("op_overhead_us", "elementwise_ns", "function_factor", "matmul_ns_per_weight", "matmul_ns_per_mac",
                  "parallel_speedup_elementwise", "parallel_overhead_elementwise_us", "parallel_speedup_matmul",
                  "parallel_overhead_matmul_us"):
        assert got[f"{C}.{field}"] == pytest.approx(getattr(cpu, field), rel=1e-3), field
    unit = platform.accelerator("PIM").pim
    for field in UNIT_BOUNDS:
        assert got[f"{U}.{field}"] == pytest.approx(getattr(unit, field), rel=1e-3), field
    assert load_platform(out).core_type("cortex-a53").pim.matmul_ns_per_mac == pytest.approx(cpu.matmul_ns_per_mac,
                                                                                               rel=1e-3)
    assert f"{unrunnable} rows left out" in (tmp_path / "fitted.report.md").read_text()
    assert unrunnable > sum(op.op_type not in CPU_P_OP_TYPES for op in load_workload(NETWORK).ops)


def test_real_onnx_runtime_profiles_fit_the_cpu_side(tmp_path, capsys):
    """ONNX Runtime's profiler on BERT-small (one thread: CPU_S; two: CPU_P, when the machine has
    them) writes the profiles; the fit reads them, leaves out CPU_P's unrunnable ops and the CPU_P
    whole-network row, and writes a platform that loads and prices the network."""
    onnx.save(bert_small(p=16, weights="random"), tmp_path / "bert_small.onnx")
    threads = [1, 2] if len(os.sched_getaffinity(0)) >= 2 else [1]
    paths = run_ort_profiles(tmp_path / "bert_small.onnx", threads, tmp_path / "profiles", runs=3, warmup=1)
    ort = ["--ort", f"CPU_S={paths[1]}"] + (["--ort", f"CPU_P={paths[2]}"] if 2 in paths else [])
    out = tmp_path / "host.yaml"
    main(["calibrate", "platform", "pim-zynq", "--network", NETWORK, *ort, "--cost", "pim", *_fit_args(),
          "--out", str(out), "--name", "pim-zynq-host", "--json"])
    got = json.loads(capsys.readouterr().out)
    ops = {r["kind"]: r["rows"] for r in got["summary"]["kind"]}
    n = len(load_workload(NETWORK).ops)
    parallel = sum(op.op_type in CPU_P_OP_TYPES for op in load_workload(NETWORK).ops)
    assert ops["op"] == n + (parallel if 2 in paths else 0) and ops["network"] == 1
    fitted = load_platform(out)
    assert fitted.name == "pim-zynq-host"
    assert yaml.safe_load(out.read_text())["provenance"]["cost_parameters"] == "fitted"
    cost = make_cost_model(fitted, model="pim", workload=load_workload(NETWORK))
    assert sum(cost.op_time(op, fitted.ep("CPU_S")) for op in load_workload(NETWORK).ops) > 0


@pytest.mark.parametrize(("args", "message"), [
    ([], "name the fields to fit, --fit KEY=LOW:HIGH"),
    (["--mechanisms", "kinds", "--fit", f"{C}.elementwise_ns=0.1:10"], "fits exactly the --fit fields"),
])
def test_a_plugin_cost_model_without_fields_is_one_line_exit_2(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    csv = tmp_path / "m.csv"
    pd.DataFrame([{"network": NETWORK, "op": load_workload(NETWORK).ops[0].name, "ep": "CPU_S",
                   "time_s": 1e-5}]).to_csv(csv, index=False)
    with pytest.raises(SystemExit) as e:
        main(["calibrate", "platform", "pim-zynq", "-m", str(csv), "--cost", "pim", *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not list(tmp_path.glob("results/**/*.yaml"))
