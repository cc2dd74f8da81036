"""Pipe-it (seed 001: Wang et al., IEEE TCAD 2019): CNN pipelines on the HiKey 970's big.LITTLE
clusters, designed from a per-layer time predictor. docs/papers/pipeit.md describes the reproduction."""

from hetsim.plugins import ExplorerSpec, Plugin

plugin = Plugin(
    "pipeit", "Pipe-it (seed 001)",
    explorers=[
        ExplorerSpec("Pipe-it", "hetsim_papers.pipeit.pipeit:PipeIt", "pipeline",
                     "design time: merge single-core stages while eq. 12 holds (Alg. 3), layers by work flow "
                     "(Alg. 2/1) on T; one trial"),
        ExplorerSpec("Pipe-it-A2", "hetsim_papers.pipeit.pipeit:PipeItA2", "pipeline",
                     "design time: work flow (Alg. 2/1) on every EP assignment, the best by eq. 11 on T; one trial"),
    ],
    parameter_blocks={"core_types": {"pipeit": "hetsim_papers.pipeit.params:PipeitCoreParams"}},
    experiments="hetsim_papers.pipeit.experiments",
    known_disagreements="known_disagreements.yaml",
    order=30,
)
