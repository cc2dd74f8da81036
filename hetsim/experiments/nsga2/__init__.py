"""Savva's hybrid CNN partitioning thesis (seed 004) reproduced on the simulated Xavier NX cluster.

    hetsim reproduce nsga2 [--quick] --out results

One module per table or figure: ``table2`` (the workloads and the DES calibrated to Table 2),
``searchspace`` (formulas 4.5/4.6), ``e1`` .. ``e4`` (Figs. 12-30, Tables 3/5/6), ``e3fronts``,
``table4``, ``table7``. :mod:`.runs` holds the cached NSGA-II runs they share, :mod:`.calibration`
the fit. Choices are listed in docs/papers/nsga2.md.
"""

from hetsim.experiments.nsga2 import (  # noqa: F401  (each registers its experiments)
    e1,
    e2,
    e3,
    e4,
    searchspace,
    table2,
    table4,
    table7,
)
