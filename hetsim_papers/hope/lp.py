"""HOPE:LP: node merging, partitioning into modules, and HOPE's ILP per module (HOPE §2, §4).

The graph of super-ops (§3.2; §4: "modules consisting of a number of super-ops") is cut into
modules of fewer than NT super-ops by :func:`~hetsim_papers.hope.partition.partition`; the
modules form a chain every edge respects, and each is solved, in that order, as HOPE's ILP
(:func:`~hetsim_papers.hope.milp.solve_paper_cpsat`) with a rolling horizon (the paper says only
that it "solves ILP for each subgraph individually"; digest §2.3, §11.6):

* the super-ops of earlier modules are fixed; an input that one of them produces is ready when the
  plan so far, replayed exactly as the engine will (:class:`~hetsim_papers.hope.view.PlanState`),
  finishes it, and moving it to device d costs C[dev -> d] (per edge: the ILP knows no caching);
* a device's work starts after what the plan so far has put on it;
* the module's solution is appended to the plan, each device's super-ops in the order of their
  ILP start times.

``ilp="engine"`` solves each module under the engine's rules instead
(:func:`~hetsim_papers.hope.milp.solve_engine_cpsat`: tensor caching, transfers as intervals on
their lanes, the copies already made reused): an ablation of the paper's ILP simplifications.
"""

from __future__ import annotations

from hetsim.errors import HetsimError
from hetsim_papers.hope.milp import UNIT_S, Instance, solve_engine_cpsat, solve_paper_cpsat
from hetsim_papers.hope.partition import EPS, NT, partition
from hetsim_papers.hope.view import Plan, PlanState, SchedView, group_times, merge_short_ops

#: The module models: HOPE's ILP (eqs. 1-6), or the engine's rules.
ILPS = ("paper", "engine")


def hope_lp(view: SchedView, nt: int = NT, eps: float = EPS, cut: str = "level",
            merge_threshold_s: float | None = 1e-4, time_limit_s: float = 20.0, seed: int = 0,
            unit_s: float = UNIT_S, tie_break: bool = False, name: str = "HOPE:LP",
            ilp: str = "paper") -> Plan:
    """HOPE:LP (module docstring); ``merge_threshold_s=None`` solves the op graph unmerged."""
    if ilp not in ILPS:
        raise HetsimError(f"{name}: ilp={ilp!r}; allowed: {', '.join(ILPS)}")
    groups = merge_short_ops(view, merge_threshold_s)
    gt = group_times(view, groups).tolist()
    modules = partition(list(range(groups.n)), groups.preds, groups.succs, nt, eps, cut)
    state = PlanState(view)
    members = groups.members
    solve_s, proven, sizes = 0.0, 0, []
    for mi, mod in enumerate(modules):
        local = {g: j for j, g in enumerate(mod)}
        D = view.D
        release = [0.0] * len(mod)
        ext = [[0.0] * D for _ in mod]
        internal: dict[tuple[int, int], list[list[float]]] = {}
        for j, h in enumerate(mod):
            member_set = set(members[h])
            for i in members[h]:
                for k in view.preds[i]:
                    if k in member_set:
                        continue
                    gk = groups.of[k]
                    if gk in local:
                        c = internal.setdefault((local[gk], j), [[0.0] * D for _ in range(D)])
                        table = view.comm_table(k)
                        for a in range(D):
                            for d in range(D):
                                c[a][d] += table[a][d]
                    else:
                        release[j] = max(release[j], state.fin[k])
                        for d in range(D):
                            if state.dev[k] != d:
                                ext[j][d] += view.C(k, state.dev[k], d)
        inst = Instance([gt[g] for g in mod], [(a, b, c) for (a, b), c in internal.items()], release, ext,
                        list(state.avail))
        ops = [view.names[i] for g in mod for i in members[g]]
        where = (f"{name}: the ILP of module {mi + 1} of {len(modules)} ({len(mod)} super-ops, "
                 f"ops {ops[0]}..{ops[-1]})")
        if ilp == "paper":
            sol = solve_paper_cpsat(inst, time_limit_s, seed, unit_s, tie_break, where)
        else:
            sol = solve_engine_cpsat(view, time_limit_s, seed, unit_s, where, groups, mod, state)
        solve_s += sol.wall_s
        proven += sol.optimal
        sizes.append(len(mod))
        for j in sorted(range(len(mod)), key=lambda j: (sol.start[j], mod[j])):
            for i in members[mod[j]]:
                state.append(i, sol.dev[j])
        state.commit()
    return Plan.of(state, modules=len(modules), module_sizes=sizes, modules_proven_optimal=proven,
                   super_ops=groups.n, merged_ops=view.n - groups.n, solver_s=solve_s)
