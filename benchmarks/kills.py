"""Kill `hetsim reproduce` and `hetsim calibrate host` at seeded random moments and count what is
left: every file present must be complete (parse, end where its format ends); a SIGKILL may leave
a hidden `.<name>.<random>.tmp`, a SIGINT nothing but complete files. docs/robustness.md quotes
the table this prints.

    python benchmarks/kills.py [--runs 8] [--seed 0]

Each run kills one process: at a moment drawn uniformly from the command's run time, or (every
third run) as soon as a temporary file appears, in the middle of a write.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers import check_folder, run_and_kill  # noqa: E402

COMMANDS = {
    "reproduce pipesearch --quick": (["reproduce", "pipesearch", "--quick", "--out", "{out}"], 10.0),
    "calibrate host --quick": (["calibrate", "host", "--quick", "--out", "{out}/host.yaml"], 9.0),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8, help="kills per command and signal")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (argv, seconds) in COMMANDS.items():
            for sig in (signal.SIGKILL, signal.SIGINT):
                for i in range(args.runs):
                    moment: float | str = "write" if i % 3 == 2 else round(rng.uniform(0.5, seconds), 2)
                    out = Path(tmp) / f"{name.split()[0]}-{sig.name}-{i}"
                    run = run_and_kill([a.replace("{out}", str(out)) for a in argv], out, sig, moment)
                    temps = [p.name for p in out.rglob(".*.tmp")] if out.exists() else []
                    try:
                        files = check_folder(out, killed=sig == signal.SIGKILL) if out.exists() else []
                        verdict = "complete"
                    except AssertionError as e:
                        files, verdict = [], f"BROKEN: {e}"
                    rows.append((name, sig.name, moment, run.returncode, len(files), len(temps), verdict))
                    last = (run.stderr.strip().splitlines() or [""])[-1]
                    print(f"{name:30s} {sig.name:7s} at {str(moment):6s} exit {run.returncode:4d}  "
                          f"{len(files)} files, {len(temps)} temporary  {verdict}  {last[:120]}", flush=True)
    print("\n| command | signal | kills | files left | all complete | temporary files left |")
    print("|---|---|---:|---:|---|---:|")
    for name in COMMANDS:
        for sig in ("SIGKILL", "SIGINT"):
            sel = [r for r in rows if r[0] == name and r[1] == sig]
            ok = all(r[6] == "complete" for r in sel)
            print(f"| `{name}` | {sig} | {len(sel)} | {sum(r[4] for r in sel)} | {'yes' if ok else 'NO'} | "
                  f"{sum(r[5] for r in sel)} |")


if __name__ == "__main__":
    main()
