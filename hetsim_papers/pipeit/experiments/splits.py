"""``pipeit:fig8`` (B4-s4 throughput against the split ratio X/W) and ``pipeit:fig9`` (ResNet50
B4-s2-s2 over both split points): eq. 11 on the ground truth (:mod:`hetsim_papers.pipeit.experiments.runs`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.pipeit.experiments.paper import FIG8_RANGE, FIG9_PEAK, LABELS, NETWORKS
from hetsim_papers.pipeit.experiments.runs import Surface, b4_s4_sweep, resnet50_b4_s2_s2


# -- Fig. 8 ---------------------------------------------------------------------------------------------
def fig8_claims(ctx: Context, table: pd.DataFrame) -> tuple[list, list[str]]:
    best = table.loc[table.groupby("cnn").fps.idxmax()].set_index("cnn")
    lo, hi = best.ratio.idxmin(), best.ratio.idxmax()
    claims = [
        ctx.close("lowest optimal X/W (GoogLeNet in the paper)", FIG8_RANGE[0], float(best.ratio.min()), abs_=0.05,
                  kind=PREDICTION),
        ctx.close("highest optimal X/W (AlexNet in the paper)", FIG8_RANGE[1], float(best.ratio.max()), abs_=0.05,
                  kind=PREDICTION),
        ctx.equal("CNN with the lowest optimal ratio", "GoogLeNet", lo, kind=PREDICTION),
        ctx.equal("CNN with the highest optimal ratio", "AlexNet", hi, kind=PREDICTION),
        ctx.true("every optimum within [0.60, 0.90] (+-0.05)", "0.60-0.90",
                 {k: round(float(v), 3) for k, v in best.ratio.items()},
                 best.ratio.between(FIG8_RANGE[0] - 0.05, FIG8_RANGE[1] + 0.05).all(), "all in [0.55, 0.95]",
                 kind=PREDICTION),
    ]
    notes = ["Eq. 11 on the ground truth (analytic, with CCI hand-offs); X = 0 is s4 alone, X = W is B4 alone. "
             "Optimal X per CNN: " + ", ".join(f"{k} {int(r.X)}/{int(r.W)}" for k, r in best.iterrows())]
    return claims, notes


def plot_fig8(table: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(7, 4))
    for n in NETWORKS:
        t = table[table.cnn == LABELS[n]]
        ax.plot(t.ratio, t.normalised, marker=".", label=LABELS[n])
    ax.set_xlabel("split ratio X/W (layers on B4 / all layers)")
    ax.set_ylabel("throughput / best (-)")
    ax.set_title("Fig. 8: B4-s4 pipelines")
    ax.legend(fontsize=8)
    return fig


def fig8(ctx: Context) -> Artifact:
    table = b4_s4_sweep()
    claims, notes = fig8_claims(ctx, table)
    return Artifact(table, plot_fig8(table), claims, notes)


# -- Fig. 9 ---------------------------------------------------------------------------------------------
def fig9_claims(ctx: Context, sf: Surface) -> tuple[list, list[str]]:
    table = sf.table
    i = int(table.fps.idxmax())
    x1, x2 = int(table.X1[i]), int(table.X2[i])
    gain = 100 * (sf.peak_run.stream_fps / sf.best_two_run.stream_fps - 1)
    claims = [
        ctx.close("peak X1 (last layer on B4)", FIG9_PEAK[0], x1, abs_=3, kind=PREDICTION),
        ctx.close("peak X2 (last layer of stage 2)", FIG9_PEAK[1], x2, abs_=3, kind=PREDICTION),
        ctx.close("peak throughput (imgs/s, 50-image stream)", FIG9_PEAK[2], sf.peak_run.stream_fps, rel=0.15,
                  kind=PREDICTION),
        ctx.close("best B4-s2-s2 over best B4-s4 (%)", FIG9_PEAK[3], gain, abs_=5.0, kind=PREDICTION),
    ]
    notes = [f"Surface: eq. 11 on the ground truth over all {len(table)} (X1, X2); the peak {sf.peak} and the best "
             f"B4-s4 {sf.best_two} are then streamed through the DES ({sf.peak_run.stream_fps:.2f} and "
             f"{sf.best_two_run.stream_fps:.2f} imgs/s; steady state {sf.peak_run.steady_fps:.2f} and "
             f"{sf.best_two_run.steady_fps:.2f})."]
    return claims, notes


def plot_fig9(sf: Surface):
    table = sf.table
    W = sf.num_layers
    i = int(table.fps.idxmax())
    x1, x2 = int(table.X1[i]), int(table.X2[i])
    grid = np.full((W, W), np.nan)
    grid[table.X1.to_numpy(), table.X2.to_numpy()] = table.fps.to_numpy()
    fig, ax = plt.subplots(figsize=(6, 5))
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    ax.plot([x2], [x1], "r+", ms=12, label=f"hetsim peak ({x1}, {x2})")
    ax.plot([FIG9_PEAK[1]], [FIG9_PEAK[0]], "wx", ms=10, label=f"paper peak ({FIG9_PEAK[0]}, {FIG9_PEAK[1]})")
    fig.colorbar(im, ax=ax, label="throughput, eq. 11 (imgs/s)")
    ax.set_xlabel("X2: last layer of stage 2 (s2)")
    ax.set_ylabel("X1: last layer of stage 1 (B4)")
    ax.set_title("Fig. 9: ResNet50 B4-s2-s2")
    ax.legend(fontsize=8, loc="upper left")
    return fig


def fig9(ctx: Context) -> Artifact:
    sf = resnet50_b4_s2_s2()
    claims, notes = fig9_claims(ctx, sf)
    return Artifact(sf.table, plot_fig9(sf), claims, notes)
