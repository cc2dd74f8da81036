"""Invariants of the evaluators: the DES equals the closed form without contention, bandwidth is
shared fairly, frames are conserved, utilisation stays <= 1, runs are reproducible."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import simpy
from helpers import chain_workload, two_cluster_platform
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.analytic import SplitScorer, evaluate_pipeline, split_boundaries
from hetsim.cost import RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.evaluation import evaluate, simulate
from hetsim.mapping import load_mapping, pipeline_from_split, placement_from_dict
from hetsim.sim import BandwidthResource, FrameSource

# -- bandwidth resource ----------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_equal_flows_finish_together_at_n_bytes_over_b(n):
    env = simpy.Environment()
    server = BandwidthResource(env, 10e9)
    finish = []

    def flow():
        yield server.transfer(1e9)
        finish.append(env.now)

    for _ in range(n):
        env.process(flow())
    env.run()
    assert len(finish) == n
    for t in finish:
        assert t == pytest.approx(n * 1e9 / 10e9, rel=1e-12)


def test_capped_flow_leaves_the_rest_to_others():
    # One flow capped at 2 GB/s, one uncapped, on 10 GB/s: max-min gives 2 and 8.
    env = simpy.Environment()
    server = BandwidthResource(env, 10e9)
    done = {}

    def flow(name, nbytes, cap):
        yield server.transfer(nbytes, cap)
        done[name] = env.now

    env.process(flow("capped", 2e9, 2e9))
    env.process(flow("free", 8e9, math.inf))
    env.run()
    assert done["capped"] == pytest.approx(1.0)
    assert done["free"] == pytest.approx(1.0)


def test_late_flow_slows_the_first():
    env = simpy.Environment()
    server = BandwidthResource(env, 1e9)
    done = {}

    def first():
        yield server.transfer(1e9)
        done["first"] = env.now

    def second():
        yield env.timeout(0.5)
        yield server.transfer(0.25e9)
        done["second"] = env.now

    env.process(first())
    env.process(second())
    env.run()
    # 0.5 GB alone by t=0.5; then 0.5 GB/s each: the second's 0.25 GB ends at t=1.0 while the
    # first moves 0.25 GB; its last 0.25 GB then runs alone at 1 GB/s and ends at t=1.25.
    assert done["second"] == pytest.approx(1.0)
    assert done["first"] == pytest.approx(1.25)


# -- DES == closed form without contention --------------------------------------------------

EP_NAMES = ["B1", "B2", "B3", "B4", "s1", "s2", "s3", "s4"]


@st.composite
def pipelines(draw):
    n_layers = draw(st.integers(2, 9))
    channels = draw(st.lists(st.sampled_from([8, 16, 32, 64]), min_size=n_layers, max_size=n_layers))
    kernels = draw(st.lists(st.sampled_from([1, 3, 5]), min_size=n_layers, max_size=n_layers))
    k = draw(st.integers(1, min(4, n_layers)))
    cuts = sorted(draw(st.lists(st.integers(1, n_layers - 1), min_size=k - 1, max_size=k - 1,
                                unique=True)))
    bounds = [0, *cuts, n_layers]
    split = [bounds[i + 1] - bounds[i] for i in range(k)]
    # Stages get disjoint cores: draw the core count of each stage within what is left.
    eps, left = [], {"B": 4, "s": 4}
    for idx in range(k):
        options = [s for s in "Bs" if left[s] > 0]
        sym = draw(st.sampled_from(options))
        later = k - idx - 1                       # stages still needing at least one core
        spare_elsewhere = sum(left.values()) - left[sym]
        n = draw(st.integers(1, left[sym] - max(0, later - spare_elsewhere)))
        left[sym] -= n
        eps.append(f"{sym}{n}")
    size = draw(st.sampled_from([7, 14, 28]))
    latency = draw(st.sampled_from([0.0, 1e3, 1e6]))
    return channels, kernels, split, eps, size, latency


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pipelines(), st.integers(1, 3), st.booleans())
def test_des_without_contention_equals_analytic(case, buffer, skip):
    channels, kernels, split, ep_names, size, latency = case
    platform = two_cluster_platform(latency)
    workload = chain_workload(channels, kernels, size, with_skip=skip)
    cost = RooflineCostModel(platform)
    pipe = pipeline_from_split(split, [platform.ep(e) for e in ep_names])
    a = evaluate(platform, workload, pipe, engine="analytic", cost=cost, frames=60)
    d = evaluate(platform, workload, pipe, engine="des", cost=cost, frames=60, contention=False,
                 buffer_frames=buffer)
    assert d.throughput_fps == pytest.approx(a.throughput_fps, rel=1e-9)
    for sa, sd in zip(a.stages, d.stages, strict=True):
        assert sd.time_s == pytest.approx(sa.time_s, rel=1e-9)
    # Single-frame latency is the sum of the stage times.
    one = evaluate(platform, workload, pipe, engine="des", cost=cost, frames=1, contention=False)
    assert one.latency_s["mean"] == pytest.approx(a.latency_s["mean"], rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(pipelines(), st.floats(0.0, 0.2), st.integers(0, 2**31 - 1))
def test_frames_conserved_and_utilisation_bounded(case, sigma, seed):
    channels, kernels, split, ep_names, size, latency = case
    platform = two_cluster_platform(latency)
    workload = chain_workload(channels, kernels, size)
    pipe = pipeline_from_split(split, [platform.ep(e) for e in ep_names])
    res = simulate(platform, workload, pipe, engine="des", frames=30, noise_sigma=sigma, seed=seed)
    m = res.metrics
    computed = [iv for iv in res.intervals if iv.category == "compute"]
    assert len(computed) == 30 * len(split)          # every frame through every stage, once
    for s in m.stages:
        assert 0.0 <= s.utilization <= 1.0 + 1e-12
    assert m.throughput_fps > 0
    assert m.latency_s["p50"] <= m.latency_s["p99"] + 1e-15


def test_contention_slows_stages_sharing_a_memory():
    platform = two_cluster_platform(shared_memory=True, mem_bw=(0.5, 0.5))
    workload = chain_workload([64, 64, 64, 64], [1, 1, 1, 1], 56)
    pipe = load_mapping("B2:1-2|B2:3-4", platform, workload)
    off = evaluate(platform, workload, pipe, engine="des", frames=40, contention=False)
    on = evaluate(platform, workload, pipe, engine="des", frames=40, contention=True)
    assert on.throughput_fps < off.throughput_fps * 0.99


def test_single_stage_contention_on_equals_off():
    platform = two_cluster_platform()
    workload = chain_workload([16, 32, 16])
    pipe = load_mapping("B4:1-3", platform, workload)
    off = evaluate(platform, workload, pipe, engine="des", frames=20, contention=False)
    on = evaluate(platform, workload, pipe, engine="des", frames=20, contention=True)
    assert on.throughput_fps == pytest.approx(off.throughput_fps, rel=1e-9)


def test_same_seed_same_json_and_other_seed_differs():
    platform = two_cluster_platform()
    workload = chain_workload([16, 32, 16, 8])
    pipe = load_mapping("B2:1-2|s4:3-4", platform, workload)
    run = lambda seed: evaluate(platform, workload, pipe, engine="des", frames=50,  # noqa: E731
                                noise_sigma=0.05, seed=seed,
                                source=FrameSource("poisson", 0.01)).to_json()
    assert run(7) == run(7)
    assert run(7) != run(8)
    json.loads(run(7))


def test_periodic_source_slower_than_pipeline_sets_the_rate():
    platform = two_cluster_platform()
    workload = chain_workload([16, 32, 16, 8])
    pipe = load_mapping("B2:1-2|s4:3-4", platform, workload)
    a = evaluate(platform, workload, pipe, engine="analytic")
    interval = 3.0 / a.throughput_fps
    d = evaluate(platform, workload, pipe, engine="des", frames=40, contention=False,
                 source=FrameSource("periodic", interval))
    assert d.throughput_fps == pytest.approx(1 / interval, rel=1e-9)
    # An unloaded pipeline: every frame's latency is the sum of the stage times.
    assert d.latency_s["p99"] == pytest.approx(a.latency_s["mean"], rel=1e-9)


def test_transfer_cost_and_cut_bytes_with_skip():
    platform = two_cluster_platform(link_latency_ns=0)
    wl = chain_workload([8, 16, 8, 8], with_skip=True)
    # The cut after layer 1 carries relu1 (consumed by conv2 and by add3): counted once.
    assert wl.cut_bytes(1) == wl.op("relu1").output_bytes
    # The cut after layer 2 carries relu2 and the skip tensor relu1.
    assert wl.cut_bytes(2) == wl.op("relu2").output_bytes + wl.op("relu1").output_bytes
    cost = RooflineCostModel(platform)
    pipe = load_mapping("B4:1-2|s4:3-4", platform, wl)
    m = evaluate(platform, wl, pipe, cost=cost, engine="analytic")
    assert m.stages[0].transfer_s == pytest.approx(wl.cut_bytes(2) / 5e9)


def test_energy_is_null_without_power_model_and_positive_with():
    wl = chain_workload([8, 16])
    for power, expect_none in ((True, False), (False, True)):
        platform = two_cluster_platform(power=power)
        pipe = load_mapping("B4:1|s4:2", platform, wl)
        e = evaluate(platform, wl, pipe, engine="des", frames=5).energy_J
        assert (e is None) is expect_none
        if e is not None:
            assert e > 0


# -- DAG placements ---------------------------------------------------------------------------

def test_placement_des_equals_list_schedule():
    platform = two_cluster_platform()
    wl = chain_workload([8, 16, 8, 8], with_skip=True)
    spec = {op.name: ("B4" if i % 3 else "s2") for i, op in enumerate(wl.ops)}
    placement = placement_from_dict(spec, platform, wl)
    a = evaluate(platform, wl, placement, engine="analytic")
    d = evaluate(platform, wl, placement, engine="des", contention=False)
    assert d.latency_s["mean"] == pytest.approx(a.latency_s["mean"], rel=1e-12)
    stream = evaluate(platform, wl, placement, engine="des", frames=20, contention=False)
    assert stream.throughput_fps <= a.throughput_fps * (1 + 1e-9)   # the busiest EP bounds it


# -- vectorised scorer ----------------------------------------------------------------------

@pytest.mark.parametrize("n,k", [(1, 1), (2, 1), (2, 2), (3, 4), (7, 3), (12, 5), (18, 1), (18, 18)])
def test_split_boundaries_are_every_split_in_lexicographic_order(n, k):
    want = [[0, *cuts, n] for cuts in itertools.combinations(range(1, n), k - 1)]
    got = split_boundaries(n, k)
    assert got.dtype == np.int64 and got.shape == (len(want), k + 1)
    assert got.tolist() == want


def test_split_scorer_matches_evaluate_pipeline():
    platform = two_cluster_platform(link_latency_ns=5e4)
    wl = chain_workload([8, 16, 32, 16, 8, 8], with_skip=False)
    cost = RooflineCostModel(platform)
    eps = [platform.ep(n) for n in ("B2", "B1", "s2", "s1")]
    scorer = SplitScorer(platform, wl, cost, eps)
    scored = scorer.score(3)
    assert scored.count == math.comb(5, 2) * 24
    rng = np.random.default_rng(0)
    for _ in range(20):
        i = int(rng.integers(scored.throughput.shape[0]))
        j = int(rng.integers(len(scored.orders)))
        b = scored.boundaries[i]
        split = [int(b[s + 1] - b[s]) for s in range(3)]
        pipe = pipeline_from_split(split, [eps[e] for e in scored.orders[j]])
        ref = evaluate_pipeline(platform, wl, pipe, cost).throughput_fps
        assert scored.throughput[i, j] == pytest.approx(ref, rel=1e-12)
    best, fps = scored.best()
    assert fps == pytest.approx(scored.throughput.max())


def test_split_scorer_refuses_huge_spaces():
    platform = two_cluster_platform()
    wl = chain_workload([8] * 9)
    scorer = SplitScorer(platform, wl, RooflineCostModel(platform), platform.eps())
    with pytest.raises(HetsimError, match="exceeds the limit"):
        scorer.score(4, limit=100)


def test_op_an_ep_cannot_run_is_rejected():
    from hetsim.platform import platform_from_dict
    from hetsim.workload import workload_from_dict

    platform = platform_from_dict({
        "schema": 2, "name": "soc",
        "memories": [{"name": "dram", "bandwidth_GBps": 10}],
        "core_types": [{"name": "cpu", "macs_per_cycle": 4, "dvfs": [{"name": "max", "freq_MHz": 1000}]}],
        "clusters": [{"name": "cpu", "symbol": "C", "core_type": "cpu", "cores": 2, "memory": "dram"}],
        "accelerators": [{"name": "npu", "kind": "npu", "peak_GMACps": 100, "memory": "dram",
                          "kinds": ["conv"]}],
    })
    wl = workload_from_dict({
        "schema": 1, "name": "tiny", "input": {"h": 8, "w": 8, "c": 4}, "layer_kinds": ["conv", "fc"],
        "ops": [{"name": "conv1", "kind": "conv", "kernel": 3, "out_c": 8, "pad": 1},
                {"name": "fc1", "kind": "fc", "out_c": 10}],
    }, "tiny")
    cost = RooflineCostModel(platform)
    assert load_mapping("npu:1|C2:2", platform, wl, cost)
    with pytest.raises(HetsimError, match="npu cannot run op fc1 \\(kind fc\\) of layer 2"):
        load_mapping("C2:1|npu:2", platform, wl, cost)
    with pytest.raises(HetsimError, match="npu cannot run op fc1"):
        placement_from_dict({"conv1": "npu", "fc1": "npu"}, platform, wl, cost=cost)
    placement = placement_from_dict({"conv1": "npu"}, platform, wl, default="C2", cost=cost)
    a = evaluate(platform, wl, placement, engine="analytic")
    d = evaluate(platform, wl, placement, engine="des", contention=False)
    assert d.latency_s["mean"] == pytest.approx(a.latency_s["mean"], rel=1e-12)


# -- contention past saturation and per-op flows (issue 15) --------------------------------------
@pytest.mark.parametrize("n,knee,loss", [(2, 4, 0.5), (6, 4, 0.5), (8, 2, 0.25), (3, 1, 1.0)])
def test_equal_flows_past_the_knee_share_a_reduced_bandwidth(n, knee, loss):
    env = simpy.Environment()
    mem = BandwidthResource(env, 10e9, knee_flows=knee, loss_per_flow=loss)
    done = [mem.transfer(1e9) for _ in range(n)]
    env.run()
    assert all(d.processed for d in done)
    delivered = 10e9 / (1 + loss * max(0, n - knee))
    assert env.now == pytest.approx(n * 1e9 / delivered, rel=1e-9)


def test_per_op_flows_equal_per_stage_flows_without_anything_to_contend():
    platform = two_cluster_platform(shared_memory=False)
    workload = chain_workload([8, 16, 32, 16], with_skip=False)
    pipe = load_mapping("B2:1-2|s4:3-4", platform, workload)
    base = dict(engine="des", frames=20, fast=False)
    a = simulate(platform, workload, pipe, flows="stage", **base).metrics
    b = simulate(platform, workload, pipe, flows="op", **base).metrics
    assert a.throughput_fps == pytest.approx(b.throughput_fps, rel=1e-12)


def test_per_op_flows_see_the_contention_a_stage_average_hides():
    """Two stages on one slow memory, each a memory-bound op and a compute-bound op: averaged
    over the stage the flows look gentle; op by op the memory-bound parts collide."""
    platform = two_cluster_platform(shared_memory=True, mem_bw=(0.05, 0.05))
    workload = chain_workload([64, 64, 64, 64], kernels=[1, 3, 1, 3], size=28)
    pipe = load_mapping("B2:1-2|s2:3-4", platform, workload)
    stage = simulate(platform, workload, pipe, engine="des", frames=30, flows="stage").metrics
    op = simulate(platform, workload, pipe, engine="des", frames=30, flows="op").metrics
    alone = simulate(platform, workload, pipe, engine="des", frames=30, contention=False).metrics
    assert op.throughput_fps <= alone.throughput_fps * (1 + 1e-12)
    assert stage.throughput_fps <= alone.throughput_fps * (1 + 1e-12)
    assert op.throughput_fps != pytest.approx(stage.throughput_fps, rel=1e-6)
