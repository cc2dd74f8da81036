"""Fig. 9 (end-to-end time and speedup of the seven schemes) and Fig. 11 (compute vs transfer).

Every scheme is its registered explorer on the placement problem of one model at one p, measured by
the DAG engine's serial executor on the calibrated pim-zynq (:func:`runs.run_scheme`).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from hetsim.experiment import Artifact, Context
from hetsim_papers.pim.experiments import calibration as cal
from hetsim_papers.pim.experiments import runs
from hetsim_papers.pim.experiments.paper import (
    FIG9_DUET_GAIN_TOL,
    FIG9_RANGES,
    FIG9_REL_TOL,
    FIG11,
    FIG11_SIMILAR,
    FIG11_TOL,
    MAPS_P,
    PREDICTION,
    STRUCTURAL,
    claim,
)

SCHEMES = tuple(runs.SCHEMES)
COPY_FIT_SCHEME = cal.FIG9_COPY_FIT[0]


def fig9_table(ps=runs.SEQUENCE_LENGTHS) -> pd.DataFrame:
    rows = []
    for model in runs.MODELS:
        for p in ps:
            base = runs.run_scheme(model, p, "CPU_S only").latency_s
            for scheme in SCHEMES:
                r = runs.run_scheme(model, p, scheme)
                rows.append({"model": model, "p": p, "scheme": scheme, "latency_ms": r.latency_s * 1e3,
                             "compute_ms": r.compute_s * 1e3, "transfer_ms": r.transfer_s * 1e3,
                             "speedup_vs_cpu_s": base / r.latency_s,
                             "trials": r.exploration.n_trials, "tuning_clock_s": r.exploration.clock_s})
    return pd.DataFrame(rows)


def fig9(ctx: Context) -> Artifact:
    table = fig9_table(runs.QUICK_LENGTHS if ctx.quick else runs.SEQUENCE_LENGTHS)
    lat = table.pivot_table(index=["model", "p"], columns="scheme", values="latency_ms")
    claims = []
    for scheme, (lo, hi) in FIG9_RANGES.items():
        ratio = lat[scheme] / lat["OPT"]
        if scheme == COPY_FIT_SCHEME:
            continue      # the copy scale's fit input: its residual is claimed in pim:calibration
        if scheme.startswith("DUET"):
            for end, paper, value in (("lowest", lo, ratio.min()), ("highest", hi, ratio.max())):
                claims.append(claim(ctx, "close", f"OPT's gain over {scheme}, {end} over the models and p",
                                    round(paper - 1, 2), round(float(value) - 1, 4), abs_=FIG9_DUET_GAIN_TOL,
                                    kind=PREDICTION))
        else:
            for end, paper, value in (("lowest", lo, ratio.min()), ("highest", hi, ratio.max())):
                claims.append(claim(ctx, "close", f"OPT's speedup over {scheme}, {end} over the models and p",
                                    paper, round(float(value), 4), rel=FIG9_REL_TOL, kind=PREDICTION))
    best = lat.idxmin(axis=1)
    # OPT is the exact optimum of the cost model every scheme is measured with (pim:optimality),
    # so no scheme can beat it: a check of the implementation, not evidence about the board.
    claims.append(claim(ctx, "true", "OPT is the fastest scheme in every case", "every case",
                        f"{int((best == 'OPT').sum())} of {len(best)}", bool((best == "OPT").all()), "all",
                        kind=STRUCTURAL))
    speed = table[table.scheme == "OPT"].pivot_table(index="p", columns="model", values="speedup_vs_cpu_s")
    falls = [m for m in speed if speed[m].is_monotonic_decreasing]
    claims.append(claim(ctx, "true", "OPT's speedup over CPU_S falls as p grows, every model", "all 3",
                        falls, len(falls) == speed.shape[1], "all", kind=PREDICTION))
    for model in ("bert-small", "roberta-base"):
        sub = lat.loc[model]
        wins = int((sub["(CPU_P,PIM,CPU_S)"] < sub["(PIM,CPU_P,CPU_S)"]).sum())
        claims.append(claim(ctx, "true", f"{model}: (CPU_P,PIM,CPU_S) beats (PIM,CPU_P,CPU_S)",
                            "every p", f"{wins} of {len(sub)}", wins == len(sub), "every p", kind=PREDICTION))
    duet0 = int(((lat["DUET(x=0%)"] < lat["(CPU_P,PIM,CPU_S)"]) & (lat["DUET(x=0%)"] < lat["(PIM,CPU_P,CPU_S)"])).sum())
    claims.append(claim(ctx, "true", "DUET(x=0%) beats both priority orders in most cases", "most",
                        f"{duet0} of {len(lat)}", duet0 > len(lat) / 2, "> half", kind=PREDICTION))
    tol = 1e-12
    order = int(((lat["DUET(x=25%)"] <= lat["DUET(x=0%)"] + tol) & (lat["DUET(x=50%)"] <= lat["DUET(x=25%)"] + tol)
                 & (lat["OPT"] < lat["DUET(x=50%)"])).sum())
    # DUET's correction keeps a move only when it pays, so covering more nodes never hurts, and
    # OPT is the optimum: the ordering holds by construction.
    claims.append(claim(ctx, "true", "DUET improves from x = 0 to 25 to 50 % and stays slower than OPT",
                        "every case", f"{order} of {len(lat)}", order == len(lat), "every case", kind=STRUCTURAL))
    return Artifact(table, _plot_fig9(table), claims)


def _plot_fig9(table: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(12, 3.6))
    for i, model in enumerate(runs.MODELS):
        ax = fig.add_subplot(1, 3, i + 1)
        sub = table[table.model == model]
        ps = sorted(sub.p.unique())
        width = 0.8 / len(SCHEMES)
        for k, scheme in enumerate(SCHEMES):
            s = sub[sub.scheme == scheme].set_index("p").loc[ps]
            ax.bar([j + k * width for j in range(len(ps))], s["latency_ms"], width, label=scheme)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(ps))], [f"p={p}" for p in ps])
        ax.set_ylabel("execution time (ms)")
        ax.set_title(f"({'abc'[i]}) {runs.MODELS[model]}", fontsize=9)
        twin = ax.twinx()
        opt = sub[sub.scheme == "OPT"].set_index("p").loc[ps]
        twin.plot([j + 0.4 - width / 2 for j in range(len(ps))], opt["speedup_vs_cpu_s"], "k*-", label="OPT speedup")
        twin.set_ylabel("OPT speedup over CPU_S (x)")
        if i == 0:
            ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    return fig


def fig11(ctx: Context) -> Artifact:
    rows = []
    for model in runs.MODELS:
        for scheme in SCHEMES:
            r = runs.run_scheme(model, MAPS_P, scheme)
            rows.append({"model": model, "p": MAPS_P, "scheme": scheme, "compute_ms": r.compute_s * 1e3,
                         "transfer_ms": r.transfer_s * 1e3, "latency_ms": r.latency_s * 1e3})
    table = pd.DataFrame(rows)
    claims = []
    for model, (compute, transfer) in FIG11.items():
        sub = table[table.model == model].set_index("scheme")
        base, opt = sub.loc["(PIM,CPU_P,CPU_S)"], sub.loc["OPT"]
        dc = float(opt.compute_ms / base.compute_ms - 1)
        dt = float(opt.transfer_ms / base.transfer_ms - 1)
        if compute is None:
            claims.append(claim(ctx, "true", f"{model}: OPT's compute time similar to (PIM,CPU_P,CPU_S)'s",
                                "similar", round(dc, 4), abs(dc) <= FIG11_SIMILAR, f"within ±{FIG11_SIMILAR:.0%}",
                                kind=PREDICTION))
        # BERT's and RoBERTa's compute changes are the transpose cost's fit inputs (pim:calibration).
        claims.append(claim(ctx, "close", f"{model}: OPT's transfer change vs (PIM,CPU_P,CPU_S)", transfer,
                            round(dt, 4), abs_=FIG11_TOL, kind=PREDICTION))
    return Artifact(table, _plot_fig11(table), claims)


def _plot_fig11(table: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(12, 3.4))
    for i, model in enumerate(runs.MODELS):
        ax = fig.add_subplot(1, 3, i + 1)
        sub = table[table.model == model].set_index("scheme").loc[list(SCHEMES)]
        x = range(len(sub))
        ax.bar(x, sub["compute_ms"], label="computation")
        ax.bar(x, sub["transfer_ms"], bottom=sub["compute_ms"], label="data transfer")
        ax.set_xticks(list(x), list(sub.index), rotation=60, fontsize=7, ha="right")
        ax.set_ylabel("time (ms)")
        ax.set_title(f"({'abc'[i]}) {runs.MODELS[model]}, p = {MAPS_P}", fontsize=9)
        if i == 0:
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
