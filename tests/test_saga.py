"""saga (the anrg-saga package) as an oracle and as explorers: hetsim's HEFT with saga's rank
gives saga's HEFT plan on random graphs; saga's schedulers run on placement problems through the
related-machines fit, exact where the tables have that form; without the package, one line naming
the install command."""

from __future__ import annotations

import builtins
import math

import networkx as nx
import numpy as np
import pytest

from hetsim.errors import HetsimError
from hetsim.exploration import explore, make_explorer
from hetsim.exploration.dag import SchedView, heft
from hetsim.exploration.dag.saga_schedulers import SCHEDULERS, saga_instance, saga_schedule
from hetsim.exploration.placement import PlacementProblem

saga = pytest.importorskip("saga", reason="saga's schedulers: pip install 'hetsim[saga]'")
from saga.schedulers import HeftScheduler  # noqa: E402


def random_instance(seed: int):
    """A saga-style random instance: a DAG of 5..30 tasks, costs, tensor sizes (one per producer),
    2..4 nodes with speeds, a symmetric link speed per pair; as hetsim's graph (time_s, transfer_s)
    and as saga's (Network, TaskGraph)."""
    rng = np.random.default_rng(seed)
    n, D = int(rng.integers(5, 31)), int(rng.integers(2, 5))
    g = nx.gnp_random_graph(n, float(rng.uniform(0.1, 0.4)), seed=int(rng.integers(2**31)), directed=True)
    dag = nx.DiGraph([(u, v) for u, v in g.edges if u < v])
    dag.add_nodes_from(range(n))
    dag = nx.relabel_nodes(dag, {i: f"t{i}" for i in range(n)})
    dag = nx.DiGraph(dag.subgraph(f"t{i}" for i in range(n)))          # nodes in topological order
    eps = [f"n{d}" for d in range(D)]
    speed = {e: float(rng.uniform(0.5, 2.0)) for e in eps}
    link = {(a, b): float(rng.uniform(0.5, 2.0)) for i, a in enumerate(eps) for b in eps[i + 1:]}
    cost = {v: float(rng.uniform(1.0, 10.0)) for v in dag.nodes}
    size = {v: float(rng.uniform(0.5, 10.0)) for v in dag.nodes}
    for v in dag.nodes:
        dag.nodes[v]["time_s"] = {e: cost[v] / speed[e] for e in eps}
        dag.nodes[v]["transfer_s"] = {(a, b): size[v] / link[tuple(sorted((a, b)))] for a in eps for b in eps if a != b}
    network = saga.Network.create(nodes=list(speed.items()),
                                  edges=[(a, b, s) for (a, b), s in link.items()] + [(e, e, math.inf) for e in eps])
    graph = saga.TaskGraph.create(tasks=list(cost.items()), dependencies=[(u, v, size[u]) for u, v in dag.edges])
    return dag, eps, network, graph


def plan_of_saga(schedule, view: SchedView):
    where = {t.name: (node, t.start) for node, tasks in schedule.items() for t in tasks if t.name in view.index}
    dev = [view.eps.index(where[name][0]) for name in view.names]
    order = [[view.names.index(t.name) for t in sorted(schedule[e], key=lambda t: t.start) if t.name in view.index]
             for e in view.eps]
    return dev, order


def test_heft_with_sagas_rank_is_sagas_heft_on_100_random_graphs():
    agree = 0
    for seed in range(100):
        dag, eps, network, graph = random_instance(seed)
        view = SchedView.of_graph(dag, eps, comm="free")
        ours = heft(view, rank_comm="saga")
        theirs = HeftScheduler().schedule(network, graph)
        dev, order = plan_of_saga(theirs, view)
        assert (ours.dev, ours.order) == (dev, order), seed
        assert ours.info["heft_makespan_s"] == pytest.approx(theirs.makespan, rel=1e-9)
        agree += 1
    assert agree == 100


def test_the_rank_terms_differ_by_the_pair_count():
    dag, eps, *_ = random_instance(3)
    view = SchedView.of_graph(dag, eps, comm="free")
    from hetsim.exploration.dag import upward_ranks

    D = len(eps)
    exits = [i for i in range(view.n) if not view.succs[i]]
    assert [upward_ranks(view)[i] for i in exits] == [upward_ranks(view, "saga")[i] for i in exits]
    with pytest.raises(HetsimError, match="rank_comm='mean'; allowed: pairs, saga"):
        upward_ranks(view, "mean")
    assert D >= 2


def test_related_machines_fit_is_exact_on_such_tables():
    dag, eps, network, graph = random_instance(7)
    view = SchedView.of_graph(dag, eps, comm="free")
    net, tg, used, (err_t, err_c) = saga_instance(view)
    assert used == list(range(len(eps))) and err_t < 1e-9 and err_c < 1e-9
    plan = saga_schedule(view, "HEFT")
    assert plan.info["saga_makespan_s"] == pytest.approx(HeftScheduler().schedule(network, graph).makespan, rel=1e-9)


@pytest.mark.parametrize("scheduler", ["HEFT", "CPOP", "MinMin", "ETF", "WBA"])
def test_saga_schedulers_explore_a_placement_problem(scheduler):
    problem = PlacementProblem("rk3588", "squeezenet", eps=["big", "little", "gpu"])
    result = explore(problem, make_explorer("saga", scheduler=scheduler), seed=0)
    best = result.best
    assert best is not None and math.isfinite(result.best_value)
    assert set(best.ep_of) == {op.name for op in problem.workload.ops}
    info = result.info
    assert info["saga_scheduler"] == scheduler and info["saga_eps"] == ["big", "little", "gpu"]
    assert info["saga_makespan_s"] > 0 and info["saga_fit_time_error"] >= 0
    again = explore(problem, make_explorer("saga", scheduler=scheduler), seed=0)
    assert again.best_value == result.best_value                       # seeded


def test_bad_scheduler_and_missing_package(monkeypatch):
    problem = PlacementProblem("rk3588", "squeezenet", eps=["big", "gpu"])
    with pytest.raises(HetsimError, match="scheduler='HEFTT'; allowed: BIL, CPOP"):
        explore(problem, make_explorer("saga", scheduler="HEFTT"), seed=0)
    assert "HEFT" in SCHEDULERS
    real = builtins.__import__

    def no_saga(name, *a, **k):
        if name == "saga" or name.startswith("saga."):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_saga)
    with pytest.raises(HetsimError) as e:
        explore(problem, make_explorer("saga"), seed=0)
    assert "pip install 'hetsim[saga]'" in str(e.value) and "\n" not in str(e.value)
