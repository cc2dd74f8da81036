"""HOPE (seed 002): DAG placement of a network's ops on a phone's CPU clusters and GPU, by node
merging and per-module ILPs, against the DAG schedulers it is compared with.
docs/papers/hope.md describes the reproduction."""

from hetsim.plugins import CostModelSpec, ExplorerSpec, Plugin

_E = "hetsim_papers.hope.explorers"
plugin = Plugin(
    "hope", "HOPE (seed 002)",
    explorers=[
        ExplorerSpec("CPU-only", f"{_E}:SingleDevice", "placement",
                     "every op on the first CPU cluster, one at a time", paper="baseline (HOPE Fig. 4)",
                     fixed={"device": "cpu"}),
        ExplorerSpec("GPU-only", f"{_E}:SingleDevice", "placement",
                     "every op on the first accelerator, the ones it cannot run on the CPU",
                     paper="baseline (HOPE Fig. 4)", fixed={"device": "gpu"}),
        ExplorerSpec("MOSAIC", f"{_E}:Mosaic", "placement",
                     "linear slicing of the topological order by dynamic programming, slices one after another",
                     paper="baseline (HOPE Fig. 4: Han et al., PACT 2019)"),
        ExplorerSpec("StarPU-DMDAR", f"{_E}:StarPU", "placement",
                     "each ready op to the EP where it ends first, with exact cost tables",
                     paper="baseline (HOPE Fig. 4: StarPU's dmdar policy)"),
        ExplorerSpec("HEFT", f"{_E}:Heft", "placement",
                     "upward-rank list scheduling with insertion-based earliest finish time",
                     paper="baseline (Topcuoglu et al., TPDS 2002)"),
        ExplorerSpec("HOPE:GS", f"{_E}:HopeGS", "placement",
                     "node merging, then a K-op window scheduled by trying every EP assignment"),
        ExplorerSpec("HOPE:LP", f"{_E}:HopeLP", "placement",
                     "node merging, partition by upward rank into modules, HOPE's ILP per module (CP-SAT)"),
        ExplorerSpec("muLayer", f"{_E}:MuLayer", "placement",
                     "layer by layer, each compute op's channels split between CPU and GPU",
                     paper="baseline (HOPE Fig. 6: Kim et al., EuroSys 2019)"),
        ExplorerSpec("ILP-exact", f"{_E}:ExactILP", "placement",
                     "optimal plan of a small whole graph under the engine's rules, with its lower bound",
                     paper="baseline (exact, CP-SAT)"),
    ],
    cost_models=[CostModelSpec("hope", "hetsim_papers.hope.cost:HopeCostModel",
                               "HOPE's per-op model of the phones (clock scaling, hand-off costs)")],
    parameter_blocks={"core_types": {"hope": "hetsim_papers.hope.params:HopeCoreParams"},
                      "accelerators": {"hope": "hetsim_papers.hope.params:HopeAcceleratorParams"}},
    networks="hetsim_papers.hope.networks:NETWORKS",
    experiments="hetsim_papers.hope.experiments",
    known_disagreements="known_disagreements.yaml",
    platforms="platforms",
    order=50,
)
