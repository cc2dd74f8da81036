"""Issue 28 on a board whose truth is known: hetsim prices five CNNs on a HiKey 970 given the
mechanisms real boards show (time that does not follow the clock, a per-frame input stage, a
feeder that slows the first stage, per-shape GEMM efficiencies), with seeded lognormal noise, and
`hetsim calibrate platform` fits it back from a facts-only start, leaving one network out at a
time; then again with each mechanism off (the ablation), and "the Pipe-it way" (one efficiency per
cluster, top clocks only).

    python benchmarks/calibrate_synthetic.py --out results/calibrate-synthetic   # ~30 min on 2 busy cores
    python benchmarks/calibrate_synthetic.py --networks alexnet,googlenet,squeezenet --eps B4,s4   # smaller

First the recovery: one fit on every network, its values beside the truth (``recovery.csv``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

A73, A53 = "core_types.cortex-a73", "core_types.cortex-a53"
#: The board's truth (what the fit does not know): per-shape efficiencies, a clock-independent
#: share, an input stage (t = a + b/f) and a feeder share on the little cluster.
TRUTH = (
    f"{A73}.roofline.gemm_efficiency=0.2", f"{A73}.roofline.kind_efficiency.conv1x1=0.14",
    f"{A73}.roofline.kind_efficiency.conv3x3=0.26", f"{A73}.roofline.op_overhead_us=20.0",
    f"{A73}.roofline.clock_independent_share=0.3",
    f"{A73}.input_stage.fixed_us=6000.0", f"{A73}.input_stage.Mcycles=18.0",
    f"{A53}.roofline.gemm_efficiency=0.4", f"{A53}.roofline.kind_efficiency.conv1x1=0.3",
    f"{A53}.roofline.kind_efficiency.conv3x3=0.5", f"{A53}.roofline.op_overhead_us=40.0",
    f"{A53}.roofline.clock_independent_share=0.2",
    f"{A53}.input_stage.fixed_us=12000.0", f"{A53}.input_stage.Mcycles=36.0", f"{A53}.feeder_share=0.3",
)
NETWORKS = ("alexnet", "googlenet", "mobilenet", "resnet50", "squeezenet")
EPS = ("B2", "B4", "s2", "s4")
LEVELS = ("max", "low")
CUTS = (0.2, 0.4, 0.6, 0.8)


def pipelines(network: str) -> list[tuple[str, str, str | None]]:
    """B4|s4 and s4|B4 cut at CUTS of the layers, at both clusters' top clocks."""
    from hetsim.workload import load_workload

    n = load_workload(network).num_layers
    out = []
    for c in CUTS:
        k = max(1, min(n - 1, round(c * n)))
        out += [(network, f"B4:1-{k}|s4:{k + 1}-{n}", None), (network, f"s4:1-{k}|B4:{k + 1}-{n}", None)]
    return out


def measurements(noise: float, seed: int, networks=NETWORKS, eps=EPS) -> pd.DataFrame:
    from hetsim.calibrate.synthetic import synthetic_measurements

    return synthetic_measurements("hikey970", TRUTH, networks, eps, LEVELS,
                                  pipelines=[p for n in networks for p in pipelines(n)],
                                  noise_sigma=noise, seed=seed, later_stage=[e for e in ("s4", "B4") if e in eps])


def recovery(fit) -> pd.DataFrame:
    """Every fitted value beside the truth: the board's own value with the TRUTH overrides (a conv
    shape without an efficiency of its own is priced at the core type's gemm_efficiency)."""
    import copy

    from hetsim.calibrate.board import _get
    from hetsim.platform.loader import apply_override

    truth = copy.deepcopy(fit.data)
    for o in TRUTH:
        apply_override(truth, o)
    rows = []
    for key, value in fit.values.items():
        true = _get(truth, key)
        if true is None and ".kind_efficiency." in key:
            true = _get(truth, key.split(".kind_efficiency.")[0] + ".gemm_efficiency")
        true = float(true) if isinstance(true, int | float) else float("nan")
        rows.append({"parameter": key, "true": true, "fitted": float(value),
                     "rel_error": float(value) / true - 1.0 if true else float("nan")})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("results/calibrate-synthetic"))
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--eps", default=",".join(EPS), help="the EPs whose layers are measured")
    args = ap.parse_args()
    from hetsim.calibrate.board import calibrate_platform
    from hetsim.calibrate.crossval import ablation, crossvalidate, folds_of, scores_table
    from hetsim.calibrate.table import normalise

    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    raw = measurements(args.noise, args.seed, args.networks.split(","), args.eps.split(","))
    raw.to_csv(args.out / "measurements.csv", index=False, float_format="%.9g")
    table = normalise(raw, "synthetic")
    fit = calibrate_platform("hikey970", table, mechanisms="auto", workloads={})
    rec = recovery(fit)
    rec.to_csv(args.out / "recovery.csv", index=False)
    print(f"mechanisms {fit.mechanisms}; in-sample median |error| {np.median(fit.table.error.abs()):.2%} "
          f"({time.time() - t0:.0f} s)")
    print(rec.to_string(), flush=True)
    folds = folds_of(sorted(set(table.network)), None)
    held = scores_table(crossvalidate("hikey970", table, folds, mechanisms="auto", workloads={}))
    held.to_csv(args.out / "holdout.csv", index=False)
    print(held.to_string())
    # the Pipe-it way: one efficiency per cluster from the whole networks at the top clocks
    top = raw[(raw.dvfs.fillna("max") == "max") & raw.layer.isna() & raw.mapping.isna()]
    pipeit = crossvalidate("hikey970", normalise(top, "top clocks"), folds, mechanisms="none", workloads={})
    pipeit_scores = scores_table([type(h)(h.network, h.fit, _predict(h.fit, table, h.network)) for h in pipeit])
    pipeit_scores.to_csv(args.out / "holdout_pipeit_way.csv", index=False)
    print(pipeit_scores.to_string())
    abl = ablation("hikey970", table, ["kinds", "clock", "input", "feeder"], folds, workloads={})
    abl.to_csv(args.out / "ablation.csv", index=False)
    print(abl.to_string())
    print(f"{time.time() - t0:.0f} s")


def _predict(fit, table: pd.DataFrame, network: str) -> pd.DataFrame:
    from hetsim.calibrate.crossval import predict_table

    return predict_table(fit, table[table.network == network], {})


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
