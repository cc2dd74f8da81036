"""HOPE's ILP (§2.1, eqs. 1-6, linearised as in docs/papers/hope.md), solved with OR-Tools CP-SAT and,
to cross-check, HiGHS.

Every vertex on one device (eq. 6), its processing time its latency there plus the transfer of
every input whose producer sits elsewhere, charged to it (eq. 1: the ILP knows no tensor
caching), a vertex starts after its predecessors finish (eq. 3), two vertices on one device do
not overlap (eqs. 4-5), and the makespan is minimised (eq. 2). :func:`solve_paper_cpsat` writes it
for CP-SAT with one optional interval per (vertex, device) and a NoOverlap per device, which
replaces the big-M disjunctions of eq. 5: the interval of vertex i on device d lasts ``cl[i][d] +
sum_k sum_{a != d} x[k][a] C_k[a][d]``, linear in the placement, so eq. 1's device-dependent
communication needs no edge variables. :func:`solve_paper_highs` writes the same model as a
big-M MILP for ``scipy.optimize.milp`` (HiGHS), with edge variables and an order variable
per pair of vertices with no path between them; the tests check that both give the same optimum.

An :class:`Instance` may be a *module* of a larger plan (HOPE:LP's rolling horizon; §2.2 leaves the stitching open: docs/papers/hope.md):
``release[i]`` is when its inputs from earlier modules are ready, ``ext_comm[i][d]`` what moving
them to device d costs, ``avail[d]`` when device d finishes the work already placed on it.

The engine's own rules (tensor caching, transfers on lanes) are the core's exact model,
:func:`hetsim.exploration.dag.exact.solve_engine_cpsat`; both share its time units (``unit_s``,
1 us by default), its deterministic CP-SAT solve and its :class:`Solution`.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from hetsim.errors import HetsimError
from hetsim.exploration.dag.exact import UNIT_S, Solution, solve_cpsat, to_units

__all__ = ["UNIT_S", "Instance", "Solution", "ilp_schedule", "solve_paper_cpsat", "solve_paper_highs"]


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
    #: The rest of the graph, for a module objective that sees it (HOPE:LP ``objective="global"``):
    #: ``tail[i]`` a lower bound on the time from vertex i's end to the end of the graph (its
    #: longest path of successors at their fastest, communication left out). Empty: the module's
    #: own makespan (eq. 2).
    tail: list[float] = field(default_factory=list)
    #: Node merging with "short" on the predecessor's device (HOPE:LP ``short="predecessor"``):
    #: (k, i, d) means vertex i runs on d when vertex k does; ``forced[i]`` a device vertex i must
    #: run on (its predecessor, of an earlier module, runs there and i is short there).
    follow: list[tuple[int, int, int]] = field(default_factory=list)
    forced: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n, D = self.n, self.D
        self.release = list(self.release) or [0.0] * n
        self.ext_comm = [list(r) for r in self.ext_comm] or [[0.0] * D for _ in range(n)]
        self.avail = list(self.avail) or [0.0] * D
        self.tail = list(self.tail) or [0.0] * n

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
        return worst + max(self.release + self.avail, default=0.0) + max(self.tail, default=0.0)


def _check(inst: Instance, where: str) -> None:
    for i in range(inst.n):
        if not inst.capable(i):
            raise HetsimError(f"{where}: vertex {i} can run on no device: the model is infeasible")


# -- HOPE's ILP (paper model) ------------------------------------------------------------------------
#: CP-SAT's search for HOPE's ILP: no LP relaxation (``linearization_level=0``). The relaxation of
#: this disjunctive model is weak (the bound comes from the search; the LP only slows each node):
#: with it off and the implied constraints of :func:`solve_paper_cpsat`, HOPE:LP's ILPs take 2-2.5x
#: less processor time [choice: docs/papers/hope.md].
SEARCH = {"linearization_level": 0}


def _const(inst: Instance, i: int, d: int, unit_s: float) -> int:
    """Vertex i's duration on device d without its inputs from this model's other vertices (units)."""
    return to_units(inst.cl[i][d] + inst.ext_comm[i][d], unit_s)


def ilp_schedule(inst: Instance, dev: Sequence[int], order: Sequence[Sequence[int]],
                 unit_s: float = UNIT_S) -> tuple[list[int], list[int]] | None:
    """The starts and ends (integer units) that HOPE's ILP gives a plan (every vertex's device,
    each device's vertices in order), each vertex as early as the model allows: a feasible
    solution of :func:`solve_paper_cpsat`'s model (its hint). None when the order deadlocks
    (a device's next vertex waits on a vertex queued behind it)."""
    n = inst.n
    preds = inst.preds()
    start, end = [0] * n, [0] * n
    done = [False] * n
    heads = [0] * len(order)
    free = [to_units(a, unit_s) for a in inst.avail]
    left = n
    while left:
        moved = False
        for d, queue in enumerate(order):
            while heads[d] < len(queue) and all(done[k] for k, _ in preds[queue[heads[d]]]):
                i = queue[heads[d]]
                dur = to_units(inst.cl[i][d] + inst.ext_comm[i][d], unit_s) + sum(
                    to_units(c[dev[k]][d], unit_s) for k, c in preds[i] if dev[k] != d)
                start[i] = max([to_units(inst.release[i], unit_s), free[d] if inst.avail[d] > 0 else 0,
                                *(end[k] for k, _ in preds[i])])
                if heads[d]:
                    start[i] = max(start[i], end[queue[heads[d] - 1]])
                end[i] = start[i] + dur
                done[i], moved = True, True
                heads[d] += 1
                left -= 1
        if not moved:
            return None
    return start, end


# -- solutions already found ----------------------------------------------------------------------------
#: HOPE's ILPs solved so far in this process with a deterministic limit: the key of the model's
#: inputs -> (the solution, the processor and wall time its solve took). Such a solve is a function
#: of its inputs alone (one worker, a fixed seed, CP-SAT's deterministic time), so an ILP met again
#: (a module two variants of HOPE:LP share, a plan scheduled again to be measured another way, a
#: DVFS preset whose tables are the default's) is answered with the solution CP-SAT would return.
#: In memory only: a new process starts empty (the reproduction hands its workers' solutions to the
#: processes it forks next: :func:`solutions`, :func:`adopt_solutions`).
_SOLVED: dict[bytes, tuple[Solution, float, float]] = {}
#: The processor and wall time (s) that the solves answered from :data:`_SOLVED` took when they
#: were solved, summed: what solving them again would have cost (a scheduler's reported time
#: charges it, so that the time does not depend on what ran before in the process).
REUSED = {"process_s": 0.0, "wall_s": 0.0}


def _solution_key(inst: Instance, time_limit_s: float, seed: int, unit_s: float, tie_break: bool,
                  hint: tuple[Sequence[int], Sequence[Sequence[int]]] | None) -> bytes:
    """A digest of everything :func:`solve_paper_cpsat` builds its model and runs CP-SAT from: the
    instance's numbers bit for bit and its lists in their order (the order of a model's constraints
    steers the search), the limit, seed, unit, objective, hint and search parameters."""
    def floats(rows) -> bytes:
        return np.asarray(rows, dtype=np.float64).tobytes()

    h = hashlib.blake2b(digest_size=20)
    for part in (repr((inst.n, inst.D, [(k, i) for k, i, _ in inst.edges], inst.follow,
                       list(inst.forced.items()), float(time_limit_s), int(seed), float(unit_s),
                       bool(tie_break), hint and ([int(d) for d in hint[0]], [[int(v) for v in q] for q in hint[1]]),
                       sorted(SEARCH.items()))).encode(),
                 floats(inst.cl), floats([c for _, _, c in inst.edges]), floats(inst.release),
                 floats(inst.ext_comm), floats(inst.avail), floats(inst.tail)):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def _copy(sol: Solution) -> Solution:
    return replace(sol, dev=list(sol.dev), start=list(sol.start), end=list(sol.end))


def solutions(since: int = 0) -> list[tuple[bytes, tuple[Solution, float, float]]]:
    """The entries of :data:`_SOLVED` from the ``since``-th on (in the order they were solved)."""
    return list(_SOLVED.items())[since:]


def adopt_solutions(entries: Iterable[tuple[bytes, tuple[Solution, float, float]]]) -> None:
    """Keep solutions found in another process of this run (a forked worker's :func:`solutions`)."""
    for key, entry in entries:
        _SOLVED.setdefault(key, entry)


def solved_count() -> int:
    return len(_SOLVED)


def clear_solutions() -> None:
    _SOLVED.clear()


def solve_paper_cpsat(inst: Instance, time_limit_s: float = 20.0, seed: int = 0, unit_s: float = UNIT_S,
                      tie_break: bool = False, where: str = "ILP", deterministic: bool = False,
                      hint: tuple[Sequence[int], Sequence[Sequence[int]]] | None = None) -> Solution:
    """HOPE's ILP with CP-SAT (module docstring). ``tie_break`` makes the objective lexicographic:
    the makespan first, then the sum of the vertices' ends (so that, among the optimal plans, the
    devices are freed as early as possible for the next module) [choice]. ``hint`` (every
    vertex's device, each device's vertices in order) starts the search from that plan, scheduled
    as :func:`ilp_schedule` does. With ``deterministic`` limits an ILP solved before in this
    process is answered with its solution (:data:`_SOLVED`)."""
    _check(inst, where)
    if not deterministic:
        return _solve_paper_cpsat(inst, time_limit_s, seed, unit_s, tie_break, where, deterministic, hint)
    key = _solution_key(inst, time_limit_s, seed, unit_s, tie_break, hint)
    known = _SOLVED.get(key)
    if known is not None:
        REUSED["process_s"] += known[1]
        REUSED["wall_s"] += known[2]
        return _copy(known[0])
    c0, t0 = time.process_time(), time.perf_counter()
    sol = _solve_paper_cpsat(inst, time_limit_s, seed, unit_s, tie_break, where, deterministic, hint)
    _SOLVED[key] = (_copy(sol), time.process_time() - c0, time.perf_counter() - t0)
    return sol


def _solve_paper_cpsat(inst: Instance, time_limit_s: float, seed: int, unit_s: float, tie_break: bool,
                       where: str, deterministic: bool,
                       hint: tuple[Sequence[int], Sequence[Sequence[int]]] | None) -> Solution:
    from ortools.sat.python import cp_model

    n, D = inst.n, inst.D
    H = to_units(inst.horizon_s(), unit_s) + 1
    m = cp_model.CpModel()
    preds = inst.preds()
    x = {(i, d): m.new_bool_var(f"x{i}_{d}") for i in range(n) for d in inst.capable(i)}
    s = [m.new_int_var(to_units(inst.release[i], unit_s), H, f"s{i}") for i in range(n)]
    e = [m.new_int_var(0, H, f"e{i}") for i in range(n)]
    lanes: list[list] = [[] for _ in range(D)]
    durs, ends = {}, {}
    for i in range(n):
        caps = inst.capable(i)
        m.add_exactly_one(x[i, d] for d in caps)
        for d in caps:
            const = _const(inst, i, d, unit_s)
            terms = [x[k, a] * to_units(c[a][d], unit_s) for k, c in preds[i] for a in inst.capable(k)
                     if a != d and to_units(c[a][d], unit_s) > 0]
            dur = durs[i, d] = m.new_int_var(0, H, f"p{i}_{d}")
            m.add(dur == const + sum(terms))
            end = ends[i, d] = m.new_int_var(0, H, f"e{i}_{d}")
            lanes[d].append(m.new_optional_interval_var(s[i], dur, end, x[i, d], f"I{i}_{d}"))
            m.add(e[i] == end).only_enforce_if(x[i, d])
            if inst.avail[d] > 0:
                m.add(s[i] >= to_units(inst.avail[d], unit_s)).only_enforce_if(x[i, d])
        # Redundant (implied: a vertex lasts at least its shortest constant part on any device):
        # bounds the ends before the devices are chosen, so that the critical path bounds the
        # makespan early in the search (the model's optimum is unchanged).
        m.add(e[i] >= s[i] + min(_const(inst, i, d, unit_s) for d in caps))
        for k, _ in preds[i]:
            m.add(s[i] >= e[k])
    for k, i, d in inst.follow:
        if (k, d) in x and (i, d) in x:
            m.add_implication(x[k, d], x[i, d])
    for i, d in inst.forced.items():
        if (i, d) in x:
            m.add(x[i, d] == 1)
    for d in range(D):
        if len(lanes[d]) > 1:
            m.add_no_overlap(lanes[d])
    z = m.new_int_var(0, H, "makespan")
    if n:
        m.add_max_equality(z, e)
    # Redundant (implied: a device runs its vertices one at a time, none before the device is
    # free nor before the earliest release): each device's load fits before the makespan.
    first = min(to_units(r, unit_s) for r in inst.release) if n else 0
    for d in range(D):
        load = [(x[i, d], _const(inst, i, d, unit_s)) for i in range(n) if (i, d) in x]
        if load:
            m.add(sum(v * c for v, c in load) <= z - max(to_units(inst.avail[d], unit_s), first))
    times = ilp_schedule(inst, hint[0], hint[1], unit_s) if hint is not None else None
    if hint is not None and times is not None:
        for (i, d), var in x.items():
            m.add_hint(var, hint[0][i] == d)
        for i in range(n):
            m.add_hint(s[i], times[0][i])
            m.add_hint(e[i], times[1][i])
            for d in inst.capable(i):
                dur_units = to_units(inst.cl[i][d] + inst.ext_comm[i][d], unit_s) + sum(
                    to_units(c[hint[0][k]][d], unit_s) for k, c in preds[i] if hint[0][k] != d)
                m.add_hint(durs[i, d], dur_units)
                m.add_hint(ends[i, d], times[0][i] + dur_units)
        m.add_hint(z, max(times[1], default=0))
    objective = z
    if any(inst.tail):
        # The whole graph's latency as far as this module decides it (eq. 2's tau): every
        # vertex's end plus the longest path after it, a lower bound on tau.
        tau = m.new_int_var(0, H, "tau")
        for i in range(n):
            m.add(tau >= e[i] + to_units(inst.tail[i], unit_s))
        objective = tau
    # Lexicographic objectives in one integer: the first term, then (tie_break) the sum of the
    # ends or (a global objective) the module's makespan.
    scale = n * H + 1 if tie_break else (H + 1 if objective is not z else 1)
    m.minimize(objective * scale + (sum(e) if tie_break else z if objective is not z else 0))
    solver, optimal, wall, status = solve_cpsat(m, time_limit_s, seed, where, deterministic, SEARCH)
    dev = [next(d for d in inst.capable(i) if solver.value(x[i, d])) for i in range(n)]
    bound = solver.best_objective_bound / scale   # of the first term: tau or the makespan
    return Solution(dev, [solver.value(v) * unit_s for v in s], [solver.value(v) * unit_s for v in e],
                    solver.value(z) * unit_s, optimal, math.floor(bound) * unit_s, wall, status,
                    solver.deterministic_time)


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
        """Eqs. 2, 3, 5 and 6 of the MILP (linearised, docs/papers/hope.md), and the devices' availability."""
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
    """HOPE's ILP as a big-M MILP (docs/papers/hope.md), solved by HiGHS through
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
