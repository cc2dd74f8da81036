"""Cost models: how long an op takes on an execution place, and a transfer between two."""

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.composite import CompositeCostModel
from hetsim.cost.gemm2 import Gemm2CostModel
from hetsim.cost.hope import HopeCostModel
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.nsga2 import NcnnCostModel, ThesisCostModel
from hetsim.cost.pim import PimCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel
from hetsim.platform.schema import COST_MODELS, FALLBACK_COST_MODELS

__all__ = [
    "COST_MODELS", "ZERO", "CompositeCostModel", "CostModel", "Demand", "DvfsState", "EpRates",
    "Gemm2CostModel", "HopeCostModel", "MeasuredCostModel", "NcnnCostModel", "PimCostModel",
    "RooflineCostModel", "ThesisCostModel", "make_cost_model",
]

#: ``--fallback`` values (hetsim.platform.schema.FALLBACK_COST_MODELS).
FALLBACKS = FALLBACK_COST_MODELS

#: The cost models built from the platform alone, by name (every name of COST_MODELS but "pim").
_BY_PLATFORM: dict[str, type[CostModel]] = {
    "roofline": RooflineCostModel, "hope": HopeCostModel, "ncnn": NcnnCostModel, "gemm2": Gemm2CostModel,
}


def make_cost_model(platform, table=None, fallback: str | None = None, model: str | None = None,
                    workload=None) -> CostModel:
    """The cost model called ``model`` (:data:`COST_MODELS`, the one registry of names: the
    roofline, HOPE's, the PIM paper's, ncnn's or gemm2; default: the one the platform names,
    ``runtime.cost_model``); a measured table when ``table`` (a CSV path or a directory) is given;
    that table mixed with the ``fallback`` model (:data:`FALLBACKS`) for the entries it lacks
    (:class:`CompositeCostModel`). The PIM paper's model needs the ``workload`` (the Table 2 forms
    of its ONNX model)."""
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
        return _BY_PLATFORM[model](platform)
    measured = MeasuredCostModel(platform, table)
    if fallback is None:
        return measured
    return CompositeCostModel(measured, _BY_PLATFORM[fallback](platform))
