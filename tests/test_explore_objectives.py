"""Explore out of the box (issue 13): the derived EP space, capped depths, objectives other than
throughput, Pareto fronts, pymoo's NSGA-II on pipelines, capability, and the CLI around them."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from helpers import assert_one_line_error, chain_workload, two_cluster_platform

from hetsim.analytic import steady_energy_per_frame
from hetsim.cost import RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.evaluation import evaluate
from hetsim.exploration import (
    Configuration,
    MaxTrials,
    PipelineProblem,
    TargetThroughput,
    explore,
    make_explorer,
)
from hetsim.exploration.moo import decode, pareto_front
from hetsim.exploration.space import cap_depths, default_eps
from hetsim.platform import load_platform
from hetsim.tasks import stage_costs
from hetsim.workload import load_workload


@pytest.fixture(scope="module")
def toy():
    """Two clusters with a power model; 8 conv layers (fast to enumerate)."""
    return two_cluster_platform(), chain_workload([8, 16, 16, 32, 32, 16, 16, 8])


@pytest.fixture(scope="module")
def rk3588():
    return load_platform("rk3588")


# -- the default design space -----------------------------------------------------------------------
def test_default_eps_are_whole_places_fastest_first(rk3588):
    wl = load_workload("resnet50")
    cost = RooflineCostModel(rk3588)
    eps, note = default_eps(rk3588, wl, cost)
    assert sorted(eps) == ["big", "gpu", "little", "npu"]
    times = [cost.layer_times(wl, rk3588.ep(e)).sum() for e in eps]
    assert times == sorted(times)                               # fastest first
    assert eps[0] == "npu" and eps[-1] == "little"
    assert note.startswith("candidate EPs npu, gpu, big, little (each cluster whole and each accelerator")
    assert "--eps chooses others (e.g. core groups B2,s2)" in note
    hikey = load_platform("hikey970")
    assert default_eps(hikey, wl, RooflineCostModel(hikey))[0] == ["big", "little"]


def test_depths_above_the_eps_are_capped_with_a_note():
    assert cap_depths([2, 3], 4, 54) == ([2, 3], None)
    depths, note = cap_depths([2, 6, 8], 4, 54)
    assert depths == [2, 4] and "--depth 6, 8 is more than the 4 candidate EPs" in note
    assert "capped at 4" in note
    depths, note = cap_depths([5], 8, 3)                        # fewer layers than EPs
    assert depths == [3] and "3 layers" in note


@pytest.mark.parametrize("platform", ["hikey970", "jetson-tx2", "knl", "rk3588"])
def test_explore_with_defaults_works_on_platforms_with_clusters(hetsim, platform):
    p = hetsim("explore", "-p", platform, "-w", "resnet50", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["best_fps"] > 0 and out["best_mapping"]
    assert f"hetsim: note: {platform}: candidate EPs" in p.stderr


def test_depth_cap_in_the_cli(hetsim):
    p = hetsim("explore", "-p", "hikey970", "-w", "alexnet", "--depth", "5", "-a", "ES", "--json")
    assert p.returncode == 0, p.stderr
    assert "--depth 5 is more than the 2 candidate EPs (a stage owns its EP): capped at 2" in p.stderr
    assert json.loads(p.stdout)["best_mapping"].count("|") == 1


# -- objectives -------------------------------------------------------------------------------------
def _all_two_stage(problem):
    M = problem.num_layers
    for k in range(1, M):
        for eps in itertools.permutations(problem.eps, 2):
            yield Configuration((k, M - k), eps)


def test_latency_objective_finds_the_smallest_sum_of_stage_times(toy):
    platform, wl = toy
    problem = PipelineProblem(platform, wl, depths=[2], objective="latency")
    assert (problem.objective, problem.maximize, problem.objective_column) == ("latency", False, "latency_s")
    cost = problem.cost
    brute = min(sum(np.add(*stage_costs(problem.pipeline(c), wl, cost))) for c in _all_two_stage(problem))
    res = explore(problem, make_explorer("ES"), seed=0)
    assert res.best_value == pytest.approx(brute, rel=1e-12)
    assert "best_latency_s_so_far" in res.trials.columns
    assert res.trials["best_latency_s_so_far"].is_monotonic_decreasing
    assert res.summary()["best_latency_s"] == res.best_value
    # HC and SA minimise it too: never worse than their start.
    for name in ("HC", "SA"):
        r = explore(problem, make_explorer(name), seed=1)
        assert r.best_value <= r.trials["latency_s"].iloc[0] and r.best_value >= brute


def test_energy_per_frame_is_the_steady_state_increment(toy):
    """E(k+1 frames) - E(k frames) of the closed-form schedule is the energy of every further
    frame: the next increments are the same."""
    from hetsim.mapping import load_mapping

    platform, wl = toy
    cost = RooflineCostModel(platform)
    for text in ("B4:1-3|s4:4-8", "B2:1-2|s4:3-5|B2:6-8", "s2:1-4|s2:5-8"):
        pipe = load_mapping(text, platform, wl, cost)
        e = steady_energy_per_frame(platform, wl, pipe, cost)
        k = len(pipe.stages)
        energies = [evaluate(platform, wl, pipe, cost=cost, engine="analytic", frames=f).energy_J for f in (k, k + 1, k + 2, k + 5)]
        assert e == pytest.approx(energies[1] - energies[0], rel=1e-12)
        assert energies[2] - energies[1] == pytest.approx(e, rel=1e-9)
        assert (energies[3] - energies[0]) / 5 == pytest.approx(e, rel=1e-9)
    problem = PipelineProblem(platform, wl, cost, depths=[2], objective="energy")
    config = Configuration((3, 5), ("big", "little"))
    assert problem.measure(config).energy_J == pytest.approx(
        steady_energy_per_frame(platform, wl, problem.pipeline(config), cost), rel=1e-12)
    res = explore(problem, make_explorer("ES"), seed=0)
    assert res.best_value == min(res.trials["energy_J"])


def test_memory_objective_is_the_sum_of_stage_peaks(toy):
    platform, wl = toy
    problem = PipelineProblem(platform, wl, depths=[2], objective="memory")
    config = Configuration((3, 5), ("big", "little"))
    m = evaluate(platform, wl, problem.pipeline(config), engine="analytic", buffer_frames=1)
    assert problem.measure(config).memory_bytes == sum(s.peak_memory_bytes for s in m.stages)


def test_energy_needs_a_power_model():
    with pytest.raises(HetsimError, match="has no power model"):
        PipelineProblem(two_cluster_platform(power=False), chain_workload([8, 8]), objective="energy")
    with pytest.raises(HetsimError, match="objective='speed' is not allowed; allowed: 'throughput'"):
        PipelineProblem(two_cluster_platform(), chain_workload([8, 8]), objective="speed")


def test_throughput_algorithms_refuse_other_objectives(toy):
    """An explorer that declares the objectives it optimises (Shisha and Pipe-search: throughput)
    refuses a problem of another, naming the algorithms that fit."""
    from hetsim.exploration import Explorer
    from hetsim.exploration.baselines import HillClimbing

    class Balancer(Explorer):
        supported_objectives = ("throughput",)

        def run(self, session):
            return HillClimbing().run(session)

    platform, wl = toy
    problem = PipelineProblem(platform, wl, depths=[2], objective="latency")
    with pytest.raises(HetsimError, match="Balancer optimises throughput only, not latency; for --objective "
                                          "latency use ES, RW, HC, SA, NSGA-II-pipe"):
        explore(problem, Balancer())
    assert explore(PipelineProblem(platform, wl, depths=[2]), Balancer(), seed=0).best_fps > 0


def test_target_throughput_stops_a_latency_search(toy):
    platform, wl = toy
    problem = PipelineProblem(platform, wl, depths=[2], objective="latency")
    target = max(problem.measure(c).throughput_fps for c in _all_two_stage(problem))
    res = explore(problem, make_explorer("RW"), TargetThroughput(target), seed=0)
    assert res.stop_reason == "target_throughput" and res.n_trials > 1
    assert res.trials["throughput_fps"].iloc[-1] == target > res.trials["throughput_fps"].iloc[:-1].max()


# -- Pareto fronts and NSGA-II ------------------------------------------------------------------------
def test_pareto_front_is_exactly_the_non_dominated_trials(toy, rk3588):
    wl = toy[1]
    problem = PipelineProblem(rk3588, wl, depths=[2, 3], track=["energy"])
    res = explore(problem, make_explorer("ES"), seed=0)
    front = pareto_front(res)
    trials = res.trials.drop_duplicates("mapping")
    pts = trials[["throughput_fps", "energy_J"]].to_numpy()

    def dominated(tp, e):
        return bool(np.any((pts[:, 0] >= tp) & (pts[:, 1] <= e) & ((pts[:, 0] > tp) | (pts[:, 1] < e))))

    on_front = set(front["mapping"])
    assert on_front and len(on_front) < len(trials)
    for row in trials.itertuples():
        assert dominated(row.throughput_fps, row.energy_J) == (row.mapping not in on_front)
    assert list(front["throughput_fps"]) == sorted(front["throughput_fps"], reverse=True)
    assert list(front["energy_J"]) == sorted(front["energy_J"], reverse=True)   # a trade-off


def test_nsga2_is_seeded_and_stays_in_the_space(toy, rk3588):
    wl = toy[1]
    problem = PipelineProblem(rk3588, wl, depths=[2, 3], track=["energy"])
    algo = make_explorer("NSGA-II-pipe", pop_size=12, n_gen=6)
    a, b = explore(problem, algo, seed=3), explore(problem, algo, seed=3)
    assert a.trials["mapping"].tolist() == b.trials["mapping"].tolist()
    assert a.n_measured > 12
    front = a.info["front"]
    assert front and all(problem.contains(c) for c in front)
    state = np.random.get_state()[1].copy()
    explore(problem, algo, seed=4)
    assert (np.random.get_state()[1] == state).all()            # numpy's global generator untouched
    r = explore(problem, algo, MaxTrials(20), seed=0)
    assert r.n_trials == 20 and r.stop_reason == "max_trials"
    # ES's front dominates or equals NSGA-II's everywhere (ES saw every configuration).
    es = pareto_front(explore(problem, make_explorer("ES"), seed=0))
    for row in pareto_front(a).itertuples():
        assert ((es["throughput_fps"] >= row.throughput_fps) & (es["energy_J"] <= row.energy_J)).any()


def test_decode_gives_valid_configurations_for_any_genes(toy):
    platform, wl = toy
    problem = PipelineProblem(platform, wl, eps=["big", "little"], depths=[1, 2])
    rng = np.random.default_rng(0)
    for x in itertools.chain(rng.random((200, 4)), [np.zeros(4), np.full(4, 1 - 1e-12)]):
        assert problem.contains(decode(problem, x))


def test_nsga2_parameter_errors(toy):
    platform, wl = toy
    problem = PipelineProblem(platform, wl, depths=[2])
    with pytest.raises(HetsimError, match="objective 'energy' is not measured by the problem"):
        explore(problem, make_explorer("NSGA-II-pipe", objectives=["throughput", "energy"]))
    with pytest.raises(HetsimError, match="pop_size=1 is out of range"):
        explore(problem, make_explorer("NSGA-II-pipe", pop_size=1))


# -- capability ---------------------------------------------------------------------------------------
def test_a_stage_that_cannot_run_its_layers_is_infeasible(rk3588):
    wl = load_workload("googlenet")                     # LRN in its first layers; rk3588's NPU lacks it
    problem = PipelineProblem(rk3588, wl, eps=["npu", "gpu"], depths=[2])
    bad = Configuration((3, wl.num_layers - 3), ("npu", "gpu"))
    good = Configuration((3, wl.num_layers - 3), ("gpu", "npu"))
    assert not problem.capable(bad) and problem.capable(good)
    r = problem.measure(bad)
    assert r.throughput_fps == 0.0 and r.cost_s == 0.0 and math.isinf(r.latency_s)
    assert problem.measure(good).throughput_fps > 0
    es = explore(problem, make_explorer("ES"), seed=0)
    assert problem.capable(es.best)
    # The vectorised ES agrees with measuring every configuration one by one.
    t = es.trials.set_index("mapping")["throughput_fps"]
    for c in [bad, good, Configuration((30, wl.num_layers - 30), ("npu", "gpu"))]:
        assert t[str(c)] == pytest.approx(problem.measure(c).throughput_fps, rel=1e-12)


# -- the command line -------------------------------------------------------------------------------
def test_explore_pareto_objective_engine_and_plot(hetsim, tmp_path):
    png = tmp_path / "front.png"
    p = hetsim("explore", "-p", "hikey970", "-w", "alexnet", "--pareto", "throughput,energy",
               "--param", "pop_size=8", "--param", "n_gen=3", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    assert "NSGA-II-pipe on alexnet / hikey970" in p.stdout and "Pareto front (" in p.stdout
    assert png.read_bytes()[:4] == b"\x89PNG"
    p = hetsim("explore", "-p", "hikey970", "-w", "alexnet", "-a", "ES", "--pareto", "latency,memory",
               "--json")
    out = json.loads(p.stdout)
    assert out["best_latency_s"] > 0 and out["pareto_front"]
    assert set(out["pareto_front"][0]) >= {"mapping", "latency_s", "memory_bytes"}
    p = hetsim("explore", "-p", "hikey970", "-w", "alexnet", "-a", "SA", "--engine", "des", "--frames", "5",
               "--objective", "latency", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["best_latency_s"] > 0


BAD = [
    (["--eps", "B4,B2"], "--eps B4,B2: both are cores of big"),
    (["--eps", "X9"], "--eps 'X9': no such EP on hikey970; allowed: big, B1..B4, little, s1..s4"),
    (["-a", "HC", "--param", "nope=1"], "--param nope: HC has no parameter 'nope'; its parameters "
                                        "(with defaults): patience=10"),
    (["-a", "HC", "--param", "patience=0"], "--algorithm HC / --param: HillClimbing: patience=0 is out of range"),
    (["-a", "RW"], "give a stopping rule (command line: --max-trials N"),
    (["--pareto", "throughput"], "--pareto 'throughput': give two different objectives"),
    (["--pareto", "throughput,energy", "--objective", "latency"], "--objective latency is not one of --pareto"),
    (["--max-trials", "0"], "'--max-trials': 0 is not in the range x>=1"),
    (["--objective", "speed"], "'--objective': 'speed' is not one of"),
    (["--cores", "4", "--eps", "big"], "--cores and --eps both choose"),
    (["--fallback", "roofline"], "--fallback applies to a measured table: give --cost-table FILE too"),
    (["-a", "HEFTX"], "--algorithm: unknown algorithm 'HEFTX'; allowed: ES, RW, HC, SA, NSGA-II-pipe"),
]


@pytest.mark.parametrize("extra,fragment", BAD, ids=[f[:30] for _, f in BAD])
def test_explore_errors_name_the_flag(hetsim, extra, fragment):
    assert_one_line_error(hetsim("explore", "-p", "hikey970", "-w", "alexnet", *extra), fragment)


def test_energy_on_a_platform_without_power_names_the_flag(hetsim):
    assert_one_line_error(hetsim("explore", "-p", "jetson-tx2", "-w", "alexnet", "--objective", "energy"),
                          "--objective/--pareto energy: jetson-tx2 has no power model")


def test_the_default_algorithm_fits_the_request(hetsim):
    p = hetsim("explore", "-p", "hikey970", "-w", "alexnet", "--objective", "latency", "--param", "n_gen=2",
               "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["algorithm"] == "NSGA-II-pipe" and "--objective latency: searching with" in p.stderr
    # Throughput: the papers' algorithms where installed (Shisha, PS over --cores), else hetsim's HC.
    from hetsim.exploration import algorithms

    installed = {a.name for a in algorithms("pipeline")}
    p = hetsim("explore", "-p", "jetson-tx2", "-w", "vgg16", "--cores", "4", "--json")
    if "PS" in installed:
        assert json.loads(p.stdout)["algorithm"] == "Pipe-search" and "--cores: searching with PS" in p.stderr
    else:
        assert json.loads(p.stdout)["algorithm"] == "HC" and "--cores: searching with HC" in p.stderr
    p = hetsim("explore", "-p", "rk3588", "-w", "alexnet", "--json")
    assert json.loads(p.stdout)["algorithm"] == ("Shisha" if "Shisha" in installed else "HC")
