"""The classifier lead of docs/fidelity.md#the-classifier-gemv-and-softmax, measured: the executor's fc (``x @ W``, a GEMV) on W of
1-256 MB, warm and cold, on 4 KiB and 2 MiB pages, on 1 and 2 BLAS threads.

    python -m hetsim_host.probes.gemv_lead --out results/gemv_lead.json [--reps 9] [--threads 1]
    python -m hetsim_host.probes.gemv_lead --summary results/gemv_lead.json
    python -m hetsim_host.probes.gemv_lead --series cold | --series cold+tlb
    python -m hetsim_host.probes.gemv_lead --in-network googlenet,resnet50,mobilenet,alexnet

Every case is the executor's fc code path (``_fc``: ``x.reshape(k) @ w``, its ``_weights``), in a
process set up as a stage is (pinned, ``steady_allocator``, threadpoolctl). W's pages:

* ``executor``: the weights as the executor allocates them (``steady_allocator``: up to 32 MiB
  from the heap, larger from mmap; numpy advises huge pages above 4 MiB);
* ``4k``: a copy in an anonymous mapping advised ``MADV_NOHUGEPAGE`` (every 4 KiB page walked);
* ``2m``: a copy in a 2 MiB-aligned anonymous mapping advised ``MADV_HUGEPAGE``;
* ``fresh``: ``executor``, but W re-allocated and re-written before every cold run.

Contexts: ``warm`` (timed right after the same call), ``cold`` (after reading a buffer 4x the
caches, :func:`hetsim_host.microbench.flush_bytes`, and a tiny GEMM: only the data is cold),
``cold+tlb`` (cold, and one float read per 4 KiB page of a 256 MiB buffer on 4 KiB pages: the
TLBs cold too). The executor's softmax of 1000 values, warm and cold+tlb.

Measured caveat (docs/fidelity.md#the-classifier-gemv-and-softmax): here W was read twice (warm) right before the flush, and
its cold runs came out 10-30 % faster than in ``calibrate host``'s GEMV phase
(:func:`hetsim_host.microbench.bench_gemv`), where W was last read a whole round earlier, as in a
network; the calibration's context is the network's, this script's is for the page and orientation
comparisons. Rounds go over every case (interleaved); each time is a median over the rounds.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import time

import numpy as np

# (K, M): the networks' FCs (AlexNet fc6/fc7/fc8, ResNet50, GoogLeNet/MobileNet), the STREAM run's
# (65536 x 1024), a 1-256 MB series at M = 1000, and 16 MB in other orientations.
SHAPES = [(256, 1000), (512, 1000), (1024, 1000), (2048, 1000), (4096, 1000), (8192, 1000),
          (16384, 1000), (32768, 1000), (65536, 1000), (9216, 4096), (4096, 4096), (65536, 1024),
          (1000, 4096), (16384, 256), (256, 16384), (16, 16)]
PAGES = ("executor", "4k", "2m", "fresh")
CONTEXTS = ("warm", "cold", "cold+tlb")


def _tlb_buffer(nbytes: int, keep: list) -> np.ndarray:
    """A buffer on 4 KiB pages (``MADV_NOHUGEPAGE``): reading one float per page evicts the TLBs
    (64 Ki pages, more than any L2 TLB) while moving little data, as a network's 4 KiB-page
    tensors do between two frames."""
    mm = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    keep.append(mm)
    mm.madvise(mmap.MADV_NOHUGEPAGE)
    a = np.frombuffer(mm, dtype=np.float32)
    a[...] = 1.0
    return a


def _huge_share(a: np.ndarray) -> float:
    """Share of ``a``'s mapping (the VMA holding its first byte) in transparent huge pages."""
    addr = a.ctypes.data
    cur = None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                cur = lo <= addr < hi
            elif cur and head == "Rss:":
                rss = int(line.split()[1])
            elif cur and head == "AnonHugePages:":
                return int(line.split()[1]) / max(rss, 1)
    return float("nan")


def _mapped_copy(w: np.ndarray, huge: bool, keep: list) -> np.ndarray:
    size = w.nbytes + (2 << 20)
    mm = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    keep.append(mm)
    buf = np.frombuffer(mm, dtype=np.uint8)
    off = (-buf.ctypes.data) % (2 << 20)
    mm.madvise(mmap.MADV_HUGEPAGE if huge else mmap.MADV_NOHUGEPAGE)
    out = buf[off:off + w.nbytes].view(np.float32).reshape(w.shape)
    out[...] = w
    return out


def _single_softmax():
    from hetsim.workload import workload_from_dict

    return workload_from_dict({"schema": 1, "name": "sm", "input": {"h": 1, "w": 1, "c": 1000},
                               "layer_kinds": ["softmax"], "ops": [{"name": "x", "kind": "softmax"}]}).op("x")


def run(reps: int, threads: int) -> dict:
    from threadpoolctl import threadpool_limits

    from hetsim_host.kernels import Workers, _weights, compile_op, pin_process, steady_allocator
    from hetsim_host.microbench import cpus, flush_bytes, machine_info

    steady_allocator()
    cores = cpus()
    keep: list = []
    flush = np.ones(flush_bytes(machine_info()) // 4, dtype=np.float32)
    tlb = _tlb_buffer(256 << 20, keep)[::1024]   # one float per 4 KiB page
    tiny = np.ones((8, 8), dtype=np.float32)
    softmax_kernel = compile_op(_single_softmax(), np.random.default_rng(0), Workers(1))
    sx = [np.random.default_rng(1).standard_normal((1, 1, 1000), dtype=np.float32)]
    cases = {}
    for k, m in SHAPES:
        w = _weights(np.random.default_rng(0), k, m)   # the executor's _fc weights
        x = [np.ones((1, 1, k), dtype=np.float32)]
        for pages in PAGES:
            if pages in ("executor", "fresh"):
                ww = w
            else:
                ww = _mapped_copy(w, pages == "2m", keep)
            cases[(k, m, pages)] = (ww, x)
    share = {f"{k}x{m}:{p}": _huge_share(ww) for (k, m, p), (ww, _) in cases.items()}
    times: dict[tuple, list[float]] = {}
    loads = []
    clock = time.perf_counter
    pin_process(cores[:threads])
    with threadpool_limits(threads, user_api="blas"):
        for rep in range(reps + 1):
            loads.append(os.getloadavg()[0])
            for (k, m, pages), (ww, x) in cases.items():
                xv = x[0].reshape(k)
                got = {}
                if pages == "fresh":
                    ww = np.empty_like(ww)
                    ww[...] = cases[(k, m, pages)][0]
                    cases[(k, m, pages)] = (ww, x)
                else:
                    xv @ ww
                    t0 = clock()
                    xv @ ww   # the executor's _fc: inputs[0].reshape(k) @ w
                    got["warm"] = clock() - t0
                for ctx in ("cold", "cold+tlb"):
                    flush.sum()
                    if ctx == "cold+tlb":
                        tlb.sum()
                    tiny @ tiny   # the BLAS code back in cache: in a network only the data is cold
                    t0 = clock()
                    xv @ ww
                    got[ctx] = clock() - t0
                if rep:
                    for ctx, v in got.items():
                        times.setdefault((threads, k, m, pages, ctx), []).append(v)
            # the executor's softmax on a classifier's 1000 outputs, warm and after the flushes
            sm = softmax_kernel
            sm(sx)
            t0 = clock()
            sm(sx)
            got = {"warm": clock() - t0}
            flush.sum()
            tlb.sum()
            t0 = clock()
            sm(sx)
            got["cold+tlb"] = clock() - t0
            if rep:
                for ctx, v in got.items():
                    times.setdefault((threads, 1000, 1, "softmax", ctx), []).append(v)
    pin_process(cores)
    rows = [{"threads": t, "k": k, "m": m, "pages": p, "context": c, "bytes": 4 * k * m,
             "time_s": float(np.median(ts)), "p20_s": float(np.percentile(ts, 20)),
             "all_s": [float(v) for v in ts]}
            for (t, k, m, p, c), ts in times.items() if not all(np.isnan(ts))]
    return {"rows": rows, "huge_share": share, "loadavg_rounds": loads,
            "loadavg_after": list(os.getloadavg()), "machine": machine_info()}


def series(tlb_flush: bool) -> None:
    """The M = 1000 series (1-64 MB) on 1 thread, only cold calls (W last read a round earlier, as
    in ``calibrate host``'s GEMV phase), W as the executor allocates it and as 2 MiB-aligned copies
    on 2 MiB and on 4 KiB pages; ``tlb_flush``: the TLBs evicted too. Prints fixed + bytes / rate."""
    from threadpoolctl import threadpool_limits

    from hetsim_host.kernels import _weights, pin_process, steady_allocator
    from hetsim_host.microbench import flush_bytes, machine_info

    steady_allocator()
    keep: list = []
    pin_process([0])
    shapes = [(k, 1000) for k in (256, 512, 1024, 2048, 4096, 8192, 16384)]
    ws = {}
    for k, m in shapes:
        w = _weights(np.random.default_rng(0), k, m)
        ws[(k, m, "executor")] = w
        ws[(k, m, "2m")] = _mapped_copy(w, True, keep)
        ws[(k, m, "4k")] = _mapped_copy(w, False, keep)
    flush = np.ones(flush_bytes(machine_info()) // 4, np.float32)
    tiny = np.ones((8, 8), np.float32)
    tlb = _tlb_buffer(256 << 20, keep)[::1024]
    times: dict[tuple, list[float]] = {}
    with threadpool_limits(1, user_api="blas"):
        for rep in range(12):
            for key, w in ws.items():
                x = np.ones(w.shape[0], np.float32)
                flush.sum()
                if tlb_flush:
                    tlb.sum()
                tiny @ tiny
                t0 = time.perf_counter()
                x @ w
                if rep:
                    times.setdefault(key, []).append(time.perf_counter() - t0)
    print("load", os.getloadavg(), "TLBs evicted" if tlb_flush else "")
    for pages in ("executor", "2m", "4k"):
        rows = [{"bytes": 4 * k * m, "time_s": float(np.median(times[(k, m, pages)]))} for k, m in shapes]
        f, g = fit(rows)
        print(f"{pages:8s} fixed {f * 1e6:6.1f} us, {g:.1f} GB/s  ",
              " ".join(f"{k}x{m}:{r['time_s'] * 1e3:.3f}" for (k, m), r in zip(shapes, rows, strict=True)))


def in_network(networks: list[str], frames: int = 12) -> None:
    """The last fc of each network inside the executor's forward pass (StageNet, 1 thread, CPU 0):
    W as allocated, W copied to 2 MiB and to 4 KiB pages, and W's pages touched (one float per
    4 KiB) right before the fc; with the softmax and the op before the fc."""
    from threadpoolctl import threadpool_limits

    from hetsim.workload import load_workload
    from hetsim_host.executor import StageNet
    from hetsim_host.kernels import Workers, pin_process, steady_allocator

    keep: list = []
    pin_process([0])
    steady_allocator()
    with threadpool_limits(1, user_api="blas"):
        for name in networks:
            wl = load_workload(name)
            net = StageNet(wl, 1, wl.num_layers, Workers(1), 0)
            li, i = [(li, i) for li, ops in enumerate(net.layers) for i, (op, _, _) in enumerate(ops)
                     if op.kind == "fc"][-1]
            op, kernel, _ = net.layers[li][i]
            cell = next(c for c in kernel.__closure__ if isinstance(c.cell_contents, np.ndarray))
            w0 = cell.cell_contents
            prev_op, prev_kernel, prev_in = net.layers[li - 1][-1]
            softmax = [o.name for o in wl.ops if o.kind == "softmax"][-1]
            sample = net.synthetic_inputs(np.random.default_rng(3))
            variants = {"as-is": w0, "2m": _mapped_copy(w0, True, keep), "4k": _mapped_copy(w0, False, keep),
                        "touch": w0}
            got: dict[str, dict[str, list[float]]] = {v: {"fc": [], "softmax": [], "prev": []} for v in variants}
            for rep in range(frames + 2):
                for v, w in variants.items():
                    cell.cell_contents = w
                    pk = prev_kernel
                    if v == "touch":
                        flat = w.reshape(-1)

                        def pk(xs, k=prev_kernel, flat=flat):
                            y = k(xs)
                            flat[::1024].sum()
                            return y
                    net.layers[li - 1][-1] = (prev_op, pk, prev_in)
                    op_times: dict[str, float] = {}
                    net.run(dict(sample), op_times=op_times)
                    if rep >= 2:
                        got[v]["fc"].append(op_times[op.name])
                        got[v]["softmax"].append(op_times[softmax])
                        got[v]["prev"].append(op_times[prev_op.name])
            cell.cell_contents = w0
            net.layers[li - 1][-1] = (prev_op, prev_kernel, prev_in)
            print(name, op.name, w0.shape, "load", os.getloadavg()[0])
            for v, d in got.items():
                print(f"   {v:6s} " + "  ".join(f"{k} {np.median(x) * 1e3:.3f} ms" for k, x in d.items()))


def fit(rows: list[dict], stat: str = "time_s") -> tuple[float, float]:
    """t = fixed + bytes / rate over ``rows``, least squares on relative error: (fixed_s, GBps)."""
    b = np.array([r["bytes"] for r in rows], dtype=float)
    t = np.array([r[stat] for r in rows])
    a = np.stack([np.ones_like(b), b], axis=1) / t[:, None]
    (fixed, slope), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    return float(fixed), float(1e-9 / slope)


def summary(d: dict) -> None:
    rows = d["rows"]
    print("load average per round:", [round(x, 2) for x in d["loadavg_rounds"]], "after:",
          [round(x, 2) for x in d["loadavg_after"]])
    keys = sorted({(r["threads"], r["pages"], r["context"]) for r in rows})
    shapes = [(k, m) for k, m in SHAPES]
    print("time in ms (median); 'x GB/s' = bytes / time")
    for t, p, c in keys:
        sel = {(r["k"], r["m"]): r for r in rows if (r["threads"], r["pages"], r["context"]) == (t, p, c)}
        cells = [f"{k}x{m}:{sel[(k, m)]['time_s'] * 1e3:.3f}ms/{sel[(k, m)]['bytes'] / sel[(k, m)]['time_s'] / 1e9:.1f}"
                 for k, m in shapes if (k, m) in sel]
        print(f"t={t} {p:8s} {c:4s}", " ".join(cells))
    for r in rows:
        if r["pages"] == "softmax":
            print(f"softmax of 1000, t={r['threads']} {r['context']}: {r['time_s'] * 1e6:.1f} us")
    print("\nfit t = fixed + bytes / rate over M = 1000, W of 4-32 MB and of 64-256 MB:")
    for t, p, c in keys:
        for lo, hi in ((4 << 20, 40 << 20), (60 << 20, 300 << 20), (4 << 20, 300 << 20)):
            sub = [r for r in rows if (r["threads"], r["pages"], r["context"]) == (t, p, c)
                   and r["m"] == 1000 and lo <= r["bytes"] <= hi]
            if len(sub) >= 2:
                f, g = fit(sub)
                print(f"t={t} {p:8s} {c:4s} {lo >> 20:3d}-{hi >> 20:3d} MB: fixed {f * 1e6:7.1f} us, {g:5.1f} GB/s")
    print("\nhuge-page share of each W's mapping:",
          {k: round(v, 2) for k, v in d["huge_share"].items() if k.endswith(("executor", "4k", "2m"))})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--summary")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (= cores pinned), once per process")
    ap.add_argument("--series", choices=("cold", "cold+tlb"), help="the M = 1000 series, only cold calls")
    ap.add_argument("--in-network", help="networks (comma-separated): their last fc inside the forward pass")
    a = ap.parse_args()
    if a.series:
        series(a.series == "cold+tlb")
        return
    if a.in_network:
        in_network(a.in_network.split(","))
        return
    if a.summary:
        with open(a.summary) as f:
            summary(json.load(f))
        return
    d = run(a.reps, a.threads)
    if a.out:
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(d, f)
    summary(d)


if __name__ == "__main__":
    main()
