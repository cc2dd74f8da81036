"""Which explorer wins where: every registered pipeline algorithm on the shipped platforms, with the
derived EP space of ``hetsim explore`` (each cluster whole and each accelerator, fastest first),
measured against the exact optimum of that space (exhaustive search).

    python benchmarks/explorer_guide.py [--seeds 5] [--out docs/explorer_guide.csv] [--doc docs/explorers.md]

For each (platform, workload) case: ES gives the optimum throughput of the space; every other
algorithm runs with its defaults (RW: 200 trials), stochastic ones over ``--seeds`` seeds (0..n-1),
and the table reports the mean quality (best throughput / optimum, %) and the mean number of
distinct configurations measured. Noise-free stage-by-stage measurement (the default), roofline
costs. Writes a tidy CSV (one row per run) and the markdown table between the ``measured`` markers
of docs/explorers.md. The sweep issue's ``hetsim reproduce tournament`` supersedes this script
once it lands; until then this is how the guide's table is made.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hetsim.cost import RooflineCostModel  # noqa: E402
from hetsim.errors import HetsimError  # noqa: E402
from hetsim.exploration import MaxTrials, PipelineProblem, explore, make_explorer  # noqa: E402
from hetsim.exploration.guide import MEASURED, documented, replace_section  # noqa: E402
from hetsim.exploration.space import default_eps  # noqa: E402
from hetsim.platform import load_platform  # noqa: E402
from hetsim.workload import load_workload  # noqa: E402

#: (platform, workload, depths): every shipped platform family; depths kept small enough that ES
#: enumerates the space (chiplet-c3's 6 EPs: 2..3).
CASES = [
    ("hikey970", "resnet50", None),
    ("jetson-tx2", "resnet50", None),
    ("knl", "resnet50", None),
    ("chiplet-c2", "resnet50", None),
    ("chiplet-c3", "resnet50", [2, 3]),
    ("rk3588", "resnet50", None),
    ("rk3588", "googlenet", None),
]
#: Algorithms whose result does not depend on the seed with their defaults.
DETERMINISTIC = {"PS", "PS-nohints", "Shisha", "ES", "HC_s", "Pipe-it", "Pipe-it-A2"}


def run(seeds: int) -> pd.DataFrame:
    rows = []
    names = [a.name for a in documented("pipeline")]   # hetsim's own and its papers', not a third party's
    for platform_name, workload_name, depths in CASES:
        platform, workload = load_platform(platform_name), load_workload(workload_name)
        cost = RooflineCostModel(platform)
        eps, _ = default_eps(platform, workload, cost)
        problem = PipelineProblem(platform, workload, cost, eps=eps, depths=depths)
        t0 = time.perf_counter()
        es = explore(problem, make_explorer("ES"), seed=0)
        optimum = es.best_fps
        print(f"{platform_name}/{workload_name}: {problem.distinct_space_size:,} configurations, optimum "
              f"{optimum:.3f} f/s ({es.best_mapping}), ES {time.perf_counter() - t0:.1f} s", flush=True)
        for name in names:
            for seed in range(1 if name in DETERMINISTIC else seeds):
                if name == "ES":
                    r = es
                else:
                    term = MaxTrials(200) if name == "RW" else None
                    try:
                        r = explore(problem, make_explorer(name), term, seed=seed)
                    except HetsimError as e:   # the algorithm refuses this space (Pipe-it on whole EPs)
                        rows.append({"platform": platform_name, "workload": workload_name,
                                     "algorithm": name, "seed": seed, "eps": ",".join(eps),
                                     "depths": f"{min(problem.depths)}..{max(problem.depths)}",
                                     "optimum_fps": optimum, "refused": str(e)})
                        break
                rows.append({"platform": platform_name, "workload": workload_name, "algorithm": name,
                             "seed": seed, "eps": ",".join(eps), "depths": f"{min(problem.depths)}.."
                             f"{max(problem.depths)}", "best_fps": r.best_fps, "optimum_fps": optimum,
                             "quality": r.best_fps / optimum if optimum > 0 else float("nan"),
                             "distinct": r.n_distinct, "clock_s": r.clock_s, "best_mapping": r.best_mapping})
    return pd.DataFrame(rows)


def markdown(df: pd.DataFrame) -> str:
    names = list(dict.fromkeys(df["algorithm"]))
    g = df.groupby(["platform", "workload", "algorithm"], sort=False).agg(
        quality=("quality", "mean"), distinct=("distinct", "mean"), runs=("seed", "count"))
    lines = ["| platform / workload (EPs, depths) | " + " | ".join(f"`{n}`" for n in names) + " |",
             "|---|" + "---|" * len(names)]
    for (platform, workload), case in df.groupby(["platform", "workload"], sort=False):
        cells = []
        best = max(q for n in names if n != "ES" and (q := g.loc[(platform, workload, n), "quality"]) == q)
        for n in names:
            q = g.loc[(platform, workload, n), "quality"]
            d = g.loc[(platform, workload, n), "distinct"]
            if q != q:   # NaN: refused
                cells.append("–")
                continue
            text = f"{100 * q:.0f}% ({d:,.0f})"
            cells.append(f"**{text}**" if n != "ES" and q >= best - 1e-9 else text)
        eps, depths = case["eps"].iloc[0], case["depths"].iloc[0]
        lines.append(f"| {platform} / {workload} ({eps}; {depths}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "docs" / "explorer_guide.csv"))
    ap.add_argument("--doc", default=str(ROOT / "docs" / "explorers.md"))
    args = ap.parse_args()
    df = run(args.seeds)
    df.to_csv(args.out, index=False)
    table = markdown(df)
    doc = Path(args.doc)
    doc.write_text(replace_section(doc.read_text(), MEASURED, table))
    print(table)
    print(f"wrote {args.out} and the measured table of {doc}")


if __name__ == "__main__":
    main()
