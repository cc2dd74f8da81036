"""docs/papers/hope.md's result tables, written from a run's CSVs (never typed by hand).

``python -m hetsim_papers.hope.experiments.doc_tables OUT [DOC]`` reads ``OUT/hope/*.csv`` of
``hetsim reproduce hope --out OUT`` (quick or full) and rewrites, in DOC (default
docs/papers/hope.md), every block between ``<!-- generated: NAME -->`` and ``<!-- /generated -->``
with the table NAME (:data:`TABLES`) of that run. A table whose CSV is absent is left as it is.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from hetsim_papers.hope.experiments.paper import (
    ABSTRACT_MOSAIC,
    ABSTRACT_STARPU,
    FIG5,
    FIG7_LP_VS_STARPU,
    GS_VS_STARPU,
    LP_VS_MOSAIC,
    LP_VS_STARPU,
    MODELS,
)

BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)


def _f(x: float) -> str:
    return f"{x:.1f}".replace("-", "−")


def _per_model(table: pd.DataFrame, column: str) -> pd.Series:
    """A reduction column averaged over the phones, per model (the rows repeat it per version)."""
    return table.drop_duplicates(["phone", "model"]).groupby("model", sort=False)[column].mean()


def fig4(out: Path) -> str:
    t = pd.read_csv(out / "fig4.csv")
    cols = [("HOPE:LP vs MOSAIC", LP_VS_MOSAIC), ("HOPE:LP vs StarPU", LP_VS_STARPU),
            ("HOPE:GS vs StarPU", GS_VS_STARPU)]
    means = {c: _per_model(t, c) for c, _ in cols}
    rows = ["| model | LP vs MOSAIC, paper | hetsim | LP vs StarPU, paper | hetsim | GS vs StarPU, paper | hetsim |",
            "|---|---|---|---|---|---|---|"]
    for m in (m for m in MODELS if m in means[cols[0][0]].index):
        rows.append(f"| {m} | " + " | ".join(f"{paper[m]:.1f} | {_f(means[c][m])}" for c, paper in cols) + " |")
    per = t.drop_duplicates(["phone", "model"])
    n = len(means[cols[0][0]])
    rows.append(f"| mean of the {n} models (abstract: of 7) | " + " | ".join(
        [f"{ABSTRACT_MOSAIC[1]:.1f} | {_f(means[cols[0][0]].mean())}",
         f"{ABSTRACT_STARPU[1]:.1f} | {_f(means[cols[1][0]].mean())}", "– | –"]) + " |")
    rows.append(f"| largest, {n} models x 3 phones (abstract) | " + " | ".join(
        [f"{ABSTRACT_MOSAIC[0]:.1f} | {_f(per[cols[0][0]].max())}",
         f"{ABSTRACT_STARPU[0]:.1f} | {_f(per[cols[1][0]].max())}", "– | –"]) + " |")
    return "\n".join(rows)


def fig5(out: Path) -> str:
    t = pd.read_csv(out / "fig5.csv").drop_duplicates(["cpu_frequency", "model"])
    rows = ["| frequency | LP vs MOSAIC mean / max, paper | hetsim | LP vs StarPU mean / max, paper | hetsim |",
            "|---|---|---|---|---|"]
    for f, sub in t.groupby("cpu_frequency", sort=False):
        cells = []
        for base in ("MOSAIC", "StarPU"):
            col = sub[f"HOPE:LP vs {base}"]
            cells.append(f"{FIG5[f][base][1]:.1f} / {FIG5[f][base][0]:.1f} | {_f(col.mean())} / {_f(col.max())}")
        rows.append(f"| {f} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def fig7(out: Path) -> str:
    t = pd.read_csv(out / "fig7.csv").drop_duplicates("model").set_index("model")
    models = [m for m in MODELS if m in t.index]
    col = t["HOPE:LP vs StarPU"]
    return "\n".join([
        "| model | " + " | ".join(models) + " | mean |", "|---" * (len(models) + 2) + "|",
        "| LP vs StarPU, paper | " + " | ".join(f"{FIG7_LP_VS_STARPU[m]:.1f}" for m in models)
        + f" | {sum(FIG7_LP_VS_STARPU[m] for m in models) / len(models):.1f} |",
        "| hetsim | " + " | ".join(_f(col[m]) for m in models) + f" | {_f(col[models].mean())} |"])


def ablations(out: Path) -> str:
    t = pd.read_csv(out / "ablations.csv")
    piv = t.pivot_table(index=["phone", "model"], columns="variant", values="latency_ms")
    red = {v: float((100 * (piv["StarPU"] - piv[v]) / piv["StarPU"]).mean()) for v in t.variant.unique()
           if v != "StarPU"}
    rows = ["| variant | mean reduction vs StarPU (%) |", "|---|---|"]
    rows += [f"| {v} | {_f(r)} |" for v, r in red.items()]
    return "\n".join(rows)


def optimality(out: Path) -> str:
    t = pd.read_csv(out / "optimality.csv")
    exact = t[t.scheduler == "ILP-exact"].set_index(["setting", "graph"])
    proven = exact[exact.proven].index
    sub = t[t.set_index(["setting", "graph"]).index.isin(proven)]
    rows = ["| scheduler | mean gap to the optimum (%) | largest (%) |", "|---|---|---|"]
    for s, g in sub[sub.scheduler != "ILP-exact"].groupby("scheduler", sort=False).gap_pct:
        rows.append(f"| {s} | {_f(g.mean())} | {_f(g.max())} |")
    rows.append(f"\nOver the {len(proven)} of {len(exact)} instances CP-SAT proved optimal"
                + ("." if len(proven) == len(exact) else
                   "; on the others only a bound was found (the gap to it bounds the gap to the optimum)."))
    return "\n".join(rows)


#: name -> the function that writes the table from a run's ``hope`` folder.
TABLES: dict[str, Callable[[Path], str]] = {"fig4": fig4, "fig5": fig5, "fig7": fig7, "ablations": ablations,
                                             "optimality": optimality}


def regenerate(out: Path, doc: Path) -> list[str]:
    """Rewrite ``doc``'s generated blocks from the run in ``out``; the names of the tables written."""
    folder = out / "hope" if (out / "hope").is_dir() else out
    quick = bool(json.loads((out / "scorecard.json").read_text()).get("quick"))
    done = []

    def one(match: re.Match) -> str:
        name = match["name"]
        if name not in TABLES or not (folder / f"{name}.csv").exists():
            return match.group(0)
        done.append(name)
        return (match.group(1) + f"*Generated from `hetsim reproduce hope{' --quick' if quick else ''}` "
                f"by `python -m hetsim_papers.hope.experiments.doc_tables`.*\n\n" + TABLES[name](folder) + "\n"
                + match.group(4))

    doc.write_text(BLOCK.sub(one, doc.read_text()))
    return done


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python -m hetsim_papers.hope.experiments.doc_tables OUT [DOC]")
    written = regenerate(Path(sys.argv[1]), Path(sys.argv[2] if len(sys.argv) == 3 else "docs/papers/hope.md"))
    print("regenerated:", ", ".join(written) or "nothing")
