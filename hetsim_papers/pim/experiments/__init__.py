"""The PIM partitioning paper (seed 003: Kim et al., ACM TODAES 29(2), 2024) reproduced on pim-zynq.

Layers, each reading only the ones above it:

* :mod:`~.paper`: what the paper states, and the tolerances;
* :mod:`~.calibration`: pim-zynq's PIM cost model fitted to Fig. 8, the 1.83x copy ratio and
  Fig. 11 (code, from stated inputs; written into hetsim_papers/pim/platforms/pim-zynq.yaml);
* :mod:`~.runs`: the cached models, problems and scheme explorations every figure reads;
* one module per figure group, each a function from runs to a table and claims, and a plot
  function: :mod:`~.operators` (calibration, Fig. 8), :mod:`~.counts` (Tables 1 and 3, Fig. 5),
  :mod:`~.schemes` (Figs. 9 and 11), :mod:`~.maps` (Figs. 10 and 12), :mod:`~.optimality`
  (Fig. 13, OPT against the exact optimum), :mod:`~.sensitivity` (the choices the paper leaves open).

``hetsim reproduce pim [--quick] --out results``; choices are listed in docs/papers/pim.md.
"""

from hetsim.experiment import register_experiments
from hetsim_papers.pim.experiments.paper import PAPER

#: The experiment modules, imported when an experiment runs (listing them needs no extra).
M = "hetsim_papers.pim.experiments."

register_experiments(PAPER, (  # id, title, function, in the scorecard's order
    ("calibration", "pim-zynq calibration: the PIM cost model fitted to Fig. 8, 1.83x and Fig. 11", M + "operators:calibration"),
    ("fig8", "Operator speedups of CPU_P and PIM over CPU_S, p = 8..64", M + "operators:fig8"),
    ("table1", "DCG edges and DA edges with two devices (CPU_S, PIM)", M + "counts:table1"),
    ("table3", "DCG sizes, DA edges, profiling runs and algorithm times, three devices", M + "counts:table3"),
    ("fig5", "The edge-profiling sweep on the paper's example graph", M + "counts:fig5"),
    ("fig9", "End-to-end time and speedup of the seven schemes, 3 models x p = 8..64", M + "schemes:fig9"),
    ("fig10", "Device maps of BERT and RoBERTa, (PIM,CPU_P,CPU_S) vs OPT, p = 16", M + "maps:fig10"),
    ("fig11", "Computation vs data-transfer time, p = 16", M + "schemes:fig11"),
    ("fig12", "Device map of GPT-2, (PIM,CPU_P,CPU_S) vs OPT, p = 16", M + "maps:fig12"),
    ("fig13", "Every execution path of 15-node windows, OPT's marked", M + "optimality:fig13"),
    ("optimality", "OPT and the path-aware DP against the exact optimum (CP-SAT, HiGHS)", M + "optimality:optimality"),
    ("sensitivity", "Headline numbers vs the copy scale, Fig. 8(a)'s order, copy counting", M + "sensitivity:sensitivity"),
))
