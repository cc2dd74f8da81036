"""Platform description: pydantic models of the YAML files in ``platforms/``.

Concerns are split the way ASTRA-sim / Timeloop split hardware configs: memories, core types (with
their DVFS levels), clusters (cores of one type sharing a memory port), accelerators, links and
devices. Units are in the key names (``bandwidth_GBps``, ``latency_ns``, ``freq_MHz``). The
``schema`` key versions the format. A core type or accelerator holds hardware facts at the top and
each cost model's fitted parameters in its own block (``roofline:``, ``gemm2:``, and the blocks
plugins add; :mod:`hetsim.platform.params`).

Example::

    platform = load_platform("hikey970")
    platform.ep("B4")          # 4 cores of the cluster whose symbol is B
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from hetsim.bounds import (
    Bandwidth_GBps,
    Count,
    Cycles,
    Energy_pJ_per_byte,
    Fraction,
    Freq_MHz,
    Latency_ns,
    LossPerFlow,
    MacsPerCycle,
    OptBandwidth_GBps,
    OptCache_KiB,
    OptCapacity_GiB,
    OptCount,
    OptElementBytes,
    OptFraction,
    OptMacsPerCycle,
    OptPeak_GMACps,
    OptPerCoresBandwidth_GBps,
    OptPerCoresOverhead_us,
    OptPerCoresPerUnit_ns,
    OptPosFactor,
    OptPower_W,
    Overhead_us,
    Peak_GMACps,
    PerCoresBandwidth_GBps,
    PerCoresCycles,
    PerCoresOverhead_us,
    PerUnit_ns,
    Power_W,
    schema_version,
)
from hetsim.platform.params import (
    KIND_OVERHEAD_US,
    OP_KINDS,
    CostParams,
    check_kinds,
    misplaced_parameter,
    with_blocks,
)
from hetsim.platform.params import Strict as _Strict
from hetsim.platform.places import Topology
from hetsim.workload.ops import DTYPE_BYTES

SCHEMA_VERSION = 2

# Every number is strict (no strings or booleans) and inside its physical range: hetsim.bounds.
Name = Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z][A-Za-z0-9_.+-]*$")]

class Saturation(_Strict):
    """What a memory delivers past saturation: with n flows active, more than ``knee_flows`` of
    them, the bandwidth they share is ``bandwidth / (1 + loss_per_flow x (n - knee_flows))`` (bank
    and row-buffer conflicts: more concurrent streams, more row misses). Off unless given."""

    knee_flows: Count = Field(
        description="Concurrent flows the memory serves at full bandwidth.")
    loss_per_flow: LossPerFlow = Field(
        description="Relative loss of delivered bandwidth per flow beyond the knee (0: none).")


class Memory(_Strict):
    """A memory module (DRAM, HBM, MCDRAM, a PIM bank group...)."""

    name: Name = Field(description="Memory name, referenced by clusters and accelerators (`memory:`).")
    kind: str = Field("DRAM", description="Free text: DRAM, LPDDR4X, HBM, MCDRAM, ...")
    bandwidth_GBps: Bandwidth_GBps = Field(description="Sustained bandwidth shared by every user, GB/s (1e9 B/s).")
    latency_ns: Latency_ns = Field(0.0, description="Access latency, ns (informational for the roofline model).")
    capacity_GiB: OptCapacity_GiB = Field(None, description="Capacity, GiB (informational).")
    saturation: Saturation | None = Field(
        None, description="Bandwidth lost when more flows than a knee share the memory (DES with contention).")


class DvfsLevel(_Strict):
    """One operating point of a core type. Power numbers are optional; without them for every level
    in use the platform has no power model and energy is reported as null."""

    name: Name = Field(description="Level name (max, performance, powersave, ...), referenced by clusters and presets.")
    freq_MHz: Freq_MHz = Field(description="Core clock at this level, MHz (2.4 GHz = 2400).")
    active_W_per_core: OptPower_W = Field(
        None, description="Power of one busy core at this level, W (none: the platform has no power model).")
    idle_W_per_core: OptPower_W = Field(
        None, description="Power of one idle core of a powered cluster at this level, W.")


class AcceleratorDvfsLevel(_Strict):
    """One operating point of an accelerator's clock; power numbers, where given, replace the
    accelerator's active_W / idle_W at this level."""

    name: Name = Field(description="Level name, referenced by presets and --dvfs gpu=NAME.")
    freq_MHz: Freq_MHz = Field(description="Accelerator clock at this level, MHz.")
    active_W: OptPower_W = Field(None, description="Power while busy at this level, W (default: "
                                         "the accelerator's active_W).")
    idle_W: OptPower_W = Field(None, description="Power while idle at this level, W (default: the "
                                       "accelerator's idle_W).")


# -- cost-model parameter blocks ---------------------------------------------------------------------
# The rule (docs/platforms.md): hardware facts at the top of a core type or accelerator, each cost
# model's fitted parameters in its own block. A block is one subclass of CostParams, registered by
# being a field of CoreType or Accelerator (the field's name is the block's YAML key); a block left
# out of a file takes its defaults, a block no cost model in use reads is kept as data.


class RooflineCoreParams(CostParams):
    """``core_types[].roofline``: the fitted terms of the GEMM/roofline model
    (:class:`hetsim.cost.RooflineCostModel`, docs/model.md), also read by the Pipe-it ground truth,
    a fitted variant of it."""

    readers: ClassVar[tuple[str, ...]] = ("roofline", "pipeit-ground-truth")
    v1_fields: ClassVar[tuple[str, ...]] = (
        "gemm_efficiency", "dw_efficiency", "parallel_efficiency", "gemm_tile_rows", "op_overhead_us",
        "gemm_overhead_us", "gemm_pack_GBps", "im2col_GBps", "kind_GBps")

    gemm_efficiency: Fraction = Field(
        default=1.0, description="Fraction of the peak MAC rate a single-core GEMM sustains.")
    dw_efficiency: OptFraction = Field(
        default=None, description="Fraction of peak for depthwise convolutions (default: gemm_efficiency).")
    dw_strided_efficiency: OptFraction = Field(
        default=None, description="Fraction of peak for depthwise convolutions of stride > 1, where it is "
        "not dw_efficiency: their windows are read with a stride (ARM-CL runs them with other, "
        "de-interleaving kernels; numpy's strided views walk shorter runs). Default: dw_efficiency.")
    parallel_efficiency: list[Fraction] = Field(
        default_factory=lambda: [1.0], min_length=1,
        description="Multicore efficiency curve: entry n-1 is the per-core efficiency with n cores. "
        "Cores beyond the list reuse its last entry.")
    dw_tap_cycles: Cycles | None = Field(
        default=None, description="Core cycles a depthwise conv pays per output pixel and kernel tap "
        "beyond its MACs (a kernel vectorised over the channels runs one inner loop per pixel and tap: "
        "numpy's broadcast multiply-add on the host; it makes few channels dearer per MAC than many). "
        "Divided by the cores like the MACs (dw_parallel_efficiency). Default: none.")
    dw_parallel_efficiency: list[Fraction] | None = Field(
        default=None, min_length=1,
        description="Multicore efficiency curve of depthwise convolutions where it is not the GEMMs' "
        "(a depthwise kernel that runs on fewer threads than the EP has cores: hetsim's host executor "
        "runs it on one, so 2 cores measure 1/2): entry n-1 is the per-core efficiency with n cores, "
        "beyond the list its last entry. Default: parallel_efficiency.")
    gemm_tile_rows: OptCount = Field(
        default=None, description="If set, the N rows of a GEMM are dealt out to threads in tiles of this many rows "
        "(Pipe-it eqs. 6-8); small layers then stop scaling (concave speedup).")
    op_overhead_us: Overhead_us = Field(default=0.0, description="Fixed cost per op (kernel launch, fork/join), us.")
    gemm_overhead_us: PerCoresOverhead_us = Field(
        default=0.0, description="Fixed cost per conv or fc op on top of op_overhead_us, us: one value, or a "
        "list whose entry n-1 holds on n cores (beyond the list, the last entry). What a GEMM pays in "
        "a running network and not alone: its filters and buffers are cold (evicted since the last "
        "frame), the BLAS threads must be woken. Default 0.")
    gemm_pack_GBps: OptBandwidth_GBps = Field(
        default=None, description="Rate one core handles a conv GEMM's operands (packing the image matrix and "
        "the filters into the BLAS kernel's blocks, writing the output), GB/s of operand bytes. When "
        "set, a conv pays (im2col + weight + output bytes) / min(n x rate, bandwidth) on top of its "
        "roofline, which makes GEMMs with a small K, M or N slower per MAC, as measured. Default: free.")
    im2col_GBps: OptPerCoresBandwidth_GBps = Field(
        default=None, description="Rate of building a conv's im2col image matrix, GB/s of matrix written: one "
        "core's rate (n cores: n x it), or a list whose entry n-1 is the rate of n cores (as measured; "
        "beyond the list the last entry scales with n). When set, the build is a step of its own "
        "before the GEMM (im2col bytes / min(rate, bandwidth)) instead of traffic hidden in the roofline.")
    kind_GBps: dict[str, PerCoresBandwidth_GBps] = Field(
        default_factory=dict, description="Rate the ops of a kind sustain, GB/s of bytes read and "
        "written, where it differs from the bandwidth (LRN's powers, pooling windows, kernels that do "
        "not speed up on more cores): one core's rate (n cores: n x it) or a list whose entry n-1 is "
        "the rate of n cores. An op of a listed kind moves its bytes at min(rate, bandwidth). "
        "Default: the bandwidth.")

    gemv_GBps: OptPerCoresBandwidth_GBps = Field(
        default=None, description="Rate a fully connected layer (a GEMV at batch 1, x @ W with W of "
        "K rows of M) streams its bytes, GB/s: one core's rate (n cores: n x it) or a list whose "
        "entry n-1 is the rate of n cores (as measured). When set, an fc op's memory time is bytes / "
        "this + K x gemv_row_ns instead of bytes / bandwidth: the STREAM-like bandwidth is itself a "
        "GEMV whose rows cost time of their own, so long rows (large M) stream faster than it, short "
        "ones slower (docs/fidelity.md#the-classifier-gemv-and-softmax). Not capped by the bandwidth. Read by the roofline only (the "
        "Pipe-it ground truth streams a GEMV at pipeit.gemv_GBps_per_core). Default: the bandwidth.")
    gemv_row_ns: OptPerCoresPerUnit_ns = Field(
        default=None, description="Time per row of a fully connected layer's weights (per input "
        "element) on top of gemv_GBps, ns: one value or a list, entry n-1 for n cores (beyond the "
        "list, the last entry). Read only with gemv_GBps. Default 0.")
    gemv_overhead_us: PerCoresOverhead_us = Field(
        default=0.0, description="Fixed cost of a fully connected layer on cold weights on top of "
        "op_overhead_us and gemm_overhead_us, us: one value or a list, entry n-1 for n cores. Read "
        "only with gemv_GBps. Default 0.")
    kind_overhead_us: dict[str, PerCoresOverhead_us] = KIND_OVERHEAD_US

    @model_validator(mode="after")
    def _check(self) -> RooflineCoreParams:
        check_kinds(list(self.kind_GBps))
        check_kinds(list(self.kind_overhead_us))
        return self


class RooflineAcceleratorParams(CostParams):
    """``accelerators[].roofline``: the roofline model's fitted terms of an accelerator."""

    readers: ClassVar[tuple[str, ...]] = ("roofline",)
    v1_fields: ClassVar[tuple[str, ...]] = ("efficiency", "op_overhead_us")

    efficiency: Fraction = Field(
        default=1.0, description="Fraction of peak_GMACps sustained.")
    op_overhead_us: Overhead_us = Field(default=0.0, description="Fixed cost per op (kernel launch), us.")


#: Convolution algorithm policies of the gemm2 model (:mod:`hetsim.cost.gemm2`): how the framework
#: of a platform picks an algorithm per conv. ``im2col``: every conv is an image matrix + GEMM (the
#: host executor; Pipe-it's ARM-CL v18.05 graph, 001 digest §1.5; XiTAO/Darknet in Pipe-search);
#: ``armcl``: NEConvolutionLayer::get_convolution_method of ARM-CL 18.x (FP32 3x3 stride-1 convs
#: with a bias run Winograd, the rest im2col + GEMM).
CONV_POLICIES = ("im2col", "armcl")
#: How much of a tensor a cache level holds when the bytes touched since its last use exceed the
#: level (gemm2 ``residency``): ``lru`` none (a cyclic sweep larger than an LRU cache misses on
#: every line), ``proportional`` capacity / distance (random or pseudo-LRU replacement).
RESIDENCY_RULES = ("lru", "proportional")


class Gemm2CoreParams(CostParams):
    """``core_types[].gemm2``: the second-generation cost model (:class:`hetsim.cost.Gemm2CostModel`,
    docs/model.md "The gemm2 model"): shape-, cache- and algorithm-aware op costs, each part in
    the clock it follows. Five mechanisms can be switched off one at a time (ablation); every
    other field is a fitted or sourced number whose default is neutral (no effect)."""

    readers: ClassVar[tuple[str, ...]] = ("gemm2",)

    # -- the switchable mechanisms (docs/fidelity.md ablates each) --------------------------------
    tiles: bool = Field(default=True, description="Micro-kernel tiles: a GEMM computes whole "
                        "tile_rows x tile_cols output tiles (N and M padded up), the busiest thread decides.")
    caches: bool = Field(default=True, description="Each operand is read from the cache level that "
                         "holds it (L1, L2, L3, DRAM: by the bytes touched since its last use); off: "
                         "every byte comes from DRAM, as in the roofline.")
    algorithms: bool = Field(default=True, description="Convolutions run the algorithm conv_policy "
                             "picks (Winograd, 1x1 GEMM without image matrix); off: im2col + GEMM for all.")
    clocks: bool = Field(default=True, description="Each part follows its own clock: cycles (kernels, "
                         "packing, L1/L2 traffic) the core's, DRAM traffic the memory's, fixed costs "
                         "none; off: the whole op time scales with 1/f of the core clock.")
    ingest: bool = Field(default=True, description="Reading and preparing the input frame is charged "
                         "to the op that reads the network input (frame_ingest_us, frame_ingest_ns_per_byte).")

    # -- GEMM micro-kernel -------------------------------------------------------------------------
    kernel_efficiency: Annotated[float, Field(gt=0, le=1)] = Field(
        default=1.0, description="Fraction of macs_per_cycle the GEMM micro-kernel sustains on operands "
        "in L1/L2.")
    tile_rows: Count = Field(
        default=1, description="Output rows (N) of a micro-kernel tile (arm_gemm sgemm_12x8: 8; "
        "OpenBLAS: its UNROLL_N); the N rows go to threads in whole tiles.")
    tile_cols: Count = Field(
        default=1, description="Output columns (M) of a micro-kernel tile (arm_gemm sgemm_12x8: 12).")
    block_k: OptCount = Field(
        default=None, description="K block of the GEMM (kc): a tile's accumulators are loaded and stored "
        "once per block (tile_overhead_cycles each). None: one block.")
    tile_overhead_cycles: Cycles = Field(
        default=0.0, description="Cycles per micro-kernel tile per K block (accumulator load/store, loop "
        "prologue): what makes a GEMM with a short K slow per MAC.")
    pack_cycles_per_byte: Cycles = Field(
        default=0.0, description="Core cycles to pack one byte of the GEMM's operands (image matrix and "
        "filters) into the kernel's blocks (the instruction part; the reads are the levels' traffic).")
    gemm_call_us: PerCoresOverhead_us = Field(
        default=0.0, description="Fixed cost of one GEMM call (buffers, thread hand-out), us: one value or "
        "a list, entry n-1 for n threads. Clock-independent.")
    gemm_macs_per_thread: OptCount = Field(
        default=None, description="A GEMM uses at most ceil(MACs / this) threads (OpenBLAS: "
        "SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD = 262144, interface/gemm.c). None: all cores.")
    gemv_efficiency: Annotated[float, Field(gt=0, le=1)] | None = Field(
        default=None, description="Fraction of macs_per_cycle a GEMV (fc at batch 1) sustains on cached "
        "weights (default: kernel_efficiency).")
    gemv_GBps_per_core: OptPerCoresBandwidth_GBps = Field(
        default=None, description="Rate one core streams a GEMV's DRAM traffic, GB/s (an in-order core "
        "keeps few misses in flight); default: the core type's bandwidth_GBps_per_core. One value: t "
        "threads stream t x it, at most the cluster's memory port (an assumed per-core figure, the "
        "boards'). A list: entry t-1 is the per-core rate with t threads as measured by cold GEMVs "
        "(calibrate host), not capped by the memory's figure, itself a GEMV's with its rows' cost "
        "lumped in (docs/fidelity.md#the-classifier-gemv-and-softmax).")
    gemv_row_cycles: PerCoresCycles = Field(
        default=0.0, description="Core cycles of a GEMV per row of its weights (x @ W, W of K rows; the "
        "busiest thread's, beyond the MACs): one value or a list, entry t-1 with t threads. A cost of "
        "the kernel's loop over W's rows, in core cycles like the rest of the kernel (docs/fidelity.md "
        "measured ~40 ns per row on this host; one clock cannot tell cycles from ns). Default 0.")
    gemv_call_us: OptPerCoresOverhead_us = Field(
        default=None, description="Fixed cost of one GEMV call on cold weights, us: one value or a list, "
        "entry t-1 with t threads. Clock-independent. Default: gemm_call_us (a GEMM's call).")
    pack_weights: bool = Field(default=True, description="The GEMM packs its filters on every call (OpenBLAS); "
                               "False: they were packed once, at configure time (arm_gemm's pretransposed B).")
    parallel_efficiency: list[Annotated[float, Field(gt=0, le=1)]] = Field(
        default_factory=lambda: [1.0], min_length=1, description="Per-core kernel rate with n busy cores "
        "(shared-L2 contention), entry n-1; beyond the list the last entry holds.")

    # -- memory levels -----------------------------------------------------------------------------
    l2_bytes_per_cycle: OptPosFactor = Field(
        default=None, description="Bytes per core cycle one core reads from its L2 (follows the core "
        "clock). None: L2 traffic is free (hidden in the kernel).")
    l3_GBps: OptBandwidth_GBps = Field(
        default=None, description="GB/s one core reads from the cluster's L3 (its own clock domain). "
        "None: L3 traffic is free.")
    residency: Literal["lru", "proportional"] = Field(
        default="proportional", description="Share of a tensor a level holds when the bytes touched since "
        "its last use exceed the level: lru none, proportional capacity / distance.")
    write_allocate: bool = Field(default=True, description="A write that lands in DRAM first reads the "
                                 "line (write-allocate caches): its bytes cross the memory twice.")
    overlap: Annotated[float, Field(ge=0, le=1)] = Field(
        default=1.0, description="How core and memory time combine: core + memory - overlap x "
        "min(core, memory); 1 is the roofline's max, 0 their sum (an in-order core stalls on misses).")

    # -- other kernels -----------------------------------------------------------------------------
    op_overhead_us: Overhead_us = Field(default=0.0, description="Fixed cost of every op that runs a "
                                        "kernel (dispatch), us. Clock-independent.")
    kernel_threads: OptCount = Field(
        default=None, description="Threads of the kernels that are not GEMMs (im2col, depthwise, pools, "
        "element-wise): None all the EP's cores (ARM-CL splits every kernel), 1 the host executor.")
    im2col_cycles_per_byte: Cycles = Field(
        default=0.0, description="Core cycles to write one byte of a conv's image matrix (the gather).")
    im2col_1x1: bool = Field(default=True, description="A 1x1 stride-1 unpadded conv also builds its "
                             "image matrix (ARM-CL v18.05, numpy executor); False: its GEMM reads the input.")
    dw_macs_per_cycle: OptMacsPerCycle = Field(
        default=None, description="MACs per core cycle of the depthwise kernel (default: macs_per_cycle x "
        "kernel_efficiency).")
    dw_strided_macs_per_cycle: OptMacsPerCycle = Field(
        default=None, description="MACs per core cycle of the depthwise kernel at stride > 1 (strided "
        "window reads; default: dw_macs_per_cycle).")
    dw_tap_cycles: Cycles = Field(
        default=0.0, description="Core cycles of the depthwise kernel per output pixel and kernel tap "
        "beyond its MACs (one inner loop over the channels per pixel and tap), per thread.")
    kind_cycles_per_byte: dict[str, Cycles] = Field(
        default_factory=dict, description="Core cycles per byte read and written by the kernels of a kind "
        "(LRN's powers, pooling windows): {lrn: 1.2}. Kinds not listed cost only their traffic.")
    kind_overhead_us: dict[str, PerCoresOverhead_us] = KIND_OVERHEAD_US
    conv_policy: Literal["im2col", "armcl"] = Field(
        default="im2col", description="How the framework picks a conv's algorithm (hetsim.platform.schema."
        "CONV_POLICIES): im2col (every conv an image matrix + GEMM) or armcl (FP32 3x3 stride-1 convs "
        "run Winograd).")
    winograd_tile: Literal[2, 4] = Field(
        default=2, description="Output tile m of Winograd F(m x m, 3 x 3): 2 or 4.")
    winograd_cycles_per_element: Cycles = Field(
        default=0.0, description="Core cycles per element of a Winograd input or output transform "
        "(in the transformed domain).")

    # -- the frame ---------------------------------------------------------------------------------
    frame_ingest_us: Overhead_us = Field(
        default=0.0, description="Reading and preparing one input frame (decode, resize, normalise) on "
        "this core type, us, charged to the op that reads the network input. Clock-independent.")
    frame_ingest_ns_per_byte: PerUnit_ns = Field(
        default=0.0, description="Frame ingest per byte of the network input, ns (core cycles at the "
        "level's clock: it scales with 1/f).")

    @model_validator(mode="after")
    def _check(self) -> Gemm2CoreParams:
        check_kinds(list(self.kind_cycles_per_byte))
        check_kinds(list(self.kind_overhead_us))
        return self


class Gemm2AcceleratorParams(CostParams):
    """``accelerators[].gemm2``: the gemm2 model on a GPU/NPU/PIM EP: a rate that follows the
    accelerator's clock, per-kernel costs in cycles of that clock and in fixed time, and the combine
    rule of the CPU block."""

    readers: ClassVar[tuple[str, ...]] = ("gemm2",)

    efficiency: Annotated[float, Field(gt=0, le=1)] = Field(
        default=1.0, description="Fraction of peak_GMACps sustained (peak at the highest DVFS level).")
    kernel_cycles: Cycles = Field(
        default=0.0, description="Cycles of the accelerator clock per kernel (launch, set-up): scales "
        "with 1/f of its DVFS level.")
    op_overhead_us: Overhead_us = Field(default=0.0, description="Fixed cost per kernel, us "
                                        "(driver, clock-independent).")
    overlap: Annotated[float, Field(ge=0, le=1)] = Field(
        default=1.0, description="Combine rule of compute and memory time (1: max, 0: sum).")


# -- hardware ------------------------------------------------------------------------------------------
class CoreType(_Strict):
    """A CPU core micro-architecture (Cortex-A73, Denver 2, a gem5 O3 core...): hardware facts at the
    top, each cost model's parameters in its block."""

    name: Name = Field(description="Core type name (cortex-a76, ...), referenced by clusters.")
    macs_per_cycle: MacsPerCycle = Field(description="Peak FP32 multiply-accumulates per cycle per core.")
    bandwidth_GBps_per_core: OptBandwidth_GBps = Field(
        None, description="Memory bandwidth one core can draw, GB/s; n cores draw n times that, up to the "
        "cluster port and the memory (default: no per-core limit).")
    dvfs: list[DvfsLevel] = Field(min_length=1, description="DVFS levels (operating points), at least one.")
    default_dvfs: Name | None = Field(None, description="DVFS level used unless a cluster or preset says otherwise (default: the highest frequency).")
    kinds: list[str] | None = Field(None, description="Op kinds this core can run (default: all). The "
                                    "rule applies to every op kind; views (flatten, reshape, shape) run anywhere.")
    l1d_KiB: OptCache_KiB = Field(None, description="Level-1 data cache of one core, KiB "
                                          "(private to the core; the gemm2 model's first level).")
    # Cost-model blocks (see CostParams).
    roofline: RooflineCoreParams = Field(
        default_factory=RooflineCoreParams, description="Parameters of the roofline cost model "
        "(also read by the Pipe-it ground truth).")
    gemm2: Gemm2CoreParams = Field(
        default_factory=Gemm2CoreParams, description="Parameters of the gemm2 cost model (shape-, "
        "cache- and algorithm-aware).")

    @model_validator(mode="before")
    @classmethod
    def _no_misplaced(cls, data: Any) -> Any:
        misplaced_parameter(cls, "core_types", data)
        return data

    @model_validator(mode="after")
    def _check(self) -> CoreType:
        names = [lvl.name for lvl in self.dvfs]
        _unique(names, f"core_types.{self.name}.dvfs")
        if self.default_dvfs is not None and self.default_dvfs not in names:
            raise ValueError(f"default_dvfs {self.default_dvfs!r} is not one of its dvfs levels {names}")
        check_kinds(self.kinds)
        return self

    if TYPE_CHECKING:   # a plugin's parameter block (``core_type.hope``): a field with_blocks adds
        def __getattr__(self, name: str) -> Any: ...

    def level(self, name: str | None) -> DvfsLevel:
        if name is None:
            name = self.default_dvfs
        if name is None:
            return max(self.dvfs, key=lambda lvl: lvl.freq_MHz)
        for lvl in self.dvfs:
            if lvl.name == name:
                return lvl
        raise KeyError(name)


CoreType = with_blocks(CoreType, "core_types")  # type: ignore[misc,assignment]   # the plugins' blocks


class Cluster(_Strict):
    """Cores of one type that share an L2 and a port to one memory."""

    name: Name = Field(description="Cluster name; also the EP name of the whole cluster.")
    symbol: Annotated[str, Field(pattern=r"^[A-Za-z]+$")] | None = Field(
        None, description="Short letter(s) for pipeline strings: 'B' makes 'B4' mean 4 cores of this cluster.")
    core_type: Name = Field(description="A core_types name: the cores of this cluster.")
    cores: Count = Field(description="Number of cores.")
    memory: Name = Field(description="A memories name: where this cluster's data lives.")
    bandwidth_GBps: OptBandwidth_GBps = Field(
        None, description="Cap of this cluster's memory port (default: the memory's bandwidth).")
    l2_KiB: OptCache_KiB = Field(None, description="Level-2 cache, KiB: shared by the cluster's "
                                 "cores, or each core's own with l2_private.")
    l2_private: bool = Field(False, description="True: every core has its own L2 of l2_KiB (x86 server "
                             "cores); False: the cluster's cores share one (Arm clusters).")
    l3_KiB: OptCache_KiB = Field(None, description="Last-level cache shared by the cluster's cores "
                                 "beyond L2, KiB (none on the papers' boards).")
    dvfs: Name | None = Field(None, description="Initial DVFS level (default: the core type's default).")
    device: Name | None = Field(None, description="A devices name: the board this cluster sits on.")


class Precision(_Strict):
    """One datatype an accelerator computes in: its peak rate and the bytes of one element
    (an INT8 NPU's 6 TOPS is ``{dtype: int8, peak_GMACps: 3000}``: 1 MAC = 2 ops, 1 byte)."""

    dtype: Annotated[str, Field(pattern=r"^[a-z][a-z0-9]*$")] = Field(
        description="Datatype name, as ops name theirs: int8, uint8, int16, float16, bfloat16, float32, "
        "or another (int4) with its bytes.")
    peak_GMACps: Peak_GMACps = Field(description="Peak multiply-accumulates per second in this datatype, GMAC/s.")
    bytes: OptElementBytes = Field(
        None, description="Bytes of one element in this datatype (default: the datatype's own size, "
        "1 for int8; required for a datatype hetsim does not know, e.g. 0.5 for int4).")

    @model_validator(mode="after")
    def _check(self) -> Precision:
        known = DTYPE_BYTES.get(self.dtype)
        if known is None and self.bytes is None:
            raise ValueError(f"dtype {self.dtype!r} is not one hetsim knows ({', '.join(DTYPE_BYTES)}): "
                             f"give its bytes per element")
        if known is not None and self.bytes is not None and self.bytes != known:
            raise ValueError(f"bytes {self.bytes:g} contradicts {self.dtype}, which has {known} byte(s) per element")
        return self

    @property
    def element_bytes(self) -> float:
        return self.bytes if self.bytes is not None else DTYPE_BYTES[self.dtype]


class Accelerator(_Strict):
    """A GPU, NPU or PIM unit: an EP of its own with a peak rate (per datatype) and a list of op
    kinds it runs (hardware at the top, the roofline model's parameters in its block)."""

    name: Name = Field(description="Accelerator name; also its EP name.")
    kind: Literal["gpu", "npu", "pim", "dsp", "fpga"] = Field(description="What it is: gpu, npu, pim, dsp or fpga.")
    peak_GMACps: OptPeak_GMACps = Field(
        None, description="Peak rate for ops in a datatype `precisions` does not list (the workloads' "
        "float32), GMAC/s. Required unless compute_dtype names a listed precision.")
    precisions: list[Precision] = Field(
        default_factory=list, description="Peak rate (and element bytes) per datatype where it differs from "
        "peak_GMACps: [{dtype: int8, peak_GMACps: 3000}, {dtype: float16, peak_GMACps: 500}].")
    compute_dtype: Annotated[str, Field(pattern=r"^[a-z][a-z0-9]*$")] | None = Field(
        None, description="The datatype it runs every op in, whatever the op's own (a network quantised for "
        "it: int8 on an NPU): the rate of that precision, and tensors of that many bytes per element. "
        "Default: each op in its own datatype.")
    memory: Name = Field(description="A memories name: where the accelerator's data lives.")
    bandwidth_GBps: OptBandwidth_GBps = Field(None, description="Cap of its memory port, GB/s (default: the memory's bandwidth).")
    kinds: list[str] = Field(
        default_factory=lambda: list(OP_KINDS), description="Op kinds it runs (default: all). The rule "
        "applies to every op kind: a layer holding an op of another kind cannot be mapped here. Views "
        "(flatten, reshape, shape) run anywhere: no kernel runs.")
    active_W: OptPower_W = Field(None, description="Power while busy, W.")
    idle_W: OptPower_W = Field(None, description="Power while idle, W.")
    device: Name | None = Field(None, description="A devices name: the board it sits on.")
    dvfs: list[AcceleratorDvfsLevel] = Field(
        default_factory=list, description="DVFS levels of the accelerator clock (a GPU's 200..800 MHz); "
        "peak_GMACps and precisions are at the highest. Empty: one fixed clock.")
    default_dvfs: Name | None = Field(None, description="Level in use unless a preset or --dvfs says "
                                      "otherwise (default: the highest frequency).")
    # Cost-model blocks (see CostParams).
    roofline: RooflineAcceleratorParams = Field(
        default_factory=RooflineAcceleratorParams, description="Parameters of the roofline cost model.")
    gemm2: Gemm2AcceleratorParams = Field(
        default_factory=Gemm2AcceleratorParams, description="Parameters of the gemm2 cost model.")

    @model_validator(mode="before")
    @classmethod
    def _no_misplaced(cls, data: Any) -> Any:
        misplaced_parameter(cls, "accelerators", data)
        return data

    @model_validator(mode="after")
    def _check(self) -> Accelerator:
        check_kinds(self.kinds)
        dtypes = [p.dtype for p in self.precisions]
        _unique(dtypes, f"accelerators.{self.name}.precisions")
        if self.compute_dtype is not None and self.compute_dtype not in dtypes:
            if self.compute_dtype not in DTYPE_BYTES:
                raise ValueError(f"compute_dtype {self.compute_dtype!r} is neither a listed precision "
                                 f"({', '.join(dtypes) or 'none'}) nor a datatype hetsim knows")
            if self.peak_GMACps is None:
                raise ValueError(f"compute_dtype {self.compute_dtype!r} has no rate: list it in precisions "
                                 f"or give peak_GMACps")
        if self.peak_GMACps is None and (self.compute_dtype is None or self.compute_dtype not in dtypes):
            raise ValueError("peak_GMACps is required unless compute_dtype names one of precisions "
                             f"({', '.join(dtypes) or 'none listed'})")
        names = [lvl.name for lvl in self.dvfs]
        _unique(names, f"accelerators.{self.name}.dvfs")
        if self.default_dvfs is not None and self.default_dvfs not in names:
            raise ValueError(f"default_dvfs {self.default_dvfs!r} is not one of its dvfs levels {names}")
        return self

    if TYPE_CHECKING:   # a plugin's parameter block (``accelerator.hope``): a field with_blocks adds
        def __getattr__(self, name: str) -> Any: ...

    def precision(self, dtype: str) -> Precision | None:
        """The listed precision of ``dtype``, or None."""
        return next((p for p in self.precisions if p.dtype == dtype), None)

    def level(self, name: str | None = None) -> AcceleratorDvfsLevel | None:
        """The DVFS level ``name`` (default: ``default_dvfs``, else the highest); None without levels.
        Raises KeyError for a name that is not a level."""
        if not self.dvfs:
            if name is not None:
                raise KeyError(name)
            return None
        name = name or self.default_dvfs
        if name is None:
            return max(self.dvfs, key=lambda lvl: lvl.freq_MHz)
        for lvl in self.dvfs:
            if lvl.name == name:
                return lvl
        raise KeyError(name)

    def clock_ratio(self, name: str | None = None) -> float:
        """f(level) / f(highest level): what the peak rate scales by (1 without levels)."""
        lvl = self.level(name)
        if lvl is None:
            return 1.0
        return lvl.freq_MHz / max(x.freq_MHz for x in self.dvfs)

    def power_W(self, name: str | None = None) -> tuple[float | None, float | None]:
        """(active, idle) W at level ``name``: the level's numbers where given, else the accelerator's."""
        lvl = self.level(name)
        if lvl is None:
            return self.active_W, self.idle_W
        return (lvl.active_W if lvl.active_W is not None else self.active_W,
                lvl.idle_W if lvl.idle_W is not None else self.idle_W)


Accelerator = with_blocks(Accelerator, "accelerators")  # type: ignore[misc,assignment]   # the plugins' blocks


class Link(_Strict):
    """An interconnect (CCI, network-on-package, PCIe, Ethernet) joining clusters, accelerators or
    devices. Every pair of its endpoints talks through it. A plain link is one medium whose
    bandwidth is shared by every transfer active on it (a bus). A ``switched`` link is a switch
    with one full-duplex port per endpoint (an Ethernet switch and the boards' NICs): each port
    sends and receives at ``bandwidth_GBps`` on its own, so a transfer shares only its sender's
    send side and its receiver's receive side (a non-blocking switch fabric)."""

    name: Name = Field(description="Link name (addressable by --set links.<name>.<field>).")
    kind: str = Field("bus", description="Free text: CCI, network-on-package, PCIe, Ethernet, ...")
    connects: list[Name] = Field(min_length=2, description="At least two cluster, accelerator or device names; "
                                 "every pair talks through the link.")
    bandwidth_GBps: Bandwidth_GBps = Field(description="Bandwidth shared by the transfers active on the link, GB/s.")
    latency_ns: Latency_ns = Field(0.0, description="Fixed latency of every transfer, ns.")
    energy_pJ_per_byte: Energy_pJ_per_byte = Field(0.0, description="Energy per byte moved, pJ/B.")
    switched: bool = Field(
        False, description="A switch with one full-duplex port per endpoint: each port's send and "
        "receive side is a bandwidth server of its own (default: one shared medium).")


class Device(_Strict):
    """A board of a multi-board platform; its clusters and accelerators name it in ``device``."""

    name: Name = Field(description="Board name; its clusters and accelerators name it in `device`.")
    description: str = Field("", description="Free text.")


class Power(_Strict):
    """Board-level power, on top of the cores' and accelerators' own."""

    static_W: Power_W = Field(0.0, description="Board power drawn whatever runs (W).")
    coherence_W: Power_W = Field(
        0.0, description="Extra power while two clusters work at the same time and keep each other coherent "
        "(snoops over the CCI, the DRAM traffic they cause), W. Pipe-it Table VIII.")


class Runtime(_Strict):
    """How the platform's software runs a network: the cost model its parameter blocks are fitted
    for, and how the one DAG engine executes a placement by default (:class:`hetsim.evaluation.DagOptions`).
    The PIM paper's ONNX Runtime runs one node at a time, copies before the node that needs them,
    one copy per tensor and memory space: ``{cost_model: pim, serial: true, residency: memory}``."""

    cost_model: str = Field(
        default="roofline", description="The cost model hetsim uses by default on this platform: roofline, "
        "gemm2 or one a plugin adds (hetsim.cost.cost_model_names()).")
    serial: bool = Field(default=False, description="DAG placements run one task at a time (ops and copies).")
    caching: bool = Field(default=True, description="A copied tensor is reused by every consumer where it landed.")
    residency: Literal["ep", "memory"] = Field(
        default="ep", description="Where a copy lands: on its destination EP, or in its memory space (EPs "
        "sharing a memory read one copy and never copy between themselves).")
    comm: Literal["free", "consumer", "copy", "mpi"] = Field(
        default="free", description="Which lane a copy holds (none, the consumer's EP, a copy lane, both "
        "ends: a blocking MPI send/receive).")

    @model_validator(mode="after")
    def _known_cost_model(self) -> Runtime:
        from hetsim.plugins import cost_model_specs

        if self.cost_model not in cost_model_specs():
            raise ValueError(f"unknown cost model {self.cost_model!r}; allowed: "
                             f"{', '.join(cost_model_specs())}")
        return self


class Platform(_Strict):
    """A hetsim platform: memories, core types, clusters, accelerators, links, devices, power
    (docs/platforms.md). Units are in the key names."""

    schema_: Annotated[Literal[2], schema_version(2, " (files of version 1 are migrated on load)")] = Field(alias="schema", description="Format version of this file (files of "
                                "version 1 are migrated on load: hetsim.platform.loader.migrate).")
    name: Name = Field(description="Platform name (the shipped files use their file name).")
    description: str = Field("", description="One paragraph for `hetsim platforms list`.")
    sources: list[str] = Field(default_factory=list, description="Where the numbers come from.")
    memories: list[Memory] = Field(min_length=1, description="Memory modules, at least one.")
    core_types: list[CoreType] = Field(default_factory=list, description="CPU micro-architectures with their DVFS levels.")
    clusters: list[Cluster] = Field(default_factory=list, description="Groups of cores of one type on one memory.")
    accelerators: list[Accelerator] = Field(default_factory=list, description="GPUs, NPUs, PIM units: each an EP of its own.")
    links: list[Link] = Field(default_factory=list, description="Interconnects between clusters, accelerators, devices.")
    devices: list[Device] = Field(default_factory=list, description="Boards of a multi-board platform.")
    dvfs_presets: dict[Name, dict[Name, Name]] = Field(
        default_factory=dict,
        description="Named DVFS settings: preset -> {cluster: level}. E.g. Pipe-search's governors.")
    power: Power | None = Field(None, description="Board power (static, coherence); none: 0.")
    runtime: Runtime = Field(default_factory=Runtime, description="The software that runs networks: "
                             "default cost model and DAG execution.")

    # -- conveniences; EP parsing and routing live in places.py --------------------------------
    @cached_property
    def topology(self) -> Topology:
        # cached in the instance's __dict__: a pydantic private attribute costs ~14 us a read, and
        # every route and EP lookup reads it
        return Topology(self)

    def ep(self, name: str):
        """The execution place called ``name`` (``B4``, ``big``, ``big:2``, ``FEP0``, ``gpu``)."""
        return self.topology.ep(name)

    def eps(self):
        return self.topology.eps()

    def route(self, src, dst):
        return self.topology.route(src, dst)

    def cluster(self, name: str) -> Cluster:
        return self.topology.clusters[name]

    def accelerator(self, name: str) -> Accelerator:
        return self.topology.accelerators[name]

    def core_type(self, name: str) -> CoreType:
        return next(t for t in self.core_types if t.name == name)

    def memory(self, name: str) -> Memory:
        return next(m for m in self.memories if m.name == name)

    @property
    def has_power_model(self) -> bool:
        """Energy is reported only when the DVFS level of every cluster and every accelerator has
        power numbers."""
        for c in self.clusters:
            lvl = self.core_type(c.core_type).level(c.dvfs)
            if lvl.active_W_per_core is None or lvl.idle_W_per_core is None:
                return False
        return all(None not in a.power_W() for a in self.accelerators)

    @model_validator(mode="after")
    def _check_references(self) -> Platform:
        _unique([m.name for m in self.memories], "memories")
        _unique([c.name for c in self.core_types], "core_types")
        places = [c.name for c in self.clusters] + [a.name for a in self.accelerators]
        _unique(places, "clusters and accelerators")
        _unique([lk.name for lk in self.links], "links")
        _unique([d.name for d in self.devices], "devices")
        _unique([c.symbol for c in self.clusters if c.symbol], "cluster symbols")
        if not places:
            raise ValueError("a platform needs at least one cluster or accelerator")
        mems = {m.name for m in self.memories}
        types = {t.name: t for t in self.core_types}
        devices = {d.name for d in self.devices}
        for c in self.clusters:
            if c.core_type not in types:
                raise ValueError(f"clusters.{c.name}.core_type {c.core_type!r} is not one of {sorted(types)}")
            if c.memory not in mems:
                raise ValueError(f"clusters.{c.name}.memory {c.memory!r} is not one of {sorted(mems)}")
            if c.dvfs is not None and c.dvfs not in [lvl.name for lvl in types[c.core_type].dvfs]:
                raise ValueError(f"clusters.{c.name}.dvfs {c.dvfs!r} is not a level of core type {c.core_type}")
            if c.device is not None and c.device not in devices:
                raise ValueError(f"clusters.{c.name}.device {c.device!r} is not one of {sorted(devices)}")
        for a in self.accelerators:
            if a.memory not in mems:
                raise ValueError(f"accelerators.{a.name}.memory {a.memory!r} is not one of {sorted(mems)}")
            if a.device is not None and a.device not in devices:
                raise ValueError(f"accelerators.{a.name}.device {a.device!r} is not one of {sorted(devices)}")
        endpoints = set(places) | devices
        for lk in self.links:
            for end in lk.connects:
                if end not in endpoints:
                    raise ValueError(f"links.{lk.name}.connects {end!r} is not a cluster, accelerator or device "
                                     f"(have {sorted(endpoints)})")
            twice = sorted({end for end in lk.connects if lk.connects.count(end) > 1})
            if twice:   # a link from a place to itself carries nothing: a typo for another end
                raise ValueError(f"links.{lk.name}.connects lists {twice[0]!r} twice; a link joins "
                                 "distinct places or devices")
        # A memory sits on one board: places on two devices sharing one would hand tensors over
        # for free between boards (no link carries them).
        board: dict[str, tuple[str, str]] = {}
        ends: list[Cluster | Accelerator] = [*self.clusters, *self.accelerators]
        for place in ends:
            if place.device is None:
                continue
            first = board.setdefault(place.memory, (place.device, place.name))
            if first[0] != place.device:
                raise ValueError(f"memory {place.memory!r} is used by {first[1]} (device {first[0]}) and "
                                 f"{place.name} (device {place.device}); a memory sits on one device: give "
                                 "each device its own memory, and a link between the devices")
        clusters = {c.name: c for c in self.clusters}
        accels = {a.name: a for a in self.accelerators if a.dvfs}
        for preset, setting in self.dvfs_presets.items():
            for cname, level in setting.items():
                if cname in accels:
                    levels = [lvl.name for lvl in accels[cname].dvfs]
                elif cname in clusters:
                    levels = [lvl.name for lvl in types[clusters[cname].core_type].dvfs]
                else:
                    raise ValueError(f"dvfs_presets.{preset}: {cname!r} is not a cluster or an accelerator with "
                                     f"DVFS levels ({sorted(clusters) + sorted(accels)})")
                if level not in levels:
                    raise ValueError(f"dvfs_presets.{preset}.{cname}: level {level!r} is not one of {levels}")
        return self


def _unique(names: list[str], where: str) -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise ValueError(f"duplicate name {n!r} in {where}")
        seen.add(n)
