"""OPT: the PIM paper's modified assembly-line scheduling (ALS) dynamic program (seed 003, §3.3-3.4).

Devices are the *lines*, the CG operators in topological order the *stations* (§3.3). The
classic two-line ALS of CLRS (paper Eq. 1) becomes, for n lines and a station j with several
data-dependent predecessors (paper Eq. 2, §3.3)::

    f[0][d] = a(o_0, d)
    f[j][d] = a(o_j, d) + min over d' in cap(o_{j-1}) of
                  f[j-1][d]                 if d' = d     (stay on the line: no copy)
                  f[j-1][d'] + T(j, d, d')  otherwise     (switch lines)
    T(j, d, d') = sum over the CG predecessors k of o_j of t(tensor of k, d', d)

then the best line at the last station and the back-pointers give every op's device: O(V_c n^2)
transitions plus O(E_c n) for the T sums, i.e. O(V_d) for a fixed n. A device an op cannot run on
is no state: its line has a gap there (Fig. 6(c)), and every arrival on it is a switch.

On a chain this is exact. On a DAG the recurrence charges, on a switch, every input as if its
producer sat on the previous station's line, and on a stay no input at all (paper §3.2's
assumption): a skip edge from another line is then mis-charged (docs/papers/pim.md). Two
variants are provided:

* ``mode="paper"``: the recurrence above, as published.
* ``mode="path"`` (path-aware, docs/papers/pim.md): T uses the true device of each predecessor on the
  best path into (j-1, d'), read from its stored assignment, on a switch and on a stay alike, and
  counts copies as the executor does (``copies="memory"``: a tensor already copied to a memory on
  that path is not copied again; ``"edge"``: every dashed edge). Exact on chains, a heuristic on
  DAGs (a state keeps one path: the best into it, not the best for what comes later).

Either way the assignment is then scored with the exact sequential model (:meth:`Dcg.latency`,
``copies`` as given); ``DpResult.estimate_s`` is what the recurrence believed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from hetsim.errors import HetsimError
from hetsim_papers.pim.dcg import Dcg

MODES = ("paper", "path")


@dataclass(frozen=True)
class DpResult:
    assignment: np.ndarray          # device index per op
    estimate_s: float               # f* of the recurrence
    compute_s: float                # exact sequential model of the assignment
    transfer_s: float
    seconds: float                  # processor time of the DP (the load does not change it)

    @property
    def latency_s(self) -> float:
        return self.compute_s + self.transfer_s


COPIES = ("memory", "edge")


def als_dp(dcg: Dcg, mode: str = "paper", copies: str = "memory") -> DpResult:
    """Run the modified ALS DP over ``dcg`` (module docstring)."""
    if mode not in MODES:
        raise HetsimError(f"ALS DP: mode={mode!r}; allowed: {', '.join(MODES)}")
    if copies not in COPIES:
        raise HetsimError(f"ALS DP: copies={copies!r}; allowed: {', '.join(COPIES)}")
    t0 = time.process_time()
    assignment, estimate = _paper(dcg) if mode == "paper" else _path_aware(dcg, copies == "memory")
    seconds = time.process_time() - t0
    c, t = dcg.latency(assignment, copies)
    return DpResult(assignment, estimate, c, t, seconds)


def _paper(dcg: Dcg) -> tuple[np.ndarray, float]:
    m, n = dcg.n_ops, dcg.n_devices
    node = dcg.node_s.tolist()
    # T[j][d'][d] for every station j and pair of lines: all inputs of j copied from line d' to d.
    per_edge = dcg.edge_s[dcg.edges[:, 0]].reshape(len(dcg.edges), n * n)
    switch = np.column_stack([np.bincount(dcg.edges[:, 1], weights=per_edge[:, k], minlength=m)
                              for k in range(n * n)]).reshape(m, n, n).tolist()
    inf = float("inf")
    f = [[inf] * n for _ in range(m)]
    back = [[-1] * n for _ in range(m)]
    for d in dcg.cap[0]:
        f[0][d] = node[0][d]
    for j in range(1, m):
        prev_cap = dcg.cap[j - 1]
        sw, fj, bj, fp, nj = switch[j], f[j], back[j], f[j - 1], node[j]
        for d in dcg.cap[j]:
            best, arg = inf, -1
            for dp in prev_cap:
                c = fp[dp] if dp == d else fp[dp] + sw[dp][d]
                if c < best:
                    best, arg = c, dp
            fj[d] = best + nj[d]
            bj[d] = arg
    last = min(dcg.cap[m - 1], key=lambda d: f[m - 1][d])
    estimate = f[m - 1][last]
    assignment = np.empty(m, dtype=np.int64)
    d = last
    for j in range(m - 1, -1, -1):
        assignment[j] = d
        d = back[j][d]
    return assignment, estimate


def _path_aware(dcg: Dcg, per_memory: bool) -> tuple[np.ndarray, float]:
    """Each state keeps the assignment of its best path (so a predecessor's true device is known)
    and, per tensor, the memories it was already copied to on that path (a bit per memory)."""
    m, n = dcg.n_ops, dcg.n_devices
    edge = dcg.edge_s
    mem = dcg.mem_index
    inf = float("inf")
    f = np.full(n, inf)
    paths = np.zeros((n, m), dtype=np.int64)
    copied = np.zeros((n, m), dtype=np.int64)      # bit M: the tensor is in memory M (besides its own)
    for d in dcg.cap[0]:
        f[d] = dcg.node_s[0, d]
        paths[d, 0] = d
    for j in range(1, m):
        preds = np.array(dcg.preds[j], dtype=np.int64)
        prev_cap = dcg.cap[j - 1]
        new_f = np.full(n, inf)
        new_paths = np.zeros_like(paths)
        new_copied = np.zeros_like(copied)
        for d in dcg.cap[j]:
            best, arg, moves = inf, -1, None
            bit = 1 << int(mem[d])
            for dp in prev_cap:
                if not np.isfinite(f[dp]):
                    continue
                c = f[dp]
                move = None
                if len(preds):
                    src = paths[dp, preds]
                    if per_memory:
                        move = (mem[src] != mem[d]) & ((copied[dp, preds] & bit) == 0)
                    else:
                        move = src != d
                    c += float(edge[preds, src, d][move].sum())
                if c < best:
                    best, arg, moves = c, dp, move
            new_f[d] = best + dcg.node_s[j, d]
            new_paths[d] = paths[arg]
            new_paths[d, j] = d
            new_copied[d] = copied[arg]
            if per_memory and moves is not None and moves.any():
                new_copied[d, preds[moves]] |= bit
        f, paths, copied = new_f, new_paths, new_copied
    last = min(dcg.cap[m - 1], key=lambda d: f[d])
    return paths[last].copy(), float(f[last])


def brute_force(dcg: Dcg, copies: str = "memory") -> tuple[np.ndarray, float]:
    """The optimum of the exact sequential model by trying every assignment (small graphs only:
    tests and windows; :mod:`hetsim_papers.pim.exact` vectorises this)."""
    from hetsim_papers.pim.exact import enumerate_paths

    totals = enumerate_paths(dcg, copies=copies)
    best = int(np.argmin(totals.total_s))
    return totals.assignment(best), float(totals.total_s[best])
