"""Platform schema for a first hour (issue 13): field descriptions in the JSON Schema, accelerator
precision (bytes and peak rate per datatype), the op-kind rule on every op kind, plausibility
warnings, the shipped RK3588-class SoC; measured tables mixed with the roofline; the Gantt chart
and tables that never cut numbers."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from helpers import assert_one_line_error, chain_workload

from hetsim.cost import CompositeCostModel, MeasuredCostModel, RooflineCostModel, make_cost_model
from hetsim.errors import HetsimError
from hetsim.mapping import load_mapping
from hetsim.platform import json_schema, load_platform, platform_from_dict, plausibility_warnings
from hetsim.workload import load_workload, workload_from_dict


def soc(**npu) -> dict:
    return {
        "schema": 2, "name": "soc", "memories": [{"name": "dram", "bandwidth_GBps": 20}],
        "core_types": [{"name": "cpu", "macs_per_cycle": 8, "dvfs": [{"name": "max", "freq_MHz": 2000}]}],
        "clusters": [{"name": "cpu", "symbol": "C", "core_type": "cpu", "cores": 4, "memory": "dram"}],
        "accelerators": [{"name": "npu", "kind": "npu", "memory": "dram", **npu}],
    }


# -- the JSON Schema ----------------------------------------------------------------------------------
def test_every_field_of_the_json_schema_has_a_description():
    schema = json.loads(json_schema())
    missing = [f"{name}.{key}" for name, d in [("Platform", schema), *schema["$defs"].items()]
               for key, prop in d.get("properties", {}).items() if not prop.get("description")]
    assert not missing, missing
    assert "Precision" in schema["$defs"]
    assert "int8" in schema["$defs"]["Precision"]["properties"]["dtype"]["description"]


# -- precision ----------------------------------------------------------------------------------------
def test_an_int8_npu_runs_at_its_int8_rate_on_int8_bytes():
    p = platform_from_dict(soc(precisions=[{"dtype": "int8", "peak_GMACps": 3000},
                                           {"dtype": "float16", "peak_GMACps": 250}],
                               compute_dtype="int8", roofline={"efficiency": 0.5}))
    wl = chain_workload([64, 64])
    cost = RooflineCostModel(p)
    npu = p.ep("npu")
    conv = wl.op("conv2")
    d = cost.op_demand(conv, npu)
    fp32_bytes = conv.input_bytes + conv.output_bytes + conv.weight_bytes + 2 * conv.im2col_bytes
    assert d.bytes_ == pytest.approx(fp32_bytes / 4)                 # 1 byte per element, not 4
    assert d.busy_s == pytest.approx(max(conv.macs / 1500e9, fp32_bytes / 4 / 20e9))
    # Without compute_dtype a float32 op has no rate on an NPU that lists only int8 and float16.
    q = platform_from_dict(soc(precisions=[{"dtype": "int8", "peak_GMACps": 3000}], peak_GMACps=100))
    assert RooflineCostModel(q).op_demand(conv, q.ep("npu")).busy_s == pytest.approx(
        max(conv.macs / 100e9, fp32_bytes / 20e9))


def test_an_op_runs_in_its_own_datatype_when_the_accelerator_lists_it():
    p = platform_from_dict(soc(peak_GMACps=100, precisions=[{"dtype": "float16", "peak_GMACps": 400}]))
    wl = workload_from_dict({
        "schema": 1, "name": "half", "input": {"h": 16, "w": 16, "c": 8}, "layer_kinds": ["conv"],
        "ops": [{"name": "c16", "kind": "conv", "kernel": 3, "out_c": 64, "pad": 1, "dtype": "float16"},
                {"name": "c32", "kind": "conv", "kernel": 3, "out_c": 64, "pad": 1}]}, "half")
    cost = RooflineCostModel(p)
    npu = p.ep("npu")
    half, full = wl.op("c16"), wl.op("c32")
    assert cost.op_demand(half, npu).busy_s == pytest.approx(max(half.macs / 400e9, cost.op_demand(half, npu).bytes_ / 20e9))
    assert cost.op_demand(full, npu).busy_s == pytest.approx(max(full.macs / 100e9, cost.op_demand(full, npu).bytes_ / 20e9))


@pytest.mark.parametrize("npu,fragment", [
    ({"precisions": [{"dtype": "int4", "peak_GMACps": 6000}], "compute_dtype": "int4"},
     "dtype 'int4' is not one hetsim knows"),
    ({"precisions": [{"dtype": "int8", "peak_GMACps": 1, "bytes": 2}], "compute_dtype": "int8"},
     "bytes 2 contradicts int8, which has 1 byte(s) per element"),
    ({"precisions": [{"dtype": "int8", "peak_GMACps": 1}]}, "peak_GMACps is required unless compute_dtype"),
    ({"peak_GMACps": 1, "compute_dtype": "int3"}, "compute_dtype 'int3' is neither a listed precision"),
    ({"precisions": [{"dtype": "int8", "peak_GMACps": 1}, {"dtype": "int8", "peak_GMACps": 2}],
      "compute_dtype": "int8"}, "duplicate name 'int8'"),
])
def test_precision_errors(npu, fragment):
    with pytest.raises(HetsimError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        platform_from_dict(soc(**npu))


def test_int4_with_its_bytes_is_fine():
    p = platform_from_dict(soc(precisions=[{"dtype": "int4", "peak_GMACps": 6000, "bytes": 0.5}],
                               compute_dtype="int4"))
    assert RooflineCostModel(p).ep_rates(p.ep("npu")).compute_bytes == 0.5


# -- the op-kind rule ---------------------------------------------------------------------------------
def test_the_kinds_rule_applies_to_every_op_kind_but_views():
    p = platform_from_dict(soc(peak_GMACps=100, kinds=["conv"]))
    cost = RooflineCostModel(p)
    wl = workload_from_dict({
        "schema": 1, "name": "k", "input": {"h": 8, "w": 8, "c": 4}, "layer_kinds": ["conv", "fc"],
        "ops": [{"name": "conv1", "kind": "conv", "kernel": 3, "out_c": 8, "pad": 1},
                {"name": "relu1", "kind": "relu"},
                {"name": "conv2", "kind": "conv", "kernel": 3, "out_c": 8, "pad": 1},
                {"name": "flat", "kind": "flatten"}, {"name": "fc1", "kind": "fc", "out_c": 10}]}, "k")
    npu = p.ep("npu")
    assert not cost.supports(wl.op("relu1"), npu)         # no MACs, still refused
    assert cost.supports(wl.op("flat"), npu)              # a view: no kernel runs
    with pytest.raises(HetsimError, match="npu cannot run op relu1 \\(kind relu\\) of layer 1"):
        load_mapping("npu:1|C4:2-3", p, wl, cost)
    assert load_mapping("C2:1|npu:2|C2:3", p, wl, cost)   # conv2 + flatten on the NPU


# -- plausibility ---------------------------------------------------------------------------------------
def test_plausibility_warnings_name_the_field_and_the_slip():
    p = load_platform("hikey970", ["core_types.cortex-a73.dvfs.max.freq_MHz=2.4",
                                   "memories.dram.bandwidth_GBps=29900",
                                   "core_types.cortex-a53.dvfs.max.active_W_per_core=250"])
    lines = plausibility_warnings(p)
    assert ("core_types.cortex-a73.dvfs.max.freq_MHz: 2.4 looks like GHz (2.4 GHz is freq_MHz: 2400); "
            "cores run at 100-5000 MHz") in lines
    assert any(line.startswith("memories.dram.bandwidth_GBps: 29900 looks like MB/s") for line in lines)
    assert any(line.startswith("core_types.cortex-a53.dvfs.max.active_W_per_core: 250 looks like mW")
               for line in lines)


@pytest.mark.parametrize("name", ["hikey970", "jetson-tx2", "knl", "rk3588"])   # the papers': with them
def test_shipped_platforms_are_plausible(name):
    assert plausibility_warnings(load_platform(name)) == []


def test_a_warning_is_printed_once_and_is_not_an_error(hetsim, tmp_path):
    args = ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-11", "--engine", "analytic",
            "--set", "core_types.cortex-a73.dvfs.max.freq_MHz=2.3"]
    p = hetsim(*args)
    assert p.returncode == 0
    warnings = [ln for ln in p.stderr.splitlines() if ln.startswith("hetsim: warning:")]
    assert len(warnings) == 1 and "freq_MHz: 2.3 looks like GHz" in warnings[0]
    assert "hetsim: warning:" not in hetsim(*args).stderr        # once per process
    bad = tmp_path / "p.yaml"
    bad.write_text((load_platform.__globals__["resolve_platform"]("hikey970")).read_text()
                   .replace("freq_MHz: 2400", "freq_MHz: 2.2"))
    p = hetsim("platforms", "validate", str(bad))
    assert p.returncode == 0 and f"{bad}: ok" in p.stdout
    assert "warning:" in p.stderr and "freq_MHz: 2.2 looks like GHz" in p.stderr


# -- the RK3588-class SoC -------------------------------------------------------------------------------
def test_rk3588_from_public_specs():
    p = load_platform("rk3588")
    assert [ep.name for ep in p.eps()] == ["B1", "B2", "B3", "B4", "s1", "s2", "s3", "s4", "gpu", "npu"]
    npu, gpu = p.accelerator("npu"), p.accelerator("gpu")
    assert npu.compute_dtype == "int8" and npu.precision("int8").peak_GMACps * 2 == 6000   # 6 TOPS
    assert gpu.peak_GMACps * 2 == 4 * 64 * 2 * 1.0                                        # 512 GFLOPS
    assert "lrn" not in npu.kinds and p.has_power_model
    assert p.memory("dram").bandwidth_GBps == pytest.approx(4224e6 * 8 / 1e9, rel=1e-3)
    assert len(p.sources) >= 4


def test_platforms_show_labels_effective_rates_and_precisions(hetsim):
    out = hetsim("platforms", "show", "rk3588").stdout
    assert "effective = what the roofline cost model uses" in out
    rows = {(c[0], c[4]): c for line in out.splitlines()
            if len(c := [x.strip() for x in line.strip("│ ").split("│")]) == 11}
    assert rows[("npu", "int8 *")][7:9] == ["3000", "900.00"]   # peak and peak x efficiency
    assert rows[("gpu", "float16")][7:9] == ["512", "128.00"]
    assert rows[("B4", "float32")][7:9] == ["76.80", "23.04"]


# -- measured tables with a fallback -------------------------------------------------------------------
@pytest.fixture()
def npu_table(tmp_path):
    """Measured times of resnet50's first 20 layers on the NPU only."""
    path = tmp_path / "npu.csv"
    pd.DataFrame({"layer": range(1, 21), "ep": "npu", "time_s": 1e-4}).to_csv(path, index=False)
    return path


def test_composite_takes_measured_entries_and_the_roofline_for_the_rest(npu_table):
    p = load_platform("rk3588")
    wl = load_workload("resnet50")
    cost = make_cost_model(p, npu_table, "roofline")
    assert isinstance(cost, CompositeCostModel)
    roof = RooflineCostModel(p)
    t = cost.layer_times(wl, p.ep("npu"))
    assert (t[:20] == 1e-4).all()
    assert t[20:] == pytest.approx(roof.layer_times(wl, p.ep("npu"))[20:], rel=1e-12)
    assert cost.layer_times(wl, p.ep("B4")) == pytest.approx(roof.layer_times(wl, p.ep("B4")), rel=1e-12)
    assert cost.coverage(wl, [p.ep("npu"), p.ep("gpu")]) == (20, 2 * wl.num_layers)
    with pytest.raises(HetsimError, match="no time for resnet50 layer 21 on npu"):
        MeasuredCostModel(p, npu_table).layer_times(wl, p.ep("npu"))


def test_composite_by_op_prices_missing_ops_with_the_roofline(tmp_path):
    p = platform_from_dict(soc(peak_GMACps=100))
    wl = chain_workload([8, 8])
    table = pd.DataFrame({"op": ["conv1", "relu1"], "ep": "npu", "time_s": [2e-3, 1e-3]})
    cost = CompositeCostModel(MeasuredCostModel(p, table), RooflineCostModel(p))
    npu = p.ep("npu")
    assert cost.op_time(wl.op("conv1"), npu) == 2e-3
    assert cost.op_time(wl.op("conv2"), npu) == RooflineCostModel(p).op_time(wl.op("conv2"), npu)
    assert cost.supports(wl.op("conv2"), npu)
    assert not MeasuredCostModel(p, table).supports(wl.op("conv2"), npu)


def test_cost_table_and_fallback_on_the_command_line(hetsim, npu_table):
    base = ["-p", "rk3588", "-w", "resnet50"]
    p = hetsim("simulate", *base, "-m", "npu:1-20|gpu:21-54", "--cost-table", str(npu_table),
               "--fallback", "roofline", "--json")
    assert p.returncode == 0, p.stderr
    stage1 = json.loads(p.stdout)["stages"][0]
    assert stage1["compute_s"] == pytest.approx(20 * 1e-4, rel=1e-9)
    assert_one_line_error(hetsim("simulate", *base, "-m", "npu:1-20|gpu:21-54", "--cost-table", str(npu_table)),
                          "npu.csv: no time for resnet50 layer 21 on npu")
    p = hetsim("explore", *base, "--cost-table", str(npu_table), "--fallback", "roofline", "-a", "HC", "--json")
    assert p.returncode == 0, p.stderr
    assert "--cost-table: 20 of 216 (layer, EP) times measured" in p.stderr


def test_layer_tables_are_1_based(tmp_path):
    path = tmp_path / "zero.csv"
    pd.DataFrame({"layer": [0, 1], "ep": "B4", "time_s": 1e-3}).to_csv(path, index=False)
    with pytest.raises(HetsimError, match="row 2: layer 0; layers are 1-based"):
        MeasuredCostModel(load_platform("hikey970"), path)


# -- Gantt and tables --------------------------------------------------------------------------------
def test_gantt_says_how_many_frames_it_draws_and_shows_layers():
    import matplotlib.pyplot as plt

    from hetsim.evaluation import simulate
    from hetsim.sim.trace import plot_gantt, stage_layers

    p = load_platform("hikey970")
    wl = load_workload("alexnet")
    cost = RooflineCostModel(p)
    pipe = load_mapping("B4:1-6|s4:7-11", p, wl, cost)
    run = simulate(p, wl, pipe, cost=cost, frames=30)
    layers = stage_layers(pipe, wl, cost)
    assert [n for n, _ in layers["stage 1 (B4)"]] == ["L1", "L2", "L3", "L4", "L5", "L6"]
    assert sum(s for _, s in layers["stage 2 (s4)"]) == pytest.approx(1.0)
    fig = plot_gantt(run.intervals, title="t")
    assert "frames 0-11 of 30" in fig.axes[0].get_title()
    plt.close(fig)
    fig = plot_gantt(run.intervals, title="t", max_frames=2, layers=layers)
    title = fig.axes[0].get_title()
    assert "frames 0-1 of 30" in title and "ticks = layers" in title
    assert {t.get_text() for t in fig.axes[0].texts} >= {"L1", "L7"}
    plt.close(fig)
    fig = plot_gantt(run.intervals, max_frames=100)
    assert "all 30 frames" in fig.axes[0].get_title()
    plt.close(fig)


def test_tables_never_cut_numbers():
    from rich.console import Console
    from rich.table import Table

    from hetsim.cli._common import _Console

    t = Table(*[f"column {i}" for i in range(8)])
    t.add_row(*[f"{123456.789012 * (i + 1):.6f}" for i in range(8)])
    narrow = Console(width=40, record=True)
    narrow.print(t)
    assert "…" in narrow.export_text()                       # what rich does by itself
    t = Table(*[f"column {i}" for i in range(8)])
    t.add_row(*[f"{123456.789012 * (i + 1):.6f}" for i in range(8)])
    ours = _Console(width=40, record=True)
    ours.print(t)
    text = ours.export_text()
    assert "…" not in text
    for i in range(8):
        assert f"{123456.789012 * (i + 1):.6f}" in text
