"""The tournament: every registered explorer on the same platforms, workloads and budget, as a sweep
(``hetsim reproduce tournament``, ``hetsim sweep tournament``)."""

from hetsim.plugins import Plugin

plugin = Plugin(
    "tournament", "every algorithm side by side",
    sweep_reports={"tournament": "hetsim_papers.tournament.tournament:write_report"},
    experiments="hetsim_papers.tournament.tournament",
    sweeps="sweeps",
    order=90,
)
