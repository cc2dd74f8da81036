"""Each paper's expected durations for `hetsim reproduce --list`: the seconds every experiment took
in a quick and a full run, from their logs (the lines `paper:id  k/n claims ...  (12.3 s)`), written
to each paper's experiments/durations.csv (columns id, quick_s, full_s).

    hetsim reproduce --all --quick --out /tmp/q > quick.log
    hetsim reproduce --all --out /tmp/f > full.log            # hours on 2 cores
    python benchmarks/reproduce_durations.py quick.log full.log
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LINE = re.compile(r"^(?P<paper>[\w-]+):(?P<id>[\w.-]+)\s+.*\((?P<s>[0-9.]+) s\)\s*$")


def parse(log: Path) -> dict[tuple[str, str], float]:
    """(paper, id) -> seconds of the experiment lines of a `hetsim reproduce` log."""
    out = {}
    for line in log.read_text(errors="replace").splitlines():
        m = LINE.match(line.strip())
        if m:
            out[(m["paper"], m["id"])] = float(m["s"])
    return out


def main() -> None:
    from hetsim.experiment import papers

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("quick", type=Path, help="the log of hetsim reproduce --all --quick")
    ap.add_argument("full", type=Path, nargs="?", help="the log of hetsim reproduce --all")
    args = ap.parse_args()
    quick = parse(args.quick)
    full = parse(args.full) if args.full else {}
    for paper, module in papers().items():
        ids = sorted({i for p, i in (*quick, *full) if p == paper},
                     key=lambda i: list(dict.fromkeys([i2 for p2, i2 in quick if p2 == paper])).index(i)
                     if (paper, i) in quick else 10**6)
        if not ids:
            continue
        spec = importlib.util.find_spec(module)
        folder = (Path(next(iter(spec.submodule_search_locations))) if spec.submodule_search_locations
                  else Path(spec.origin).parent)
        with (folder / "durations.csv").open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "quick_s", "full_s"])
            for i in ids:
                w.writerow([i, quick.get((paper, i), ""), full.get((paper, i), "")])
        print(f"wrote {folder / 'durations.csv'} ({len(ids)} experiments)")


if __name__ == "__main__":
    main()
