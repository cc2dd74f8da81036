"""The simulations and explorations Pipe-it's tables and figures read, cached: the fitted board, the
predictor, Algorithm 3's designs and the 50-image DES streams (:func:`setup`), and the runs only one
table needs. Each runs once per process (they are deterministic), whichever figure asks first."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from hetsim.analytic import SplitScorer
from hetsim.evaluation import simulate
from hetsim.mapping import Pipeline, parse_pipeline
from hetsim.platform import Platform
from hetsim.workload import load_workload
from hetsim_papers.pipeit.cost import Gemm2GroundTruth, PipeitGroundTruth, PipeitPredictor
from hetsim_papers.pipeit.experiments.calibration import (
    BOARD_3B_2S,
    GroundTruthFit,
    PowerFit,
    PowerRun,
    fig5_shares,
    fit_ground_truth,
    fit_hmp_slowdown,
    fit_power,
)
from hetsim_papers.pipeit.experiments.paper import FRAMES, LABELS, NETWORKS
from hetsim_papers.pipeit.pipeit import pipeit_design


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
    truth: PipeitGroundTruth | Gemm2GroundTruth
    predictor: PipeitPredictor
    workloads: dict
    designs: dict               # (cnn, "measured" | "predicted") -> PipeitDesign
    runs: dict                  # (cnn, "big" | "small" | "measured" | "predicted") -> Run


def run_pipeline(platform, workload, pipe: Pipeline, truth: PipeitGroundTruth | Gemm2GroundTruth,
                 frames: int = FRAMES) -> Run:
    """Stream ``frames`` images through ``pipe`` in the DES (contention on) with the ground truth."""
    res = simulate(platform, workload, pipe, engine="des", cost=truth, frames=frames, contention=True)
    eq11 = simulate(platform, workload, pipe, engine="analytic", cost=truth, frames=frames,
                    contention=False).metrics   # eq. 11: each stage timed alone
    m = res.metrics
    return Run(str(pipe), pipe.config, m.stream_throughput_fps, m.throughput_fps, eq11.throughput_fps,
               dict(m.core_busy_s), m.coherent_s, m.makespan_s)


@lru_cache(maxsize=1)
def setup() -> Setup:
    """The fitted board, the predictor fitted on it, Algorithm 3 on the measured and the predicted T
    matrices, and B4, s4 and both designs streamed through the DES."""
    fit = fit_ground_truth()
    platform = fit.platform()
    truth = fit.truth()
    predictor = PipeitPredictor.fit(platform, truth)
    workloads = {n: load_workload(n) for n in NETWORKS}
    designs, runs = {}, {}
    for n, w in workloads.items():
        for kind, ep in (("big", "B4"), ("small", "s4")):
            runs[(n, kind)] = run_pipeline(platform, w, parse_pipeline(f"{ep}:1-{w.num_layers}", platform, w), truth)
        for kind, cost in (("measured", truth), ("predicted", predictor)):
            d = designs[(n, kind)] = pipeit_design(platform, w, cost)
            runs[(n, kind)] = run_pipeline(platform, w, d.pipeline, truth)
    return Setup(fit, platform, truth, predictor, workloads, designs, runs)


# -- Tables V-VI: what else Algorithm 3 could have chosen -------------------------------------------------
@dataclass
class DesignAlternatives:
    pairwise: str               # Algorithm 3's configuration with merge policy 'pairwise'
    literal_break: str          # ... with 'literal_break'
    folded: str | None          # predicted T with the folded ops' ground truth added (predicted only)
    paper_mapping_stream_fps: float   # the paper's own mapping streamed on hetsim's ground truth


@lru_cache(maxsize=16)
def design_alternatives(cnn: str, kind: str, paper_mapping: str) -> DesignAlternatives:
    s = setup()
    w = s.workloads[cnn]
    cost = s.truth if kind == "measured" else s.predictor
    others = {pol: pipeit_design(s.platform, w, cost, policy=pol).config for pol in ("pairwise", "literal_break")}
    folded = (pipeit_design(s.platform, w, PipeitPredictor.fit(s.platform, s.truth, include_folded=True)).config
              if kind == "predicted" else None)
    paper_pipe = parse_pipeline(paper_mapping, s.platform, w)
    return DesignAlternatives(others["pairwise"], others["literal_break"], folded,
                              run_pipeline(s.platform, w, paper_pipe, s.truth).stream_fps)


# -- Table VII: the 3 Big + 2 Small board -------------------------------------------------------------
@lru_cache(maxsize=1)
def board_3b2s_runs() -> dict:
    """B3 and s2 alone and Pipe-it on the 3+2 board, with the 4+4 board's predicted layer times
    (paper VII-C: "the layer timing estimations obtained as before"): cnn -> (b3, s2, design, pipeit)."""
    s = setup()
    platform = s.fit.platform(list(BOARD_3B_2S))
    truth = s.fit.truth(list(BOARD_3B_2S))
    out = {}
    for n in NETWORKS:
        w = s.workloads[n]
        b3 = run_pipeline(platform, w, parse_pipeline(f"B3:1-{w.num_layers}", platform, w), truth)
        s2 = run_pipeline(platform, w, parse_pipeline(f"s2:1-{w.num_layers}", platform, w), truth)
        d = pipeit_design(platform, w, s.predictor)
        out[n] = (b3, s2, d, run_pipeline(platform, w, d.pipeline, truth))
    return out


# -- Table VIII: power -------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def power_fit() -> tuple[PowerFit, Platform]:
    """The power model fitted to Table VIII on B4, s4 and Pipe-it (the predicted-T design), and the
    board with the fitted powers."""
    s = setup()
    runs = []
    for n in NETWORKS:
        for kind, key in (("big", "big"), ("small", "small"), ("pipeit", "predicted")):
            r = s.runs[(n, key)]
            runs.append(PowerRun(n, kind, r.core_s, r.coherent_s, r.makespan_s, r.stream_fps))
    pfit = fit_power(runs)
    return pfit, s.fit.platform(pfit.overrides(s.platform))


# -- Figs. 3 and 5: kernel-level co-execution --------------------------------------------------------
@lru_cache(maxsize=2)
def hmp(quick: bool) -> tuple[float, dict[str, float]]:
    """The cross-cluster slowdown calibrated on Fig. 5, and each CNN's break-even slowdown."""
    return fit_hmp_slowdown(setup().truth, fig5_shares(quick))


# -- Figs. 8-9: split sweeps (eq. 11 on the ground truth) ---------------------------------------------
@lru_cache(maxsize=1)
def b4_s4_sweep() -> pd.DataFrame:
    """Fig. 8: B4-s4 throughput for every split X (X = 0 is s4 alone, X = W is B4 alone)."""
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
    return pd.DataFrame(rows)


@dataclass
class Surface:
    table: pd.DataFrame         # X1, X2, fps (eq. 11) for every B4-s2-s2 split
    peak: Pipeline              # the peak's pipeline
    peak_run: Run               # ... streamed through the DES
    best_two: Pipeline          # the best B4-s4
    best_two_run: Run
    num_layers: int             # W


@lru_cache(maxsize=1)
def resnet50_b4_s2_s2() -> Surface:
    """Fig. 9: ResNet50 B4-s2-s2 over both split points; the peak and the best B4-s4 streamed."""
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
    pipe = parse_pipeline(f"B4:1-{x1}|s2:{x1 + 1}-{x2}|s2:{x2 + 1}-{W}", s.platform, w)
    p2, _ = scorer.score(2, [(0, 2)]).best()
    return Surface(table, pipe, run_pipeline(s.platform, w, pipe, s.truth), p2,
                   run_pipeline(s.platform, w, p2, s.truth), W)
