"""Savva's hybrid CNN partitioning thesis (seed 004) reproduced on the simulated Xavier NX cluster.

Layers, each reading only the ones above it:

* :mod:`~.paper`: what the thesis states, and the tolerances;
* :mod:`~.calibration`: the "real" cluster (the DES) fitted to Table 2 (code, from stated inputs);
* :mod:`~.runs`: the cached NSGA-II explorations every figure reads (tuning, search, deployment);
* one module per table or figure group, each a function from runs to a table and claims:
  :mod:`~.table2`, :mod:`~.searchspace` (formulas 4.5/4.6), :mod:`~.e1` (Figs. 12/19/25),
  :mod:`~.e2` (Figs. 13/20/26), :mod:`~.e3` (Figs. 14/21/27 and the Pareto fronts), :mod:`~.e4`
  (Tables 3/5/6, Figs. 15-30), :mod:`~.table4`, :mod:`~.table7`; :mod:`~.plots` draws.

``hetsim reproduce nsga2 [--quick] --out results``; choices are listed in docs/papers/nsga2.md.
"""

from hetsim.experiment import register_experiments

#: The experiment modules, imported when an experiment runs (listing them needs no extra).
M = "hetsim_papers.nsga2.experiments."

register_experiments("nsga2", (  # id, title, function, in the scorecard's order
    ("table2", "Table 2: the CNNs on one CPU device; the DES calibrated to it", M + "table2:table2"),
    ("searchspace", "Search-space sizes: formulas 4.5 and 4.6 (36, 56, 5^56, 9^25)", M + "searchspace:searchspace"),
    ("e1", "E1: convergence on 8 CPUs, naive vs advanced chromosomes (Figs. 12, 19, 25)", M + "e1:e1"),
    ("e2", "E2: convergence on 16 devices, CPUs + GPUs (Figs. 13, 20, 26)", M + "e2:e2"),
    ("e3", "E3: vertical (Split-Point) vs hybrid (Advanced-2), 8 CPUs (Figs. 14, 21, 27)", M + "e3:e3"),
    ("pareto", "Final Pareto fronts: naive, Advanced-2, vertical (model objectives)", M + "e3:pareto"),
    ("e4", "E4: real vs predicted Pareto points (Tables 3, 5, 6; Figs. 15-17, 22-24, 28-30)", M + "e4:e4"),
    ("table4", "Table 4: the Advanced-4 best-latency AlexNet mapping", M + "table4:table4"),
    ("table7", "Table 7: % improvement over the un-partitioned network (real values)", M + "table7:table7"),
))
