"""Savva's hybrid CNN partitioning with NSGA-II (seed 004): vertical and channel-split partitions of
a CNN over 8 Jetson Xavier NX boards, searched by NSGA-II on the thesis's analytical model and
deployed through AutoDiCE. docs/papers/nsga2.md describes the reproduction."""

from hetsim.plugins import CostModelSpec, ExplorerSpec, Plugin

_E = "hetsim_papers.nsga2.explorers:HybridNSGA2"
_PAPER = "Savva, hybrid partitioning (seed 004)"
plugin = Plugin(
    "nsga2", _PAPER,
    explorers=[
        ExplorerSpec("NSGA-II", _E, "hybrid",
                     "NSGA-II (pymoo) over hybrid vertical + LOP partitions with the thesis's analytical model; "
                     "deploys the Pareto extremes on the real cluster"),
        ExplorerSpec("NSGA-II-naive", _E, "hybrid",
                     "NSGA-II with the naive chromosome: n device genes per Conv/FC layer, 1 per other layer",
                     fixed={"chromosome": "naive"}),
        ExplorerSpec("NSGA-II-adv", _E, "hybrid",
                     "NSGA-II with the advanced chromosome: a p x n matrix of split points over Conv/FC layers",
                     fixed={"chromosome": "advanced"}),
        ExplorerSpec("Split-Point", _E, "hybrid",
                     "NSGA-II with the vertical Split-Point encoding: n genes, one split point per device",
                     paper="Guo, Pimentel & Stefanov [18] via Savva (seed 004)",
                     fixed={"chromosome": "split-point"}),
    ],
    cost_models=[CostModelSpec("ncnn", "hetsim_papers.nsga2.cost:NcnnCostModel",
                               "ncnn's runtime on the Jetson cluster (the thesis's measurements)")],
    parameter_blocks={"core_types": {"ncnn": "hetsim_papers.nsga2.params:NcnnParams"},
                      "accelerators": {"ncnn": "hetsim_papers.nsga2.params:NcnnParams"}},
    networks="hetsim_papers.nsga2.networks:NETWORKS",
    mapping_formats={"genome": "hetsim_papers.nsga2.encoding:load_genome"},
    experiments="hetsim_papers.nsga2.experiments",
    known_disagreements="known_disagreements.yaml",
    platforms="platforms",
    order=60,
)
