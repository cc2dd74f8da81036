"""What issue 31's new user met, each fixed: EPs at peak said so, capability errors naming the layer
and the op kind (and a measured table's missing EP), generated networks listed, error paths that
--set accepts, and "did you mean" for near-miss keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsim.cost import MeasuredCostModel, make_cost_model, peak_note
from hetsim.errors import HetsimError
from hetsim.exploration.space import incapable_layers
from hetsim.mapping import load_mapping
from hetsim.platform import load_platform
from hetsim.platform.plausibility import at_peak
from hetsim.workload import load_workload

PHONE = str(Path(__file__).resolve().parent / "data" / "phone-soc.yaml")


def test_eps_without_cost_parameters_run_at_peak_and_say_so(hetsim):
    phone = load_platform(PHONE)
    assert at_peak(phone, "roofline") == ["perf-core", "eff-core", "gpu", "npu"]
    assert at_peak(load_platform("rk3588"), "roofline") == []          # sourced blocks
    one = load_platform("rk3588", ["accelerators.npu.roofline.efficiency=0.3"])
    assert at_peak(one, "roofline") == []
    note = peak_note(phone, make_cost_model(phone))
    assert "every core type and accelerator (perf-core, eff-core, gpu, npu)" in note and "100 % of peak" in note
    v = hetsim("platforms", "validate", PHONE)
    assert v.returncode == 0 and "no fitted or sourced roofline parameters" in v.stderr
    s = hetsim("simulate", "-p", PHONE, "-w", "resnet50", "-m", "npu:1-54")
    assert s.returncode == 0 and "hetsim: note: phone-soc: every core type" in s.stderr
    e = hetsim("explore", "-p", PHONE, "-w", "resnet18-onnx", "-a", "HC", "--confirm-top", "0")
    assert "100 % of peak" in e.stderr
    quiet = hetsim("simulate", "-p", "rk3588", "-w", "resnet50", "-m", "npu:1-54")
    assert "100 % of peak" not in quiet.stderr


def test_capability_errors_name_the_layer_the_op_and_its_kind():
    rk, w = load_platform("rk3588"), load_workload("resnet18-onnx")
    cost = make_cost_model(rk)
    with pytest.raises(HetsimError, match=r"npu cannot run layer 20 \(op 'avgpool', kind reduce\): kind reduce "
                                          r"is not one of the kinds npu runs"):
        load_mapping("npu:1-21", rk, w, cost)
    assert incapable_layers(cost, w, rk.ep("npu")).startswith("npu cannot run layer 20 (op 'avgpool', kind reduce)")
    assert incapable_layers(cost, w, rk.ep("gpu")) is None


def test_a_measured_table_without_an_ep_says_the_ep_is_missing(tmp_path):
    hikey, w = load_platform("hikey970"), load_workload("alexnet")
    table = tmp_path / "costs.csv"
    table.write_text("op,ep,time_s\n" + "".join(f"{op.name},B4,0.001\n" for op in w.ops))
    cost = MeasuredCostModel(hikey, table)
    with pytest.raises(HetsimError, match=r"the measured table .*costs.csv has no entry for EP s4 \(it measures B4\)"):
        load_mapping("B4:1-4|s4:5-11", hikey, w, cost)


def test_workloads_list_shows_the_generated_networks(hetsim):
    p = hetsim("workloads", "list")
    assert p.returncode == 0
    rows = {line.split("│")[1].strip(): line for line in p.stdout.splitlines() if line.count("│") > 3}
    assert "resnet18-onnx" in rows and "generated (core)" in rows["resnet18-onnx"]
    assert "resnet50" in rows and "file" in rows["resnet50"]


def test_an_error_path_pasted_into_set_works(hetsim):
    bad = hetsim("simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-8",
                 "--set", "core_types.cortex-a73.dvfs.max.freq_MHz=-3")
    assert bad.returncode == 2 and "core_types.cortex-a73.dvfs.max.freq_MHz: must be" in bad.stderr
    by_index = hetsim("simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-8",
                      "--set", "core_types.0.dvfs.0.freq_MHz=-3")
    assert by_index.returncode == 2 and "core_types.cortex-a73.dvfs.max.freq_MHz: must be" in by_index.stderr
    assert load_platform("hikey970", ["core_types.0.dvfs.0.freq_MHz=1000"]).core_type("cortex-a73").dvfs[0].freq_MHz == 1000


@pytest.mark.parametrize("override, hint", [
    ("clusters.bigg.cores=3", "no entry named 'bigg' at clusters.bigg (did you mean 'big'?)"),
    ("memories.dram.bandwith_GBps=3", "memories.dram.bandwith_GBps: unknown key (did you mean 'bandwidth_GBps'?)"),
])
def test_did_you_mean_for_set(override, hint):
    with pytest.raises(HetsimError) as e:
        load_platform("hikey970", [override])
    assert hint in str(e.value)


def test_did_you_mean_in_mapping_and_workload_files(tmp_path):
    hikey, w = load_platform("hikey970"), load_workload("alexnet")
    mapping = tmp_path / "m.yaml"
    mapping.write_text("pipelin: B4:1-8\n")
    with pytest.raises(HetsimError, match=r"unknown key 'pipelin' \(did you mean 'pipeline'\?\)"):
        load_mapping(str(mapping), hikey, w)
    workload = tmp_path / "w.yaml"
    workload.write_text("schema: 1\nname: w\ninput: {h: 8, w: 8, c: 3}\nlayer_kinds: [conv]\n"
                        "ops:\n  - {name: c1, kind: conv, kernal: 3, out_c: 8}\n")
    with pytest.raises(HetsimError, match=r"ops\.c1\.kernal: unknown key \(did you mean 'kernel'\?\)"):
        load_workload(str(workload))
