"""numpy kernels of a CNN forward pass, one per op kind, on H×W×C float32 tensors (batch 1).

Convolutions are im2col + GEMM, as ARM-CL v18.05 runs them (docs/workloads.md): the image matrix
[N×K] is built for every conv, 1×1 ones included, then multiplied by the [K×M] filters with BLAS.
Weights are random (seeded, He-scaled so activations neither vanish nor blow up); only the time
matters. The GEMMs run on all the stage's cores (BLAS threads); the other kernels (the im2col copy,
pools, element-wise ops) run on the stage's calling thread: :data:`KERNEL_THREADS`. Splitting them
over a :class:`Workers` pool is supported but not used: after each GEMM, OpenBLAS keeps its
threads spinning on the other cores for ~0.1 s, and a worker woken there waits for a scheduler
tick behind them (measured: a ReLU after a conv, 0.14 ms on one thread, 1.9 ms on two), which made
multi-core stages slow and erratic. On one thread those kernels cost what the calibration measures
for them (per core count), and the cost model is told so.

    workers = Workers(1)
    kernel = compile_op(op, np.random.default_rng(0), workers)
    y = kernel([x])
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from hetsim.errors import HetsimError

Kernel = Callable[[Sequence[np.ndarray]], np.ndarray]

# LRN constants of AlexNet (Krizhevsky et al. 2012, ARM-CL NormalizationLayerInfo defaults).
_LRN_SIZE, _LRN_ALPHA, _LRN_K = 5, 1e-4, 1.0


#: Threads the executor gives the non-GEMM kernels of a stage, whatever its cores (see above).
KERNEL_THREADS = 1

#: Outputs smaller than this (elements) run on the calling thread: waking a second thread costs
#: 50-100 µs on a VM (an idle vCPU is halted), more than splitting a small kernel saves.
PARALLEL_MIN_ELEMENTS = 1 << 17


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this (worker) process when its parent dies (Linux's
    PR_SET_PDEATHSIG; elsewhere a no-op): a `calibrate host` or `validate host` killed with -9
    must not leave benchmark or stage workers waiting minutes for frames that never come (they
    also hold the killed command's stdout open)."""
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)   # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:   # the parent died before the request: nobody is waiting
        os._exit(1)


def pin_process(cores: list[int]) -> None:
    """Pin every thread of this process (BLAS's pool was started at import, before any pinning)
    to ``cores``. ``os.sched_setaffinity(0, ...)`` alone pins only the calling thread."""
    if not hasattr(os, "sched_setaffinity"):
        return
    mask = set(cores)
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        tids = [0]
    for tid in tids:
        try:
            os.sched_setaffinity(tid, mask)
        except OSError:  # a thread that just ended
            pass



def steady_allocator() -> bool:
    """Keep freed memory in the process (glibc ``mallopt``): arrays up to 32 MiB come from the
    heap and the heap is never trimmed, so after the first frame a forward pass reuses memory
    instead of mapping fresh pages, each a page fault on first touch (several ms per frame on a
    VM, more than some layers take). Inference runtimes do the same with a memory manager that
    allocates their tensors once. Returns False where there is no glibc (nothing changes)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim, m_top_pad, m_mmap = -1, -2, -3  # malloc.h: M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD
        ok = libc.mallopt(m_mmap, 32 << 20) and libc.mallopt(m_trim, 2**31 - 1)
        return bool(ok and libc.mallopt(m_top_pad, 64 << 20))
    except (OSError, AttributeError):
        return False


class Workers:
    """``n`` threads (the caller is one of them) that run a kernel on disjoint row ranges. numpy
    releases the GIL in its copy and ufunc loops, so the chunks run in parallel."""

    def __init__(self, n: int):
        self.n = max(1, int(n))
        self._pool = ThreadPoolExecutor(self.n - 1) if self.n > 1 else None

    def rows(self, fn: Callable[[int, int], None], total: int, elements: int) -> None:
        """Call ``fn(lo, hi)`` over a partition of ``range(total)`` into at most ``n`` chunks;
        on one thread when the output has fewer than :data:`PARALLEL_MIN_ELEMENTS` elements."""
        if self._pool is None or total < 2 or elements < PARALLEL_MIN_ELEMENTS:
            fn(0, total)
            return
        parts = min(self.n, total)
        bounds = [total * i // parts for i in range(parts + 1)]
        futures = [self._pool.submit(fn, bounds[i], bounds[i + 1]) for i in range(1, parts)]
        fn(bounds[0], bounds[1])
        for f in futures:
            f.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


def _pad(x: np.ndarray, pad: tuple[int, int], fill: float = 0.0, extra_end: int = 0) -> np.ndarray:
    b, e = pad[0], pad[1] + extra_end
    if b == 0 and e == 0:
        return x
    h, w, c = x.shape
    out = np.full((h + b + e, w + b + e, c), fill, dtype=np.float32)
    out[b:b + h, b:b + w] = x
    return out


def im2col(x: np.ndarray, kernel: tuple[int, int], stride: int, pad: tuple[int, int],
           out_hw: tuple[int, int], workers: Workers, out: np.ndarray | None = None) -> np.ndarray:
    """The image matrix [N×K] of a conv (N = O_h·O_w rows, K = R·S·C, channels fastest), copied
    from a sliding-window view of the padded input, split by output rows over the workers."""
    r, s = kernel
    oh, ow = out_hw
    c = x.shape[2]
    xp = _pad(x, pad)
    view = sliding_window_view(xp, (r, s), axis=(0, 1))[::stride, ::stride][:oh, :ow]
    view = view.transpose(0, 1, 3, 4, 2)  # (O_h, O_w, R, S, C)
    cols = out if out is not None else np.empty((oh, ow, r, s, c), dtype=np.float32)

    def copy(lo: int, hi: int) -> None:
        cols[lo:hi] = view[lo:hi]

    workers.rows(copy, oh, cols.size)
    return cols.reshape(oh * ow, r * s * c)


def compile_op(op, rng: np.random.Generator, workers: Workers, conv_policy: str = "im2col") -> Kernel:
    """A kernel for ``op`` (an :class:`hetsim.workload.Op`) with its weights drawn from ``rng``.
    ``conv_policy`` picks each conv's algorithm as the gemm2 cost model does
    (:func:`hetsim.cost.gemm2.conv_algorithm`): ``armcl`` runs FP32 3x3 stride-1 convs with
    Winograd F(2x2, 3x3), everything else is im2col + GEMM."""
    kind = str(op.kind)
    if kind == "conv" and conv_policy != "im2col":
        from hetsim.cost.gemm2 import conv_algorithm
        from hetsim.platform.schema import Gemm2CoreParams

        params = Gemm2CoreParams.model_validate({"conv_policy": conv_policy, "winograd_tile": 2})
        if conv_algorithm(op, params) == "winograd":
            return _winograd(op, rng, workers)
    make = _MAKERS.get(kind)
    if make is None:
        raise HetsimError(f"op {op.name}: kind {kind!r} has no host kernel")
    return make(op, rng, workers)


def _weights(rng: np.random.Generator, k: int, m: int) -> np.ndarray:
    w = rng.standard_normal((k, m), dtype=np.float32)
    w *= np.float32(np.sqrt(2.0 / k))
    return w


def _conv(op, rng, workers: Workers) -> Kernel:
    _, k, m = op.gemm
    groups = op.groups
    oh, ow = op.out_shape.h, op.out_shape.w
    cg = op.filter_depth
    weights = [_weights(rng, k, m) for _ in range(groups)]
    lo_c = 0 if op.group_node is None else (op.group_node[0] - 1) * op.in_shape.c // op.group_node[1]
    cols = np.empty((oh, ow, op.kernel[0], op.kernel[1], cg), dtype=np.float32)

    def run(inputs):
        x = inputs[0]
        outs = []
        for g in range(groups):
            c0 = lo_c + g * cg
            a = im2col(x[:, :, c0:c0 + cg], op.kernel, op.stride, op.pad, (oh, ow), workers, cols)
            outs.append(a @ weights[g])
        y = outs[0] if groups == 1 else np.concatenate(outs, axis=1)
        return y.reshape(oh, ow, m * groups)

    return run


# Winograd F(2x2, 3x3) (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR
# 2016, eqs. 7-8): Y = A^T [(G g G^T) ⊙ (B^T d B)] A on 4x4 input tiles with stride 2.
_WINO_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], dtype=np.float32)


def winograd_input(xp: np.ndarray, th: int, tw: int) -> np.ndarray:
    """V = B^T d B for every 4x4 tile d of the padded input (stride 2): shape (16, th*tw, C).
    B^T rows: d0 - d2, d1 + d2, d2 - d1, d1 - d3 (applied to rows, then columns)."""
    c = xp.shape[2]
    need_h, need_w = 2 * th + 2, 2 * tw + 2
    if xp.shape[0] < need_h or xp.shape[1] < need_w:
        xp = np.pad(xp, ((0, max(0, need_h - xp.shape[0])), (0, max(0, need_w - xp.shape[1])), (0, 0)))
    r = [xp[i:i + 2 * th:2] for i in range(4)]                       # rows i of every tile
    rows = (r[0] - r[2], r[1] + r[2], r[2] - r[1], r[1] - r[3])      # (th, W, C) each
    v = np.empty((4, 4, th, tw, c), dtype=np.float32)
    for a, t in enumerate(rows):
        q = [t[:, j:j + 2 * tw:2] for j in range(4)]
        np.subtract(q[0], q[2], out=v[a, 0])
        np.add(q[1], q[2], out=v[a, 1])
        np.subtract(q[2], q[1], out=v[a, 2])
        np.subtract(q[1], q[3], out=v[a, 3])
    return v.reshape(16, th * tw, c)


def winograd_output(m: np.ndarray, th: int, tw: int, oh: int, ow: int) -> np.ndarray:
    """Y = A^T m A for every tile of m (16, th*tw, M): A^T rows m0 + m1 + m2, m1 - m2 - m3."""
    mm = m.reshape(4, 4, th, tw, -1)
    r0 = mm[0] + mm[1] + mm[2]
    r1 = mm[1] - mm[2] - mm[3]
    y = np.empty((th, 2, tw, 2, mm.shape[-1]), dtype=np.float32)
    for a, t in enumerate((r0, r1)):
        np.add(t[0] + t[1], t[2], out=y[:, a, :, 0])
        np.subtract(t[1] - t[2], t[3], out=y[:, a, :, 1])
    return y.reshape(2 * th, 2 * tw, -1)[:oh, :ow]


def _winograd(op, rng, workers: Workers) -> Kernel:
    """A 3x3 stride-1 conv by Winograd F(2x2, 3x3): input transform, 16 GEMMs of (tiles x C) by
    (C x M) (one batched matmul: BLAS per matrix), output transform. The filters are transformed
    once (G g G^T), as a framework does at configure time."""
    _, k, m = op.gemm
    c = op.filter_depth
    oh, ow = op.out_shape.h, op.out_shape.w
    th, tw = -(-oh // 2), -(-ow // 2)
    w = _weights(rng, k, m).reshape(3, 3, c, m)                       # same draw as the im2col kernel
    u = np.einsum("ai,ijcm,bj->abcm", _WINO_G, w, _WINO_G).reshape(16, c, m).astype(np.float32)

    def run(inputs):
        xp = _pad(inputs[0], op.pad)
        v = winograd_input(xp, th, tw)
        return winograd_output(np.matmul(v, u), th, tw, oh, ow)

    return run


def _dw(op, rng, workers: Workers) -> Kernel:
    r, s = op.kernel
    oh, ow, c = op.out_shape
    st = op.stride
    w = rng.standard_normal((r, s, c), dtype=np.float32) * np.float32(np.sqrt(2.0 / (r * s)))

    def run(inputs):
        xp = _pad(inputs[0], op.pad)
        y = np.empty((oh, ow, c), dtype=np.float32)

        def part(lo: int, hi: int) -> None:
            acc = y[lo:hi]
            acc[...] = 0.0
            for i in range(r):
                for j in range(s):
                    win = xp[i + lo * st:i + (hi - 1) * st + 1:st, j:j + (ow - 1) * st + 1:st]
                    acc += win * w[i, j]

        workers.rows(part, oh, y.size)
        return y

    return run


def _fc(op, rng, workers: Workers) -> Kernel:
    k = op.in_shape.elements
    w = _weights(rng, k, op.out_c)

    def run(inputs):
        return (inputs[0].reshape(k) @ w).reshape(1, 1, op.out_c)

    return run


def _pool(op, rng, workers: Workers) -> Kernel:
    r, s = op.kernel
    oh, ow, c = op.out_shape
    st = op.stride
    is_max = op.kind == "maxpool"
    # Ceil-mode windows may run past the padded input: pad the end so the last window fits.
    need = (max(oh, ow) - 1) * st + max(r, s)
    extra = max(0, need - (max(op.in_shape.h, op.in_shape.w) + op.pad[0] + op.pad[1]))
    fill = -np.inf if is_max else 0.0
    scale = np.float32(1.0 / (r * s))

    def run(inputs):
        xp = _pad(inputs[0], op.pad, fill, extra)
        y = np.empty((oh, ow, c), dtype=np.float32)

        def part(lo: int, hi: int) -> None:
            acc = y[lo:hi]
            for i in range(r):
                for j in range(s):
                    win = xp[i + lo * st:i + (hi - 1) * st + 1:st, j:j + (ow - 1) * st + 1:st]
                    if i == 0 and j == 0:
                        acc[...] = win
                    elif is_max:
                        np.maximum(acc, win, out=acc)
                    else:
                        acc += win
            if not is_max:
                acc *= scale

        workers.rows(part, oh, y.size)
        return y

    return run


def _elementwise(fn: Callable[[np.ndarray, np.ndarray], None]):
    """A kernel that computes out[rows] = f(in[rows]) over the workers."""

    def make(op, rng, workers: Workers) -> Kernel:
        def run(inputs):
            x = inputs[0]
            y = np.empty(op.out_shape, dtype=np.float32)
            workers.rows(lambda lo, hi: fn(x[lo:hi], y[lo:hi]), x.shape[0], y.size)
            return y

        return run

    return make


def _relu(x, y):
    np.maximum(x, 0.0, out=y)


def _lrn(x, y):
    """Cross-channel LRN: y = x / (k + alpha/n · Σ_window x²)^0.75; x^-0.75 as 1/(√t · √√t)."""
    h, w, c = x.shape
    sq = np.zeros((h, w, c + _LRN_SIZE - 1), dtype=np.float32)
    np.square(x, out=sq[:, :, _LRN_SIZE // 2:_LRN_SIZE // 2 + c])
    t = sq[:, :, 0:c].copy()
    for i in range(1, _LRN_SIZE):
        t += sq[:, :, i:i + c]
    t *= np.float32(_LRN_ALPHA / _LRN_SIZE)
    t += np.float32(_LRN_K)
    root = np.sqrt(t)
    t = np.sqrt(root, out=t)
    t *= root
    np.divide(x, t, out=y)


def _bn(op, rng, workers: Workers) -> Kernel:
    c = op.out_c
    gamma = rng.standard_normal(c, dtype=np.float32)
    beta = rng.standard_normal(c, dtype=np.float32)

    def run(inputs):
        x = inputs[0]
        y = np.empty(op.out_shape, dtype=np.float32)

        def part(lo, hi):
            np.multiply(x[lo:hi], gamma, out=y[lo:hi])
            y[lo:hi] += beta

        workers.rows(part, x.shape[0], y.size)
        return y

    return run


def _add(op, rng, workers: Workers) -> Kernel:
    def run(inputs):
        y = np.empty(op.out_shape, dtype=np.float32)

        def part(lo, hi):
            np.add(inputs[0][lo:hi], inputs[1][lo:hi], out=y[lo:hi])
            for extra in inputs[2:]:
                y[lo:hi] += extra[lo:hi]

        workers.rows(part, y.shape[0], y.size)
        return y

    return run


def _concat(op, rng, workers: Workers) -> Kernel:
    def run(inputs):
        y = np.empty(op.out_shape, dtype=np.float32)

        def part(lo, hi):
            c0 = 0
            for x in inputs:
                y[lo:hi, :, c0:c0 + x.shape[2]] = x[lo:hi]
                c0 += x.shape[2]

        workers.rows(part, y.shape[0], y.size)
        return y

    return run


def _softmax(op, rng, workers: Workers) -> Kernel:
    def run(inputs):
        x = inputs[0]
        e = np.exp(x - x.max())
        return e / e.sum()

    return run


def _view(op, rng, workers: Workers) -> Kernel:
    shape = tuple(op.out_shape)

    def run(inputs):
        return inputs[0].reshape(shape)

    return run


_MAKERS: dict[str, Callable[..., Kernel]] = {
    "conv": _conv, "dw": _dw, "fc": _fc, "maxpool": _pool, "avgpool": _pool,
    "relu": _elementwise(_relu), "lrn": _elementwise(_lrn), "bn": _bn, "add": _add,
    "concat": _concat, "softmax": _softmax, "flatten": _view, "reshape": _view,
}
