"""The executor's pooling kernel on one output shape with several windows: does its time follow the
window taps (one strided pass over the output per tap, hetsim_host/kernels.py ``_pool``) or the
input bytes its windows cover (``Op.input_bytes``)? The probe behind docs/fidelity.md#poolings.

    python -m hetsim_host.probes.pool_taps [--reps 41] [--cold]

Prints, per pooling (kind, kernel, stride) on each output shape, the median time (µs, 1 thread),
the covered input + output bytes and the taps, and the time per tap pass and per covered byte.
Warm: the same call back to back (in a network a pooling reads what the op before it just
wrote); ``--cold``: 64 MB written between calls, so the input comes from DRAM (as in ``calibrate
host``'s kinds phase, which goes round every kind and shape between two calls of one).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

#: (kernel, stride): ResNet50's shortcut subsampling (1, 2), the calibration's (3, 2), AlexNet's
#: and SqueezeNet's too, GoogLeNet's inception branch (3, 1), the synthetic network's (2, 2).
WINDOWS = ((1, 2), (2, 2), (3, 2), (3, 1))
OUTPUTS = ((28, 28, 256), (14, 14, 512), (56, 56, 64))


def pool_op(kind: str, out: tuple[int, int, int], kernel: int, stride: int):
    from hetsim.workload import workload_from_dict

    h, w, c = out
    pad = (kernel - 1) // 2 if stride == 1 else 0
    ih = (h - 1) * stride + kernel - 2 * pad
    iw = (w - 1) * stride + kernel - 2 * pad
    wl = workload_from_dict({"schema": 1, "name": "pool", "input": {"h": ih, "w": iw, "c": c}, "layer_kinds": [kind],
                             "ops": [{"name": "x", "kind": kind, "kernel": kernel, "stride": stride, "pad": pad}]},
                            "pool probe")
    return wl.op("x")


def main() -> None:
    from hetsim_host.kernels import Workers, compile_op

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=41)
    ap.add_argument("--cold", action="store_true", help="flush the caches (64 MB written) before each call")
    a = ap.parse_args()
    flush = np.zeros(1 << 24, dtype=np.float32) if a.cold else None
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rng = np.random.default_rng(0)
    workers = Workers(1)
    print("| kind | output | kernel/stride | taps | covered in + out (KB) | median µs | ns per tap pass (per output KB) | ns per covered byte |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for kind in ("maxpool", "avgpool"):
        for out in OUTPUTS:
            for k, s in WINDOWS:
                op = pool_op(kind, out, k, s)
                assert tuple(op.out_shape) == out, (op.out_shape, out)
                x = rng.standard_normal(tuple(op.in_shape), dtype=np.float32)
                kernel = compile_op(op, np.random.default_rng(0), workers)
                kernel([x])
                ts = []
                for _ in range(a.reps):
                    if flush is not None:
                        flush += 1.0
                    t0 = time.perf_counter()
                    kernel([x])
                    ts.append(time.perf_counter() - t0)
                t = float(np.median(ts))
                taps = k * k
                covered = op.input_bytes + op.output_bytes
                print(f"| {kind} | {'x'.join(map(str, out))} | {k}x{k}/{s} | {taps} | {covered / 1e3:.0f} | {t * 1e6:.1f} | "
                      f"{t / (taps * op.output_bytes / 1e3) * 1e9:.0f} | {t / covered * 1e9:.3f} |", flush=True)
    workers.close()


if __name__ == "__main__":
    main()
