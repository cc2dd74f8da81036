"""Table 4: the Advanced-4 best-latency mapping of AlexNet on the 8 CPUs.

Two parts. (a) A verification vector: the advanced genome reconstructed by hand from Table 4
(thesis §5.2.1: row 1 dev8 = 1, dev7 = 2, dev1 = 3, dev5 = 5, dev6 = 8; row 2 dev2 = 1, dev7 = 2, dev3 = 3,
dev5 = 4, dev6 = 5, dev4 = 8; rows 3-4 repeat row 1) decodes to exactly Table 4's devices, split
output sizes and Concat devices. (b) The Advanced-4 best-latency mapping of hetsim's own E1 run,
written the way Table 4 is (layer, original and split output sizes, devices, inserted Concats),
with the thesis's two observations about it as claims: every split layer uses two devices, and
the mapping uses all eight.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, VECTOR, Artifact, Context
from hetsim_papers.nsga2.experiments.runs import problem, run
from hetsim_papers.nsga2.explorers import Advanced

#: Table 4's devices per ONNX layer (split 1 first; dev_k = the k-th CPU), its Concat devices.
TABLE4_DEVICES = {
    "conv1_1": [8, 2], "conv1_2": [8], "norm1_1": [8], "pool1_1": [8], "conv2_1": [7], "conv2_2": [7],
    "norm2_1": [7], "pool2_1": [7], "conv3_1": [1, 3], "conv3_2": [1], "conv4_1": [5], "conv4_2": [5],
    "conv5_1": [5, 6], "conv5_2": [5], "pool5_1": [5], "OC2_DUMMY_0": [5], "fc6_1": [6, 4], "fc6_2": [6],
    "fc6_3": [6], "fc7_1": [6, 4], "fc7_2": [6], "fc7_3": [6], "fc8_1": [6, 4], "prob_1": [6]}
TABLE4_CONCAT = {"conv1_1": 8, "conv3_1": 1, "conv5_1": 5, "fc6_1": 6, "fc7_1": 6, "fc8_1": 6}
#: The genome reconstructed from Table 4 (thesis §5.2.1), rows of 8 genes (device 1..8).
ROW1 = [3, 0, 0, 0, 5, 8, 2, 1]
ROW2 = [0, 1, 3, 8, 4, 5, 2, 0]
TABLE4_GENOME = ROW1 + ROW2 + ROW1 + ROW1


def mapping_rows(space, placement) -> list[dict]:
    """Table 4's rows: each layer, its output size, split output sizes, devices; a Concat row
    after each split layer."""
    rows = []
    index = {name: k + 1 for k, name in enumerate(space.device_names)}
    for op in space.workload.ops:
        shape = "x".join(str(d) for d in op.out_shape)
        devices = placement.devices_of(op.name)
        shares = placement.splits.get(op.name)
        split = ", ".join(f"{shape.rsplit('x', 1)[0]}x{round(s.fraction * op.out_c)}" for s in shares) if shares else ""
        rows.append({"layer": op.name, "kind": op.op_type or str(op.kind), "output": shape, "split_outputs": split,
                     "devices": ", ".join(f"dev_{index[e.name]}" for e in devices)})
        if shares:
            rows.append({"layer": f"{op.name}:concat", "kind": "Concat", "output": shape, "split_outputs": "",
                         "devices": f"dev_{index[placement.ep_of[op.name].name]}"})
    return rows


def table4(ctx: Context) -> Artifact:
    pr = problem("alexnet-onnx", "cpu", ctx.quick)
    space = pr.space
    chrom = Advanced(space, p=4)
    reference = chrom.placement(np.array(TABLE4_GENOME))
    index = {name: k + 1 for k, name in enumerate(space.device_names)}
    devices = {op: [index[e.name] for e in reference.devices_of(op)] for op in TABLE4_DEVICES}
    concat = {op: index[reference.ep_of[op].name] for op in TABLE4_CONCAT}
    halves = all(abs(s.fraction - 0.5) < 1e-12 for shares in reference.splits.values() for s in shares)
    claims = [ctx.equal("the reconstructed Table 4 genome decodes to Table 4's devices per layer", TABLE4_DEVICES, devices,
                        kind=VECTOR),
              ctx.equal("... and to Table 4's Concat devices", TABLE4_CONCAT, concat, kind=VECTOR),
              ctx.true("... with every split an equal halving of the output channels", "halves",
                       "halves" if halves else "unequal", halves, "every split", kind=VECTOR)]
    e = run("alexnet-onnx", "cpu", "advanced", 4, ctx.quick, ctx.seed, ctx)
    found = e.info["deployed"]["latency_s"]["placement"]
    rows = mapping_rows(space, found)
    widths = {len(found.devices_of(op)) for op in found.splits}
    used = {ep.name for op in space.op_names for ep in found.devices_of(op)}
    claims.append(ctx.true("hetsim's Advanced-4 best-latency AlexNet mapping splits every split layer over two devices",
                           "2 devices each", sorted(widths) or "no split layer", widths == {2}, "all splits 2-way",
                           kind=PREDICTION))
    claims.append(ctx.equal("hetsim's Advanced-4 best-latency AlexNet mapping uses all 8 CPUs", 8, len(used),
                            kind=PREDICTION))
    table = pd.concat([pd.DataFrame(mapping_rows(space, reference)).assign(mapping="thesis Table 4 (decoded)"),
                       pd.DataFrame(rows).assign(mapping="hetsim Advanced-4 best latency")], ignore_index=True)
    return Artifact(table, None, claims)
