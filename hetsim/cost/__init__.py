"""Cost models: how long an op takes on an execution place, and a transfer between two."""

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.hope import HopeCostModel
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel

__all__ = [
    "COST_MODELS", "ZERO", "CostModel", "Demand", "DvfsState", "EpRates", "HopeCostModel",
    "MeasuredCostModel", "RooflineCostModel", "make_cost_model",
]


#: Cost models by name (``--cost-model``): the roofline, and HOPE's (docs/papers/hope.md).
COST_MODELS = ("roofline", "hope")


def make_cost_model(platform, table=None, model: str = "roofline") -> CostModel:
    """The cost model called ``model`` (:data:`COST_MODELS`), or a measured table when ``table``
    (a CSV path) is given."""
    from hetsim.errors import HetsimError

    if table is not None:
        return MeasuredCostModel(platform, table)
    if model == "hope":
        return HopeCostModel(platform)
    if model != "roofline":
        raise HetsimError(f"cost model {model!r}; allowed: {', '.join(COST_MODELS)}")
    return RooflineCostModel(platform)
