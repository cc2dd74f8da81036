"""The example plugin (docs/extending.md): what a seventh paper adds to hetsim, without touching it.

* an explorer, ``RRHC`` (:mod:`hetsim_example.restarts`): hill climbing restarted from random
  pipelines;
* a cost model, ``sustained`` (:mod:`hetsim_example.cost`), with its own parameter block
  ``core_types[].sustained`` of a platform YAML (:mod:`hetsim_example.params`);
* a platform, ``rk3588-fanless`` (``platforms/``), that selects that cost model;
* an experiment with claims, ``hetsim reproduce example`` (:mod:`hetsim_example.experiments`),
  and the claims it is known to fail (``known_disagreements.yaml``).

Everything is named by ``"module:attribute"`` strings, imported only when used: listing what exists
(``hetsim explore --help``) imports this file and nothing else of the package.
"""

from hetsim.plugins import CostModelSpec, ExplorerSpec, Plugin

plugin = Plugin(
    "example", "Example plugin (docs/extending.md)",
    explorers=[
        ExplorerSpec("RRHC", "hetsim_example.restarts:RandomRestartHillClimbing", "pipeline",
                     "hill climbing restarted from random pipelines; the best of every climb"),
    ],
    cost_models=[
        CostModelSpec("sustained", "hetsim_example.cost:SustainedClockCostModel",
                      "the roofline at the clocks a core type sustains under load (core_types[].sustained)",
                      fallback=True),
    ],
    parameter_blocks={"core_types": {"sustained": "hetsim_example.params:SustainedClockParams"}},
    experiments="hetsim_example.experiments",
    known_disagreements="known_disagreements.yaml",
    platforms="platforms",
    order=150,
)
