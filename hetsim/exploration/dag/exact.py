"""The exact schedule of a small DAG under the engine's rules, solved with OR-Tools CP-SAT.

:func:`solve_engine_cpsat` models the problem as the DAG engine runs a plan: every op (or super-op)
on one EP for its time there, no overlap on an EP's lane, a tensor crossing to an EP once when the
problem caches tensors (its transfer an optional interval, present when a consumer runs there and
its producer does not), the transfer occupying the consumer's EP (``comm="consumer"``), a copy
lane (``"copy"``) or nothing (``"free"``). The engine puts a transfer right before its first
consumer in the EP's queue; the model lets it go anywhere after its producer, so its optimum is a
lower bound on the latency of every plan, reached when the transfers need no reordering (the
tests compare). :func:`exact` is the ``ILP-exact`` explorer's function: the optimal plan of a
whole graph and that bound, the reference for optimality gaps.

The model also solves one *module* of a rolling horizon (HOPE:LP's ablation under the engine's
rules): a subset of super-ops placed after a partial plan.

Times are integers of ``unit_s`` (1 us by default): CP-SAT is an integer solver. Solves are
deterministic (one worker, a seed). A model without a solution in its time limit raises a
HetsimError naming what and where; a solution not proven optimal is returned with its bound.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_number
from hetsim.exploration.dag.dmda import dmdar
from hetsim.exploration.dag.tables import Groups, Plan, PlanState, SchedView

#: Default time unit of the integer models, s.
UNIT_S = 1e-6


@dataclass
class Solution:
    """A solved model: device and start/end of every vertex (s), the makespan, whether CP-SAT
    proved it optimal, the solver's lower bound, its wall time and status."""

    dev: list[int]
    start: list[float]
    end: list[float]
    makespan_s: float
    optimal: bool
    bound_s: float
    wall_s: float
    status: str
    #: CP-SAT's deterministic time of the solve (its own measure of work, independent of the
    #: machine's load).
    deterministic_s: float = 0.0

    def order(self, D: int) -> list[list[int]]:
        """Each device's vertices by start (ties: index)."""
        out: list[list[int]] = [[] for _ in range(D)]
        for i in sorted(range(len(self.dev)), key=lambda i: (self.start[i], i)):
            out[self.dev[i]].append(i)
        return out


def to_units(t: float, unit: float) -> int:
    """A time in integer units of ``unit`` (s), rounded."""
    return int(round(t / unit))


def solve_cpsat(model, time_limit_s: float, seed: int, where: str, deterministic: bool = False,
                parameters: Mapping[str, object] | None = None):
    """Solve a CP-SAT model deterministically (one worker, ``seed``) within ``time_limit_s``:
    (the solver, whether it proved optimality, its wall time, its status name). ``deterministic``
    makes the limit CP-SAT's deterministic time (its count of work, the same on a loaded machine:
    the result then never depends on the load) instead of the wall clock. ``parameters``: more
    CP-SAT parameters by name (a model's own search settings). Infeasible or no solution in
    time: a HetsimError naming ``where``."""
    from ortools.sat.python import cp_model

    if not (isinstance(time_limit_s, int | float) and time_limit_s > 0):
        raise HetsimError(f"{where}: time_limit_s={time_limit_s!r}; allowed: a time > 0 (s)")
    solver = cp_model.CpSolver()
    if deterministic:
        solver.parameters.max_deterministic_time = float(time_limit_s)
    else:
        solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = 1        # deterministic, and the machine is shared
    solver.parameters.random_seed = int(seed)
    for name, value in (parameters or {}).items():
        setattr(solver.parameters, name, value)
    t0 = time.perf_counter()
    status = solver.solve(model)
    wall = time.perf_counter() - t0
    name = solver.status_name(status)
    if status == cp_model.INFEASIBLE:
        raise HetsimError(f"{where}: the model is infeasible (CP-SAT: {name})")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        unit = "deterministic s" if deterministic else "s"
        raise HetsimError(f"{where}: CP-SAT found no schedule within {time_limit_s:g} {unit} (status {name}); "
                          f"raise the time limit or solve a smaller model")
    return solver, status == cp_model.OPTIMAL, wall, name


# -- the engine's model ---------------------------------------------------------------------------------
def _engine_vertices(view: SchedView, groups: Groups | None, module, where: str):
    """The model's vertices: super-ops ``members`` (ops, the super-op of each op ``of``), the ones
    placed here (``nodes``, vertex j is ``nodes[j]``; ``local`` the inverse), the EPs that can run
    every member of a vertex and its duration on each (the sum of its members')."""
    cl = view.cl_list
    if groups is None:
        members = [[i] for i in range(view.n)]
        of = list(range(view.n))
    else:
        members, of = groups.members, groups.of
    nodes = list(module) if module is not None else list(range(len(members)))
    local = {g: j for j, g in enumerate(nodes)}
    caps = [sorted(set.intersection(*(set(view.capable[i]) for i in members[g]))) for g in nodes]
    dur = [{d: sum(cl[i][d] for i in members[g]) for d in caps[j]} for j, g in enumerate(nodes)]
    for j, g in enumerate(nodes):
        if not caps[j]:
            raise HetsimError(f"{where}: {view.names[members[g][0]]} can run on no EP: the model is infeasible")
    return members, of, nodes, local, caps, dur


def _cross_readers(view, members, nodes) -> dict[int, list[int]]:
    """Tensors read across super-ops: producer op -> the consumer vertices in the module."""
    readers: dict[int, list[int]] = {}
    for j, g in enumerate(nodes):
        inside = set(members[g])
        for i in members[g]:
            for k in view.preds[i]:
                if k not in inside and j not in readers.setdefault(k, []):
                    readers[k].append(j)
    return readers


class _EngineModel:
    """The CP-SAT model of the engine's rules (module docstring): a placement x, start s and end e
    per vertex, one interval per (vertex, EP) on the EP's lane, and the transfers of the tensors
    read across vertices as optional intervals on the lane ``view.comm`` says."""

    def __init__(self, view, caps, dur, avail, copy_avail, horizon: int, unit_s: float) -> None:
        from ortools.sat.python import cp_model

        self.view, self.caps, self.unit_s, self.H = view, caps, unit_s, horizon
        self.avail, self.copy_avail = avail, copy_avail
        n, D, H = len(caps), view.D, horizon
        m = self.m = cp_model.CpModel()
        self.x = {(j, d): m.new_bool_var(f"x{j}_{d}") for j in range(n) for d in caps[j]}
        self.s = [m.new_int_var(0, H, f"s{j}") for j in range(n)]
        self.e = [m.new_int_var(0, H, f"e{j}") for j in range(n)]
        self.lanes: list[list] = [[] for _ in range(D)]
        self.copy_lanes: list[list] = [[] for _ in range(D)]
        self._vertices(dur)

    def _units(self, t: float) -> int:
        return to_units(t, self.unit_s)

    def _vertices(self, dur) -> None:
        """Each vertex on one EP, for its duration there, after the work already on that EP."""
        m, x, s, e = self.m, self.x, self.s, self.e
        for j in range(len(self.caps)):
            m.add_exactly_one(x[j, d] for d in self.caps[j])
            for d in self.caps[j]:
                self.lanes[d].append(m.new_optional_fixed_size_interval_var(
                    s[j], self._units(dur[j][d]), x[j, d], f"I{j}_{d}"))
                m.add(e[j] == s[j] + self._units(dur[j][d])).only_enforce_if(x[j, d])
                if self.avail[d] > 0:
                    m.add(s[j] >= self._units(self.avail[d])).only_enforce_if(x[j, d])

    def lane_of(self, d: int, iv, ts) -> None:
        """Put a transfer to EP d on the lane that carries it (none under ``comm="free"``)."""
        if self.view.comm == "consumer":
            self.lanes[d].append(iv)
            if self.avail[d] > 0:
                self.m.add(ts >= self._units(self.avail[d]))
        elif self.view.comm == "copy":
            self.copy_lanes[d].append(iv)
            if self.copy_avail[d] > 0:
                self.m.add(ts >= self._units(self.copy_avail[d]))

    def _groups(self, rd: list[int]) -> list[list[int]]:
        """The readers that share one transfer: all of them with tensor caching, else each alone."""
        return [rd] if self.view.caching else [[j] for j in rd]

    def transfers_from_plan(self, k: int, cons: list[int], table, state) -> None:
        """Op k was placed by the plan so far: its tensor is ready at ``state.fin[k]``, and moving
        it to another EP is a fixed-size transfer (none where a copy already landed)."""
        m, x, s, H = self.m, self.x, self.s, self.H
        src = state.dev[k]
        for d in range(self.view.D):
            c = self._units(table[src][d]) if d != src else 0
            rd = [j for j in cons if d in self.caps[j]]
            if not rd or c <= 0:
                continue
            key_cached = state.cache.get((k, d)) if self.view.caching else None
            if key_cached is not None:
                for j in rd:
                    m.add(s[j] >= self._units(key_cached)).only_enforce_if(x[j, d])
                continue
            for grp in self._groups(rd):
                y = m.new_bool_var(f"y{k}_{d}_{grp[0]}")
                for j in grp:
                    m.add_implication(x[j, d], y)
                m.add_bool_or([x[j, d] for j in grp]).only_enforce_if(y)
                ts = m.new_int_var(self._units(state.fin[k]), H, f"ts{k}_{d}_{grp[0]}")
                te = m.new_int_var(0, H, f"te{k}_{d}_{grp[0]}")
                iv = m.new_optional_interval_var(ts, c, te, y, f"T{k}_{d}_{grp[0]}")
                for j in grp:
                    m.add(s[j] >= te).only_enforce_if(x[j, d])
                self.lane_of(d, iv, ts)

    def transfers_in_module(self, k: int, cons: list[int], table, jk: int) -> None:
        """Op k is a member of vertex jk of this model: a transfer to EP d is present when a reader
        runs on d and jk does not, and lasts what moving from jk's EP costs."""
        m, x, e, s, H, caps = self.m, self.x, self.e, self.s, self.H, self.caps
        for d in range(self.view.D):
            cost_to_d = {a: self._units(table[a][d]) for a in caps[jk] if a != d}
            rd = [j for j in cons if d in caps[j]]
            if not rd or not any(cost_to_d.values()):
                continue
            for grp in self._groups(rd):
                y = m.new_bool_var(f"y{k}_{d}_{grp[0]}")
                here = x[jk, d] if d in caps[jk] else None
                for j in grp:
                    if here is not None:
                        m.add_implication(x[j, d], y).only_enforce_if(here.Not())
                    else:
                        m.add_implication(x[j, d], y)
                if here is not None:
                    m.add_implication(here, y.Not())
                m.add_bool_or([x[j, d] for j in grp]).only_enforce_if(y)
                size = m.new_int_var(0, H, f"c{k}_{d}_{grp[0]}")
                m.add(size == sum(x[jk, a] * v for a, v in cost_to_d.items()))
                ts = m.new_int_var(0, H, f"ts{k}_{d}_{grp[0]}")
                te = m.new_int_var(0, H, f"te{k}_{d}_{grp[0]}")
                iv = m.new_optional_interval_var(ts, size, te, y, f"T{k}_{d}_{grp[0]}")
                m.add(ts >= e[jk]).only_enforce_if(y)
                for j in grp:
                    m.add(s[j] >= te).only_enforce_if([x[j, d], y])
                self.lane_of(d, iv, ts)

    def minimise_makespan(self):
        """No overlap on any lane; minimise the latest end. Returns the makespan variable."""
        m = self.m
        for d in range(self.view.D):
            for lane in (self.lanes[d], self.copy_lanes[d]):
                if len(lane) > 1:
                    m.add_no_overlap(lane)
        z = m.new_int_var(0, self.H, "makespan")
        m.add_max_equality(z, self.e)
        m.minimize(z)
        return z

    def add_hint(self, hint) -> None:
        """A heuristic's plan (op by op) as CP-SAT's starting solution."""
        starts = hint.start_s
        for j in range(len(self.caps)):
            for d in self.caps[j]:
                self.m.add_hint(self.x[j, d], hint.dev[j] == d)
            if starts is not None:
                self.m.add_hint(self.s[j], min(self._units(starts[j]), self.H))


def solve_engine_cpsat(view: SchedView, time_limit_s: float = 20.0, seed: int = 0, unit_s: float = UNIT_S,
                       where: str = "exact model", groups: Groups | None = None,
                       module: Sequence[int] | None = None, state: PlanState | None = None,
                       hint: Plan | None = None, deterministic: bool = False) -> Solution:
    """The engine's rules (module docstring) over a :class:`~hetsim.exploration.dag.tables.SchedView`:
    tensor caching when the view has it, transfers on its communication lanes. Its optimum bounds
    the latency of every plan from below.

    By default the whole graph, op by op. With ``groups`` (super-ops, :class:`Groups`), ``module``
    (the super-ops to place) and ``state`` (the :class:`PlanState` of the plan so far) it is one
    module of a rolling horizon: a super-op lasts the sum of its members, its members' outputs are
    ready when it ends; an input made earlier is ready when the plan so far finishes it (or when
    its copy already landed on an EP), and an EP's work starts after what the plan has put on
    it. Vertex i of the solution is ``module[i]``.

    ``hint`` (a :class:`~hetsim.exploration.dag.tables.Plan` of the whole graph, op by op) is given
    to CP-SAT as a starting solution: a heuristic's plan, which the engine runs, is feasible here,
    so the search starts from its latency instead of from nothing."""
    D = view.D
    members, of, nodes, local, caps, dur = _engine_vertices(view, groups, module, where)
    n = len(nodes)
    avail = list(state.avail) if state is not None else [0.0] * D
    copy_avail = list(state.copy_avail) if state is not None else [0.0] * D
    readers = _cross_readers(view, members, nodes)
    # the horizon: every vertex and every transfer one after another, after the plan so far
    worst = sum(max(dur[j].values()) for j in range(n))
    worst += sum(max(max(row) for row in view.comm_table(k)) * (1 if view.caching else len(r))
                 for k, r in readers.items())
    start0 = max([*avail, *copy_avail, *((state.fin[k] for k in readers if state.dev[k] >= 0)
                                         if state is not None else ())], default=0.0)
    H = to_units(worst + start0, unit_s) + 1
    em = _EngineModel(view, caps, dur, avail, copy_avail, H, unit_s)
    for k, cons in readers.items():
        table = view.comm_table(k)
        gk = of[k]
        if state is not None and state.dev[k] >= 0 and gk not in local:   # placed by the plan so far
            for j in cons:
                em.m.add(em.s[j] >= to_units(state.fin[k], unit_s))
            em.transfers_from_plan(k, cons, table, state)
        else:
            for j in cons:
                em.m.add(em.s[j] >= em.e[local[gk]])
            em.transfers_in_module(k, cons, table, local[gk])
    z = em.minimise_makespan()
    if hint is not None and groups is None and module is None:
        em.add_hint(hint)
    solver, optimal, wall, status = solve_cpsat(em.m, time_limit_s, seed, where, deterministic)
    dev = [next(d for d in caps[j] if solver.value(em.x[j, d])) for j in range(n)]
    return Solution(dev, [solver.value(v) * unit_s for v in em.s], [solver.value(v) * unit_s for v in em.e],
                    solver.value(z) * unit_s, optimal, solver.best_objective_bound * unit_s, wall, status,
                    solver.deterministic_time)


def exact(view: SchedView, time_limit_s: float = 20.0, unit_s: float = UNIT_S, max_ops: int = 60,
          seed: int = 0, deterministic: bool = True) -> Plan:
    """The optimal plan of a small whole graph under the engine's rules, and CP-SAT's lower bound
    on every plan's latency (``info``: ``model_latency_s``, ``lower_bound_s``, ``optimal``: whether
    CP-SAT proved it within ``time_limit_s``, ``rounding_s``: how far the integer model's times may
    be from the engine's, one unit per op, ``solver_s``, ``deterministic_s``, ``status``).
    ``time_limit_s`` is CP-SAT's deterministic time unless ``deterministic=False`` (then the wall
    clock, and the result may depend on the machine's load). Refuses graphs of more than
    ``max_ops`` ops."""
    name = "ILP-exact"
    check_number(name, "time_limit_s", time_limit_s, low=0.0, low_open=True)
    check_number(name, "unit_s", unit_s, low=1e-12)   # CP-SAT counts time in int64 units
    check_number(name, "max_ops", max_ops, low=1, integer=True)
    if view.n > max_ops:
        raise HetsimError(f"{name}: {view.name} has {view.n} ops; the exact model is for graphs "
                          f"of at most max_ops={max_ops} ops (raise max_ops, or use HOPE:LP)")
    # Two searches of half the time limit each [choice]: CP-SAT alone, then, unless it proved its
    # plan optimal, again from StarPU-DMDAR's plan (milliseconds) as a starting solution. A
    # single-worker search can stall far above a heuristic's latency (alexnet on hope-he: 20 s
    # at 1.5x StarPU's), and a hinted one can fail to close the bound an unhinted one closes;
    # the better plan and the better bound are kept (both bounds are valid).
    where = f"{name} on {view.name}"
    half = time_limit_s / 2
    sols = []
    try:
        sols.append(solve_engine_cpsat(view, half, seed, unit_s, where, deterministic=deterministic))
    except HetsimError as e:
        if "infeasible" in str(e):
            raise
    if not sols or not sols[0].optimal:
        sols.append(solve_engine_cpsat(view, half, seed, unit_s, where, hint=dmdar(view),
                                       deterministic=deterministic))
    sol = min(sols, key=lambda x: x.makespan_s)
    bound = max(x.bound_s for x in sols)
    sol.bound_s = bound
    sol.optimal = any(x.optimal for x in sols) or sol.makespan_s <= bound + unit_s / 2
    sol.wall_s = sum(x.wall_s for x in sols)
    return Plan(sol.dev, sol.order(view.D), False, None,
                {"model_latency_s": sol.makespan_s, "lower_bound_s": sol.bound_s,
                 "optimal": sol.optimal, "rounding_s": view.n * unit_s, "solver_s": sol.wall_s,
                 "deterministic_s": sum(x.deterministic_s for x in sols), "status": sol.status})
