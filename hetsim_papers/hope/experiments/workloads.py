"""``hope:workloads``: the seven graphs HOPE schedules (§4.1, §5.1): operators as MNN counts them,
distinct tensor shapes, MACs, parallelism (the DAG's width), against what the paper states."""

from __future__ import annotations

import networkx as nx
import pandas as pd

from hetsim.experiment import Context
from hetsim.workload import load_workload
from hetsim_papers.hope.experiments._common import VECTOR, artifact, figure
from hetsim_papers.hope.experiments.paper import MODELS, OPS_MIN, OPS_NAS_L, SHAPES_NAS_L


def graph_facts(model: str) -> dict:
    w = load_workload(MODELS[model])
    g = w.graph
    shapes = {op.dims for op in w.ops if g.out_degree(op.name) > 0}
    levels: dict[int, int] = {}
    for i, gen in enumerate(nx.topological_generations(g)):
        levels[i] = len(gen)
    return {"model": model, "workload": w.name, "mnn_ops": len(w.ops) + len(w.inputs), "edges": g.number_of_edges(),
            "distinct_shapes": len(shapes), "gmac": sum(op.macs for op in w.ops) / 1e9,
            "weights_MB": sum(op.weight_bytes for op in w.ops) / 1e6, "depth": len(levels),
            "max_width": max(levels.values()), "mean_width": len(w.ops) / len(levels)}


def workloads(ctx: Context):
    table = pd.DataFrame([graph_facts(m) for m in MODELS])
    ops = {str(m): int(n) for m, n in zip(table.model, table.mnn_ops, strict=True)}
    largest = max(ops, key=lambda m: ops[m])
    nas = table.set_index("model").loc["NAS-L"]
    claims = [
        ctx.equal("fewest operators of the seven (SQZ; MNN ops)", OPS_MIN, int(min(ops.values())), kind=VECTOR),
        # Counts of the graphs, classed as SQZ's count is: verification vectors, not predictions.
        ctx.equal("NAS-L operators (MNN ops)", OPS_NAS_L, int(nas.mnn_ops), kind=VECTOR),
        ctx.equal("NAS-L distinct tensor shapes", SHAPES_NAS_L, int(nas.distinct_shapes), kind=VECTOR),
        ctx.true("NAS-L has the most operators", "NAS-L", largest, largest == "NAS-L", "exact", kind=VECTOR),
    ]
    fig, axes = figure(1, 2, (11, 3.8))
    axes[0, 0].bar(table.model, table.mnn_ops, color="tab:blue", label="hetsim (MNN-style fusion)")
    axes[0, 0].axhline(OPS_NAS_L, color="tab:red", ls="--", lw=1, label="paper: NAS-L 1,049")
    axes[0, 0].axhline(OPS_MIN, color="tab:green", ls=":", lw=1, label="paper: smallest 40")
    axes[0, 0].set_ylabel("operators (MNN count)")
    axes[0, 0].set_title("Operators per model")
    axes[0, 0].legend(fontsize=8)
    axes[0, 1].bar(table.model, table.mean_width, color="tab:gray", label="mean ops per level")
    axes[0, 1].plot(table.model, table.max_width, "ko", label="widest level")
    axes[0, 1].set_ylabel("ops per topological level")
    axes[0, 1].set_title("Inter-operator parallelism")
    axes[0, 1].legend(fontsize=8)
    notes = ["The graphs are the zoo's (hetsim_papers/hope/networks.py) after MNN's converter fusions; "
             "docs/papers/hope.md ('Workloads') explains NAS-L's 872 operators against the paper's 1,049."]
    return artifact(table, fig, claims, notes)
