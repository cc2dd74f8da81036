"""The Pipe-search reproduction before (roofline on the TX2) and after (gemm2), with each gemm2
mechanism switched off alone and a few assumed constants moved: every variant refits the cost
model on Table 6 before it predicts. gemm2 flips no Pipe-search verdict
(docs/fidelity.md#the-scorecard-before-and-after), which is why the reproduction stays on the roofline.

    python -m hetsim_papers.pipesearch.fidelity --out results/fidelity/scorecard [--only before,after]

Each variant runs in a process of its own and writes DIR/<variant>/pipesearch/scorecard.json, beside
what Pipe-it's harness writes there; this prints the independent predictions that pass per variant
and the claims that flip against ``after`` (``python -m hetsim_papers.pipeit.fidelity.scorecard
--summary DIR`` prints the tables of both papers).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

PAPER = "pipesearch"
DENVER, A57 = "core_types.denver2.gemm2", "core_types.cortex-a57.gemm2"


def both(field: str, value: object) -> tuple[str, ...]:
    """The same gemm2 field on both core types of the Jetson TX2."""
    return (f"{DENVER}.{field}={value}", f"{A57}.{field}={value}")


#: name -> settings: cost model ("gemm2" unless said) and extra overrides.
VARIANTS: dict[str, dict] = {
    "before": {"model": "roofline"},
    "after": {"model": "gemm2"},
    "no-tiles": {"extra": both("tiles", "false")},
    "no-caches": {"extra": both("caches", "false")},
    "no-clocks": {"extra": both("clocks", "false")},
    "overlap-max": {"extra": both("overlap", "1.0")},
    "no-copy-costs": {"extra": both("im2col_cycles_per_byte", 0) + both("pack_cycles_per_byte", 0)},
    "no-tile-overhead": {"extra": both("tile_overhead_cycles", 0)},
    "no-tiles-no-caches": {"extra": both("tiles", "false") + both("caches", "false")},
    "l2-rate-x0.5": {"extra": both("l2_bytes_per_cycle", 8)},
    "l2-rate-x2": {"extra": both("l2_bytes_per_cycle", 32)},
    "copy-x2": {"extra": both("im2col_cycles_per_byte", 0.25)},
    "residency-lru": {"extra": both("residency", "lru")},
}


def run_one(name: str, out: Path) -> None:
    """In this process: set the reproduction's cost model, run Pipe-search in full (seed 0), write
    DIR/<variant>/pipesearch/."""
    from hetsim.experiment import run_experiment, select, write_outcome, write_scorecard
    from hetsim_papers.pipesearch.experiments import calibration

    v = VARIANTS[name]
    calibration.COST_MODEL = v.get("model", "gemm2")
    calibration.COST_MODEL_EXTRA = tuple(v.get("extra", ())) if calibration.COST_MODEL == "gemm2" else ()
    d = out / name / PAPER
    outcomes = []
    for e in select([PAPER], False):
        o = run_experiment(e, quick=False, seed=0, progress=False)
        write_outcome(o, d)
        outcomes.append(o)
    write_scorecard(outcomes, d, False)


def passes(out: Path) -> str:
    """Independent predictions that pass per variant, and the claims that flip against ``after``."""
    runs = {}
    for n in VARIANTS:
        f = out / n / PAPER / "scorecard.json"
        if f.exists():
            runs[n] = {(c["id"], c["claim"]): c for c in json.loads(f.read_text())["claims"]}
    ref = runs.get("after", {})
    lines = ["| variant | independent predictions that pass | flips vs after |", "|---|---:|---|"]
    for n, claims in runs.items():
        ind = [c for c in claims.values() if c["class"] == "prediction"]
        flips = sorted(f"{k[0]} {k[1]}" for k, c in claims.items() if k in ref and c["pass"] != ref[k]["pass"])
        lines.append(f"| {n} | {sum(c['pass'] for c in ind)}/{len(ind)} | {'; '.join(flips) or 'none'} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", default="results/fidelity/scorecard")
    ap.add_argument("--only", default=None, help="comma-separated variants (default: all)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--summary", default=None, help="print the table of a finished --out and stop")
    a = ap.parse_args()
    if a.summary:
        print(passes(Path(a.summary)))
        return
    out = Path(a.out)
    if a.one:
        run_one(a.one, out)
        return
    for n in a.only.split(",") if a.only else list(VARIANTS):
        if n not in VARIANTS:
            raise SystemExit(f"unknown variant {n!r}; have {', '.join(VARIANTS)}")
        r = subprocess.run([sys.executable, "-m", "hetsim_papers.pipesearch.fidelity", "--one", n, "--out", str(out)],
                           capture_output=True, text=True)
        print(n, "ok" if r.returncode == 0 else f"failed: {r.stderr[-400:]}", flush=True)
    print(passes(out))


if __name__ == "__main__":
    main()
