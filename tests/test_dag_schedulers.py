"""The core's DAG schedulers (hetsim.exploration.dag), functions of the tables first:

* on a hand-made networkx DAG, each function's plan and makespan as computed by hand;
* on random DAG placement problems (as saga validates its schedulers): every plan places each op
  once on an EP that can run it, respects precedence and never runs two tasks of a lane at once;
  the schedulers that score with the engine's rules predict its latency exactly; the exact model
  bounds them all;
* on rk3588 (CPU clusters, GPU, NPU) through the registry;
* the one adapter (DagScheduler): a function's parameters are the explorer's, and any function
  of the tables registers as an explorer.
"""

from __future__ import annotations

import math
import pickle

import networkx as nx
import pytest
from helpers import check_schedule
from helpers import random_placement_problem as problem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.errors import HetsimError
from hetsim.evaluation import DagOptions
from hetsim.exploration import PipelineProblem, PlacementProblem, explore, make_explorer
from hetsim.exploration.dag import (
    DagScheduler,
    Plan,
    PlanState,
    SchedView,
    dmdar,
    exact,
    heft,
    mosaic,
    single_device,
    upward_ranks,
)
from hetsim.exploration.registry import ALGORITHMS, register
from hetsim.plugins import CORE

#: The core's schedulers (muLayer needs a CPU and a GPU only), and those whose own estimate is the
#: engine's latency of their plan (they score with it).
CORE_DAG = ("CPU-only", "GPU-only", "MOSAIC", "StarPU-DMDAR", "HEFT", "muLayer")
EXACT = ("CPU-only", "GPU-only", "MOSAIC", "StarPU-DMDAR", "muLayer")


def diamond() -> SchedView:
    """a -> b, a -> c, b -> d, c -> d on EPs p and q (q an accelerator); every output takes 1 s to
    move between them."""
    g = nx.DiGraph([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    times = {"a": (2, 3), "b": (4, 2), "c": (3, 5), "d": (2, 2)}
    for v, (p, q) in times.items():
        g.nodes[v].update(time_s={"p": p, "q": q}, transfer_s=1.0)
    return SchedView.of_graph(g, ["p", "q"], accelerators=["q"], name="diamond")


# -- by hand ----------------------------------------------------------------------------------------------
def test_heft_on_the_diamond():
    """rank_u = mean time + mean transfer + the largest successor rank: d 2, b 3+1+2, c 4+1+2,
    a 2.5+1+7. a on p [0,2]; c on p [2,5]; b on q [3,5] (a's output lands at 3); d ends at 8 on
    either EP, p first on the tie."""
    view = diamond()
    assert upward_ranks(view) == [10.5, 6.0, 7.0, 2.0]
    plan = heft(view)
    assert plan.dev == [0, 1, 0, 0] and plan.order == [[0, 2, 3], [1]]
    assert plan.info == {"heft_makespan_s": 8.0} and plan.predicted_s is None


def test_dmdar_on_the_diamond_and_its_replay():
    """Ready order a, b, c, d; b to q (ends 5 < 6 on p), c to p (5 < 10), d to p (8, tied with q).
    The prediction is PlanState's replay; dm (no transfer model) puts b on q at 2 and ends later."""
    view = diamond()
    plan = dmdar(view)
    assert plan.dev == [0, 1, 0, 0] and plan.predicted_s == 8.0
    assert plan.start_s == [0.0, 3.0, 2.0, 6.0]
    state = PlanState(view)
    for i, d in ((0, 0), (1, 1), (2, 0), (3, 0)):
        state.append(i, d)
    assert state.makespan == 8.0 and state.fin == [2.0, 5.0, 5.0, 8.0]
    assert dmdar(view, data_aware=False).dev == [0, 1, 0, 0]


def test_single_device_and_mosaic_on_the_diamond():
    view = diamond()
    cpu, gpu = single_device(view, "cpu"), single_device(view, "gpu")
    assert cpu.dev == [0] * 4 and cpu.predicted_s == 11.0 and cpu.sequential
    assert gpu.dev == [1] * 4 and gpu.predicted_s == 12.0
    assert single_device(view, "q").dev == gpu.dev
    # MOSAIC: slicing after a or b pays the live tensors (1 s each); one slice on p is best
    m = mosaic(view)
    assert m.dev == [0] * 4 and m.info == {"slices": 1, "dp_estimate_s": 11.0} and m.predicted_s == 11.0


def test_exact_on_the_diamond_is_optimal_at_8():
    plan = exact(diamond(), time_limit_s=10.0, unit_s=1e-3)
    assert plan.info["optimal"] and plan.info["model_latency_s"] == pytest.approx(8.0)
    assert plan.info["lower_bound_s"] == pytest.approx(8.0)


def test_a_graph_needs_times_and_no_cycle():
    bad = nx.DiGraph([("a", "b"), ("b", "a")])
    with pytest.raises(HetsimError, match="g: the task graph has a cycle"):
        SchedView.of_graph(bad, ["p"], name="g")
    g = nx.DiGraph([("a", "b")])
    with pytest.raises(HetsimError, match="node 'a' needs a time_s attribute"):
        SchedView.of_graph(g, ["p"])
    g.nodes["a"]["time_s"] = {"p": -1}
    g.nodes["b"]["time_s"] = {"p": 1}
    with pytest.raises(HetsimError, match=r"time_s\['p'\]=-1.0; allowed: a time >= 0"):
        SchedView.of_graph(g, ["p"])
    g.nodes["a"]["time_s"] = {"q": 1}
    with pytest.raises(HetsimError, match="node 'a' can run on none of the EPs p"):
        SchedView.of_graph(g, ["p"])
    g.nodes["a"]["time_s"] = {"p": 1}
    g.nodes["a"]["transfer_s"] = {("p", "q"): math.inf}
    with pytest.raises(HetsimError, match="transfer_s=inf"):
        SchedView.of_graph(g, ["p", "q"])
    # nodes given out of topological order are renumbered; a graph view has no problem to place on
    h = nx.DiGraph()
    h.add_nodes_from([("y", {"time_s": {"p": 1}}), ("x", {"time_s": {"p": 2}})])
    h.add_edge("x", "y")
    view = SchedView.of_graph(h, ["p"])
    assert view.names == ["x", "y"] and heft(view).info["heft_makespan_s"] == 3.0
    with pytest.raises(HetsimError, match="no problem to place a plan on"):
        view.placement(heft(view))


# -- random DAGs --------------------------------------------------------------------------------------
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(3, 12), st.sampled_from(["consumer", "copy", "free"]),
       st.booleans(), st.booleans())
def test_every_scheduler_gives_a_valid_plan_on_random_dags(seed, n, comm, caching, three):
    prob = problem(seed, n, comm, caching, three)
    for name in CORE_DAG:
        if name == "muLayer" and three:
            continue
        result = explore(prob, make_explorer(name), seed=0)
        latency = check_schedule(prob, result.best)
        assert latency == pytest.approx(result.best_value, rel=1e-12)
        if name in EXACT:   # scored with the engine's rules: the prediction is the engine's latency
            assert result.info["predicted_latency_s"] == pytest.approx(latency, rel=1e-9, abs=1e-12)
        assert result.info["schedule_wall_s"] >= 0 and result.info["tables_wall_s"] >= 0


@pytest.mark.parametrize("seed", range(4))
def test_the_exact_model_bounds_every_scheduler(seed):
    prob = problem(seed, 8, three=seed % 2 == 1)
    result = explore(prob, make_explorer("ILP-exact", time_limit_s=10.0), seed=0)
    assert result.info["optimal"]
    bound = result.info["lower_bound_s"]
    assert bound == pytest.approx(result.info["model_latency_s"], abs=1e-6)
    assert result.best_value >= bound - 8e-6            # its plan, replayed, is no better than it
    for name in CORE_DAG:
        if name == "muLayer" and seed % 2:
            continue
        value = explore(prob, make_explorer(name), seed=0).best_value
        assert value >= bound - 8e-6, name            # 1 us rounding per op at most


# -- a core platform through the registry ----------------------------------------------------------
def test_on_rk3588_every_core_scheduler_places_googlenet():
    """rk3588: two CPU clusters, a GPU and an NPU; CPU-only runs everything on the first cluster,
    GPU-only on the first accelerator where it can, muLayer splits convs between them."""
    prob = PlacementProblem("rk3588", "googlenet")
    first_cpu = next(e for e in prob.ep_objects if not e.accelerator).name
    first_acc = next(e for e in prob.ep_objects if e.accelerator).name
    for name in CORE_DAG:
        r = explore(prob, make_explorer(name), seed=0)
        assert check_schedule(prob, r.best) == pytest.approx(r.best_value, rel=1e-12)
        if name == "CPU-only":
            assert {ep.name for ep in r.best.ep_of.values()} == {first_cpu}
        if name == "GPU-only":
            assert r.info["fallback_ops"] == sum(ep.name != first_acc for ep in r.best.ep_of.values())
        if name == "muLayer":
            assert r.info["split_ops"] == len(r.best.splits) > 0


def test_the_core_registers_the_dag_schedulers_under_their_names():
    specs = {s.name: s for s in CORE.explorers}
    dag = [n for n in specs if specs[n].cls.startswith("hetsim.exploration.dag.")]
    assert dag == ["CPU-only", "GPU-only", "MOSAIC", "StarPU-DMDAR", "HEFT", "saga", "muLayer", "ILP-exact"]
    assert [n for n in specs if specs[n].problem == "placement" and n not in dag] == ["NSGA-II-place", "NSGA-II-split"]
    assert specs["HEFT"].paper == "baseline (Topcuoglu et al., TPDS 2002)"
    assert specs["StarPU-DMDAR"].cls == "hetsim.exploration.dag.dmda:dmdar"
    assert all(ALGORITHMS[n].cls is DagScheduler for n in dag)


# -- the adapter ------------------------------------------------------------------------------------------
def test_a_functions_parameters_are_the_explorers():
    sp = make_explorer("StarPU-DMDAR", data_aware=False)
    assert isinstance(sp, DagScheduler) and sp.name == "StarPU-DMDAR"
    assert sp.get_params() == {"data_aware": False}
    assert repr(sp) == "DagScheduler(dmdar, data_aware=False)"
    assert make_explorer("CPU-only").get_params() == {"device": "cpu", "fallback": None}
    assert make_explorer("ILP-exact").get_params() == {"time_limit_s": 20.0, "unit_s": 1e-6, "max_ops": 60,
                                                       "deterministic": True}
    with pytest.raises(HetsimError, match="unknown parameter 'k'; its parameters"):
        make_explorer("HEFT", k=2)
    with pytest.raises(HetsimError, match="--param data_aware=1 must be true or false"):
        make_explorer("StarPU-DMDAR", data_aware=1)
    with pytest.raises(HetsimError, match="unknown parameter 'x'; allowed: data_aware"):
        sp.set_params(x=1)
    # explore_seeds sends explorers to worker processes
    again = pickle.loads(pickle.dumps(sp))
    assert again.get_params() == sp.get_params() and again.schedule is dmdar


def first_fit(view: SchedView, reverse: bool = False) -> Plan:
    """Each op, in the workload's order, to the first EP (the last with ``reverse``) that can run it."""
    state = PlanState(view)
    for i in range(view.n):
        caps = view.capable[i]
        state.append(i, caps[-1] if reverse else caps[0])
    return Plan.of(state, rule="first fit")


def test_any_function_of_the_tables_is_an_explorer():
    prob = problem(3, 9)
    direct = explore(prob, DagScheduler(first_fit, reverse=True), seed=0)
    assert direct.algorithm == "first_fit" and direct.info["rule"] == "first fit"
    assert direct.info["predicted_latency_s"] == pytest.approx(direct.best_value, rel=1e-9)
    register("first-fit (test)", first_fit, problem="placement", paper="test", summary="first fit")
    try:
        via = explore(prob, make_explorer("first-fit (test)", reverse=True), seed=0)
        assert via.algorithm == "first-fit (test)" and via.best == direct.best
    finally:
        del ALGORITHMS["first-fit (test)"]
    with pytest.raises(HetsimError, match="a function is a DAG scheduler of a placement problem"):
        register("first-fit (pipeline)", first_fit, problem="pipeline", paper="test", summary="no")
    with pytest.raises(HetsimError, match="returned NoneType, not a Plan"):
        explore(prob, DagScheduler(lambda view: None, name="nothing"))


def test_the_schedulers_refuse_what_they_cannot_do():
    prob = problem(0, 5)
    with pytest.raises(HetsimError, match="ILP-exact: .* has 5 ops; the exact model is for graphs of at most "
                                          "max_ops=3"):
        explore(prob, make_explorer("ILP-exact", max_ops=3))
    serial = PlacementProblem(prob.platform, prob.workload, prob.cost, eps=["cpu", "gpu"],
                              dag=DagOptions(serial=True))
    with pytest.raises(HetsimError, match="nothing to schedule"):
        explore(serial, make_explorer("StarPU-DMDAR"))
    cpu_only = PlacementProblem(prob.platform, prob.workload, prob.cost, eps=["cpu"])
    with pytest.raises(HetsimError, match="include no accelerator"):
        explore(cpu_only, make_explorer("GPU-only"))
    with pytest.raises(HetsimError, match="muLayer: cpu='npu'; allowed: 'cpu', 'gpu' or one of the problem's EPs"):
        explore(prob, make_explorer("muLayer", cpu="npu"))
    with pytest.raises(HetsimError, match="HEFT schedules a DAG: it needs a PlacementProblem"):
        explore(PipelineProblem("hikey970", "alexnet", depths=[2]), make_explorer("HEFT"))
