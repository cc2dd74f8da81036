"""HOPE:LP: node merging, partitioning into modules, and HOPE's ILP per module (HOPE §2, §4).

The graph (§4: "modules consisting of a number of super-ops") is cut into modules of fewer than NT
vertices by :func:`~hetsim_papers.hope.partition.partition`; the modules form a chain every edge
respects, and each is solved, in that order, as HOPE's ILP
(:func:`~hetsim_papers.hope.milp.solve_paper_cpsat`) with a rolling horizon (the paper says only
that it "solves ILP for each subgraph individually"; the stitching is ours: docs/papers/hope.md):

* the vertices of earlier modules are fixed; an input that one of them produces is ready when the
  plan so far, replayed exactly as the engine will (:class:`~hetsim.exploration.dag.tables.PlanState`),
  finishes it, and moving it to device d costs C[dev -> d] (per edge: the ILP knows no caching);
* a device's work starts after what the plan so far has put on it;
* the module's solution is appended to the plan, each device's vertices in the order of their
  ILP start times.

**Globally determined** (§5.2: HOPE:LP "finding the optimal solution for each subgraph and
globally determining the scheduling policy"). A module solved for its own makespan alone is
myopic: it cannot see that the next module needs a device or a tensor early. By default each
module's ILP also holds the next module (``lookahead=1``): the two are solved exactly together
and only the first one's plan is kept, so every module's plan is optimal for the module *and* its
successor. ``lookahead=0`` is the myopic reading (each module alone, hetsim's reading until
issue 30); ``objective="tails"`` another global reading (each vertex's end plus the longest path
after it, a lower bound on the whole graph's latency, eq. 2's tau, minimised first).

**Node merging** (§3.2). ``short="predecessor"`` (default): an op with one predecessor that is
short on the device its predecessor runs on goes there with it (the ILP: x[p, d] implies x[i, d]);
the ILP schedules single ops. ``short="fastest"``: short on its fastest device, merged into its
predecessor's super-op before partitioning (hetsim's reading until issue 30).

``ilp="engine"`` solves each module under the engine's rules instead
(:func:`~hetsim.exploration.dag.exact.solve_engine_cpsat`: tensor caching, transfers as intervals
on their lanes, the copies already made reused): an ablation of the paper's ILP simplifications.
CP-SAT's limit is its deterministic time (``deterministic=True``): the plan never depends on the
machine's load.

:func:`hope_lp` is a function of the problem's tables; the registry makes it the ``HOPE:LP``
explorer (:class:`~hetsim.exploration.dag.explorer.DagScheduler`).
"""

from __future__ import annotations

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice, check_number
from hetsim.exploration.dag.exact import UNIT_S, Solution, solve_engine_cpsat, to_units
from hetsim.exploration.dag.tables import Groups, Plan, PlanState, SchedView, group_times
from hetsim_papers.hope.merging import SHORT, followers, merge_short_ops
from hetsim_papers.hope.milp import Instance, ilp_schedule, solve_paper_cpsat
from hetsim_papers.hope.partition import CUTS, EPS, NT, partition

#: The module models: HOPE's ILP (eqs. 1-6), or the engine's rules.
ILPS = ("paper", "engine")
#: What a module's ILP minimises: its makespan (eq. 2 over the module and the modules it looks
#: ahead to), or first the whole graph's latency as far as the module decides it (``"tails"``:
#: each vertex's end plus the longest path after it), then its makespan.
OBJECTIVES = ("makespan", "tails")


def tails(group_cl: list[list[float]], succs: list[list[int]]) -> list[float]:
    """Per super-op, a lower bound on the time from its end to the end of the graph: the longest
    path of successors, each at its fastest device, communication left out (super-ops numbered
    in a topological order)."""
    fastest = [min(row) for row in group_cl]
    out = [0.0] * len(group_cl)
    for g in range(len(group_cl) - 1, -1, -1):
        out[g] = max((fastest[h] + out[h] for h in succs[g]), default=0.0)
    return out


#: How far a module's plan looks (:func:`hope_lp`): ``"global"`` (each module solved with the next
#: ``lookahead`` ones, then the whole graph's ILP from the modules' plan) or ``"module"`` (each
#: module alone, for its own makespan: the myopic reading, hetsim's until issue 30).
SCOPES = ("global", "module")


def _module_instance(view: SchedView, groups: Groups, gt: list[list[float]], mod: list[int], state: PlanState,
                     follow: list[dict[int, list[int]]] | None) -> Instance:
    """HOPE's ILP over the super-ops ``mod`` (in order), the plan so far ``state`` fixed: inputs
    from earlier modules ready when the replayed plan finishes them, moved at C[dev -> d]; devices
    free when the plan's work on them ends (module docstring)."""
    members = groups.members
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
    if follow is not None:   # super-ops are single ops here
        for j, h in enumerate(mod):
            for d, fs in follow[h].items():
                inst.follow += [(j, local[f], d) for f in fs if f in local]
            (p,) = view.preds[h] if len(view.preds[h]) == 1 else (None,)
            if p is not None and p not in local and h in follow[p].get(state.dev[p], ()):
                inst.forced[j] = state.dev[p]
    return inst


def hope_lp(view: SchedView, nt: int = NT, eps: float = EPS, cut: str = "level",
            merge_threshold_s: float | None = 1e-4, time_limit_s: float = 20.0, unit_s: float = UNIT_S,
            tie_break: bool = False, ilp: str = "paper", scope: str = "global", lookahead: int | None = None,
            whole_graph_s: float | None = 2.0, whole_graph_max: int = 64, objective: str = "makespan",
            short: str = "predecessor", deterministic: bool = True, seed: int = 0) -> Plan:
    """HOPE:LP (§2, §4; module docstring): node merging, partitioning by upward rank into modules
    of fewer than NT vertices, HOPE's ILP per module by CP-SAT (rolling horizon), then (``scope=
    "global"``) the whole graph's ILP started from the modules' plan.

    Parameters
    ----------
    nt : int
        Modules have fewer than ``nt`` vertices (12 [paper]).
    eps : float
        Balance tolerance of the bisection (0.2 [paper], raised by 0.1 until a level fits).
    cut : {"level", "exact"}
        The vertex cut: the paper's count of vertices on the boundary level, or the exact one.
    merge_threshold_s : float or None
        As HOPE:GS's (None: the ILP schedules single ops).
    time_limit_s : float
        CP-SAT's limit per module (deterministic seconds unless ``deterministic=False``); a module
        without a plan by then is an error.
    unit_s : float
        Time unit of the integer model.
    tie_break : bool
        Among optimal plans of a module, the one whose ops end earliest (sum of ends); off by
        default: it makes CP-SAT 2-3x slower and the plan keeps only the per-device order.
    ilp : {"paper", "engine"}
        The module model: HOPE's ILP (per-edge communication inside the consumer's time, no
        caching), or the engine's rules (caching, transfers on their lanes): an ablation.
    scope : {"global", "module"}
        :data:`SCOPES`: the global reading (default) or the myopic one (each module alone).
    lookahead : int or None
        ``scope="global"``: solve each module together with the next ``lookahead`` modules and keep
        only its own plan (None: 1). ``scope="module"``: 0 (None or 0 only).
    whole_graph_s : float or None
        ``scope="global"``: CP-SAT's limit (deterministic s) for HOPE's ILP over the whole graph,
        started from the modules' plan; its plan replaces theirs when the ILP finds it shorter
        (None: no whole-graph pass). Ignored for ``scope="module"``.
    whole_graph_max : int
        The whole-graph pass runs on graphs of at most this many super-ops (where CP-SAT proves
        the optimum of HOPE's ILP in a fraction of a second; NAS-L's 872 are far beyond) [choice].
    objective : {"makespan", "tails"}
        What a module's ILP minimises (:data:`OBJECTIVES`).
    short : {"fastest", "predecessor"}
        Node merging's "short" (:data:`~hetsim_papers.hope.merging.SHORT`): on the op's fastest
        EP (super-ops, partitioned), or on its predecessor's EP: the ILP schedules single ops, an
        op short on device d with one predecessor runs on d when its predecessor does.
    deterministic : bool
        CP-SAT's limit in deterministic time (independent of the machine's load) or wall time.
    seed : int
        CP-SAT's random seed (the exploration's).
    """
    name = "HOPE:LP"
    check_choice(name, "ilp", ilp, ILPS)
    check_number(name, "nt", nt, low=2, integer=True)
    check_number(name, "eps", eps, low=0.0)
    check_choice(name, "cut", cut, CUTS)
    if merge_threshold_s is not None:
        check_number(name, "merge_threshold_s", merge_threshold_s, low=0.0)
    check_number(name, "time_limit_s", time_limit_s, low=0.0, low_open=True)
    check_number(name, "unit_s", unit_s, low=1e-12)   # CP-SAT counts time in int64 units
    check_choice(name, "tie_break", tie_break, (True, False))
    check_choice(name, "scope", scope, SCOPES)
    check_choice(name, "objective", objective, OBJECTIVES)
    if lookahead is not None:
        check_number(name, "lookahead", lookahead, low=0, high=8, integer=True)
    if scope == "module" and lookahead:
        raise HetsimError(f"{name}: scope='module' solves each module alone; lookahead={lookahead!r} needs "
                          "scope='global'")
    lookahead = (1 if lookahead is None else lookahead) if scope == "global" else 0
    if whole_graph_s is not None:
        check_number(name, "whole_graph_s", whole_graph_s, low=0.0, low_open=True)
    check_number(name, "whole_graph_max", whole_graph_max, low=1, integer=True)
    check_choice(name, "short", short, SHORT)
    check_choice(name, "deterministic", deterministic, (True, False))
    follow = followers(view, merge_threshold_s) if short == "predecessor" else None
    if follow is not None and ilp != "paper":
        raise HetsimError(f"{name}: short='predecessor' is written for HOPE's ILP (ilp='paper'), not ilp={ilp!r}")
    groups = merge_short_ops(view, None if follow is not None else merge_threshold_s)
    gt = group_times(view, groups).tolist()
    modules = partition(list(range(groups.n)), groups.preds, groups.succs, nt, eps, cut)
    tail = tails(gt, groups.succs)
    state = PlanState(view)
    members = groups.members
    solve_s, det_s, proven, sizes = 0.0, 0.0, 0, []
    for mi, first in enumerate(modules):
        # the module, and the modules it looks ahead to (solved with it, then dropped)
        mod = [g for m in modules[mi:mi + 1 + lookahead] for g in m]
        inst = _module_instance(view, groups, gt, mod, state, follow)
        if objective == "tails":
            inst.tail = [tail[g] for g in mod]
        ops = [view.names[i] for g in first for i in members[g]]
        where = (f"{name}: the ILP of module {mi + 1} of {len(modules)} ({len(first)} super-ops, "
                 f"ops {ops[0]}..{ops[-1]}" + (f", {len(mod) - len(first)} more looked ahead to)"
                                              if len(mod) > len(first) else ")"))
        if ilp == "paper":
            sol = solve_paper_cpsat(inst, time_limit_s, seed, unit_s, tie_break, where, deterministic)
        else:
            sol = solve_engine_cpsat(view, time_limit_s, seed, unit_s, where, groups, mod, state,
                                     deterministic=deterministic)
        solve_s += sol.wall_s
        det_s += sol.deterministic_s
        proven += sol.optimal
        sizes.append(len(first))
        for j in sorted(range(len(first)), key=lambda j: (sol.start[j], mod[j])):
            for i in members[mod[j]]:
                state.append(i, sol.dev[j])
        state.commit()
    info = {"modules": len(modules), "module_sizes": sizes, "modules_proven_optimal": proven,
            "super_ops": groups.n, "merged_ops": view.n - groups.n}
    if (scope == "global" and whole_graph_s is not None and ilp == "paper" and len(modules) > 1
            and groups.n <= whole_graph_max):
        state, whole = _whole_graph(view, groups, gt, state, follow, whole_graph_s, seed, unit_s, deterministic)
        solve_s += whole.wall_s
        det_s += whole.deterministic_s
        info.update(whole_graph_improved=whole.status == "improved", whole_graph_optimal=whole.optimal,
                    whole_graph_bound_s=whole.bound_s)
    return Plan.of(state, **info, solver_s=solve_s, solver_deterministic_s=det_s)


def _whole_graph(view: SchedView, groups: Groups, gt: list[list[float]], state: PlanState,
                 follow: list[dict[int, list[int]]] | None, limit_s: float, seed: int, unit_s: float,
                 deterministic: bool) -> tuple[PlanState, Solution]:
    """HOPE's ILP over every super-op, started from the modules' plan (``state``): the plan of its
    solution when the ILP finds it shorter than the modules' plan (``status`` "improved"), else
    the modules' plan (the solution's ``status`` "kept")."""
    every = list(range(groups.n))
    inst = _module_instance(view, groups, gt, every, PlanState(view), follow)
    dev = [state.dev[groups.members[g][0]] for g in every]
    order = [[groups.of[i] for i in queue if groups.members[groups.of[i]][0] == i] for queue in state.order]
    times = ilp_schedule(inst, dev, order, unit_s)
    where = f"HOPE:LP: the ILP of the whole graph ({groups.n} super-ops)"
    sol = solve_paper_cpsat(inst, limit_s, seed, unit_s, False, where, deterministic, hint=(dev, order))
    kept = times is not None and to_units(sol.makespan_s, unit_s) >= max(times[1], default=0)
    sol.status = "kept" if kept else "improved"
    if kept:
        return state, sol
    new = PlanState(view)
    for g in sorted(every, key=lambda g: (sol.start[g], g)):
        for i in groups.members[g]:
            new.append(i, sol.dev[g])
    new.commit()
    return new, sol
