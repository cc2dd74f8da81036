"""Per-op contention without SimPy (issue 32): the pipeline's own event loop
(:mod:`hetsim.sim.fluid`) and the max-plus path where contention cannot bind give the SimPy
engine's run (profile flows) to 1e-12, and the one-SimPy-transfer-per-op engine's to 1e-9, on
random pipelines, memories, saturations, buffers, sources and noise."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import chain_workload
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bandwidth import _old_stage_proc

from hetsim.cost import RooflineCostModel
from hetsim.mapping import load_mapping
from hetsim.options import RunOptions
from hetsim.platform import platform_from_dict
from hetsim.sim import pipeline as pipeline_module
from hetsim.sim.bandwidth import FlowProfile, Server
from hetsim.sim.fluid import run_pipeline_fluid
from hetsim.sim.pipeline import run_pipeline
from hetsim.tasks import stage_costs, stage_demands

ARRAYS = ("start", "compute_end", "end", "arrival")


def _platform(m0_GBps: float, m1_GBps: float, knee: tuple[int, float] | None, little_on_m0: bool):
    """Three clusters: big and mid on memory m0 (little too, if asked), little on m1; one link
    between the big and the little cluster."""
    m0 = {"name": "m0", "bandwidth_GBps": m0_GBps}
    if knee:
        m0["saturation"] = {"knee_flows": knee[0], "loss_per_flow": knee[1]}
    core = {"macs_per_cycle": 8, "dvfs": [{"name": "hi", "freq_MHz": 2000}],
            "roofline": {"gemm_efficiency": 0.5, "op_overhead_us": 5}}
    return platform_from_dict({
        "schema": 2, "name": "fluid-toy",
        "memories": [m0, {"name": "m1", "bandwidth_GBps": m1_GBps}],
        "core_types": [{"name": "fast", **core}],
        "clusters": [
            {"name": "big", "symbol": "B", "core_type": "fast", "cores": 4, "memory": "m0"},
            {"name": "mid", "symbol": "M", "core_type": "fast", "cores": 4, "memory": "m0"},
            {"name": "little", "symbol": "s", "core_type": "fast", "cores": 4,
             "memory": "m0" if little_on_m0 else "m1"},
        ],
        "links": [{"name": "bus", "connects": ["big", "little"], "bandwidth_GBps": 2, "latency_ns": 500},
                  {"name": "bus2", "connects": ["mid", "little"], "bandwidth_GBps": 3, "latency_ns": 700},
                  {"name": "bus3", "connects": ["big", "mid"], "bandwidth_GBps": 4, "latency_ns": 300}],
    }, "fluid-toy")


def _simpy_runs(platform, workload, pipe, options, monkeypatch):
    """The SimPy engine's run (profile flows) and the one-transfer-per-op engine's."""
    cost = RooflineCostModel(platform)
    slow = options.model_copy(update={"fast": False})
    profiled = run_pipeline(platform, workload, pipe, cost, slow)
    with monkeypatch.context() as m:
        m.setattr(pipeline_module, "_stage_proc", _old_stage_proc)
        per_op = run_pipeline(platform, workload, pipe, cost, slow)
    return profiled, per_op


def _same(a, b, rel):
    for name in ARRAYS:
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=rel, atol=1e-12)


_stages = st.sampled_from(["B1|B1|B2", "B2|M2|M1|B1", "B1|M1|B1|M1|B1", "M2|B2|s2", "B1|B1|s2|s1", "s2|s2"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(eps=_stages, m0_GBps=st.sampled_from([0.3, 1.0, 3.0, 8.0, 40.0]), knee=st.one_of(
       st.none(), st.tuples(st.integers(1, 2), st.floats(0.1, 0.8))), little_on_m0=st.booleans(),
       noise_sigma=st.sampled_from([0.0, 0.1]), buffer_frames=st.integers(1, 3),
       source=st.sampled_from(["saturated", "periodic", "poisson"]), frames=st.integers(3, 25),
       seed=st.integers(0, 1000))
def test_fast_per_op_runs_are_the_simpy_engines(monkeypatch, eps, m0_GBps, knee, little_on_m0, noise_sigma,
                                                buffer_frames, source, frames, seed):
    names = eps.split("|")
    workload = chain_workload([8, 16, 16, 32, 32, 16, 16, 8, 8, 16][:2 * len(names)],
                              kernels=[1, 3] * len(names), size=16)
    mapping = "|".join(f"{ep}:{2 * i + 1}-{2 * i + 2}" for i, ep in enumerate(names))
    platform = _platform(m0_GBps, 5.0, knee, little_on_m0)
    pipe = load_mapping(mapping, platform, workload)
    fields = dict(engine="des", frames=frames, flows="op", noise_sigma=noise_sigma, seed=seed,
                  buffer_frames=buffer_frames)
    if source != "saturated":
        fields.update(source=source, interval_s=0.0005)
    options = RunOptions.make(**fields).resolve(pipe)
    fast = run_pipeline(platform, workload, pipe, RooflineCostModel(platform), options)
    profiled, per_op = _simpy_runs(platform, workload, pipe, options, monkeypatch)
    _same(fast, profiled, 1e-12)
    _same(fast, per_op, 1e-9)


def test_two_shared_memories_each_their_solver():
    """Stages on m0 and on m1, both shared and contended: one solver each, in one loop."""
    platform = _platform(0.5, 0.4, None, False)
    workload = chain_workload([16, 32, 32, 16, 16, 8, 8, 16], kernels=[1, 3] * 4, size=16)
    pipe = load_mapping("B1:1-2|s1:3-4|s1:5-6|B1:7-8", platform, workload)
    cost = RooflineCostModel(platform)
    options = RunOptions.make(engine="des", frames=30, flows="op", noise_sigma=0.05, seed=3).resolve(pipe)
    shared = ["m0", "m1"]
    compute, transfer = stage_costs(pipe, workload, cost)
    profiles = [FlowProfile.from_demands(d) for d in stage_demands(pipe, workload, cost, per_op=True)]
    fluid = run_pipeline_fluid(compute, transfer, 30, 1, [Server.of_memory(platform.memory(m)) for m in shared],
                               [shared.index(s.ep.memory) for s in pipe.stages], profiles, noise_sigma=0.05,
                               seed=3, stage_names=[s.ep.name for s in pipe.stages])
    simpy_run = run_pipeline(platform, workload, pipe, cost, options.model_copy(update={"fast": False}))
    _same(fluid, simpy_run, 1e-12)
    alone = run_pipeline(platform, workload, pipe, cost, options.model_copy(update={"contention": False}))
    assert fluid.end[-1, -1] > alone.end[-1, -1] * 1.01        # really contended


def test_the_event_loop_reports_progress_and_names_its_stages():
    platform = _platform(0.5, 5.0, None, True)
    workload = chain_workload([16, 32, 16, 8], size=16)
    pipe = load_mapping("B1:1-2|M1:3-4", platform, workload)
    options = RunOptions.make(engine="des", frames=400, flows="op").resolve(pipe)
    seen = []
    run = run_pipeline(platform, workload, pipe, RooflineCostModel(platform), options, progress=seen.append)
    assert run.stage_names == ["B1", "M1"]
    assert seen == sorted(seen) and seen[-1] == 400 and len(seen) >= 100
    with pytest.raises(AssertionError):
        np.testing.assert_array_equal(run.end, run.compute_end)     # transfers take time
