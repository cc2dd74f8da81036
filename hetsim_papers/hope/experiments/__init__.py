"""HOPE (Xia, Zhao, Cui, Feng; High Technology Letters 2022; seed 002), reproduced end to end.

Layers, each reading only the ones above it:

* :mod:`~.paper`: what the paper states, and the tolerances;
* :mod:`~.calibration`: the phones fitted to PN-M's 43 ms (CPU) and 183 ms (GPU) on HE, carried
  to LE and ME; μLayer's per-layer synchronisation fitted per phone (Fig. 6);
* :mod:`~.runs`: the cached schedules and simulations every figure reads;
* one module per figure or group, each a function from runs to a table, claims and a plot:
  :mod:`~.residuals` (calibration), :mod:`~.workloads`, :mod:`~.partitioning` (Fig. 1),
  :mod:`~.overall` (Fig. 4), :mod:`~.frequency` (Fig. 5), :mod:`~.mulayer` (Fig. 6),
  :mod:`~.biglittle` (Fig. 7), :mod:`~.ablations`, :mod:`~.times`, :mod:`~.optimality`.

``hetsim reproduce hope`` runs them; docs/papers/hope.md lists every choice the paper leaves
open, one line each with its parameter, and every disagreement with its cause.
"""

from hetsim.experiment import register_experiments

#: The experiment modules, imported when an experiment runs (listing them needs no extra).
M = "hetsim_papers.hope.experiments."

register_experiments("hope", (  # id, title, function, in the scorecard's order
    ("calibration", "Calibration of the phones (PN-M on HE: 43 ms CPU, 183 ms GPU)",
     M + "residuals:calibration_experiment"),
    ("workloads", "The seven graphs: operators, shapes, parallelism", M + "workloads:workloads"),
    ("fig1", "Fig. 1: graph partitioning by upward rank", M + "partitioning:fig1"),
    ("fig4", "Fig. 4: six versions on three phones, normalised to GPU-only", M + "overall:fig4"),
    ("fig5", "Fig. 5: LE at the minimum, medium and maximum CPU frequency", M + "frequency:fig5"),
    ("fig6", "Fig. 6: against μLayer on ARM-CL (one layout)", M + "mulayer:fig6"),
    ("fig7", "Fig. 7: HE big + LITTLE, CPU only", M + "biglittle:fig7"),
    ("ablations", "Ablations: merging, window K, module size NT, cut, StarPU's model, copy lane",
     M + "ablations:ablations"),
    ("times", "Scheduling wall time (GS < 1 s, LP several seconds)", M + "times:times"),
    ("optimality", "Optimality gaps against the exact model on small graphs", M + "optimality:optimality"),
))
