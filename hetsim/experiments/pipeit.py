"""Pipe-it (Wang et al., IEEE TCAD 2019): CNN pipelines on big.LITTLE (001 digest).

Every number comes out of hetsim: the ground truth (hetsim/cost/pipeit.py) fitted to Table IV's
Big-only and Small-only columns by hetsim/experiments/pipeit_calibration.py plays the HiKey 970, Pipe-it's
predictor (eqs. 5-8) is fitted on micro-benchmarks "run" on it, Algorithms 1-3
(hetsim/explore/pipeit.py) choose pipelines from the measured and the predicted T matrices, and the
SimPy engine streams 50 frames through each pipeline. Table VII is held back from the fit.

Claims the simulator does not reproduce stay in the scorecard as failures; the ones understood are
listed with their reason in hetsim/experiments/known_disagreements.yaml and explained in
docs/papers/pipeit.md, with every choice the paper leaves open.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from hetsim.analytic import SplitScorer  # noqa: E402
from hetsim.cost.kernel_level import KernelLevel  # noqa: E402
from hetsim.cost.pipeit import PipeitGroundTruth, PipeitPredictor, prediction_errors  # noqa: E402
from hetsim.evaluate import simulate  # noqa: E402
from hetsim.experiment import Artifact, Context, experiment  # noqa: E402
from hetsim.experiments.pipeit_calibration import (  # noqa: E402
    FIG5_MOST,
    LABELS,
    NETWORKS,
    TABLE_IV,
    TABLE_IV_AVERAGE_BENEFIT,
    TABLE_VII,
    TABLE_VII_AVERAGE_BENEFIT,
    TABLE_VIII,
    GroundTruthFit,
    PowerRun,
    fig5_shares,
    fit_ground_truth,
    fit_hmp_slowdown,
    fit_power,
)
from hetsim.explore.pipeit import (  # noqa: E402
    PipeitDesign,
    best_configuration,
    n_design_points,
    n_pipelines,
    pipeit_design,
    throughput,
)
from hetsim.mapping import Pipeline, load_mapping  # noqa: E402
from hetsim.platform import Platform  # noqa: E402
from hetsim.power import active_power_W  # noqa: E402
from hetsim.workload import load_workload  # noqa: E402

PAPER = "pipeit"
FRAMES = 50                 # [paper] a stream of 50 images per data point
CONFIGS = ("B1", "B2", "B3", "B4", "s1", "s2", "s3", "s4")
#: Table I: ARM-CL major layers W.
TABLE_I = {"alexnet": 11, "googlenet": 58, "mobilenet": 28, "resnet50": 54, "squeezenet": 26}
#: Table III [paper] (%), columns 1B..4B, 1s..4s.
TABLE_III = {
    "alexnet": (11.3, 11.9, 12.3, 13.1, 9.6, 10.5, 10.5, 11.1),
    "googlenet": (13.8, 15.0, 15.1, 15.0, 8.8, 9.5, 9.6, 8.9),
    "mobilenet": (21.5, 19.5, 17.2, 17.7, 18.6, 17.1, 17.2, 18.5),
    "resnet50": (8.2, 7.5, 8.0, 8.4, 11.5, 10.9, 11.1, 12.1),
    "squeezenet": (18.1, 17.9, 18.0, 17.7, 13.9, 13.0, 11.8, 12.7),
}
TABLE_III_AVERAGE = {"B": 13.2, "s": 11.4}
#: Tables V (predicted T) and VI (measured T) [paper]: configuration and 1-based layer ranges.
TABLE_V = {
    "alexnet": ("B4-s4", [(1, 9), (10, 11)]),
    "googlenet": ("B4-s2-s1-s1", [(1, 29), (30, 41), (42, 45), (46, 58)]),
    "mobilenet": ("B2-B2-s3-s1", [(1, 11), (12, 21), (22, 26), (27, 28)]),
    "resnet50": ("B4-s2-s2", [(1, 35), (36, 44), (45, 54)]),
    "squeezenet": ("B4-s4", [(1, 16), (17, 26)]),
}
TABLE_VI = {
    "alexnet": ("B4-s4", [(1, 9), (10, 11)]),
    "googlenet": ("B4-s2-s1-s1", [(1, 25), (26, 39), (40, 44), (45, 58)]),
    "mobilenet": ("B2-B2-s3-s1", [(1, 11), (12, 19), (20, 26), (27, 28)]),
    "resnet50": ("B2-B2-s3-s1", [(1, 16), (17, 34), (35, 47), (48, 54)]),
    "squeezenet": ("B4-s4", [(1, 19), (20, 26)]),
}
#: Fig. 8 [paper]: optimal B4-s4 split ratio X/W from 0.60 (GoogLeNet) to 0.90 (AlexNet).
FIG8_RANGE = (0.60, 0.90)
#: Fig. 9 [paper]: ResNet50 B4-s2-s2 peaks at 5.6 imgs/s at X1 = 33, X2 = 45; +7 % over the best B4-s4.
FIG9_PEAK = (33, 45, 5.6, 7.0)

# -- the shared state: calibration, predictor, designs, runs ---------------------------------------------
@dataclass
class Run:
    mapping: str
    config: str
    stream_fps: float           # 50 frames / makespan, fill and drain included (the paper's figure)
    steady_fps: float           # steady state, warm-up excluded
    eq11_fps: float             # eq. 11 on the ground truth (analytic, no contention)
    core_s: dict[str, float]    # busy core-seconds per cluster
    coherent_s: float           # time both clusters were busy at once
    makespan_s: float


@dataclass
class Setup:
    fit: GroundTruthFit
    platform: Platform
    truth: PipeitGroundTruth
    predictor: PipeitPredictor
    workloads: dict
    designs: dict               # (cnn, "measured" | "predicted") -> PipeitDesign
    runs: dict                  # (cnn, "big" | "small" | "measured" | "predicted") -> Run


def run_pipeline(platform, workload, pipe: Pipeline, truth: PipeitGroundTruth, frames: int = FRAMES) -> Run:
    """Stream ``frames`` images through ``pipe`` in the DES (contention on) with the ground truth."""
    res = simulate(platform, workload, pipe, engine="des", cost=truth, frames=frames, contention=True)
    eq11 = simulate(platform, workload, pipe, engine="analytic", cost=truth, frames=frames).metrics
    m = res.metrics
    return Run(str(pipe), pipe.config, m.stream_throughput_fps, m.throughput_fps, eq11.throughput_fps,
               dict(m.core_busy_s), m.coherent_s, m.makespan_s)


@lru_cache(maxsize=1)
def setup() -> Setup:
    fit = fit_ground_truth()
    platform = fit.platform()
    truth = PipeitGroundTruth(platform, split=fit.split)
    predictor = PipeitPredictor.fit(platform, truth)
    workloads = {n: load_workload(n) for n in NETWORKS}
    designs, runs = {}, {}
    for n, w in workloads.items():
        for kind, ep in (("big", "B4"), ("small", "s4")):
            runs[(n, kind)] = run_pipeline(platform, w, load_mapping(f"{ep}:1-{w.num_layers}", platform, w), truth)
        for kind, cost in (("measured", truth), ("predicted", predictor)):
            d = designs[(n, kind)] = pipeit_design(platform, w, cost)
            runs[(n, kind)] = run_pipeline(platform, w, d.pipeline, truth)
    return Setup(fit, platform, truth, predictor, workloads, designs, runs)


def _floats(xs) -> str:
    return "[" + ", ".join(f"{x:.3g}" for x in xs) + "]"


def _pct(x: float) -> float:
    return 100.0 * x


def _bar_axes(ax, ylabel: str, title: str):
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_xticks(range(len(NETWORKS)), [LABELS[n] for n in NETWORKS])
    ax.legend(fontsize=8)


# -- Table I and the design-space counts --------------------------------------------------------------------
@experiment(PAPER, "table1", "Table I: major layers per CNN, and the design-space counts of eqs. 1-2")
def table1(ctx: Context) -> Artifact:
    rows = []
    for n in NETWORKS:
        w = load_workload(n)
        rows.append({"cnn": LABELS[n], "W_paper": TABLE_I[n], "W_hetsim": w.num_layers,
                     "gmac": w.layer_macs().sum() / 1e9,
                     "design_points_eq2": n_design_points(w.num_layers, 4, 4)})
    table = pd.DataFrame(rows)
    claims = [ctx.equal(f"{LABELS[n]}: W major layers", TABLE_I[n], int(table.W_hetsim[i]))
              for i, n in enumerate(NETWORKS)]
    counts = [n_pipelines(p, 4, 4) for p in range(2, 9)]
    claims += [
        ctx.equal("4B+4s: pipeline configurations over p = 2..8 (eq. 1)", 64, sum(counts)),
        ctx.equal("4B+4s: C_p for p = 2..8 (digest 5.4)", [1, 6, 15, 20, 15, 6, 1], counts),
        ctx.equal("3B+2s: pipeline configurations (Table VII's space)", 8,
                  sum(n_pipelines(p, 3, 2) for p in range(2, 6))),
        ctx.equal("MobileNet (W = 28): design points D_W (eq. 2)", 5_379_616, n_design_points(28, 4, 4)),
    ]
    notes = ["Eq. 2 as printed gives 4,272,048 design points for W = 28 (closed form C(W+H-3, H-1)); the "
             "paper's 5,379,616 is the W = 29 value (digest 5.4). hetsim evaluates the equation as printed."]
    return Artifact(table, None, claims, notes)


# -- calibration ------------------------------------------------------------------------------------------------
@experiment(PAPER, "calibration", "Ground truth fitted to Table IV's Big-only and Small-only columns")
def calibration(ctx: Context) -> Artifact:
    fit = setup().fit
    table = fit.table[["cluster", "label", "stated_fps", "fitted_fps", "error"]].copy()
    params = pd.DataFrame([{"cluster": "", "label": k, "stated_fps": np.nan, "fitted_fps": v, "error": np.nan}
                           for k, v in fit.values.items()])
    table = pd.concat([table, params], ignore_index=True)
    claims = [ctx.close(f"[fit] {row.label} (imgs/s)", row.stated_fps, row.fitted_fps, rel=0.10)
              for row in fit.table.itertuples()]
    notes = ["Calibration inputs, not independent checks: 4 parameters per cluster fitted to 5 throughputs "
             "(log least squares). Fitted: " + ", ".join(f"{k.split('.', 1)[1]} = {v:.4g}"
                                                           for k, v in fit.values.items()),
             "Fixed assumptions: " + "; ".join(fit.fixed),
             f"RMS log error: big {fit.fits['big'].rms_log_error:.3f}, little {fit.fits['little'].rms_log_error:.3f}."]
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
    return Artifact(table, fig, claims, notes)


# -- Table III -----------------------------------------------------------------------------------------------------
@experiment(PAPER, "table3", "Table III: per-layer prediction error of eqs. 5-8")
def table3(ctx: Context) -> Artifact:
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
    # Pooled over GEMM conv layers (the digest's reading of the Average row, 4.6).
    pooled = {t: 100 * errs[errs.ep.str.startswith(t)].abs_error.mean() for t in ("B", "s")}
    fc = pd.concat([prediction_errors(s.predictor, s.truth, s.workloads[n], eps, kinds=("fc",)) for n in NETWORKS])
    dw = prediction_errors(s.predictor, s.truth, s.workloads["mobilenet"], eps, kinds=("dw",))
    claims = [ctx.close(f"average error, {'Big' if t == 'B' else 'Small'} configurations (%)",
                        TABLE_III_AVERAGE[t], pooled[t], abs_=4.0) for t in ("B", "s")]
    claims.append(ctx.true("every CNN x configuration error <= the paper's worst (21.5 %)", 21.5,
                           float(table.hetsim_pct.max()), table.hetsim_pct.max() <= 21.5, "<= 21.5"))
    claims.append(ctx.true("MobileNet has the highest Big-configuration error", "MobileNet",
                           LABELS[per[["B1", "B2", "B3", "B4"]].mean(axis=1).idxmax()],
                           per[["B1", "B2", "B3", "B4"]].mean(axis=1).idxmax() == "mobilenet", "exact"))
    notes = [f"Predictor fitted on the 900-point micro-benchmark grid (stride 1, same padding) run on the ground "
             f"truth, weighted least squares on relative error. FC layers (separate regression per neuron count): "
             f"mean error {100 * fc.abs_error.mean():.1f} % (paper 14.4 %); MobileNet depthwise layers (own grid): "
             f"{100 * dw.abs_error.mean():.1f} % (not in Table III).",
             "Fitted coefficients (s; β1..β8 of eq. 5 for N, K, M, NK, KM, NM, NKM, 1; α1..α3 of eqs. 6-7): "
             + "; ".join(f"{ct}: β = {_floats(f.betas)}, α = {_floats(f.alphas)}" for ct, f in s.predictor.conv.items()),
             "Error sources in hetsim: eq. 7's whole 8-row iterations vs the ground truth's even split, M padded to "
             "12-column blocks, the roofline max(compute, memory), layers outside the grid (K = 27/147, M = 16/1000/2048), "
             "shared-L2 contention and overheads that eqs. 5-8 model only linearly. The ground truth is smoother than "
             "a real board (no cache-capacity cliffs, no measurement noise)."]
    fig, ax = plt.subplots(figsize=(7, 4))
    x = np.arange(len(NETWORKS))
    for j, (t, label) in enumerate((("B", "Big"), ("s", "Small"))):
        cols = [c for c in CONFIGS if c.startswith(t)]
        ax.bar(x + (j - 0.5) * 0.38, [per.loc[n, cols].mean() for n in NETWORKS], 0.36, label=f"hetsim {label}")
        ax.scatter(x + (j - 0.5) * 0.38, [np.mean([v for c, v in zip(CONFIGS, TABLE_III[n], strict=True)
                                                   if c.startswith(t)]) for n in NETWORKS],
                   marker="_", s=300, color="k", label=f"paper {label}" if j == 0 else None)
    _bar_axes(ax, "mean |predicted − truth| / truth (%)", "Table III: per-layer prediction error (conv layers)")
    return Artifact(table, fig, claims, notes)


# -- Table IV -------------------------------------------------------------------------------------------------------
def _benefit(s: Setup, n: str, kind: str = "predicted") -> float:
    return s.runs[(n, kind)].stream_fps / s.runs[(n, "big")].stream_fps - 1


@experiment(PAPER, "table4", "Table IV: Big, Small and Pipe-it throughput (50-image streams)")
def table4(ctx: Context) -> Artifact:
    s = setup()
    rows = []
    for n in NETWORKS:
        r = {k: s.runs[(n, k)] for k in ("big", "small", "measured", "predicted")}
        paper = TABLE_IV[n]
        rows.append({"cnn": LABELS[n],
                     "big_paper": paper[0], "big_fps": r["big"].stream_fps,
                     "small_paper": paper[1], "small_fps": r["small"].stream_fps,
                     "pipeit_measured_paper": paper[2], "pipeit_measured_fps": r["measured"].stream_fps,
                     "pipeit_measured_steady_fps": r["measured"].steady_fps,
                     "pipeit_measured_config": r["measured"].mapping,
                     "pipeit_predicted_paper": paper[3], "pipeit_predicted_fps": r["predicted"].stream_fps,
                     "pipeit_predicted_steady_fps": r["predicted"].steady_fps,
                     "pipeit_predicted_eq11_fps": r["predicted"].eq11_fps,
                     "pipeit_predicted_config": r["predicted"].mapping,
                     "benefit_paper_pct": paper[4], "benefit_pct": _pct(_benefit(s, n))})
    table = pd.DataFrame(rows)
    claims = []
    for i, n in enumerate(NETWORKS):
        claims.append(ctx.close(f"{LABELS[n]}: Pipe-it (measured T) imgs/s", TABLE_IV[n][2],
                                table.pipeit_measured_fps[i], rel=0.15))
        claims.append(ctx.close(f"{LABELS[n]}: Pipe-it (predicted T) imgs/s", TABLE_IV[n][3],
                                table.pipeit_predicted_fps[i], rel=0.15))
    claims.append(ctx.close("average benefit of Pipe-it over B4 (%)", TABLE_IV_AVERAGE_BENEFIT,
                            float(table.benefit_pct.mean()), abs_=10.0))
    claims.append(ctx.true("Pipe-it (predicted T) beats B4 for every CNN", "all > 0",
                           round(float(table.benefit_pct.min()), 2), (table.benefit_pct > 0).all(), "all > 0"))
    gap = max(abs(s.runs[(n, "measured")].stream_fps - s.runs[(n, "predicted")].stream_fps)
              / s.runs[(n, "measured")].stream_fps for n in NETWORKS)
    claims.append(ctx.true("measured-T vs predicted-T pipelines differ by at most ~4 % (worst case)", 4.0,
                           round(100 * gap, 2), gap <= 0.06, "<= 6 %"))
    ratio = [s.runs[(n, "measured")].stream_fps / (s.runs[(n, "big")].stream_fps + s.runs[(n, "small")].stream_fps)
             for n in NETWORKS]
    claims.append(ctx.true("Pipe-it approaches or surpasses Big + Small for all CNNs (>= 0.9x)", ">= 0.9",
                           round(min(ratio), 3), min(ratio) >= 0.9, ">= 0.9 for all"))
    notes = [f"Big and Small are calibration inputs (see pipeit:calibration). Throughput = {FRAMES} frames / makespan "
             "in the DES with memory contention (the paper's stream average); steady state and eq. 11 columns in the CSV. "
             "Benefit = Pipe-it (predicted T) / Big - 1, as the paper's column."]
    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(NETWORKS))
    for j, (col, paper_col, label) in enumerate((("big_fps", 0, "Big (B4)"), ("small_fps", 1, "Small (s4)"),
                                                 ("pipeit_measured_fps", 2, "Pipe-it, measured T"),
                                                 ("pipeit_predicted_fps", 3, "Pipe-it, predicted T"))):
        ax.bar(x + (j - 1.5) * 0.2, table[col], 0.19, label=f"hetsim {label}")
        ax.scatter(x + (j - 1.5) * 0.2, [TABLE_IV[n][paper_col] for n in NETWORKS], marker="_", s=120,
                   color="k", label="paper" if j == 0 else None)
    _bar_axes(ax, "throughput (imgs/s)", "Table IV: throughput of 50-image streams")
    return Artifact(table, fig, claims, notes)


# -- Tables V and VI ------------------------------------------------------------------------------------------------
def _design_table(ctx: Context, kind: str, paper: dict) -> Artifact:
    s = setup()
    cost = s.truth if kind == "measured" else s.predictor
    rows, claims = [], []
    for n in NETWORKS:
        w = s.workloads[n]
        d: PipeitDesign = s.designs[(n, kind)]
        cfg, alloc = paper[n]
        shift = (max(abs(a[1] - b[1]) for a, b in zip(alloc, d.allocation, strict=True))
                 if d.config == cfg else None)
        others = {pol: pipeit_design(s.platform, w, cost, policy=pol).config for pol in ("pairwise", "literal_break")}
        oracle = best_configuration(d.T, 4, 4)
        folded = (pipeit_design(s.platform, w, PipeitPredictor.fit(s.platform, s.truth, include_folded=True)).config
                  if kind == "predicted" else None)
        paper_pipe = load_mapping("|".join(f"{ep}:{a}-{b}" for ep, (a, b) in zip(cfg.split("-"), alloc, strict=True)),
                                  s.platform, w)
        rows.append({"cnn": LABELS[n], "config_paper": cfg, "config_hetsim": d.config,
                     "allocation_paper": " - ".join(f"[{a},{b}]" for a, b in alloc),
                     "allocation_hetsim": " - ".join(f"[{a},{b}]" for a, b in d.allocation),
                     "max_boundary_shift": shift, "eq11_fps": d.predicted_fps,
                     "stream_fps": s.runs[(n, kind)].stream_fps,
                     "config_pairwise": others["pairwise"], "config_literal_break": others["literal_break"],
                     "config_predictor_with_folded_ops": folded,
                     "oracle_config": "-".join(f"{t}{c}" for (t, c), _ in oracle.stages),
                     "oracle_eq11_fps": throughput(d.T, oracle.configs, oracle.alloc),
                     "paper_mapping_stream_fps": run_pipeline(s.platform, w, paper_pipe, s.truth).stream_fps})
        claims.append(ctx.equal(f"{LABELS[n]}: pipeline configuration", cfg, d.config))
        claims.append(ctx.equal(f"{LABELS[n]}: layer allocation", [list(a) for a in alloc],
                                [list(a) for a in d.allocation]))
    table = pd.DataFrame(rows)
    same = sum(r["config_paper"] == r["config_hetsim"] for r in rows)
    notes = [f"{same} of 5 configurations agree. Algorithm 3 with merge policy 'grow' on the "
             f"{'predicted (eqs. 5-8)' if kind == 'predicted' else 'ground-truth'} T matrix; empty trailing stages "
             "are dropped. Merge decisions hinge on eq. 12 margins of a few %, so they follow small differences "
             "in the multicore speedups (digest 5.8). The CSV also has the 'pairwise' and 'literal_break' policies, the "
             "best of all 64 configurations under Algorithm 2 (oracle_*), and the paper's own mapping streamed on hetsim's "
             "ground truth (paper_mapping_stream_fps).",
             "Algorithm 3 vs the configuration oracle (eq. 11): " + ", ".join(
                 f"{r['cnn']} {r['eq11_fps'] / r['oracle_eq11_fps']:.1%}" for r in rows)]
    if kind == "measured":
        tr = s.designs[("resnet50", kind)].result.trace
        start = ", ".join(f"l{a + 1}-{b}" if b > a else "∅" for a, b in tr[0]["alloc"])
        notes.append(f"ResNet50 worked example (paper 5.10): Algorithm 2 on 8 single-core stages gives {{{start}}} "
                     "(paper: {l1-18, l19-32, l33-41, l42-48, l49-51, l52-54, ∅, ∅}).")
    return Artifact(table, None, claims, notes)


@experiment(PAPER, "table5", "Table V: Pipe-it configurations from predicted layer times")
def table5(ctx: Context) -> Artifact:
    return _design_table(ctx, "predicted", TABLE_V)


@experiment(PAPER, "table6", "Table VI: Pipe-it configurations from measured layer times")
def table6(ctx: Context) -> Artifact:
    return _design_table(ctx, "measured", TABLE_VI)


# -- Table VII ----------------------------------------------------------------------------------------------------
@experiment(PAPER, "table7", "Table VII: 3 Big + 2 Small cores (held back from the calibration)")
def table7(ctx: Context) -> Artifact:
    s = setup()
    platform = s.fit.platform(["clusters.big.cores=3", "clusters.little.cores=2"])
    truth = PipeitGroundTruth(platform, split=s.fit.split)
    rows = []
    for n in NETWORKS:
        w = s.workloads[n]
        b3 = run_pipeline(platform, w, load_mapping(f"B3:1-{w.num_layers}", platform, w), truth)
        s2 = run_pipeline(platform, w, load_mapping(f"s2:1-{w.num_layers}", platform, w), truth)
        d = pipeit_design(platform, w, s.predictor)   # the same predicted layer times (paper VII-C)
        pi = run_pipeline(platform, w, d.pipeline, truth)
        paper = TABLE_VII[n]
        rows.append({"cnn": LABELS[n], "b3_paper": paper[0], "b3_fps": b3.stream_fps,
                     "s2_paper": paper[1], "s2_fps": s2.stream_fps, "pipeit_paper": paper[2],
                     "pipeit_fps": pi.stream_fps, "config_paper": paper[3], "config_hetsim": d.config,
                     "mapping": pi.mapping, "benefit_paper_pct": paper[4],
                     "benefit_pct": _pct(pi.stream_fps / b3.stream_fps - 1)})
    table = pd.DataFrame(rows)
    claims = []
    for i, n in enumerate(NETWORKS):
        claims.append(ctx.close(f"{LABELS[n]}: B3 imgs/s (held back)", TABLE_VII[n][0], table.b3_fps[i], rel=0.15))
        claims.append(ctx.close(f"{LABELS[n]}: s2 imgs/s (held back)", TABLE_VII[n][1], table.s2_fps[i], rel=0.15))
        claims.append(ctx.close(f"{LABELS[n]}: Pipe-it imgs/s", TABLE_VII[n][2], table.pipeit_fps[i], rel=0.15))
        claims.append(ctx.equal(f"{LABELS[n]}: configuration", TABLE_VII[n][3], table.config_hetsim[i]))
    claims.append(ctx.close("average benefit over B3 (%)", TABLE_VII_AVERAGE_BENEFIT, float(table.benefit_pct.mean()),
                            abs_=10.0))
    claims.append(ctx.true("benefit smaller than with 4B+4s (Table IV)", "15.5 < 39.2",
                           round(float(table.benefit_pct.mean()), 2),
                           table.benefit_pct.mean() < np.mean([_pct(_benefit(s, n)) for n in NETWORKS]), "less"))
    notes = ["B3 and s2 were not used by the fit: they test the ground truth's multicore model (shared-L2 "
             "contention assumption). GoogLeNet's s2 = 0.7 imgs/s is a flagged measurement quirk (digest 6, 9.17)."]
    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(NETWORKS))
    for j, (col, pcol, label) in enumerate((("b3_fps", "b3_paper", "B3"), ("s2_fps", "s2_paper", "s2"),
                                            ("pipeit_fps", "pipeit_paper", "Pipe-it"))):
        ax.bar(x + (j - 1) * 0.27, table[col], 0.25, label=f"hetsim {label}")
        ax.scatter(x + (j - 1) * 0.27, table[pcol], marker="_", s=150, color="k", label="paper" if j == 0 else None)
    _bar_axes(ax, "throughput (imgs/s)", "Table VII: 3 Big + 2 Small cores")
    return Artifact(table, fig, claims, notes)


# -- Table VIII ---------------------------------------------------------------------------------------------------
@experiment(PAPER, "table8", "Table VIII: active power and energy efficiency")
def table8(ctx: Context) -> Artifact:
    s = setup()
    runs = []
    for n in NETWORKS:
        for kind, key in (("big", "big"), ("small", "small"), ("pipeit", "predicted")):
            r = s.runs[(n, key)]
            runs.append(PowerRun(n, kind, r.core_s, r.coherent_s, r.makespan_s, r.stream_fps))
    pfit = fit_power(runs)
    platform = s.fit.platform(pfit.overrides(s.platform))
    rows = []
    for n in NETWORKS:
        row = {"cnn": LABELS[n]}
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
    claims = []
    for i, n in enumerate(NETWORKS):
        claims.append(ctx.close(f"{LABELS[n]}: Pipe-it active power (W)", TABLE_VIII[n][2], table.power_pipeit_W[i],
                                rel=0.15))
        for kind, col in (("big", 3), ("small", 4), ("pipeit", 5)):
            claims.append(ctx.close(f"{LABELS[n]}: {kind} efficiency (imgs/J)", TABLE_VIII[n][col],
                                    table[f"eff_{kind}_imgs_per_J"][i], rel=0.20))
    ratio = table.eff_pipeit_imgs_per_J / table.eff_big_imgs_per_J
    claims.append(ctx.true("Pipe-it efficiency about Big's (trades power for throughput): ratio in [0.8, 1.1]",
                           "0.86-1.0", [round(float(x), 3) for x in ratio], ratio.between(0.8, 1.1).all(),
                           "all in [0.8, 1.1]"))
    claims.append(ctx.true("Pipe-it draws more power than Big + Small", "all", "all" if
                           (table.power_pipeit_W > table.power_big_W + table.power_small_W).all() else "not all",
                           (table.power_pipeit_W > table.power_big_W + table.power_small_W).all(), "all"))
    notes = [f"Power model: P_A = Σ busy core-s x (active - idle W per core) / makespan + coherence_W x (time both "
             f"clusters busy) / makespan. Fitted: {pfit.active_W_per_core['big']:.3f} W per busy A73, "
             f"{pfit.active_W_per_core['little']:.3f} W per busy A53 (least squares on the Big and Small columns), "
             f"coherence_W = {pfit.coherence_W:.3f} W (on the Pipe-it column). Big and Small power are fitted, so only "
             "their spread across CNNs is information: per-CNN residuals in the CSV of this table's fit: "
             + ", ".join(f"{r.workload}/{r.run} {100 * r.error:+.0f} %" for r in pfit.table.itertuples())]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    x = np.arange(len(NETWORKS))
    for j, kind in enumerate(("big", "small", "pipeit")):
        axes[0].bar(x + (j - 1) * 0.27, table[f"power_{kind}_W"], 0.25, label=f"hetsim {kind}")
        axes[0].scatter(x + (j - 1) * 0.27, table[f"power_{kind}_paper_W"], marker="_", s=150, color="k",
                        label="paper" if j == 0 else None)
        axes[1].bar(x + (j - 1) * 0.27, table[f"eff_{kind}_imgs_per_J"], 0.25, label=f"hetsim {kind}")
        axes[1].scatter(x + (j - 1) * 0.27, table[f"eff_{kind}_paper"], marker="_", s=150, color="k",
                        label="paper" if j == 0 else None)
    _bar_axes(axes[0], "active power (W)", "Table VIII: power")
    _bar_axes(axes[1], "efficiency (imgs/J)", "Table VIII: efficiency")
    return Artifact(table, fig, claims, notes)


# -- Figs. 3 and 5: kernel-level co-execution -------------------------------------------------------------------
@lru_cache(maxsize=2)
def _hmp(quick: bool) -> tuple[float, dict[str, float]]:
    return fit_hmp_slowdown(setup().truth, fig5_shares(quick))


@experiment(PAPER, "fig3", "Fig. 3: kernel-level throughput as cores are added (B1..B4, then B4+s1..s4)")
def fig3(ctx: Context) -> Artifact:
    s = setup()
    slowdown, _ = _hmp(ctx.quick)
    kl = KernelLevel(s.truth, slowdown)
    kl0 = KernelLevel(s.truth, 0.0)
    sets = [(b, 0) for b in range(1, 5)] + [(4, m) for m in range(1, 5)]
    rows = []
    for n in NETWORKS:
        w = s.workloads[n]
        for b, m in sets:
            rows.append({"cnn": LABELS[n], "cores": f"{b}B" + (f"+{m}s" if m else ""), "big": b, "small": m,
                         "fps": kl.throughput(w, b, m), "fps_no_penalty": kl0.throughput(w, b, m)})
    table = pd.DataFrame(rows)
    claims = []
    for n in NETWORKS:
        t = table[table.cnn == LABELS[n]]
        b4 = float(t.fps[(t.big == 4) & (t.small == 0)].iloc[0])
        hmp = t[t.small > 0]
        claims.append(ctx.true(f"{LABELS[n]}: no HMP configuration beats 4B", "none", round(float(hmp.fps.max() / b4), 3),
                               (hmp.fps <= b4).all(), "max(HMP)/4B <= 1"))
        big = t[t.small == 0].fps.to_numpy()
        claims.append(ctx.true(f"{LABELS[n]}: throughput rises with each Big core", "rises",
                               [round(float(v), 2) for v in big], bool(np.all(np.diff(big) > 0)), "increasing"))
        drop = float(t.fps[(t.big == 4) & (t.small == 1)].iloc[0]) / b4
        claims.append(ctx.true(f"{LABELS[n]}: sharp drop when a Small core joins (4B+1s / 4B)", "sharp drop",
                               round(drop, 3), drop <= 0.8, "<= 0.8"))
    free = (table[(table.big == 4) & (table.small == 4)].fps_no_penalty.to_numpy()
            / table[(table.big == 4) & (table.small == 0)].fps_no_penalty.to_numpy())
    notes = [f"Equal work per thread (ARM-CL's default), cross-cluster slowdown {slowdown:.3f} (calibrated on Fig. 5, "
             f"see fig5) and a CCI fork-join barrier per op. Without any penalty, 4B+4s/4B ranges "
             f"{free.min():.2f}-{free.max():.2f}: with an equal split the slow A53 threads decide, so even a "
             "penalty-free HMP barely reaches B4."]
    fig, ax = plt.subplots(figsize=(7, 4))
    for n in NETWORKS:
        t = table[table.cnn == LABELS[n]]
        b4 = float(t.fps[(t.big == 4) & (t.small == 0)].iloc[0])
        ax.plot(range(len(sets)), t.fps / b4, marker="o", label=LABELS[n])
    ax.axvline(3.5, color="grey", lw=0.8, ls=":")
    ax.set_xticks(range(len(sets)), [f"{b}B" + (f"+{m}s" if m else "") for b, m in sets], rotation=30)
    ax.set_xlabel("cores used by kernel-level ARM-CL")
    ax.set_ylabel("throughput / 4B throughput (-)")
    ax.set_title("Fig. 3: kernel-level co-execution")
    ax.legend(fontsize=8)
    return Artifact(table, fig, claims, notes)


@experiment(PAPER, "fig5", "Fig. 5: kernel-level B4+s4 with an uneven share of every kernel on Small")
def fig5(ctx: Context) -> Artifact:
    s = setup()
    slowdown, per_cnn = _hmp(ctx.quick)
    kl = KernelLevel(s.truth, slowdown)
    shares = fig5_shares(ctx.quick)
    rows = []
    for n in NETWORKS:
        w = s.workloads[n]
        base = kl.throughput(w, 4, 0, 0.0)
        for r in shares:
            rows.append({"cnn": LABELS[n], "small_share": float(r),
                         "normalised_fps": kl.throughput(w, 4, 4, float(r)) / base,
                         "break_even_slowdown": per_cnn[n]})
    table = pd.DataFrame(rows)
    best = table.loc[table.groupby("cnn").normalised_fps.idxmax()].set_index("cnn")
    n_ok = int(((best.small_share <= 0.05) & (best.normalised_fps <= 1.05)).sum())
    claims = [ctx.true(f"[calibrated] best Small share ~0 for most CNNs (>= {FIG5_MOST} of 5)",
                       f">= {FIG5_MOST}", n_ok, n_ok >= FIG5_MOST, f">= {FIG5_MOST} with share <= 0.05")]
    notes = [f"Calibration: the cross-cluster slowdown is the smallest value for which {FIG5_MOST} of 5 CNNs gain nothing "
             f"from any Small share: {slowdown:.3f}. Per-CNN break-even slowdowns: "
             + ", ".join(f"{LABELS[k]} {v:.3f}" for k, v in per_cnn.items())
             + ". Without a penalty the best share would give the A53s their proportional part of every kernel. "
             "The claim above holds by construction; Fig. 3 is the check."]
    fig, ax = plt.subplots(figsize=(7, 4))
    for n in NETWORKS:
        t = table[table.cnn == LABELS[n]]
        ax.plot(t.small_share, t.normalised_fps, label=LABELS[n])
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("share of every kernel's work on the Small cluster (-)")
    ax.set_ylabel("throughput / Big-only throughput (-)")
    ax.set_title(f"Fig. 5: kernel-level B4+s4 (cross-cluster slowdown {slowdown:.2f})")
    ax.legend(fontsize=8)
    return Artifact(table, fig, claims, notes)


# -- Fig. 6: time by layer type ------------------------------------------------------------------------
@experiment(PAPER, "fig6", "Fig. 6: share of the B4 forward pass by layer type")
def fig6(ctx: Context) -> Artifact:
    s = setup()
    ep = s.platform.ep("B4")
    rows = []
    for n in NETWORKS:
        totals: dict[str, float] = {}
        for op in s.workloads[n].ops:
            kind = str(op.kind) if op.kind in ("conv", "dw", "fc") else "other"
            totals[kind] = totals.get(kind, 0.0) + s.truth.op_time(op, ep)
        whole = sum(totals.values())
        for kind in ("conv", "dw", "fc", "other"):
            rows.append({"cnn": LABELS[n], "kind": kind, "time_ms": 1e3 * totals.get(kind, 0.0),
                         "share": totals.get(kind, 0.0) / whole})
    table = pd.DataFrame(rows)
    top = table.loc[table.groupby("cnn").share.idxmax()].set_index("cnn").kind
    claims = [ctx.equal(f"{LABELS[n]}: dominant layer type", "fc" if n == "alexnet" else "conv", top[LABELS[n]])
              for n in NETWORKS]
    notes = ["Ground-truth op times on B4; 'other' = the folded pooling, activation, normalisation, add and concat ops. "
             "AlexNet's fc6-fc8 are GEMVs that stream 234 MB of weights per image (memory-bound)."]
    fig, ax = plt.subplots(figsize=(7, 4))
    bottom = np.zeros(len(NETWORKS))
    for kind in ("conv", "dw", "fc", "other"):
        v = np.array([float(table[(table.cnn == LABELS[n]) & (table.kind == kind)].share.iloc[0]) for n in NETWORKS])
        ax.bar(range(len(NETWORKS)), v, bottom=bottom, label=kind)
        bottom += v
    _bar_axes(ax, "share of B4 forward-pass time (-)", "Fig. 6: time by layer type (B4)")
    return Artifact(table, fig, claims, notes)


# -- Fig. 8: B4-s4 split sweep --------------------------------------------------------------------------------
@experiment(PAPER, "fig8", "Fig. 8: B4-s4 throughput against the split ratio X/W")
def fig8(ctx: Context) -> Artifact:
    s = setup()
    rows = []
    for n in NETWORKS:
        w = s.workloads[n]
        W = w.num_layers
        scorer = SplitScorer(s.platform, w, s.truth, [s.platform.ep("B4"), s.platform.ep("s4")])
        fps = scorer.score(2, [(0, 1)]).throughput[:, 0]
        ends = [1.0 / float(s.truth.layer_times(w, s.platform.ep(e)).sum()) for e in ("s4", "B4")]
        xs = np.arange(0, W + 1)
        vals = np.concatenate([[ends[0]], fps, [ends[1]]])
        for x, v in zip(xs, vals, strict=True):
            rows.append({"cnn": LABELS[n], "X": int(x), "W": W, "ratio": x / W, "fps": float(v),
                         "normalised": float(v / vals.max())})
    table = pd.DataFrame(rows)
    best = table.loc[table.groupby("cnn").fps.idxmax()].set_index("cnn")
    lo, hi = best.ratio.idxmin(), best.ratio.idxmax()
    claims = [
        ctx.close("lowest optimal X/W (GoogLeNet in the paper)", FIG8_RANGE[0], float(best.ratio.min()), abs_=0.05),
        ctx.close("highest optimal X/W (AlexNet in the paper)", FIG8_RANGE[1], float(best.ratio.max()), abs_=0.05),
        ctx.equal("CNN with the lowest optimal ratio", "GoogLeNet", lo),
        ctx.equal("CNN with the highest optimal ratio", "AlexNet", hi),
        ctx.true("every optimum within [0.60, 0.90] (+-0.05)", "0.60-0.90",
                 {k: round(float(v), 3) for k, v in best.ratio.items()},
                 best.ratio.between(FIG8_RANGE[0] - 0.05, FIG8_RANGE[1] + 0.05).all(), "all in [0.55, 0.95]"),
    ]
    notes = ["Eq. 11 on the ground truth (analytic, with CCI hand-offs); X = 0 is s4 alone, X = W is B4 alone. "
             "Optimal X per CNN: " + ", ".join(f"{k} {int(r.X)}/{int(r.W)}" for k, r in best.iterrows())]
    fig, ax = plt.subplots(figsize=(7, 4))
    for n in NETWORKS:
        t = table[table.cnn == LABELS[n]]
        ax.plot(t.ratio, t.normalised, marker=".", label=LABELS[n])
    ax.set_xlabel("split ratio X/W (layers on B4 / all layers)")
    ax.set_ylabel("throughput / best (-)")
    ax.set_title("Fig. 8: B4-s4 pipelines")
    ax.legend(fontsize=8)
    return Artifact(table, fig, claims, notes)


# -- Fig. 9: ResNet50 B4-s2-s2 surface ---------------------------------------------------------------------
@experiment(PAPER, "fig9", "Fig. 9: ResNet50 B4-s2-s2 throughput over both split points")
def fig9(ctx: Context) -> Artifact:
    s = setup()
    w = s.workloads["resnet50"]
    W = w.num_layers
    eps = [s.platform.ep("B4"), s.platform.ep("s2"), s.platform.ep("s4")]
    scorer = SplitScorer(s.platform, w, s.truth, eps)
    sc = scorer.score(3, [(0, 1, 1)])
    b = sc.boundaries
    table = pd.DataFrame({"X1": b[:, 1], "X2": b[:, 2], "fps": sc.throughput[:, 0]})
    i = int(table.fps.idxmax())
    x1, x2 = int(table.X1[i]), int(table.X2[i])
    pipe = load_mapping(f"B4:1-{x1}|s2:{x1 + 1}-{x2}|s2:{x2 + 1}-{W}", s.platform, w)
    peak = run_pipeline(s.platform, w, pipe, s.truth)
    two = scorer.score(2, [(0, 2)])
    p2, _ = two.best()
    run2 = run_pipeline(s.platform, w, p2, s.truth)
    gain = 100 * (peak.stream_fps / run2.stream_fps - 1)
    claims = [
        ctx.close("peak X1 (last layer on B4)", FIG9_PEAK[0], x1, abs_=3),
        ctx.close("peak X2 (last layer of stage 2)", FIG9_PEAK[1], x2, abs_=3),
        ctx.close("peak throughput (imgs/s, 50-image stream)", FIG9_PEAK[2], peak.stream_fps, rel=0.15),
        ctx.close("best B4-s2-s2 over best B4-s4 (%)", FIG9_PEAK[3], gain, abs_=5.0),
    ]
    notes = [f"Surface: eq. 11 on the ground truth over all {len(table)} (X1, X2); the peak {pipe} and the best B4-s4 "
             f"{p2} are then streamed through the DES ({peak.stream_fps:.2f} and {run2.stream_fps:.2f} imgs/s; "
             f"steady state {peak.steady_fps:.2f} and {run2.steady_fps:.2f})."]
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
    return Artifact(table, fig, claims, notes)


# -- Fig. 12: concave speedups -------------------------------------------------------------------------------
@experiment(PAPER, "fig12", "Fig. 12: speedup of AlexNet's conv layers with 1-4 Big / 1-4 Small cores")
def fig12(ctx: Context) -> Artifact:
    s = setup()
    w = s.workloads["alexnet"]
    # The five conv layers; the grouped conv2/4/5 run as two ARM-CL nodes each: their times add.
    groups = {"conv1": [1], "conv2": [2, 3], "conv3": [4], "conv4": [5, 6], "conv5": [7, 8]}
    rows = []
    for t in ("B", "s"):
        for name, layers in groups.items():
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
    claims = [ctx.true("speedup increasing and concave in the core count, every AlexNet conv layer", "concave",
                       "concave" if concave else "not concave", concave, "second differences <= 0"),
              ctx.true("concave for every layer of all five CNNs", "concave (Fig. 12, eq. 12's premise)",
                       "concave" if all_concave else "not concave", all_concave, "second differences <= 0"),
              ctx.true("layers gain differently from cores (4-core speedup spread)", "differ",
                       {k: round(v, 3) for k, v in spreads.items()}, min(spreads.values()) > 0.05, "> 0.05")]
    notes = ["Concavity comes from shared-L2 contention (assumed 3 % per added core), the per-op overhead and the "
             "bandwidth cap of memory-bound ops; the ground truth splits work evenly (split='even'). With eq. 7's whole "
             "8-row iterations (PipeitGroundTruth(split='tiles')) a layer with N = 169 (22 iterations: 8 per thread on "
             "3 cores, 6 on 4) speeds up more from 3 to 4 cores than from 2 to 3, which contradicts Fig. 12."]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, cl in zip(axes, ("Big", "Small"), strict=True):
        for name in groups:
            t = table[(table.cluster == cl) & (table.layer == name)]
            ax.plot(t.cores, t.speedup, marker="o", label=name)
        ax.plot([1, 4], [1, 4], "k:", lw=0.8, label="linear")
        ax.set_xlabel(f"{cl} cores")
        ax.set_title(f"Fig. 12({'a' if cl == 'Big' else 'b'}): {cl}")
        ax.set_xticks([1, 2, 3, 4])
    axes[0].set_ylabel("speedup over 1 core (-)")
    axes[0].legend(fontsize=8)
    return Artifact(table, fig, claims, notes)
