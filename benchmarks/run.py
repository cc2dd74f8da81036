#!/usr/bin/env python
"""hetsim's performance figures, measured side by side in one run.

    python benchmarks/run.py [--json] [--repeat N]

(a) analytic: candidates scored per second by the vectorised scorer on ResNet50 (54 layers) x all
    4-stage splits x the 24 EP orders of chiplet-c2 (goal >= 1,000,000/s on one core);
(b) DES: wall time of 10,000 frames through a 4-stage pipeline divided by that of a bare SimPy
    pipeline of the same shape (goal <= 2 with contention off, <= 4 with it on);
(c) explorers: wall time of Shisha (H3) and of exhaustive search on ResNet50 / chiplet-c2, 4 stages;
(d) reproductions: wall time of `hetsim reproduce shisha --quick`, of the full Shisha reproduction,
    and of the full Paper I + Paper II reproduction (goal: under 5 minutes on 2 cores).
    `--no-reproduce` skips (d).
(e) max-plus recurrence: wall time of 100,000 frames through the 4-stage pipeline of (b) by
    `run_pipeline_recurrence` (without and with seeded noise) against the bare SimPy pipeline
    (goal: >= 20x faster), and its largest relative deviation from hetsim's DES on that run.
(f) HOPE: the schedulers' wall time on NASNet-Large (871 ops here, 1,049 in the paper) on HOPE's HE,
    CPU + GPU: HOPE:GS (goal < 1 s, the paper's "less than one second"), HOPE:LP (goal < 10 s, "several
    seconds"), StarPU-DMDAR; and the DES replaying HOPE:LP's plan (ops simulated per second, one
    inference, with and without memory contention). `--only hope` runs (f) alone.

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

from hetsim.analytic import SplitScorer, stage_costs  # noqa: E402
from hetsim.cost import RooflineCostModel  # noqa: E402
from hetsim.mapping import load_mapping  # noqa: E402
from hetsim.options import RunOptions  # noqa: E402
from hetsim.platform import load_platform  # noqa: E402
from hetsim.sim.pipeline import simulate_pipeline  # noqa: E402
from hetsim.sim.recurrence import run_pipeline_recurrence  # noqa: E402
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
    return {"candidates": n, "median_s": t, "candidates_per_s": n / t, "goal_per_s": 1_000_000}


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


def _opts(pipe, **fields) -> RunOptions:
    return RunOptions.make(**fields).resolve(pipe)


def bench_des(repeat: int, frames: int = 10_000) -> dict:
    # Four stages on one shared DRAM, so that with contention on every stage execution is a flow
    # on the same bandwidth server (the hardest case for the contention model).
    platform = load_platform("hikey970")
    workload = load_workload("resnet50")
    cost = RooflineCostModel(platform)
    pipe = load_mapping("B2:1-13|B2:14-30|s2:31-44|s2:45-54", platform, workload, cost)
    compute, transfer = stage_costs(pipe, workload, cost)
    times = [c + x for c, x in zip(compute, transfer, strict=True)]
    bare = _median_time(lambda: bare_simpy_pipeline(times, frames), repeat)
    # fast=False: the SimPy engine itself, not the recurrence that answers contention-free runs.
    off = _median_time(lambda: simulate_pipeline(platform, workload, pipe, cost, _opts(
        pipe, frames=frames, contention=False, fast=False)), repeat)
    on = _median_time(lambda: simulate_pipeline(platform, workload, pipe, cost, _opts(
        pipe, frames=frames, contention=True)), repeat)
    per_op = _median_time(lambda: simulate_pipeline(platform, workload, pipe, cost, _opts(
        pipe, frames=frames, contention=True, flows="op")), repeat)
    return {"frames": frames, "mapping": str(pipe), "bare_simpy_s": bare,
            "hetsim_no_contention_s": off, "hetsim_contention_s": on, "hetsim_contention_per_op_s": per_op,
            "ratio_no_contention": off / bare, "ratio_contention": on / bare,
            "ratio_contention_per_op": per_op / bare,
            "goal_ratio_no_contention": 2.0, "goal_ratio_contention": 4.0}


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
    from hetsim.explore import PipelineProblem, explore, make_explorer

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


def bench_hope(repeat: int) -> dict:
    from hetsim.cost import HopeCostModel
    from hetsim.evaluate import DagOptions
    from hetsim.explore import PlacementProblem, explore, make_explorer
    from hetsim.options import RunOptions
    from hetsim.sim.dag import run_dag
    from hetsim.sim.tasks import build_tasks

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    ap.add_argument("--no-reproduce", action="store_true", help="skip the reproduction timings (d)")
    ap.add_argument("--only", choices=["hope"], default=None, help="run one group of figures alone")
    args = ap.parse_args(argv)
    if args.only == "hope":
        h = bench_hope(args.repeat)
        print(json.dumps(h, indent=2) if args.json else _hope_line(h))
        return 0
    results = {"analytic": bench_analytic(args.repeat), "des": bench_des(args.repeat),
               "explorers": bench_explorers(args.repeat), "recurrence": bench_recurrence(args.repeat),
               "hope": bench_hope(args.repeat)}
    if not args.no_reproduce:
        results["reproduce"] = bench_reproduce()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        a, d = results["analytic"], results["des"]
        print(f"(a) analytic: {a['candidates']:,} candidates in {a['median_s'] * 1e3:.1f} ms "
              f"= {a['candidates_per_s']:,.0f}/s (goal >= {a['goal_per_s']:,}/s)")
        print(f"(b) DES {d['frames']:,} frames, {d['mapping']}: bare SimPy {d['bare_simpy_s']:.3f} s, "
              f"hetsim {d['hetsim_no_contention_s']:.3f} s without contention "
              f"(x{d['ratio_no_contention']:.2f}, goal <= 2), {d['hetsim_contention_s']:.3f} s with "
              f"(x{d['ratio_contention']:.2f}, goal <= 4), {d['hetsim_contention_per_op_s']:.3f} s with per-op "
              f"flows (x{d['ratio_contention_per_op']:.2f}, goal <= 4)")
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
        print(_hope_line(results["hope"]))
    return 0


def _hope_line(h: dict) -> str:
    gs, lp, sp = h["HOPE:GS"], h["HOPE:LP"], h["StarPU-DMDAR"]
    off, on = h["des_contention_false"], h["des_contention_true"]
    return (f"(f) HOPE on NASNet-Large ({h['ops']} ops, {h['platform']}): HOPE:GS {gs['median_schedule_s']:.3f} s "
            f"(goal < 1 s), HOPE:LP {lp['median_schedule_s']:.2f} s (goal < 10 s), StarPU-DMDAR "
            f"{sp['median_schedule_s']:.3f} s; DES of LP's plan ({off['tasks']} tasks) {off['median_s'] * 1e3:.0f} ms "
            f"= {off['ops_per_s']:,.0f} ops/s without contention, {on['median_s'] * 1e3:.0f} ms "
            f"= {on['ops_per_s']:,.0f} ops/s with")


if __name__ == "__main__":
    sys.exit(main())
