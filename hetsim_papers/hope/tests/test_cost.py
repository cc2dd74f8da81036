"""HOPE's cost model (hetsim_papers/hope/cost.py) and phones (platforms/hope-*.yaml): the roofline with
launch overheads, frequency scaling through the compute-bound fraction, the hand-off cost
sync + copy + layout with its switches, strict GPU capability, μLayer's gather; generated
workloads by name; sequential split mappings in files; the CLI on placement problems."""

from __future__ import annotations

import math

import pytest
import yaml

from hetsim.cost import make_cost_model
from hetsim.errors import HetsimError
from hetsim.evaluation import DagOptions, simulate
from hetsim.exploration import PlacementProblem, explore, make_explorer
from hetsim.mapping import load_mapping, placement_dict
from hetsim.platform import load_platform
from hetsim.workload import load_workload
from hetsim_papers.hope.cost import HopeCostModel

PHONES = ("hope-le", "hope-me", "hope-he")


@pytest.fixture(scope="module")
def he():
    return load_platform("hope-he")


@pytest.fixture(scope="module")
def sqz():
    return load_workload("squeezenet-hope+mnn")


def test_the_phones_load_and_name_hopes_devices():
    for name, cpu, cores in (("hope-le", "cpu", 4), ("hope-me", "big", 2), ("hope-he", "big", 2)):
        p = load_platform(name)
        assert p.ep(cpu).cores == cores and p.ep("gpu").accelerator == "gpu"
    le = load_platform("hope-le", dvfs="min")
    assert le.core_type("cortex-a53").level(le.cluster("cpu").dvfs).freq_MHz == 652.8
    assert {lv.freq_MHz for lv in le.core_type("cortex-a53").dvfs} >= {652.8, 1689.6, 2016}
    assert load_platform("hope-he").cluster("little").cores == 4


def test_gpu_time_is_launch_overhead_plus_roofline(he, sqz):
    cost = HopeCostModel(he)
    gpu = he.ep("gpu")
    a = he.accelerator("gpu")
    for op in sqz.ops:
        rate = a.peak_GMACps * 1e9 * a.roofline.efficiency
        nbytes = op.input_bytes + op.output_bytes + op.weight_bytes
        expected = a.roofline.op_overhead_us * 1e-6 + max(op.macs / rate, nbytes / (he.memory("dram").bandwidth_GBps * 1e9))
        assert cost.op_time(op, gpu) == pytest.approx(expected, rel=1e-12)


def test_cpu_frequency_scales_by_the_compute_bound_fraction(sqz):
    """cl(f) = cl(f_max) [alpha f_max / f + 1 - alpha] (docs/papers/hope.md); the GPU does not move."""
    top = load_platform("hope-le")
    low = load_platform("hope-le", dvfs="min")
    c_top, c_low = HopeCostModel(top), HopeCostModel(low)
    ratio = 2016 / 652.8
    alpha_mem = top.core_type("cortex-a53").hope.alpha_memory
    seen = set()
    for op in sqz.ops:
        d_top, d_low = c_top.op_demand(op, top.ep("cpu")), c_low.op_demand(op, low.ep("cpu"))
        assert d_low.fixed_s == pytest.approx(d_top.fixed_s * ratio)            # overheads scale fully
        alpha = (d_low.busy_s / d_top.busy_s - 1) / (ratio - 1)
        assert alpha_mem - 1e-9 <= alpha <= 1 + 1e-9
        seen.add(round(alpha, 6))
        assert c_low.op_time(op, low.ep("gpu")) == c_top.op_time(op, top.ep("gpu"))
    assert 1.0 in seen and min(seen) < 1.0      # compute-bound convs and memory-bound ops both occur


def test_hand_off_is_sync_plus_copy_plus_layout(he):
    cpu, gpu, little = he.ep("big"), he.ep("gpu"), he.ep("little")
    h = he.accelerator("gpu").hope
    nbytes = 1e6
    sync, layout = h.sync_us * 1e-6, nbytes / (h.layout_GBps * 1e9)
    assert HopeCostModel(he).transfer_time(nbytes, cpu, gpu) == pytest.approx(sync + layout)
    assert HopeCostModel(he).transfer_time(nbytes, gpu, cpu) == pytest.approx(sync + layout)
    assert HopeCostModel(he, same_layout=True).transfer_time(nbytes, cpu, gpu) == pytest.approx(sync)
    copy = nbytes / (he.memory("dram").bandwidth_GBps * 1e9)
    assert HopeCostModel(he, zero_copy=False).transfer_time(nbytes, cpu, gpu) == pytest.approx(sync + copy + layout)
    assert HopeCostModel(he).transfer_time(nbytes, cpu, little) == 0.0      # big <-> LITTLE: free [paper]
    assert HopeCostModel(he).transfer_time(0, cpu, gpu) == 0.0


def test_layout_transform_runs_at_the_cpu_clock():
    top, low = load_platform("hope-le"), load_platform("hope-le", dvfs="min")
    h = top.accelerator("gpu").hope
    layout = 1e6 / (h.layout_GBps * 1e9)
    alpha = top.core_type("cortex-a53").hope.alpha_memory
    t_top = HopeCostModel(top).transfer_time(1e6, top.ep("cpu"), top.ep("gpu"))
    t_low = HopeCostModel(low).transfer_time(1e6, low.ep("cpu"), low.ep("gpu"))
    assert t_low - t_top == pytest.approx(layout * alpha * (2016 / 652.8 - 1))


def test_the_gpu_runs_only_the_kinds_it_lists(he):
    w = load_workload("nasnet-large+mnn")
    cost = HopeCostModel(he)
    kinds = set(he.accelerator("gpu").kinds)
    for op in w.ops:
        assert cost.supports(op, he.ep("gpu")) == (str(op.kind) in kinds)
        assert cost.supports(op, he.ep("big"))
    assert any(not cost.supports(op, he.ep("gpu")) for op in w.ops)      # Pad and Slice


def test_mulayer_gather_costs_the_split_sync(he, sqz):
    op = next(o for o in sqz.ops if o.kind == "conv")
    assert HopeCostModel(he).gather_demand(op, he.ep("gpu")).time_s == 0.0
    assert HopeCostModel(he, split_sync_s=2e-4).gather_demand(op, he.ep("gpu")).time_s == 2e-4
    with pytest.raises(HetsimError, match="split_sync_s=-1"):
        HopeCostModel(he, split_sync_s=-1)
    with pytest.raises(HetsimError, match="cost model 'nope'; allowed: roofline, gemm2, pim, hope"):
        make_cost_model(he, model="nope")


def test_generated_workloads_load_by_name():
    w = load_workload("lstm-deepspeech+mnn")
    assert w.name == "lstm-deepspeech+mnn" and len(w.ops) + len(w.inputs) == 145
    assert load_workload("lstm-deepspeech+mnn") is w                          # cached
    with pytest.raises(HetsimError, match="unknown pass 'x' after"):
        load_workload("lstm-deepspeech+x")
    with pytest.raises(HetsimError, match="unknown workload 'no-such-net'"):
        load_workload("no-such-net")


def test_a_mulayer_mapping_round_trips_through_a_file(tmp_path, he, sqz):
    cost = HopeCostModel(he, same_layout=True, split_sync_s=1e-4)
    prob = PlacementProblem(he, sqz, cost, eps=["big", "gpu"], dag=DagOptions(comm="consumer"))
    r = explore(prob, make_explorer("muLayer"), seed=0)
    assert r.best.sequential and r.best.splits
    assert all(abs(sum(s.fraction for s in shares) - 1) < 1e-12 for shares in r.best.splits.values())
    assert r.info["predicted_latency_s"] == pytest.approx(r.best_value, rel=1e-9)
    path = tmp_path / "mulayer.yaml"
    path.write_text(yaml.safe_dump(placement_dict(r.best)))
    again = load_mapping(str(path), he, sqz, cost)
    assert prob.key(again) == prob.key(r.best)
    m = simulate(he, sqz, again, cost=cost, dag=DagOptions(comm="consumer"), engine="des", contention=False)
    assert m.metrics.latency_s["mean"] == pytest.approx(r.best_value, rel=1e-9)


# -- the command line ----------------------------------------------------------------------------------
def test_explore_places_a_dag_and_writes_a_plan_simulate_replays(hetsim, tmp_path):
    plan = tmp_path / "plan.yaml"
    r = hetsim("explore", "-p", "hope-he", "-w", "squeezenet-hope+mnn", "-a", "HOPE:GS", "--cost-model", "hope",
               "--eps", "big,gpu", "--comm", "consumer", "--plan-out", plan, "--json")
    assert r.returncode == 0, r.stderr
    import json

    out = json.loads(r.stdout)
    assert out["algorithm"] == "HOPE:GS" and out["schedule_wall_s"] >= 0
    s = hetsim("simulate", "-p", "hope-he", "-w", "squeezenet-hope+mnn", "-m", plan, "--cost-model", "hope",
               "--comm", "consumer", "--engine", "analytic", "--json")
    assert s.returncode == 0, s.stderr
    assert json.loads(s.stdout)["latency_s"]["mean"] == pytest.approx(out["best_latency_s"], rel=1e-9)


@pytest.mark.parametrize("args, message", [
    (["-a", "HOPE:LP", "--eps", "gpu"], "op cell_stem_1/prev/path2/Pad (kind copy) can run on none of the EPs gpu"),
    (["-a", "HOPE:LP", "--param", "time_limit_s=1e-9"], "the ILP of module 1 of"),
    (["-a", "HOPE:GS", "--depth", "3"], "--depth does not apply to HOPE:GS, a placement algorithm"),
    (["-a", "Shisha", "--comm", "consumer"], "--comm does not apply to Shisha, a pipeline algorithm"),
])
def test_bad_placement_runs_are_one_line_and_exit_2(hetsim, args, message):
    r = hetsim("explore", "-p", "hope-he", "-w", "pnasnet-mobile+mnn", "--cost-model", "hope", *args)
    assert r.returncode == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_plan_placing_an_op_where_it_cannot_run_is_refused(hetsim, tmp_path):
    w = load_workload("pnasnet-mobile+mnn")
    bad = next(op.name for op in w.ops if op.kind == "slice")
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"placement": {bad: "gpu"}, "default": "big"}))
    r = hetsim("simulate", "-p", "hope-he", "-w", "pnasnet-mobile+mnn", "-m", path, "--cost-model", "hope")
    assert r.returncode == 2
    assert f"gpu cannot run op {bad} (kind slice)" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_cyclic_graph_is_refused(hetsim):
    from pathlib import Path

    cyclic = Path(__file__).parents[3] / "tests" / "malformed" / "workloads" / "05_cycle.yaml"
    r = hetsim("explore", "-p", "hope-he", "-w", cyclic, "-a", "HOPE:GS", "--cost-model", "hope")
    assert r.returncode == 2 and "cycle" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_every_phone_gives_every_op_a_finite_cpu_time():
    for name in PHONES:
        p = load_platform(name)
        cost = HopeCostModel(p)
        cpu = p.ep({"hope-le": "cpu"}.get(name, "big"))
        for model in ("squeezenet-hope+mnn", "lstm-deepspeech+mnn"):
            assert all(math.isfinite(cost.op_time(op, cpu)) for op in load_workload(model).ops)
