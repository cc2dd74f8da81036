"""Cost models: how long an op takes on an execution place, and a transfer between two."""

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.nsga2 import NcnnCostModel, ThesisCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel

__all__ = [
    "ZERO", "CostModel", "Demand", "DvfsState", "EpRates", "MeasuredCostModel", "NcnnCostModel",
    "RooflineCostModel", "ThesisCostModel", "COST_MODELS", "make_cost_model",
]


#: Cost models a command line can name (``--cost-model``): they need only the platform.
COST_MODELS = {"roofline": RooflineCostModel, "ncnn": NcnnCostModel}


def make_cost_model(platform, table=None, model: str = "roofline") -> CostModel:
    """The roofline model (or another of :data:`COST_MODELS` by name), or a measured table when
    ``table`` (a CSV path) is given."""
    if table is not None:
        return MeasuredCostModel(platform, table)
    if model not in COST_MODELS:
        from hetsim.errors import HetsimError

        raise HetsimError(f"cost model {model!r}; allowed: {', '.join(COST_MODELS)}")
    return COST_MODELS[model](platform)
