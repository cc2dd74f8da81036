#!/usr/bin/env python
"""hetsim's performance figures, measured side by side in one run.

    python benchmarks/run.py [--json] [--repeat N]

(a) analytic: candidates scored per second by the vectorised scorer on ResNet50 (54 layers) x all
    4-stage splits x the 24 EP orders of chiplet-c2 (goal >= 1,000,000/s on one core), and per CPU
    second in a depth sweep (every split into k = 3..6 stages on one EP order each);
(b) DES: wall time of 10,000 frames through a 4-stage pipeline divided by that of a bare SimPy
    pipeline of the same shape (goal <= 2 with contention off, <= 4 with it on, per-stage or per-op
    flows), on the shipped DRAM and on a contended one, with the per-op run's work per stage
    execution (events, segment steps). `--only b` runs (b) alone;
(c) explorers: wall time of Shisha (H3) and of exhaustive search on ResNet50 / chiplet-c2, 4 stages;
(d) reproductions: wall time of `hetsim reproduce shisha --quick`, of the full Shisha reproduction,
    and of the full Paper I + Paper II reproduction (goal: under 5 minutes on 2 cores).
    `--no-reproduce` skips (d).
(e) max-plus recurrence: wall time of 100,000 frames through the 4-stage pipeline of (b) by
    `run_pipeline_recurrence` (without and with seeded noise) against the bare SimPy pipeline
    (goal: >= 20x faster), and its largest relative deviation from hetsim's DES on that run.
(f) sweeps: cells per second of a 1,000-cell analytic sweep (ResNet50 on hikey970: 10 mappings x
    10 DRAM bandwidths x 10 little-core clocks) on the local process pool (every core) against a
    plain sequential loop over the same cells in one process (goal >= 1.7x on 2 cores), and on a
    Dask LocalCluster (as many single-threaded workers as cores), in batches and one task per cell:
    the overhead per cell over the ideal parallel time. `--only f` runs (f) alone.
(g) HOPE: the schedulers' wall time on NASNet-Large (871 ops here, 1,049 in the paper) on HOPE's HE,
    CPU + GPU: HOPE:GS (goal < 1 s, the paper's "less than one second"), HOPE:LP (goal < 10 s, "several
    seconds"), StarPU-DMDAR; and the DES replaying HOPE:LP's plan (ops simulated per second, one
    inference, with and without memory contention). `--only g` runs (g) alone.
(h) PIM partitioning (seed 003): the ALS DP (OPT) on GPT-2 at p = 64 (1,963 ops, 2,622 DCG nodes)
    in milliseconds, the path-aware DP and the exact MILP (CP-SAT) on the same graph; Algorithm 1's
    profiling plan (node runs and edge-profiling sweep) on the three models at p = 16; Fig. 13's
    exhaustive enumeration of a 15-op window (paths/s). `--only h` runs (h) alone.
(i) seed 004's analytical model: evaluations per second of a population of 1000 AlexNet genomes
    (advanced p = 2 and naive, 8 CPUs), and the wall time of a whole NSGA-II run of the thesis's
    size, population 1000 x 100 generations, Advanced-2 on AlexNet (goal: under 60 s on one core),
    and the CPU seconds of single full-scale runs of `hetsim reproduce nsga2` (AlexNet, VGG-16 and
    DenseNet-121 Advanced-2, DenseNet-121 Naive: its costliest run; search and deployment);
(j) seed 004's "real" cluster: DES evaluations per second of a hybrid AlexNet mapping (conv1 and the
    FC layers split over 2 CPUs), one inference, contention on, MPI transfers. `--only i` runs (i)
    and (j); (i) against pymoo's NSGA-II alone on a free fitness, in the same run.
(k) scale, CPU time: the DAG DES (task-graph build and one frame) of a synthetic DAG of 2,500 to
    20,000 ops against a heapq event loop over the same graph (goal: 10,000 ops in < 0.5 s), and its
    growth exponent in ops; a stream of frames through the 10,000-op graph (op executions per CPU
    second, goal >= 1e5) and the memory a frame adds; a 100,000-op graph, one frame; the growth
    exponent of the pipeline DES (b's pipeline, contention on) in frames. `--only k` runs (k);
    `--only a,b,k,i` several figures in one process (issue 32's).
(l) tournament at full size, CPU time: every cell of `hetsim reproduce tournament`'s spec (1,000 trials,
    stage trials with 2 % noise) on chiplet-c5 x ResNet50 and hikey970 x AlexNet at seed 0, in one
    process with fresh caches, per kind (pipeline, placement) and the slowest cells (issue 30: the
    full `reproduce --all` within 15 minutes on two cores). `--only l` runs (l) alone.
(m) HOPE's ablations, CPU time: the 24 variants of `hope:ablations` on HE x IN-V3 (phone calibrated,
    tables built outside the timing) scheduled in one process, HOPE:LP's ILPs met again answered
    from the process's solutions (hetsim_papers/hope/milp.py) against every ILP solved (the solutions
    cleared before each variant): processor seconds of each, their ratio, the ILPs solved, and
    whether every variant's latency is the same. `--only m` runs (m) alone.

Medians over --repeat runs; the machines are shared and noisy, so quote ratios from one run.
"""

from __future__ import annotations

import os

# One core for the numpy part: the goal is per core.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import simpy  # noqa: E402

from hetsim.analytic import SplitScorer  # noqa: E402
from hetsim.cost import RooflineCostModel  # noqa: E402
from hetsim.mapping import load_mapping  # noqa: E402
from hetsim.options import RunOptions  # noqa: E402
from hetsim.platform import load_platform  # noqa: E402
from hetsim.sim.pipeline import simulate_pipeline  # noqa: E402
from hetsim.sim.recurrence import run_pipeline_recurrence  # noqa: E402
from hetsim.tasks import stage_costs, stage_demands  # noqa: E402
from hetsim.workload import load_workload  # noqa: E402


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_analytic(repeat: int) -> dict:
    platform = load_platform("chiplet-c2")
    workload = load_workload("resnet50")
    cost = RooflineCostModel(platform)
    eps = [platform.ep(c.name) for c in platform.clusters]
    scorer = SplitScorer(platform, workload, cost, eps)   # layer-time matrix built once, outside
    n = scorer.count(4)
    t = _median_time(lambda: scorer.score(4), repeat)
    out = {"candidates": n, "median_s": t, "candidates_per_s": n / t, "goal_per_s": 1_000_000}
    # A depth sweep: every split of ResNet50 into k = 3..6 stages on one EP order each (what a
    # sweep over depths asks of the scorer: the splits are enumerated anew for every depth), CPU time.
    hikey = load_platform("hikey970")
    deep = SplitScorer(hikey, workload, RooflineCostModel(hikey), hikey.eps())
    depths = {}
    for k in (3, 4, 5, 6):
        order = [tuple(range(k))]
        depths[k] = (deep.count(k, order), _median_cpu(lambda k=k, order=order: deep.score(k, order), repeat))
    total = sum(c for c, _ in depths.values())
    cpu = sum(t for _, t in depths.values())
    out.update({"depth_sweep_candidates": total, "depth_sweep_cpu_s": cpu,
                "depth_sweep_candidates_per_cpu_s": total / cpu,
                "depth_sweep_per_k": {k: c / t for k, (c, t) in depths.items()}})
    return out


def _median_cpu(fn, repeat: int) -> float:
    """Median CPU time (this process) of ``fn`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def print_analytic(a: dict) -> None:
    per_k = ", ".join(f"k={k} {v:,.0f}/s" for k, v in a["depth_sweep_per_k"].items())
    print(f"(a) analytic: {a['candidates']:,} candidates in {a['median_s'] * 1e3:.1f} ms "
          f"= {a['candidates_per_s']:,.0f}/s (goal >= {a['goal_per_s']:,}/s); depth sweep k = 3..6, one EP "
          f"order each: {a['depth_sweep_candidates']:,} candidates, {a['depth_sweep_candidates_per_cpu_s']:,.0f} "
          f"per CPU s ({per_k})")


def bare_simpy_pipeline(stage_times: list[float], frames: int) -> None:
    """The same shape with nothing but SimPy: saturated source, bounded stores, one timeout each."""
    env = simpy.Environment()
    k = len(stage_times)
    queues = [simpy.Store(env, capacity=1) for _ in range(k)]

    def source():
        for f in range(frames):
            yield queues[0].put(f)

    def stage(i):
        for _ in range(frames):
            f = yield queues[i].get()
            yield env.timeout(stage_times[i])
            if i + 1 < k:
                yield queues[i + 1].put(f)

    env.process(source())
    for i in range(k):
        env.process(stage(i))
    env.run()


def print_des(d: dict) -> None:
    print(f"(b) DES {d['frames']:,} frames, {d['mapping']}: bare SimPy {d['bare_simpy_s']:.3f} s, "
          f"hetsim {d['hetsim_no_contention_s']:.3f} s without contention "
          f"(x{d['ratio_no_contention']:.2f}, goal <= 2)")
    for suffix, what in (("", "shipped DRAM"), ("_contended", "contended DRAM")):
        w = d[f"per_op_work{suffix}"]
        print(f"    {what} {d[f'dram_GBps{suffix}']:g} GB/s: per-stage flows "
              f"{d[f'hetsim_contention_s{suffix}']:.3f} s (x{d[f'ratio_contention{suffix}']:.2f}), "
              f"per-op flows {d[f'hetsim_contention_per_op_s{suffix}']:.3f} s "
              f"(x{d[f'ratio_contention_per_op{suffix}']:.2f}, goal <= 4): {w['path']}; per stage execution "
              f"{w['boundaries']:.2f} segment boundaries, {w['rate_changes']:.2f} rate recomputations "
              f"({w['throttled_steps']:.2f} throttled) ({w['segments']:.1f} segments)")


def _opts(pipe, **fields) -> RunOptions:
    return RunOptions.make(**fields).resolve(pipe)


def bench_des(repeat: int, frames: int = 10_000) -> dict:
    """(b): four stages on one shared DRAM, so that with contention on every stage execution is a
    flow on the same bandwidth server (the hardest case for the contention model).

    Two DRAMs: hikey970's own (29.9 GB/s), where the stages' per-op flows are almost never
    throttled, and a contended what-if chosen from the stages' peak op rates (each stage's largest
    per-op rate, bytes / uncontended time, here 12, 12, 6 and 6 GB/s): the DRAM at the largest of
    them, so that no op is slowed by the memory alone but any two memory-bound ops of the big
    stages that overlap saturate it (their peaks sum to 36 GB/s). For each: per-stage and per-op
    flows against the bare SimPy pipeline, and the work per stage execution of the per-op run
    (the path that answered, segment boundaries, rate recomputations). The variants run
    round-robin, one of each per round, so that a load change on the shared machine hits them
    alike; medians over the rounds."""
    platform = load_platform("hikey970")
    workload = load_workload("resnet50")
    cost = RooflineCostModel(platform)
    mapping = "B2:1-13|B2:14-30|s2:31-44|s2:45-54"
    pipe = load_mapping(mapping, platform, workload, cost)
    compute, transfer = stage_costs(pipe, workload, cost)
    times = [c + x for c, x in zip(compute, transfer, strict=True)]
    peak_GBps = _peak_op_rates_GBps(platform, workload, pipe, cost)
    cases = {"": platform.memory("dram").bandwidth_GBps, "_contended": max(peak_GBps)}
    runs = {"bare": lambda: bare_simpy_pipeline(times, frames),
            # fast=False: the SimPy engine itself, not the recurrence of contention-free runs
            "off": lambda: simulate_pipeline(platform, workload, pipe, cost, _opts(
                pipe, frames=frames, contention=False, fast=False))}
    setups = {}
    for suffix, dram_GBps in cases.items():
        p = load_platform("hikey970", overrides=[f"memories.dram.bandwidth_GBps={dram_GBps}"])
        c = RooflineCostModel(p)
        q = load_mapping(mapping, p, workload, c)
        setups[suffix] = (p, c, q)
        for flows in ("stage", "op"):
            runs[f"{flows}{suffix}"] = lambda p=p, c=c, q=q, flows=flows: simulate_pipeline(
                p, workload, q, c, _opts(q, frames=frames, contention=True, flows=flows))
    t = _median_times(runs, repeat)
    bare = t["bare"]
    out: dict = {"frames": frames, "mapping": str(pipe), "bare_simpy_s": bare,
                 "hetsim_no_contention_s": t["off"], "ratio_no_contention": t["off"] / bare,
                 "goal_ratio_no_contention": 2.0, "goal_ratio_contention": 4.0,
                 "stage_peak_op_rates_GBps": peak_GBps}
    for suffix, dram_GBps in cases.items():
        out[f"dram_GBps{suffix}"] = dram_GBps
        out[f"hetsim_contention_s{suffix}"] = t[f"stage{suffix}"]
        out[f"hetsim_contention_per_op_s{suffix}"] = t[f"op{suffix}"]
        out[f"ratio_contention{suffix}"] = t[f"stage{suffix}"] / bare
        out[f"ratio_contention_per_op{suffix}"] = t[f"op{suffix}"] / bare
        p, c, q = setups[suffix]
        out[f"per_op_work{suffix}"] = _per_op_work(p, workload, q, c, min(frames, 2000))
    return out


def _median_times(fns: dict, repeat: int) -> dict:
    """Median wall time of each function, the functions run round-robin ``repeat`` times."""
    times: dict = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def _peak_op_rates_GBps(platform, workload, pipe, cost) -> list[float]:
    """Each stage's largest per-op memory rate (bytes / uncontended time of its roofline part)."""
    from hetsim.sim.bandwidth import FlowProfile

    demands = stage_demands(pipe, workload, cost, per_op=True)
    return [max(FlowProfile.from_demands(parts).caps_Bps) / 1e9 for parts in demands]


def _per_op_work(platform, workload, pipe, cost, frames: int) -> dict:
    """Work per stage execution of a per-op run: the path that answered (the max-plus recurrence
    where contention cannot bind, else the pipeline's event loop), and in the loop the segment
    boundaries crossed, the events that recomputed every rate (the rest updated in place) and
    those with someone throttled; the segments of a stage execution."""
    from hetsim.sim import bandwidth
    from hetsim.sim.bandwidth import FlowProfile
    from hetsim.sim.pipeline import run_pipeline

    solvers: list = []
    made = bandwidth.ProfileSolver.__init__

    def keep(self, server):
        made(self, server)
        solvers.append(self)

    bandwidth.ProfileSolver.__init__ = keep    # type: ignore[method-assign]
    try:
        run_pipeline(platform, workload, pipe, cost, _opts(pipe, frames=frames, flows="op"))
    finally:
        bandwidth.ProfileSolver.__init__ = made    # type: ignore[method-assign]
    runs = frames * len(pipe.stages)
    segments = [FlowProfile.from_demands(parts).segments for parts in stage_demands(pipe, workload, cost, per_op=True)]
    return {"frames": frames, "path": "event loop" if solvers else "max-plus recurrence",
            "boundaries": sum(x.boundaries for x in solvers) / runs,
            "rate_changes": sum(x.rate_changes for x in solvers) / runs,
            "throttled_steps": sum(x.throttled_steps for x in solvers) / runs,
            "segments": sum(segments) / len(segments)}


def bench_recurrence(repeat: int, frames: int = 100_000, noise_sigma: float = 0.1) -> dict:
    # The pipeline of (b), contention off: the cells the recurrence replaces the DES for.
    platform = load_platform("hikey970")
    workload = load_workload("resnet50")
    cost = RooflineCostModel(platform)
    pipe = load_mapping("B2:1-13|B2:14-30|s2:31-44|s2:45-54", platform, workload, cost)
    compute, transfer = stage_costs(pipe, workload, cost)
    times = [c + x for c, x in zip(compute, transfer, strict=True)]
    bare = _median_time(lambda: bare_simpy_pipeline(times, frames), repeat)
    plain = _median_time(lambda: run_pipeline_recurrence(compute, transfer, frames), repeat)
    noisy = _median_time(lambda: run_pipeline_recurrence(compute, transfer, frames,
                                                         noise_sigma=noise_sigma, seed=1), repeat)
    # Same numbers as the DES? One SimPy run of the noisy case, every array compared.
    _, des = simulate_pipeline(platform, workload, pipe, cost, _opts(
        pipe, frames=frames, contention=False, fast=False, noise_sigma=noise_sigma, seed=1))
    rec = run_pipeline_recurrence(compute, transfer, frames, noise_sigma=noise_sigma, seed=1)
    deviation = max(float(np.max(np.abs(getattr(rec, a) - getattr(des, a))
                                 / np.maximum(np.abs(getattr(des, a)), np.finfo(float).tiny)))
                    for a in ("start", "compute_end", "end", "arrival"))
    return {"frames": frames, "mapping": str(pipe), "bare_simpy_s": bare, "recurrence_s": plain,
            "recurrence_noise_s": noisy, "noise_sigma": noise_sigma, "speedup": bare / plain,
            "speedup_noise": bare / noisy, "max_rel_deviation_vs_des": deviation, "goal_speedup": 20.0}


def bench_explorers(repeat: int) -> dict:
    from hetsim.exploration import PipelineProblem, explore, make_explorer

    platform = load_platform("chiplet-c2")
    workload = load_workload("resnet50-shisha")
    out = {}
    for name in ("Shisha", "ES"):
        problem = PipelineProblem(platform, workload, depths=[4])
        result = {}

        def run(name=name, problem=problem, result=result):
            result["x"] = explore(problem, make_explorer(name), seed=0)

        t = _median_time(run, 1 if name == "ES" else repeat)
        x = result["x"]
        out[name] = {"median_s": t, "trials": x.n_trials, "best_fps": x.best_fps}
    out["ratio_es_over_shisha"] = out["ES"]["median_s"] / out["Shisha"]["median_s"]
    return out


def bench_reproduce() -> dict:
    """Each reproduction in a fresh process, as a user runs it."""
    import subprocess
    import tempfile

    def timed(*args: str) -> float:
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "hetsim", "reproduce", *args, "--out", out],
                           check=True, capture_output=True)
            return time.perf_counter() - t0

    return {"shisha_quick_s": timed("shisha", "--quick"), "shisha_full_s": timed("shisha"),
            "pipesearch_and_shisha_full_s": timed("pipesearch", "shisha"), "goal_full_s": 300.0}


def _nsga2_setup(chromosome: str):
    from hetsim_papers.nsga2.experiments.runs import coefficients
    from hetsim_papers.nsga2.explorers import HybridSpace, ThesisModel, make_chromosome

    space = HybridSpace(load_platform("xavier-nx-x8"), load_workload("alexnet-onnx"), "cpu")
    model = ThesisModel(space, coefficients("alexnet-onnx", "cpu", True))
    return space, model, make_chromosome(chromosome, space, p=2)


def bench_nsga2(repeat: int) -> dict:
    from hetsim_papers.nsga2.explorers import run_nsga2

    out: dict = {}
    rng = np.random.default_rng(0)
    for name in ("advanced", "naive"):
        _, model, chrom = _nsga2_setup(name)
        X = chrom.repair(rng.integers(chrom.xl, chrom.xu + 1, size=(1000, chrom.n_var)))
        t = _median_time(lambda chrom=chrom, X=X, model=model: model.evaluate(chrom.decode(X)), repeat)
        out[f"{name}_evaluations_per_s"] = 1000 / t
    _, model, chrom = _nsga2_setup("advanced")
    t0, c0 = time.perf_counter(), time.process_time()
    result = run_nsga2(chrom, model, pop_size=1000, n_gen=100, seed=0)
    out.update({"full_run_s": time.perf_counter() - t0, "full_run_cpu_s": time.process_time() - c0,
                "full_run_evaluations": result.evaluations, "goal_full_run_s": 60.0})
    # The same run with pymoo's default duplicate elimination and tournament, no fitness cache
    # (the same result, tested): what the extension points save.
    c0 = time.process_time()
    run_nsga2(chrom, model, pop_size=1000, n_gen=100, seed=0, plain=True)
    out["full_run_plain_cpu_s"] = time.process_time() - c0
    # The anchor: pymoo alone, the same NSGA-II (operators, repair, population, generations) over
    # the same genes with a fitness that costs nothing (the sum of the genes, three times).
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.problem import Problem
    from pymoo.optimize import minimize

    from hetsim_papers.nsga2.search import ChromosomeRepair, operators

    class Free(Problem):
        def __init__(self):
            super().__init__(n_var=chrom.n_var, n_obj=3, xl=chrom.xl.astype(float), xu=chrom.xu.astype(float),
                             vtype=int)

        def _evaluate(self, X, out, *args, **kwargs):
            total = X.sum(axis=1)
            out["F"] = np.column_stack([total, -total, total % 7])

    t0 = time.perf_counter()
    minimize(Free(), NSGA2(pop_size=1000, repair=ChromosomeRepair(chrom), eliminate_duplicates=True,
                           **operators("pymoo-0.5")), ("n_gen", 101), seed=0, verbose=False)
    out["pymoo_alone_s"] = time.perf_counter() - t0
    out["ratio_to_pymoo_alone"] = out["full_run_s"] / out["pymoo_alone_s"]
    out["reproduction_runs_cpu_s"] = bench_nsga2_reproduction_runs()
    return out


#: Runs of `hetsim reproduce nsga2` (full scale): (network, device view, chromosome, p); DenseNet-121's
#: naive chromosome (1,515 genes over 668 layers) is its costliest run.
NSGA2_REPRODUCTION_RUNS = (("alexnet-onnx", "cpu", "advanced", 2), ("vgg16-onnx", "cpu", "advanced", 2),
                           ("densenet121-onnx", "cpu", "advanced", 2), ("densenet121-onnx", "cpu", "naive", 0))


def bench_nsga2_reproduction_runs() -> dict:
    """CPU seconds of single full-scale runs of the nsga2 reproduction, as its workers run them
    (pymoo's NSGA-II, population 1000 x 100 generations, with the deployment of the Pareto
    extremes on the DES), the tuning of the analytical model left out (done once per network)."""
    from hetsim_papers.nsga2.experiments import runs

    out = {}
    for network, view, chromosome, p in NSGA2_REPRODUCTION_RUNS:
        runs.coefficients(network, view, False)
        runs.hv_reference(network, False)
        c0 = time.process_time()
        runs._search((network, view, chromosome, p, False, 0))
        out[f"{network} {view} {runs.run_label(chromosome, p)}"] = time.process_time() - c0
    return out


def bench_hybrid_des(repeat: int) -> dict:
    from hetsim.mapping import hybrid_placement
    from hetsim.sim.dag import run_dag
    from hetsim.tasks import build_tasks
    from hetsim_papers.nsga2.cost import NcnnCostModel

    platform = load_platform("xavier-nx-x8")
    workload = load_workload("alexnet-onnx")
    devices = {op.name: ["nx01-cpu"] for op in workload.ops}
    for name in ("conv1_1", "fc6_1", "fc7_1", "fc8_1"):
        devices[name] = ["nx01-cpu", "nx02-cpu"]
    placement = hybrid_placement(platform, workload, devices)
    cost = NcnnCostModel(platform)

    def one() -> None:
        tg = build_tasks(platform, workload, placement, cost, comm="mpi")
        run_dag(platform, tg, RunOptions.make(frames=1).resolve(placement))

    t = _median_time(one, repeat)
    return {"evaluations_per_s": 1 / t, "median_s": t}


SWEEP_MAPPINGS = ["B4:1-35|s2:36-44|s2:45-54", "B2:1-16|B2:17-34|s3:35-47|s1:48-54",
                  "B4:1-30|s4:31-54", "B3:1-30|B1:31-39|s4:40-54", "B2:1-21|B2:22-40|s4:41-54",
                  "B4:1-54", "s4:1-54", "B4:1-40|s4:41-54", "B3:1-25|s4:26-54", "B4:1-20|s4:21-54"]


def sweep_spec():
    from hetsim.sweep import spec_from_dict

    return spec_from_dict({
        "schema": 1, "name": "bench-1000",
        "base": {"platform": "hikey970", "workload": "resnet50", "engine": "analytic"},
        "axes": {"mapping": SWEEP_MAPPINGS,
                 "set": {"memories.dram.bandwidth_GBps": {"geomspace": [2, 60, 10]},
                         "core_types.cortex-a53.dvfs.max.freq_MHz": {"linspace": [600, 1800, 10]}}},
    }, "benchmark (f)")


def _busy(n: int = 3_000_000) -> float:
    t0 = time.perf_counter()
    x = 0
    for i in range(n):
        x += i * i
    return time.perf_counter() - t0


def available_parallelism(workers: int) -> float:
    """How many cores' worth of pure-Python work ``workers`` processes got at once right now: the
    machine is shared, so (f) quotes it beside its speedups."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_busy, [10_000] * workers))          # workers started
        alone = statistics.median(pool.submit(_busy).result() for _ in range(3))
        t0 = time.perf_counter()
        list(pool.map(_busy, [3_000_000] * workers))
        together = time.perf_counter() - t0
    return workers * alone / together


def bench_sweep(dask: bool = True, repeat: int = 1) -> dict:
    """(f): every run in a fresh state (caches cleared; the pool forks this process). With
    ``repeat`` > 1 the runs alternate (loop, pool, pool one per task, Dask, Dask one per task) and
    each figure is the median: on a shared machine the load drifts between runs."""
    from hetsim.exploration.spec import clear_caches
    from hetsim.sweep import cells as sweep_cells
    from hetsim.sweep import expand, run_sweep, spec_from_dict

    def clear() -> None:
        clear_caches()

    spec = sweep_spec()
    cells = expand(spec)
    workers = os.cpu_count() or 1
    load_before = os.getloadavg()
    parallelism_before = available_parallelism(workers)
    times: dict[str, list[float]] = {}
    busy: dict[str, list[float]] = {}

    def sequential_run() -> None:
        clear()
        t0 = time.perf_counter()
        rows = [sweep_cells.run_cell(c.config) for c in cells]
        times.setdefault("sequential", []).append(time.perf_counter() - t0)
        assert all(status == "ok" for status, _, _ in rows), rows[0]

    def sweep_run(label: str, **kw) -> None:
        clear()
        t0 = time.perf_counter()
        r = run_sweep(spec, **kw)
        times.setdefault(label, []).append(time.perf_counter() - t0)
        busy.setdefault(label, []).append(r.busy_s)
        assert r.failed == 0

    cluster = None
    if dask:
        from distributed import LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None)
    try:
        for _ in range(repeat):
            sequential_run()
            sweep_run("pool", workers=workers)
            sweep_run("pool_one_per_task", workers=workers, batch=1)
            if cluster is not None:
                sweep_run("dask", scheduler=cluster.scheduler_address)
                sweep_run("dask_one_per_task", scheduler=cluster.scheduler_address, batch=1)
    finally:
        if cluster is not None:
            cluster.close()
    sequential = statistics.median(times["sequential"])
    out: dict = {"cells": len(cells), "workers": workers, "repeat": repeat, "sequential_s": sequential,
                 "sequential_cells_per_s": len(cells) / sequential}
    ideal = sequential / workers
    for label, ts in times.items():
        if label == "sequential":
            continue
        t = statistics.median(ts)
        out[f"{label}_s"] = t
        out[f"{label}_cells_per_s"] = len(cells) / t
        out[f"{label}_speedup"] = sequential / t
        out[f"{label}_overhead_per_cell_ms"] = 1e3 * (t - ideal) / len(cells)
        # How busy the workers were, and how much slower a cell ran in them than in the loop (the
        # other engineers' processes share the cores).
        out[f"{label}_busy_fraction"] = statistics.median(
            b / (workers * w) for b, w in zip(busy[label], ts, strict=True))
        out[f"{label}_cell_slowdown"] = statistics.median(busy[label]) / sequential
    # DES cells without contention: the max-plus fast path (RunOptions.fast) against SimPy.
    for label, fast in (("des_fast", True), ("des_simpy", False)):
        des = spec_from_dict({
            "schema": 1, "base": {"platform": "hikey970", "workload": "resnet50", "engine": "des",
                                  "frames": 1000, "contention": False, "noise_sigma": 0.05,
                                  "fast": fast},
            "axes": {"mapping": SWEEP_MAPPINGS, "seed": {"range": [0, 9, 1]}}}, "benchmark (f)")
        clear()
        t0 = time.perf_counter()
        rows = [sweep_cells.run_cell(c.config) for c in expand(des)]
        out[f"{label}_cells_per_s"] = len(rows) / (time.perf_counter() - t0)
        assert all(status == "ok" for status, _, _ in rows), rows[0]
    out["des_fast_speedup"] = out["des_fast_cells_per_s"] / out["des_simpy_cells_per_s"]
    out["load_average_before"] = load_before[0]
    out["load_average_after"] = os.getloadavg()[0]
    out["available_parallelism_before"] = parallelism_before
    out["available_parallelism_after"] = available_parallelism(workers)
    out["goal_speedup"] = 1.7
    return out


def print_sweep(f: dict) -> None:
    print(f"(f) sweep of {f['cells']:,} analytic cells, {f['workers']} workers, median of {f['repeat']} (load average "
          f"{f['load_average_before']:.2f} -> {f['load_average_after']:.2f}; {f['workers']} busy "
          f"processes got {f['available_parallelism_before']:.2f} -> "
          f"{f['available_parallelism_after']:.2f} cores): sequential loop "
          f"{f['sequential_s']:.2f} s ({f['sequential_cells_per_s']:.0f} cells/s); local pool "
          f"{f['pool_s']:.2f} s ({f['pool_cells_per_s']:.0f} cells/s, x{f['pool_speedup']:.2f}, goal "
          f">= {f['goal_speedup']}), one task per cell {f['pool_one_per_task_s']:.2f} s; workers busy "
          f"{f['pool_busy_fraction']:.0%} of the time, a cell {f['pool_cell_slowdown']:.2f}x slower "
          f"in them than in the loop")
    print(f"    DES cells (1,000 frames, no contention, noise): {f['des_fast_cells_per_s']:.0f} cells/s "
          f"with the max-plus fast path, {f['des_simpy_cells_per_s']:.1f} cells/s in SimPy "
          f"(x{f['des_fast_speedup']:.0f}), sequential")
    if "dask_s" in f:
        print(f"    Dask LocalCluster: batches {f['dask_s']:.2f} s (x{f['dask_speedup']:.2f}, "
              f"{f['dask_overhead_per_cell_ms']:.2f} ms/cell over the ideal), one task per cell "
              f"{f['dask_one_per_task_s']:.2f} s ({f['dask_one_per_task_overhead_per_cell_ms']:.2f} "
              f"ms/cell over the ideal)")


def bench_hope(repeat: int) -> dict:
    from hetsim.evaluation import DagOptions
    from hetsim.exploration import PlacementProblem, explore, make_explorer
    from hetsim.options import RunOptions
    from hetsim.sim.dag import run_dag
    from hetsim.tasks import build_tasks
    from hetsim_papers.hope.cost import HopeCostModel

    platform = load_platform("hope-he")
    workload = load_workload("nasnet-large+mnn")
    cost = HopeCostModel(platform)
    problem = PlacementProblem(platform, workload, cost, eps=["big", "gpu"], dag=DagOptions(comm="consumer"))
    problem.op_times()   # the profile tables (HOPE's benchmarking engine), outside the timings
    out: dict = {"ops": len(workload.ops), "platform": platform.name}
    plans = {}
    for name, runs, goal in (("HOPE:GS", repeat, 1.0), ("HOPE:LP", max(1, min(repeat, 2)), 10.0),
                             ("StarPU-DMDAR", repeat, None)):
        walls, latency = [], 0.0
        for _ in range(runs):
            r = explore(problem, make_explorer(name), seed=0)
            walls.append(r.info["schedule_wall_s"])
            latency, plans[name] = r.best_value, r.best
        out[name] = {"median_schedule_s": statistics.median(walls), "latency_ms": latency * 1e3, "goal_s": goal}
    tg = build_tasks(platform, workload, plans["HOPE:LP"], cost, comm="consumer")
    for contention in (False, True):
        opts = RunOptions.make(engine="des", frames=1, contention=contention).resolve(plans["HOPE:LP"])
        t = _median_time(lambda opts=opts: run_dag(platform, tg, opts), repeat)
        out[f"des_contention_{contention}".lower()] = {"median_s": t, "ops_per_s": len(workload.ops) / t,
                                                       "tasks": len(tg.tasks)}
    return out


def print_hope(h: dict) -> None:
    gs, lp, sp = h["HOPE:GS"], h["HOPE:LP"], h["StarPU-DMDAR"]
    off, on = h["des_contention_false"], h["des_contention_true"]
    print(f"(g) HOPE on NASNet-Large ({h['ops']} ops, {h['platform']}): HOPE:GS {gs['median_schedule_s']:.3f} s "
          f"(goal < 1 s), HOPE:LP {lp['median_schedule_s']:.2f} s (goal < 10 s), StarPU-DMDAR "
          f"{sp['median_schedule_s']:.3f} s; DES of LP's plan ({off['tasks']} tasks) {off['median_s'] * 1e3:.0f} ms "
          f"= {off['ops_per_s']:,.0f} ops/s without contention, {on['median_s'] * 1e3:.0f} ms "
          f"= {on['ops_per_s']:,.0f} ops/s with")
def bench_pim(repeat: int) -> dict:
    from hetsim_papers.pim.dp import als_dp
    from hetsim_papers.pim.exact import enumerate_paths, milp
    from hetsim_papers.pim.experiments import runs
    from hetsim_papers.pim.experiments.optimality import widest_window
    from hetsim_papers.pim.profiling import plan_profiling

    g = runs.dcg("gpt2", 64)
    out: dict = {"ops": g.n_ops, "dcg_nodes": g.counts().V_d,
                 "dp_ms": _median_time(lambda: als_dp(g), repeat) * 1e3,
                 "dp_path_ms": _median_time(lambda: als_dp(g, "path"), max(1, repeat // 2)) * 1e3,
                 "milp_s": _median_time(lambda: milp(g, "cp-sat", 60.0), 1)}
    sweep = {}
    for model in runs.MODELS:
        d = runs.dcg(model, 16)
        sweep[model] = {"plan_ms": _median_time(lambda d=d: plan_profiling(d), repeat) * 1e3,
                        "sweep_ms": plan_profiling(d).sweep_seconds * 1e3}
    out["profiling"] = sweep
    b = runs.dcg("bert-small", 16)
    w = b.window(widest_window(b, 15), 15, host=b.devices.index("CPU_S"))
    result = {}

    def enum():
        result["e"] = enumerate_paths(w)

    t = _median_time(enum, 1)
    out["window_paths"] = result["e"].n_paths
    out["enumeration_s"] = t
    out["paths_per_s"] = result["e"].n_paths / t
    return out


def synthetic_dag(n_ops: int, seed: int = 0, channels: int = 16, size: int = 14, window: int = 32,
                  join: float = 0.3):
    """A random DAG workload of ``n_ops`` ops of one tensor shape: 1x1 convs and ReLUs in turn along
    a chain, and with probability ``join`` an add of the op before and a random one of the
    ``window`` before it (a residual: DenseNet- and transformer-like fan-in)."""
    from hetsim.workload.build import workload_from_dict

    rng = np.random.default_rng(seed)
    ops: list[dict] = []
    for i in range(n_ops):
        name = f"op{i}"
        if i >= 2 and rng.random() < join:
            j = int(rng.integers(max(0, i - window), i - 1))
            ops.append({"name": name, "kind": "add", "inputs": [f"op{i - 1}", f"op{j}"]})
        elif i % 2 == 0:
            conv = {"name": name, "kind": "conv", "kernel": 1, "out_c": channels, "stride": 1, "pad": 0}
            ops.append(conv if i == 0 else {**conv, "inputs": [f"op{i - 1}"]})
        else:
            ops.append({"name": name, "kind": "relu", "inputs": [f"op{i - 1}"]})
    return workload_from_dict({"schema": 1, "name": f"synthetic-{n_ops}", "description": "benchmark DAG",
                               "source": "benchmarks/run.py", "input": {"h": size, "w": size, "c": channels},
                               "layer_kinds": ["conv", "fc"], "ops": ops}, f"synthetic-{n_ops}")


def _synthetic_setup(n_ops: int):
    """(platform, workload, placement, cost, load CPU s): the synthetic DAG on hikey970, blocks of
    50 ops on the big and the little cluster in turn (a transfer over the CCI at every change)."""
    from hetsim.mapping import placement_from_dict

    t0 = time.process_time()
    workload = synthetic_dag(n_ops)
    load = time.process_time() - t0
    platform = load_platform("hikey970")
    cost = RooflineCostModel(platform)
    spec = {op.name: ("B4" if (k // 50) % 2 == 0 else "s4") for k, op in enumerate(workload.ops)}
    return platform, workload, placement_from_dict(spec, platform, workload, cost=cost), cost, load


def heapq_dag_loop(tg) -> float:
    """The anchor of the DAG engine: a bare heapq event loop over the same task graph (every task
    one event at its end; a task starts when its dependencies and its lane's previous task are
    done). Returns the makespan."""
    import heapq

    n = len(tg.tasks)
    succ: list[list[int]] = [[] for _ in range(n)]
    waiting = [0] * n
    for t in tg.tasks:
        for d in t.deps:
            succ[d].append(t.index)
            waiting[t.index] += 1
    for order in tg.lanes.values():
        for a, b in zip(order, order[1:], strict=False):
            succ[a].append(b)
            waiting[b] += 1
    ready_at = [0.0] * n
    durations = [t.time_s for t in tg.tasks]
    events = [(durations[i], i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(events)
    now = 0.0
    while events:
        now, i = heapq.heappop(events)
        for j in succ[i]:
            if now > ready_at[j]:
                ready_at[j] = now
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(events, (ready_at[j] + durations[j], j))
    return now


def _growth_exponent(sizes, times) -> float:
    """The slope of log(time) against log(size): 1 is linear."""
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def bench_scale(repeat: int) -> dict:
    """(k) DAG DES at scale, CPU time: task-graph build and one frame of the synthetic DAG at 2,500
    to 20,000 ops (goal: 10,000 ops in < 0.5 s including the build) against a heapq event loop over
    the same graph, and the growth exponent of build + run in ops; a stream of frames through the
    10,000-op graph (op executions per CPU second, goal >= 1e5) and the memory a frame adds
    (tracemalloc, goal: none, memory linear in the graph); a 100,000-op graph, one frame; the
    growth exponent of the pipeline DES (the pipeline of (b), contention on) in frames."""
    import gc
    import tracemalloc

    from hetsim.sim.dag import run_dag
    from hetsim.tasks import build_tasks

    out: dict = {"dag": {}}
    sizes = (2500, 5000, 10_000, 20_000)
    graphs = {}
    for n in sizes:
        platform, workload, placement, cost, load = _synthetic_setup(n)
        tg = {}

        def build(platform=platform, workload=workload, placement=placement, cost=cost, tg=tg):
            tg["g"] = build_tasks(platform, workload, placement, cost)

        b = _median_cpu(build, repeat)
        g = tg["g"]
        graphs[n] = (platform, placement, g)
        runs = {}
        for contention in (False, True):
            opts = RunOptions.make(engine="des", frames=1, contention=contention).resolve(placement)
            runs[contention] = _median_cpu(lambda opts=opts, g=g, platform=platform: run_dag(platform, g, opts),
                                           repeat)
        anchor = _median_cpu(lambda g=g: heapq_dag_loop(g), repeat)
        out["dag"][n] = {"tasks": len(g.tasks), "load_cpu_s": load, "build_cpu_s": b, "run_cpu_s": runs[False],
                         "run_contention_cpu_s": runs[True], "heapq_loop_cpu_s": anchor,
                         "total_cpu_s": b + runs[False], "ratio_run_to_heapq": runs[False] / anchor,
                         "ratio_total_to_heapq": (b + runs[False]) / anchor}
    out["dag_growth_exponent"] = _growth_exponent(sizes, [out["dag"][n]["total_cpu_s"] for n in sizes])
    out["dag_run_growth_exponent"] = _growth_exponent(sizes, [out["dag"][n]["run_cpu_s"] for n in sizes])
    out["goal_10k_total_cpu_s"] = 0.5
    # a stream: frames through the 10,000-op graph, the graph built once
    platform, placement, g = graphs[10_000]
    frames = 20
    opts = RunOptions.make(engine="des", frames=frames, contention=False).resolve(placement)
    t = _median_cpu(lambda: run_dag(platform, g, opts), max(1, repeat // 2))
    out["stream"] = {"ops": 10_000, "frames": frames, "cpu_s": t, "op_executions_per_cpu_s": frames * 10_000 / t,
                     "goal_per_s": 1e5}
    # memory a frame adds: peak traced bytes of runs of 2 and 10 frames through the 2,500-op graph
    platform, placement, g = graphs[2500]
    peaks = {}
    for f in (2, 10):
        opts = RunOptions.make(engine="des", frames=f, contention=False).resolve(placement)
        gc.collect()
        tracemalloc.start()
        run_dag(platform, g, opts)
        peaks[f] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    out["memory"] = {"tasks": len(g.tasks), "peak_bytes_2_frames": peaks[2], "peak_bytes_10_frames": peaks[10],
                     "bytes_per_frame_and_task": (peaks[10] - peaks[2]) / 8 / len(g.tasks)}
    # 100,000 ops, one frame
    platform, workload, placement, cost, load = _synthetic_setup(100_000)
    t0 = time.process_time()
    g = build_tasks(platform, workload, placement, cost)
    b = time.process_time() - t0
    opts = RunOptions.make(engine="des", frames=1, contention=False).resolve(placement)
    t0 = time.process_time()
    run_dag(platform, g, opts)
    r = time.process_time() - t0
    out["dag_100k"] = {"tasks": len(g.tasks), "load_cpu_s": load, "build_cpu_s": b, "run_cpu_s": r}
    # the pipeline DES in frames (contention on: SimPy, per-stage and per-op flows)
    pipeline = load_platform("hikey970")
    workload = load_workload("resnet50")
    cost = RooflineCostModel(pipeline)
    pipe = load_mapping("B2:1-13|B2:14-30|s2:31-44|s2:45-54", pipeline, workload, cost)
    frame_counts = (2500, 5000, 10_000, 20_000)
    for flows in ("stage", "op"):
        times = [_median_cpu(lambda f=f, flows=flows: simulate_pipeline(pipeline, workload, pipe, cost, _opts(
            pipe, frames=f, contention=True, flows=flows)), max(1, repeat // 2)) for f in frame_counts]
        out[f"pipeline_{flows}_cpu_s"] = dict(zip(frame_counts, times, strict=True))
        out[f"pipeline_{flows}_growth_exponent"] = _growth_exponent(frame_counts, times)
    return out


def print_scale(k: dict) -> None:
    d = k["dag"]
    rows = ", ".join(f"{n:,} ops {v['build_cpu_s']:.2f} + {v['run_cpu_s']:.3f} s (x{v['ratio_total_to_heapq']:.1f} "
                     f"heapq)" for n, v in d.items())
    ten = d[10_000]
    print(f"(k) DAG DES, synthetic DAG, one frame, CPU build + run: {rows}; growth exponent "
          f"{k['dag_growth_exponent']:.2f} (run alone {k['dag_run_growth_exponent']:.2f})")
    print(f"    10,000 ops: {ten['total_cpu_s']:.2f} s CPU (goal < 0.5 s; load {ten['load_cpu_s']:.2f} s not "
          f"counted), contention on {ten['run_contention_cpu_s']:.2f} s; heapq loop {ten['heapq_loop_cpu_s']:.3f} s "
          f"(the run x{ten['ratio_run_to_heapq']:.2f} of it)")
    st, mem, big = k["stream"], k["memory"], k["dag_100k"]
    print(f"    stream of {st['frames']} frames x {st['ops']:,} ops: {st['op_executions_per_cpu_s']:,.0f} op "
          f"executions per CPU s (goal >= 1e5); memory a frame adds: {mem['bytes_per_frame_and_task']:.0f} B "
          f"per task ({mem['peak_bytes_2_frames'] / 1e6:.1f} MB at 2 frames, "
          f"{mem['peak_bytes_10_frames'] / 1e6:.1f} MB at 10)")
    print(f"    100,000 ops ({big['tasks']:,} tasks): load {big['load_cpu_s']:.1f} s, build {big['build_cpu_s']:.1f} s, "
          f"run {big['run_cpu_s']:.1f} s CPU")
    for flows in ("stage", "op"):
        times = ", ".join(f"{f:,}: {t:.2f} s" for f, t in k[f"pipeline_{flows}_cpu_s"].items())
        print(f"    pipeline DES, contention on, {flows} flows, CPU s by frames: {times}; growth exponent "
              f"{k[f'pipeline_{flows}_growth_exponent']:.2f}")


#: (l)'s problems: the one whose cells cost the core the most (chiplet-c5 x ResNet50: OPT's profiling
#: runs, the DAG DES) and a big.LITTLE one (core-group pipelines).
TOURNAMENT_PROBLEMS = (("chiplet-c5", "resnet50"), ("hikey970", "alexnet"))


def bench_tournament() -> dict:
    from hetsim.exploration.spec import clear_caches
    from hetsim.sweep import expand
    from hetsim.sweep.cells import problem_kind, run_cell
    from hetsim_papers.tournament.tournament import tournament_spec

    cells = [c for c in expand(tournament_spec()) if c.config["seed"] == 0
             and (c.config["platform"], c.config["workload"]) in TOURNAMENT_PROBLEMS]
    clear_caches()
    per_kind: dict[str, float] = {}
    slowest = []
    for c in cells:
        t0 = time.process_time()
        status, error, _ = run_cell(c.config)
        cpu = time.process_time() - t0
        kind = problem_kind(c.config)
        per_kind[kind] = per_kind.get(kind, 0.0) + cpu
        slowest.append((cpu, f"{c.config['algorithm']} {c.config['platform']} {c.config['workload']}"))
    slowest.sort(reverse=True)
    return {"cells": len(cells), "cpu_s": sum(per_kind.values()), "per_kind_cpu_s": per_kind,
            "slowest": [{"cell": name, "cpu_s": cpu} for cpu, name in slowest[:3]]}


def print_tournament(t: dict) -> None:
    kinds = ", ".join(f"{k} {v:.1f} s" for k, v in t["per_kind_cpu_s"].items())
    slow = ", ".join(f"{s['cell']} {s['cpu_s']:.1f} s" for s in t["slowest"])
    print(f"(l) tournament, full size, seed 0, {' and '.join(' x '.join(p) for p in TOURNAMENT_PROBLEMS)}: "
          f"{t['cells']} cells in {t['cpu_s']:.1f} CPU s ({kinds}); slowest: {slow}")


def bench_hope_ablations(phone_name: str = "hope-he", model: str = "IN-V3") -> dict:
    from hetsim.exploration.dag import SchedView
    from hetsim_papers.hope import milp
    from hetsim_papers.hope.experiments import runs
    from hetsim_papers.hope.experiments.ablations import VARIANTS
    from hetsim_papers.hope.experiments.calibration import phone

    phone(phone_name)
    keys = [runs.key(runs.Setting(phone_name, **change), model, version, **params)
            for version, params, change in VARIANTS.values()]
    for k in keys:    # the tables (HOPE's benchmarking engine), outside the timings
        SchedView(runs.problem(k[0], model))
    out: dict = {"phone": phone_name, "model": model, "variants": len(keys)}
    latencies = {}
    for label, reuse in (("every_ilp_solved", False), ("ilps_reused", True)):
        milp.clear_solutions()
        solved, c0 = 0, time.process_time()
        for k in keys:
            if not reuse:
                solved += milp.solved_count()
                milp.clear_solutions()
            latencies.setdefault(label, []).append(runs._schedule(k).latency_s)
        solved += milp.solved_count()
        out[label] = {"process_s": time.process_time() - c0, "ilps_solved": solved}
    milp.clear_solutions()
    out["ratio"] = out["every_ilp_solved"]["process_s"] / out["ilps_reused"]["process_s"]
    out["same_latencies"] = latencies["every_ilp_solved"] == latencies["ilps_reused"]
    return out


def print_hope_ablations(a: dict) -> None:
    solved, reused = a["every_ilp_solved"], a["ilps_reused"]
    print(f"(m) HOPE's {a['variants']} ablation variants on {a['phone']} x {a['model']}, one process: "
          f"{solved['process_s']:.2f} CPU s solving every ILP ({solved['ilps_solved']}), "
          f"{reused['process_s']:.2f} s reusing the ILPs met again ({reused['ilps_solved']} solved): "
          f"x{a['ratio']:.2f}; same latencies: {a['same_latencies']}")


def print_pim(g: dict) -> None:
    prof = ", ".join(f"{m} {v['plan_ms']:.1f} ms (sweep {v['sweep_ms']:.1f})" for m, v in g["profiling"].items())
    print(f"(h) PIM: OPT's DP on GPT-2 p=64 ({g['ops']:,} ops, {g['dcg_nodes']:,} DCG nodes) {g['dp_ms']:.1f} ms, "
          f"path-aware {g['dp_path_ms']:.0f} ms, MILP (CP-SAT) {g['milp_s']:.2f} s; profiling plan at p=16: {prof}; "
          f"Fig. 13 window: {g['window_paths']:,} paths in {g['enumeration_s']:.2f} s = {g['paths_per_s']:,.0f} paths/s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    ap.add_argument("--no-reproduce", action="store_true", help="skip the reproduction timings (d)")
    ap.add_argument("--only", default=None,
                    help="run these figures alone, comma-separated: a, b, f, g, h, i (with j), k, l, m")
    ap.add_argument("--no-dask", action="store_true", help="(f) without the Dask LocalCluster")
    args = ap.parse_args(argv)
    # figures alone: (JSON key, the benchmark, its printer)
    single = {"a": ("analytic", lambda: bench_analytic(args.repeat), print_analytic),
              "b": ("des", lambda: bench_des(args.repeat), print_des),
              "k": ("scale", lambda: bench_scale(args.repeat), print_scale),
              "f": ("sweep", lambda: bench_sweep(dask=not args.no_dask, repeat=args.repeat), print_sweep),
              "g": ("hope", lambda: bench_hope(args.repeat), print_hope),
              "h": ("pim", lambda: bench_pim(args.repeat), print_pim),
              "l": ("tournament", bench_tournament, print_tournament),
              "m": ("hope_ablations", bench_hope_ablations, print_hope_ablations),
              "i": ("nsga2", lambda: {"nsga2": bench_nsga2(args.repeat), "hybrid_des": bench_hybrid_des(args.repeat)},
                    print)}
    if args.only is not None:
        figures = args.only.split(",")
        unknown = [f for f in figures if f not in single]
        if unknown:
            ap.error(f"--only {unknown[0]!r}; allowed: {', '.join(single)}")
        results = {}
        for figure in figures:       # one process: ratios between figures come from one run
            key, bench, show = single[figure]
            results[key] = bench()
            if not args.json:
                show(results[key])
        if args.json:
            print(json.dumps(results, indent=2))
        return 0
    results = {"analytic": bench_analytic(args.repeat), "des": bench_des(args.repeat),
               "explorers": bench_explorers(args.repeat), "recurrence": bench_recurrence(args.repeat),
               "nsga2": bench_nsga2(args.repeat), "hybrid_des": bench_hybrid_des(args.repeat)}
    if not args.no_reproduce:
        results["reproduce"] = bench_reproduce()
    results["sweep"] = bench_sweep(dask=not args.no_dask, repeat=min(args.repeat, 3))
    results["hope"] = bench_hope(args.repeat)
    results["pim"] = bench_pim(args.repeat)
    results["scale"] = bench_scale(args.repeat)
    results["tournament"] = bench_tournament()
    results["hope_ablations"] = bench_hope_ablations()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print_analytic(results["analytic"])
        print_des(results["des"])
        e = results["explorers"]
        print(f"(c) ResNet50 on chiplet-c2, 4 stages: Shisha {e['Shisha']['median_s'] * 1e3:.1f} ms "
              f"({e['Shisha']['trials']} trials), exhaustive {e['ES']['median_s']:.2f} s "
              f"({e['ES']['trials']:,} trials): x{e['ratio_es_over_shisha']:.0f}")
        if "reproduce" in results:
            r = results["reproduce"]
            print(f"(d) reproduce shisha --quick {r['shisha_quick_s']:.1f} s, full {r['shisha_full_s']:.1f} s; "
                  f"Paper I + II full {r['pipesearch_and_shisha_full_s']:.1f} s (goal < 300 s)")
        m = results["recurrence"]
        print(f"(e) recurrence, {m['frames']:,} frames: bare SimPy {m['bare_simpy_s']:.3f} s, "
              f"recurrence {m['recurrence_s'] * 1e3:.1f} ms (x{m['speedup']:.0f}, goal >= 20), "
              f"with noise sigma {m['noise_sigma']} {m['recurrence_noise_s'] * 1e3:.1f} ms "
              f"(x{m['speedup_noise']:.0f}); largest relative deviation from the DES "
              f"{m['max_rel_deviation_vs_des']:.1e}")
        print_sweep(results["sweep"])
        print_hope(results["hope"])
        print_pim(results["pim"])
        print_scale(results["scale"])
        print_tournament(results["tournament"])
        print_hope_ablations(results["hope_ablations"])
        g = results["nsga2"]
        print(f"(i) seed-004 analytical model, AlexNet on 8 CPUs: {g['advanced_evaluations_per_s']:,.0f} "
              f"evaluations/s (advanced, p = 2), {g['naive_evaluations_per_s']:,.0f}/s (naive); NSGA-II "
              f"1000 x 100 ({g['full_run_evaluations']:,} evaluations) in {g['full_run_s']:.1f} s (goal < 60 s), "
              f"x{g['ratio_to_pymoo_alone']:.2f} pymoo alone ({g['pymoo_alone_s']:.1f} s); reproduce nsga2's "
              f"full runs, CPU: " + ", ".join(f"{k} {v:.1f} s" for k, v in g["reproduction_runs_cpu_s"].items()))
        h = results["hybrid_des"]
        print(f"(j) seed-004 DES, hybrid AlexNet over 2 CPUs: {h['evaluations_per_s']:.1f} evaluations/s "
              f"({h['median_s'] * 1e3:.1f} ms each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
