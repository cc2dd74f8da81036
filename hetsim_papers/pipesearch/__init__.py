"""Pipe-search (Paper I of seed 000: Soomro, Abduljabbar, Castrillon, Pericàs, CF'21): pipelines of
a CNN on the Jetson TX2, searched by walking a database of splits sorted by balance.
docs/papers/pipesearch.md describes the reproduction."""

from hetsim.plugins import ExplorerSpec, Plugin

plugin = Plugin(
    "pipesearch", "Pipe-search (seed 000, Paper I)",
    explorers=[
        ExplorerSpec("PS", "hetsim_papers.pipesearch.pipesearch:PipeSearch", "pipeline",
                     "walk the CV-sorted configuration database, then tune around the best"),
        ExplorerSpec("PS-nohints", "hetsim_papers.pipesearch.pipesearch:PipeSearch", "pipeline",
                     "Pipe-search with unit layer weights instead of the compile-time hints",
                     fixed={"hints": False}),
    ],
    experiments="hetsim_papers.pipesearch.experiments",
    known_disagreements="known_disagreements.yaml",
    order=10,
)
