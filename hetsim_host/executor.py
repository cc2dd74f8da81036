"""Run a workload for real on this machine: a numpy forward pass as a pipeline of OS processes.

Each pipeline stage is one process pinned to its own cores (``os.sched_setaffinity``), with as
many BLAS threads (threadpoolctl) as it has cores; the other kernels run on its main thread
(:data:`~hetsim_host.kernels.KERNEL_THREADS`). Stage 1 takes a new frame as soon as it is free (a saturated source, like the DES);
every stage hands the tensors that cross its cut (``Workload.cut_bytes``: every tensor produced at
or before the cut and read after it) to the next through a :class:`Channel`: the tensors are copied
into a slot of a shared-memory ring and the slot's number goes through a ``multiprocessing`` queue
of one frame (a bounded store, as ``--buffer 1`` in the DES); the sender blocks while that queue
is full. Pickling the arrays through the queue's pipe instead costs milliseconds per frame on this
kind of VM (every 64 KiB pipe buffer is a wake-up of the other process), which no runtime the
simulator models pays: Pipe-it's ARM-CL stages hand over pointers in shared memory.

Each stage times every layer of every frame (``perf_counter``, a system-wide monotonic clock, so
the stages' stamps are comparable) and when the frame left. Throughput is measured over the
same steady-state window as the DES (:func:`hetsim.metrics.steady_state_window`).

    run = run_on_host(WorkloadRef("alexnet"), [(1, 11, (0,))], frames=20)
    run.throughput_fps, run.layer_times_s.shape
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as queue_mod
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsim.errors import HetsimError
from hetsim.metrics import steady_state_window
from hetsim.workload import Workload, load_workload, resolve_workload, workload_from_dict
from hetsim.workload.ops import VIEW_KINDS
from hetsim_host.kernels import (
    KERNEL_THREADS,
    Workers,
    compile_op,
    die_with_parent,
    pin_process,
    steady_allocator,
)

INPUT = "<input>"  # the key of the network input among the tensors a stage receives

#: Seconds a stage may stay silent (warm-up, one frame) before the run is declared hung.
STAGE_TIMEOUT_S = 600.0


# -- workloads, possibly at a scaled input resolution --------------------------------------------
@dataclass(frozen=True)
class WorkloadRef:
    """A workload by name or path, with its input resolution scaled by ``scale`` (H and W,
    rounded; shapes downstream are re-inferred). Picklable, so stage processes rebuild it."""

    name: str
    scale: float = 1.0
    data: dict | None = None  # an in-memory workload dict (tests) instead of a name
    #: How the executor picks a conv's algorithm (the gemm2 block's conv_policy: im2col | armcl).
    conv_policy: str = "im2col"

    def load(self) -> Workload:
        if self.data is None and self.scale == 1.0:
            return load_workload(self.name)
        data = dict(self.data) if self.data is not None else _raw(self.name)
        if self.scale != 1.0:
            data = scaled_workload_dict(data, self.scale)
        return workload_from_dict(data, f"{self.name} (scale {self.scale:g})")


def _raw(name: str) -> dict:
    from hetsim.validation import read_yaml

    return read_yaml(resolve_workload(name))


def scaled_workload_dict(data: dict, scale: float) -> dict:
    """The workload file ``data`` with its input (and any declared ``input_shape``) H and W
    multiplied by ``scale``; kernels, strides and channels stay, shapes are re-inferred, so an fc
    after the convs sees fewer features. Name gets an ``@scale`` suffix."""
    if not scale > 0:
        raise HetsimError(f"input scale must be positive (got {scale})")

    def sz(v: int) -> int:
        return max(1, round(v * scale))

    out = dict(data)
    out["name"] = f"{data['name']}@{scale:g}"
    inp = dict(data["input"])
    inp["h"], inp["w"] = sz(inp["h"]), sz(inp["w"])
    out["input"] = inp
    ops = []
    for op in data["ops"]:
        if isinstance(op, dict) and op.get("input_shape"):
            op = dict(op)
            s = dict(op["input_shape"])
            s["h"], s["w"] = sz(s["h"]), sz(s["w"])
            op["input_shape"] = s
        ops.append(op)
    out["ops"] = ops
    return out


# -- one stage's network ---------------------------------------------------------------------
class StageNet:
    """The ops of layers ``first..last`` of ``workload`` compiled to numpy kernels. Weights are
    drawn per op from ``default_rng([seed, op index])``, so an op has the same weights in every
    mapping."""

    def __init__(self, workload: Workload, first: int, last: int, workers: Workers, seed: int = 0,
                 conv_policy: str = "im2col"):
        self.workload, self.first, self.last = workload, first, last
        index = {op.name: i for i, op in enumerate(workload.ops)}
        self.layers: list[list[tuple]] = []
        for layer in workload.layers[first - 1:last]:
            ops = []
            for op in layer.ops:
                kernel = compile_op(op, np.random.default_rng([seed, index[op.name]]), workers, conv_policy)
                ops.append((op, kernel, op.inputs or (INPUT,)))
            self.layers.append(ops)
        self.needs_in = _tensors_crossing(workload, first - 1)
        self.sends = _tensors_crossing(workload, last) if last < workload.num_layers else []

    def synthetic_inputs(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Random tensors of the shapes this stage receives (for warm-up and for stage 1)."""
        w = self.workload
        out = {}
        for name in self.needs_in:
            shape = w.input_shape if name == INPUT else w.op(name).out_shape
            out[name] = rng.standard_normal(tuple(shape), dtype=np.float32)
        return out

    def run(self, tensors: dict[str, np.ndarray], layer_times: np.ndarray | None = None,
            op_times: dict[str, float] | None = None) -> dict:
        """Run one frame; ``tensors`` (received) is extended with every output. Returns the
        tensors to send on. Per-layer seconds go to ``layer_times`` and per-op seconds to
        ``op_times`` when given."""
        clock = time.perf_counter
        for li, ops in enumerate(self.layers):
            t0 = clock()
            for op, kernel, inputs in ops:
                if op_times is None:
                    tensors[op.name] = kernel([tensors[n] for n in inputs])
                else:
                    t = clock()
                    tensors[op.name] = kernel([tensors[n] for n in inputs])
                    op_times[op.name] = clock() - t
            if layer_times is not None:
                layer_times[li] = clock() - t0
        return {name: tensors[name] for name in self.sends}


def _tensors_crossing(workload: Workload, cut: int) -> list[str]:
    """Names of the tensors that cross a cut after layer ``cut`` (INPUT for the network input):
    the same set :meth:`Workload.cut_bytes` counts. ``cut = 0`` gives what stage 1 reads."""
    if cut <= 0:
        return [INPUT]
    names: list[str] = []
    for op in workload.ops:
        if op.layer <= cut:
            continue
        for src in op.inputs or (INPUT,):
            producer_layer = 1 if src == INPUT else workload.op(src).layer
            if producer_layer <= cut and src not in names:
                names.append(src)
    return names


# -- hand-off between stages ------------------------------------------------------------------
class Channel:
    """A bounded queue of frames between two stage processes: ``SLOTS`` slots of shared memory,
    each holding every tensor that crosses the cut, and a queue of one slot number. With a queue
    of one frame, a slot is rewritten only after the receiver took the two frames after it, i.e.
    finished with it, so the receiver reads its slot in place (no copy on that side)."""

    SLOTS = 3

    def __init__(self, ctx, layout: Sequence[tuple[str, tuple[int, ...]]]):
        self.layout = [(name, tuple(shape)) for name, shape in layout]
        self.slot_elems = sum(int(np.prod(s)) for _, s in self.layout)
        self.raw = ctx.RawArray("f", max(1, self.slot_elems * self.SLOTS))
        self.queue = ctx.Queue(maxsize=1)
        self._views: list[dict[str, np.ndarray]] | None = None
        self._next = 0

    def _slots(self) -> list[dict[str, np.ndarray]]:
        if self._views is None:
            flat = np.frombuffer(self.raw, dtype=np.float32)
            self._views = []
            for k in range(self.SLOTS):
                off = k * self.slot_elems
                views = {}
                for name, shape in self.layout:
                    n = int(np.prod(shape))
                    views[name] = flat[off:off + n].reshape(shape)
                    off += n
                self._views.append(views)
        return self._views

    def send(self, tensors: dict[str, np.ndarray], timeout: float | None = None) -> None:
        slot = self._next
        self._next = (slot + 1) % self.SLOTS
        views = self._slots()[slot]
        for name, _ in self.layout:
            np.copyto(views[name], tensors[name].reshape(views[name].shape))
        self.queue.put(slot, timeout=timeout)

    def recv(self, timeout: float | None = None) -> dict[str, np.ndarray]:
        slot = self.queue.get(timeout=timeout)
        return dict(self._slots()[slot])


def _layout(workload: Workload, names: Sequence[str]) -> list[tuple[str, tuple[int, ...]]]:
    return [(n, tuple(workload.input_shape if n == INPUT else workload.op(n).out_shape)) for n in names]


# -- the pipeline of processes ------------------------------------------------------------------
@dataclass(frozen=True)
class StageSpec:
    first: int
    last: int
    cpus: tuple[int, ...]


@dataclass
class HostRun:
    """What a real run measured. Times in seconds, stamps on the ``perf_counter`` clock."""

    stages: list[StageSpec]
    start: np.ndarray          # (stages, frames) when the stage began the frame
    end: np.ndarray            # (stages, frames) when it had handed the frame on
    layer_times_s: np.ndarray  # (frames, layers) every layer's time in its stage
    warmup_frames: int
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: Share of this machine's CPU time that other processes used while the frames ran: busy
    #: time of all CPUs (/proc/stat) minus the stages' own CPU time, over wall time x CPUs.
    other_cpu: float = float("nan")
    extra: dict = field(default_factory=dict)

    @property
    def frames(self) -> int:
        return self.end.shape[1]

    @property
    def throughput_fps(self) -> float:
        done = self.end[-1]
        lo, hi = steady_state_window(done, len(self.stages), 0.1)
        span = done[hi] - done[lo]
        return (hi - lo) / span if span > 0 else float("nan")

    def layer_medians_s(self) -> np.ndarray:
        """Median over the frames of every layer's time (index 0 = layer 1)."""
        return np.median(self.layer_times_s, axis=0)


def _stage_main(ref: WorkloadRef, spec: StageSpec, index: int, n_stages: int, frames: int,
                warmup: int, seed: int, q_in, q_out, results, barrier) -> None:
    die_with_parent()
    try:
        pin_process(list(spec.cpus))
        steady_allocator()
        from threadpoolctl import threadpool_limits

        threadpool_limits(len(spec.cpus), user_api="blas")
        workload = ref.load()
        workers = Workers(KERNEL_THREADS)
        net = StageNet(workload, spec.first, spec.last, workers, seed, ref.conv_policy)
        rng = np.random.default_rng([seed, 1_000_003])
        sample = net.synthetic_inputs(rng)
        for _ in range(warmup):
            net.run(dict(sample))
        results.put(("ready", index, None))
        barrier.wait(timeout=STAGE_TIMEOUT_S)
        n_layers = spec.last - spec.first + 1
        times = np.zeros((frames, n_layers))
        start = np.zeros(frames)
        end = np.zeros(frames)
        clock = time.perf_counter
        cpu0 = time.process_time()
        for f in range(frames):
            tensors = dict(sample) if index == 0 else q_in.recv(timeout=STAGE_TIMEOUT_S)
            start[f] = clock()
            out = net.run(tensors, times[f])
            if q_out is not None:
                q_out.send(out, timeout=STAGE_TIMEOUT_S)
            end[f] = clock()
            if index == n_stages - 1:
                results.put(("frame", index, f))
        results.put(("done", index, (start, end, times, time.process_time() - cpu0)))
        workers.close()
    except BaseException as e:  # report, never hang the parent
        results.put(("error", index, f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))


def run_on_host(ref: WorkloadRef, stages: Sequence[tuple[int, int, Sequence[int]]], frames: int = 30,
                 warmup: int = 2, seed: int = 0,
                 progress: Callable[[int], None] | None = None) -> HostRun:
    """Run ``frames`` frames through ``stages`` = [(first layer, last layer, cpus), ...], one
    process per stage. ``progress(n)`` is called as frames complete."""
    if frames < 2:
        raise HetsimError(f"frames must be at least 2 to measure a throughput (got {frames})")
    specs = [StageSpec(int(a), int(b), tuple(int(c) for c in cpus)) for a, b, cpus in stages]
    ctx = mp.get_context("spawn")
    k = len(specs)
    workload = ref.load()
    op_kinds_supported(workload)
    queues = [Channel(ctx, _layout(workload, _tensors_crossing(workload, s.last))) for s in specs[:-1]]
    results = ctx.Queue()
    barrier = ctx.Barrier(k + 1)
    procs = []
    for i, spec in enumerate(specs):
        q_in = queues[i - 1] if i > 0 else None
        q_out = queues[i] if i < k - 1 else None
        p = ctx.Process(target=_stage_main, name=f"hetsim-stage{i + 1}",
                        args=(ref, spec, i, k, frames, warmup, seed, q_in, q_out, results, barrier),
                        daemon=True)
        p.start()
        procs.append(p)
    try:
        ready, records = 0, dict[int, Any]()
        while ready < k:
            kind, i, payload = _get(results, procs)
            if kind == "error":
                raise HetsimError(f"stage {i + 1} failed: {payload.splitlines()[0]}")
            ready += kind == "ready"
        load_before = os.getloadavg()
        busy0 = _busy_s()
        barrier.wait(timeout=STAGE_TIMEOUT_S)
        wall0 = time.perf_counter()
        while len(records) < k:
            kind, i, payload = _get(results, procs)
            if kind == "error":
                raise HetsimError(f"stage {i + 1} failed: {payload.splitlines()[0]}")
            if kind == "frame" and progress is not None:
                progress(payload + 1)
            elif kind == "done":
                records[i] = payload
        wall = time.perf_counter() - wall0
        busy = _busy_s() - busy0
        load_after = os.getloadavg()
        for p in procs:
            p.join(timeout=30)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
    start = np.vstack([records[i][0] for i in range(k)])
    end = np.vstack([records[i][1] for i in range(k)])
    times = np.hstack([records[i][2] for i in range(k)])
    ours = sum(records[i][3] for i in range(k))
    ncpu = os.cpu_count() or 1
    other = max(0.0, (busy - ours) / (wall * ncpu)) if wall > 0 and busy == busy else float("nan")
    return HostRun(specs, start, end, times, warmup, load_before, load_after, other)


def _busy_s() -> float:
    """Seconds all CPUs spent busy since boot (/proc/stat; NaN where there is none)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return float("nan")
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _get(results, procs):
    """Next message from the stages; a stage that died silently becomes an error."""
    deadline = time.monotonic() + STAGE_TIMEOUT_S
    while True:
        try:
            return results.get(timeout=1.0)
        except queue_mod.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise HetsimError(f"{dead[0].name} exited with code {dead[0].exitcode}") from None
            if time.monotonic() > deadline:
                raise HetsimError(f"no word from the stages for {STAGE_TIMEOUT_S:.0f} s") from None


def op_kinds_supported(workload: Workload) -> None:
    """Raise a one-line error if the workload has an op kind no host kernel runs."""
    from hetsim_host.kernels import _MAKERS

    for op in workload.ops:
        if str(op.kind) not in _MAKERS and op.kind not in VIEW_KINDS:
            raise HetsimError(f"workload {workload.name}: op {op.name} of kind {op.kind} has no host kernel")
