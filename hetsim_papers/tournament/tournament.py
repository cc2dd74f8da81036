"""The tournament: every registered explorer on equal terms (hetsim_papers/tournament/sweeps/tournament.yaml).

Every algorithm of the registry (:func:`hetsim.exploration.algorithms`, so registering one adds it with
no other change) runs on the same platforms and workloads, with the same cost model, measurement
noise, trial budget and seeds, as one sweep (:mod:`hetsim.sweep`). Pipeline algorithms explore a
:class:`~hetsim.exploration.PipelineProblem`, placement algorithms (DAG schedulers) a
:class:`~hetsim.exploration.PlacementProblem` of the same platform and workload; each kind gets its own
table. An algorithm that refuses a problem (Shisha on a space of core groups, exhaustive search on
a space past the enumeration limit) is recorded with its one-line reason, not run.

*Quality* is the noise-free objective of the configuration an explorer settles on, relative to the
reference of its problem: for pipelines the exact optimum of the space
(:meth:`~hetsim.exploration.PipelineProblem.optimum`, a min-max dynamic programme over every EP
assignment), else (a DES measurement) the best value any explorer found. For placements the
reference is the best plan without splits, the *optimum* where an exact explorer (ILP-exact) proved
a lower bound on every such plan within its rounding of it; a plan with split ops (muLayer) is
scored against it, so above 1 is what splitting gains. It is reported beside the trials used and the tuning clock (what the search would take on the machine);
the wall time of the explorations, this machine's, goes to a ``.wallclock.csv`` of its own.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from hetsim.errors import HetsimError
from hetsim.experiment import STRUCTURAL, Artifact, Context, experiment, split_wallclock
from hetsim.figures import save_figure
from hetsim.loading import duration_text
from hetsim.validation import atomic_write, read_yaml

PAPER = "tournament"
SPEC = Path(__file__).resolve().parent / "sweeps" / "tournament.yaml"
#: The quick version (the test suite's): three platforms (one with a GPU, for the DAG schedulers
#: that need an accelerator), two workloads, two seeds, 300 trials.
QUICK_PLATFORMS = ["chiplet-c2", "hikey970", "hope-he"]
QUICK_WORKLOADS = ["synthnet", "alexnet"]
QUICK_SEEDS = 2
QUICK_MAX_TRIALS = 300
#: Relative slack when checking that nothing beats the optimum (float sums in another order).
OPTIMUM_RTOL = 1e-9
KINDS = ("pipeline", "placement")


def tournament_spec(quick: bool = False, seed: int = 0):
    """The shipped SPEC, seeds starting at ``seed``; narrowed to the QUICK_* values when ``quick``."""
    from hetsim.sweep import spec_from_dict

    data = read_yaml(SPEC)
    seeds = data["axes"]["seed"]
    n = QUICK_SEEDS if quick else len(seeds)
    data["axes"]["seed"] = [seed + i for i in range(n)]
    if quick:
        data["axes"]["platform"] = list(QUICK_PLATFORMS)
        data["axes"]["workload"] = list(QUICK_WORKLOADS)
        data["base"]["termination"]["max_trials"] = QUICK_MAX_TRIALS
        data["name"] = "tournament-quick"
    return spec_from_dict(data, str(SPEC) + (" (quick)" if quick else ""))


# -- the report ------------------------------------------------------------------------------------
def _problem_columns(table: pd.DataFrame, axes: list[str]) -> list[str]:
    return [a for a in axes if a not in ("algorithm", "seed")]


def score(result) -> dict[str, pd.DataFrame]:
    """Per problem kind, one row per cell with its quality: the sweep's columns plus ``kind``,
    ``reference`` (``optimum`` or ``best known``), ``reference_value`` and ``quality``."""
    from hetsim.sweep.cells import make_problem, problem_kind

    table = result.table.copy()
    if table.empty:
        return {}
    cells = {c.index: c for c in result.cells}
    axes = list(cells[int(table["cell"].iloc[0])].axes)
    group_cols = _problem_columns(table, axes)
    table["kind"] = [problem_kind(cells[int(i)].config) for i in table["cell"]]
    table["algorithm_name"] = [cells[int(i)].config["algorithm"] for i in table["cell"]]
    out = {}
    for kind in KINDS:
        part = table[table["kind"] == kind].copy()
        if part.empty:
            continue
        column = "fps" if kind == "pipeline" else _objective_column(part)
        maximize = kind == "pipeline" or column == "throughput_fps"
        true = f"true_{column}"
        if true not in part:
            part[true] = math.nan
        refs, kinds_, bounds, roundings = [], [], [], []
        for _, g in part.groupby(group_cols, sort=False, dropna=False):
            ref, what = math.nan, "best known"
            if kind == "pipeline":
                try:
                    _, ref = make_problem(cells[int(g["cell"].iloc[0])].config, noise_free=True).optimum()
                    what = "optimum"
                except HetsimError:
                    ref = math.nan
            ok = g[(g["status"] == "ok") & g[true].notna()]
            if kind == "placement":
                ok = ok[~_splits(ok)]     # the reference is a plan without splits (module docstring)
            if what == "best known" and not ok.empty:
                ref = float(ok[true].max() if maximize else ok[true].min())
            if kind == "placement":
                bound, rounding = _bound(g) if column == "latency_s" else (math.nan, 0.0)
                if ref <= bound + rounding:
                    what = "optimum"
                bounds.append(pd.Series(bound, index=g.index))
                roundings.append(pd.Series(rounding, index=g.index))
            refs.append(pd.Series(ref, index=g.index))
            kinds_.append(pd.Series(what, index=g.index))
        part["reference"] = pd.concat(kinds_)
        part["reference_value"] = pd.concat(refs)
        if kind == "placement":
            part["lower_bound"] = pd.concat(bounds)
            part["bound_rounding"] = pd.concat(roundings)
            part["splits"] = _splits(part)
        v = pd.to_numeric(part[true], errors="coerce")
        part["quality"] = v / part["reference_value"] if maximize else part["reference_value"] / v
        out[kind] = part
    return out


def _splits(rows: pd.DataFrame) -> pd.Series:
    """Whether each row's plan splits an op over several EPs (muLayer's channel splits)."""
    if "split_ops" not in rows:
        return pd.Series(False, index=rows.index)
    return pd.to_numeric(rows["split_ops"], errors="coerce").fillna(0) > 0


def _bound(g: pd.DataFrame) -> tuple[float, float]:
    """The best lower bound on the latency of every plan without splits that an exact explorer
    proved on this problem (CP-SAT's; NaN when none ran), and how far its integer times may be from
    the engine's (s)."""
    if "lower_bound_latency_s" not in g:
        return math.nan, 0.0
    b = pd.to_numeric(g["lower_bound_latency_s"], errors="coerce")
    if b.isna().all():
        return math.nan, 0.0
    i = b.idxmax()
    return float(b[i]), float(pd.to_numeric(g["bound_rounding_s"], errors="coerce").fillna(0.0)[i])


def _objective_column(part: pd.DataFrame) -> str:
    objectives = part.loc[part["status"] == "ok", "objective"].dropna().unique() if "objective" in part else []
    if len(objectives) > 1:
        raise HetsimError(f"placement tournament: explorers optimise different objectives {list(objectives)}")
    objective = objectives[0] if len(objectives) else "latency"
    return {"latency": "latency_s", "energy": "energy_J", "throughput": "throughput_fps"}[objective]


#: The per-problem table's wall-clock column (the explorations' own time on this machine).
WALLCLOCK = ("wall_mean_s",)


def per_problem(scored: pd.DataFrame, group_cols: list[str]) -> pd.DataFrame:
    """One row per algorithm x problem: seeds run and failed, quality (mean, min, max), trials,
    tuning clock and wall time (means), the reference and the first error."""
    rows = []
    for keys, g in scored.groupby(["algorithm", *group_cols], sort=False, dropna=False):
        ok = g[g["status"] == "ok"]
        errors = g.loc[g["status"] != "ok", "error"].dropna()
        row = dict(zip(["algorithm", *group_cols], keys if isinstance(keys, tuple) else (keys,),
                       strict=True))
        row.update({
            "seeds": len(g), "failed": int((g["status"] != "ok").sum()),
            "quality_mean": ok["quality"].mean(), "quality_min": ok["quality"].min(),
            "quality_max": ok["quality"].max(),
            "trials_mean": ok["trials"].mean() if "trials" in ok else math.nan,
            "clock_mean_s": ok["clock_s"].mean() if "clock_s" in ok else math.nan,
            "wall_mean_s": ok["wall_s"].mean() if "wall_s" in ok else math.nan,
            "reference": g["reference"].iloc[0], "reference_value": g["reference_value"].iloc[0],
        })
        if "lower_bound" in g:
            row.update(lower_bound=g["lower_bound"].iloc[0], splits=bool(g.loc[g["status"] == "ok", "splits"].any()))
        row["error"] = errors.iloc[0] if len(errors) else ""
        rows.append(row)
    return pd.DataFrame(rows)


def per_algorithm(scored: pd.DataFrame, group_cols: list[str]) -> pd.DataFrame:
    """One row per algorithm over every problem: the summary of the tournament."""
    rows = []
    n_problems = scored.groupby(group_cols, dropna=False).ngroups
    for name, g in scored.groupby("algorithm", sort=False):
        ok = g[g["status"] == "ok"]
        ran = ok.groupby(group_cols, dropna=False).ngroups if not ok.empty else 0
        errors = g.loc[g["status"] != "ok", "error"].dropna()
        rows.append({
            "algorithm": name, "problems_run": ran, "problems": n_problems, "cells": len(g),
            "failed": int((g["status"] != "ok").sum()),
            "quality_mean": ok["quality"].mean(), "quality_min": ok["quality"].min(),
            "trials_median": ok["trials"].median() if not ok.empty else math.nan,
            "clock_median_s": ok["clock_s"].median() if not ok.empty else math.nan,
            "wall_median_s": ok["wall_s"].median() if not ok.empty else math.nan,
            "not_run_because": errors.value_counts().index[0] if len(errors) else "",
            **({"splits": bool(ok["splits"].any())} if "splits" in ok else {}),
        })
    return pd.DataFrame(rows)


def markdown(summary: pd.DataFrame, kind: str) -> str:
    """The summary as a table in the scorecard's style."""
    what = "throughput" if kind == "pipeline" else "objective"
    # No wall times here: the table is the same bytes on every run (they are in the .wallclock.csv).
    lines = [f"| algorithm | problems run | {what} / reference: mean | worst | trials (median) | "
             "tuning clock (median) | when not run |",
             "|---|---|---|---|---|---|---|"]
    for r in summary.itertuples():
        reason = str(r.not_run_because).replace("|", "\\|")
        if len(reason) > 90:
            reason = reason[:87] + "..."
        name = f"{r.algorithm} (splits ops)" if getattr(r, "splits", False) else r.algorithm
        lines.append(f"| {name} | {r.problems_run}/{r.problems} | {_pct(r.quality_mean)} | "
                     f"{_pct(r.quality_min)} | {_num(r.trials_median)} | {_dur(r.clock_median_s)} | "
                     f"{reason} |")
    return "\n".join(lines)


def _pct(x: float) -> str:
    return "–" if not isinstance(x, float) or math.isnan(x) else f"{100 * x:.1f} %"


def _num(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:g}"


def _dur(s: float) -> str:
    return "–" if math.isnan(s) else duration_text(s)


def figure(summary: pd.DataFrame, kind: str):
    """Quality against search cost: the mean quality of each algorithm at its median tuning clock
    and median trials (log scales)."""
    data = summary.dropna(subset=["quality_mean"])
    fig, axs = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, col, xlabel in ((axs[0], "clock_median_s", "tuning clock, median (s)"),
                            (axs[1], "trials_median", "trials, median")):
        for r in data.itertuples():
            x = getattr(r, col)
            if not x > 0:
                continue
            ax.scatter(x, 100 * r.quality_mean, s=30)
            ax.annotate(r.algorithm, (x, 100 * r.quality_mean), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    ref = "the optimum" if kind == "pipeline" else "the best known"
    axs[0].set_ylabel(f"{'throughput' if kind == 'pipeline' else 'objective'} / {ref}, mean (%)")
    fig.suptitle(f"{kind} tournament: quality vs search cost", fontsize=10)
    fig.tight_layout()
    return fig


def write_report(result, out_dir: Path) -> list[Path]:
    """``hetsim sweep`` with ``report: tournament``: per kind, tournament-<kind>.csv (per problem),
    tournament-<kind>.md (the summary) and tournament-<kind>.png."""
    scored = score(result)
    written = []
    axes = list(result.cells[0].axes) if result.cells else []
    group_cols = _problem_columns(result.table, axes)
    for kind, part in scored.items():
        table, wallclock = split_wallclock(per_problem(part, group_cols), WALLCLOCK)
        summary = per_algorithm(part, group_cols)
        with atomic_write(out_dir / f"tournament-{kind}.csv") as f:
            table.to_csv(f, index=False)
        if wallclock is not None:
            with atomic_write(out_dir / f"tournament-{kind}.wallclock.csv") as f:
                wallclock.to_csv(f, index=False)
            written.append(out_dir / f"tournament-{kind}.wallclock.csv")
        with atomic_write(out_dir / f"tournament-{kind}.md") as f:
            f.write(f"# {kind} tournament\n\n{_explain(kind)}\n\n{markdown(summary, kind)}\n")
        save_figure(figure(summary, kind), out_dir / f"tournament-{kind}.png", dpi=110, bbox_inches="tight")
        written += [out_dir / f"tournament-{kind}.{ext}" for ext in ("csv", "md", "png")]
    return written


def _explain(kind: str) -> str:
    if kind == "pipeline":
        return ("Quality: the noise-free throughput of the configuration each explorer settles on / the "
                "exact optimum of the space (a min-max dynamic programme over every EP assignment), or / "
                "the best any explorer found where the optimum has no closed form. Means over seeds and "
                "problems; trials and tuning clock are medians (wall times: the .wallclock.csv beside the table).")
    return ("Quality: the reference latency of the problem / this explorer's noise-free latency. The "
            "reference is the best plan without splits any explorer found; it is the *optimum* (the "
            "reference column) where CP-SAT's lower bound on every such plan (ILP-exact, graphs of at "
            "most 60 ops) lies within its rounding (1 us per op) of it. A plan that splits ops over "
            "several EPs (the rows marked 'splits ops') is measured against the same reference: above 100 % is what splitting "
            "gains over the best plan without. Means over seeds and problems; trials and tuning clock "
            "are medians (wall times: the .wallclock.csv beside the table).")


# -- the experiments -------------------------------------------------------------------------------
def _run(ctx: Context):
    """The tournament's sweep, once per (quick, seed), on the context's workers or Dask scheduler
    (``hetsim reproduce --workers/--scheduler``; the results do not depend on them)."""
    return _sweep(ctx.quick, ctx.seed, ctx.workers, ctx.scheduler)


@lru_cache(maxsize=2)
def _sweep(quick: bool, seed: int, workers: int | None, scheduler: str | None):
    from hetsim.sweep import run_sweep

    return run_sweep(tournament_spec(quick, seed), workers=workers, scheduler=scheduler)


def artifact(result, kind: str, ctx: Context) -> Artifact:
    """The table, figure, claims and summary of one kind of tournament."""
    from hetsim.exploration import algorithms

    scored = score(result).get(kind)
    registered = [a.name for a in algorithms(kind) if not a.extra]   # the SPEC's "all"
    axes = list(result.cells[0].axes)
    group_cols = _problem_columns(result.table, axes)
    spec = result.spec
    setup = (f"{len(spec.axes.platform or [])} platforms x {len(spec.axes.workload or [])} workloads x "
             f"{len(spec.axes.seed or [])} seeds, {result.spec.base.termination.max_trials} trials at "
             f"most, noise sigma {result.spec.base.measurement.noise_sigma}")
    if scored is None:
        note = (f"No {kind} algorithm is registered yet ({setup}); registering one "
                f"(hetsim.exploration.register(..., problem={kind!r}, ...)) adds it here.")
        return Artifact(pd.DataFrame(columns=["algorithm", *group_cols]), None, [], [note])
    table, wallclock = split_wallclock(per_problem(scored, group_cols), WALLCLOCK)
    summary = per_algorithm(scored, group_cols)
    claims = []
    ran = sorted(set(scored.loc[scored["status"] == "ok", "algorithm_name"]))
    claims.append(ctx.true(f"every registered {kind} explorer runs on at least one problem",
                           len(registered), len(ran), set(registered) <= set(ran), "all registered",
                           kind=STRUCTURAL))
    exact = scored[(scored["reference"] == "optimum") & (scored["status"] == "ok")]
    if kind == "placement":
        claims += _bound_claims(scored, ctx)
    elif not exact.empty:
        worst = float(exact["quality"].max())
        claims.append(ctx.true("no explorer's configuration beats the exact optimum of its space",
                               "<= 1", round(worst, 12), worst <= 1 + OPTIMUM_RTOL,
                               f"quality <= 1 + {OPTIMUM_RTOL:g}", kind=STRUCTURAL))
    notes = [f"{kind.capitalize()} tournament ({setup}). {_explain(kind)}{_references(scored, group_cols)}",
             markdown(summary, kind)]
    return Artifact(table, figure(summary, kind), claims, notes, wallclock=wallclock)


def _references(scored: pd.DataFrame, group_cols: list[str]) -> str:
    """How many problems are judged against a proven optimum."""
    refs = scored.groupby(group_cols, dropna=False)["reference"].first()
    return f" The reference is the optimum on {int((refs == 'optimum').sum())} of {len(refs)} problems."


def _bound_claims(scored: pd.DataFrame, ctx: Context) -> list:
    """No plan without splits beats CP-SAT's proven lower bound (less its rounding): the exact
    model and the engine agree."""
    unsplit = scored[(scored["status"] == "ok") & ~scored["splits"] & scored["lower_bound"].notna()]
    if unsplit.empty:
        return []
    slack = pd.to_numeric(unsplit["true_latency_s"]) - (unsplit["lower_bound"] - unsplit["bound_rounding"])
    problems = unsplit.groupby(["lower_bound"]).ngroups
    return [ctx.true("no plan without splits beats CP-SAT's lower bound on its problem", "all",
                     f"{int((slack >= 0).sum())} of {len(slack)} cells ({problems} problems)",
                     bool((slack >= 0).all()), "every one (1 us per op rounding)", kind=STRUCTURAL)]


@experiment(PAPER, "pipeline", "Tournament: every registered pipeline explorer, equal terms")
def pipeline(ctx: Context) -> Artifact:
    return artifact(_run(ctx), "pipeline", ctx)


@experiment(PAPER, "placement", "Tournament: every registered placement explorer (DAG schedulers)")
def placement(ctx: Context) -> Artifact:
    return artifact(_run(ctx), "placement", ctx)

