"""HOPE's node merging (§3.2): short ops join their predecessor's super-op, so that HOPE:GS and
HOPE:LP schedule fewer, larger vertices and save the transfers between them.
"""

from __future__ import annotations

from hetsim.exploration.dag.tables import Groups, SchedView

#: What "short" is measured on (§3.2: "For a short running operator, if it has only one
#: predecessor, the algorithm prefers to dispatch it to the same computing device as its
#: predecessor"): the op's fastest EP, before scheduling (super-ops, :func:`merge_short_ops`), or
#: the EP its predecessor is placed on, during scheduling (:func:`followers`).
SHORT = ("fastest", "predecessor")


def merge_short_ops(view: SchedView, threshold_s: float | None) -> Groups:
    """HOPE's node merging (§3.2): an op that is *short* (its time on the fastest EP
    that can run it is below ``threshold_s``) and has exactly one predecessor joins its
    predecessor's super-op, provided some EP can run the whole super-op. ``None`` merges nothing.

    Every member but the root has its one predecessor inside the super-op, so every edge entering
    a super-op enters at its root and the super-op graph stays acyclic."""
    n = view.n
    of = list(range(n))
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    capable = [set(c) for c in view.capable]
    group_cap = {i: set(capable[i]) for i in range(n)}
    if threshold_s is not None:
        for i in range(n):
            preds = view.preds[i]
            if len(preds) != 1:
                continue
            if min(view.cl_list[i][d] for d in view.capable[i]) >= threshold_s:
                continue
            g = of[preds[0]]
            common = group_cap[g] & capable[i]
            if not common:
                continue
            members[g].append(i)
            del members[i]
            group_cap[g] = common
            of[i] = g
    roots = sorted(members)
    gid = {r: k for k, r in enumerate(roots)}
    of_g = [gid[of[i]] for i in range(n)]
    preds_g: list[list[int]] = [[] for _ in roots]
    succs_g: list[list[int]] = [[] for _ in roots]
    for i in range(n):
        for s in view.succs[i]:
            a, b = of_g[i], of_g[s]
            if a != b and b not in succs_g[a]:
                succs_g[a].append(b)
                preds_g[b].append(a)
    return Groups([members[r] for r in roots], of_g, preds_g, succs_g)


def followers(view: SchedView, threshold_s: float | None) -> list[dict[int, list[int]]]:
    """Node merging with "short" measured on the predecessor's EP (:data:`SHORT`): per op p and
    EP d, the ops that follow p onto d when a scheduler places p there: each successor with p as
    its only predecessor whose time on d is below ``threshold_s`` (``None``: none follow). A
    scheduler appends them right after p, and their own followers after them."""
    out: list[dict[int, list[int]]] = [{} for _ in range(view.n)]
    if threshold_s is None:
        return out
    for i in range(view.n):
        preds = view.preds[i]
        if len(preds) != 1:
            continue
        p = preds[0]
        for d in view.capable[i]:
            if d in view.capable[p] and view.cl_list[i][d] < threshold_s:
                out[p].setdefault(d, []).append(i)
    return out
