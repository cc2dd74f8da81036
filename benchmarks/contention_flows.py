"""How much per-stage aggregation of memory traffic hides (issue 15): DES throughput with one flow
per stage execution against one flow per op, on the shipped platforms' reproduction mappings and
on contended what-if variants (a slower DRAM).

    python benchmarks/contention_flows.py [--frames N] [--json]

Writes nothing; prints a table (the figures are recorded in docs/contention.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from hetsim.evaluation import simulate  # noqa: E402
from hetsim.mapping import load_mapping  # noqa: E402
from hetsim.platform import load_platform  # noqa: E402
from hetsim.workload import load_workload  # noqa: E402

#: (platform, workload, mapping, DRAM override GB/s or None): Pipe-it's chosen pipelines on
#: hikey970, Pipe-search's on the TX2, Shisha's on a chiplet system, then what-if slow DRAMs.
CASES = [
    ("hikey970", "resnet50", "B4:1-35|s2:36-44|s2:45-54", None),
    ("hikey970", "googlenet", "B4:1-39|s4:40-58", None),
    ("hikey970", "alexnet", "B4:1-9|s4:10-11", None),
    ("jetson-tx2", "vgg16", "D2:1-9|A4:10-21", None),
    ("chiplet-c2", "resnet50-shisha", "FEP0:1-20|FEP1:21-35|SEP0:36-44|SEP1:45-50", None),
] + [("hikey970", "resnet50", "B4:1-35|s2:36-44|s2:45-54", bw) for bw in (4.0, 2.0, 1.5)] + [
    ("hikey970", "googlenet", "B4:1-39|s4:40-58", bw) for bw in (4.0, 2.0, 1.5)]


def run(frames: int) -> list[dict]:
    rows = []
    for pname, wname, mapping, bw in CASES:
        overrides = [f"memories.dram.bandwidth_GBps={bw}"] if bw is not None else []
        platform = load_platform(pname, overrides)
        workload = load_workload(wname)
        pipe = load_mapping(mapping, platform, workload)
        fps = {}
        for flows in ("stage", "op"):
            fps[flows] = simulate(platform, workload, pipe, engine="des", frames=frames,
                                  flows=flows).metrics.throughput_fps
        alone = simulate(platform, workload, pipe, engine="analytic").metrics.throughput_fps
        rows.append({"platform": pname, "workload": wname, "mapping": mapping,
                     "dram_GBps": bw if bw is not None else "shipped",
                     "no_contention_fps": alone, "stage_flows_fps": fps["stage"], "op_flows_fps": fps["op"],
                     "aggregation_error": fps["stage"] / fps["op"] - 1.0})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = run(args.frames)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'platform':11} {'workload':16} {'DRAM':>8} {'alone':>8} {'stage':>8} {'op':>8} {'stage/op-1':>10}  mapping")
    for r in rows:
        print(f"{r['platform']:11} {r['workload']:16} {str(r['dram_GBps']):>8} {r['no_contention_fps']:8.3f} "
              f"{r['stage_flows_fps']:8.3f} {r['op_flows_fps']:8.3f} "
              f"{r['aggregation_error']:+10.2%}  {r['mapping']}")


if __name__ == "__main__":
    main()
