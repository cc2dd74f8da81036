"""A GEMM timed back to back and right after a 1-thread numpy kernel that ran for a given time.

The probe of docs/fidelity.md#a-gemm-inside-a-network (the 2-core conv lead): in a network a GEMM follows other kernels
(relu, pooling, im2col), in ``calibrate host`` it follows other GEMMs. Prints, per GEMM shape, the
median time (µs) after each gap (0 = back to back).

    python -m hetsim_host.probes.gemm_after_gap [--reps 61] [--threads 2]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

SHAPES = [(196, 576, 64), (784, 576, 128), (49, 2304, 256), (3136, 147, 64)]   # N, K, M
GAPS_MS = (0.0, 0.05, 0.2, 1.0, 5.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=61)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    # imported after --help: threadpoolctl sets KMP_DUPLICATE_LIB_OK in the environment on import
    from threadpoolctl import threadpool_limits

    os.sched_setaffinity(0, set(range(min(a.threads, os.cpu_count() or 1))))
    rng = np.random.default_rng(0)
    src = rng.standard_normal(1 << 18, dtype=np.float32)   # 1 MB in, 1 MB out: the kernel between
    dst = np.empty_like(src)

    def kernel_for(ms: float) -> None:
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < ms * 1e-3:
            np.maximum(src, 0, out=dst)

    with threadpool_limits(a.threads, user_api="blas"):
        for n, k, m in SHAPES:
            x = rng.standard_normal((n, k), dtype=np.float32)
            w = rng.standard_normal((k, m), dtype=np.float32)
            x @ w
            medians = {}
            for gap in GAPS_MS:
                ts = []
                for _ in range(a.reps):
                    if gap:
                        kernel_for(gap)
                    else:
                        x @ w
                    t0 = time.perf_counter()
                    x @ w
                    ts.append(time.perf_counter() - t0)
                medians[gap] = round(float(np.median(ts)) * 1e6, 1)
            print(f"N, K, M = {n}, {k}, {m}: µs after a gap of (ms) {medians}; "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
