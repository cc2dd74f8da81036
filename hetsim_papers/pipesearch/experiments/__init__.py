"""Paper I (Pipe-search, Soomro et al., CF'21) reproduced on the simulated Jetson TX2.

Layers, each reading only the ones above it:

* :mod:`~.paper`: what the paper states, and the tolerances;
* :mod:`~.calibration`: the TX2's efficiencies fitted to Table 6 (code, from stated inputs);
* :mod:`~.runs`: the cached explorations and measurements every figure reads;
* one module per figure or small group, each a function from runs to a table and claims, and a plot
  function: :mod:`~.vectors`, :mod:`~.residuals` (calibration), :mod:`~.governors` (Fig. 1,
  Table 6), :mod:`~.search` (Tables 3-4), :mod:`~.hints` (Table 5), :mod:`~.synth` (Table 7,
  Fig. 3), :mod:`~.balance` (Fig. 4).

``hetsim reproduce pipesearch [--quick] --out results``; choices are listed in
docs/papers/pipesearch.md ("Reproduction").
"""

from hetsim.experiment import register_experiments

#: The experiment modules, imported when an experiment runs (listing them needs no extra).
M = "hetsim_papers.pipesearch.experiments."

register_experiments("pipesearch", (  # id, title, function, in the scorecard's order
    ("vectors", "Verification vectors (design space, seeds, CVs, ranks)", M + "vectors:vectors"),
    ("calibration", "TX2 calibration: efficiencies fitted to Table 6", M + "residuals:calibration"),
    ("fig1", "VGG16 2-stage T_s of the 10 lowest-CV splits, governors 2 and 3", M + "governors:fig1"),
    ("table3", "VGG16 governor 1: Pipe-search (alpha 10) vs exhaustive search", M + "search:table3"),
    ("table4", "Share of tested configurations per T_s band, VGG16 governor 1", M + "search:table4"),
    ("table5", "Hints vs no hints vs random walk (stop at 0.9 f/s), VGG16 governor 1", M + "hints:table5"),
    ("table6", "VGG16 optimum per governor (Pipe-search, alpha 10)", M + "governors:table6"),
    ("table7", "Pipe-search on Synth 1-3, 6 cores, governors 1 and 3", M + "synth:table7"),
    ("fig3", "Pipe-search timeline on Synth 2, governor 3, alpha 15", M + "synth:fig3"),
    ("fig4", "Stage-time shares, seed vs optimum, ResNet50/AlexNet/VGG16 governor 3", M + "balance:fig4"),
))
