"""``shisha:fig4`` (convergence on SynthNet, 8 EPs) and ``shisha:fig5`` (optimality on 4 EPs):
every algorithm on one problem (:func:`hetsim_papers.shisha.experiments.runs.compare`), summarised."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.shisha.experiments._common import COLORS, artifact, figure, within_factor
from hetsim_papers.shisha.experiments.exhaustive import ESResult
from hetsim_papers.shisha.experiments.paper import (
    FIG4_BEST_FPS,
    FIG4_PLATEAU_FPS,
    FIG4_PS_FRACTION,
    FIG4_SHISHA_FRACTION,
    FIG4_SPEEDUP,
    FIG5_FRACTION,
    NETWORKS,
    SAME,
    SHISHA_POINTS,
)
from hetsim_papers.shisha.experiments.runs import BASELINES, compare, time_to_best


def summary(runs: dict, es: ESResult, n_exact: int, space: int) -> pd.DataFrame:
    """One row per algorithm; ``fraction_points``: points tried (trials, repeated executions
    included) over every split of the problem's depths (the database, ``space``), the reading of
    "Shisha explores x % of the design space" (docs/papers/shisha.md); ``fraction_splits``: distinct
    splits over the same; ``fraction_splits_eqN`` over the ``n_exact`` N-stage splits (the "= N" variant)."""
    rows = []
    for alg, rs in runs.items():
        rows.append({
            "algorithm": alg, "runs": len(rs),
            "best_fps": float(np.mean([r.best_fps for r in rs])),
            "best_fps_min": float(np.min([r.best_fps for r in rs])),
            "best_fps_max": float(np.max([r.best_fps for r in rs])),
            "normalised_to_ES": float(np.mean([r.best_fps for r in rs])) / es.best_fps,
            "time_to_best_s": float(np.mean([time_to_best(r) for r in rs])),
            "clock_s": float(np.mean([r.clock_s for r in rs])),
            "trials": float(np.mean([r.n_trials for r in rs])),
            "distinct_splits": float(np.mean([r.n_distinct_splits for r in rs])),
            "fraction_points": float(np.mean([r.n_trials for r in rs])) / space,
            "fraction_splits": float(np.mean([r.fraction_splits_explored for r in rs])),
            "fraction_splits_eqN": float(np.mean([r.n_distinct_splits for r in rs])) / n_exact,
            "best_mapping": rs[0].best_mapping,
        })
    rows.append({"algorithm": "ES", "runs": 1, "best_fps": es.best_fps, "best_fps_min": es.best_fps,
                 "best_fps_max": es.best_fps, "normalised_to_ES": 1.0, "time_to_best_s": es.time_to_best_s,
                 "clock_s": es.clock_s, "trials": es.n_configs, "distinct_splits": es.n_splits,
                 "fraction_points": 1.0, "fraction_splits": 1.0, "fraction_splits_eqN": 1.0,
                 "best_mapping": str(es.best)})
    return pd.DataFrame(rows)


# -- Fig. 4 -------------------------------------------------------------------------------------------------
def fig4_table(ctx: Context) -> tuple[pd.DataFrame, list, list[str]]:
    prob, runs, es = compare("c5", "synthnet", tuple(range(2, 9)), ctx.seed)
    n = prob.num_layers
    table = summary(runs, es, math.comb(n - 1, 7), prob.split_space_size)
    by = table.set_index("algorithm")
    shisha_t = by.loc["Shisha", "time_to_best_s"]
    others = ("SA", "HC", "SA_s", "HC_s", "PS")
    speedups = {a: by.loc[a, "time_to_best_s"] / shisha_t for a in others}
    table["convergence_vs_shisha"] = table["time_to_best_s"] / shisha_t
    claims = [ctx.close("Shisha's solution equals ES's best (normalised)", 1.0,
                        by.loc["Shisha", "normalised_to_ES"], rel=SAME, kind=PREDICTION)]
    for alg in BASELINES:
        claims.append(ctx.close(f"{alg} plateaus at 0.80 of ES's 0.94 (normalised, mean of {len(runs[alg])} seeds)",
                                FIG4_PLATEAU_FPS / FIG4_BEST_FPS, by.loc[alg, "normalised_to_ES"], rel=0.1,
                                kind=PREDICTION))
    claims += [
        within_factor(ctx, "Shisha explores 0.12% of the design space (splits, depths 2-8)", FIG4_SHISHA_FRACTION,
                      by.loc["Shisha", "fraction_points"], kind=PREDICTION),
        within_factor(ctx, "PS explores 2.03% of the design space", FIG4_PS_FRACTION,
                      by.loc["PS", "fraction_points"], kind=PREDICTION),
        within_factor(ctx, "convergence ~35x faster than SA, HC, SA_s, HC_s, PS (mean of time-to-best ratios)",
                      FIG4_SPEEDUP, float(np.mean(list(speedups.values()))), kind=PREDICTION),
    ]
    notes = ["Convergence time = tuning clock at which an algorithm first reaches its final best. Ratios to "
             "Shisha: " + ", ".join(f"{a} {v:.1f}x" for a, v in speedups.items())
             + f"; ES {by.loc['ES', 'time_to_best_s'] / shisha_t:.3g}x, RW {by.loc['RW', 'time_to_best_s'] / shisha_t:.1f}x.",
             f"Design space: {prob.split_space_size:,} splits into 2-8 stages (the database PS and ES build, "
             f"charged {es.database_s:.0f} s); fraction_splits_eqN uses the {math.comb(n - 1, 7):,} 8-stage "
             f"splits instead. ES measures {es.n_configs:,} configurations (splits x FEP/SEP patterns)."]
    return table, claims, notes


def plot_fig4(runs: dict, es: ESResult):
    assert es.trace is not None
    fig, ax = figure(1, 1, (7.5, 4.5))
    ax = ax[0, 0]
    for alg, rs in runs.items():
        t = rs[0].trials
        ax.step(t["clock_s"], t["best_fps_so_far"], where="post", color=COLORS[alg],
                label=f"{alg}" + (f" (seed {rs[0].seed})" if len(rs) > 1 else ""))
    ax.step(es.trace["clock_s"], es.trace["best_fps_so_far"], where="post", color=COLORS["ES"], label="ES")
    ax.axvline(es.database_s, color="k", ls=":", lw=1, label=f"database ready ({es.database_s:.0f} s)")
    ax.set_xscale("log")
    ax.set_xlabel("tuning clock (s, log)")
    ax.set_ylabel("best throughput so far (frames/s)")
    ax.set_title("SynthNet on chiplet-c5 (8 EPs)")
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    return fig


def fig4(ctx: Context) -> Artifact:
    table, claims, notes = fig4_table(ctx)
    _, runs, es = compare("c5", "synthnet", tuple(range(2, 9)), ctx.seed)
    return artifact(table, plot_fig4(runs, es), claims, notes)


# -- Fig. 5 -------------------------------------------------------------------------------------------------
def fig5_table(ctx: Context) -> tuple[pd.DataFrame, list]:
    frames, claims, trials = [], [], []
    for w, label in NETWORKS.items():
        prob, runs, es = compare("c2", w, (2, 3, 4), ctx.seed)
        t = summary(runs, es, math.comb(prob.num_layers - 1, 3), prob.split_space_size)
        t.insert(0, "network", label)
        frames.append(t)
        by = t.set_index("algorithm")
        trials.append(by.loc["Shisha", "trials"])
        claims.append(ctx.close(f"{label}: Shisha finds the ES best (normalised)", 1.0,
                                by.loc["Shisha", "normalised_to_ES"], rel=SAME, kind=PREDICTION))
        claims.append(within_factor(ctx, f"{label}: Shisha explores {FIG5_FRACTION[w]:.1%} of the design space",
                                    FIG5_FRACTION[w], by.loc["Shisha", "fraction_points"], kind=PREDICTION))
    # §7.3: "Shisha on average tries 25 - 35 exploration points": the range itself, no factor.
    claims.append(ctx.within("Shisha tries 25-35 points on average (alpha = 10)", "25-35",
                             float(np.mean(trials)), SHISHA_POINTS[0], SHISHA_POINTS[1], kind=PREDICTION))
    return pd.concat(frames, ignore_index=True), claims


def plot_fig5(table: pd.DataFrame):
    fig, ax = figure(1, 1, (8, 4))
    ax = ax[0, 0]
    algs = list(dict.fromkeys(table["algorithm"]))
    width = 0.8 / len(algs)
    for i, alg in enumerate(algs):
        g = table[table["algorithm"] == alg]
        ax.bar(np.arange(len(NETWORKS)) + i * width, g["normalised_to_ES"], width, label=alg, color=COLORS[alg])
    ax.set_xticks(np.arange(len(NETWORKS)) + 0.4 - width / 2, list(NETWORKS.values()))
    ax.set_ylabel("throughput / ES best")
    ax.set_ylim(0, 1.3)
    ax.set_title("chiplet-c2 (4 EPs)")
    ax.legend(fontsize=7, ncol=8, loc="upper center")
    return fig


def fig5(ctx: Context) -> Artifact:
    table, claims = fig5_table(ctx)
    return artifact(table, plot_fig5(table), claims, ["Stochastic algorithms: mean over seeds (min/max in the table)."])
