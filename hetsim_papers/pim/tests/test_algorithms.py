"""The PIM paper's algorithms (seed 003): the DCG and its DA classes, Algorithm 1's profiling sweep
(the paper's Fig. 5 example), the assembly-line DP against brute force, the exact MILP, DUET, and
the explorers on the placement problem."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.errors import HetsimError
from hetsim.exploration import explore, make_explorer
from hetsim.exploration.registry import get_algorithm
from hetsim_papers.pim.dcg import Dcg
from hetsim_papers.pim.dp import als_dp
from hetsim_papers.pim.duet import duet, fastest
from hetsim_papers.pim.exact import enumerate_paths, milp
from hetsim_papers.pim.profiling import _maximal, plan_profiling, priority_assignment


# -- toy graphs ----------------------------------------------------------------------------------------
def random_dcg(seed: int, n_ops: int, n_dev: int = 3, chain: bool = False, shared: bool = True) -> Dcg:
    """A random DAG (or chain) with random capabilities and costs; devices 0 and 1 share a memory
    when ``shared`` (the CPU_S / CPU_P case), the last device has its own."""
    rng = np.random.default_rng(seed)
    g = nx.DiGraph()
    g.add_nodes_from(range(n_ops))
    for j in range(1, n_ops):
        g.add_edge(j - 1, j) if chain or rng.random() < 0.7 else None
        if not chain:
            for k in range(j - 1):
                if rng.random() < 0.2:
                    g.add_edge(k, j)
    devices = [str(d) for d in range(n_dev)]
    cap = {v: [devices[0]] + [d for d in devices[1:] if rng.random() < 0.6] for v in g}
    node_s = {v: {d: float(rng.uniform(0.1, 2.0)) for d in cap[v]} for v in g}
    sizes = {v: int(rng.integers(1, 4)) for v in g}
    memory = (["cpu", "cpu"] + [f"m{d}" for d in range(2, n_dev)]) if shared else [f"m{d}" for d in devices]
    # A copy into a memory costs the same whichever device of it reads the tensor (as in the PIM
    # cost model; the MILP prices a copy per destination memory).
    price = {(b, s, m): float(rng.uniform(0.0, 1.5)) for b in (1, 2, 3) for s in devices for m in set(memory)}
    copy_s = {(b, s, d): price[(b, s, memory[int(d)])] for b in (1, 2, 3) for s in devices for d in devices
              if s != d}
    return Dcg.from_graph(g, devices, cap, node_s, sizes, copy_s, name=f"random{seed}",
                          memory=memory if shared else ())


def brute(g: Dcg, copies: str) -> float:
    return min(g.total(np.array(a), copies) for a in itertools.product(*g.cap))


# -- the DCG ----------------------------------------------------------------------------------------------
def test_dcg_of_a_toy_graph_counts_nodes_dashed_edges_and_da_classes():
    """Fig. 4's shape: A and C run only on device 0; each dashed copy is (tensor, src, dst)."""
    g = nx.DiGraph([("A", "B"), ("B", "C"), ("C", "D")])
    cap = {"A": ["0"], "B": ["0", "1", "2"], "C": ["0"], "D": ["0", "1", "2"]}
    dcg = Dcg.from_graph(g, ["0", "1", "2"], cap, nbytes={"A": 4, "B": 4, "C": 4, "D": 8})
    c = dcg.counts()
    assert (c.V_c, c.E_c, c.V_d) == (4, 3, 8)
    # A: 0 -> {1, 2}; B: {1, 2} -> 0 (C runs on 0 only); C: 0 -> {1, 2}
    assert c.E_d == 2 + 2 + 2
    # classes by (bytes, src, dst): A and C's copies share two classes, B's are two more
    assert c.DA == 4
    assert c.log3_paths == pytest.approx(2.0)


def test_a_cycle_and_an_op_no_device_runs_are_one_line_errors():
    g = nx.DiGraph([("A", "B"), ("B", "A")])
    with pytest.raises(HetsimError, match="has a cycle .*allowed: a DAG"):
        Dcg.from_graph(g, ["0"], {"A": ["0"], "B": ["0"]})
    g = nx.DiGraph([("A", "B")])
    with pytest.raises(HetsimError, match="op 'B' can run on none of the devices"):
        Dcg.from_graph(g, ["0", "1"], {"A": ["0"], "B": []})


def test_latency_counts_copies_per_memory_space_or_per_edge():
    # A on PIM (device 2) feeds B (device 0) and C (device 1): CPU_S and CPU_P share a memory
    g = nx.DiGraph([("A", "B"), ("A", "C")])
    cap = {v: ["0", "1", "2"] for v in "ABC"}
    dcg = Dcg.from_graph(g, ["0", "1", "2"], cap, node_s={v: {"0": 1, "1": 1, "2": 1} for v in "ABC"},
                         copy_s={(1, "2", "0"): 5.0, (1, "2", "1"): 5.0, (1, "0", "1"): 0.5,
                                 (1, "1", "0"): 0.5, (1, "0", "2"): 3.0, (1, "1", "2"): 3.0},
                         memory=["cpu", "cpu", "pim"])
    a = np.array([2, 0, 1])
    assert dcg.latency(a, "memory") == (3.0, 5.0)     # one copy into the CPU's memory
    assert dcg.latency(a, "edge") == (3.0, 10.0)      # one per consumer
    assert dcg.latency(np.array([0, 1, 1]), "memory") == (3.0, 0.0)   # one memory: no copy
    assert dcg.latency(np.array([0, 1, 1]), "edge") == (3.0, 1.0)
    with pytest.raises(HetsimError, match="op 'A' on device 5"):
        dcg.latency(np.array([5, 0, 0]))


# -- Algorithm 1: the paper's Fig. 5 example -------------------------------------------------------
def test_fig5_sweep_matches_the_paper_step_by_step():
    from hetsim_papers.pim.experiments.counts import FIG5, fig5_dcg

    plan = plan_profiling(fig5_dcg(), measured=[4], trace=True)
    got = [(r["node"], tuple(r["L"]), " ".join(r["P"])) for r in plan.trace]
    assert got == list(FIG5)
    assert len(plan.edge_runs) == 1
    assert list(plan.edge_runs[0]) == [0, 1, 0, 1, 0, 0]   # A0 B1 C0 D1 E0 (F0 completes the run)
    assert plan.covered == plan.n_classes == 5


def test_node_runs_put_each_device_first_and_cover_every_dcg_node():
    g = random_dcg(3, 12)
    plan = plan_profiling(g)
    assert len(plan.node_runs) == g.n_devices
    for d, run in enumerate(plan.node_runs):
        assert all(run[j] == d for j in range(g.n_ops) if d in g.cap[j])
    assert plan.covered == plan.n_classes            # every DA class exposed by some run
    with pytest.raises(HetsimError, match="fallback="):
        plan_profiling(g, fallback="nearest")
    with pytest.raises(HetsimError, match="max_pairs"):
        plan_profiling(g, max_pairs=0)


@given(seed=st.integers(0, 10_000), n=st.integers(2, 14))
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
def test_profiling_runs_expose_every_da_class(seed, n):
    g = random_dcg(seed, n)
    plan = plan_profiling(g, max_pairs=2)             # a tight cap still ends with every class
    exposed = set()
    for run in plan.runs:
        exposed |= g.copies(run)
    assert exposed == set(range(plan.n_classes))


#: DA-class bit sets for the maximal-set test: unions of these, within and across 64-bit words.
ATOMS = (1, 1 << 63, 1 << 64, (1 << 65) | (1 << 3), 1 << 100, 1 << 129)


@given(masks=st.lists(st.integers(0, 2 ** len(ATOMS) - 1), max_size=40), cap=st.integers(1, 50))
@settings(max_examples=80, deadline=None, derandomize=True)
def test_the_sweep_keeps_the_maximal_class_sets(masks, cap):
    # Against the definition: the first pair of each L that no other L strictly contains, in the
    # order of the pairs, the most classes first, at most ``cap`` (L past 64 classes included).
    sets = [sum(a for k, a in enumerate(ATOMS) if m >> k & 1) for m in masks]
    cands = [(b, np.array([i])) for i, b in enumerate(sets)]
    firsts = {}
    for bits, path in cands:
        firsts.setdefault(bits, path)
    maximal = [(b, p) for b, p in firsts.items() if not any(b | o == o != b for o in firsts)]
    expected = sorted(maximal, key=lambda bp: -bin(bp[0]).count("1"))[:cap]
    kept = _maximal(cands, cap)
    assert [b for b, _ in kept] == [b for b, _ in expected]
    assert all(p is q for (_, p), (_, q) in zip(kept, expected, strict=True))


# -- OPT: the assembly-line DP ------------------------------------------------------------------------
@given(seed=st.integers(0, 10_000), n=st.integers(1, 7))
@settings(max_examples=60, deadline=None, derandomize=True)
def test_dp_equals_brute_force_on_chains(seed, n):
    """On a chain every input comes from the previous station: the recurrence is exact (both modes,
    both ways of counting copies)."""
    g = random_dcg(seed, n, chain=True)
    best_edge, best_memory = brute(g, "edge"), brute(g, "memory")
    assert als_dp(g, "paper", copies="edge").latency_s == pytest.approx(best_edge)
    assert als_dp(g, "path", copies="edge").latency_s == pytest.approx(best_edge)
    assert als_dp(g, "path", copies="memory").latency_s == pytest.approx(best_memory)
    assert als_dp(g, "paper", copies="edge").estimate_s == pytest.approx(best_edge)


def test_incapable_nodes_are_line_gaps():
    """Fig. 6(c): stations 1 and 3 do not exist on line 1; arriving on line 1 at stations 2 and 4
    is always a switch, charged with the copy."""
    g = nx.DiGraph([("s1", "s2"), ("s2", "s3"), ("s3", "s4")])
    cap = {"s1": ["0"], "s2": ["0", "1"], "s3": ["0"], "s4": ["0", "1"]}
    node = {"s1": {"0": 1}, "s2": {"0": 5, "1": 1}, "s3": {"0": 1}, "s4": {"0": 5, "1": 1}}
    dcg = Dcg.from_graph(g, ["0", "1"], cap, node, copy_s={(1, "0", "1"): 1.0, (1, "1", "0"): 1.0})
    r = als_dp(dcg, copies="edge")
    assert list(r.assignment) == [0, 1, 0, 1]
    assert r.latency_s == pytest.approx(1 + 1 + 1 + 1 + 1 + 1 + 1)   # 4 ops + 3 switches
    # dearer copies: s2 goes back to line 0 (a round trip costs 6 > 4 saved); s4 stays on line 1
    # (one copy in, 3 + 1 < 5; the output leaves at no cost)
    dearer = Dcg.from_graph(g, ["0", "1"], cap, node, copy_s={(1, "0", "1"): 3.0, (1, "1", "0"): 3.0})
    assert list(als_dp(dearer, copies="edge").assignment) == [0, 0, 0, 1]
    assert als_dp(dearer, copies="edge").latency_s == pytest.approx(brute(dearer, "edge"))
    assert 1 not in dcg.cap[0] and 1 not in dcg.cap[2]


@given(seed=st.integers(0, 10_000), n=st.integers(2, 7))
@settings(max_examples=40, deadline=None, derandomize=True)
def test_on_dags_the_dps_are_feasible_and_the_milp_is_exact(seed, n):
    g = random_dcg(seed, n)
    best = brute(g, "memory")
    for mode in ("paper", "path"):
        assert als_dp(g, mode).latency_s >= best - 1e-9
    r = milp(g, "cp-sat", 10.0)
    assert r.optimal and r.latency_s == pytest.approx(best, abs=1e-6)
    assert milp(g, "highs", 10.0).latency_s == pytest.approx(best, abs=1e-6)
    e = milp(g, "highs", 10.0, copies="edge")
    assert e.latency_s == pytest.approx(brute(g, "edge"), abs=1e-6)


def test_the_paper_dp_can_miss_the_optimum_on_a_dag():
    """The recurrence charges every input of a station as if it came from the previous station's
    line (docs/papers/pim.md): B (on PIM) skips over C (CPU only) into D, so D on PIM is charged a copy of
    B's tensor that the schedule never makes (estimate 19, not 15), and the DP takes D to the CPU."""
    g = nx.DiGraph([("A", "B"), ("B", "C"), ("B", "D"), ("C", "D")])
    cap = {"A": ["cpu"], "B": ["cpu", "pim"], "C": ["cpu"], "D": ["cpu", "pim"]}
    node = {"A": {"cpu": 0}, "B": {"cpu": 10, "pim": 1}, "C": {"cpu": 1}, "D": {"cpu": 8.5, "pim": 1}}
    copy = {(1, "cpu", "pim"): 4.0, (1, "pim", "cpu"): 4.0}
    dcg = Dcg.from_graph(g, ["cpu", "pim"], cap, node, copy_s=copy)
    paper = als_dp(dcg, "paper")
    assert list(paper.assignment) == [0, 1, 0, 0] and paper.estimate_s == pytest.approx(18.5)
    optimum = milp(dcg, "cp-sat")
    assert list(optimum.assignment) == [0, 1, 0, 1] and optimum.latency_s == pytest.approx(15.0)
    assert paper.latency_s == pytest.approx(18.5)          # memory-counted: B's copy serves C and D
    path = als_dp(dcg, "path")                              # the true device of B on the path
    assert list(path.assignment) == [0, 1, 0, 1] and path.latency_s == pytest.approx(15.0)


def test_dp_modes_and_copies_are_checked():
    g = random_dcg(1, 4)
    with pytest.raises(HetsimError, match="mode='fast'"):
        als_dp(g, "fast")
    with pytest.raises(HetsimError, match="copies='tensor'"):
        als_dp(g, copies="tensor")
    with pytest.raises(HetsimError, match="solver='cbc'"):
        milp(g, "cbc")


# -- enumeration (Fig. 13) --------------------------------------------------------------------------
@pytest.mark.parametrize("copies", ["memory", "edge"])
def test_enumeration_scores_every_path_as_the_latency_does(copies):
    g = random_dcg(7, 8)
    e = enumerate_paths(g, copies=copies, chunk=37)          # several chunks
    assert e.n_paths == np.prod([len(c) for c in g.cap])
    for i in (0, 1, e.n_paths // 2, e.n_paths - 1):
        assert e.total_s[i] == pytest.approx(g.total(e.assignment(i), copies))
    assert e.total_s.min() == pytest.approx(brute(g, copies))


def test_enumeration_counts_before_it_enumerates():
    g = random_dcg(7, 8)
    with pytest.raises(HetsimError, match="execution paths; allowed: at most 10"):
        enumerate_paths(g, limit=10)


def test_a_window_pins_outside_inputs_on_the_host():
    g = random_dcg(11, 12)
    w = g.window(4, 5, host=0)
    outside = [n for n in w.ops if n.startswith("IN:")]
    assert w.n_ops == 5 + len(outside)
    assert all(w.cap[i] == (0,) for i in range(len(outside)))
    with pytest.raises(HetsimError, match="window"):
        g.window(10, 5)


# -- baselines -------------------------------------------------------------------------------------------
def test_priority_lists_and_duet():
    g = random_dcg(5, 10)
    a = priority_assignment(g, [2, 0])
    assert all(a[j] == (2 if 2 in g.cap[j] else 0) for j in range(g.n_ops))
    with pytest.raises(HetsimError, match="runs on none of"):
        priority_assignment(g, [1, 2])
    f = fastest(g)
    assert list(duet(g, 0.0)) == list(f)
    totals = [g.total(duet(g, x)) for x in (0.0, 0.25, 0.5, 1.0)]
    assert all(b <= a + 1e-12 for a, b in zip(totals, totals[1:], strict=False))   # corrections never hurt
    with pytest.raises(HetsimError, match="x=1.5"):
        duet(g, 1.5)


# -- explorers ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bert8():
    from hetsim_papers.pim.experiments import runs

    return runs.problem("bert-small", 8)


def test_the_schemes_are_registered_placement_explorers():
    for name in ("Priority", "DUET", "OPT", "OPT-path", "MILP"):
        assert get_algorithm(name).problem == "placement"


def test_opt_profiles_then_partitions_and_beats_every_baseline(bert8):
    opt = explore(bert8, make_explorer("OPT"), seed=0)
    assert opt.n_trials == 3 + 1 + 1                       # node runs, edge run, the DP's placement
    assert list(opt.trials["phase"])[:3] == ["profile node (CPU_S,CPU_P,PIM)", "profile node (CPU_P,CPU_S,PIM)",
                                             "profile node (PIM,CPU_S,CPU_P)"]
    prof = opt.info["profiling"]
    assert (prof["node_runs"], prof["edge_runs"], prof["da_classes"], prof["da_left_after_node_runs"]) == (3, 1, 20, 4)
    assert opt.clock_s > opt.best_value                     # the profiling runs cost tuning time
    for name, params in (("Priority", {"order": ["CPU_S"]}), ("Priority", {"order": ["CPU_P", "PIM", "CPU_S"]}),
                         ("Priority", {"order": ["PIM", "CPU_P", "CPU_S"]}), ("Priority", {}),
                         ("DUET", {"x": 0.0}), ("DUET", {})):
        other = explore(bert8, make_explorer(name, **params), seed=0)
        assert opt.best_value <= other.best_value + 1e-12, name
    exact = explore(bert8, make_explorer("MILP"), seed=0)
    assert exact.best_value <= opt.best_value + 1e-12


def test_explorer_parameters_are_checked(bert8):
    with pytest.raises(HetsimError, match="order=.*allowed: distinct EPs"):
        explore(bert8, make_explorer("Priority", order=("GPU", "CPU_S")), seed=0)
    with pytest.raises(HetsimError, match="x=2"):
        explore(bert8, make_explorer("DUET", x=2), seed=0)
    with pytest.raises(HetsimError, match="mode='exact'"):
        explore(bert8, make_explorer("OPT", mode="exact"), seed=0)


def test_the_schemes_run_on_any_placement_problem():
    """OPT on hikey970's two clusters with the roofline: a DCG over whatever EPs the problem has."""
    from hetsim.exploration import PlacementProblem

    problem = PlacementProblem("hikey970", "googlenet", eps=["B4", "s4"])
    r = explore(problem, make_explorer("OPT-path", profile=False), seed=0)
    big = explore(problem, make_explorer("Priority", order=("B4",)), seed=0)
    assert r.best_value <= big.best_value + 1e-12


def test_duet_passes_past_its_fixed_point_change_nothing_and_are_bounded():
    """A DUET pass is a function of the assignment: once one changes nothing the rest are skipped
    (passes=100000 ran for minutes), with the answer of running them all."""
    from hetsim_papers.pim.duet import duet

    for seed in range(4):
        g = random_dcg(seed, 12)
        p = 1
        while list(duet(g, 1.0, p)) != list(duet(g, 1.0, p + 1)):
            p += 1
        assert list(duet(g, 1.0, 1000)) == list(duet(g, 1.0, p))
    with pytest.raises(HetsimError, match=r"passes=1001; allowed: an integer in \[1, 1000\]"):
        duet(random_dcg(0, 4), 0.5, 1001)
