"""``pipeit:table3``: the per-layer prediction error of eqs. 5-8 (Table III)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, STRUCTURAL, Artifact, Context
from hetsim_papers.pipeit.cost import prediction_errors
from hetsim_papers.pipeit.experiments._common import bar_axes, floats
from hetsim_papers.pipeit.experiments.paper import (
    CONFIGS,
    LABELS,
    NETWORKS,
    TABLE_III,
    TABLE_III_AVERAGE,
)
from hetsim_papers.pipeit.experiments.runs import setup


def table3_table(ctx: Context) -> tuple[pd.DataFrame, pd.DataFrame, list, list[str]]:
    s = setup()
    eps = [s.platform.ep(c) for c in CONFIGS]
    errs = pd.concat([prediction_errors(s.predictor, s.truth, s.workloads[n], eps) for n in NETWORKS])
    per = errs.groupby(["workload", "ep"]).abs_error.mean().unstack()[list(CONFIGS)] * 100
    rows = []
    for n in NETWORKS:
        for c, paper in zip(CONFIGS, TABLE_III[n], strict=True):
            rows.append({"cnn": LABELS[n], "config": c, "paper_pct": paper, "hetsim_pct": per.loc[n, c],
                         "conv_layers": int((errs.workload == n).sum() / len(CONFIGS))})
    table = pd.DataFrame(rows)
    # Pooled over GEMM conv layers (our reading of Table III's Average row: docs/papers/pipeit.md).
    pooled = {t: 100 * errs[errs.ep.str.startswith(t)].abs_error.mean() for t in ("B", "s")}
    fc = pd.concat([prediction_errors(s.predictor, s.truth, s.workloads[n], eps, kinds=("fc",)) for n in NETWORKS])
    dw = prediction_errors(s.predictor, s.truth, s.workloads["mobilenet"], eps, kinds=("dw",))
    claims = [ctx.close(f"average error, {'Big' if t == 'B' else 'Small'} configurations (%)",
                        TABLE_III_AVERAGE[t], pooled[t], abs_=4.0, kind=PREDICTION) for t in ("B", "s")]
    # One-sided: any predictor at least as accurate as the paper's passes, and eqs. 5-8 fitted to a smooth
    # ground truth (an assumption) are: it echoes the assumption, it predicts nothing.
    claims.append(ctx.true("every CNN x configuration error <= the paper's worst (21.5 %)", 21.5,
                           float(table.hetsim_pct.max()), table.hetsim_pct.max() <= 21.5, "<= 21.5",
                           kind=STRUCTURAL))
    claims.append(ctx.true("MobileNet has the highest Big-configuration error", "MobileNet",
                           LABELS[per[["B1", "B2", "B3", "B4"]].mean(axis=1).idxmax()],
                           per[["B1", "B2", "B3", "B4"]].mean(axis=1).idxmax() == "mobilenet", "exact",
                           kind=PREDICTION))
    notes = [f"Predictor fitted on the 900-point micro-benchmark grid (stride 1, same padding) run on the ground "
             f"truth, weighted least squares on relative error. FC layers (separate regression per neuron count): "
             f"mean error {100 * fc.abs_error.mean():.1f} % (paper 14.4 %); MobileNet depthwise layers (own grid): "
             f"{100 * dw.abs_error.mean():.1f} % (not in Table III).",
             "Fitted coefficients (s; β1..β8 of eq. 5 for N, K, M, NK, KM, NM, NKM, 1; α1..α3 of eqs. 6-7): "
             + "; ".join(f"{ct}: β = {floats(f.betas)}, α = {floats(f.alphas)}" for ct, f in s.predictor.conv.items()),
             "Error sources in hetsim: eq. 7's whole 8-row iterations vs the ground truth's even split, M padded to "
             "12-column blocks, the roofline max(compute, memory), layers outside the grid (K = 27/147, M = 16/1000/2048), "
             "shared-L2 contention and overheads that eqs. 5-8 model only linearly. The ground truth is smoother than "
             "a real board (no cache-capacity cliffs, no measurement noise)."]
    return table, per, claims, notes


def plot_table3(per: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(7, 4))
    x = np.arange(len(NETWORKS))
    for j, (t, label) in enumerate((("B", "Big"), ("s", "Small"))):
        cols = [c for c in CONFIGS if c.startswith(t)]
        ax.bar(x + (j - 0.5) * 0.38, [per.loc[n, cols].mean() for n in NETWORKS], 0.36, label=f"hetsim {label}")
        ax.scatter(x + (j - 0.5) * 0.38, [np.mean([v for c, v in zip(CONFIGS, TABLE_III[n], strict=True)
                                                   if c.startswith(t)]) for n in NETWORKS],
                   marker="_", s=300, color="k", label=f"paper {label}" if j == 0 else None)
    bar_axes(ax, "mean |predicted − truth| / truth (%)", "Table III: per-layer prediction error (conv layers)")
    return fig


def table3(ctx: Context) -> Artifact:
    table, per, claims, notes = table3_table(ctx)
    return Artifact(table, plot_table3(per), claims, notes)
