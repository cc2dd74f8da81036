"""Issue 14's scorecard measurements: the Pipe-it and Pipe-search reproductions before (roofline
ground truths) and after (gemm2), with each gemm2 mechanism switched off alone (ablation) and each
assumed constant moved across its plausible range (sensitivity). Every variant refits the ground
truth on the same stated data (Table IV, Table 6) before it predicts.

    python benchmarks/fidelity_scorecard.py --out results/fidelity/scorecard      # every variant
    python benchmarks/fidelity_scorecard.py --out DIR --only before,after          # some
    python benchmarks/fidelity_scorecard.py --summary DIR                          # the tables

Each variant runs in a process of its own (the reproductions cache their fits per process) and
writes DIR/<variant>/scorecard.json; the summary counts the independent predictions that pass per
paper and per figure, and lists every claim that flips against ``after`` (ablation: the mechanism
switched off is what flipped it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("pipeit", "pipesearch")
A73, A53 = "core_types.cortex-a73.gemm2", "core_types.cortex-a53.gemm2"
DENVER, A57 = "core_types.denver2.gemm2", "core_types.cortex-a57.gemm2"


def both(field: str, value) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The same gemm2 field on every core type of both boards: (pipeit extra, pipesearch extra)."""
    return ((f"{A73}.{field}={value}", f"{A53}.{field}={value}"),
            (f"{DENVER}.{field}={value}", f"{A57}.{field}={value}"))


def merge(*pairs: tuple[tuple[str, ...], tuple[str, ...]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (tuple(x for p in pairs for x in p[0]), tuple(x for p in pairs for x in p[1]))


#: name -> settings: pipeit / pipesearch ground-truth model, extra overrides, Pipe-it's contention.
VARIANTS: dict[str, dict] = {
    "before": {"model": "roofline"},
    "after": {"model": "gemm2"},
    # -- ablation: one mechanism off, refitted -------------------------------------------------------
    "no-tiles": {"extra": both("tiles", "false")},
    "no-caches": {"extra": both("caches", "false")},
    "no-clocks": {"extra": both("clocks", "false")},
    "overlap-max": {"extra": both("overlap", "1.0")},            # the roofline's combine rule
    "no-copy-costs": {"extra": merge(both("im2col_cycles_per_byte", 0), both("pack_cycles_per_byte", 0))},
    "no-tile-overhead": {"extra": both("tile_overhead_cycles", 0)},
    # two mechanisms off together: for a flip either one alone suffices to cause (Fig. 12's concavity)
    "no-tiles-no-caches": {"extra": merge(both("tiles", "false"), both("caches", "false"))},
    # -- sensitivity of the assumed constants ------------------------------------------------------
    "contention-0": {"contention": 0.0},
    "contention-0.08": {"contention": 0.08},
    "contention-0.15": {"contention": 0.15},
    "a53-overlap-0.5": {"extra": ((f"{A53}.overlap=0.5",), ())},
    "a53-overlap-1": {"extra": ((f"{A53}.overlap=1.0",), ())},
    "a73-overlap-0.5": {"extra": ((f"{A73}.overlap=0.5",), ())},
    "l2-rate-x0.5": {"extra": ((f"{A73}.l2_bytes_per_cycle=8", f"{A53}.l2_bytes_per_cycle=4"),
                               (f"{DENVER}.l2_bytes_per_cycle=8", f"{A57}.l2_bytes_per_cycle=8"))},
    "l2-rate-x2": {"extra": ((f"{A73}.l2_bytes_per_cycle=32", f"{A53}.l2_bytes_per_cycle=16"),
                             (f"{DENVER}.l2_bytes_per_cycle=32", f"{A57}.l2_bytes_per_cycle=32"))},
    "copy-x2": {"extra": ((f"{A73}.im2col_cycles_per_byte=0.25", f"{A53}.im2col_cycles_per_byte=0.375",
                           f"{A73}.pack_cycles_per_byte=0.25", f"{A53}.pack_cycles_per_byte=0.375"),
                          (f"{DENVER}.im2col_cycles_per_byte=0.25", f"{A57}.im2col_cycles_per_byte=0.25"))},
    "tile-overhead-x2": {"extra": ((f"{A73}.tile_overhead_cycles=96", f"{A53}.tile_overhead_cycles=144"), ())},
    "dram-per-core-x0.5": {"extra": (("core_types.cortex-a73.bandwidth_GBps_per_core=3",
                                      "core_types.cortex-a53.bandwidth_GBps_per_core=1.5"), ())},
    "dram-per-core-x2": {"extra": (("core_types.cortex-a73.bandwidth_GBps_per_core=12",
                                    "core_types.cortex-a53.bandwidth_GBps_per_core=6"), ())},
    "residency-lru": {"extra": both("residency", "lru")},
}


def run_one(name: str, out: Path) -> None:
    """In this process: set the reproductions' switches, run both papers in full, write the scorecard."""
    sys.path.insert(0, str(ROOT))
    from hetsim.experiment import run_experiment, select, write_outcome, write_scorecard
    from hetsim_papers.pipeit.experiments import calibration as pipeit_cal
    from hetsim_papers.pipesearch.experiments import calibration as ps_cal

    v = VARIANTS[name]
    model = v.get("model", "gemm2")
    pipeit_extra, ps_extra = v.get("extra", ((), ()))
    pipeit_cal.GROUND_TRUTH = model
    pipeit_cal.GROUND_TRUTH_EXTRA = tuple(pipeit_extra) if model == "gemm2" else ()
    if "contention" in v:
        pipeit_cal.CONTENTION_PER_CORE = float(v["contention"])
    ps_cal.COST_MODEL = model
    ps_cal.COST_MODEL_EXTRA = tuple(ps_extra) if model == "gemm2" else ()
    d = out / name
    outcomes = []
    for e in select(list(PAPERS), False):
        o = run_experiment(e, quick=False, seed=0, progress=False)
        write_outcome(o, d)
        outcomes.append(o)
    write_scorecard(outcomes, d, False)


def load(d: Path) -> dict:
    return {(c["paper"], c["id"], c["claim"]): c for c in json.loads((d / "scorecard.json").read_text())["claims"]}


def summary(out: Path) -> str:
    runs = {p.name: load(p) for p in sorted(out.iterdir()) if (p / "scorecard.json").exists()}
    order = [n for n in VARIANTS if n in runs]
    lines = ["## Independent predictions that pass", "",
             "| variant | " + " | ".join(PAPERS) + " | flips vs after (+ pass, - fail) |", "|---|" + "---:|" * len(PAPERS) + "---|"]
    ref = runs.get("after")
    for n in order:
        claims = runs[n]
        cells = []
        for p in PAPERS:
            ind = [c for k, c in claims.items() if k[0] == p and c["class"] == "prediction"]
            cells.append(f"{sum(c['pass'] for c in ind)}/{len(ind)}")
        flip_text = ""
        if ref is not None and n != "after":
            plus = sum(1 for k, c in claims.items() if k in ref and c["pass"] and not ref[k]["pass"])
            minus = sum(1 for k, c in claims.items() if k in ref and not c["pass"] and ref[k]["pass"])
            flip_text = f"+{plus} / -{minus}"
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {flip_text} |")
    if "before" in runs and "after" in runs:
        lines += ["", "## Per figure (independent predictions): before -> after", "",
                  "| paper:figure | before | after |", "|---|---:|---:|"]
        ids = sorted({(k[0], k[1]) for k in runs["after"]})
        for p, i in ids:
            b = [c for k, c in runs["before"].items() if (k[0], k[1]) == (p, i) and c["class"] == "prediction"]
            a = [c for k, c in runs["after"].items() if (k[0], k[1]) == (p, i) and c["class"] == "prediction"]
            if a or b:
                lines.append(f"| {p}:{i} | {sum(c['pass'] for c in b)}/{len(b)} | {sum(c['pass'] for c in a)}/{len(a)} |")
    for n in order:
        if n == "after" or ref is None:
            continue
        a_name, b_name = ("before", "after") if n == "before" else ("after", n)
        A, B = runs[a_name], runs[b_name]
        flipped = [(k, A[k], B[k]) for k in B if k in A and A[k]["pass"] != B[k]["pass"]]
        if not flipped:
            continue
        lines += ["", f"## Flips {a_name} -> {b_name}", "",
                  f"| claim | class | paper | {a_name} | {b_name} | verdict |", "|---|---|---|---|---|---|"]
        for k, ca, cb in sorted(flipped, key=lambda x: x[0]):
            lines.append(f"| {k[0]}:{k[1]} {k[2]} | {cb['class']} | {_v(cb['paper_value'])} | {_v(ca['sim_value'])} | "
                         f"{_v(cb['sim_value'])} | {'pass' if cb['pass'] else 'fail'} |")
    return "\n".join(lines)


def _v(x) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    text = str(x)
    return text if len(text) < 60 else text[:57] + "..."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/fidelity/scorecard")
    ap.add_argument("--only", default=None, help="comma-separated variants (default: all)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--summary", default=None)
    a = ap.parse_args()
    if a.summary:
        print(summary(Path(a.summary)))
        return
    out = Path(a.out)
    if a.one:
        run_one(a.one, out)
        return
    names = a.only.split(",") if a.only else list(VARIANTS)
    for n in names:
        if n not in VARIANTS:
            raise SystemExit(f"unknown variant {n!r}; have {', '.join(VARIANTS)}")
        r = subprocess.run([sys.executable, __file__, "--one", n, "--out", str(out)], capture_output=True, text=True,
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        print(n, "ok" if r.returncode == 0 else f"failed: {r.stderr[-400:]}", flush=True)
    print(summary(out))


if __name__ == "__main__":
    main()
