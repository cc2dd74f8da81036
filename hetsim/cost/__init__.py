"""Cost models: how long an op takes on an execution place, and a transfer between two."""

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.nsga2 import NcnnCostModel, ThesisCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel

__all__ = [
    "ZERO", "CostModel", "Demand", "DvfsState", "EpRates", "MeasuredCostModel", "NcnnCostModel",
    "RooflineCostModel", "ThesisCostModel", "make_cost_model",
]


def make_cost_model(platform, table=None) -> CostModel:
    """The roofline model, or a measured table when ``table`` (a CSV path) is given."""
    if table is not None:
        return MeasuredCostModel(platform, table)
    return RooflineCostModel(platform)
