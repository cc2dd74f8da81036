"""HOPE's schedulers on random DAGs (as saga validates its schedulers; the core's DAG schedulers
have the same tests in tests/test_dag_schedulers.py): every plan places each op once on an EP that
can run it, respects precedence and never runs two tasks of a lane at once; HOPE:GS, which scores
with the engine's rules, predicts its latency exactly; the core's exact model bounds both; CP-SAT
and HiGHS agree on HOPE's ILP; Algorithm 1 on Fig. 1; node merging."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from helpers import check_schedule
from helpers import random_placement_problem as problem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.errors import HetsimError
from hetsim.exploration import explore, make_explorer
from hetsim.exploration.dag import SchedView, dmdar
from hetsim_papers.hope.gs import hope_gs
from hetsim_papers.hope.lp import hope_lp
from hetsim_papers.hope.merging import followers, merge_short_ops
from hetsim_papers.hope.milp import (
    Instance,
    clear_solutions,
    ilp_schedule,
    solve_paper_cpsat,
    solve_paper_highs,
)
from hetsim_papers.hope.partition import bisect, partition, upranks

#: HOPE's schedulers, and those whose own estimate is the engine's latency of their plan.
ALL = ("HOPE:GS", "HOPE:LP")
EXACT = ("HOPE:GS",)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(3, 12), st.sampled_from(["consumer", "copy", "free"]),
       st.booleans(), st.booleans())
def test_every_scheduler_gives_a_valid_plan_on_random_dags(seed, n, comm, caching, three):
    prob = problem(seed, n, comm, caching, three)
    for name in ALL:
        params = {"time_limit_s": 5.0} if name == "HOPE:LP" else {}
        result = explore(prob, make_explorer(name, **params), seed=0)
        latency = check_schedule(prob, result.best)
        assert latency == pytest.approx(result.best_value, rel=1e-12)
        if name in EXACT:   # scored with the engine's rules: the prediction is the engine's latency
            assert result.info["predicted_latency_s"] == pytest.approx(latency, rel=1e-9, abs=1e-12)
        assert result.info["schedule_wall_s"] >= 0


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_model_bounds_every_scheduler(seed):
    prob = problem(seed, 8, three=seed % 2 == 1)
    exact = explore(prob, make_explorer("ILP-exact", time_limit_s=10.0), seed=0)
    assert exact.info["optimal"]
    bound = exact.info["lower_bound_s"]
    assert bound == pytest.approx(exact.info["model_latency_s"], abs=1e-6)
    assert exact.best_value >= bound - 8e-6            # its plan, replayed, is no better than it
    for name in ALL:
        value = explore(prob, make_explorer(name), seed=0).best_value
        assert value >= bound - 8e-6, name            # 1 us rounding per op at most


def test_gs_with_a_window_of_one_and_no_merging_is_starpu():
    """HOPE:GS with K = 1 is a greedy earliest-finish list scheduler, StarPU's."""
    for seed in range(15):
        view = SchedView(problem(seed, 12, three=seed % 3 == 0))
        a, b = hope_gs(view, k=1, merge_threshold_s=None), dmdar(view)
        assert a.dev == b.dev and a.order == b.order


def test_lp_with_one_module_replays_no_later_than_its_ilp():
    """A module as large as the graph is HOPE's ILP on the whole graph: the engine runs its plan at
    least as fast as the ILP says (it caches tensors and starts transfers as soon as it can)."""
    for seed in range(6):
        prob = problem(seed, 9)
        r = explore(prob, make_explorer("HOPE:LP", nt=50, merge_threshold_s=None), seed=0)
        assert r.info["modules"] == 1 and r.info["modules_proven_optimal"] == 1
        view = SchedView(prob)
        inst = Instance(view.cl.tolist(), [(k, i, view.comm_table(k)) for i in range(view.n)
                                           for k in view.preds[i]])
        ilp = solve_paper_cpsat(inst)
        assert r.best_value <= ilp.makespan_s + 9e-6


def test_the_whole_graph_pass_never_lengthens_the_modules_plan_in_the_ilp():
    """HOPE:LP's global reading: the whole graph's ILP, started from the modules' plan, is kept only
    when the ILP finds it shorter; the modules' plan scheduled by the ILP (its hint) is a feasible
    solution, so the kept plan's ILP makespan is at most the modules'."""
    for seed in range(5):
        view = SchedView(problem(seed, 12))
        modules = hope_lp(view, nt=4, merge_threshold_s=None, whole_graph_s=None)
        both = hope_lp(view, nt=4, merge_threshold_s=None, whole_graph_s=5.0)
        assert "whole_graph_improved" in both.info and "whole_graph_improved" not in modules.info
        inst = Instance(view.cl.tolist(), [(k, i, view.comm_table(k)) for i in range(view.n) for k in view.preds[i]])
        span = [max(ilp_schedule(inst, p.dev, p.order)[1]) for p in (modules, both)]
        assert span[1] <= span[0]
        if not both.info["whole_graph_improved"]:
            assert both.dev == modules.dev and both.order == modules.order


def test_ilp_schedule_is_a_solution_of_the_model_and_no_shorter_than_its_optimum():
    rng = np.random.default_rng(3)
    for _ in range(5):
        inst = random_instance(rng, 6, 2)
        opt = solve_paper_cpsat(inst, unit_s=1e-4)
        order = opt.order(inst.D)
        start, end = ilp_schedule(inst, opt.dev, order, unit_s=1e-4)
        assert max(end) == round(opt.makespan_s / 1e-4)   # the optimum's own plan, as early as possible
        other = [1 - d if 1 - d in inst.capable(i) else d for i, d in enumerate(opt.dev)]
        times = ilp_schedule(inst, other, [[i for i in range(inst.n) if other[i] == d] for d in range(2)], 1e-4)
        assert times is not None and max(times[1]) >= max(end)
    # a device's queue that waits on a vertex queued behind it deadlocks
    chain = Instance([[1.0, 1.0], [1.0, 1.0]], [(0, 1, [[0.0, 0.0], [0.0, 0.0]])])
    assert ilp_schedule(chain, [0, 0], [[1, 0], []]) is None


def test_short_ops_follow_their_predecessor_onto_its_device():
    """Node merging with "short" on the predecessor's EP: in HOPE:GS's and HOPE:LP's plans an op with
    one predecessor that is short on the predecessor's EP runs there."""
    for seed in range(6):
        view = SchedView(problem(seed, 10))
        follow = followers(view, 2e-3)
        for plan in (hope_gs(view, merge_threshold_s=2e-3), hope_lp(view, merge_threshold_s=2e-3, nt=4)):
            for p in range(view.n):
                for i in follow[p].get(plan.dev[p], ()):
                    assert plan.dev[i] == plan.dev[p]


def test_the_myopic_reading_is_each_module_alone():
    view = SchedView(problem(2, 12))
    a = hope_lp(view, scope="module", nt=4)
    b = hope_lp(view, lookahead=0, whole_graph_s=None, nt=4)
    assert a.dev == b.dev and a.order == b.order
    with pytest.raises(HetsimError, match="HOPE:LP: scope='module' solves each module alone"):
        hope_lp(view, scope="module", lookahead=1)


# -- HOPE's ILP: CP-SAT against HiGHS ------------------------------------------------------------------
def random_instance(rng, n: int, D: int) -> Instance:
    cl = [[float(rng.uniform(0.5, 5.0)) if (d == 0 or rng.random() > 0.2) else math.inf for d in range(D)]
          for _ in range(n)]
    edges = []
    for i in range(1, n):
        for k in rng.choice(i, size=min(i, int(rng.integers(1, 3))), replace=False):
            c = [[0.0 if a == b else float(rng.uniform(0.1, 2.0)) for b in range(D)] for a in range(D)]
            edges.append((int(k), i, c))
    release = [float(rng.uniform(0, 2)) if rng.random() < 0.3 else 0.0 for _ in range(n)]
    ext = [[float(rng.uniform(0, 1)) if rng.random() < 0.3 else 0.0 for _ in range(D)] for _ in range(n)]
    avail = [float(rng.uniform(0, 3)) for _ in range(D)]
    return Instance(cl, edges, release, ext, avail)


@pytest.mark.parametrize("seed, n, D", [(s, 4 + s % 4, 2 + s % 2) for s in range(8)])
def test_cpsat_and_highs_find_the_same_optimum_of_hopes_ilp(seed, n, D):
    inst = random_instance(np.random.default_rng(seed), n, D)
    a = solve_paper_cpsat(inst, unit_s=1e-4)
    b = solve_paper_highs(inst)
    assert a.optimal and b.optimal
    assert a.makespan_s == pytest.approx(b.makespan_s, abs=n * 1e-4)
    # both are schedules of the model: each vertex after its predecessors, one at a time per device
    for sol in (a, b):
        for k, i, _ in inst.edges:
            assert sol.start[i] >= sol.end[k] - 1e-6
        for d in range(D):
            spans = sorted((sol.start[i], sol.end[i]) for i in range(n) if sol.dev[i] == d)
            for (_, a1), (b0, _) in zip(spans, spans[1:], strict=False):
                assert b0 >= a1 - 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_the_implied_constraints_cut_no_schedule_of_a_late_module(seed):
    """A module late in a plan (every vertex released late, the devices busy until later still):
    the implied constraints (each device's load before the makespan, from its availability or the
    earliest release) keep HOPE's ILP's optimum, which HiGHS finds without them."""
    rng = np.random.default_rng(100 + seed)
    inst = random_instance(rng, 5 + seed % 3, 2 + seed % 2)
    inst.release = [float(r) + 4.0 for r in rng.uniform(0, 2, inst.n)]
    inst.avail = [float(a) for a in rng.uniform(0, 8, inst.D)]
    a, b = solve_paper_cpsat(inst, unit_s=1e-4), solve_paper_highs(inst)
    assert a.optimal and b.optimal
    assert a.makespan_s == pytest.approx(b.makespan_s, abs=inst.n * 1e-4)


def test_a_device_loaded_to_its_makespan_is_feasible():
    """Three vertices only device 0 runs, released at 1 s, the device free at 2 s: they run back
    to back from 2 s, so the load bound (2 + 1 + 2 + 3 = 8 s) is the optimum, not beyond it."""
    inf = math.inf
    inst = Instance([[1.0, inf], [2.0, inf], [3.0, inf]], [], release=[1.0] * 3, avail=[2.0, 0.0])
    sol = solve_paper_cpsat(inst)
    assert sol.optimal and sol.makespan_s == pytest.approx(8.0) and sol.dev == [0, 0, 0]


def test_a_deterministic_limit_gives_the_same_solution_and_bound_every_time():
    """CP-SAT stopped by its deterministic time (HOPE:LP's and ILP-exact's default), not the wall
    clock: a search cut short ends at the same point whatever the machine's load."""
    inst = random_instance(np.random.default_rng(7), 30, 3)
    runs = []
    for _ in range(2):
        clear_solutions()    # solved twice, not answered from the first solve
        runs.append(solve_paper_cpsat(inst, time_limit_s=0.05, deterministic=True))
    assert not runs[0].optimal   # cut short, so the limit decides where it stops
    assert runs[0].dev == runs[1].dev and runs[0].start == runs[1].start
    assert runs[0].bound_s == runs[1].bound_s and runs[0].deterministic_s > 0


def test_an_infeasible_or_timed_out_ilp_is_one_line():
    inst = Instance([[math.inf, math.inf]], [])
    with pytest.raises(HetsimError, match="module 3: vertex 0 can run on no device"):
        solve_paper_cpsat(inst, where="module 3")
    big = random_instance(np.random.default_rng(1), 40, 3)
    with pytest.raises(HetsimError, match=r"CP-SAT found no schedule within 1e-06 s"):
        solve_paper_cpsat(big, time_limit_s=1e-6, where="module 1")


# -- Algorithm 1 ---------------------------------------------------------------------------------------
FIG1 = {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"], "e": ["d"], "f": ["e"], "g": ["f"], "h": ["f"],
        "i": ["g"], "j": ["h"], "k": ["i"], "l": ["j"], "m": ["k", "l"]}


def test_fig1_cuts_the_13_vertex_example_at_uprank_5():
    """HOPE Fig. 1: 6 vertices have uprank <= 5 and 7 more; 7 <= (1 + 0.2) 13 / 2 = 7.8 and the
    vertex cut is 1; the coarse graph is acyclic."""
    names = list(FIG1)
    idx = {v: i for i, v in enumerate(names)}
    preds = [[idx[p] for p in FIG1[v]] for v in names]
    succs = [[idx[w] for w in names if v in FIG1[w]] for v in names]
    nodes = list(range(13))
    up = upranks(nodes, preds)
    assert [up[idx[v]] for v in names] == [1, 2, 2, 3, 4, 5, 6, 6, 7, 7, 8, 8, 9]
    for cut in ("level", "exact"):
        v0, v1, info = bisect(nodes, preds, succs, cut=cut)
        assert (len(v0), len(v1), info["level"], info["cut"]) == (6, 7, 5, 1)
        assert max(len(v0), len(v1)) <= (1 + 0.2) * 13 / 2
        assert all(idx_ not in v0 for a in v1 for idx_ in succs[a])        # no edge V1 -> V0


@pytest.mark.parametrize("seed", range(10))
def test_partition_gives_small_modules_in_an_order_every_edge_respects(seed):
    rng = np.random.default_rng(seed)
    g = nx.gnp_random_graph(60, 0.08, seed=seed, directed=True)
    dag = nx.DiGraph([(u, v) for u, v in g.edges if u < v])
    dag.add_nodes_from(range(60))
    preds = [sorted(dag.predecessors(v)) for v in range(60)]
    succs = [sorted(dag.successors(v)) for v in range(60)]
    nt = int(rng.integers(3, 15))
    modules = partition(list(range(60)), preds, succs, nt=nt, cut="exact" if seed % 2 else "level")
    assert sorted(v for m in modules for v in m) == list(range(60))
    assert all(len(m) < nt for m in modules)
    where = {v: j for j, m in enumerate(modules) for v in m}
    assert all(where[u] <= where[v] for u, v in dag.edges)


def test_an_antichain_is_split_in_the_middle():
    preds = [[] for _ in range(20)]
    modules = partition(list(range(20)), preds, preds, nt=12)
    assert [len(m) for m in modules] == [10, 10]


# -- node merging ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(8))
def test_super_ops_enter_at_their_root_and_stay_acyclic(seed):
    view = SchedView(problem(seed, 14))
    groups = merge_short_ops(view, 2e-3)   # most ops are short at this threshold
    assert sorted(i for m in groups.members for i in m) == list(range(view.n))
    for m in groups.members:
        for i in m[1:]:
            assert len(view.preds[i]) == 1 and view.preds[i][0] in m
        common = set.intersection(*(set(view.capable[i]) for i in m))
        assert common
    g = nx.DiGraph([(a, b) for a in range(groups.n) for b in groups.succs[a]])
    assert nx.is_directed_acyclic_graph(g)
    assert all(a < b for a, b in g.edges)       # super-ops numbered in a topological order


def test_no_merging_below_the_shortest_op():
    view = SchedView(problem(0, 10))
    assert merge_short_ops(view, None).n == view.n
    assert merge_short_ops(view, 1e-9).n == view.n


# -- bad input -----------------------------------------------------------------------------------------
def test_schedulers_refuse_what_they_cannot_do():
    prob = problem(0, 5)
    with pytest.raises(HetsimError, match="HOPE:GS: k=0 is out of range"):
        explore(prob, make_explorer("HOPE:GS", k=0))
    with pytest.raises(HetsimError, match="HOPE:LP: cut='x' is not allowed"):
        explore(prob, make_explorer("HOPE:LP", cut="x"))
    # the functions check their parameters when called directly too
    with pytest.raises(HetsimError, match="HOPE:GS: score='min' is not allowed"):
        hope_gs(SchedView(prob), score="min")
