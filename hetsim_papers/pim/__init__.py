"""The PIM partitioning paper (seed 003): transformer graphs on a Zynq board with a PIM unit, placed
by the assembly-line DP over the DCG after low-overhead profiling. docs/papers/pim.md describes the
reproduction."""

from hetsim.plugins import CostModelSpec, ExplorerSpec, Plugin

plugin = Plugin(
    "pim", "PIM partitioning (seed 003)",
    explorers=[
        ExplorerSpec("Priority", "hetsim_papers.pim.explorers:PriorityList", "placement",
                     "ONNX Runtime provider priority list: each op on the first EP of `order` that runs it "
                     "(default: the problem's EPs in order); the paper's CPU_S only is order=[CPU_S]"),
        ExplorerSpec("DUET", "hetsim_papers.pim.explorers:Duet", "placement",
                     "fastest device per op, then a communication-aware correction of the first x of the ops"),
        ExplorerSpec("OPT", "hetsim_papers.pim.explorers:OptimalPartitioning", "placement",
                     "Algorithm 1's profiling runs, then the modified assembly-line DP over the DCG (O(V_d))"),
        ExplorerSpec("OPT-path", "hetsim_papers.pim.explorers:OptimalPartitioning", "placement",
                     "the ALS DP with each predecessor's true device on the path (exact on chains)",
                     fixed={"mode": "path"}),
        ExplorerSpec("MILP", "hetsim_papers.pim.explorers:ExactPartitioning", "placement",
                     "the exact optimum of the sequential model (CP-SAT; HiGHS cross-check)"),
    ],
    cost_models=[CostModelSpec("pim", "hetsim_papers.pim.cost:PimCostModel.for_workload",
                               "the PIM paper's per-op model (Table 2 forms)", needs_workload=True)],
    parameter_blocks={"core_types": {"pim": "hetsim_papers.pim.params:PimCpuParams"},
                      "accelerators": {"pim": "hetsim_papers.pim.params:PimUnitParams"}},
    networks="hetsim_papers.pim.networks:NETWORKS",
    experiments="hetsim_papers.pim.experiments",
    known_disagreements="known_disagreements.yaml",
    platforms="platforms",
    order=40,
)
