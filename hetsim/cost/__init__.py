"""Cost models: how long an op takes on an execution place, and a transfer between two."""

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.composite import CompositeCostModel
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel

__all__ = [
    "ZERO", "CompositeCostModel", "CostModel", "Demand", "DvfsState", "EpRates", "MeasuredCostModel", "RooflineCostModel",
    "make_cost_model",
]


#: ``--fallback`` values: the cost models a measured table can fall back on.
FALLBACKS = ("roofline",)


def make_cost_model(platform, table=None, fallback: str | None = None) -> CostModel:
    """The roofline model; a measured table when ``table`` (a CSV path or a directory) is given;
    that table mixed with the ``fallback`` model for the entries it lacks (``"roofline"``:
    :class:`CompositeCostModel`)."""
    from hetsim.errors import HetsimError

    if fallback is not None and fallback not in FALLBACKS:
        raise HetsimError(f"--fallback {fallback!r}: allowed: {', '.join(FALLBACKS)}")
    if table is None:
        if fallback is not None:
            raise HetsimError("--fallback applies to a measured table: give --cost-table FILE too")
        return RooflineCostModel(platform)
    measured = MeasuredCostModel(platform, table)
    if fallback is None:
        return measured
    return CompositeCostModel(measured, RooflineCostModel(platform))
