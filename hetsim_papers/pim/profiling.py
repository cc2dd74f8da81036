"""The PIM paper's low-overhead profiling (seed 003, §3.2, Algorithm 1).

The DP needs every node cost a(v, d) and every DA class's copy cost. The paper measures them
with whole-model ONNX Runtime runs:

1. **Node profiling** (Algorithm 1 lines 4-8): n runs, run k with device k first in the provider
   priority list, so every (op, device) pair of the DCG runs once. These runs also expose the DA
   classes of the copies they make.
2. **Edge profiling** (lines 10-25): a sweep over the DCG in topological order builds, at every
   node, the maximal (under bit-set inclusion) pairs (L, P): P an execution path from START to
   the node (one device per operator so far), L the DA classes known after running P (a bit per
   class). A node's incoming paths are the pairs of the siblings of the *previous operator* in
   topological order (the chain the DP also walks); entering the node on device d adds the classes
   of the dashed edges from each CG predecessor's device on P to d. The sweep stops at the first
   node with an all-ones L; its path, completed to END, is the one extra run. The paper needs 3 + 1
   runs for all three models, and 4 DA classes are left after the node runs.

This module is the simulator's version (docs/papers/pim.md): it plans the runs (assignments) and counts
them; :class:`hetsim_papers.pim.explorers.OptimalPartitioning` measures them on the problem, charging the
tuning clock. The trace of the sweep (``trace=True``) is the paper's Fig. 5 table.

Choices where the paper is silent (docs/papers/pim.md):

* Node run k puts device k first, then ONNX Runtime's fallback: the other devices by how many ops
  they can run, most first (``fallback="general"``: the CPU provider, here CPU_S, which runs every
  op): (CPU_S), (CPU_P, CPU_S), (PIM, CPU_S). ``fallback="specialised"`` orders them fewest first
  instead, (PIM, CPU_P, CPU_S), which exposes the CPU_P <-> PIM classes in the node runs already.
* Among pairs with equal L the first kept is one whose entering edges found a new class (lines
  16-18 before line 23), then the earlier sibling; at most ``max_pairs`` pairs per node (the most
  bits first), a safety valve the paper's graphs never reach.
* A stopped path is completed by staying on its last device where capable, else the fallback
  order. If no path covers every class, a greedy set cover of the last operator's pairs
  gives several edge runs (Algorithm 1 line 20).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hetsim.errors import HetsimError
from hetsim_papers.pim.dcg import Dcg


@dataclass
class ProfilePlan:
    """The profiling runs of a DCG and what each exposes."""

    n_classes: int                                  # DA classes (K)
    node_runs: list[np.ndarray]                     # one assignment per device
    node_priorities: list[tuple[str, ...]]
    edge_runs: list[np.ndarray]
    known_after_node_runs: int                      # DA classes the node runs expose
    sweep_seconds: float                            # processor time of the edge-profiling sweep
    trace: list[dict] = field(default_factory=list)  # the sweep, node by node (trace=True)
    covered: int = 0                                # DA classes known after every run

    @property
    def left_after_node_runs(self) -> int:
        return self.n_classes - self.known_after_node_runs

    @property
    def runs(self) -> list[np.ndarray]:
        return self.node_runs + self.edge_runs


FALLBACKS = ("general", "specialised")


def fallback_order(dcg: Dcg, fallback: str = "general") -> list[int]:
    """Devices by how many ops they can run: most first (``general``: ONNX Runtime falls back to
    its CPU provider) or fewest first (``specialised``); ties in device order."""
    if fallback not in FALLBACKS:
        raise HetsimError(f"profiling: fallback={fallback!r}; allowed: {', '.join(FALLBACKS)}")
    count = [sum(d in c for c in dcg.cap) for d in range(dcg.n_devices)]
    sign = -1 if fallback == "general" else 1
    return sorted(range(dcg.n_devices), key=lambda d: (sign * count[d], d))


def priority_assignment(dcg: Dcg, priority: Sequence[int]) -> np.ndarray:
    """Each op on the first device of ``priority`` that can run it (ONNX Runtime's provider
    priority list); an op none of them runs is an error."""
    out = np.empty(dcg.n_ops, dtype=np.int64)
    for j, c in enumerate(dcg.cap):
        d = next((d for d in priority if d in c), None)
        if d is None:
            raise HetsimError(f"{dcg.name}: op {dcg.ops[j]!r} runs on none of "
                              f"{[dcg.devices[i] for i in priority]}; allowed: a priority list that "
                              f"includes one of {[dcg.devices[i] for i in c]}")
        out[j] = d
    return out


def node_profiling(dcg: Dcg, fallback: str = "general") -> tuple[list[np.ndarray], list[tuple[str, ...]]]:
    """The n node-profiling runs and their priority lists (module docstring)."""
    order = fallback_order(dcg, fallback)
    runs, priorities = [], []
    for d in range(dcg.n_devices):
        prio = [d] + [e for e in order if e != d]
        runs.append(priority_assignment(dcg, prio))
        priorities.append(tuple(dcg.devices[e] for e in prio))
    return runs, priorities


def _bits(classes) -> int:
    out = 0
    for k in classes:
        out |= 1 << k
    return out


def plan_profiling(dcg: Dcg, measured: Sequence[int] | None = None, trace: bool = False,
                   max_pairs: int = 32, fallback: str = "general") -> ProfilePlan:
    """Plan the node runs and the edge runs of ``dcg``. ``measured`` overrides the DA classes the
    node runs expose (the Fig. 5 example starts from e4 alone)."""
    if isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < 1:
        raise HetsimError(f"profiling: max_pairs={max_pairs!r}; allowed: an integer >= 1")
    classes, of_copy = dcg.da_classes()
    K = len(classes)
    node_runs, priorities = node_profiling(dcg, fallback)
    if measured is None:
        known = set()
        for a in node_runs:
            known |= dcg.copies(a)
    else:
        known = set(measured)
    start_bits = _bits(known)
    full = (1 << K) - 1
    t0 = time.process_time()
    order = fallback_order(dcg, fallback)
    edge_runs, rows = _sweep(dcg, of_copy, start_bits, full, trace, max_pairs, order)
    seconds = time.process_time() - t0
    covered = start_bits
    for a in edge_runs:
        covered |= _bits(dcg.copies(a))
    return ProfilePlan(K, node_runs, priorities, edge_runs, len(known), seconds, rows,
                       bin(covered).count("1"))


def _sweep(dcg: Dcg, of_copy, start_bits: int, full: int, trace: bool, max_pairs: int,
           order: list[int]):
    m = dcg.n_ops
    rows: list[dict] = []
    if start_bits == full:
        return [], rows
    # S(START): one pair, the path of no operator.
    prev: dict[int, list[tuple[int, np.ndarray]]] = {-1: [(start_bits, np.full(m, -1, dtype=np.int64))]}
    for j in range(m):
        preds = dcg.preds[j]
        current: dict[int, list[tuple[int, np.ndarray]]] = {}
        # Siblings in the paper's order: the highest device first ([A0, (B1, B0), ...]).
        for d in sorted(dcg.cap[j], reverse=True):
            found, inherited = [], []
            for dp in sorted(prev, reverse=True):
                for bits, path in prev[dp]:
                    new = 0
                    for k in preds:
                        src = int(path[k])
                        if src != d:
                            cls = of_copy.get((k, src, d))
                            if cls is not None:
                                new |= 1 << cls
                    extended = path.copy()
                    extended[j] = d
                    if new & ~bits:
                        found.append((bits | new, extended))
                    else:
                        inherited.append((bits, extended))
            kept = _maximal(found + inherited, max_pairs)
            current[d] = kept
            if trace:
                top = kept[0][0] if kept else 0
                rows.append({"node": f"{dcg.ops[j]}{d}", "op": dcg.ops[j], "device": dcg.devices[d],
                             "L": [top >> k & 1 for k in range(full.bit_length())],
                             "pairs": len(kept),
                             "P": [f"{dcg.ops[i]}{int(kept[0][1][i])}" for i in range(j + 1)]})
            for bits, path in kept:
                if bits == full:
                    return [_complete(dcg, path, j, order)], rows
        prev = current
    # END without a single covering path: a greedy set cover of the last operator's pairs.
    pairs = [p for ps in prev.values() for p in ps]
    runs = []
    have = start_bits
    while have != full:
        best = max(pairs, key=lambda p: bin(p[0] & ~have).count("1"))
        if not best[0] & ~have:
            break
        runs.append(_complete(dcg, best[1], m - 1, order))
        have |= best[0]
    if have != full:
        # Classes no kept path reaches (the pair cap cut them): one direct run per class.
        for (k, a, b), cls in sorted(of_copy.items(), key=lambda kv: kv[1]):
            if not have >> cls & 1:
                run = _through(dcg, k, a, b, order)
                runs.append(run)
                have |= _bits(dcg.copies(run))
    return runs, rows


def _maximal(cands: list[tuple[int, np.ndarray]], max_pairs: int) -> list[tuple[int, np.ndarray]]:
    """The pairs whose L no other pair's L strictly contains; equal L: the first; at most
    ``max_pairs`` (the most classes first; equal counts in the order of the pairs)."""
    first: dict[int, np.ndarray] = {}
    for bits, path in cands:
        first.setdefault(bits, path)
    keys = list(first)
    if len(keys) > 1:
        # Every pair's L against every other's at once (64 classes a word): L_i is covered when
        # L_i & ~L_j == 0 for some other j. The L are distinct, so no two cover each other.
        n_words = max(1, -(-max(b.bit_length() for b in keys) // 64))
        words = np.array([[(b >> (64 * w)) & _WORD for w in range(n_words)] for b in keys], dtype=np.uint64)
        covered = np.ones((len(keys), len(keys)), dtype=bool)
        for w in range(n_words):
            col = words[:, w]
            covered &= (col[:, None] & ~col[None, :]) == 0
        np.fill_diagonal(covered, False)
        keys = [keys[i] for i in np.flatnonzero(~covered.any(axis=1))]
    kept = [(b, first[b]) for b in keys]
    kept.sort(key=lambda p: -bin(p[0]).count("1"))
    return kept[:max_pairs]


#: One 64-bit word of a DA-class bit set.
_WORD = (1 << 64) - 1


def _complete(dcg: Dcg, path: np.ndarray, j: int, order: list[int]) -> np.ndarray:
    """A whole-model run from a path that stops at op j: stay on the last device where capable,
    else the fallback order."""
    out = path.copy()
    last = int(path[j])
    for i in range(j + 1, dcg.n_ops):
        out[i] = last if last in dcg.cap[i] else next(e for e in order if e in dcg.cap[i])
    return out


def _through(dcg: Dcg, k: int, a: int, b: int, order: list[int]) -> np.ndarray:
    """A run that copies op k's output from device a to device b: k on a, a consumer able to run
    on b there, everything else on its fallback device."""
    out = np.array([next(e for e in order if e in c) for c in dcg.cap], dtype=np.int64)
    out[k] = a
    consumer = next(s for s in dcg.succs[k] if b in dcg.cap[s])
    out[consumer] = b
    return out
