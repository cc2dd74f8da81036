"""``pipeit:calibration``: the ground truth fitted to Table IV's Big-only and Small-only columns
(hetsim_papers.pipeit.experiments.calibration), its parameters and residuals."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hetsim.experiment import FIT_INPUT, Artifact, Context
from hetsim_papers.pipeit.experiments.calibration import GroundTruthFit
from hetsim_papers.pipeit.experiments.runs import setup


def calibration_table(ctx: Context, fit: GroundTruthFit) -> tuple[pd.DataFrame, list, list[str]]:
    table = fit.table[["cluster", "label", "stated_fps", "fitted_fps", "error"]].copy()
    params = pd.DataFrame([{"cluster": "", "label": k, "stated_fps": np.nan, "fitted_fps": v, "error": np.nan}
                           for k, v in fit.values.items()])
    table = pd.concat([table, params], ignore_index=True)
    claims = [ctx.close(f"[fit] {row.label} (imgs/s)", row.stated_fps, row.fitted_fps, rel=0.10, kind=FIT_INPUT)
              for row in fit.table.itertuples()]
    notes = ["Calibration inputs, not independent checks: 4 parameters per cluster fitted to 5 throughputs "
             "(log least squares). Fitted: " + ", ".join(f"{k.split('.', 1)[1]} = {v:.4g}"
                                                           for k, v in fit.values.items()),
             "Fixed assumptions: " + "; ".join(fit.fixed),
             f"RMS log error: big {fit.fits['big'].rms_log_error:.3f}, little {fit.fits['little'].rms_log_error:.3f}."]
    return table, claims, notes


def plot_calibration(fit: GroundTruthFit):
    fig, ax = plt.subplots(figsize=(6, 4))
    for cluster, marker in (("big", "o"), ("little", "s")):
        t = fit.table[fit.table.cluster == cluster]
        ax.scatter(t.stated_fps, t.fitted_fps, marker=marker, label=f"{cluster} (B4 / s4)")
    lim = [0, 1.1 * fit.table.stated_fps.max()]
    ax.plot(lim, lim, "k--", lw=0.8, label="y = x")
    ax.set_xlabel("Table IV throughput (imgs/s)")
    ax.set_ylabel("fitted ground truth (imgs/s)")
    ax.set_title("Pipe-it ground-truth calibration")
    ax.legend(fontsize=8)
    return fig


def calibration(ctx: Context) -> Artifact:
    fit = setup().fit
    table, claims, notes = calibration_table(ctx, fit)
    return Artifact(table, plot_calibration(fit), claims, notes)
