"""The one DAG engine: task graphs of placements, plans and splits; the DES against the closed-form
list schedule on random DAGs; schedule validity (precedence, lane exclusivity, each op once)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import two_cluster_platform
from hypothesis import given, settings
from hypothesis import strategies as st

from hetsim.cost import RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.evaluation import DagOptions, simulate
from hetsim.mapping import make_placement
from hetsim.options import RunOptions
from hetsim.sim.dag import run_dag
from hetsim.tasks import build_tasks, list_schedule
from hetsim.workload import workload_from_dict


def random_dag(rng: np.random.Generator, n: int):
    """A random DAG of same-padding 3x3 convs (8 channels, 8x8) and adds joining two earlier ops."""
    ops = [{"name": "op0", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8, "inputs": []}]
    for i in range(1, n):
        if i >= 2 and rng.random() < 0.3:
            a, b = rng.choice(i, size=2, replace=False)
            ops.append({"name": f"op{i}", "kind": "add", "inputs": [f"op{a}", f"op{b}"]})
        else:
            src = int(rng.integers(i))
            ops.append({"name": f"op{i}", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8,
                        "inputs": [f"op{src}"]})
    return workload_from_dict({"schema": 1, "name": "dag", "input": {"h": 8, "w": 8, "c": 8},
                               "layer_kinds": ["conv"], "ops": ops}, "dag")


def random_mapping(rng, platform, workload, plan: bool, split: bool, sequential: bool = False):
    eps = ["big", "little", "B2", "s2"]
    ep_of = {op.name: str(rng.choice(eps[:2])) for op in workload.ops}
    order = None
    if plan:
        # A random topological order, projected onto each EP: a valid plan.
        indeg = {op.name: workload.graph.in_degree(op.name) for op in workload.ops}
        ready, topo = [k for k, d in indeg.items() if d == 0], []
        while ready:
            x = ready.pop(int(rng.integers(len(ready))))
            topo.append(x)
            for y in workload.graph.successors(x):
                indeg[y] -= 1
                if indeg[y] == 0:
                    ready.append(y)
        order = {}
        for name in topo:
            order.setdefault(ep_of[name], []).append(name)
    splits = None
    if split:
        convs = [op.name for op in workload.ops if op.kind == "conv"]
        chosen = rng.choice(convs, size=min(2, len(convs)), replace=False)
        splits = {str(c): {"big": 0.6, "little": 0.4} for c in chosen}
        if order is not None:   # split ops run on several EPs: they leave the per-EP order
            order = {e: [o for o in ops if o not in splits] for e, ops in order.items()}
    return make_placement(ep_of, platform, workload, order=order, splits=splits, sequential=sequential)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 14), st.integers(0, 10**6), st.booleans(), st.booleans(),
       st.sampled_from(["free", "consumer", "copy", "mpi"]), st.booleans(), st.booleans(), st.booleans())
def test_des_equals_the_list_schedule_on_random_dags(n, seed, plan, split, comm, caching, serial,
                                                      sequential):
    rng = np.random.default_rng(seed)
    platform = two_cluster_platform(link_latency_ns=2000.0)
    workload = random_dag(rng, n)
    placement = random_mapping(rng, platform, workload, plan, split, sequential)
    cost = RooflineCostModel(platform)
    tg = build_tasks(platform, workload, placement, cost, comm=comm, caching=caching, serial=serial)
    start, finish = list_schedule(tg)
    options = RunOptions.make(frames=1, contention=False).resolve(placement)
    run = run_dag(platform, tg, options)
    assert run.start[0] == pytest.approx(start, rel=1e-12, abs=1e-15)
    assert run.end[0] == pytest.approx(finish, rel=1e-12, abs=1e-15)
    # A valid schedule: each op computed once (whole or as its shares + gather), precedence
    # respected, no lane running two tasks at once.
    names = [t.op for t in tg.tasks if t.kind == "compute"]
    assert set(names) == {op.name for op in workload.ops}
    for t in tg.tasks:
        for d in t.deps:
            assert start[t.index] >= finish[d] - 1e-15
    for order in tg.lanes.values():
        spans = sorted((start[i], finish[i]) for i in order)
        for (_, a1), (b0, _) in zip(spans, spans[1:], strict=False):
            assert b0 >= a1 - 1e-15
    if serial:
        assert list(tg.lanes) == ["serial"]
    if sequential:   # one op at a time: an op's tasks span an interval no other op's tasks enter
        spans = {}
        for t in tg.tasks:
            a, b = spans.get(t.op, (np.inf, -np.inf))
            spans[t.op] = (min(a, start[t.index]), max(b, finish[t.index]))
        ordered = sorted(spans.values())
        for (_, a1), (b0, _) in zip(ordered, ordered[1:], strict=False):
            assert b0 >= a1 - 1e-15
    m = simulate(platform, workload, placement, engine="analytic", cost=cost,
                 dag=DagOptions(comm, caching, serial)).metrics
    assert m.latency_s["mean"] == pytest.approx(finish.max(), rel=1e-12)



@settings(max_examples=80, deadline=None)
@given(st.integers(2, 14), st.integers(0, 10**6), st.booleans(), st.booleans(),
       st.sampled_from(["free", "consumer", "copy", "mpi"]), st.booleans(),
       st.sampled_from(["parallel", "serial", "serial+overlap", "sequential"]), st.sampled_from(["ep", "memory"]),
       st.integers(1, 6), st.integers(1, 3), st.sampled_from([0.0, 0.3]))
def test_closed_form_is_the_simpy_run_bit_for_bit(n, seed, plan, split, comm, caching, execution, residency,
                                                  frames, in_flight, noise_sigma):
    """Without contention ``run_dag`` takes the closed form in task order: every array equal to
    SimPy's (``fast=False``) exactly, over frames, admission, noise and every way of execution."""
    rng = np.random.default_rng(seed)
    platform = two_cluster_platform(link_latency_ns=2000.0)
    workload = random_dag(rng, n)
    placement = random_mapping(rng, platform, workload, plan, split, execution == "sequential")
    cost = RooflineCostModel(platform)
    tg = build_tasks(platform, workload, placement, cost, comm=comm, caching=caching,
                     serial=execution.startswith("serial"), residency=residency,
                     overlap=execution == "serial+overlap")
    runs = [run_dag(platform, tg, RunOptions.make(frames=frames, in_flight=in_flight, contention=False,
                                                  noise_sigma=noise_sigma, seed=seed, fast=fast).resolve(placement))
            for fast in (True, False)]
    for a in ("start", "end", "arrival", "done"):
        np.testing.assert_array_equal(getattr(runs[0], a), getattr(runs[1], a))

def test_serial_execution_is_the_sum_of_every_task():
    rng = np.random.default_rng(3)
    platform = two_cluster_platform()
    workload = random_dag(rng, 10)
    placement = random_mapping(rng, platform, workload, plan=False, split=False)
    cost = RooflineCostModel(platform)
    tg = build_tasks(platform, workload, placement, cost, serial=True)
    _, finish = list_schedule(tg)
    assert finish.max() == pytest.approx(sum(t.time_s for t in tg.tasks), rel=1e-12)


def test_a_plan_against_a_data_dependency_is_refused():
    platform = two_cluster_platform()
    workload = random_dag(np.random.default_rng(0), 4)
    ep_of = {op.name: "big" for op in workload.ops}
    with pytest.raises(HetsimError, match="order must respect the data dependencies"):
        make_placement(ep_of, platform, workload, order={"big": ["op3", "op2", "op1", "op0"]})
    with pytest.raises(HetsimError, match="must list exactly the 4 ops"):
        make_placement(ep_of, platform, workload, order={"big": ["op0", "op1"]})


def test_a_sequential_split_runs_its_shares_in_parallel_and_nothing_else():
    """μLayer's form: one op at a time, but a split op's shares overlap on their EPs; without
    ``sequential`` two independent branches on two EPs overlap too."""
    platform = two_cluster_platform(link_latency_ns=0.0)
    workload = workload_from_dict({"schema": 1, "name": "fork", "input": {"h": 28, "w": 28, "c": 32},
                                   "layer_kinds": ["conv"], "ops": [
                                       {"name": "a", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 64},
                                       {"name": "b", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 64,
                                        "inputs": ["a"]},
                                       {"name": "c", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 64,
                                        "inputs": ["a"]}]}, "fork")
    cost = RooflineCostModel(platform)
    ep_of = {"a": "big", "b": "big", "c": "little"}
    splits = {"a": {"big": 0.7, "little": 0.3}}
    lat = {}
    for seq in (False, True):
        p = make_placement(ep_of, platform, workload, splits=splits, sequential=seq)
        tg = build_tasks(platform, workload, p, cost, comm="consumer")
        start, finish = list_schedule(tg)
        by = {t.name: i for i, t in enumerate(tg.tasks)}
        # the shares of a overlap
        assert start[by["a@little"]] < finish[by["a@big"]] and start[by["a@big"]] < finish[by["a@little"]]
        b, c = by["b"], by["c"]
        overlap = min(finish[b], finish[c]) - max(start[b], start[c])
        assert (overlap <= 0) if seq else (overlap > 0)
        lat[seq] = finish.max()
    assert lat[True] > lat[False]


def test_split_shares_must_sum_to_one():
    platform = two_cluster_platform()
    workload = random_dag(np.random.default_rng(0), 3)
    ep_of = {op.name: "big" for op in workload.ops}
    with pytest.raises(HetsimError, match="sum to 1"):
        make_placement(ep_of, platform, workload, splits={"op0": {"big": 0.5, "little": 0.4}})


def test_splitting_an_op_over_two_clusters_shortens_it():
    platform = two_cluster_platform(link_latency_ns=0.0)
    workload = workload_from_dict({"schema": 1, "name": "one", "input": {"h": 56, "w": 56, "c": 64},
                                   "layer_kinds": ["conv"], "ops": [
                                       {"name": "c", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 256}]},
                                  "one")
    whole = make_placement({"c": "big"}, platform, workload)
    split = make_placement({"c": "big"}, platform, workload, splits={"c": {"big": 0.75, "little": 0.25}})
    t_whole = simulate(platform, workload, whole, engine="analytic").metrics.latency_s["mean"]
    t_split = simulate(platform, workload, split, engine="analytic").metrics.latency_s["mean"]
    assert t_split < t_whole


def test_peak_memory_of_a_chain_on_one_ep():
    """conv a -> conv b on one EP, resident weights: the peak is both weights + the largest moment
    (a's output held while b runs and writes its own, with b's im2col matrix)."""
    platform = two_cluster_platform()
    workload = workload_from_dict({"schema": 1, "name": "two", "input": {"h": 8, "w": 8, "c": 8},
                                   "layer_kinds": ["conv"], "ops": [
                                       {"name": "a", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8},
                                       {"name": "b", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8}]},
                                  "two")
    a, b = workload.op("a"), workload.op("b")
    placement = make_placement({"a": "big", "b": "big"}, platform, workload)
    m = simulate(platform, workload, placement, engine="analytic").metrics
    weights = a.weight_bytes + b.weight_bytes
    during_a = a.output_bytes + a.im2col_bytes
    during_b = a.output_bytes + b.output_bytes + b.im2col_bytes
    assert m.ep_peak_memory_bytes == {"big": weights + max(during_a, during_b)}
    des = simulate(platform, workload, placement, engine="des", contention=False).metrics
    assert des.ep_peak_memory_bytes == m.ep_peak_memory_bytes
