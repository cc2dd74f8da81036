"""Cost models: how long an op takes on an execution place, and a transfer between two."""

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.composite import CompositeCostModel
from hetsim.cost.hope import HopeCostModel
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.nsga2 import NcnnCostModel, ThesisCostModel
from hetsim.cost.pim import PimCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel

__all__ = [
    "COST_MODELS", "ZERO", "CompositeCostModel", "CostModel", "Demand", "DvfsState", "EpRates",
    "HopeCostModel", "MeasuredCostModel", "NcnnCostModel", "PimCostModel", "RooflineCostModel",
    "ThesisCostModel", "make_cost_model",
]


#: Cost models by name (``--cost-model``, a platform's ``runtime.cost_model``): the roofline, HOPE's
#: (docs/papers/hope.md), the PIM paper's (docs/papers/pim.md) and the ncnn model of the
#: hybrid-partitioning thesis (docs/papers/nsga2.md).
COST_MODELS = ("roofline", "hope", "pim", "ncnn")
#: ``--fallback`` values: the cost models a measured table can fall back on.
FALLBACKS = ("roofline",)


def make_cost_model(platform, table=None, fallback: str | None = None, model: str | None = None,
                    workload=None) -> CostModel:
    """The cost model called ``model`` (:data:`COST_MODELS`: the roofline, HOPE's, the PIM
    paper's or ncnn's; default: the one the platform names, ``runtime.cost_model``); a measured table when
    ``table`` (a CSV path or a directory) is given; that table mixed with the ``fallback`` model for
    the entries it lacks (``"roofline"``: :class:`CompositeCostModel`). The PIM paper's model needs
    the ``workload`` (the Table 2 forms of its ONNX model)."""
    from hetsim.errors import HetsimError

    if model is not None and model not in COST_MODELS:
        raise HetsimError(f"cost model {model!r}; allowed: {', '.join(COST_MODELS)}")
    if fallback is not None and fallback not in FALLBACKS:
        raise HetsimError(f"--fallback {fallback!r}: allowed: {', '.join(FALLBACKS)}")
    if table is None:
        if fallback is not None:
            raise HetsimError("--fallback applies to a measured table: give --cost-table FILE too")
        model = model or platform.runtime.cost_model
        if model == "pim":
            if workload is None:
                raise HetsimError(f"platform {platform.name}: the pim cost model needs the workload "
                                  "(make_cost_model(platform, workload=...))")
            return PimCostModel.for_workload(platform, workload)
        models = {"hope": HopeCostModel, "ncnn": NcnnCostModel, "roofline": RooflineCostModel}
        return models[model](platform)
    measured = MeasuredCostModel(platform, table)
    if fallback is None:
        return measured
    return CompositeCostModel(measured, RooflineCostModel(platform))
