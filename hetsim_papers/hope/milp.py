"""Exact placement-and-order models, solved with OR-Tools CP-SAT (and, to cross-check, HiGHS).

**HOPE's ILP** (§2.1, eqs. 1-6; digest §2.3 for the clean form): every vertex on one device
(eq. 6), its processing time its latency there plus the transfer of every input whose producer
sits elsewhere, charged to it (eq. 1: the ILP knows no tensor caching), a vertex starts after its
predecessors finish (eq. 3), two vertices on one device do not overlap (eqs. 4-5), and the
makespan is minimised (eq. 2). :func:`solve_paper_cpsat` writes it for CP-SAT with one optional
interval per (vertex, device) and a NoOverlap per device, which replaces the big-M disjunctions of
eq. 5: the interval of vertex i on device d lasts ``cl[i][d] + sum_k sum_{a != d} x[k][a]
C_k[a][d]``, linear in the placement, so eq. 1's device-dependent communication needs no edge
variables. :func:`solve_paper_highs` writes the same model as the digest's big-M MILP for
``scipy.optimize.milp`` (HiGHS), with edge variables and an order variable per pair of vertices
with no path between them; the tests check that both give the same optimum.

An :class:`Instance` may be a *module* of a larger plan (HOPE:LP's rolling horizon, digest §2.3):
``release[i]`` is when its inputs from earlier modules are ready, ``ext_comm[i][d]`` what moving
them to device d costs, ``avail[d]`` when device d finishes the work already placed on it.

**The engine's model** (:func:`solve_engine_cpsat`): the same problem as the DAG engine runs a plan,
for the exact schedule of a small whole graph: a tensor crosses to a device once (its transfer an
optional interval, present when a consumer runs there and its producer does not) and the transfer
occupies the consumer's device (``comm="consumer"``), a copy lane (``"copy"``) or nothing
(``"free"``). The engine puts a transfer right before its first consumer in the device's queue;
the model lets it go anywhere after its producer, so its optimum is a lower bound on the latency
of every plan, reached when the transfers need no reordering (the tests compare).

Times are integers of ``unit_s`` (1 us by default): CP-SAT is an integer solver. Solves are
deterministic (one worker, a seed). A model without a solution in its time limit raises a
HetsimError naming what and where; a solution not proven optimal is returned with its bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hetsim.errors import HetsimError

#: Default time unit of the integer models, s.
UNIT_S = 1e-6


@dataclass
class Instance:
    """HOPE's ILP over ``n`` vertices and ``D`` devices (module docstring).

    ``edges`` are (k, i, C) with C[a][d] the time to move what k sends i from device a to d
    (summed over the tensors of that edge); ``cl[i][d]`` is inf where d cannot run i."""

    cl: list[list[float]]
    edges: list[tuple[int, int, list[list[float]]]]
    release: list[float] = field(default_factory=list)
    ext_comm: list[list[float]] = field(default_factory=list)
    avail: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        n, D = self.n, self.D
        self.release = list(self.release) or [0.0] * n
        self.ext_comm = [list(r) for r in self.ext_comm] or [[0.0] * D for _ in range(n)]
        self.avail = list(self.avail) or [0.0] * D

    @property
    def n(self) -> int:
        return len(self.cl)

    @property
    def D(self) -> int:
        return len(self.cl[0]) if self.cl else 0

    def capable(self, i: int) -> list[int]:
        return [d for d in range(self.D) if math.isfinite(self.cl[i][d])]

    def preds(self) -> list[list[tuple[int, list[list[float]]]]]:
        out: list[list[tuple[int, list[list[float]]]]] = [[] for _ in range(self.n)]
        for k, i, c in self.edges:
            out[i].append((k, c))
        return out

    def horizon_s(self) -> float:
        """An upper bound on the makespan: every vertex after everything else, at its worst."""
        worst = 0.0
        preds = self.preds()
        for i in range(self.n):
            caps = self.capable(i)
            comm = sum(max(max(row) for row in c) for _, c in preds[i])
            worst += max(self.cl[i][d] + self.ext_comm[i][d] for d in caps) + comm
        return worst + max(self.release + self.avail, default=0.0)


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

    def order(self, D: int) -> list[list[int]]:
        """Each device's vertices by start (ties: index)."""
        out: list[list[int]] = [[] for _ in range(D)]
        for i in sorted(range(len(self.dev)), key=lambda i: (self.start[i], i)):
            out[self.dev[i]].append(i)
        return out


def _units(t: float, unit: float) -> int:
    return int(round(t / unit))


def _check(inst: Instance, where: str) -> None:
    for i in range(inst.n):
        if not inst.capable(i):
            raise HetsimError(f"{where}: vertex {i} can run on no device: the model is infeasible")


def _solve(model, time_limit_s: float, seed: int, where: str):
    from ortools.sat.python import cp_model

    if not (isinstance(time_limit_s, int | float) and time_limit_s > 0):
        raise HetsimError(f"{where}: time_limit_s={time_limit_s!r}; allowed: a time > 0 (s)")
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = 1        # deterministic, and the machine is shared
    solver.parameters.random_seed = int(seed)
    t0 = time.perf_counter()
    status = solver.solve(model)
    wall = time.perf_counter() - t0
    name = solver.status_name(status)
    if status == cp_model.INFEASIBLE:
        raise HetsimError(f"{where}: the model is infeasible (CP-SAT: {name})")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise HetsimError(f"{where}: CP-SAT found no schedule within {time_limit_s:g} s (status {name}); "
                          f"raise the time limit or solve a smaller model")
    return solver, status == cp_model.OPTIMAL, wall, name


# -- HOPE's ILP (paper model) ------------------------------------------------------------------------
def solve_paper_cpsat(inst: Instance, time_limit_s: float = 20.0, seed: int = 0, unit_s: float = UNIT_S,
                      tie_break: bool = False, where: str = "ILP") -> Solution:
    """HOPE's ILP with CP-SAT (module docstring). ``tie_break`` makes the objective lexicographic:
    the makespan first, then the sum of the vertices' ends (so that, among the optimal plans, the
    devices are freed as early as possible for the next module) [choice]."""
    from ortools.sat.python import cp_model

    _check(inst, where)
    n, D = inst.n, inst.D
    H = _units(inst.horizon_s(), unit_s) + 1
    m = cp_model.CpModel()
    preds = inst.preds()
    x = {(i, d): m.new_bool_var(f"x{i}_{d}") for i in range(n) for d in inst.capable(i)}
    s = [m.new_int_var(_units(inst.release[i], unit_s), H, f"s{i}") for i in range(n)]
    e = [m.new_int_var(0, H, f"e{i}") for i in range(n)]
    lanes: list[list] = [[] for _ in range(D)]
    for i in range(n):
        caps = inst.capable(i)
        m.add_exactly_one(x[i, d] for d in caps)
        for d in caps:
            const = _units(inst.cl[i][d] + inst.ext_comm[i][d], unit_s)
            terms = [x[k, a] * _units(c[a][d], unit_s) for k, c in preds[i] for a in inst.capable(k)
                     if a != d and _units(c[a][d], unit_s) > 0]
            dur = m.new_int_var(0, H, f"p{i}_{d}")
            m.add(dur == const + sum(terms))
            end = m.new_int_var(0, H, f"e{i}_{d}")
            lanes[d].append(m.new_optional_interval_var(s[i], dur, end, x[i, d], f"I{i}_{d}"))
            m.add(e[i] == end).only_enforce_if(x[i, d])
            if inst.avail[d] > 0:
                m.add(s[i] >= _units(inst.avail[d], unit_s)).only_enforce_if(x[i, d])
        for k, _ in preds[i]:
            m.add(s[i] >= e[k])
    for d in range(D):
        if len(lanes[d]) > 1:
            m.add_no_overlap(lanes[d])
    z = m.new_int_var(0, H, "makespan")
    if n:
        m.add_max_equality(z, e)
    m.minimize(z * (n * H + 1) + sum(e) if tie_break else z)
    solver, optimal, wall, status = _solve(m, time_limit_s, seed, where)
    dev = [next(d for d in inst.capable(i) if solver.value(x[i, d])) for i in range(n)]
    bound = solver.best_objective_bound / (n * H + 1) if tie_break else solver.best_objective_bound
    return Solution(dev, [solver.value(v) * unit_s for v in s], [solver.value(v) * unit_s for v in e],
                    solver.value(z) * unit_s, optimal, math.floor(bound) * unit_s, wall, status)


def _reachability(n: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    """Bitsets: bit k of reach[i] is set when a path leads from i to k (vertices in a topological
    order: every edge goes from a lower to a higher index)."""
    succ: list[list[int]] = [[] for _ in range(n)]
    for k, i in edges:
        succ[k].append(i)
    reach = [0] * n
    for i in range(n - 1, -1, -1):
        r = 0
        for j in succ[i]:
            r |= (1 << j) | reach[j]
        reach[i] = r
    return reach


def _highs_columns(inst: Instance) -> tuple[dict[tuple, int], list[tuple[int, int]]]:
    """The MILP's columns, numbered in the order the rows refer to them: placements x and starts
    s, edge placements e, order variables o (one per pair of vertices without a path between
    them), and the makespan tau; and those pairs."""
    cols: dict[tuple, int] = {}

    def var(key) -> int:
        if key not in cols:
            cols[key] = len(cols)
        return cols[key]

    for i in range(inst.n):
        for d in inst.capable(i):
            var(("x", i, d))
        var(("s", i))
    for idx, (k, i, _) in enumerate(inst.edges):
        for a in inst.capable(k):
            for b in inst.capable(i):
                if a != b:
                    var(("e", idx, a, b))
    reach = _reachability(inst.n, [(k, i) for k, i, _ in inst.edges])
    pairs = [(i, k) for i in range(inst.n) for k in range(i + 1, inst.n)
             if not (reach[i] >> k) & 1 and not (reach[k] >> i) & 1]
    for i, k in pairs:
        var(("o", i, k))
    var(("tau",))
    return cols, pairs


def _combine(*parts: tuple[float, dict[int, float]]) -> dict[int, float]:
    """The weighted sum of sparse rows (column -> coefficient)."""
    out: dict[int, float] = {}
    for w, coefs in parts:
        for j, v in coefs.items():
            out[j] = out.get(j, 0.0) + w * v
    return out


class _HighsRows:
    """The MILP's constraint rows (sparse, with their bounds) and each vertex's processing time
    p[i] as coefficients of the columns: sum_d x[i,d] (cl + ext) + sum over in-edges of e * C."""

    def __init__(self, inst: Instance, cols: dict[tuple, int], pairs: list[tuple[int, int]],
                 big_m: float) -> None:
        self.rows: list[dict[int, float]] = []
        self.lo: list[float] = []
        self.hi: list[float] = []
        self.p: list[dict[int, float]] = [dict() for _ in range(inst.n)]
        self._processing_times(inst, cols)
        self._paper_rows(inst, cols, pairs, big_m)

    def add(self, coefs: dict[int, float], low: float, high: float) -> None:
        self.rows.append(coefs)
        self.lo.append(low)
        self.hi.append(high)

    def _processing_times(self, inst: Instance, cols: dict[tuple, int]) -> None:
        """p[i], with the rows that make an edge's placement e at least x_k + x_i - 1."""
        p = self.p
        for i in range(inst.n):
            for d in inst.capable(i):
                p[i][cols[("x", i, d)]] = inst.cl[i][d] + inst.ext_comm[i][d]
        for idx, (k, i, c) in enumerate(inst.edges):
            for a in inst.capable(k):
                for b in inst.capable(i):
                    if a != b:
                        ev = cols[("e", idx, a, b)]
                        p[i][ev] = p[i].get(ev, 0.0) + c[a][b]
                        self.add({ev: 1.0, cols[("x", k, a)]: -1.0, cols[("x", i, b)]: -1.0},
                                 -1.0, math.inf)

    def _paper_rows(self, inst: Instance, cols: dict[tuple, int], pairs: list[tuple[int, int]],
                    M: float) -> None:
        """Eqs. 2, 3, 5 and 6 of the digest's MILP, and the devices' availability."""
        add, p, tau = self.add, self.p, cols[("tau",)]
        for i in range(inst.n):
            add({cols[("x", i, d)]: 1.0 for d in inst.capable(i)}, 1.0, 1.0)                # eq. 6
            add(_combine((1.0, {tau: 1.0}), (-1.0, {cols[("s", i)]: 1.0}), (-1.0, p[i])),
                0.0, math.inf)                                                                 # eq. 2
            for d in inst.capable(i):
                if inst.avail[d] > 0:   # s_i >= A_d - M (1 - x[i,d])
                    add({cols[("s", i)]: 1.0, cols[("x", i, d)]: -M}, inst.avail[d] - M, math.inf)
        for k, i, _ in inst.edges:                                                           # eq. 3
            add(_combine((1.0, {cols[("s", i)]: 1.0}), (-1.0, {cols[("s", k)]: 1.0}), (-1.0, p[k])),
                0.0, math.inf)
        for i, k in pairs:                                                                   # eq. 5
            o = cols[("o", i, k)]
            for d in set(inst.capable(i)) & set(inst.capable(k)):
                xi, xk = cols[("x", i, d)], cols[("x", k, d)]
                # s_i >= s_k + p_k - M o - M (2 - x_i - x_k)
                add(_combine((1.0, {cols[("s", i)]: 1.0}), (-1.0, {cols[("s", k)]: 1.0}), (-1.0, p[k]),
                             (1.0, {o: M, xi: -M, xk: -M})), -2 * M, math.inf)
                # s_k >= s_i + p_i - M (1 - o) - M (2 - x_i - x_k)
                add(_combine((1.0, {cols[("s", k)]: 1.0}), (-1.0, {cols[("s", i)]: 1.0}), (-1.0, p[i]),
                             (1.0, {o: -M, xi: -M, xk: -M})), -3 * M, math.inf)

    def matrix(self, nv: int) -> np.ndarray:
        A = np.zeros((len(self.rows), nv))
        for r, coefs in enumerate(self.rows):
            for j, v in coefs.items():
                A[r, j] = v
        return A


def _highs_bounds(inst: Instance, cols: dict[tuple, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper bounds and integrality of the columns: x and o binary, e in [0, 1], a
    start no earlier than its vertex's release."""
    nv = len(cols)
    lb = np.zeros(nv)
    ub = np.full(nv, math.inf)
    integrality = np.zeros(nv)
    for key, j in cols.items():
        if key[0] in ("x", "o"):
            ub[j], integrality[j] = 1.0, 1
        elif key[0] == "e":
            ub[j] = 1.0
        elif key[0] == "s":
            lb[j] = inst.release[key[1]]
    return lb, ub, integrality


def solve_paper_highs(inst: Instance, time_limit_s: float = 20.0, where: str = "ILP") -> Solution:
    """HOPE's ILP as the digest's big-M MILP (§2.3), solved by HiGHS through
    ``scipy.optimize.milp``: placement x, edge placements e (continuous), one start per vertex,
    an order variable per pair of vertices without a path between them. Vertices must be numbered
    in a topological order. For cross-checking CP-SAT on small instances."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    _check(inst, where)
    n = inst.n
    cols, pairs = _highs_columns(inst)
    tau, nv = cols[("tau",)], len(cols)
    rows = _HighsRows(inst, cols, pairs, big_m=inst.horizon_s() * 2 + 1.0)
    lb, ub, integrality = _highs_bounds(inst, cols)
    objective = np.zeros(nv)
    objective[tau] = 1.0
    t0 = time.perf_counter()
    res = milp(objective, constraints=LinearConstraint(rows.matrix(nv), rows.lo, rows.hi),
               integrality=integrality, bounds=Bounds(lb, ub), options={"time_limit": float(time_limit_s)})
    wall = time.perf_counter() - t0
    if res.x is None:
        raise HetsimError(f"{where}: HiGHS found no schedule within {time_limit_s:g} s ({res.message})")
    xv, p = res.x, rows.p
    dev = [max(inst.capable(i), key=lambda d: xv[cols[("x", i, d)]]) for i in range(n)]   # noqa: B023
    start = [float(xv[cols[("s", i)]]) for i in range(n)]
    end = [start[i] + sum(v * xv[j] for j, v in p[i].items()) for i in range(n)]
    return Solution(dev, start, end, float(xv[tau]), res.status == 0,
                    float(getattr(res, "mip_dual_bound", math.nan)), wall, str(res.message))


# -- the engine's model ---------------------------------------------------------------------------------
def _engine_vertices(view, groups, module, where: str):
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
        return _units(t, self.unit_s)

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


def solve_engine_cpsat(view, time_limit_s: float = 20.0, seed: int = 0, unit_s: float = UNIT_S,
                       where: str = "exact model", groups=None, module: Sequence[int] | None = None,
                       state=None, hint=None) -> Solution:
    """The engine's rules (module docstring) over a :class:`~hetsim_papers.hope.view.SchedView`:
    tensor caching when the view's problem has it, transfers on its communication lanes. Its
    optimum bounds the latency of every plan from below.

    By default the whole graph, op by op. With ``groups`` (super-ops, :class:`Groups`), ``module``
    (the super-ops to place) and ``state`` (the :class:`PlanState` of the plan so far) it is a
    module of HOPE:LP's rolling horizon under the engine's rules: a super-op lasts the sum of its
    members, its members' outputs are ready when it ends; an input made earlier is ready when the
    plan so far finishes it (or when its copy already landed on a device), and a device's work
    starts after what the plan has put on it. Vertex i of the solution is ``module[i]``.

    ``hint`` (a :class:`~hetsim_papers.hope.view.Plan` of the whole graph, op by op) is given to
    CP-SAT as a starting solution: a heuristic's plan, which the engine runs, is feasible here, so
    the search starts from its latency instead of from nothing."""
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
    H = _units(worst + start0, unit_s) + 1
    em = _EngineModel(view, caps, dur, avail, copy_avail, H, unit_s)
    for k, cons in readers.items():
        table = view.comm_table(k)
        gk = of[k]
        placed = state is not None and state.dev[k] >= 0 and gk not in local
        for j in cons:
            if placed:
                em.m.add(em.s[j] >= _units(state.fin[k], unit_s))
            else:
                em.m.add(em.s[j] >= em.e[local[gk]])
        if placed:
            em.transfers_from_plan(k, cons, table, state)
        else:
            em.transfers_in_module(k, cons, table, local[gk])
    z = em.minimise_makespan()
    if hint is not None and groups is None and module is None:
        em.add_hint(hint)
    solver, optimal, wall, status = _solve(em.m, time_limit_s, seed, where)
    dev = [next(d for d in caps[j] if solver.value(em.x[j, d])) for j in range(n)]
    return Solution(dev, [solver.value(v) * unit_s for v in em.s], [solver.value(v) * unit_s for v in em.e],
                    solver.value(z) * unit_s, optimal, solver.best_objective_bound * unit_s, wall, status)
