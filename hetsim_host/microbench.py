"""Micro-benchmarks of this machine, run through the same numpy code paths as the executor.

* **GEMM**: float32 ``A @ B`` over a grid of (N, K, M), with 1..all BLAS threads (threadpoolctl)
  and the process pinned to as many cores.
* **Memory bandwidth**: a STREAM-like read kernel (a 1-thread GEMV over a matrix far larger than
  the caches: what a fully connected layer does) in 1..all processes at once, each pinned to its
  own core: the per-core and the all-core bandwidth.
* **im2col**: the executor's image-matrix copy on conv shapes, with 1..all BLAS threads (the copy
  itself on the executor's kernel threads).
* **Op kinds** slower than the memory (LRN, pooling, ...): the executor's kernels on a few shapes.
* **Network context**: every op's time inside forward passes of a synthetic CNN (none of the
  validation networks), for what isolated runs miss: per-op dispatch, caches flushed by a big
  fully connected layer, thread wake-ups on several cores.
* **Cold GEMVs**: the executor's fc (x @ W) on weights of a few row lengths, after the caches
  are flushed: a rate per byte and a cost per row, which the STREAM-like run lumps together.
* **Hand-off**: a frame through the executor's :class:`~hetsim_host.executor.Channel` between two
  pinned processes (latency and copy rate), to check what the simulator's free shared-memory
  hand-off leaves out.

Every figure is the median of ``reps`` timed runs after a warm-up run; the repetitions go round
the whole grid (interleaved), so a burst of load from another process spreads over all shapes
instead of spoiling one.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import platform as platform_mod
import time
from collections.abc import Callable, Hashable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, TypeVar

import numpy as np

from hetsim_host.kernels import (
    KERNEL_THREADS,
    Workers,
    compile_op,
    die_with_parent,
    im2col,
    pin_process,
    steady_allocator,
)

Progress = Callable[[str, int], None]  # (phase, units done)

#: Pause after a multi-threaded block of runs (see :func:`_interleaved`).
_SETTLE_S = 0.3


@dataclass
class BenchPlan:
    """What to measure. ``quick()`` is a tiny plan for tests."""

    gemm_n: tuple[int, ...] = (49, 196, 784, 3136)
    gemm_k: tuple[int, ...] = (27, 147, 576, 2304)
    gemm_m: tuple[int, ...] = (16, 64, 256, 1024)
    gemm_max_macs: int = 2_000_000_000
    gemm_reps: int = 31
    stream_MB: int = 256
    stream_reps: int = 15
    im2col_shapes: tuple[tuple[int, int, int, int, int, int], ...] = (
        # H, W, C, kernel, stride, pad
        (224, 224, 3, 7, 2, 3), (56, 56, 64, 3, 1, 1), (28, 28, 128, 3, 1, 1), (28, 28, 192, 5, 1, 2),
        (14, 14, 256, 3, 1, 1), (14, 14, 384, 3, 1, 1),
    )
    # Output H, W, C of the op-kind runs; all above the executor's threading threshold
    # (kernels.PARALLEL_MIN_ELEMENTS), as the larger tensors of a CNN are.
    kind_shapes: tuple[tuple[int, int, int], ...] = ((56, 56, 96), (28, 28, 256), (40, 40, 128))
    kinds: tuple[str, ...] = ("relu", "maxpool", "avgpool", "lrn", "bn", "add", "concat", "dw")
    # Depthwise convs run at each of these strides (a stride-2 one reads its windows with a stride).
    dw_strides: tuple[int, ...] = (1, 2)
    # ... and on these output shapes besides kind_shapes: few and many channels, so that the fit
    # tells a cost per output pixel and tap (dw_tap_cycles) from the cost per MAC.
    dw_shapes: tuple[tuple[int, int, int], ...] = ((80, 80, 32), (20, 20, 512))
    kind_reps: int = 31
    handoff_bytes: tuple[int, ...] = (0, 1 << 16, 1 << 19, 1 << 21)
    handoff_reps: int = 50
    network_input: int = 128     # H = W of the synthetic network's input
    network_reps: int = 25
    # -- the gemm2 model's measurements (hetsim_host/fit.py fit_gemm2) --------------------------
    # GEMMs in two contexts (warm: right after the same call; cold: after the caches are flushed),
    # on the fit grid above, on held-out shapes between its points, and on fine sweeps of M and N
    # that show the micro-kernel's tiles.
    heldout_n: tuple[int, ...] = (100, 400, 1600)
    heldout_k: tuple[int, ...] = (75, 288, 1152)
    heldout_m: tuple[int, ...] = (32, 96, 384)
    sweep_m: tuple[int, ...] = (3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 24, 28, 31, 32, 33, 40, 47, 48, 56, 63, 64)
    sweep_n: tuple[int, ...] = (7, 8, 9, 11, 12, 13, 16, 20, 23, 24, 25, 28, 32, 36, 40)
    sweep_base: tuple[int, int, int] = (784, 576, 256)   # N, K, M of the sweeps (the swept one varies)
    context_reps: int = 11
    # Read bandwidth by working set: the executor's fc code path (x @ W) on W of these sizes, warm.
    level_KiB: tuple[int, ...] = (64, 256, 512, 768, 2048, 4096, 8192, 65536, 262144)
    level_reps: int = 9
    # Winograd F(2x2, 3x3) transforms and whole convs (H = W, C, M), the executor's kernels.
    winograd_shapes: tuple[tuple[int, int, int], ...] = ((56, 32, 32), (28, 64, 96), (14, 128, 128), (28, 128, 64))
    # Cold GEMVs (the executor's fc, K x M weights): 16 MB at row lengths M of 256-16384, and 2, 4,
    # 64 and 128 MB, so that a fixed cost, a rate per byte and a cost per row (K rows) separate
    # (docs/fidelity.md#the-classifier-gemv-and-softmax).
    gemv_shapes: tuple[tuple[int, int], ...] = ((16384, 256), (4096, 1000), (1024, 4096), (256, 16384),
                                                (1024, 1000), (16384, 1000), (8192, 4096), (512, 1024),
                                                (256, 4096))
    gemv_reps: int = 11

    @classmethod
    def quick(cls) -> BenchPlan:
        return cls(gemm_n=(16, 64), gemm_k=(32, 64), gemm_m=(16, 32), gemm_reps=2, stream_MB=4,
                   stream_reps=2, im2col_shapes=((16, 16, 8, 3, 1, 1),), kind_shapes=((8, 8, 16),),
                   kinds=("relu", "maxpool", "lrn"), kind_reps=2, handoff_bytes=(0, 4096),
                   handoff_reps=3, network_input=32, network_reps=2, heldout_n=(24,), heldout_k=(48,),
                   heldout_m=(24,), sweep_m=(8, 16), sweep_n=(8, 12), sweep_base=(64, 64, 32),
                   context_reps=2, level_KiB=(64, 1024), level_reps=2, winograd_shapes=((8, 8, 8),),
                   gemv_shapes=((64, 32), (16, 128)), gemv_reps=2)

    def units(self, cores: int) -> dict[str, int]:
        """Timed runs per phase (for the progress bar)."""
        g = len(gemm_shapes(self))
        return {
            "gemm": g * cores * (self.gemm_reps + 1),
            "stream": cores,
            "im2col": len(self.im2col_shapes) * cores * (self.kind_reps + 1),
            "kinds": sum(len(self.dw_strides) * (len(self.kind_shapes) + len(self.dw_shapes)) if k == "dw"
                         else len(self.kind_shapes) for k in self.kinds) * cores * (self.kind_reps + 1),
            "handoff": len(self.handoff_bytes) if cores > 1 else 0,
            "network": cores * (self.network_reps + 2),
            "gemm contexts": len(context_shapes(self)) * cores * 2 * (self.context_reps + 1),
            "levels": len(self.level_KiB) * (self.level_reps + 1),
            "winograd": len(self.winograd_shapes) * 3 * (self.kind_reps + 1),
            "gemv": len(self.gemv_shapes) * cores * (self.gemv_reps + 1),
        }


@dataclass
class Measurements:
    """Raw results, saved as JSON beside the platform YAML."""

    machine: dict
    gemm: list[dict] = field(default_factory=list)      # n, k, m, threads, time_s
    stream: list[dict] = field(default_factory=list)    # cores, bytes_per_core, time_s (per core)
    im2col: list[dict] = field(default_factory=list)    # h, w, c, kernel, stride, pad, threads, bytes, time_s
    kinds: list[dict] = field(default_factory=list)     # kind, h, w, c, threads, bytes, macs, time_s
    handoff: list[dict] = field(default_factory=list)   # bytes, round_trip_s
    network: list[dict] = field(default_factory=list)   # op, threads, time_s (synthetic network)
    network_input: int = 128
    load: dict = field(default_factory=dict)            # loadavg before / after, wall seconds
    # gemm2: n, k, m, threads, context (warm | cold), set (fit | heldout | sweep), time_s, load
    contexts: list[dict] = field(default_factory=list)
    levels: list[dict] = field(default_factory=list)    # kib, bytes, threads, time_s (x @ W, warm)
    winograd: list[dict] = field(default_factory=list)  # h, c, m, step (input|output|conv), time_s
    gemv: list[dict] = field(default_factory=list)      # k, m, threads, bytes, time_s (executor's fc, cold)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Measurements:
        return cls(**d)


# -- the machine ------------------------------------------------------------------------------
def cpus() -> list[int]:
    """The CPUs this process may run on, sorted."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def machine_info() -> dict:
    """CPU model, nominal clock, SIMD width (peak FP32 MAC/cycle), BLAS, as far as Linux tells."""
    model, mhz = platform_mod.processor() or "unknown", None
    flags: set[str] = set()
    vendor, family = "", 0
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "vendor_id" and not vendor:
                    vendor = value
                elif key == "cpu family" and not family:
                    family = int(value) if value.isdigit() else 0
                elif key == "model name":
                    model = value
                elif key == "cpu MHz" and mhz is None:
                    mhz = float(value)
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    try:  # the advertised maximum, when cpufreq is exposed (not in most VMs)
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
            mhz = float(f.read()) / 1000
    except (OSError, ValueError):
        pass
    # Peak FP32 MAC/cycle/core: vector lanes x 2 FMA ports (every AVX-512 and AVX2 server core
    # since Haswell has two), 4 lanes x 2 without FMA (SSE: one mul and one add port). AMD Zen 4
    # (family 25) runs AVX-512 on 256-bit units, two passes per instruction (AMD, Software
    # Optimization Guide for Family 19h Processors, §2.11): 2 FMA x 8 lanes.
    if "avx512f" in flags and vendor == "AuthenticAMD" and family == 25:
        macs, isa = 16, "AVX-512 on 256-bit units, Zen 4 (2 FMA x 8 lanes)"
    elif "avx512f" in flags:
        macs, isa = 32, "AVX-512 (2 FMA x 16 lanes)"
    elif "avx2" in flags and "fma" in flags:
        macs, isa = 16, "AVX2+FMA (2 FMA x 8 lanes)"
    else:
        macs, isa = 4, "SSE or other (assumed 4)"
    try:
        from threadpoolctl import threadpool_info

        blas = [{k: i.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
                for i in threadpool_info() if i.get("user_api") == "blas"]
    except Exception:  # pragma: no cover - informational only
        blas = []
    return {"model": model, "cpus": cpus(), "nominal_MHz": mhz or 1000.0, "isa": isa,
            "macs_per_cycle": macs, "blas": blas, "numpy": np.__version__,
            "python": platform_mod.python_version(), "kernel": platform_mod.release(),
            "caches": data_caches()}


def data_caches(cpu: int = 0) -> list[dict]:
    """The data caches of ``cpu`` as Linux describes them (/sys/devices/system/cpu/cpuN/cache):
    level, size in KiB and how many CPUs share it; [] where sysfs does not say."""
    base = f"/sys/devices/system/cpu/cpu{cpu}/cache"
    out = []
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return []
    for entry in entries:
        if not entry.startswith("index"):
            continue
        try:
            def read(name: str, entry: str = entry) -> str:
                with open(f"{base}/{entry}/{name}") as f:
                    return f.read().strip()

            kind, level, size = read("type"), int(read("level")), read("size")
            shared = read("shared_cpu_list")
        except (OSError, ValueError):
            continue
        if kind not in ("Data", "Unified"):
            continue
        kib = int(size[:-1]) * (1024 if size.endswith("M") else 1) if size[-1] in "KM" else int(size) // 1024
        n_shared = sum(int(b) - int(a) + 1 if "-" in part else 1
                       for part in shared.split(",") if part
                       for a, _, b in [part.partition("-")])
        out.append({"level": level, "size_KiB": kib, "shared_by": n_shared})
    return out


def _settle() -> None:
    """Keep the core busy for :data:`_SETTLE_S` (a sleep would let the clock drop, and the next
    runs would be timed while it ramps up again)."""
    end = time.perf_counter() + _SETTLE_S
    a = np.ones(1024, dtype=np.float32)
    while time.perf_counter() < end:
        a.sum()


#: The low quantile kept beside every median: on a machine shared with other processes a sample
#: that ran undisturbed is among the fastest (``calibrate host --statistic p20`` fits on it).
LOW_QUANTILE = 20


def stats(ts) -> dict[str, float]:
    """The median (``time_s``), the minimum and the 20th percentile of repeated timings."""
    a = np.asarray(ts, dtype=float)
    return {"time_s": float(np.median(a)), "min_s": float(np.min(a)),
            "p20_s": float(np.percentile(a, LOW_QUANTILE))}


def with_statistic(m: Measurements, statistic: str) -> Measurements:
    """A copy of ``m`` whose ``time_s`` are the ``statistic`` (``median`` or ``p20``) of each
    measurement's samples (rows without that statistic keep their median)."""
    if statistic not in ("median", "p20"):
        raise ValueError(f"statistic {statistic!r}: allowed: median, p20")
    d = m.to_dict()
    if statistic == "p20":
        for key in ("gemm", "im2col", "kinds", "network", "contexts", "levels", "winograd", "gemv"):
            for row in d.get(key, []):
                if "p20_s" in row:
                    row["time_s"] = row["p20_s"]
    return Measurements.from_dict(d)


def _time(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# -- interleaved timing -----------------------------------------------------------------------
K = TypeVar("K", bound=Hashable)
#: (key, the call to time)
Case = tuple[K, Callable[[], object]]


def _interleaved(cases: dict[int, list[Case[K]]], reps: int, cores: list[int], phase: str,
                 progress: Progress) -> dict[tuple[int, K], list[float]]:
    """Time every case of every thread count once per round, ``reps`` rounds after a warm-up
    round, pinned to as many cores and with as many BLAS threads as the thread count.

    After a multi-threaded block the process waits a moment, busy: OpenBLAS's idle workers spin
    (yielding) for ~0.1 s before they sleep, and pinned to the one core of the next block they
    would steal it from the thread being timed."""
    from threadpoolctl import threadpool_limits

    times: dict[tuple[int, K], list[float]] = {}
    for rep in range(reps + 1):
        for threads, group in cases.items():
            pin_process(cores[:threads])
            with threadpool_limits(threads, user_api="blas"):
                for key, fn in group:
                    t = _time(fn)
                    if rep:
                        times.setdefault((threads, key), []).append(t)
                    progress(phase, 1)
            if threads > 1:
                _settle()
    pin_process(cores)
    return times


# -- GEMM -------------------------------------------------------------------------------------
def gemm_shapes(plan: BenchPlan) -> list[tuple[int, int, int]]:
    return [(n, k, m) for n in plan.gemm_n for k in plan.gemm_k for m in plan.gemm_m
            if n * k * m <= plan.gemm_max_macs]


def bench_gemm(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    rng = np.random.default_rng(0)
    mats = {(n, k, m): (rng.standard_normal((n, k), dtype=np.float32),
                        rng.standard_normal((k, m), dtype=np.float32)) for n, k, m in gemm_shapes(plan)}
    cases: dict[int, list[Case[tuple[int, int, int]]]] = {
        t: [(shape, partial(np.matmul, a, b)) for shape, (a, b) in mats.items()]
        for t in range(1, len(cores) + 1)}
    times = _interleaved(cases, plan.gemm_reps, cores, "gemm", progress)
    return [{"n": n, "k": k, "m": m, "threads": t, **stats(ts)}
            for (t, (n, k, m)), ts in times.items()]


# -- memory bandwidth -------------------------------------------------------------------------
def _stream_worker(cpu: int, nbytes: int, reps: int, barrier, results) -> None:
    die_with_parent()
    try:
        pin_process([cpu])
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")
        m = 1024
        k = max(1, nbytes // (4 * m))
        w = np.ones((k, m), dtype=np.float32)
        x = np.ones(k, dtype=np.float32)
        x @ w  # warm-up: pages touched
        barrier.wait(timeout=300)
        times = [_time(lambda: x @ w) for _ in range(reps)]
        results.put((cpu, w.nbytes, times))
    except BaseException as e:  # pragma: no cover - reported to the parent
        results.put((cpu, 0, repr(e)))


def bench_stream(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    """A read-streaming GEMV in c = 1..all processes at once, one per core."""
    ctx = mp.get_context("spawn")
    out = []
    nbytes = plan.stream_MB << 20
    for c in range(1, len(cores) + 1):
        barrier, results = ctx.Barrier(c), ctx.Queue()
        procs = [ctx.Process(target=_stream_worker, args=(cpu, nbytes, plan.stream_reps, barrier, results),
                             daemon=True) for cpu in cores[:c]]
        for p in procs:
            p.start()
        got = [results.get(timeout=600) for _ in procs]
        for p in procs:
            p.join(timeout=30)
        for cpu, nb, times in got:
            if isinstance(times, str):
                raise RuntimeError(f"stream benchmark on cpu {cpu} failed: {times}")
            out.append({"cores": c, "cpu": cpu, "bytes": nb, "time_s": float(np.median(times)),
                        "all_s": [float(t) for t in times]})
        progress("stream", 1)
    return out


# -- im2col and op kinds ----------------------------------------------------------------------
def _single_op(kind: str, h: int, w: int, c: int, stride: int = 1):
    """An Op of ``kind`` with an h×w×c output (a pool reads (2h+1)×(2w+1)×c; a depthwise conv of
    ``stride`` 2 reads 2h×2w×c, padded (0, 1) as MobileNet's), built through the workload loader
    (shapes inferred)."""
    from hetsim.workload import workload_from_dict

    if kind in ("maxpool", "avgpool"):
        h, w = 2 * h + 1, 2 * w + 1
    if kind == "dw" and stride > 1:
        h, w = stride * h, stride * w

    specs: dict[str, list[dict[str, Any]]] = {
        "relu": [{"name": "x", "kind": "relu"}],
        "lrn": [{"name": "x", "kind": "lrn"}],
        "bn": [{"name": "x", "kind": "bn"}],
        "maxpool": [{"name": "x", "kind": "maxpool", "kernel": 3, "stride": 2}],
        "avgpool": [{"name": "x", "kind": "avgpool", "kernel": 3, "stride": 2}],
        "dw": [{"name": "x", "kind": "dw", "kernel": 3, "pad": 1, "out_c": c} if stride == 1 else
               {"name": "x", "kind": "dw", "kernel": 3, "stride": stride, "pad": [0, stride - 1], "out_c": c}],
        "add": [{"name": "a", "kind": "relu"}, {"name": "b", "kind": "relu", "inputs": []},
                {"name": "x", "kind": "add", "inputs": ["a", "b"]}],
        "concat": [{"name": "a", "kind": "relu"}, {"name": "b", "kind": "relu", "inputs": []},
                   {"name": "x", "kind": "concat", "inputs": ["a", "b"]}],
    }
    wl = workload_from_dict({"schema": 1, "name": f"bench-{kind}", "input": {"h": h, "w": w, "c": c},
                             "layer_kinds": [specs[kind][-1]["kind"]], "ops": specs[kind]})
    return wl.op("x")


def bench_im2col(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    rng = np.random.default_rng(1)
    workers = {t: Workers(KERNEL_THREADS) for t in range(1, len(cores) + 1)}
    cases: dict[int, list[Case[tuple[int, int, int, int, int, int]]]] = {t: [] for t in workers}
    nbytes = {}
    for h, w, c, k, s, p in plan.im2col_shapes:
        x = rng.standard_normal((h, w, c), dtype=np.float32)
        oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        buf = np.empty((oh, ow, k, k, c), dtype=np.float32)
        nbytes[(h, w, c, k, s, p)] = buf.nbytes
        for t, wk in workers.items():
            cases[t].append(((h, w, c, k, s, p), partial(im2col, x, (k, k), s, (p, p), (oh, ow), wk, buf)))
    times = _interleaved(cases, plan.kind_reps, cores, "im2col", progress)
    for wk in workers.values():
        wk.close()
    return [{"h": h, "w": w, "c": c, "kernel": k, "stride": s, "pad": p, "threads": t,
             "bytes": int(nbytes[(h, w, c, k, s, p)]), **stats(ts)}
            for (t, (h, w, c, k, s, p)), ts in times.items()]


def bench_kinds(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    rng = np.random.default_rng(2)
    workers = {t: Workers(KERNEL_THREADS) for t in range(1, len(cores) + 1)}
    cases: dict[int, list[Case[tuple[str, int, int, int, int]]]] = {t: [] for t in workers}
    ops = {}
    for kind in plan.kinds:
        for h, w, c in plan.kind_shapes + (plan.dw_shapes if kind == "dw" else ()):
            for stride in plan.dw_strides if kind == "dw" else (1,):
                op = ops[(kind, h, w, c, stride)] = _single_op(kind, h, w, c, stride)
                n_in = 2 if kind in ("add", "concat") else 1
                xs = [rng.standard_normal(tuple(op.in_shape), dtype=np.float32) for _ in range(n_in)]
                for t, wk in workers.items():
                    kernel = compile_op(op, np.random.default_rng(0), wk)
                    cases[t].append(((kind, h, w, c, stride), partial(kernel, xs)))
    times = _interleaved(cases, plan.kind_reps, cores, "kinds", progress)
    for wk in workers.values():
        wk.close()
    out = []
    for (t, key), ts in times.items():
        op = ops[key]
        kind, h, w, c, stride = key
        out.append({"kind": kind, "h": h, "w": w, "c": c, "threads": t, **({"stride": stride} if stride > 1 else {}),
                    **({"taps": int(op.window_taps)} if kind == "dw" else {}),
                    "bytes": int(op.input_bytes + op.output_bytes + op.weight_bytes),
                    "macs": int(op.macs), **stats(ts)})
    return out


# -- gemm2: GEMMs in context, read bandwidth by working set --------------------------------------
def context_shapes(plan: BenchPlan) -> list[tuple[str, tuple[int, int, int]]]:
    """(set, (n, k, m)): the fit grid, the held-out shapes and the tile sweeps."""
    out = [("fit", s) for s in gemm_shapes(plan)]
    out += [("heldout", (n, k, m)) for n in plan.heldout_n for k in plan.heldout_k for m in plan.heldout_m
            if n * k * m <= plan.gemm_max_macs]
    n0, k0, m0 = plan.sweep_base
    out += [("sweep", (n0, k0, m)) for m in plan.sweep_m]
    out += [("sweep", (n, k0, m0)) for n in plan.sweep_n]
    return out


def flush_bytes(machine: dict) -> int:
    """Bytes to read to push a GEMM's operands out of every cache: 4x the caches, at least 64 MiB."""
    total = sum(c["size_KiB"] * 1024 for c in machine.get("caches", []))
    return max(64 << 20, 4 * total)


def bench_contexts(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    """Every shape of :func:`context_shapes` on 1..all BLAS threads, warm (timed right after the
    same call: its operands are where that call left them) and cold (timed after reading a buffer
    4x the caches and a tiny GEMM that brings the BLAS code back: operands and output come from
    DRAM, as the weights of a layer in a network larger than the caches). Rounds go over every shape
    (interleaved); each time is a median over ``context_reps`` rounds."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(4)
    shapes = context_shapes(plan)
    mats = {s: (rng.standard_normal((s[0], s[1]), dtype=np.float32),
                rng.standard_normal((s[1], s[2]), dtype=np.float32)) for _, s in shapes}
    flush = np.ones(flush_bytes(machine_info()) // 4, dtype=np.float32)
    tiny = (rng.standard_normal((8, 8), dtype=np.float32), rng.standard_normal((8, 8), dtype=np.float32))
    times: dict[tuple[int, str, tuple[int, int, int]], list[float]] = {}
    loads: list[float] = []
    for rep in range(plan.context_reps + 1):
        loads.append(os.getloadavg()[0])
        for threads in range(1, len(cores) + 1):
            pin_process(cores[:threads])
            with threadpool_limits(threads, user_api="blas"):
                for _, s in shapes:
                    a, b = mats[s]
                    a @ b
                    call = partial(np.matmul, a, b)
                    warm = _time(call)
                    flush.sum()
                    tiny[0] @ tiny[1]   # the BLAS code back in cache: in a network only the data is cold
                    cold = _time(call)
                    if rep:
                        times.setdefault((threads, "warm", s), []).append(warm)
                        times.setdefault((threads, "cold", s), []).append(cold)
                    progress("gemm contexts", 2)
            if threads > 1:
                _settle()
    pin_process(cores)
    sets = dict((s, name) for name, s in reversed(shapes))
    return [{"n": n, "k": k, "m": m, "threads": t, "context": ctx, "set": sets[(n, k, m)],
             **stats(ts), "load": float(np.median(loads))}
            for (t, ctx, (n, k, m)), ts in times.items()]


def bench_levels(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    """Read bandwidth by working set on one core: x @ W (the executor's fc) with W of each size in
    ``level_KiB``, warm (repeated), 1 BLAS thread. The rate steps down at each cache level."""
    from threadpoolctl import threadpool_limits

    out = []
    pin_process(cores[:1])
    with threadpool_limits(1, user_api="blas"):
        for kib in plan.level_KiB:
            m = 256
            k = max(1, kib * 1024 // (4 * m))
            w = np.ones((k, m), dtype=np.float32)
            x = np.ones(k, dtype=np.float32)
            x @ w
            inner = max(1, int(2e6 // (kib * 1024 + 1)))   # repeat small ones inside one timing
            ts = []
            for _ in range(plan.level_reps + 1):
                t0 = time.perf_counter()
                for _ in range(inner):
                    x @ w
                ts.append((time.perf_counter() - t0) / inner)
                progress("levels", 1)
            out.append({"kib": kib, "bytes": int(w.nbytes), "threads": 1,
                        **stats(ts[1:])})
    pin_process(cores)
    return out


def bench_winograd(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    """The executor's Winograd F(2x2, 3x3) on one core: its input transform, its output transform
    and the whole conv (3x3, pad 1) on each of ``winograd_shapes``, warm, interleaved."""
    from threadpoolctl import threadpool_limits

    from hetsim.workload import workload_from_dict
    from hetsim_host.kernels import compile_op, winograd_input, winograd_output

    rng = np.random.default_rng(5)
    cases: dict[int, list[Case[tuple[int, int, int, str]]]] = {1: []}
    for h, c, m in plan.winograd_shapes:
        th = tw = -(-h // 2)
        xp = np.pad(rng.standard_normal((h, h, c), dtype=np.float32), ((1, 1), (1, 1), (0, 0)))
        mm = rng.standard_normal((16, th * tw, m), dtype=np.float32)
        wl = workload_from_dict({"schema": 1, "name": "wino", "input": {"h": h, "w": h, "c": c},
                                 "layer_kinds": ["conv"], "ops": [{"name": "cv", "kind": "conv", "kernel": 3,
                                                                   "pad": 1, "out_c": m}]})
        conv = compile_op(wl.op("cv"), np.random.default_rng(0), Workers(1), "armcl")
        x = xp[1:-1, 1:-1].copy()
        cases[1] += [((h, c, m, "input"), partial(winograd_input, xp, th, tw)),
                     ((h, c, m, "output"), partial(winograd_output, mm, th, tw, h, h)),
                     ((h, c, m, "conv"), partial(conv, [x]))]
    with threadpool_limits(1, user_api="blas"):
        times = _interleaved(cases, plan.kind_reps, cores[:1], "winograd", progress)
    pin_process(cores)
    return [{"h": h, "c": c, "m": m, "step": step, **stats(ts)}
            for (_, (h, c, m, step)), ts in times.items()]


# -- cold GEMVs: the executor's fully connected layer ------------------------------------------
def _single_fc(k: int, m: int):
    """An fc op of K inputs and M outputs, built through the workload loader."""
    from hetsim.workload import workload_from_dict

    wl = workload_from_dict({"schema": 1, "name": "bench-fc", "input": {"h": 1, "w": 1, "c": k},
                             "layer_kinds": ["fc"], "ops": [{"name": "x", "kind": "fc", "out_c": m}]})
    return wl.op("x")


def bench_gemv(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    """The executor's fc kernel (x @ W, W allocated as the executor does) on each of
    ``gemv_shapes``, cold: timed after reading a buffer 4x the caches and a tiny GEMM (only the data
    is cold), as a network's fc finds its weights. One thread count at a time, all its repetitions
    (rounds over every shape) before the next: switching the pinning between calls left OpenBLAS's
    GEMV worker waiting for a scheduler tick (2-thread GEMVs of 5-8 ms, measured)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(6)
    ops = {s: _single_fc(*s) for s in plan.gemv_shapes}
    kernels = {s: compile_op(op, np.random.default_rng(0), Workers(1)) for s, op in ops.items()}
    xs = {s: [rng.standard_normal((1, 1, s[0]), dtype=np.float32)] for s in ops}
    flush = np.ones(flush_bytes(machine_info()) // 4, dtype=np.float32)
    tiny = np.ones((8, 8), dtype=np.float32)
    out = []
    for threads in range(1, len(cores) + 1):
        pin_process(cores[:threads])
        times: dict[tuple[int, int], list[float]] = {}
        loads = []
        with threadpool_limits(threads, user_api="blas"):
            for rep in range(plan.gemv_reps + 1):
                loads.append(os.getloadavg()[0])
                for s, kernel in kernels.items():
                    flush.sum()
                    tiny @ tiny   # the BLAS code back in cache: in a network only the data is cold
                    t = _time(partial(kernel, xs[s]))
                    if rep:
                        times.setdefault(s, []).append(t)
                    progress("gemv", 1)
        if threads > 1:
            _settle()
        for (k, m), ts in times.items():
            op = ops[(k, m)]
            out.append({"k": k, "m": m, "threads": threads,
                        "bytes": int(op.input_bytes + op.output_bytes + op.weight_bytes), **stats(ts),
                        "load": float(np.median(loads))})
    pin_process(cores)
    return out


# -- hand-off between two processes -----------------------------------------------------------
def _echo(cpu: int, ch_in, ch_out, n: int) -> None:
    die_with_parent()
    pin_process([cpu])
    for _ in range(n):
        ch_in.recv(timeout=300)
        ch_out.send({}, timeout=300)


def bench_handoff(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    """Round trip of a frame of b bytes out through a Channel and an empty frame back, between
    two pinned processes: half the empty round trip is the hand-off latency, the slope over b the
    copy rate."""
    from hetsim_host.executor import Channel

    if len(cores) < 2:
        return []
    ctx = mp.get_context("spawn")
    out = []
    pin_process([cores[0]])
    for nb in plan.handoff_bytes:
        layout = [("t", (max(1, nb // 4),))] if nb else []
        fwd, back = Channel(ctx, layout), Channel(ctx, [])
        p = ctx.Process(target=_echo, args=(cores[1], fwd, back, plan.handoff_reps + 1), daemon=True)
        p.start()
        frame = {"t": np.ones(max(1, nb // 4), dtype=np.float32)} if nb else {}
        times = []
        for rep in range(plan.handoff_reps + 1):
            t = time.perf_counter()
            fwd.send(frame, timeout=300)
            back.recv(timeout=300)
            if rep:
                times.append(time.perf_counter() - t)
        p.join(timeout=30)
        out.append({"bytes": nb, "round_trip_s": float(np.median(times))})
        progress("handoff", 1)
    pin_process(cores)
    return out


# -- ops in a network's context ----------------------------------------------------------------
def synthetic_network(size: int = 128):
    """A plain CNN for the network-context benchmark, none of the validation networks: 5x5/2 and
    3x3 and 1x1 convs with bn, relu, LRN and pools, then a fully connected layer large enough
    (~100 MB at 128x128) to flush the caches every frame, as the weights of a real network do."""
    from hetsim.workload import workload_from_dict

    ops = [
        {"name": "c1", "kind": "conv", "kernel": 5, "stride": 2, "pad": 2, "out_c": 48},
        {"name": "r1", "kind": "relu"}, {"name": "p1", "kind": "maxpool", "kernel": 3, "stride": 2},
        {"name": "c2", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 96},
        {"name": "b2", "kind": "bn"}, {"name": "r2", "kind": "relu"},
        {"name": "c3", "kind": "conv", "kernel": 1, "out_c": 64}, {"name": "r3", "kind": "relu"},
        {"name": "c4", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 128}, {"name": "r4", "kind": "relu"},
        {"name": "n4", "kind": "lrn"}, {"name": "p4", "kind": "maxpool", "kernel": 2, "stride": 2},
        {"name": "c5", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 192},
        {"name": "b5", "kind": "bn"}, {"name": "r5", "kind": "relu"},
        {"name": "c6", "kind": "conv", "kernel": 1, "out_c": 128}, {"name": "r6", "kind": "relu"},
        {"name": "c7", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 256}, {"name": "r7", "kind": "relu"},
        {"name": "p7", "kind": "avgpool", "kernel": 2, "stride": 2},
        {"name": "f1", "kind": "fc", "out_c": 2048}, {"name": "r8", "kind": "relu"},
        {"name": "f2", "kind": "fc", "out_c": 1000}, {"name": "sm", "kind": "softmax"},
    ]
    return workload_from_dict({"schema": 1, "name": "synthetic", "input": {"h": size, "w": size, "c": 3},
                               "layer_kinds": ["conv", "fc"], "ops": ops}, "synthetic network")


def bench_network(plan: BenchPlan, cores: list[int], progress: Progress) -> list[dict]:
    """Every op's time inside whole forward passes of :func:`synthetic_network` on 1..all cores:
    what the isolated runs miss (cold caches after the big fc, the executor's per-op dispatch,
    thread wake-ups on several cores)."""
    from threadpoolctl import threadpool_limits

    from hetsim_host.executor import StageNet

    wl = synthetic_network(plan.network_input)
    nets = {t: StageNet(wl, 1, wl.num_layers, Workers(KERNEL_THREADS), seed=0) for t in range(1, len(cores) + 1)}
    sample = nets[1].synthetic_inputs(np.random.default_rng(3))
    times: dict[tuple[int, str], list[float]] = {}
    for rep in range(plan.network_reps + 2):
        for t, net in nets.items():
            pin_process(cores[:t])
            with threadpool_limits(t, user_api="blas"):
                op_times: dict[str, float] = {}
                net.run(dict(sample), op_times=op_times)
            if rep >= 2:  # two warm-up passes
                for name, x in op_times.items():
                    times.setdefault((t, name), []).append(x)
                times.setdefault((t, FRAME), []).append(sum(op_times.values()))
            if t > 1:
                _settle()
            progress("network", 1)
    pin_process(cores)
    return [{"op": name, "threads": t, **stats(ts),
             **({"all_s": [float(x) for x in ts]} if name == FRAME else {})}
            for (t, name), ts in times.items()]


#: The row of :func:`bench_network` that holds whole frames (its ``all_s``: every frame's time).
FRAME = "<frame>"


def frame_jitter(m: Measurements) -> float:
    """Sigma of log frame time over the synthetic network's 1-core passes (robust: 1.4826 x the
    median absolute deviation), the frame-to-frame variation of this machine; 0 if not measured."""
    rows = [r for r in m.network if r["op"] == FRAME and r["threads"] == 1 and r.get("all_s")]
    if not rows:
        return 0.0
    x = np.log(np.asarray(rows[0]["all_s"]))
    return float(1.4826 * np.median(np.abs(x - np.median(x))))


def run_all(plan: BenchPlan | None = None, progress: Progress | None = None) -> Measurements:
    plan = plan or BenchPlan()
    progress = progress or (lambda phase, n: None)
    cores = cpus()
    steady_allocator()  # as the executor's stages do
    t0 = time.perf_counter()
    m = Measurements(machine=machine_info(), load={"loadavg_before": list(os.getloadavg())})
    m.gemm = bench_gemm(plan, cores, progress)
    m.stream = bench_stream(plan, cores, progress)
    m.im2col = bench_im2col(plan, cores, progress)
    m.kinds = bench_kinds(plan, cores, progress)
    m.handoff = bench_handoff(plan, cores, progress)
    m.network_input = plan.network_input
    m.network = bench_network(plan, cores, progress)
    m.contexts = bench_contexts(plan, cores, progress)
    m.levels = bench_levels(plan, cores, progress)
    m.winograd = bench_winograd(plan, cores, progress)
    m.gemv = bench_gemv(plan, cores, progress)
    m.load["loadavg_after"] = list(os.getloadavg())
    m.load["wall_s"] = time.perf_counter() - t0
    return m
