"""``hetsim calibrate``: fit a platform to measurements. ``platform`` is the core's (any board, from
measured times); plugins add their own subcommands (the host tool's ``calibrate host``) through a
``"calibrate:module:command"`` entry (hetsim/plugins.py)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from hetsim.cli._common import LazyChoice
from hetsim.errors import HetsimError


@click.group()
def calibrate() -> None:
    """Fit a platform YAML to measurements (a board's per-layer times, this machine, ...)."""


def _pairs(items, flag: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise HetsimError(f"{flag} {item!r}: expected EP=FILE")
        out.setdefault(key.strip(), []).append(value.strip())
    return out


def _bounds(items) -> dict[str, tuple[float, float]]:
    out = {}
    for item in items:
        key, sep, rng = item.partition("=")
        lo, colon, hi = rng.partition(":")
        try:
            a, b = float(lo), float(hi)
        except ValueError:
            a = b = float("nan")
        if not sep or not colon or not key or not (0 < a < b):
            raise HetsimError(f"--fit {item!r}: expected KEY=LOW:HIGH with 0 < LOW < HIGH, e.g. "
                              "core_types.cpu.roofline.gemm_efficiency=0.01:1")
        out[key] = (a, b)
    return out


def _other_model(cost: str, mechanisms: str, fit: dict[str, tuple[float, float]], rows) -> dict:
    """calibrate_platform's arguments for a cost model without mechanisms (a plugin's): exactly the
    --fit fields, the rows priced by the model built for their network."""
    from hetsim.cost import make_cost_model
    from hetsim.workload import load_workload

    if mechanisms not in ("auto", "none"):
        raise HetsimError(f"--mechanisms {mechanisms}: the mechanisms are the roofline's and gemm2's; the {cost} "
                          "model fits exactly the --fit fields")
    if not fit:
        raise HetsimError(f"--cost {cost}: name the fields to fit, --fit KEY=LOW:HIGH (e.g. "
                          "core_types.<name>.<block>.<field>=0.01:100)")
    networks = sorted(set(rows.network))
    if len(networks) != 1:
        raise HetsimError(f"--cost {cost}: the rows measure {len(networks)} networks ({', '.join(networks)}); "
                          "a model built for one network prices one network's rows")
    workload = load_workload(networks[0])
    return {"factory": lambda p: make_cost_model(p, model=cost, workload=workload), "parameters": fit,
            "cost": cost}


@calibrate.command("platform")
@click.argument("platform")
@click.option("--measurements", "-m", "csvs", multiple=True, type=click.Path(dir_okay=False),
              help="Tidy CSV of measured times (repeatable; columns: docs/calibrate.md).")
@click.option("--ort", "ort", multiple=True, metavar="EP=PROFILE.json",
              help="ONNX Runtime profile of --network on an EP (repeatable): per-op and whole-network rows.")
@click.option("--acl", "acl", multiple=True, metavar="EP=LOG.json",
              help="ARM Compute Library SchedulerTimer log (benchmark JSON) of --network on an EP (repeatable).")
@click.option("--network", "network", default=None, help="The workload --ort and --acl measured (name or YAML).")
@click.option("--onnx-model", "onnx_model", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The ONNX model the --ort profiles ran (checks their node names).")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Calibrated platform YAML to write; the residuals go beside it (<name>.residuals.csv, "
              "<name>.report.md). Default: results/calibrate/<platform>.yaml.")
@click.option("--name", default=None, help="Platform name in the written YAML (default: the input's).")
@click.option("--plot", "plot", type=click.Path(dir_okay=False), default=None,
              help="Measured-vs-predicted figure; the suffix gives the format (.png, .svg, .pdf).")
@click.option("--cost", "cost", type=LazyChoice("hetsim.plugins:cost_model_names"), default="roofline",
              show_default=True, help="The cost model whose parameters are fitted: roofline and gemm2 with their "
              "mechanisms; any other (a plugin's: pim) fits exactly the --fit fields, pricing the rows of "
              "--network with it.")
@click.option("--mechanisms", default="auto", show_default=True,
              help="Comma-separated of kinds, clock, input, feeder; auto: every one the rows identify; none.")
@click.option("--fix", "fixed", multiple=True, metavar="KEY=VALUE",
              help="Set a platform field before the fit (repeatable), as --set.")
@click.option("--fit", "extra", multiple=True, metavar="KEY=LOW:HIGH",
              help="Fit this field too, within bounds (repeatable).")
@click.option("--holdout", "holdout", multiple=True, metavar="NETWORK",
              help="Also fit without NETWORK and score its prediction (repeatable: one fit each).")
@click.option("--kfold", "kfold", type=int, default=None,
              help="Cross-validate: K folds over the networks (K >= number of networks: leave one out).")
@click.option("--ablation", is_flag=True, help="Refit with each mechanism off and report what it changes.")
@click.option("--loss", type=click.Choice(["linear", "soft_l1", "huber"]), default="linear", show_default=True,
              help="Least-squares loss (soft_l1: rows disturbed by other processes weigh little).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def calibrate_platform_cmd(platform, csvs, ort, acl, network, onnx_model, out, name, plot, cost, mechanisms,
                           fixed, extra, holdout, kfold, ablation, loss, as_json) -> None:
    """Fit PLATFORM's cost-model parameters (a YAML with the hardware facts) to measured times and
    write the calibrated platform, its residuals per network, cluster and clock, and a
    measured-vs-predicted plot. docs/calibrate.md: what to measure and how."""
    from hetsim.calibrate import board, crossval, report, table
    from hetsim.platform.loader import resolve_platform
    from hetsim.validation import atomic_write, check_output_path

    check_output_path(out, "--out")
    check_output_path(plot, "--plot")
    if plot:
        report.plot_format(plot)
    if kfold is not None and holdout:
        raise HetsimError("--kfold and --holdout: give one")
    path = resolve_platform(platform)
    out_path = Path(out) if out else Path("results") / "calibrate" / f"{path.stem}.yaml"
    if out_path.suffix not in (".yaml", ".yml"):
        raise HetsimError(f"--out {out_path}: the platform file must end in .yaml or .yml")
    if (ort or acl) and not network:
        raise HetsimError("--ort and --acl need --network (the workload they measured)")
    tables, inputs = [], []
    for c in csvs:
        tables.append(table.read_measurements(c))
        inputs.append(board.file_digest(c))
    if ort:
        pairs = _pairs(ort, "--ort")
        tables.append(table.from_ort(pairs, network, onnx_model))
        inputs += [f"ONNX Runtime profile {ep}={board.file_digest(f)}" for ep, fs in pairs.items() for f in fs]
    if acl:
        pairs = _pairs(acl, "--acl")
        tables.append(table.from_acl(pairs, network))
        inputs += [f"ARM Compute Library log {ep}={board.file_digest(f)}" for ep, fs in pairs.items() for f in fs]
    rows = table.concat(tables)
    kwargs = dict(cost=cost, fixed=list(fixed), extra=_bounds(extra), loss=loss, inputs=inputs, workloads={})
    if cost not in board.COST_MODELS:
        kwargs.update(_other_model(cost, mechanisms, kwargs.pop("extra"), rows))
    fit = board.calibrate_platform(path, rows, mechanisms=mechanisms, **kwargs)
    text = fit.yaml_text(name)
    import yaml

    from hetsim.platform import platform_from_dict

    platform_from_dict(yaml.safe_load(text), str(out_path))   # never write a platform that fails to load
    folds = crossval.folds_of(sorted(set(rows.network)), kfold) if kfold is not None else \
        [[h] for h in holdout] if holdout else None
    held = crossval.crossvalidate(path, rows, folds, mechanisms=mechanisms, **kwargs) if folds else []
    abl = crossval.ablation(path, rows, fit.mechanisms, folds, **kwargs) if ablation else None

    md = [report.fit_markdown(fit)]
    slow = report.dvfs_slowdowns(fit.table)
    if len(slow):
        md += ["", "### DVFS slowdowns (whole networks)", "", "| network | EP | from | to | measured | predicted | error |",
               "|---|---|---|---|---:|---:|---:|"]
        md += [f"| {r.network} | {r.ep} | {r._3} | {r.to} | {r.measured:.3f} | {r.predicted:.3f} | {report.pct(r.error)} |"
               for r in slow.itertuples()]
    if held:
        md += ["", "### Held-out networks (fitted without them)", "", report.holdout_markdown(held)]
    if abl is not None:
        md += ["", "### Ablation" + (" (held-out medians)" if folds else " (in sample)"), "",
               "| variant | layer median abs error | pipeline median abs error | pipeline rank corr. | regret | DVFS slowdown error |",
               "|---|---:|---:|---:|---:|---:|"]
        md += [f"| {r.variant} | {report.apct(r.layer_median_abs_error)} | {report.apct(r.pipeline_median_abs_error)} | "
               f"{report._r(r.pipeline_spearman)} | {report.apct(r.regret)} | {report.apct(r.dvfs_median_abs_error)} |"
               for r in abl.itertuples()]
    if fit.left_out:
        md += ["", f"{len(fit.left_out)} rows left out: the {cost} model cannot run them where they were measured "
               f"(e.g. {fit.left_out[0]})."]
    markdown = "\n".join(md) + "\n"

    residuals = out_path.with_name(out_path.stem + ".residuals.csv")
    report_md = out_path.with_name(out_path.stem + ".report.md")
    with atomic_write(out_path) as f:
        f.write(text)
    with atomic_write(residuals) as f:
        fit.table.to_csv(f, index=False, float_format="%.6g")
    with atomic_write(report_md) as f:
        f.write(markdown)
    written = [out_path, residuals, report_md]
    if plot:
        report.plot_fit(fit.table, plot, title=f"{Path(fit.source).stem} ({', '.join(['base', *fit.mechanisms])})")
        written.append(Path(plot))
    if as_json:
        click.echo(json.dumps({
            "platform": str(out_path), "mechanisms": fit.mechanisms, "values": fit.values,
            "left_out": fit.left_out,
            "summary": {by: fit.summary(by).to_dict("records") for by in ("kind", "network", "place", "clock")},
            "holdout": [h.scores() for h in held],
            "ablation": abl.to_dict("records") if abl is not None else None,
            "written": [str(p) for p in written]}, default=float))
    else:
        click.echo(markdown)
        click.echo("wrote " + ", ".join(str(p) for p in written))
