"""Cost models: how long an op takes on an execution place, and a transfer between two.

hetsim's own are the roofline (the default) and gemm2; a measured table (CSV, or imported from
ONNX Runtime profiles) replaces them where it has entries. Plugins add theirs
(:class:`hetsim.plugins.CostModelSpec`); :func:`cost_model_names` lists every one installed.
"""

from hetsim import plugins as _plugins
from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.composite import CompositeCostModel
from hetsim.cost.gemm2 import Gemm2CostModel
from hetsim.cost.measured import MeasuredCostModel
from hetsim.cost.roofline import EpRates, RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.plugins import cost_model_specs, resolve

__all__ = [
    "ZERO", "CompositeCostModel", "CostModel", "Demand", "DvfsState", "EpRates", "Gemm2CostModel",
    "MeasuredCostModel", "RooflineCostModel", "cost_model_names", "fallback_names", "link_note",
    "make_cost_model",
]


# Every cost model by name, and those a measured table can fall back on (hetsim.plugins: the
# command line's choices read them without importing the models).
cost_model_names, fallback_names = _plugins.cost_model_names, _plugins.fallback_names


def link_note(cost: CostModel) -> str | None:
    """One line when a measured table's transfers fell back to the platform's links for a direction
    it never measured (:meth:`MeasuredCostModel.fallback_note`); None otherwise."""
    note = getattr(cost, "fallback_note", None)
    return note() if callable(note) else None


def peak_note(platform, cost: CostModel) -> str | None:
    """A note when ``cost`` prices some of the platform's EPs from peak rates alone (their blocks of
    its parametric model left out: :func:`hetsim.platform.plausibility.at_peak`); None otherwise or
    for a measured table (the fallback of a mixed one is checked)."""
    from hetsim.platform.plausibility import peak_note as note

    model = cost.fallback if isinstance(cost, CompositeCostModel) else cost
    if isinstance(model, MeasuredCostModel):
        return None
    return note(platform, model.name)


def make_cost_model(platform, table=None, fallback: str | None = None, model: str | None = None,
                    workload=None) -> CostModel:
    """The cost model called ``model`` (:func:`cost_model_names`; default: the one the platform
    names, ``runtime.cost_model``); a measured table when ``table`` (a CSV path or a directory) is
    given; that table mixed with the ``fallback`` model (:func:`fallback_names`) for the entries it
    lacks (:class:`CompositeCostModel`). A model that needs the ``workload`` (the PIM paper's Table 2
    forms of its ONNX model) gets it."""
    specs = cost_model_specs()
    if model is not None and model not in specs:
        raise HetsimError(f"cost model {model!r}; allowed: {', '.join(specs)}")
    if fallback is not None and fallback not in fallback_names():
        raise HetsimError(f"--fallback {fallback!r}: allowed: {', '.join(fallback_names())}")
    if table is None:
        if fallback is not None:
            raise HetsimError("--fallback applies to a measured table: give --cost-table FILE too")
        spec = specs[model or platform.runtime.cost_model]
        if spec.needs_workload:
            if workload is None:
                raise HetsimError(f"platform {platform.name}: the {spec.name} cost model needs the workload "
                                  "(make_cost_model(platform, workload=...))")
            return resolve(spec.factory)(platform, workload)
        return resolve(spec.factory)(platform)
    measured = MeasuredCostModel(platform, table)
    if fallback is None:
        return measured
    return CompositeCostModel(measured, resolve(specs[fallback].factory)(platform))
