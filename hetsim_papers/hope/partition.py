"""HOPE's graph partitioning by upward rank (§2.2, Algorithm 1, with the corrections of docs/papers/hope.md).

``uprank(v) = 1 + max over predecessors`` (eq. 8; sources 1) is the longest path, in vertices,
from an input to v. Cutting a DAG at level r (V0 = uprank <= r, V1 = the rest) leaves every edge
going from V0 to V1, so the coarse graph is acyclic. :func:`bisect` picks the level that keeps
both halves within the balance bound of eq. 7, ``w(V_i) <= (1 + eps) |V| / 2`` (the sum runs over
V: the paper's example, 1.2 x 13 / 2 = 7.8, confirms the typo), and has the smallest vertex cut,
measured as the paper does by the number of vertices on the boundary level (``cut="level"``) or
exactly, the vertices of V0 with an edge into V1 (``cut="exact"``). Ties go to the better balance,
then the lower level. With no balanced level, eps grows by 0.1 [paper]. :func:`partition` bisects
recursively until every part has fewer than NT vertices (NT = 12 [paper]) and returns the parts
(HOPE's *modules*) in an order that every edge respects.

The printed Algorithm 1 never updates ``minBalance`` and tests ``minBalance < |w0 - w1|``, which is
never true, and its loop runs to maxU, which leaves V1 empty; :func:`bisect` implements the intent
(docs/papers/hope.md). A part whose vertices all share one level (an antichain: parallel ops) cannot be
cut by level; it is split in the middle of its workload order, the two halves independent.
"""

from __future__ import annotations

from collections.abc import Sequence

from hetsim.errors import HetsimError

#: HOPE's balance tolerance and its increment (§2.2).
EPS, EPS_STEP = 0.2, 0.1
#: Modules have fewer than NT vertices (§2.2: NT = 12 in the evaluation).
NT = 12
CUTS = ("level", "exact")


def upranks(nodes: Sequence[int], preds: Sequence[Sequence[int]]) -> dict[int, int]:
    """Eq. 8 within ``nodes`` (listed in a topological order): predecessors outside are ignored."""
    inside = set(nodes)
    up: dict[int, int] = {}
    for v in nodes:
        up[v] = 1 + max((up[p] for p in preds[v] if p in inside), default=0)
    return up


def bisect(nodes: Sequence[int], preds: Sequence[Sequence[int]], succs: Sequence[Sequence[int]],
           eps: float = EPS, cut: str = "level") -> tuple[list[int], list[int], dict]:
    """Algorithm 1 (corrected): (V0, V1, what was chosen) for ``nodes`` in a topological order."""
    if cut not in CUTS:
        raise HetsimError(f"partition: cut={cut!r}; allowed: {', '.join(CUTS)}")
    n = len(nodes)
    if n < 2:
        raise HetsimError("partition: a part of fewer than 2 vertices cannot be bisected")
    up = upranks(nodes, preds)
    levels = sorted(set(up.values()))
    count: dict[int, int] = {}
    for v in nodes:
        count[up[v]] = count.get(up[v], 0) + 1
    if len(levels) == 1:   # an antichain: no level separates anything
        half = n // 2
        return list(nodes[:half]), list(nodes[half:]), {"level": None, "cut": 0, "eps": eps,
                                                        "antichain": True}
    acc, below = {}, 0
    for r in levels:
        below += count[r]
        acc[r] = below
    inside = set(nodes)
    while True:
        best: tuple | None = None
        for r in levels[:-1]:
            w0 = acc[r]
            w1 = n - w0
            if max(w0, w1) > (1 + eps) * n / 2 + 1e-9:
                continue
            if cut == "level":
                c = count[r]
            else:
                c = sum(1 for v in nodes if up[v] <= r and any(s in inside and up[s] > r for s in succs[v]))
            key = (c, abs(w0 - w1), r)
            if best is None or key < best:
                best = key
        if best is not None:
            c, _, r = best
            v0 = [v for v in nodes if up[v] <= r]
            v1 = [v for v in nodes if up[v] > r]
            return v0, v1, {"level": r, "cut": c, "eps": round(eps, 10), "antichain": False}
        eps += EPS_STEP


def partition(nodes: Sequence[int], preds: Sequence[Sequence[int]], succs: Sequence[Sequence[int]],
              nt: int = NT, eps: float = EPS, cut: str = "level") -> list[list[int]]:
    """Modules of fewer than ``nt`` vertices (``nodes`` in a topological order), in an order that
    every edge respects (each module's vertices in the given order)."""
    if not isinstance(nt, int) or isinstance(nt, bool) or nt < 2:
        raise HetsimError(f"partition: NT={nt!r}; allowed: an integer >= 2")
    if not (isinstance(eps, int | float) and eps >= 0):
        raise HetsimError(f"partition: eps={eps!r}; allowed: a number >= 0")
    out: list[list[int]] = []
    stack = [list(nodes)]
    while stack:
        part = stack.pop()
        if len(part) < nt:
            out.append(part)
            continue
        v0, v1, _ = bisect(part, preds, succs, eps, cut)
        stack.append(v1)   # V0 first: it is popped next
        stack.append(v0)
    return out
