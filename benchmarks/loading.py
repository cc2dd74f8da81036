"""Loading at scale: CPU time and peak memory of loading large inputs, each in a fresh process, and
the rates per unit that hetsim.loading's estimates use (docs/robustness.md, "Loading").

    python benchmarks/loading.py [--quick] [--out results/loading]

Inputs, generated in ``--out``: workloads of 100,000 convs and of 100,000 relus (YAML), a platform of
200,000 DVFS levels and one of 100,000 memories, an ONNX graph of 100,000 nodes (a chain of relus
and convs, weights external), ONNX Runtime profiles of 5,000, 10,000 and 20,000 runs of a two-node
model, and a workload with an anchor (read by the Python YAML reader). ``--quick``: a tenth of each.
Each row: the count, CPU seconds, peak RSS growth, and CPU and bytes per unit against
:data:`hetsim.loading.RATES` (what the estimates assume; they should be at or above the measured).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time
import hetsim.cli  # the command line's imports, as a real run has them
from hetsim import loading

def peak():  # VmHWM: this process's peak resident memory (ru_maxrss keeps the parent's across exec)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))

kind, path = sys.argv[1], sys.argv[2]
rss0 = peak()
t0 = time.process_time()
with loading.forced():
    if kind == "workload":
        from hetsim.workload import load_workload
        load_workload(path)
    elif kind == "platform":
        from hetsim.platform import load_platform
        load_platform(path)
    elif kind == "onnx":
        from hetsim.workload.onnx_import import import_onnx
        import_onnx(path, "chain")
    else:
        from hetsim.cost.ort_profile import import_ort_profiles
        import_ort_profiles({"C1": [path]})
t = time.process_time() - t0
print(t, (peak() - rss0) * 1024)
"""


def _workload(path: Path, n: int, kind: str, anchor: bool = False) -> None:
    lines = ["schema: 1", f"name: {path.stem}", "input: {h: 8, w: 8, c: 8}", "layer_kinds: [conv, dw, fc]", "ops:"]
    for i in range(n):
        op = "{kind: conv, kernel: 3, pad: 1, out_c: 8}" if kind == "conv" else "{kind: relu}"
        lines.append(f"  - {{name: o{i}, {op[1:]}")
    if anchor:   # an anchor: the document goes to the Python reader
        lines[2] = "input: &in {h: 8, w: 8, c: 8}"
    path.write_text("\n".join(lines) + "\n")


def _platform(path: Path, n: int, what: str) -> None:
    tree = yaml.safe_load((REPO / "platforms" / "hikey970.yaml").read_text())
    tree["name"] = path.stem
    if what == "dvfs":
        ct = tree["core_types"][0]
        level = ct["dvfs"][-1]
        ct["dvfs"] = [dict(level, name=f"l{i}", freq_MHz=100 + i * 0.001) for i in range(n)]
        ct["default_dvfs"] = "l0"
        for c in tree["clusters"]:
            if c["core_type"] == ct["name"]:
                c.pop("dvfs", None)
        tree.pop("dvfs_presets", None)
    else:
        mem = tree["memories"][0]
        tree["memories"] += [dict(mem, name=f"m{i}") for i in range(n)]
    path.write_text(yaml.safe_dump(tree, sort_keys=False))


def _onnx(path: Path, n: int) -> None:
    import onnx

    from hetsim.workload.onnx_graph import OnnxGraph

    g = OnnxGraph("chain", weights="external")
    y = g.input("x", (1, 8, 8, 8))
    for i in range(n):
        y = g.relu(y) if i % 10 else g.conv(y, 8, 3, pad=1)
    onnx.save(g.model(y), path)


def _profile(path: Path, runs: int) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from fuzzing import ort_profile

    path.write_text(json.dumps(ort_profile(runs)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from hetsim.loading import RATES

    scale = 10 if args.quick else 1
    out = Path(args.out or tempfile.mkdtemp(prefix="hetsim-loading-"))
    out.mkdir(parents=True, exist_ok=True)
    cases = []
    for n, kind in ((100_000, "conv"), (100_000, "relu")):
        p = out / f"{kind}{n // scale}.yaml"
        _workload(p, n // scale, kind)
        cases.append((f"workload, {n // scale:,} {kind}s", "workload", p, n // scale, "ops"))
    p = out / "anchored.yaml"
    _workload(p, 20_000 // scale, "relu", anchor=True)
    cases.append((f"workload with an anchor (Python reader), {p.stat().st_size:,} bytes", "workload", p,
                  p.stat().st_size, "yaml-bytes"))
    for n, what in ((200_000, "dvfs"), (100_000, "memories")):
        p = out / f"{what}{n // scale}.yaml"
        _platform(p, n // scale, what)
        from hetsim.platform.loader import _entries

        cases.append((f"platform, {n // scale:,} {'DVFS levels' if what == 'dvfs' else what}", "platform", p,
                      _entries(yaml.safe_load(p.read_text())), "entries"))
    p = out / "chain.onnx"
    _onnx(p, 100_000 // scale)
    cases.append((f"ONNX graph, {100_000 // scale:,} nodes", "onnx", p, 100_000 // scale, "nodes"))
    for runs in (5_000, 10_000, 20_000):
        p = out / f"profile{runs // scale}.json"
        _profile(p, runs // scale)
        cases.append((f"ONNX Runtime profile, {runs // scale:,} runs", "profile", p, p.stat().st_size,
                      "profile-bytes"))
    print("| input | count | CPU (s) | peak memory (MB) | CPU per unit (us) [assumed] | bytes per unit [assumed] |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, kind, path, count, unit in cases:
        run = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], capture_output=True, text=True,
                             cwd=out)
        if run.returncode != 0:
            print(f"| {label} | failed: {run.stderr.strip().splitlines()[-1][:120]} |||||")
            continue
        seconds, rss = (float(x) for x in run.stdout.split())
        rate = RATES[unit]
        print(f"| {label} | {count:,} {unit} | {seconds:.2f} | {rss / 1e6:.0f} | "
              f"{seconds / count * 1e6:.3g} [{rate.seconds * 1e6:.3g}] | {rss / count:.3g} [{rate.bytes:.3g}] |",
              flush=True)


if __name__ == "__main__":
    main()
