"""The PIM paper's per-op cost model: CPU_S, CPU_P and a Silent-PIM unit (seed 003).

Kim et al. (ACM TODAES 29(2), 2024) run an ONNX Runtime graph one node at a time on three
devices of a Zynq UltraScale+ board: CPU_S (one Cortex-A53, serial kernels), CPU_P (the four
cores, thread-parallel kernels, only for parallelisable op types) and PIM (Silent-PIM, bfloat16,
only the forms of the paper's Table 2). The paper gives no absolute times, only ratios (Fig. 8,
the 1.83x copy asymmetry, Fig. 11's reductions); this model has the shapes the paper describes
(§4.1-4.2, Table 2; the model: docs/papers/pim.md) and takes its constants from the platform's ``pim:`` blocks, which
``hetsim reproduce pim:calibration`` fits from those ratios (hetsim_papers/pim/experiments/calibration.py)::

    cost = PimCostModel.for_workload(platform, workload)        # forms of the paper's zoo model
    cost.op_time(workload.op("encoder.layer.0.attention.query.MatMul"), platform.ep("PIM"))

With ``C`` = the core type's ``pim`` block and ``U`` the PIM unit's, ``E`` an op's output elements
(its input elements for a reduction), ``N x K x M`` (times ``G`` batches) a MatMul/Gemm:

* **CPU_S** (an EP of one core): ``C.op_overhead + t`` with ``t`` =
  ``C.matmul_ns_per_weight · K·M·G + C.matmul_ns_per_mac · N·K·M·G`` for a MatMul (the second
  operand is loaded once, then every row reuses it from cache; Fig. 8(b)), plus
  ``C.elementwise_ns · N·M`` for a Gemm's bias ("Gemm = MM + element-wise add", §4.2);
  ``C.elementwise_ns · E`` for an element-wise or data-movement op (x ``C.function_factor`` for
  Div, Pow, Sqrt, Erf, Tanh, Softmax...; Fig. 8(a): time linear in the size); a view or shape node
  costs the overhead only.
* **CPU_P** (an EP of several cores), op types in ``C.parallel_op_types`` only: ``C.op_overhead +
  parallel overhead + t / parallel speedup`` (fork/join and task granularity: CPU_P is no faster
  than CPU_S on small element-wise ops, Fig. 8(a); near 4x on a MatMul, Fig. 8(b)).
* **PIM**, only the ops of the ``forms`` table (Table 2 rows): ``U.op_overhead +`` for a MatMul
  ``N·K·M /`` the unit's rate (:func:`pim_rate_GMACps`: its ``compute_dtype``'s, bfloat16) (the weight is streamed once per activation row: no reuse, time linear in
  p), for a Gemm that plus the bias add ``U.elementwise_ns · N·M`` and, when the weight must be
  transposed first (Table 2 Gemm (2)), ``U.transpose_ns_per_weight · K·M``; element-wise
  ``U.elementwise_ns · E`` (all element-wise forms of one size cost the same, §4.2).
* **Copies** between a CPU EP and the PIM unit: the CPU converts the n fp32 elements (``n = bytes /
  U.host_bytes_per_element``) to or from bfloat16, then the DMA moves ``w = U.wire_bytes_per_element · n``
  bytes over the route (the ``dma`` link) at its bandwidth, and out of the PIM's uncacheable memory
  ``U.uncacheable_read_ns_per_byte`` more per byte (slower: 1.83x at 64 KB, §2.3):
  ``U.copy_setup + U.conversion_ns_per_element · n + w / bandwidth (+ w · uncacheable_read)``.
  Between two CPU EPs (one memory): ``C.handoff_us`` (default 0: no copy).

Every time is a fixed demand: the numbers are the paper's measured kind, which already contain
what contention the serial execution met.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hetsim.cost.base import CostModel, Demand, DvfsState
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform
from hetsim.workload.ops import VIEW_KINDS, OpKind

if TYPE_CHECKING:
    from hetsim_papers.pim.networks import Table2Form

#: ONNX op types that evaluate a function per element (``function_factor``): no plain add,
#: subtract or multiply. Softmax's exponentials count here, ReduceMean does not.
FUNCTION_OP_TYPES = frozenset({"Div", "Pow", "Sqrt", "Erf", "Tanh", "Exp", "Log", "Softmax",
                               "LogSoftmax", "Sigmoid", "Reciprocal", "Gelu"})

#: The device roles of the paper (§4.1).
SERIAL, PARALLEL, PIM = "serial", "parallel", "pim"


class PimCostModel(CostModel):
    """The PIM paper's cost model (module docstring). ``forms`` maps each PIM-capable op to its
    Table 2 row (:func:`hetsim_papers.pim.networks.table2_forms`); an op without a form is
    not capable on the PIM unit."""

    name = "pim"

    def __init__(self, platform: Platform, forms: Mapping[str, Table2Form] | None = None):
        super().__init__(platform)
        self.forms: dict[str, Table2Form] = dict(forms or {})
        self._roles: dict[ExecutionPlace, tuple[str, Any]] = {}
        self._parallel_types: dict[str, frozenset[str]] = {}

    # -- construction helpers --------------------------------------------------------------
    @classmethod
    def for_onnx(cls, platform: Platform, model) -> PimCostModel:
        """The model for an ONNX model (a ``ModelProto`` or a path): its Table 2 forms."""
        from hetsim.workload.onnx_import import load_onnx
        from hetsim_papers.pim.networks import table2_forms

        proto = load_onnx(model) if not hasattr(model, "graph") else model
        return cls(platform, table2_forms(proto))

    @classmethod
    def for_workload(cls, platform: Platform, workload) -> PimCostModel:
        """The model for a workload generated by hetsim's zoo (``bert-small-p16``, ...): the forms
        of its ONNX model. Another workload needs its ONNX model: :meth:`for_onnx`."""
        from hetsim.workload.networks import generated

        name = workload if isinstance(workload, str) else workload.name
        if name not in generated():
            raise HetsimError(f"workload {name!r}: the PIM cost model ({platform.name}'s runtime.cost_model) "
                              "needs the Table 2 form of every op, read from its ONNX model; allowed: the "
                              "paper's transformers (bert-small-p16, roberta-base-p16, gpt2-p16, any p), "
                              "PimCostModel.for_onnx(platform, 'model.onnx') in Python, --cost-table, or "
                              "--set runtime.cost_model=roofline")
        return cls.for_onnx(platform, generated()[name]())

    # -- roles -----------------------------------------------------------------------------------
    def role(self, ep: ExecutionPlace) -> tuple[str, Any]:
        """(``serial`` | ``parallel`` | ``pim``, the parameter block) of an EP; an EP the model
        cannot cost (an accelerator that is not a PIM unit) is an error."""
        cached = self._roles.get(ep)
        if cached is not None:
            return cached
        p = self.platform
        if ep.accelerator:
            acc = p.accelerator(ep.accelerator)
            if acc.kind != "pim":
                raise HetsimError(f"platform {p.name}: accelerator {acc.name} is a {acc.kind}; the PIM "
                                  "cost model knows CPU clusters and PIM units only")
            out: tuple[str, Any] = (PIM, acc)
        else:
            assert ep.cluster is not None
            block = p.core_type(p.cluster(ep.cluster).core_type).pim
            out = (SERIAL if ep.cores == 1 else PARALLEL, block)
        self._roles[ep] = out
        return out

    def _parallel_op_types(self, block) -> frozenset[str]:
        if block.parallel_op_types is not None:
            return frozenset(block.parallel_op_types)
        from hetsim_papers.pim.networks import CPU_P_OP_TYPES

        return CPU_P_OP_TYPES

    def supports(self, op, ep: ExecutionPlace) -> bool:
        role, block = self.role(ep)
        if role == PIM:
            return op.name in self.forms
        if role == PARALLEL:
            return op.op_type in self._parallel_op_types(block)
        return True

    # -- ops ---------------------------------------------------------------------------------------
    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        return Demand(self._op_s(op, ep), 0.0, 0.0)

    def _op_s(self, op, ep: ExecutionPlace) -> float:
        role, block = self.role(ep)
        if not self.supports(op, ep):
            what = "it has no Table 2 form" if role == PIM else f"{op.op_type or op.kind} is not thread-parallel here"
            raise HetsimError(f"op {op.name} cannot run on {ep.name} ({what})")
        if role == PIM:
            return self._pim_s(op, block)
        variable_ns, is_matmul = _cpu_variable_ns(op, block)
        if role == SERIAL:
            return block.op_overhead_us * 1e-6 + variable_ns * 1e-9
        if is_matmul:
            extra_us, speedup = block.parallel_overhead_matmul_us, block.parallel_speedup_matmul
        else:
            extra_us, speedup = block.parallel_overhead_elementwise_us, block.parallel_speedup_elementwise
        return (block.op_overhead_us + extra_us) * 1e-6 + variable_ns / speedup * 1e-9

    def _pim_s(self, op, acc) -> float:
        u = acc.pim
        form = self.forms[op.name]
        out = _elements(op, op.output_bytes)
        if form.operator in ("Gemm", "MatMul"):
            n, k, m = op.gemm
            groups = op.gemm_groups or 1
            ns = n * k * m * groups / pim_rate_GMACps(acc)    # GMAC/s = MAC per ns
            if form.operator == "Gemm":
                ns += u.elementwise_ns * out                  # the bias add
                if form.row == 2:
                    ns += u.transpose_ns_per_weight * k * m   # (r, q) weight transposed first
        else:
            ns = u.elementwise_ns * out
        return u.op_overhead_us * 1e-6 + ns * 1e-9

    # -- copies --------------------------------------------------------------------------------
    def transfer_time(self, nbytes: float, src: ExecutionPlace, dst: ExecutionPlace) -> float:
        if nbytes <= 0 or src.name == dst.name:
            return 0.0
        (rs, bs), (rd, bd) = self.role(src), self.role(dst)
        if rs == PIM and rd == PIM:
            return super().transfer_time(nbytes, src, dst)
        if rs != PIM and rd != PIM:
            return bs.handoff_us * 1e-6
        unit = (bs if rs == PIM else bd).pim
        n = nbytes / unit.host_bytes_per_element
        wire = unit.wire_bytes_per_element * n
        dma_ns = wire / self.platform.route(src, dst).bandwidth_Bps * 1e9
        if rs == PIM:
            dma_ns += unit.uncacheable_read_ns_per_byte * wire
        return (unit.copy_setup_us * 1e3 + unit.conversion_ns_per_element * n + dma_ns) * 1e-9


def pim_rate_GMACps(acc) -> float:
    """A PIM unit's MAC rate: that of the datatype it computes in (``compute_dtype``: Silent-PIM's
    bfloat16), else its ``peak_GMACps``."""
    listed = acc.precision(acc.compute_dtype) if acc.compute_dtype else None
    rate = listed.peak_GMACps if listed is not None else acc.peak_GMACps
    if rate is None:
        raise HetsimError(f"accelerator {acc.name}: no MAC rate; allowed: peak_GMACps, or compute_dtype "
                          "naming one of its precisions")
    return float(rate)


def _elements(op, nbytes: int) -> int:
    return nbytes // max(op.elem_bytes, 1)


def _cpu_variable_ns(op, block) -> tuple[float, bool]:
    """One core's time of ``op`` beyond the dispatch overhead, ns, and whether it is a MatMul."""
    if op.kind in VIEW_KINDS:
        return 0.0, False
    if op.kind in (OpKind.MATMUL, OpKind.FC) and op.gemm is not None:   # an fc: Gemm on one row
        n, k, m = op.gemm
        groups = op.gemm_groups or 1
        ns = block.matmul_ns_per_weight * k * m * groups + block.matmul_ns_per_mac * n * k * m * groups
        if op.op_type == "Gemm":
            ns += block.elementwise_ns * n * m * groups           # the bias add
        return ns, True
    elements = _elements(op, op.input_bytes if op.kind == OpKind.REDUCE else op.output_bytes)
    factor = block.function_factor if op.op_type in FUNCTION_OP_TYPES else 1.0
    return block.elementwise_ns * elements * factor, False


def table2_row(form) -> str:
    """'Gemm (2)' etc.: how the paper names a Table 2 row."""
    return f"{form.operator} ({form.row})"


__all__ = ["FUNCTION_OP_TYPES", "PimCostModel", "pim_rate_GMACps", "table2_row"]
