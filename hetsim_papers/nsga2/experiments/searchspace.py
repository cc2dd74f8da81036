"""The search-space sizes of §4.2 (formulas 4.5 and 4.6), computed by the chromosome classes.

The thesis's worked example: AlexNet (24 layers) on 5 devices; only the 3 FC layers splittable
gives a naive genome of 36 genes; all 8 Conv + FC layers, 56 genes and 5^56 genomes; the advanced
genome with p = 5 has 25 genes of 9 values, 9^25 genomes, "15 orders of magnitude" fewer. The
table adds the sizes of the experiments' own set-ups (n = 8 CPUs, n = 16 devices).
"""

from __future__ import annotations

import math

import pandas as pd

from hetsim.experiment import VECTOR, Artifact, Context
from hetsim.platform import load_platform
from hetsim.workload import load_workload
from hetsim_papers.nsga2.experiments.calibration import LABEL, NETWORKS
from hetsim_papers.nsga2.explorers import Advanced, HybridSpace, Naive, SplitPoint, device_view


def searchspace(ctx: Context) -> Artifact:
    platform = load_platform("xavier-nx-x8")
    alexnet = load_workload("alexnet-onnx")
    five = device_view(platform, "cpu")[:5]
    fc_only = Naive(HybridSpace(platform, alexnet, five, split_kinds=("fc",)))
    naive = Naive(HybridSpace(platform, alexnet, five))
    adv = Advanced(HybridSpace(platform, alexnet, five), p=5)
    rows = [{"network": "AlexNet", "devices": 5, "chromosome": "naive, FC split", "genes": fc_only.n_var,
             "log10_genomes": fc_only.log10_space_size},
            {"network": "AlexNet", "devices": 5, "chromosome": "naive, Conv + FC split", "genes": naive.n_var,
             "log10_genomes": naive.log10_space_size},
            {"network": "AlexNet", "devices": 5, "chromosome": "advanced, p = 5", "genes": adv.n_var,
             "log10_genomes": adv.log10_space_size}]
    orders = naive.log10_space_size - adv.log10_space_size
    claims = [
        ctx.equal("naive genome, AlexNet on 5 devices, FC layers split (eq. 4.5)", 36, fc_only.n_var, kind=VECTOR),
        ctx.equal("naive genome, AlexNet on 5 devices, Conv and FC split (eq. 4.5)", 56, naive.n_var, kind=VECTOR),
        ctx.equal("naive search space = 5^56", 5**56, naive.space_size, kind=VECTOR),
        ctx.equal("advanced genome, p = 5, n = 5 (eq. 4.6)", 25, adv.n_var, kind=VECTOR),
        ctx.equal("advanced search space = 9^25", 9**25, adv.space_size, kind=VECTOR),
        ctx.equal("advanced space smaller by 15 orders of magnitude", 15, math.floor(orders), kind=VECTOR),
    ]
    for n in NETWORKS:
        w = load_workload(n)
        for view in ("cpu", "cpu+gpu"):
            space = HybridSpace(platform, w, view)
            for chrom in (Naive(space), Advanced(space, 2), Advanced(space, 4), Advanced(space, 6),
                          SplitPoint(space)):
                label = chrom.name + (f", p = {chrom.p}" if isinstance(chrom, Advanced) else "")
                rows.append({"network": LABEL[n], "devices": space.n_devices, "chromosome": label,
                             "genes": chrom.n_var, "log10_genomes": chrom.log10_space_size})
    return Artifact(pd.DataFrame(rows), None, claims,
                    notes=[f"Naive 5^56 = 10^{naive.log10_space_size:.1f}, advanced 9^25 = "
                           f"10^{adv.log10_space_size:.1f}: {orders:.1f} orders of magnitude apart."])
