"""How well hetsim's work estimates (hetsim/sim/budget.py) predict run time: each engine path on
ResNet50's B4-s2-s2 pipeline and its all-on-B4 placement (hikey970), estimated events against the
wall time of the run. The weights of budget.py are set so that every path runs near one rate
(EVENTS_PER_S); docs/robustness.md quotes this table.

    python benchmarks/budget.py
"""

from __future__ import annotations

import time

from hetsim.cost import RooflineCostModel
from hetsim.evaluation import simulate
from hetsim.mapping import load_mapping, make_placement
from hetsim.options import RunOptions
from hetsim.platform import load_platform
from hetsim.sim import budget
from hetsim.tasks import build_tasks
from hetsim.workload import load_workload


def main() -> None:
    p, w = load_platform("hikey970"), load_workload("resnet50")
    cost = RooflineCostModel(p)
    pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", p, w)
    place = make_placement({}, p, w, default="B4")
    # per-op flows where they contend: the DRAM at 12 GB/s (the B4 and s2 stages' peak op rates
    # overflow it), the same mapping
    slow = load_platform("hikey970", overrides=["memories.dram.bandwidth_GBps=12"])
    slow_pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", slow, w)
    cases = [
        ("SimPy pipeline, contention", pipe, {"frames": 20_000}),
        ("SimPy pipeline, flows=op", pipe, {"frames": 2_000, "flows": "op"}),
        ("SimPy pipeline, flows=op, DRAM 12 GB/s", slow_pipe, {"frames": 2_000, "flows": "op"}),
        ("SimPy pipeline, no contention", pipe, {"frames": 20_000, "contention": False, "fast": False}),
        ("max-plus recurrence", pipe, {"frames": 300_000, "contention": False}),
        ("max-plus recurrence, buffer 8", pipe, {"frames": 300_000, "contention": False, "buffer_frames": 8}),
        ("analytic schedule", pipe, {"engine": "analytic", "frames": 1_000_000}),
        ("SimPy DAG, contention", place, {"frames": 100}),
        ("SimPy DAG, no contention", place, {"frames": 100, "contention": False}),
    ]
    print(f"| path | frames | estimated events | wall time (s) | events/s (budget assumes {budget.EVENTS_PER_S:,}) |")
    print("|---|---:|---:|---:|---:|")
    for name, m, kw in cases:
        opts = RunOptions.make(**{"engine": "des", **kw}).resolve(m)
        plat, c = (slow, RooflineCostModel(slow)) if m is slow_pipe else (p, cost)
        if m is place:
            est = budget.estimate_dag(build_tasks(p, w, m, cost, None, "free", True, False), opts)
        else:
            est = budget.estimate_pipeline(plat, w, m, c, opts)
        t0 = time.perf_counter()
        simulate(plat, w, m, opts, cost=c)
        dt = time.perf_counter() - t0
        print(f"| {name} | {opts.frames:,} | {est.events:.3g} | {dt:.2f} | {est.events / dt:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
