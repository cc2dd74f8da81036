"""``shisha:fig1`` and ``shisha:fig2``: STREAM Triad on KNL (Paper II §2), as flows on the DES
bandwidth servers (:mod:`hetsim.sim.stream`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim.sim.stream import STREAM_ITERATIONS, direct_mapped_hit_fraction
from hetsim_papers.shisha.experiments._common import artifact, figure
from hetsim_papers.shisha.experiments.paper import DATA_SPLITS, KNL_D_THREADS, KNL_M_THREADS, SAME
from hetsim_papers.shisha.experiments.runs import argmin_cell, knl_cases, knl_grid


# -- Fig. 1 ---------------------------------------------------------------------------------------------
def fig1_claims(ctx: Context, table: pd.DataFrame) -> tuple[pd.DataFrame, list]:
    """Each case at its best thread count, and whether the data split beats both others."""
    best = table.loc[table.groupby(["data_GB", "case"], sort=False)["time_s"].idxmin()].reset_index(drop=True)
    claims = []
    for total, g in best.groupby("data_GB", sort=False):
        t = dict(zip(g["case"].str.replace(r" \[.*\]", "", regex=True), g["time_s"], strict=True))
        sim = f"split {t['split']:.3f} s, DDR only {t['DDR only']:.3f} s, cache {t['MCDRAM cache mode']:.3f} s"
        claims.append(ctx.true(f"{total} GB: the data split beats DDR only and cache mode (best threads each)",
                               "split fastest", sim, t["split"] < min(t["DDR only"], t["MCDRAM cache mode"]),
                               "strictly faster", kind=PREDICTION))
    return best, claims


def plot_fig1(best: pd.DataFrame):
    fig, ax = figure(1, 1, (6.5, 3.8))
    ax = ax[0, 0]
    cases = list(dict.fromkeys(best["case"].str.replace(r" \[.*\]", "", regex=True)))
    width = 0.8 / len(cases)
    for i, case in enumerate(cases):
        g = best[best["case"].str.startswith(case)]
        ax.bar(np.arange(len(g)) + i * width, g["time_s"], width, label=case)
    ax.set_xticks(np.arange(len(DATA_SPLITS)) + width,
                  [f"{gm + gd:g} GB ({name})" for name, (gm, gd) in DATA_SPLITS.items()])
    ax.set_ylabel(f"time of {STREAM_ITERATIONS} Triad sweeps (s)")
    ax.set_title("STREAM Triad on KNL (best thread count per case)")
    ax.legend()
    return fig


def fig1(ctx: Context) -> Artifact:
    table = knl_cases((16, 64, 256) if ctx.quick else (16, 32, 64, 128, 256))
    best, claims = fig1_claims(ctx, table)
    notes = ["Cache mode: a direct-mapped 16 GB memory-side cache with randomly placed pages; hit "
             f"fraction exp(-data/16 GB) = {direct_mapped_hit_fraction(19, 16):.2f} (19 GB), "
             f"{direct_mapped_hit_fraction(31, 16):.2f} (31 GB); misses read DDR and write dirty lines back."]
    return artifact(table, plot_fig1(best), claims, notes)


# -- Fig. 2 ---------------------------------------------------------------------------------------------
def fig2_claims(ctx: Context, grid: pd.DataFrame) -> list:
    claims, best_time, best_cost = [], {}, {}
    for name in DATA_SPLITS:
        g = grid[grid["split"] == name]
        best_time[name] = argmin_cell(g, "time_s")
        best_cost[name] = argmin_cell(g, "parallel_cost_thread_s")
    cell = {n: (int(b.mcdram_threads), int(b.ddr_threads)) for n, b in best_time.items()}
    claims.append(ctx.true("the best thread split differs per data split", "different",
                           " vs ".join(f"{n} {m}+{d}" for n, (m, d) in cell.items()),
                           len(set(cell.values())) == len(cell), "different cells", kind=PREDICTION))
    costlier = {}
    for name in DATA_SPLITS:
        costlier[name] = best_time[name].parallel_cost_thread_s / best_cost[name].parallel_cost_thread_s
    claims.append(ctx.true("the fastest thread split is not the cheapest (parallel cost) for some data split",
                           "min cost != min time",
                           ", ".join(f"{n}: fastest costs {v:.3f}x the min" for n, v in costlier.items()),
                           any(v > 1 + SAME for v in costlier.values()), "> 1% costlier", kind=PREDICTION))
    faster = {}
    for name in DATA_SPLITS:
        g = grid[grid["split"] == name]
        full = g[(g["mcdram_threads"] == max(KNL_M_THREADS)) & (g["ddr_threads"] == max(KNL_D_THREADS))]
        faster[name] = float(full["time_s"].iloc[0]) / best_time[name].time_s
    claims.append(ctx.true("fewer threads than the maximum (128+16) perform better", "fewer threads faster",
                           ", ".join(f"{n}: 128+16 takes {v:.3f}x the best" for n, v in faster.items()),
                           any(v > 1 + SAME for v in faster.values()), "> 1% faster", kind=PREDICTION))
    return claims


def plot_fig2(grid: pd.DataFrame):
    fig, axes = figure(2, 2, (9, 7))
    for col, name in enumerate(DATA_SPLITS):
        g = grid[grid["split"] == name]
        for row, (what, label) in enumerate((("time_s", "time (s)"), ("parallel_cost_thread_s",
                                                                        "parallel cost (threads x s)"))):
            ax = axes[row, col]
            z = g.pivot(index="mcdram_threads", columns="ddr_threads", values=what).to_numpy()
            im = ax.imshow(z, origin="lower", cmap="viridis_r", aspect="auto")
            mid = (z.min() + z.max()) / 2
            for (i, j), v in np.ndenumerate(z):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="k" if v < mid else "w")
            ax.set_xticks(range(len(KNL_D_THREADS)), KNL_D_THREADS)
            ax.set_yticks(range(len(KNL_M_THREADS)), KNL_M_THREADS)
            ax.set_xlabel("DDR threads")
            ax.set_ylabel("MCDRAM threads")
            ax.set_title(f"{'abcd'[2 * row + col]}) {label}, {name}")
            fig.colorbar(im, ax=ax, label=label)
    return fig


def fig2(ctx: Context) -> Artifact:
    grid = knl_grid()
    notes = ["Each thread is a flow on its memory's bandwidth server capped at the per-thread bandwidth "
             "(knl.yaml bandwidth_GBps_per_core); the DES shares each memory max-min fairly. With that "
             "model, time falls with threads until the memory saturates and then stays flat: there is "
             "no penalty for oversubscribing a memory, so 'fewer threads perform better' can only tie."]
    return artifact(grid, plot_fig2(grid), fig2_claims(ctx, grid), notes)
