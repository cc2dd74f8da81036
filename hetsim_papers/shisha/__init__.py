"""Shisha (Paper II of seed 000): pipelines on chiplet multi-cores (gem5's C1-C5 systems, a KNL),
a seed by layer merging tuned by moving layers out of the slowest stage.
docs/papers/shisha.md describes the reproduction."""

from hetsim.plugins import ExplorerSpec, Plugin

plugin = Plugin(
    "shisha", "Shisha (seed 000, Paper II)",
    explorers=[
        ExplorerSpec("Shisha", "hetsim_papers.shisha.shisha:Shisha", "pipeline",
                     "seed by merging light layers and ranking EPs, then move layers out of the slowest stage"),
        ExplorerSpec("HC_s", "hetsim.exploration.baselines:HillClimbing", "pipeline",
                     "hill climbing started from Shisha's seed", paper="baseline (Paper II)",
                     fixed={"start": "shisha"}),
        ExplorerSpec("SA_s", "hetsim.exploration.baselines:SimulatedAnnealing", "pipeline",
                     "simulated annealing started from Shisha's seed", paper="baseline (Paper II)",
                     fixed={"start": "shisha"}),
    ],
    start_points={"shisha": "hetsim_papers.shisha.shisha:SHISHA_START"},
    experiments="hetsim_papers.shisha.experiments",
    known_disagreements="known_disagreements.yaml",
    platforms="platforms",
    order=20,
)
