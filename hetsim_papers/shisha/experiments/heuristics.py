"""``shisha:fig7`` (throughput of heuristics H1-H6 on C1-C5) and ``shisha:fig8`` (convergence time
of H1 vs H3), both from :func:`hetsim_papers.shisha.experiments.runs.heuristic_runs`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.shisha.experiments._common import artifact, figure
from hetsim_papers.shisha.experiments.paper import (
    CONFS,
    FIG7_H1H3_BEST,
    FIG8_H3_FASTER,
    NETWORKS,
    SAME,
)
from hetsim_papers.shisha.experiments.runs import HEURISTIC_NETS, HEURISTICS, heuristic_runs


# -- Fig. 7 ---------------------------------------------------------------------------------------------
def fig7_claims(ctx: Context, df: pd.DataFrame) -> tuple[list, list[str]]:
    pairs = {"H1": "H2", "H3": "H4", "H5": "H6"}     # nlFEP vs nFEP with the same EP ranking
    wins, total = 0, 0
    h13 = 0
    groups = list(df.groupby(["conf", "network"], sort=False))
    for _, g in groups:
        fps = g.set_index("heuristic")["best_fps"]
        for nl, nf in pairs.items():
            total += 1
            wins += fps[nl] >= fps[nf] * (1 - SAME)
        h13 += max(fps["H1"], fps["H3"]) >= fps.max() * (1 - 1e-9)
    claims = [
        ctx.within("nlFEP balancing is effective in all cases (share of cases nlFEP >= nFEP - 1%)", 1.0,
                   wins / total, 0.9, 1.0, kind=PREDICTION),
        ctx.close("H1 or H3 gives the best throughput in 80% of cases", FIG7_H1H3_BEST, h13 / len(groups),
                  abs_=0.2, kind=PREDICTION),
    ]
    notes = [f"Cases: {total} (configuration x network x EP ranking) for the nlFEP claim, {len(groups)} "
             "groups for H1/H3. H5/H6 (random ranking): mean of seeds."]
    return claims, notes


def plot_fig7(df: pd.DataFrame):
    fig, axes = figure(1, 2, (11, 4))
    for ax, w in zip(axes[0], HEURISTIC_NETS, strict=True):
        d = df[df["network"] == NETWORKS[w]]
        for i, h in enumerate(HEURISTICS):
            g = d[d["heuristic"] == h]
            ax.bar(np.arange(len(CONFS)) + i * 0.13, g["best_fps"], 0.13, label=h)
        ax.set_xticks(np.arange(len(CONFS)) + 0.33, [c.upper() for c in CONFS])
        ax.set_xlabel("EP configuration (Table 3)")
        ax.set_ylabel("throughput (frames/s)")
        ax.set_ylim(0, ax.get_ylim()[1] * 1.25)
        ax.set_title(NETWORKS[w])
        ax.legend(fontsize=7, ncol=6, loc="upper center")
    return fig


def fig7(ctx: Context) -> Artifact:
    df = heuristic_runs(ctx.seed)
    claims, notes = fig7_claims(ctx, df)
    return artifact(df, plot_fig7(df), claims, notes)


# -- Fig. 8 ---------------------------------------------------------------------------------------------
def fig8_table(ctx: Context) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    df = heuristic_runs(ctx.seed)
    d = df[df["heuristic"].isin(["H1", "H3"])].copy()
    d["normalised_time"] = d["time_to_best_s"] / d.groupby(["conf", "network"])["time_to_best_s"].transform("min")
    piv = d.pivot_table(index=["conf", "network"], columns="heuristic", values="time_to_best_s")
    share = float((piv["H3"] < piv["H1"]).mean())
    claims = [ctx.close("H3 converges faster than H1 in 90% of cases", FIG8_H3_FASTER, share, abs_=0.2,
                        kind=PREDICTION)]
    return d, piv, claims


def plot_fig8(d: pd.DataFrame, piv: pd.DataFrame):
    fig, ax = figure(1, 1, (8, 4))
    ax = ax[0, 0]
    labels = [f"{c}\n{n}" for c, n in piv.index]
    x = np.arange(len(piv))
    for i, h in enumerate(("H1", "H3")):
        v = d.set_index(["conf", "network"]).loc[piv.index]
        v = v[v["heuristic"] == h]["normalised_time"]
        ax.bar(x + i * 0.4, v, 0.4, label=h)
    ax.set_xticks(x + 0.2, labels, fontsize=7)
    ax.set_ylabel("convergence time / group minimum")
    ax.set_title("H1 vs H3 (ResNet50, YOLOv3 on C1-C5)")
    ax.legend()
    return fig


def fig8(ctx: Context) -> Artifact:
    d, piv, claims = fig8_table(ctx)
    return artifact(d.reset_index(drop=True), plot_fig8(d, piv), claims, [])
