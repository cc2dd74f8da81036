"""Fig. 13 (every execution path of 15-node windows, the DP's result marked) and OPT against the exact
optimum of the whole graphs (CP-SAT, with HiGHS as a cross-check).

A window is 15 consecutive operators in topological order; inputs from before it sit in CPU memory
(a virtual op on CPU_S), outputs leave at no cost. Of all windows the one with the most paths is
taken (the first such), so that the check is as hard as the paper's (up to 3^15 paths).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from hetsim.experiment import Artifact, Context, split_wallclock
from hetsim_papers.pim.dcg import Dcg
from hetsim_papers.pim.dp import als_dp
from hetsim_papers.pim.exact import enumerate_paths, milp
from hetsim_papers.pim.experiments import runs
from hetsim_papers.pim.experiments.paper import FIG13_WINDOW, MAPS_P, PREDICTION, STRUCTURAL, claim

#: Points drawn per scatter (every path is scored; the plot samples them evenly, plus the minimum).
PLOT_POINTS = 60_000


def widest_window(g: Dcg, length: int) -> int:
    """Start of the ``length``-op window with the most execution paths (the first such)."""
    logs = np.log([len(c) for c in g.cap])
    sums = np.convolve(logs, np.ones(length), mode="valid")
    return int(np.argmax(sums + 1e-9 * -np.arange(len(sums))))


def window_check(model: str, length: int, p: int = MAPS_P) -> dict:
    g = runs.dcg(model, p)
    host = g.devices.index("CPU_S")
    start = widest_window(g, length)
    w = g.window(start, length, host=host)
    paths = enumerate_paths(w)
    best = int(np.argmin(paths.total_s))
    dp, dpp = als_dp(w), als_dp(w, "path")
    exact = milp(w, "cp-sat", 30.0)
    return {"model": model, "p": p, "window": f"{g.ops[start]} .. {g.ops[start + length - 1]}",
            "start": start, "ops": length, "paths": paths.n_paths, "enumeration_s": paths.seconds,
            "paths_per_s": paths.n_paths / paths.seconds, "min_ms": paths.total_s[best] * 1e3,
            "max_ms": float(paths.total_s.max()) * 1e3, "min_index": best,
            "opt_ms": dp.latency_s * 1e3, "opt_path_ms": dpp.latency_s * 1e3, "milp_ms": exact.latency_s * 1e3,
            "_totals": paths.total_s}


def fig13(ctx: Context) -> Artifact:
    length = 10 if ctx.quick else FIG13_WINDOW
    rows = [window_check(model, length) for model in runs.MODELS]
    claims = []
    for r in rows:
        same = bool(np.isclose(r["opt_ms"], r["min_ms"], rtol=1e-9, atol=1e-12))
        claims.append(claim(ctx, "true", f"{r['model']}: OPT's path is the fastest of every path of a "
                            f"{length}-node window", "the minimum", f"OPT {r['opt_ms']:.6f} ms, minimum "
                            f"{r['min_ms']:.6f} ms of {r['paths']:,} paths", same, "equal", kind=PREDICTION))
        agree = bool(np.isclose(r["milp_ms"], r["min_ms"], rtol=1e-9, atol=1e-12))
        claims.append(claim(ctx, "true", f"{r['model']}: the MILP finds the enumeration's minimum", "equal",
                            f"{r['milp_ms']:.6f} ms", agree, "equal", kind=STRUCTURAL))
    table = pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])
    table, wallclock = split_wallclock(table, ("enumeration_s", "paths_per_s"))   # this machine's
    return Artifact(table, _plot_fig13(rows), claims, wallclock=wallclock)


def _plot_fig13(rows) -> Figure:
    fig = Figure(figsize=(12, 3.4))
    for i, r in enumerate(rows):
        ax = fig.add_subplot(1, len(rows), i + 1)
        totals = r["_totals"]
        step = max(1, len(totals) // PLOT_POINTS)
        idx = np.arange(0, len(totals), step)
        ax.scatter(idx, totals[idx] * 1e3, s=1, alpha=0.3, rasterized=True)
        ax.plot([r["min_index"]], [r["min_ms"]], "r*", markersize=14, label="minimum = OPT"
                if np.isclose(r["opt_ms"], r["min_ms"]) else "minimum")
        ax.set_xlabel("execution path")
        ax.set_ylabel("time (ms)")
        ax.set_title(f"({'abc'[i]}) {runs.MODELS[r['model']]}: {r['paths']:,} paths", fontsize=9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def optimality(ctx: Context) -> Artifact:
    """OPT and the path-aware DP against the exact optimum of the whole graph, every model and p."""
    ps = (MAPS_P,) if ctx.quick else runs.SEQUENCE_LENGTHS
    rows = []
    for model in runs.MODELS:
        for p in ps:
            g = runs.dcg(model, p)
            dp, dpp = als_dp(g), als_dp(g, "path")
            sat = milp(g, "cp-sat", 60.0)
            highs = milp(g, "highs", 60.0)
            rows.append({"model": model, "p": p, "opt_ms": dp.latency_s * 1e3, "opt_path_ms": dpp.latency_s * 1e3,
                         "cp_sat_ms": sat.latency_s * 1e3, "cp_sat_optimal": sat.optimal, "cp_sat_s": sat.seconds,
                         "highs_ms": highs.latency_s * 1e3, "highs_optimal": highs.optimal,
                         "highs_s": highs.seconds, "opt_gap": dp.latency_s / sat.latency_s - 1.0,
                         "opt_path_gap": dpp.latency_s / sat.latency_s - 1.0, "dp_s": dp.seconds})
    table = pd.DataFrame(rows)
    exact = table["opt_gap"].abs() <= 1e-9
    claims = [
        claim(ctx, "true", "OPT (the paper's DP) finds the exact optimum of every whole graph", "optimal",
              f"{int(exact.sum())} of {len(table)}; largest gap {table['opt_gap'].max():.3%}", bool(exact.all()),
              "gap <= 1e-9", kind=PREDICTION),
        claim(ctx, "true", "CP-SAT and HiGHS agree and prove optimality", "equal",
              f"largest difference {float((table.cp_sat_ms - table.highs_ms).abs().max()):.2e} ms",
              bool(np.allclose(table.cp_sat_ms, table.highs_ms, rtol=1e-7) and table.cp_sat_optimal.all()
                   and table.highs_optimal.all()), "rel. 1e-7", kind=STRUCTURAL),
    ]
    table, wallclock = split_wallclock(table, ("cp_sat_s", "highs_s", "dp_s"))   # the solvers' times here
    return Artifact(table, None, claims, wallclock=wallclock)
