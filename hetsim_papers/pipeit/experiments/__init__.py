"""Pipe-it (Wang et al., IEEE TCAD 2019): CNN pipelines on big.LITTLE.

Every number comes out of hetsim: the ground truth (hetsim_papers/pipeit/cost.py) fitted to Table IV's
Big-only and Small-only columns plays the HiKey 970, Pipe-it's predictor (eqs. 5-8) is fitted on
micro-benchmarks "run" on it, Algorithms 1-3 (hetsim_papers/pipeit/pipeit.py) choose pipelines from the
measured and the predicted T matrices, and the SimPy engine streams 50 frames through each pipeline.
Table VII is held back from the fit. Layers, each reading only the ones above it:

* :mod:`~.paper`: what the paper states;
* :mod:`~.calibration`: the ground truth, power and kernel-level fits (code, from stated inputs);
* :mod:`~.runs`: the cached board, predictor, designs and DES streams every figure reads;
* one module per table or figure group, each a function from runs to a table and claims, and a plot
  function: :mod:`~.layers` (Table I), :mod:`~.residuals` (calibration), :mod:`~.prediction`
  (Table III), :mod:`~.throughput` (Tables IV, VII), :mod:`~.configurations` (Tables V, VI),
  :mod:`~.power` (Table VIII), :mod:`~.kernel_level` (Figs. 3, 5), :mod:`~.layer_types` (Fig. 6),
  :mod:`~.splits` (Figs. 8, 9), :mod:`~.speedup` (Fig. 12).

Claims the simulator does not reproduce stay in the scorecard as failures; the ones understood are
listed with their cause in hetsim/experiments/known_disagreements.yaml and explained in
docs/papers/pipeit.md, with every choice the paper leaves open.
"""

from hetsim.experiment import register_experiments

#: The experiment modules, imported when an experiment runs (listing them needs no extra).
M = "hetsim_papers.pipeit.experiments."

register_experiments("pipeit", (  # id, title, function, in the scorecard's order
    ("table1", "Table I: major layers per CNN, and the design-space counts of eqs. 1-2", M + "layers:table1"),
    ("calibration", "Ground truth fitted to Table IV's Big-only and Small-only columns", M + "residuals:calibration"),
    ("table3", "Table III: per-layer prediction error of eqs. 5-8", M + "prediction:table3"),
    ("table4", "Table IV: Big, Small and Pipe-it throughput (50-image streams)", M + "throughput:table4"),
    ("table5", "Table V: Pipe-it configurations from predicted layer times", M + "configurations:table5"),
    ("table6", "Table VI: Pipe-it configurations from measured layer times", M + "configurations:table6"),
    ("table7", "Table VII: 3 Big + 2 Small cores (held back from the calibration)", M + "throughput:table7"),
    ("table8", "Table VIII: active power and energy efficiency", M + "power:table8"),
    ("fig3", "Fig. 3: kernel-level throughput as cores are added (B1..B4, then B4+s1..s4)", M + "kernel_level:fig3"),
    ("fig5", "Fig. 5: kernel-level B4+s4 with an uneven share of every kernel on Small", M + "kernel_level:fig5"),
    ("fig6", "Fig. 6: share of the B4 forward pass by layer type", M + "layer_types:fig6"),
    ("fig8", "Fig. 8: B4-s4 throughput against the split ratio X/W", M + "splits:fig8"),
    ("fig9", "Fig. 9: ResNet50 B4-s2-s2 throughput over both split points", M + "splits:fig9"),
    ("fig12", "Fig. 12: speedup of AlexNet's conv layers with 1-4 Big / 1-4 Small cores", M + "speedup:fig12"),
))
