"""Cost models: how long an op takes on an execution place, and a transfer between two."""

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.pim import PimCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel

__all__ = [
    "ZERO", "CostModel", "Demand", "DvfsState", "EpRates", "MeasuredCostModel", "PimCostModel",
    "RooflineCostModel", "make_cost_model",
]


def make_cost_model(platform, table=None, workload=None) -> CostModel:
    """A measured table when ``table`` (a CSV path) is given; otherwise the cost model the platform
    names (``runtime.cost_model``): the roofline, or the PIM paper's model, which needs the
    ``workload`` (the Table 2 forms of its ONNX model)."""
    if table is not None:
        return MeasuredCostModel(platform, table)
    if platform.runtime.cost_model == "pim":
        if workload is None:
            from hetsim.errors import HetsimError

            raise HetsimError(f"platform {platform.name}: its cost model (pim) needs the workload "
                              "(make_cost_model(platform, workload=...))")
        return PimCostModel.for_workload(platform, workload)
    return RooflineCostModel(platform)
