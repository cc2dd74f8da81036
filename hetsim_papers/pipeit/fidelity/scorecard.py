"""The Pipe-it reproduction before (roofline ground truth) and after (gemm2), with each gemm2
mechanism switched off alone (ablation) and each assumed constant moved across its plausible range
(sensitivity). Every variant refits the ground truth on the same stated data (Table IV) before it
predicts. docs/fidelity.md#the-scorecard-before-and-after quotes the tables.

    python -m hetsim_papers.pipeit.fidelity.scorecard --out results/fidelity/scorecard   # every variant
    python -m hetsim_papers.pipeit.fidelity.scorecard --out DIR --only before,after       # some
    python -m hetsim_papers.pipeit.fidelity.scorecard --summary DIR                       # the tables

Each variant runs in a process of its own (the reproduction caches its fits per process) and
writes DIR/<variant>/pipeit/scorecard.json. The summary reads every DIR/<variant>/<paper>/
scorecard.json it finds (Pipe-search's harness, ``python -m hetsim_papers.pipesearch.fidelity``,
writes its own beside these), counts the independent predictions that pass per paper and per
figure, and lists every claim that flips against ``after`` (ablation: the mechanism switched off is
what flipped it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

PAPER = "pipeit"
A73, A53 = "core_types.cortex-a73.gemm2", "core_types.cortex-a53.gemm2"


def both(field: str, value: object) -> tuple[str, ...]:
    """The same gemm2 field on both core types of the HiKey 970."""
    return (f"{A73}.{field}={value}", f"{A53}.{field}={value}")


#: name -> settings: ground-truth model ("gemm2" unless said), extra overrides, contention per core.
VARIANTS: dict[str, dict] = {
    "before": {"model": "roofline"},
    "after": {"model": "gemm2"},
    # -- ablation: one mechanism off, refitted -------------------------------------------------------
    "no-tiles": {"extra": both("tiles", "false")},
    "no-caches": {"extra": both("caches", "false")},
    "no-clocks": {"extra": both("clocks", "false")},
    "overlap-max": {"extra": both("overlap", "1.0")},            # the roofline's combine rule
    "no-copy-costs": {"extra": both("im2col_cycles_per_byte", 0) + both("pack_cycles_per_byte", 0)},
    "no-tile-overhead": {"extra": both("tile_overhead_cycles", 0)},
    # two mechanisms off together: for a flip either one alone suffices to cause (Fig. 12's concavity)
    "no-tiles-no-caches": {"extra": both("tiles", "false") + both("caches", "false")},
    # -- sensitivity of the assumed constants ------------------------------------------------------
    "contention-0": {"contention": 0.0},
    "contention-0.08": {"contention": 0.08},
    "contention-0.15": {"contention": 0.15},
    "a53-overlap-0.5": {"extra": (f"{A53}.overlap=0.5",)},
    "a53-overlap-1": {"extra": (f"{A53}.overlap=1.0",)},
    "a73-overlap-0.5": {"extra": (f"{A73}.overlap=0.5",)},
    "l2-rate-x0.5": {"extra": (f"{A73}.l2_bytes_per_cycle=8", f"{A53}.l2_bytes_per_cycle=4")},
    "l2-rate-x2": {"extra": (f"{A73}.l2_bytes_per_cycle=32", f"{A53}.l2_bytes_per_cycle=16")},
    "copy-x2": {"extra": (f"{A73}.im2col_cycles_per_byte=0.25", f"{A53}.im2col_cycles_per_byte=0.375",
                          f"{A73}.pack_cycles_per_byte=0.25", f"{A53}.pack_cycles_per_byte=0.375")},
    "tile-overhead-x2": {"extra": (f"{A73}.tile_overhead_cycles=96", f"{A53}.tile_overhead_cycles=144")},
    "dram-per-core-x0.5": {"extra": ("core_types.cortex-a73.bandwidth_GBps_per_core=3",
                                     "core_types.cortex-a53.bandwidth_GBps_per_core=1.5")},
    "dram-per-core-x2": {"extra": ("core_types.cortex-a73.bandwidth_GBps_per_core=12",
                                   "core_types.cortex-a53.bandwidth_GBps_per_core=6")},
    "residency-lru": {"extra": both("residency", "lru")},
}


def run_one(name: str, out: Path) -> None:
    """In this process: set the reproduction's switches, run Pipe-it in full (seed 0), write
    DIR/<variant>/pipeit/."""
    from hetsim.experiment import run_experiment, select, write_outcome, write_scorecard
    from hetsim_papers.pipeit.experiments import calibration

    v = VARIANTS[name]
    model = v.get("model", "gemm2")
    calibration.GROUND_TRUTH = model
    calibration.GROUND_TRUTH_EXTRA = tuple(v.get("extra", ())) if model == "gemm2" else ()
    if "contention" in v:
        calibration.CONTENTION_PER_CORE = float(v["contention"])
    d = out / name / PAPER
    outcomes = []
    for e in select([PAPER], False):
        o = run_experiment(e, quick=False, seed=0, progress=False)
        write_outcome(o, d)
        outcomes.append(o)
    write_scorecard(outcomes, d, False)


def load(out: Path) -> dict[str, dict[tuple[str, str, str], dict]]:
    """variant -> {(paper, experiment id, claim): claim} over every DIR/<variant>/<paper>/scorecard.json."""
    runs: dict[str, dict[tuple[str, str, str], dict]] = {}
    for f in sorted(out.glob("*/*/scorecard.json")):
        claims = runs.setdefault(f.parent.parent.name, {})
        for c in json.loads(f.read_text())["claims"]:
            claims[(c["paper"], c["id"], c["claim"])] = c
    return runs


def summary(out: Path) -> str:
    """Independent predictions that pass per variant and paper, before -> after per figure, and every
    claim that flips (before -> after; after -> each other variant)."""
    runs = load(out)
    names = [n for n in VARIANTS if n in runs] + sorted(n for n in runs if n not in VARIANTS)
    papers = sorted({k[0] for claims in runs.values() for k in claims})
    lines = ["## Independent predictions that pass", "",
             "| variant | " + " | ".join(papers) + " | flips vs after (+ pass, - fail) |",
             "|---|" + "---:|" * len(papers) + "---|"]
    ref = runs.get("after")
    for n in names:
        claims = runs[n]
        cells = []
        for p in papers:
            ind = [c for k, c in claims.items() if k[0] == p and c["class"] == "prediction"]
            cells.append(f"{sum(c['pass'] for c in ind)}/{len(ind)}" if ind else "")
        flip_text = ""
        if ref is not None and n != "after":
            plus = sum(1 for k, c in claims.items() if k in ref and c["pass"] and not ref[k]["pass"])
            minus = sum(1 for k, c in claims.items() if k in ref and not c["pass"] and ref[k]["pass"])
            flip_text = f"+{plus} / -{minus}"
        lines.append(f"| {n} | " + " | ".join(cells) + f" | {flip_text} |")
    if "before" in runs and "after" in runs:
        lines += ["", "## Per figure (independent predictions): before -> after", "",
                  "| paper:figure | before | after |", "|---|---:|---:|"]
        for p, i in sorted({(k[0], k[1]) for k in runs["after"]}):
            b = [c for k, c in runs["before"].items() if (k[0], k[1]) == (p, i) and c["class"] == "prediction"]
            a = [c for k, c in runs["after"].items() if (k[0], k[1]) == (p, i) and c["class"] == "prediction"]
            if a or b:
                lines.append(f"| {p}:{i} | {sum(c['pass'] for c in b)}/{len(b)} | {sum(c['pass'] for c in a)}/{len(a)} |")
    for n in names:
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


def _v(x: object) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    text = str(x)
    return text if len(text) < 60 else text[:57] + "..."


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", default="results/fidelity/scorecard")
    ap.add_argument("--only", default=None, help="comma-separated variants (default: all)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--summary", default=None, help="print the tables of a finished --out and stop")
    a = ap.parse_args()
    if a.summary:
        print(summary(Path(a.summary)))
        return
    out = Path(a.out)
    if a.one:
        run_one(a.one, out)
        return
    for n in a.only.split(",") if a.only else list(VARIANTS):
        if n not in VARIANTS:
            raise SystemExit(f"unknown variant {n!r}; have {', '.join(VARIANTS)}")
        # a process per variant: the reproduction caches its fits per process
        r = subprocess.run([sys.executable, "-m", "hetsim_papers.pipeit.fidelity.scorecard", "--one", n,
                            "--out", str(out)], capture_output=True, text=True)
        print(n, "ok" if r.returncode == 0 else f"failed: {r.stderr[-400:]}", flush=True)
    print(summary(out))


if __name__ == "__main__":
    main()
