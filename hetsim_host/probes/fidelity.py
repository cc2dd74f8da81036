"""The host fidelity runs: calibrate this machine and validate both cost models on real runs,
several times, each run waiting for a quiet machine first (the machine's 2 CPUs are shared). This
is the command that regenerates the measurements behind docs/fidelity.md's host tables.

    python -m hetsim_host.probes.fidelity --runs 3 --out results/fidelity/host   # measure (~6 min a run)
    python -m hetsim_host.probes.fidelity --summary results/fidelity/host        # the reports as they are
    python -m hetsim_host.probes.fidelity --analyse DIR | --heldout DIR | --breakdown DIR   # refitted, offline
    python -m hetsim_host.probes.fidelity --analyse DIR --gemv-rows OTHER/run1/host.measurements.json

Every run: ``hetsim calibrate host`` (both blocks fitted on the same measurements), then ``validate
host`` of each network on the whole network on 1 core, on all cores, and the best 2-stage pipeline
each model finds, simulated with both models (the same measured runs score both: a paired
comparison). The load average and the other processes' CPU share go with every measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from hetsim_host.fit import NO_GEMV_TERMS

NETWORKS = ("alexnet", "googlenet", "mobilenet", "resnet50", "squeezenet")
COSTS = ("roofline", "gemm2")


def busy_fraction(dt: float = 3.0) -> float:
    """Share of all CPUs busy over ``dt`` seconds (/proc/stat), while this process sleeps. Niced
    work (``nice -n 19``: our own scorecard runs, which yield to everything) counts as idle."""
    def read() -> tuple[int, int]:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[1] + v[3] + v[4]
    t0, i0 = read()
    time.sleep(dt)
    t1, i1 = read()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def wait_quiet(limit: float, windows: int = 3, timeout_s: float = 900) -> dict:
    """Wait until others use less than ``limit`` of the CPUs for ``windows`` x 3 s (or time out)."""
    start, ok, b = time.time(), 0, 1.0
    while time.time() - start < timeout_s:
        b = busy_fraction()
        ok = ok + 1 if b < limit else 0
        if ok >= windows:
            break
    return {"waited_s": round(time.time() - start, 1), "busy_last": round(b, 3), "quiet": ok >= windows,
            "loadavg": list(os.getloadavg())}


def hetsim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hetsim", *args], capture_output=True, text=True)


def mappings_for(platform_file: Path, network: str) -> list[str]:
    """C1, Cn and the best 2-stage pipeline of each model (the union, in that order)."""
    from hetsim.cost import make_cost_model
    from hetsim.platform import load_platform
    from hetsim.workload import load_workload
    from hetsim_host.validate import default_mappings

    platform = load_platform(str(platform_file))
    workload = load_workload(network)
    out: list[str] = []
    for c in COSTS:
        for m in default_mappings(platform, workload, make_cost_model(platform, model=c)):
            if m not in out:
                out.append(m)
    return out


def run(out: Path, index: int, networks, repeats: int, frames: int, limit: float) -> None:
    d = out / f"run{index}"
    d.mkdir(parents=True, exist_ok=True)
    log: dict = {"run": index, "steps": []}
    q = wait_quiet(limit)
    t = time.time()
    r = hetsim("calibrate", "host", "--out", str(d / "host.yaml"))
    log["steps"].append({"step": "calibrate", **q, "wall_s": round(time.time() - t, 1), "rc": r.returncode,
                         "loadavg_after": list(os.getloadavg())})
    if r.returncode:
        print(r.stderr, file=sys.stderr)
        raise SystemExit(r.returncode)
    for n in networks:
        maps = mappings_for(d / "host.yaml", n)
        q = wait_quiet(limit)
        t = time.time()
        args = ["validate", "host", "-p", str(d / "host.yaml"), "-w", n, "--repeats", str(repeats),
                "--frames", str(frames), "--out", str(d / n), "--json"]
        for m in maps:
            args += ["--mapping", m]
        for c in COSTS:
            args += ["--cost", c]
        r = hetsim(*args)
        log["steps"].append({"step": f"validate {n}", **q, "wall_s": round(time.time() - t, 1),
                             "rc": r.returncode, "loadavg_after": list(os.getloadavg()), "mappings": maps})
        if r.returncode:
            print(r.stderr, file=sys.stderr)
        print(f"run {index} {n}: {r.stdout.strip()[:300]}", flush=True)
        (d / "log.json").write_text(json.dumps(log, indent=1))


def summary(out: Path) -> str:
    """Per network and model: layer MAPE and per-mapping throughput error of every run, the median
    over runs and the spread (min-max)."""
    rows: dict[tuple[str, str], list] = {}
    maps: dict[tuple[str, str], list] = {}
    runs = sorted(p for p in out.glob("run*") if p.is_dir())
    for rd in runs:
        for n in NETWORKS:
            f = rd / n / "report.json"
            if not f.exists():
                continue
            rep = json.loads(f.read_text())
            for c in rep.get("costs", ["roofline"]):
                rows.setdefault((n, c), []).append(rep["layer_mape_by_cost"][c])
                errs = [abs(m["by_cost"][c]["error"]) for m in rep["mappings"]]
                maps.setdefault((n, c), []).append(float(np.median(errs)))
    lines = ["| network | model | layer MAPE per run | median | median per-mapping |error| per run | median |",
             "|---|---|---|---:|---|---:|"]
    for (n, c), v in sorted(rows.items()):
        mv = maps[(n, c)]
        lines.append(f"| {n} | {c} | {', '.join(f'{x:.1%}' for x in v)} | {np.median(v):.1%} | "
                     f"{', '.join(f'{x:.1%}' for x in mv)} | {np.median(mv):.1%} |")
    return "\n".join(lines)


#: gemm2 refitted with one mechanism held off (host ablation): name -> fit_gemm2(fixed=...), and
#: whether the model uses the network context (reuse distances).
ABLATIONS: dict[str, tuple[dict, bool] | tuple[dict, bool, dict]] = {
    "gemm2": ({}, True),
    "no tiles": ({"tiles": False}, True),
    "no caches": ({"caches": False}, True),
    "overlap = max": ({"overlap": 1.0}, True),
    "no network context": ({}, False),
    "no dw taps": ({"dw_tap_cycles": 0.0}, True),
    "no gemv terms": (NO_GEMV_TERMS, True),
    "no softmax term": ({}, True, {"softmax": False}),
    "no network gemm term": ({}, True, {"network_gemm": False}),    # fit_gemm2 keywords third
}

#: The roofline refitted with one of its fitted terms held off: name -> fit_host keywords.
ROOFLINE_ABLATIONS: dict[str, dict] = {
    "roofline, no dw taps": {"dw_taps": False},
    "roofline, no gemv terms": {"gemv": False},
    "roofline, no softmax": {"softmax": False},
}


#: Cold-GEMV rows (``calibrate host``'s gemv phase) to add to runs whose calibration predates them
#: (``--gemv-rows FILE``: an offline estimate, docs/fidelity.md#the-classifier-gemv-and-softmax);
#: empty: the runs as saved.
GEMV_ROWS: list[dict] = []


def gemv_rows(d: dict) -> list[dict]:
    """The cold-GEMV rows of a ``--gemv-rows`` file: ``{'rows': [...]}``, or the ``gemv`` rows of a
    ``host.measurements.json`` that has them."""
    if "rows" in d:
        return list(d["rows"])
    rows = d.get("measurements", d).get("gemv") or []
    if not rows:
        raise SystemExit("--gemv-rows: the file has no cold-GEMV rows (a calibration from before the gemv phase?)")
    return list(rows)


def models_of_run(rd: Path, statistic: str):
    """(platform per model name, cost factory) of one run: the roofline and gemm2 as calibrated,
    gemm2 refitted with each mechanism of :data:`ABLATIONS` held off and the roofline with each of
    :data:`ROOFLINE_ABLATIONS`, all from the run's saved
    measurements and the same ``statistic`` (plus :data:`GEMV_ROWS` where the run has none)."""
    from hetsim.cost import Gemm2CostModel, RooflineCostModel
    from hetsim.platform import platform_from_dict
    from hetsim_host.fit import _add_gemm2, fit_gemm2, fit_host, platform_dict, unify_clock
    from hetsim_host.microbench import Measurements, with_statistic

    raw = json.loads((rd / "host.measurements.json").read_text())
    m = Measurements.from_dict(raw["measurements"])
    if GEMV_ROWS and not m.gemv:
        m.gemv = GEMV_ROWS
    m = with_statistic(m, statistic)
    fit = fit_host(m)
    out: dict[str, tuple] = {}
    for name, (fixed, context, *kw) in ABLATIONS.items():
        g2 = fit_gemm2(m, fit, fixed, **(kw[0] if kw else {}))
        unify_clock(fit, g2)
        d = platform_dict(fit)
        d["core_types"][0]["dvfs"][0]["freq_MHz"] = g2.freq_MHz
        _add_gemm2(d, g2)
        platform = platform_from_dict(d, name)
        if name == "gemm2":
            out["roofline"] = (platform, RooflineCostModel)
            clock = g2

        def gemm2_model(p, c: bool = context) -> Gemm2CostModel:
            return Gemm2CostModel(p, context=c)

        out[name] = (platform, gemm2_model)
    for name, roof_kw in ROOFLINE_ABLATIONS.items():
        alt = fit_host(m, **roof_kw)
        unify_clock(alt, clock)     # the clock the gemm2 fit raised it to, as the roofline's
        d = platform_dict(alt)
        d["core_types"][0]["dvfs"][0]["freq_MHz"] = clock.freq_MHz
        out[name] = (platform_from_dict(d, name), RooflineCostModel)
    return out, m, fit


def analyse(out: Path, statistic: str = "median") -> str:
    """Per run and network: layer MAPE and median |throughput error| of every model (the roofline,
    gemm2 and its ablations, all refitted on the run's calibration with ``statistic``), scored on
    the run's measured layers (their median or p20 with ``statistic``)."""
    from hetsim.workload import load_workload
    from hetsim_host.validate import rescore

    layer_key = "layer_measured_s" if statistic == "median" else "layer_measured_p20_s"
    rows = []
    for rd in sorted(p for p in out.glob("run*") if (p / "host.measurements.json").exists()):
        models, m, _ = models_of_run(rd, statistic)
        log = json.loads((rd / "log.json").read_text()) if (rd / "log.json").exists() else {"steps": []}
        for n in NETWORKS:
            f = rd / n / "report.json"
            if not f.exists():
                continue
            rep = json.loads(f.read_text())
            step: dict = next((s for s in log["steps"] if s["step"] == f"validate {n}"), {})
            other = [x for mm in rep["mappings"] for x in mm.get("other_cpu", []) if x == x]
            for name, (platform, make) in models.items():
                r = rescore(rep, platform, load_workload(n), make(platform), layer_key=layer_key)
                errs = [abs(x["error"]) for x in r["mappings"]]
                rows.append({"run": rd.name, "network": n, "model": name, "layer_mape": r["layer_mape"],
                             "mapping_err": float(np.median(errs)), "mappings": r["mappings"],
                             "others_cpu": float(np.median(other)) if other else float("nan"),
                             "load": step.get("loadavg", [float("nan")])[0], "quiet": step.get("quiet")})
    (out / f"analysis_{statistic}.json").write_text(json.dumps(rows, indent=1))
    return analysis_table(rows)


def analysis_table(rows: list[dict]) -> str:
    nets = sorted({r["network"] for r in rows})
    models = list(dict.fromkeys(r["model"] for r in rows))
    lines = ["| network | model | layer MAPE per run | median | median mapping |error| per run | median |",
             "|---|---|---|---:|---|---:|"]
    for n in nets:
        for mname in models:
            rs = [r for r in rows if r["network"] == n and r["model"] == mname]
            lm = [r["layer_mape"] for r in rs]
            me = [r["mapping_err"] for r in rs]
            lines.append(f"| {n} | {mname} | {', '.join(f'{x:.1%}' for x in lm)} | {np.median(lm):.1%} | "
                         f"{', '.join(f'{x:.1%}' for x in me)} | {np.median(me):.1%} |")
    lines += ["", "| model | layer MAPE: median over runs of the mean over networks (spread) | mapping |error|: median (spread) |",
              "|---|---|---|"]
    for mname in models:
        per_run: dict[str, list] = {}
        per_run_m: dict[str, list] = {}
        for r in rows:
            if r["model"] == mname:
                per_run.setdefault(r["run"], []).append(r["layer_mape"])
                per_run_m.setdefault(r["run"], []).append(r["mapping_err"])
        lm = [float(np.mean(v)) for v in per_run.values()]
        me = [float(np.median(v)) for v in per_run_m.values()]
        if lm:
            lines.append(f"| {mname} | {np.median(lm):.1%} ({min(lm):.1%}-{max(lm):.1%}) | "
                         f"{np.median(me):.1%} ({min(me):.1%}-{max(me):.1%}) |")
    return "\n".join(lines)


def heldout(out: Path, statistic: str = "median") -> str:
    """Per run: median |model / measured - 1| on the GEMM shapes held out of every fit, per thread
    count and context (warm: right after the same call; cold: caches flushed), for the roofline
    (``HostFit.gemm_time``: one efficiency, max(compute, memory)) and gemm2 (as fitted)."""
    from hetsim_host.fit import fit_gemm2, fit_host
    from hetsim_host.microbench import Measurements, with_statistic

    rows = []
    for rd in sorted(p for p in out.glob("run*") if (p / "host.measurements.json").exists()):
        raw = json.loads((rd / "host.measurements.json").read_text())
        m = with_statistic(Measurements.from_dict(raw["measurements"]), statistic)
        fit = fit_host(m)
        g2 = fit_gemm2(m, fit)
        for t in sorted({r["threads"] for r in m.contexts}):
            for ctx in ("warm", "cold"):
                sel = [r for r in m.contexts if r["set"] == "heldout" and r["threads"] == t and r["context"] == ctx]
                if not sel:
                    continue
                roof = float(np.median([abs(fit.gemm_time(r["n"], r["k"], r["m"], t) / r["time_s"] - 1)
                                        for r in sel]))
                rows.append((rd.name, t, ctx, len(sel), roof, g2.residuals.get(f"gemm2 held-out {t}T {ctx}",
                                                                               float("nan"))))
    lines = ["| run | threads | context | shapes | roofline median |error| | gemm2 median |error| |",
             "|---|---:|---|---:|---:|---:|"]
    lines += [f"| {r} | {t} | {c} | {n} | {a:.1%} | {b:.1%} |" for r, t, c, n, a, b in rows]
    return "\n".join(lines)


def layer_rows(out: Path, statistic: str = "median") -> list[dict]:
    """Every whole-network layer time of every run (C1 and Cn mappings), measured and simulated by
    the roofline and gemm2 as refitted on the run's calibration: run, network, model, threads,
    layer, kind (the sorted op kinds the layer holds), measured_s, simulated_s, error."""
    from hetsim.workload import load_workload
    from hetsim_host.validate import simulate_mapping

    key = "layer_measured_s" if statistic == "median" else "layer_measured_p20_s"
    rows = []
    for rd in sorted(p for p in out.glob("run*") if (p / "host.measurements.json").exists()):
        models, _, _ = models_of_run(rd, statistic)
        for n in NETWORKS:
            f = rd / n / "report.json"
            if not f.exists():
                continue
            rep = json.loads(f.read_text())
            w = load_workload(n)
            for name in COSTS:
                platform, make = models[name]
                cost = make(platform)
                for mm in rep["mappings"]:
                    if "|" in mm["mapping"]:
                        continue
                    sim = simulate_mapping(platform, w, mm["mapping"], cost, 5, 0.0, 0)
                    for layer, x, y in zip(w.layers, mm[key], sim["layer_simulated_s"], strict=True):
                        rows.append({"run": rd.name, "network": n, "model": name, "threads": mm["mapping"].split(":")[0],
                                     "layer": layer.name, "kind": "+".join(sorted({str(op.kind) for op in layer.ops})),
                                     "measured_s": x, "simulated_s": y, "error": y / x - 1})
    return rows


def breakdown(out: Path, statistic: str = "median", top: int = 8) -> str:
    """Where the per-layer error sits (docs/fidelity.md#where-the-error-sits): per model, mean |error| and signed
    mean per thread count (and weighted by measured time), and the layer kinds carrying the largest
    shares of the summed |error|."""
    import pandas as pd

    df = pd.DataFrame(layer_rows(out, statistic))
    df["abs"] = df.error.abs()
    lines = ["| model | threads | layers | mean |error| | time-weighted | signed mean |", "|---|---|---:|---:|---:|---:|"]
    for (mname, th), g in df.groupby(["model", "threads"]):
        tw = (g["abs"] * g.measured_s).sum() / g.measured_s.sum()
        lines.append(f"| {mname} | {th} | {len(g)} | {g['abs'].mean():.1%} | {tw:.1%} | {g.error.mean():+.1%} |")
    lines += ["", "| model | layer kind | layers | share of summed |error| | mean |error| | signed mean |",
              "|---|---|---:|---:|---:|---:|"]
    for mname, g in df.groupby("model"):
        total = g["abs"].sum()
        by = g.groupby("kind").agg(n=("error", "size"), share=("abs", "sum"), mean=("abs", "mean"),
                                   signed=("error", "mean")).sort_values("share", ascending=False).head(top)
        for kind, r in by.iterrows():
            lines.append(f"| {mname} | `{kind}` | {int(r.n)} | {r.share / total:.0%} | {r['mean']:.1%} | {r.signed:+.1%} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/fidelity/host")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--quiet", type=float, default=0.15, help="others' CPU share that counts as quiet")
    ap.add_argument("--summary", default=None, help="print the summary of a finished --out and stop")
    ap.add_argument("--analyse", default=None, help="refit every model on each run's measurements and score "
                    "them on its validation runs (the ablations included); also DIR/analysis_median.md")
    ap.add_argument("--heldout", default=None, help="held-out GEMM shapes: both models' errors per run; also "
                    "DIR/heldout_median.md")
    ap.add_argument("--breakdown", default=None, help="where the per-layer error sits: by thread count and "
                    "by the kinds of op a layer holds, both models; also DIR/breakdown_median.md")
    ap.add_argument("--statistic", default="median", choices=("median", "p20"))
    ap.add_argument("--gemv-rows", default=None, help="cold-GEMV rows added to runs calibrated before the gemv "
                    "phase existed (offline estimate): a later calibration's host.measurements.json, or "
                    "{'rows': [...]}")
    a = ap.parse_args()
    if a.gemv_rows:
        GEMV_ROWS.extend(gemv_rows(json.loads(Path(a.gemv_rows).read_text())))
    # option -> (table file name, table)
    offline = {"breakdown": ("breakdown", breakdown), "heldout": ("heldout", heldout), "analyse": ("analysis", analyse)}
    for option, (name, table) in offline.items():
        if getattr(a, option):
            print(write_table(Path(getattr(a, option)), name, a.statistic, table))
            return
    if a.summary:
        print(summary(Path(a.summary)))
        return
    out = Path(a.out)
    for i in range(a.first, a.first + a.runs):
        run(out, i, a.networks.split(","), a.repeats, a.frames, a.quiet)
    print(summary(out))
    # the page's tables, refitted with this code, beside the runs they come from
    for name, table in offline.values():
        write_table(out, name, a.statistic, table)
    print(f"tables: {', '.join(str(out / f'{n}_{a.statistic}.md') for n, _ in offline.values())}")


def write_table(out: Path, name: str, statistic: str, table) -> str:
    """``table(out, statistic)``, also written to ``out/<name>_<statistic>.md``."""
    from hetsim.validation import atomic_write

    text = table(out, statistic)
    with atomic_write(out / f"{name}_{statistic}.md") as f:
        f.write(text + "\n")
    return text

if __name__ == "__main__":
    main()
