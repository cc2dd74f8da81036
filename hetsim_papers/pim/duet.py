"""DUET(x), the greedy-correction baseline of the PIM paper (seed 003, §4.3; ref. [40]: Zhang, Hu
and Li, IPDPS 2021, built for coupled CPU-GPU).

The paper describes it in two sentences: "allocates a computing device with the fastest execution
time on a node without considering communication costs between devices. Then, it gradually
increases the coverage of the nodes starting from the first node and adjusts the allocation by
considering the communication cost". DUET(x) covers the first x of the nodes in topological order.

Rebuilt here (§4.3 describes it in words; the rule: docs/papers/pim.md):

1. every op on its fastest device (node cost only): DUET(x = 0 %);
2. for the first floor(x · V_c) ops in topological order, one op at a time, move the op to the
   device that minimises the latency given every other op's current device (ties keep the current
   device), ``passes`` times. Only the op's node cost and the copies of its own output and of its
   inputs change with its device, so the score is computed from those, exactly as
   :meth:`Dcg.latency` counts copies (``copies``).
"""

from __future__ import annotations

import numpy as np

from hetsim.errors import HetsimError
from hetsim_papers.pim.dcg import Dcg


def fastest(dcg: Dcg) -> np.ndarray:
    """Every op on its fastest capable device (ties: the lower device index)."""
    return np.array([min(c, key=lambda d: (dcg.node_s[j, d], d)) for j, c in enumerate(dcg.cap)],
                    dtype=np.int64)


#: Most correction passes (the paper makes one; each further pass only refines the last).
MAX_PASSES = 1000


def duet(dcg: Dcg, x: float, passes: int = 1, copies: str = "memory") -> np.ndarray:
    """DUET(x): the module docstring's rule. ``x`` in [0, 1]."""
    if not 0.0 <= float(x) <= 1.0:
        raise HetsimError(f"DUET: x={x!r}; allowed: a fraction of the nodes in [0, 1] (0.5 = 50 %)")
    if isinstance(passes, bool) or int(passes) != passes or not 1 <= int(passes) <= MAX_PASSES:
        raise HetsimError(f"DUET: passes={passes!r}; allowed: an integer in [1, {MAX_PASSES}]")
    if copies not in ("memory", "edge"):
        raise HetsimError(f"DUET: copies={copies!r}; allowed: 'memory', 'edge'")
    a = fastest(dcg)
    covered = int(np.floor(float(x) * dcg.n_ops + 1e-9))
    for _ in range(int(passes)):
        before = a.copy()
        for j in range(covered):
            current = int(a[j])
            best, arg = np.inf, current
            for d in dcg.cap[j]:
                a[j] = d
                c = dcg.node_s[j, d] + sum(_copies_of(dcg, a, k, copies) for k in (j, *dcg.preds[j]))
                if c < best - 1e-15 or (abs(c - best) <= 1e-15 and d == current):
                    best, arg = c, d
            a[j] = arg
        if np.array_equal(a, before):   # a pass is a function of the assignment: a fixed point
            break
    return a


def _copies_of(dcg: Dcg, a: np.ndarray, k: int, copies: str) -> float:
    """The copy time of op k's output under assignment ``a``."""
    src = int(a[k])
    total = 0.0
    if copies == "edge":
        for j in dcg.succs[k]:
            if a[j] != src:
                total += dcg.edge_s[k, src, a[j]]
        return float(total)
    mem = dcg.mem_index
    done: set[int] = set()
    for j in dcg.succs[k]:             # in order: the first consumer in a memory pays
        mj = int(mem[a[j]])
        if mj != mem[src] and mj not in done:
            done.add(mj)
            total += dcg.edge_s[k, src, a[j]]
    return float(total)
