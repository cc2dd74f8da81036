"""The simulations and explorations Paper II's figures read, cached: each runs once per process
(they are deterministic), whichever figure asks first."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from hetsim.cost import RooflineCostModel
from hetsim.exploration import Exploration, MaxClock, PipelineProblem, explore, make_explorer
from hetsim.sim.stream import cache_mode_time_s, one_memory_time_s, split_time_s
from hetsim.workload import load_workload
from hetsim_papers.shisha.experiments.calibration import (
    NOP_LATENCY,
    calibration,
    chiplet,
    fig4_problem,
    platform,
    problem,
)
from hetsim_papers.shisha.experiments.exhaustive import ESResult, exhaustive
from hetsim_papers.shisha.experiments.paper import (
    CONFS,
    DATA_SPLITS,
    KNL_D_THREADS,
    KNL_M_THREADS,
    NETWORKS,
)
from hetsim_papers.shisha.shisha import shisha_seed

#: Fig. 4-5's stochastic baselines; each is averaged over N_SEEDS seeds.
BASELINES = ("SA", "HC", "SA_s", "HC_s")
N_SEEDS = 10     # stochastic baselines: >= 10 seeds; the same in quick mode (ms per run)
#: Figs. 7-8 run on these networks (Fig. 8 names them; Fig. 7 does not: docs/papers/shisha.md).
HEURISTIC_NETS = ("resnet50-shisha", "yolov3")
HEURISTICS = ("H1", "H2", "H3", "H4", "H5", "H6")


def run(prob: PipelineProblem, name: str, seed: int, termination=None, **params) -> Exploration:
    return explore(prob, make_explorer(name, **params), termination=termination, seed=seed)


def time_to_best(r: Exploration) -> float:
    """Tuning-clock time at which an exploration first reached its final best (its convergence
    time, as in Figs. 4, 6 and 8)."""
    t = r.trials
    hit = t.index[t["best_fps_so_far"].to_numpy() >= r.best_fps]
    return float(t.loc[hit[0], "clock_s"])


# -- calibration check, seeds --------------------------------------------------------------------------
@lru_cache(maxsize=1)
def fig4_es() -> ESResult:
    """ES on Fig. 4's space with the fitted efficiency (no trace): the fit's observation."""
    return exhaustive(fig4_problem(calibration().overrides), trace=False)


@lru_cache(maxsize=1)
def fep_sep_ratios() -> pd.DataFrame:
    """SEP / FEP layer-time ratio per layer (same core count) after the fit (2-4x assumed: docs/papers/shisha.md)."""
    ratios = []
    for conf, (fep, sep) in {"c2": ("FEP0", "SEP0"), "c5": ("FEP0", "SEP0")}.items():
        p = chiplet(conf)
        for w in NETWORKS:
            wl = load_workload(w)
            cost = RooflineCostModel(p)
            t_f, t_s = cost.layer_times(wl, p.ep(fep)), cost.layer_times(wl, p.ep(sep))
            ratios.append({"conf": conf, "workload": w, "median_sep_over_fep": float(np.median(t_s / t_f)),
                           "min": float(np.min(t_s / t_f)), "max": float(np.max(t_s / t_f))})
    return pd.DataFrame(ratios)


@lru_cache(maxsize=1)
def chiplet_seeds() -> tuple[dict, ...]:
    """Algorithm 1's seeds (Rank_l for H1, Rank_w for H3) on the chiplets the figures use: rows."""
    rows = []
    for conf, w in [("c2", "resnet50-shisha"), ("c2", "yolov3"), ("c2", "synthnet"), ("c5", "synthnet")]:
        n = 4 if conf == "c2" else 8
        prob = problem(conf, w, [n])
        for h, ranking in (("H1", "layers"), ("H3", "weight")):
            c = shisha_seed(prob, n, ranking)
            rows.append({"workload": w, "platform": f"chiplet-{conf} ({h})", "N": n, "seed": list(c.split),
                         "derived": None, "eps": c.eps_text, "seed_fps": prob.measure(c).throughput_fps})
    return tuple(rows)


# -- Figs. 1-2: STREAM on KNL ------------------------------------------------------------------------
@lru_cache(maxsize=4)
def knl_grid(overrides: tuple[str, ...] = ()) -> pd.DataFrame:
    """Fig. 2: time and parallel cost of every (MCDRAM, DDR) thread pair for each data split."""
    p = platform("knl", overrides)
    rows = []
    for name, (gm, gd) in DATA_SPLITS.items():
        for n_m in KNL_M_THREADS:
            for n_d in KNL_D_THREADS:
                t = split_time_s(p, {"mcdram": gm, "ddr": gd}, {"mcdram": n_m, "ddr": n_d})
                rows.append({"split": name, "mcdram_threads": n_m, "ddr_threads": n_d, "time_s": t,
                             "parallel_cost_thread_s": (n_m + n_d) * t})
    return pd.DataFrame(rows)


def argmin_cell(df: pd.DataFrame, col: str) -> pd.Series:
    """The cell with the least ``col``; ties (within 1e-9) go to the fewest threads."""
    best = df[col].min()
    tied = df[df[col] <= best * (1 + 1e-9)]
    return tied.assign(threads=tied["mcdram_threads"] + tied["ddr_threads"]).sort_values(
        ["threads", "mcdram_threads"]).iloc[0]


@lru_cache(maxsize=4)
def knl_cases(threads: tuple[int, ...], overrides: tuple[str, ...] = ()) -> pd.DataFrame:
    """Fig. 1: DDR only and cache mode at each thread count, and the best cell of each data split."""
    p = platform("knl", overrides)
    grid = knl_grid(overrides)
    rows = []
    for name, (gm, gd) in DATA_SPLITS.items():
        total = gm + gd
        for n in threads:
            rows.append({"data_GB": total, "case": "DDR only", "threads": str(n),
                         "time_s": one_memory_time_s(p, "ddr", total, n)})
            rows.append({"data_GB": total, "case": "MCDRAM cache mode", "threads": str(n),
                         "time_s": cache_mode_time_s(p, "mcdram", "ddr", total, n)})
        best = argmin_cell(grid[grid["split"] == name], "time_s")
        rows.append({"data_GB": total, "case": f"split {name}",
                     "threads": f"{best.mcdram_threads}+{best.ddr_threads}", "time_s": best.time_s})
    return pd.DataFrame(rows)


# -- Figs. 4-5: every algorithm on one problem --------------------------------------------------------
@lru_cache(maxsize=8)
def compare(conf: str, workload: str, depths: tuple[int, ...], seed: int) -> tuple[PipelineProblem, dict, ESResult]:
    """Every algorithm of Figs. 4-5: Shisha (H3) and PS are deterministic (one run); SA, HC, SA_s,
    HC_s and RW are averaged over N_SEEDS seeds; RW's budget is the longest other run (docs/papers/shisha.md); ES
    is :func:`exhaustive`."""
    prob = problem(conf, workload, depths)
    seeds = [seed + i for i in range(N_SEEDS)]
    runs = {"Shisha": [run(prob, "Shisha", seed, heuristic="H3")], "PS": [run(prob, "PS", seed)]}
    for alg in BASELINES:
        runs[alg] = [run(prob, alg, s) for s in seeds]
    budget = max(r.clock_s for rs in runs.values() for r in rs)
    runs["RW"] = [run(prob, "RW", s, termination=MaxClock(budget)) for s in seeds]
    return prob, runs, exhaustive(prob)


# -- Fig. 6: Shisha's seed vs random seeds --------------------------------------------------------------
@lru_cache(maxsize=8)
def seed_runs(workload: str, n: int, seed: int) -> list[tuple[str, Exploration]]:
    """Shisha H3 from its own seed, then from ``n`` uniformly random seeds, on chiplet-c2."""
    prob = problem("c2", workload, range(2, 5))
    runs = [("Shisha seed", run(prob, "Shisha", seed, heuristic="H3"))]
    runs += [("random seed", run(prob, "Shisha", seed + i, heuristic="H3", start="random")) for i in range(n)]
    return runs


# -- Figs. 7-8: heuristics H1-H6 on C1-C5 ----------------------------------------------------------------
@lru_cache(maxsize=4)
def heuristic_runs(seed: int) -> pd.DataFrame:
    """Every heuristic on every EP configuration and network at depth N (the number of EPs); H5/H6
    (random EP ranking) averaged over 10 seeds."""
    rows = []
    n_random = 10    # the same in quick mode: a few ms per run
    for conf in CONFS:
        n = len(chiplet(conf).eps())
        for w in HEURISTIC_NETS:
            prob = problem(conf, w, [n])
            for h in HEURISTICS:
                seeds = [seed + i for i in range(n_random)] if h in ("H5", "H6") else [seed]
                rs = [run(prob, "Shisha", s, heuristic=h) for s in seeds]
                rows.append({"conf": conf.upper(), "network": NETWORKS[w], "heuristic": h, "runs": len(rs),
                             "best_fps": float(np.mean([r.best_fps for r in rs])),
                             "time_to_best_s": float(np.mean([time_to_best(r) for r in rs])),
                             "trials": float(np.mean([r.n_trials for r in rs])),
                             "best_mapping": rs[0].best_mapping})
    df = pd.DataFrame(rows)
    g = df.groupby(["conf", "network"])
    df["normalised"] = df["best_fps"] / g["best_fps"].transform("max")
    return df


# -- Fig. 9: inter-chiplet latency --------------------------------------------------------------------
@lru_cache(maxsize=4)
def latency_sweep(exponents: tuple[int, ...], seed: int) -> pd.DataFrame:
    """Fig. 9 at 10**e ns of link latency: the 1-ns best configuration (Shisha's), Shisha re-tuned,
    and ES."""
    best = run(problem("c5", "synthnet", range(2, 9)), "Shisha", seed, heuristic="H3").best
    rows = []
    for e in exponents:
        lat = 10.0**e
        prob = problem("c5", "synthnet", range(2, 9), (f"{NOP_LATENCY}={lat!r}",))
        sh = run(prob, "Shisha", seed, heuristic="H3")
        es = exhaustive(prob, trace=False)
        rows.append({"latency_s": lat * 1e-9, "fixed_best_fps": prob.measure(best).throughput_fps,
                     "shisha_fps": sh.best_fps, "es_fps": es.best_fps, "shisha_over_es": sh.best_fps / es.best_fps,
                     "fixed_mapping": str(best), "shisha_mapping": sh.best_mapping, "es_mapping": str(es.best)})
    return pd.DataFrame(rows)

