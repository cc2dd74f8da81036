"""Paper II, Shisha (Soomro, Abduljabbar, Castrillon, Pericàs), reproduced end to end.

Layers, each reading only the ones above it:

* :mod:`~.paper`: what the paper states, and the tolerances;
* :mod:`~.calibration`: the chiplets fitted to Fig. 4's 0.94 f/s and YOLOv3's 24 min (code, from
  stated inputs); :mod:`~.exhaustive`: the vectorised exhaustive search the fit and Figs. 4-5, 9 use;
* :mod:`~.runs`: the cached simulations and explorations every figure reads (the KNL STREAM model
  itself is :mod:`hetsim.sim.stream`);
* one module per figure or small group, each a function from runs to a table and claims, and a plot
  function: :mod:`~.residuals` (calibration), :mod:`~.seeds`, :mod:`~.knl` (Figs. 1-2),
  :mod:`~.convergence` (Figs. 4-5), :mod:`~.seed_quality` (Fig. 6), :mod:`~.heuristics` (Figs. 7-8),
  :mod:`~.latency` (Fig. 9).

``hetsim reproduce shisha`` runs them; every choice the paper leaves open is listed, one line each
with its parameter, in docs/papers/shisha.md ("Reproduction").
"""

from hetsim.experiment import register_experiments

#: The experiment modules, imported when an experiment runs (listing them needs no extra).
M = "hetsim_papers.shisha.experiments."

register_experiments("shisha", (  # id, title, function, in the scorecard's order
    ("calibration", "Calibration of the chiplets (fit to Fig. 4 and YOLOv3's tuning time)",
     M + "residuals:calibration_experiment"),
    ("seeds", "Algorithm 1: Shisha's seeds", M + "seeds:seeds"),
    ("fig1", "KNL STREAM Triad: DDR only vs MCDRAM cache mode vs data split", M + "knl:fig1"),
    ("fig2", "KNL STREAM Triad: time and parallel cost over thread splits", M + "knl:fig2"),
    ("fig4", "Convergence on SynthNet, 8 EPs (chiplet-c5)", M + "convergence:fig4"),
    ("fig5", "Optimality: throughput normalised to ES, 4 EPs (chiplet-c2)", M + "convergence:fig5"),
    ("fig6", "Shisha seed vs 100 random seeds (ResNet50, YOLOv3, chiplet-c2)", M + "seed_quality:fig6"),
    ("fig7", "Throughput of heuristics H1-H6 on EP configurations C1-C5", M + "heuristics:fig7"),
    ("fig8", "Convergence time of H1 vs H3, normalised per group", M + "heuristics:fig8"),
    ("fig9", "SynthNet throughput vs inter-chiplet latency (chiplet-c5)", M + "latency:fig9"),
))
