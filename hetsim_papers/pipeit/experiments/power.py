"""``pipeit:table8``: active power and energy efficiency of Big, Small and Pipe-it (Table VIII), from
the power model fitted in :func:`hetsim_papers.pipeit.experiments.runs.power_fit`."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hetsim.experiment import FIT_DEPENDENT, Artifact, Context
from hetsim.power import active_power_W
from hetsim_papers.pipeit.experiments._common import bar_axes
from hetsim_papers.pipeit.experiments.calibration import PowerFit
from hetsim_papers.pipeit.experiments.paper import LABELS, NETWORKS, TABLE_VIII
from hetsim_papers.pipeit.experiments.runs import power_fit, setup


def table8_table(ctx: Context) -> tuple[pd.DataFrame, list]:
    s = setup()
    _pfit, platform = power_fit()
    rows = []
    for n in NETWORKS:
        row: dict[str, object] = {"cnn": LABELS[n]}
        for kind, key, col in (("big", "big", 0), ("small", "small", 1), ("pipeit", "predicted", 2)):
            r = s.runs[(n, key)]
            # core-seconds on a 1-core EP of the cluster
            busy = [(platform.ep(f"{cluster}:1"), cs) for cluster, cs in r.core_s.items()]
            p = active_power_W(platform, busy, r.makespan_s, coherent_s=r.coherent_s)
            row[f"power_{kind}_paper_W"] = TABLE_VIII[n][col]
            row[f"power_{kind}_W"] = p
            row[f"eff_{kind}_paper"] = TABLE_VIII[n][col + 3]
            row[f"eff_{kind}_imgs_per_J"] = r.stream_fps / p
        rows.append(row)
    table = pd.DataFrame(rows)
    # Every claim here rests on the power fit: Pipe-it's power goes through coherence_W, fitted on that very
    # column; Big and Small efficiencies are ratios of two fitted columns (Table IV's fps, Table VIII's W).
    claims = []
    for i, n in enumerate(NETWORKS):
        claims.append(ctx.close(f"{LABELS[n]}: Pipe-it active power (W)", TABLE_VIII[n][2], table.power_pipeit_W[i],
                                rel=0.15, kind=FIT_DEPENDENT))
        for kind, col in (("big", 3), ("small", 4), ("pipeit", 5)):
            claims.append(ctx.close(f"{LABELS[n]}: {kind} efficiency (imgs/J)", TABLE_VIII[n][col],
                                    table[f"eff_{kind}_imgs_per_J"][i], rel=0.20, kind=FIT_DEPENDENT))
    ratio = table.eff_pipeit_imgs_per_J / table.eff_big_imgs_per_J
    claims.append(ctx.true("Pipe-it efficiency about Big's (trades power for throughput): ratio in [0.8, 1.1]",
                           "0.86-1.0", [round(float(x), 3) for x in ratio], ratio.between(0.8, 1.1).all(),
                           "all in [0.8, 1.1]", kind=FIT_DEPENDENT))
    more = (table.power_pipeit_W > table.power_big_W + table.power_small_W).all()
    claims.append(ctx.true("Pipe-it draws more power than Big + Small", "all", "all" if more else "not all",
                           more, "all", kind=FIT_DEPENDENT))
    return table, claims


def power_notes(pfit: PowerFit) -> list[str]:
    return [f"Power model: P_A = Σ busy core-s x (active - idle W per core) / makespan + coherence_W x (time both "
            f"clusters busy) / makespan. Fitted: {pfit.active_W_per_core['big']:.3f} W per busy A73, "
            f"{pfit.active_W_per_core['little']:.3f} W per busy A53 (least squares on the Big and Small columns), "
            f"coherence_W = {pfit.coherence_W:.3f} W (on the Pipe-it column). Big and Small power are fitted, so only "
            "their spread across CNNs is information: per-CNN residuals in the CSV of this table's fit: "
            + ", ".join(f"{r.workload}/{r.run} {100 * r.error:+.0f} %" for r in pfit.table.itertuples())]


def plot_table8(table: pd.DataFrame):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    x = np.arange(len(NETWORKS))
    for j, kind in enumerate(("big", "small", "pipeit")):
        axes[0].bar(x + (j - 1) * 0.27, table[f"power_{kind}_W"], 0.25, label=f"hetsim {kind}")
        axes[0].scatter(x + (j - 1) * 0.27, table[f"power_{kind}_paper_W"], marker="_", s=150, color="k",
                        label="paper" if j == 0 else None)
        axes[1].bar(x + (j - 1) * 0.27, table[f"eff_{kind}_imgs_per_J"], 0.25, label=f"hetsim {kind}")
        axes[1].scatter(x + (j - 1) * 0.27, table[f"eff_{kind}_paper"], marker="_", s=150, color="k",
                        label="paper" if j == 0 else None)
    bar_axes(axes[0], "active power (W)", "Table VIII: power")
    bar_axes(axes[1], "efficiency (imgs/J)", "Table VIII: efficiency")
    return fig


def table8(ctx: Context) -> Artifact:
    table, claims = table8_table(ctx)
    return Artifact(table, plot_table8(table), claims, power_notes(power_fit()[0]))
