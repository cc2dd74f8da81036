"""``pipeit:fig12``: speedup of AlexNet's conv layers with 1-4 Big / 1-4 Small cores (ground truth)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, STRUCTURAL, Artifact, Context
from hetsim_papers.pipeit.experiments.runs import setup

#: The five conv layers; the grouped conv2/4/5 run as two ARM-CL nodes each: their times add.
ALEXNET_CONV = {"conv1": [1], "conv2": [2, 3], "conv3": [4], "conv4": [5, 6], "conv5": [7, 8]}


def fig12_table(ctx: Context) -> tuple[pd.DataFrame, list]:
    s = setup()
    w = s.workloads["alexnet"]
    rows = []
    for t in ("B", "s"):
        for name, layers in ALEXNET_CONV.items():
            times = [float(sum(s.truth.layer_times(w, s.platform.ep(f"{t}{c}"))[li - 1] for li in layers))
                     for c in range(1, 5)]
            for c in range(1, 5):
                rows.append({"cluster": "Big" if t == "B" else "Small", "layer": name, "cores": c,
                             "time_ms": 1e3 * times[c - 1], "speedup": times[0] / times[c - 1]})
    table = pd.DataFrame(rows)
    concave, spreads = True, {}
    for _key, t in table.groupby(["cluster", "layer"]):
        sp = t.sort_values("cores").speedup.to_numpy()
        concave &= bool(np.all(np.diff(sp, 2) <= 1e-9) and np.all(np.diff(sp) > 0))
    for cl, t in table[table.cores == 4].groupby("cluster"):
        spreads[cl] = float(t.speedup.max() - t.speedup.min())
    # Every layer of every network, not just AlexNet's five.
    all_concave = True
    for wl in s.workloads.values():
        for t in ("B", "s"):
            T = np.column_stack([s.truth.layer_times(wl, s.platform.ep(f"{t}{c}")) for c in range(1, 5)])
            sp = T[:, :1] / T
            all_concave &= bool(np.all(np.diff(sp, 2, axis=1) <= 1e-9))
    # Concavity is built into the ground truth (even split, contention 1 / (1 + c(n - 1))): structural.
    claims = [ctx.true("speedup increasing and concave in the core count, every AlexNet conv layer", "concave",
                       "concave" if concave else "not concave", concave, "second differences <= 0",
                       kind=STRUCTURAL),
              ctx.true("concave for every layer of all five CNNs", "concave (Fig. 12, eq. 12's premise)",
                       "concave" if all_concave else "not concave", all_concave, "second differences <= 0",
                       kind=STRUCTURAL),
              ctx.true("layers gain differently from cores (4-core speedup spread)", "differ",
                       {k: round(v, 3) for k, v in spreads.items()}, min(spreads.values()) > 0.05, "> 0.05",
                       kind=PREDICTION)]
    return table, claims


def plot_fig12(table: pd.DataFrame):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, cl in zip(axes, ("Big", "Small"), strict=True):
        for name in ALEXNET_CONV:
            t = table[(table.cluster == cl) & (table.layer == name)]
            ax.plot(t.cores, t.speedup, marker="o", label=name)
        ax.plot([1, 4], [1, 4], "k:", lw=0.8, label="linear")
        ax.set_xlabel(f"{cl} cores")
        ax.set_title(f"Fig. 12({'a' if cl == 'Big' else 'b'}): {cl}")
        ax.set_xticks([1, 2, 3, 4])
    axes[0].set_ylabel("speedup over 1 core (-)")
    axes[0].legend(fontsize=8)
    return fig


def fig12(ctx: Context) -> Artifact:
    table, claims = fig12_table(ctx)
    notes = ["Concavity comes from shared-L2 contention (assumed 3 % per added core), the per-op overhead and the "
             "bandwidth cap of memory-bound ops; the ground truth splits work evenly (split='even'). With eq. 7's whole "
             "8-row iterations (PipeitGroundTruth(split='tiles')) a layer with N = 169 (22 iterations: 8 per thread on "
             "3 cores, 6 on 4) speeds up more from 3 to 4 cores than from 2 to 3, which contradicts Fig. 12."]
    return Artifact(table, plot_fig12(table), claims, notes)
