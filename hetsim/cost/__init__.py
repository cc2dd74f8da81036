"""Cost models: how long an op takes on an execution place, and a transfer between two."""

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.gemm2 import Gemm2CostModel
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel
from hetsim.errors import HetsimError

__all__ = [
    "COST_MODELS", "ZERO", "CostModel", "Demand", "DvfsState", "EpRates", "Gemm2CostModel",
    "MeasuredCostModel", "RooflineCostModel", "make_cost_model",
]

#: The analytic cost models a platform's parameter blocks feed, by the name ``--cost`` takes.
COST_MODELS = {"roofline": RooflineCostModel, "gemm2": Gemm2CostModel}


def make_cost_model(platform, table=None, model: str = "roofline") -> CostModel:
    """A measured table when ``table`` (a CSV path or directory) is given, else the analytic model
    ``model`` (a key of :data:`COST_MODELS`)."""
    if table is not None:
        return MeasuredCostModel(platform, table)
    try:
        return COST_MODELS[model](platform)
    except KeyError:
        raise HetsimError(f"cost model {model!r}: allowed: {', '.join(COST_MODELS)}") from None
