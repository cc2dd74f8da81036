"""``shisha:calibration``: the fit of the chiplets (hetsim_papers.shisha.experiments.calibration), its
residuals, and the FEP/SEP layer-time ratio it leaves (2-4x assumed: docs/papers/shisha.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hetsim.experiment import FIT_INPUT, PREDICTION, Artifact, Context
from hetsim_papers.shisha.experiments._common import artifact, figure, within_factor
from hetsim_papers.shisha.experiments.calibration import (
    EFF_BIG,
    EFF_LITTLE,
    Calibration,
    calibration,
)
from hetsim_papers.shisha.experiments.paper import (
    FIG4_BEST_FPS,
    NETWORKS,
    SAME,
    YOLO_CONVERGENCE_S,
    YOLO_TRIALS,
)
from hetsim_papers.shisha.experiments.runs import fep_sep_ratios, fig4_es


def calibration_table(ctx: Context) -> tuple[pd.DataFrame, list, list[str]]:
    cal = calibration()
    es = fig4_es()
    ratio_df = fep_sep_ratios()
    rows = [
        {"kind": "parameter", "name": f"{EFF_BIG} = {EFF_LITTLE} (tied)", "value": cal.efficiency,
         "stated": None, "simulated": None, "error": None,
         "source": "fit_platform, least squares on log throughput; start = the file's 0.0132"},
        {"kind": "parameter", "name": "Measurement.frames_per_trial", "value": cal.frames_per_trial,
         "stated": None, "simulated": None, "error": None,
         "source": f"round({YOLO_CONVERGENCE_S} s / Shisha H3 tuning clock at 1 frame per trial, "
                   f"{cal.yolo_clock_per_frame_s:.1f} s)"},
    ]
    for r in cal.fit.table.itertuples():
        rows.append({"kind": "observation", "name": f"{r.label}: {r.mapping}", "value": None,
                     "stated": r.stated_fps, "simulated": r.fitted_fps, "error": r.error, "source": "fitted"})
    rows.append({"kind": "observation", "name": "YOLOv3 Shisha H3 tuning time on chiplet-c2, s", "value": None,
                 "stated": YOLO_CONVERGENCE_S, "simulated": cal.yolo_clock_s,
                 "error": cal.yolo_clock_s / YOLO_CONVERGENCE_S - 1, "source": "fitted (integer frames)"})
    for r in ratio_df.itertuples():
        rows.append({"kind": "check", "name": f"SEP/FEP layer-time ratio, {r.workload} on chiplet-{r.conf}",
                     "value": r.median_sep_over_fep, "stated": None, "simulated": None, "error": None,
                     "source": f"median (min {r.min:.3f}, max {r.max:.3f}); 2-4x assumed"})
    # The FEP/SEP ratio (rows "check") is no claim: the paper gives no number (2-4x is our
    # assumption, docs/papers/shisha.md) and with the tied efficiency it is the assumed peak ratio, 4x.
    claims = [
        ctx.close("Fig. 4 ES optimum, SynthNet on C5, f/s (fit input)", FIG4_BEST_FPS, es.best_fps, rel=SAME,
                  kind=FIT_INPUT),
        ctx.close("YOLOv3 Shisha convergence on C2, s (fit input, integer frames)", YOLO_CONVERGENCE_S,
                  cal.yolo_clock_s, rel=0.1, kind=FIT_INPUT),
        within_factor(ctx, "YOLOv3 Shisha configurations tried (C2)", YOLO_TRIALS, cal.yolo_trials,
                      kind=PREDICTION),
    ]
    notes = [f"Fit: one stated throughput (Fig. 4, {FIG4_BEST_FPS} f/s) identifies one parameter, the GEMM "
             f"efficiency shared by Big and Little cores (the Big:Little per-core ratio stays the peak ratio, "
             f"2 GHz x 8 MAC vs 1 GHz x 4 MAC = 4x). The observation is the ES optimum {cal.fig4_mapping}; the "
             f"fit and the exhaustive search reached a fixed point in {cal.iterations} iteration(s). Residual "
             f"{cal.fit.rms_log_error:.2g} (rms log error).",
             f"frames_per_trial = {cal.frames_per_trial}: Shisha H3 on YOLOv3 (chiplet-c2) takes "
             f"{cal.yolo_trials} trials and {cal.yolo_clock_per_frame_s:.1f} s of stage time at one frame "
             f"per trial; the paper's 24 min for 18 configurations is {cal.yolo_clock_s:.0f} s here "
             f"({cal.yolo_clock_s / cal.yolo_trials:.0f} s per trial vs the paper's "
             f"{YOLO_CONVERGENCE_S / YOLO_TRIALS:.0f} s)."]
    return pd.DataFrame(rows), claims, notes


def plot_calibration(ratio_df: pd.DataFrame, cal: Calibration):
    fig, ax = figure(1, 1, (6.5, 3.6))
    ax = ax[0, 0]
    x = np.arange(len(ratio_df))
    ax.bar(x, ratio_df["median_sep_over_fep"], color="tab:blue")
    ax.axhspan(2, 4, color="tab:green", alpha=0.15, label="assumed: 2-4x")
    ax.set_xticks(x, [f"{NETWORKS[w]}\n{c}" for c, w in zip(ratio_df["conf"], ratio_df["workload"], strict=True)])
    ax.set_ylabel("SEP / FEP layer time (median, x)")
    ax.set_title(f"Fitted GEMM efficiency {cal.efficiency:.5f}, {cal.frames_per_trial} frames per trial")
    ax.legend(loc="lower right")
    return fig


def calibration_experiment(ctx: Context) -> Artifact:
    table, claims, notes = calibration_table(ctx)
    return artifact(table, plot_calibration(fep_sep_ratios(), calibration()), claims, notes)
