"""The cached models, problems and scheme runs every PIM figure reads (seed 003).

A *model* is one of the paper's three transformers (``bert-small``, ``roberta-base``, ``gpt2``) at a
sequence length p; its problem is the placement problem on pim-zynq's three devices with the
paper's executor (the platform's ``runtime``: one op at a time, copies before the op that needs
them, one copy per tensor and memory space) and the PIM cost model with the model's Table 2 forms.
The seven schemes of §4.3 are the registered explorers, run through :func:`hetsim.exploration.explore`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hetsim.evaluation import DagOptions
from hetsim.exploration import Exploration, PlacementProblem, explore, make_explorer
from hetsim.platform import Platform, load_platform
from hetsim_papers.pim.cost import PimCostModel
from hetsim_papers.pim.dcg import Dcg
from hetsim_papers.pim.dp import als_dp
from hetsim_papers.pim.duet import duet
from hetsim_papers.pim.profiling import priority_assignment

PLATFORM = "pim-zynq"
DEVICES = ("CPU_S", "CPU_P", "PIM")
MODELS = {"bert-small": "BERT", "roberta-base": "RoBERTa", "gpt2": "GPT-2"}
SEQUENCE_LENGTHS = (8, 16, 32, 64)
#: The quick versions' sequence lengths: the ends of the range, where every Fig. 9 range has its ends
#: (OPT's gains shrink monotonically with p).
QUICK_LENGTHS = (8, 64)

#: The seven schemes of §4.3, label -> (registered explorer, its parameters).
SCHEMES: dict[str, tuple[str, dict]] = {
    "CPU_S only": ("Priority", {"order": ("CPU_S",)}),
    "(CPU_P,PIM,CPU_S)": ("Priority", {"order": ("CPU_P", "PIM", "CPU_S")}),
    "(PIM,CPU_P,CPU_S)": ("Priority", {"order": ("PIM", "CPU_P", "CPU_S")}),
    "DUET(x=0%)": ("DUET", {"x": 0.0}),
    "DUET(x=25%)": ("DUET", {"x": 0.25}),
    "DUET(x=50%)": ("DUET", {"x": 0.5}),
    "OPT": ("OPT", {}),
}


# -- models ------------------------------------------------------------------------------------------
@lru_cache(maxsize=32)
def onnx_model(model: str, p: int):
    from hetsim.workload.networks import generated

    return generated()[f"{model}-p{p}"]()


@lru_cache(maxsize=32)
def workload(model: str, p: int):
    from hetsim.workload.onnx_import import workload_from_onnx

    return workload_from_onnx(onnx_model(model, p))


@lru_cache(maxsize=32)
def forms(model: str, p: int):
    from hetsim_papers.pim.networks import table2_forms

    return table2_forms(onnx_model(model, p))


@lru_cache(maxsize=8)
def platform(overrides: tuple[str, ...] = ()) -> Platform:
    """pim-zynq as shipped (its ``[fit]`` values are the calibration's), or with overrides."""
    return load_platform(PLATFORM, list(overrides))


def make_problem(model: str, p: int, plat: Platform) -> PlacementProblem:
    cost = PimCostModel(plat, forms(model, p))
    return PlacementProblem(plat, workload(model, p), cost, eps=list(DEVICES), dag=DagOptions.for_platform(plat))


@lru_cache(maxsize=64)
def _problem(model: str, p: int, overrides: tuple[str, ...]) -> PlacementProblem:
    return make_problem(model, p, platform(overrides))


def problem(model: str, p: int, overrides: tuple[str, ...] = ()) -> PlacementProblem:
    return _problem(model, p, tuple(overrides))


def _dcg(model: str, p: int, overrides: tuple[str, ...]) -> Dcg:
    from hetsim_papers.pim.explorers import dcg_of

    return dcg_of(problem(model, p, overrides))


def dcg(model: str, p: int, overrides: tuple[str, ...] = ()) -> Dcg:
    return _dcg(model, p, tuple(overrides))


def problem_dcg(model: str, p: int, plat: Platform) -> Dcg:
    """The DCG of a model on a given platform object (not cached: the calibration's search)."""
    return Dcg.from_problem(make_problem(model, p, plat))


# -- schemes ------------------------------------------------------------------------------------------
def scheme_assignment(g: Dcg, scheme: str) -> np.ndarray:
    """The device of every op under a scheme, computed on the DCG directly (what the explorers
    do, without measuring: the calibration's inner loop)."""
    index = {d: i for i, d in enumerate(g.devices)}
    if scheme == "CPU_S only":
        return priority_assignment(g, [index["CPU_S"]])
    if scheme.startswith("(") and scheme.endswith(")"):
        return priority_assignment(g, [index[d] for d in scheme[1:-1].split(",")])
    if scheme.startswith("DUET(x="):
        return duet(g, float(scheme[len("DUET(x="):-2]) / 100)
    if scheme in ("OPT", "OPT-path"):
        return als_dp(g, "paper" if scheme == "OPT" else "path").assignment
    raise KeyError(scheme)


@dataclass(frozen=True)
class SchemeRun:
    model: str
    p: int
    scheme: str
    latency_s: float
    compute_s: float
    transfer_s: float
    exploration: Exploration

    @property
    def assignment(self) -> dict[str, str]:
        best = self.exploration.best
        return {op: ep.name for op, ep in best.ep_of.items()}


@lru_cache(maxsize=512)
def run_scheme(model: str, p: int, scheme: str, overrides: tuple[str, ...] = ()) -> SchemeRun:
    """One scheme of §4.3 on one model, as its registered explorer, measured by the DAG engine's
    serial executor (latency, and the compute / transfer breakdown of Fig. 11)."""
    name, params = SCHEMES[scheme]
    prob = problem(model, p, overrides)
    result = explore(prob, make_explorer(name, **params), seed=0)
    m = result.best_result.metrics
    return SchemeRun(model, p, scheme, result.best_value, m.task_time_s["compute"],
                     m.task_time_s["transfer"], result)


# -- Fig. 8's two operators ----------------------------------------------------------------------
@lru_cache(maxsize=16)
def _fig8_model(p: int):
    from hetsim.workload.onnx_graph import OnnxGraph
    from hetsim.workload.onnx_import import workload_from_onnx
    from hetsim_papers.pim.networks import Table2Form

    g = OnnxGraph(f"fig8-p{p}")
    x = g.input("x", (1, p, 512))
    y = g.input("y", (1, p, 512))
    add = g.add(x, y, name="elementwise")
    mm = g.matmul(x, g.weight("w", (512, 512)), name="matmul")
    w = workload_from_onnx(g.model(add, mm))
    forms = {"elementwise": Table2Form("Element-wise", 1, None, 512), "matmul": Table2Form("MatMul", 1, 512, 512)}
    return w, forms


def fig8_ops(p: int, plat: Platform):
    """The cost model and Fig. 8's operators (p x 512) + (p x 512) and (p x 512) x (512 x 512)."""
    w, f = _fig8_model(p)
    return PimCostModel(plat, f), {name: w.op(name) for name in f}
