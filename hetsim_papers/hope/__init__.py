"""HOPE (seed 002): DAG placement of a network's ops on a phone's CPU clusters and GPU, by node
merging and per-module ILPs, against the DAG schedulers it is compared with (the core's).
docs/papers/hope.md describes the reproduction."""

from hetsim.plugins import CostModelSpec, ExplorerSpec, Plugin

plugin = Plugin(
    "hope", "HOPE (seed 002)",
    # HOPE's baselines (CPU-only, GPU-only, MOSAIC, StarPU-DMDAR, HEFT, muLayer, ILP-exact) are
    # generic DAG schedulers of the core (hetsim.exploration.dag); HOPE's own two are functions of
    # the same tables, made explorers by the core's adapter.
    explorers=[
        ExplorerSpec("HOPE:GS", "hetsim_papers.hope.gs:hope_gs", "placement",
                     "node merging, then a K-op window scheduled by trying every EP assignment"),
        ExplorerSpec("HOPE:LP", "hetsim_papers.hope.lp:hope_lp", "placement",
                     "node merging, partition by upward rank into modules, HOPE's ILP per module (CP-SAT)"),
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
