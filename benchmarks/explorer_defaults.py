"""The measured table behind ``hetsim explore``'s default explorer and EP space per platform class
(hetsim/exploration/defaults.py reads it).

    python benchmarks/explorer_defaults.py [--seeds 3] [--out hetsim/exploration/explorer_defaults.csv]

For representative platforms of each class (:data:`CASES`), every pipeline algorithm of hetsim and
its papers runs as ``hetsim explore -p P -w W -a A [--assignment S]`` runs it (the spec's defaults:
the derived EPs, depths 1.., the analytic trial with its contention estimate, its 20 best mappings
re-simulated in the DES; RW with 1,000 trials, as it needs a stopping rule), over each EP space of
the class, stochastic algorithms over ``--seeds`` seeds. A run's quality is the DES throughput of its
answer over the best DES throughput known for the (platform, workload): the exact DES optimum of
the whole-EP space (:func:`hetsim.exploration.confirm.des_optimum`) where it can be enumerated,
else, and in any case at least, the best answer of any run. On the PIM platform the placement
algorithms run too (space ``placement``: ``hetsim explore -a A`` of a placement algorithm, one
inference's latency; its rate is the answer): the PIM paper's runtime runs one op at a time. A run that refuses (exhaustive search
past the enumeration limit, Shisha on core groups) is a row with its error and quality 0: a default
must answer. One row per run, written as it finishes (``--resume`` keeps the rows already there).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hetsim.errors import HetsimError  # noqa: E402
from hetsim.exploration.confirm import des_optimum  # noqa: E402
from hetsim.exploration.defaults import TABLE, platform_class  # noqa: E402
from hetsim.exploration.guide import documented  # noqa: E402
from hetsim.exploration.spec import ExplorationSpec, build  # noqa: E402
from hetsim.platform import load_platform  # noqa: E402

PHONE = str(ROOT / "tests" / "data" / "phone-soc.yaml")
#: (platform, workloads, EP spaces): two or three platforms per class; core groups where a
#: platform has CPU clusters of several cores beside other EPs.
CASES = [
    ("hikey970", ["resnet50", "alexnet"], ["permutations", "cores"]),
    ("jetson-tx2", ["resnet50"], ["permutations", "cores"]),
    ("chiplet-c2", ["resnet50", "synthnet"], ["permutations"]),
    ("chiplet-c5", ["synthnet"], ["permutations"]),
    ("rk3588", ["resnet50", "resnet18-onnx"], ["permutations", "cores"]),
    (PHONE, ["resnet50", "resnet18-onnx"], ["permutations", "cores"]),
    ("hope-he", ["resnet50"], ["permutations", "cores"]),
    ("pim-zynq", ["bert-small-p16", "gpt2-p16"], ["permutations", "placement"]),
    ("xavier-nx-x8", ["resnet18-onnx"], ["permutations"]),
]
#: Algorithms whose answer does not depend on the seed with their defaults.
DETERMINISTIC = {"ES", "PS", "PS-nohints", "Shisha", "HC_s", "Pipe-it", "Pipe-it-A2"}
COLUMNS = ["class", "kind", "platform", "workload", "space", "algorithm", "seed", "quality", "answer_fps",
           "reference_fps", "reference", "answer_mapping", "search_fps", "trials", "wall_s", "error"]


def _name(platform: str) -> str:
    return Path(platform).stem if platform.endswith(".yaml") else platform


def _run(platform: str, workload: str, space: str, algorithm: str, seed: int) -> dict:
    data = {"platform": platform, "workload": workload, "algorithm": algorithm, "seed": seed,
            "problem": {"assignment": space} if space != "placement" else {}}
    if algorithm == "RW":
        data["termination"] = {"max_trials": 1000}
    t0 = time.perf_counter()
    try:
        result = build(ExplorationSpec.make(**data)).run()
    except HetsimError as e:
        return {"error": str(e), "wall_s": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    if space == "placement":   # one inference's latency: its rate is the answer
        ok = result.best is not None and result.best_value > 0
        return {"answer_fps": 1.0 / result.best_value if ok else None, "answer_mapping": result.best_mapping,
                "search_fps": 1.0 / result.best_value if ok else None, "trials": result.n_trials, "wall_s": wall}
    if result.confirmation is None:
        return {"error": "no feasible mapping", "wall_s": wall, "trials": result.n_trials}
    return {"answer_fps": result.answer_value, "answer_mapping": str(result.answer),
            "search_fps": result.best_value, "trials": result.n_trials, "wall_s": wall}


def _reference(platform: str, workload: str) -> tuple[float, str]:
    """The exact DES optimum of the whole-EP space, where it can be enumerated (else 0)."""
    try:
        setup = build(ExplorationSpec.make(platform=platform, workload=workload, algorithm="ES",
                                           problem={"assignment": "permutations"}))
        _, fps, runs = des_optimum(setup.problem)
        return fps, f"DES optimum of the whole-EP space ({runs} DES runs)"
    except HetsimError:
        return 0.0, "best answer of any run"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default=str(TABLE))
    ap.add_argument("--resume", action="store_true", help="keep the rows of --out, run the others")
    args = ap.parse_args()
    out = Path(args.out)
    done: list[dict] = []
    if args.resume and out.is_file():
        with out.open(newline="") as f:
            done = list(csv.DictReader(f))
    seen = {(r["platform"], r["workload"], r["space"], r["algorithm"], r["seed"]) for r in done}
    names = {kind: [a.name for a in documented(kind)] for kind in ("pipeline", "placement")}   # hetsim's and its papers'
    rows: list[dict] = []
    for platform, workloads, spaces in CASES:
        cls, _ = platform_class(load_platform(platform))
        for workload in workloads:
            ref_fps, ref_what = _reference(platform, workload)
            case: list[dict] = []
            for space in spaces:
                kind = "placement" if space == "placement" else "pipeline"
                for name in names[kind]:
                    for seed in range(1 if name in DETERMINISTIC or kind == "placement" else args.seeds):
                        key = (_name(platform), workload, space, name, str(seed))
                        previous = [r for r in done if (r["platform"], r["workload"], r["space"],
                                                        r["algorithm"], r["seed"]) == key]
                        if key in seen and previous:
                            r = previous[0]
                            row = {k: r[k] for k in COLUMNS if k in r}
                            row["answer_fps"] = float(r["answer_fps"]) if r["answer_fps"] else None
                        else:
                            row = {"class": cls, "kind": kind, "platform": _name(platform), "workload": workload,
                                   "space": space, "algorithm": name, "seed": seed,
                                   **_run(platform, workload, space, name, seed)}
                            print(f"{cls} {_name(platform)} {workload} {space} {name} {seed}: "
                                  f"{row.get('answer_fps') or row.get('error', '')} ({row['wall_s']:.1f} s)",
                                  flush=True)
                        case.append(row)
            best = max([ref_fps] + [float(r["answer_fps"]) for r in case if r.get("answer_fps")])
            for r in case:
                fps = r.get("answer_fps")
                r["reference_fps"] = best
                r["reference"] = ref_what if ref_fps >= best else "best answer of any run"
                r["quality"] = float(fps) / best if fps else 0.0
            rows.extend(case)
            _write(out, rows + [r for r in done if (r["platform"], r["workload"]) not in
                                {(x["platform"], x["workload"]) for x in rows}])
    print(f"wrote {out} ({len(rows)} runs)")
    if out == TABLE:   # the doc's table reads the shipped one
        from hetsim.exploration.defaults import defaults_markdown, scores
        from hetsim.exploration.guide import replace_section

        scores.cache_clear()
        doc = ROOT / "docs" / "explorers.md"
        doc.write_text(replace_section(doc.read_text(), "defaults", defaults_markdown()))
        print(f"wrote the defaults table of {doc}")


def _write(path: Path, rows: list[dict]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items() if k in COLUMNS})
    tmp.replace(path)


if __name__ == "__main__":
    main()
