"""Issue 28 on this machine: per-layer times of the shipped networks at 1 and 2 cores and real
pipelines (hetsim_host's executor: numpy forward passes, one pinned OS process per stage), then
`hetsim calibrate platform` with one network held out, predicting that network's real pipelines.

    python benchmarks/calibrate_host.py measure --runs 3 --out results/calibrate-host
    python benchmarks/calibrate_host.py analyse results/calibrate-host --ablation   # the tables of docs/calibrate.md
    python benchmarks/calibrate_host.py convert SAVED/fidelity-2026-11-24* --out DIR   # saved quiet runs

``measure``: the hardware facts of this machine (hetsim_host.microbench.machine_info: ISA peak,
nominal clock, CPUs; one STREAM-like read for the memory bandwidth) into ``host-facts.yaml``, no
cost-model parameter; then per run and network (each waiting for a quiet machine: other processes
share the 2 CPUs): the whole network on C1 and on C2, and C1|C1 pipelines cut where the facts-only
model puts 20, 35, 50, 65 and 80 % of the work, ``--repeats`` times in turn; ``run<k>/<net>.csv``
is the tidy table (hetsim_host.validate.tidy_rows) with the load beside every row.

``analyse``: per run, fit on the single-stage rows (per-layer times on C1 and C2, whole networks) of
four networks and predict the fifth's layers and all its measured mappings (C1, C2 and the
pipelines); the medians over the runs per held-out network.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hetsim_host.probes.fidelity import busy_fraction, wait_quiet  # noqa: E402

NETWORKS = ("alexnet", "googlenet", "mobilenet", "resnet50", "squeezenet")
CUTS = (0.2, 0.35, 0.5, 0.65, 0.8)


def facts_yaml(out: Path, saved: Path | None = None) -> Path:
    """This machine's hardware facts as a platform without fitted parameters. The bandwidths are
    measured now, or read from ``saved`` (a saved run's host.yaml: its [measured] hardware facts; its
    fitted cost-model terms are left out)."""
    from hetsim_host.microbench import BenchPlan, bench_stream, cpus, machine_info

    info = machine_info()
    if saved is None:
        rows = bench_stream(BenchPlan(stream_reps=5), cpus(), lambda *a: None)   # 256 MB per CPU: past the caches
        one = [r["bytes"] / r["time_s"] / 1e9 for r in rows if r["cores"] == 1]
        every = [r["bytes"] / r["time_s"] / 1e9 for r in rows if r["cores"] == len(cpus())]
        per_core = float(np.median(one))
        total = float(np.sum(every)) if len(cpus()) > 1 else per_core
        n_cpus, source = len(cpus()), "STREAM-like read"
    else:
        import yaml

        d = yaml.safe_load(saved.read_text())
        total = float(d["memories"][0]["bandwidth_GBps"])
        per_core = float(d["core_types"][0]["bandwidth_GBps_per_core"])
        n_cpus = int(d["clusters"][0]["cores"])
        source = f"STREAM-like read, from {saved}"
    text = f"""# This machine's hardware facts, no cost-model parameter: the input of `hetsim calibrate platform`
# (benchmarks/calibrate_host.py). {info['model']}, {info['isa']}.
schema: 2
name: host-facts
description: "{info['model']}, {n_cpus} CPUs: hardware facts only (the cost models' defaults)"
memories:
  - name: dram
    bandwidth_GBps: {total:.3f}  # [measured] {source} on all CPUs at once, summed
core_types:
  - name: cpu
    macs_per_cycle: {info['macs_per_cycle']}  # [ext] {info['isa']}
    bandwidth_GBps_per_core: {per_core:.3f}  # [measured] {source} on 1 CPU
    dvfs:
      - {{name: nominal, freq_MHz: {round(info['nominal_MHz'])}}}  # [measured] /proc/cpuinfo
clusters:
  - {{name: host, symbol: C, core_type: cpu, cores: {n_cpus}, memory: dram}}
provenance:
  cost_parameters: datasheet
  source: "hardware facts of this machine; no cost-model parameter fitted"
"""
    path = out / "host-facts.yaml"
    path.write_text(text)
    return path


def mappings_for(platform_file: Path, network: str) -> list[str]:
    """C1, C2 and C1|C1 cut at CUTS of the facts-only model's C1 time."""
    from hetsim.cost import make_cost_model
    from hetsim.platform import load_platform
    from hetsim.workload import load_workload

    p = load_platform(str(platform_file))
    w = load_workload(network)
    n = w.num_layers
    t = np.cumsum(make_cost_model(p, model="roofline").layer_times(w, p.ep("C1")))
    t /= t[-1]
    cuts = sorted({int(np.clip(np.searchsorted(t, c) + 1, 1, n - 1)) for c in CUTS})
    return [f"C1:1-{n}", f"C2:1-{n}", *(f"C1:1-{k}|C1:{k + 1}-{n}" for k in cuts)]


def measure(out: Path, runs: int, networks, repeats: int, frames: int, limit: float, wait_s: float) -> None:
    from hetsim.platform import load_platform
    from hetsim_host.executor import WorkloadRef
    from hetsim_host.validate import tidy_rows, validate_host

    out.mkdir(parents=True, exist_ok=True)
    facts = out / "host-facts.yaml"
    if not facts.exists():
        facts = facts_yaml(out)
    platform = load_platform(str(facts))
    log = []
    for run in range(1, runs + 1):
        rd = out / f"run{run}"
        rd.mkdir(exist_ok=True)
        for net in networks:
            dest = rd / f"{net}.csv"
            if dest.exists():
                continue
            quiet = wait_quiet(limit, timeout_s=wait_s)
            t0 = time.time()
            report = validate_host(platform, WorkloadRef(net), mappings_for(facts, net), frames=frames,
                                   repeats=repeats, seed=0)
            df = pd.DataFrame(tidy_rows(report))
            df.to_csv(dest, index=False, float_format="%.9g")
            step = {"run": run, "network": net, **quiet, "wall_s": round(time.time() - t0, 1),
                    "loadavg_after": list(os.getloadavg()), "busy_after": round(busy_fraction(), 3),
                    "other_cpu_median": float(np.nanmedian(df.other_cpu))}
            log.append(step)
            print(json.dumps(step), flush=True)
            (out / "log.jsonl").open("a").write(json.dumps(step) + "\n")


def convert(sources: list[Path], out: Path) -> None:
    """Saved ``validate host`` runs (``<set>/run<k>/<net>/report.json``, the quiet runs of issue 14's
    harness, python -m hetsim_host.probes.fidelity) as tidy tables ``out/run<j>/<net>.csv``, one run per
    source run directory, in order."""
    from hetsim_host.validate import tidy_rows

    j = 0
    for src in sources:
        for rd in sorted(p for p in src.glob("run*") if p.is_dir()):
            reports = sorted(rd.glob("*/report.json"))
            if not reports:
                continue
            j += 1
            dest = out / f"run{j}"
            dest.mkdir(parents=True, exist_ok=True)
            for rep in reports:
                d = json.loads(rep.read_text())
                pd.DataFrame(tidy_rows(d)).to_csv(dest / f"{d['workload']}.csv", index=False, float_format="%.9g")
            (dest / "SOURCE").write_text(f"{rd}\n")
            if not (out / "host-facts.yaml").exists() and (rd / "host.yaml").exists():
                facts_yaml(out, saved=rd / "host.yaml")


def single_stage(df: pd.DataFrame, statistic: str) -> pd.DataFrame:
    """The rows a fit sees: the layers of the one-stage runs (C1, C2) and the whole networks."""
    one = df[~df.run_mapping.str.contains("|", regex=False)].copy()
    if statistic == "p20":
        m = one.layer.notna()
        one.loc[m, "time_s"] = one.loc[m, "time_p20_s"]
    return one


def holdouts(out: Path, statistic: str = "median", mechanisms: str = "auto", cost: str = "roofline",
             fit_on: str = "single", runs: list[str] | None = None) -> pd.DataFrame:
    """Per run and held-out network: fit on the other networks' rows (``single``: their one-stage
    runs, per-layer times on C1 and C2 and whole networks; ``all``: their pipelines too, whose
    later-stage layers identify the feeder share) and score the held-out network's one-stage layers
    and every measured mapping of it (C1, C2 and the pipelines)."""
    from hetsim.calibrate.crossval import Holdout, crossvalidate, predict_table
    from hetsim.calibrate.table import normalise

    facts = out / "host-facts.yaml"
    per_run = []
    for rd in sorted(out.glob("run*"), key=lambda p: int(p.name[3:]) if p.name[3:].isdigit() else 0):
        files = sorted(rd.glob("*.csv"))
        if len(files) < 2 or (runs and rd.name not in runs):
            continue
        raw = pd.concat([pd.read_csv(f, dtype={"mapping": str, "ep": str}) for f in files], ignore_index=True)
        one = single_stage(raw, statistic)
        if fit_on == "all":
            every = raw.copy()
            if statistic == "p20":
                m = every.layer.notna()
                every.loc[m, "time_s"] = every.loc[m, "time_p20_s"]
            fit_rows = normalise(every, f"{rd}")
        else:
            fit_rows = normalise(one, f"{rd}")
        nets = sorted(set(fit_rows.network))
        for h in crossvalidate(facts, fit_rows, [[n] for n in nets], mechanisms=mechanisms, cost=cost, workloads={}):
            # the held-out network: its one-stage layers and every measured mapping (C1, C2, the pipelines)
            own = pd.concat([one[one.network == h.network],
                             raw[(raw.network == h.network) & raw.layer.isna()
                                 & raw.run_mapping.str.contains("|", regex=False)]], ignore_index=True)
            full = Holdout(h.network, h.fit, predict_table(h.fit, normalise(own, f"{rd} {h.network}"), {}))
            per_run.append({"run": rd.name, **full.scores(),
                            "mechanisms": ",".join(h.fit.mechanisms) or "none",
                            "load_1min": float(np.nanmedian(raw[raw.network == h.network].load_1min)),
                            "other_cpu": float(np.nanmedian(raw[raw.network == h.network].other_cpu))})
    return pd.DataFrame(per_run)


SCORES = ["layer_median_abs_error", "layer_spearman", "pipeline_median_abs_error", "pipeline_spearman", "regret"]


def analyse(out: Path, statistic: str = "median", mechanisms: str = "auto", cost: str = "roofline",
            fit_on: str = "single", ablate: bool = False, runs: list[str] | None = None) -> str:
    tag = f"{statistic}_{mechanisms.replace(',', '+')}_{cost}_{fit_on}" + (f"_{'+'.join(runs)}" if runs else "")
    s = holdouts(out, statistic, mechanisms, cost, fit_on, runs)
    (out / f"analysis_{tag}.csv").write_text(s.to_csv(index=False))
    med = s.groupby("network")[[*SCORES, "pipeline_rows", "other_cpu"]].median()
    used = sorted(set(s.mechanisms))
    lines = [f"Held-out networks, {statistic} per layer, fitted on the other networks' "
             f"{'one-stage runs' if fit_on == 'single' else 'runs (pipelines too)'}, mechanisms {mechanisms} "
             f"({'; '.join(used)}), {cost} model: medians over {s.run.nunique()} runs", "",
             "| held out | layer median abs error | layer rank corr. | mappings | pipeline median abs error | "
             "pipeline rank corr. | regret | others' CPU share |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for net, r in med.iterrows():
        lines.append(f"| {net} | {r.layer_median_abs_error:.1%} | {r.layer_spearman:.3f} | {r.pipeline_rows:.0f} | "
                     f"{r.pipeline_median_abs_error:.1%} | {r.pipeline_spearman:.3f} | {r.regret:.1%} | {r.other_cpu:.0%} |")
    m = med[SCORES].median()
    lines.append(f"| **median** | {m.layer_median_abs_error:.1%} | {m.layer_spearman:.3f} | | "
                 f"{m.pipeline_median_abs_error:.1%} | {m.pipeline_spearman:.3f} | {m.regret:.1%} | |")
    if ablate:
        on = sorted({x for v in s.mechanisms for x in v.split(",") if x != "none"})
        variants = [("all (" + (",".join(on) or "none") + ")", s)]
        for mech in on:
            rest = ",".join(x for x in on if x != mech) or "none"
            variants.append((f"no {mech}", holdouts(out, statistic, rest, cost, fit_on, runs)))
        if len(on) > 1:
            variants.append(("base only", holdouts(out, statistic, "none", cost, fit_on, runs)))
        lines += ["", "Ablation (medians over the held-out networks of their medians over the runs):", "",
                  "| variant | layer median abs error | pipeline median abs error | pipeline rank corr. | regret |",
                  "|---|---:|---:|---:|---:|"]
        rows = []
        for label, v in variants:
            vm = v.groupby("network")[SCORES].median().median()
            rows.append({"variant": label, **vm.to_dict()})
            lines.append(f"| {label} | {vm.layer_median_abs_error:.1%} | {vm.pipeline_median_abs_error:.1%} | "
                         f"{vm.pipeline_spearman:.3f} | {vm.regret:.1%} |")
        (out / f"ablation_{tag}.csv").write_text(pd.DataFrame(rows).to_csv(index=False))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", type=Path, default=Path("results/calibrate-host"))
    m.add_argument("--runs", type=int, default=3)
    m.add_argument("--networks", default=",".join(NETWORKS))
    m.add_argument("--repeats", type=int, default=3)
    m.add_argument("--frames", type=int, default=30)
    m.add_argument("--limit", type=float, default=0.3, help="wait until others use less than this CPU share")
    m.add_argument("--wait", type=float, default=900, help="... for at most this many seconds, then measure anyway")
    c = sub.add_parser("convert")
    c.add_argument("sources", type=Path, nargs="+")
    c.add_argument("--out", type=Path, required=True)
    a = sub.add_parser("analyse")
    a.add_argument("out", type=Path)
    a.add_argument("--statistic", choices=["median", "p20"], default="median")
    a.add_argument("--mechanisms", default="auto")
    a.add_argument("--cost", default="roofline")
    a.add_argument("--fit-on", choices=["single", "all"], default="single",
                   help="the other networks' one-stage runs, or their pipelines too")
    a.add_argument("--ablation", action="store_true", help="refit with each mechanism off")
    a.add_argument("--runs", default=None, help="only these run directories (run1,run2,...)")
    args = ap.parse_args()
    if args.cmd == "measure":
        measure(args.out, args.runs, args.networks.split(","), args.repeats, args.frames, args.limit, args.wait)
    elif args.cmd == "convert":
        convert(args.sources, args.out)
    else:
        print(analyse(args.out, args.statistic, args.mechanisms, args.cost, args.fit_on, args.ablation,
                      args.runs.split(",") if args.runs else None))


if __name__ == "__main__":
    main()
