"""Metrics against closed forms written from docs/model.md alone (issue 10): busy time and energy
per stage with repeated EP names, steady-state utilisation, depth-1 exhaustive search, DAG
transfers once per destination EP, link energy in both engines, coherence power everywhere."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import chain_workload, two_cluster_platform
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hetsim.cli import main
from hetsim.cost import CostModel, Demand
from hetsim.evaluation import DagOptions, evaluate, simulate
from hetsim.mapping import load_mapping, make_placement, pipeline_from_split
from hetsim.platform import load_platform
from hetsim.workload import load_workload


def closed_form_energy(platform, units, makespan_s, link_bytes=None, coherent_s=0.0):
    """docs/model.md "Energy": per cluster, busy core-seconds (busy x cores of every stage) at the
    active power, the rest of its core-seconds at idle power; static power over the makespan; the
    coherence power over the time two clusters work at once; link bytes at their energy."""
    total = platform.power.static_W * makespan_s + platform.power.coherence_W * coherent_s
    for c in platform.clusters:
        lvl = platform.core_type(c.core_type).level(c.dvfs)
        busy = sum(t * ep.cores for ep, t in units if ep.cluster == c.name)
        total += busy * lvl.active_W_per_core + (c.cores * makespan_s - busy) * lvl.idle_W_per_core
    links = {lk.name: lk for lk in platform.links}
    return total + sum(b * links[n].energy_pJ_per_byte * 1e-12 for n, b in (link_bytes or {}).items())


# -- 1. repeated EP names ------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["analytic", "des"])
@pytest.mark.parametrize("name,mapping", [
    ("resnet50", "B4:1-35|s2:36-44|s2:45-54"),
    ("alexnet-ps", "B1:1-5|s3:6-6|B1:7-7|s1:8-10|B1:11-11"),
])
def test_busy_and_energy_add_up_over_stages_sharing_an_ep_name(engine, name, mapping):
    platform, workload = load_platform("hikey970"), load_workload(name)
    pipe = load_mapping(mapping, platform, workload)
    m = evaluate(platform, workload, pipe, engine=engine, frames=50)
    per_stage = [s.busy_s for s in m.stages]
    units = [(s.ep, b) for s, b in zip(pipe.stages, per_stage, strict=True)]
    for name_ in {s.ep.name for s in pipe.stages}:
        assert m.ep_busy_s[name_] == pytest.approx(sum(b for ep, b in units if ep.name == name_), rel=1e-12)
    for cluster in {s.ep.cluster for s in pipe.stages}:
        assert m.core_busy_s[cluster] == pytest.approx(
            sum(b * ep.cores for ep, b in units if ep.cluster == cluster), rel=1e-12)
    assert m.energy_J == pytest.approx(
        closed_form_energy(platform, units, m.makespan_s, m.link_bytes, m.coherent_s), rel=1e-12)


def test_the_readme_example_energy_is_the_documented_formula():
    platform, workload = load_platform("hikey970"), load_workload("resnet50")
    pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload)
    m = evaluate(platform, workload, pipe, engine="des", frames=50)
    assert m.energy_J == pytest.approx(61.038, abs=5e-4)     # docs/model.md's formula (issue 10)


# -- 2. steady-state utilisation -------------------------------------------------------------------
class StageTimes(CostModel):
    """Layer i takes times[i] on every EP (one layer per stage)."""

    def __init__(self, platform, times):
        super().__init__(platform)
        self.times = np.asarray(times, dtype=float)

    def layer_demands(self, workload, ep, state=None):
        return [Demand(float(t), 0.0, 0.0) for t in self.times]

    def layer_times(self, workload, ep, state=None):
        return self.times


@pytest.mark.parametrize("fast", [True, False])
def test_utilisation_is_the_steady_state_busy_fraction(fast):
    platform = two_cluster_platform(link_latency_ns=0.0)
    workload = chain_workload([8, 8, 8], size=4)
    # One cluster: no hand-over time, so stage times are exactly 1, 3 and 2 s.
    pipe = pipeline_from_split([1, 1, 1], [platform.ep("B1"), platform.ep("B2"), platform.ep("B1")])
    cost = StageTimes(platform, [1.0, 3.0, 2.0])
    m = simulate(platform, workload, pipe, engine="des", frames=100, contention=False, fast=fast,
                 cost=cost).metrics
    assert m.throughput_fps == pytest.approx(1 / 3, rel=1e-12)
    assert [s.utilization for s in m.stages] == pytest.approx([1 / 3, 1.0, 2 / 3], rel=1e-12)


def test_utilisation_in_the_readme_example_is_stage_time_over_the_bottleneck():
    platform, workload = load_platform("hikey970"), load_workload("resnet50")
    pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload)
    m = evaluate(platform, workload, pipe, engine="des", frames=50)
    slowest = max(s.time_s for s in m.stages)
    # Contention makes stage times vary a little by frame: within 1 % of time / bottleneck.
    assert [s.utilization for s in m.stages] == pytest.approx([s.time_s / slowest for s in m.stages], rel=0.01)


def test_one_frame_utilisation_is_busy_over_makespan():
    platform = two_cluster_platform()
    workload = chain_workload([8, 8], size=4)
    pipe = pipeline_from_split([1, 1], [platform.ep("B1"), platform.ep("B2")])
    m = evaluate(platform, workload, pipe, engine="des", frames=1, cost=StageTimes(platform, [1.0, 3.0]))
    assert [s.utilization for s in m.stages] == pytest.approx([0.25, 0.75], rel=1e-12)


# -- 3. exhaustive search at depth 1 ---------------------------------------------------------------
def test_exhaustive_search_at_depth_one(capsys):
    try:
        main(["explore", "-p", "hikey970", "-w", "alexnet", "--algorithm", "ES", "--depth", "1",
              "--eps", "B4", "--json"])
    except SystemExit as e:
        pytest.fail(f"exit {e.code}: {capsys.readouterr().err}")
    out = capsys.readouterr()
    assert '"best_mapping": "B4:1-11"' in out.out


# -- 4. and 5. DAG transfers: once per destination EP, link energy in both engines ------------------
def test_a_tensor_crosses_to_an_ep_once_and_both_engines_count_its_link_energy():
    platform = load_platform("hikey970", ["links.cci.energy_pJ_per_byte=1000"])
    workload = load_workload("googlenet")
    # Every inception branch (1x1, 3x3, 5x5, pool) of 3a on the little cluster, the rest on big:
    # pool2's output feeds four ops on little and crosses once.
    spec = {op.name: "little" for op in workload.ops if op.name.startswith("inception_3a/")
            and not op.name.endswith("output")}
    placement = make_placement(spec, platform, workload, default="big")
    route = platform.route(platform.ep("big"), platform.ep("little"))
    expected = 0.0
    for op in workload.ops:
        dsts = {placement.ep_of[c].name for c in workload.graph.successors(op.name)}
        expected += op.output_bytes * len(dsts - {placement.ep_of[op.name].name})
    ana = evaluate(platform, workload, placement, engine="analytic")
    des = evaluate(platform, workload, placement, engine="des", contention=False)
    assert ana.link_bytes == {route.links[0]: pytest.approx(expected)}
    assert des.link_bytes == ana.link_bytes
    assert des.energy_J == pytest.approx(ana.energy_J, rel=1e-12)
    assert des.latency_s["mean"] == pytest.approx(ana.latency_s["mean"], rel=1e-12)
    caching_off = simulate(platform, workload, placement, engine="analytic",
                           dag=DagOptions(caching=False)).metrics
    assert sum(caching_off.link_bytes.values()) > expected


# -- 6. coherence power in every engine ------------------------------------------------------------
@pytest.mark.parametrize("engine", ["analytic", "des"])
def test_coherence_power_is_paid_while_two_clusters_work(engine):
    workload = load_workload("resnet50")
    base = load_platform("hikey970")
    extra = load_platform("hikey970", ["power.coherence_W=5"])
    pipe = load_mapping("B4:1-30|s4:31-54", base, workload)
    m0 = evaluate(base, workload, pipe, engine=engine, frames=20)
    m1 = evaluate(extra, workload, load_mapping("B4:1-30|s4:31-54", extra, workload), engine=engine, frames=20)
    assert m1.coherent_s == pytest.approx(m0.coherent_s) and m0.coherent_s > 0
    assert m1.energy_J - m0.energy_J == pytest.approx(5 * m0.coherent_s, rel=1e-9)


# -- a property: random pipelines with repeated EP names ------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=1, max_size=5), st.integers(0, 10_000),
       st.sampled_from(["analytic", "des"]))
def test_energy_busy_and_utilisation_match_closed_forms(sizes, seed, engine):
    """Stages on EPs drawn with repetition (``B1|B1|s1``...), one-layer stages, no contention:
    busy = time x frames per stage, summed per EP name; utilisation = stage time / slowest; energy
    the closed form of docs/model.md."""
    rng = np.random.default_rng(seed)
    platform = two_cluster_platform(link_latency_ns=0.0)
    k = len(sizes)
    workload = chain_workload([4 + i for i in range(k)], size=4)
    names = [str(rng.choice(["B1", "s1"])) for _ in range(k)]
    # Stages get disjoint cores: a valid pipeline puts at most 4 one-core stages on a 4-core cluster
    # (five s1 stages would overbook it, and the closed form's idle time would go negative).
    assume(all(names.count(n) <= 4 for n in ("B1", "s1")))
    pipe = pipeline_from_split([1] * k, [platform.ep(n) for n in names])
    times = rng.uniform(0.1, 1.0, size=k)
    cost = StageTimes(platform, times)
    frames = 30
    m = simulate(platform, workload, pipe, engine=engine, frames=frames, cost=cost,
                 **({"contention": False} if engine == "des" else {})).metrics
    stage_t = [s.time_s for s in m.stages]     # compute + the hand-over to the next cluster
    for name in set(names):
        assert m.ep_busy_s[name] == pytest.approx(
            sum(t * frames for t, n in zip(stage_t, names, strict=True) if n == name), rel=1e-9)
    slowest = max(stage_t)
    assert [s.utilization for s in m.stages] == pytest.approx([t / slowest for t in stage_t], rel=1e-9)
    units = [(platform.ep(n), t * frames) for n, t in zip(names, stage_t, strict=True)]
    assert m.energy_J == pytest.approx(
        closed_form_energy(platform, units, m.makespan_s, m.link_bytes, m.coherent_s), rel=1e-9)
    assert math.isfinite(m.energy_J)


def test_the_top_level_api_names_resolve_lazily():
    import hetsim

    for name in hetsim.__all__:
        assert getattr(hetsim, name) is not None, name
    assert set(hetsim.__all__) - {"HetsimError", "__version__"} == set(hetsim._API)
    with pytest.raises(AttributeError):
        hetsim.no_such_name  # noqa: B018


def test_evaluate_and_explore_are_functions_whatever_was_imported():
    """The API's ``hetsim.evaluate`` and ``hetsim.explore`` are functions of the modules
    ``hetsim.evaluation`` and ``hetsim.exploration``: importing those binds other names."""
    import hetsim
    import hetsim.evaluation
    import hetsim.exploration

    platform, workload = hetsim.load_platform("hikey970"), hetsim.load_workload("resnet50")
    pipe = hetsim.load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload)
    assert hetsim.evaluate(platform, workload, pipe, engine="analytic").throughput_fps == pytest.approx(2.8748, rel=1e-4)
    result = hetsim.explore(hetsim.PipelineProblem(platform, workload, depths=[2]),
                            hetsim.make_explorer("HC"), seed=0)
    assert result.best_mapping == "big:1-44|little:45-54"
    assert hetsim.exploration.PipelineProblem is hetsim.PipelineProblem
    assert callable(hetsim.evaluate) and callable(hetsim.explore)


def test_evaluate_has_one_default_engine_with_or_without_options():
    """evaluate(p, w, m), evaluate(p, w, m, RunOptions()) and simulate(p, w, m) run the same engine,
    RunOptions' default (the DES); engine="analytic" asks for the closed forms."""
    from hetsim.options import RunOptions

    platform, workload = load_platform("hikey970"), load_workload("resnet50")
    pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload)
    bare = evaluate(platform, workload, pipe, frames=30)
    with_options = evaluate(platform, workload, pipe, RunOptions(frames=30))
    assert bare.engine == with_options.engine == simulate(platform, workload, pipe, frames=30).metrics.engine \
        == RunOptions.model_fields["engine"].default == "des"
    assert bare.to_json() == with_options.to_json()
    placement = make_placement({op.name: "B4" for op in workload.ops}, platform, workload)
    assert evaluate(platform, workload, placement).engine == evaluate(platform, workload, placement,
                                                                      RunOptions()).engine == "des"
    assert evaluate(platform, workload, pipe, engine="analytic").engine == "analytic"


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 2)), min_size=1, max_size=12),
       st.lists(st.tuples(st.floats(0, 10), st.floats(0, 2)), min_size=1, max_size=12),
       st.lists(st.tuples(st.floats(0, 10), st.floats(0, 2)), max_size=6))
def test_coherent_time_is_the_time_two_clusters_are_busy(a, b, c):
    """Against a brute-force count on a fine grid of the union of busy intervals."""
    from hetsim.metrics import coherent_time_arrays
    from hetsim.power import overlap_s

    arrays = {name: (np.array([s for s, _ in iv]), np.array([s + d for s, d in iv]))
              for name, iv in (("a", a), ("b", b), ("c", c)) if iv}
    got = coherent_time_arrays(arrays)
    if "c" not in arrays:
        ref = overlap_s(list(zip(*arrays["a"], strict=True)), list(zip(*arrays["b"], strict=True)))
        assert got == pytest.approx(ref, abs=1e-9)
    grid = np.linspace(0, 12, 24001)[:-1] + 0.00025
    busy = sum(((grid[:, None] >= s) & (grid[:, None] < e)).any(axis=1).astype(int) for s, e in arrays.values())
    assert got == pytest.approx((busy >= 2).sum() * 0.0005, abs=0.02)
