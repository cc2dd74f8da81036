"""Exact optima of the PIM paper's partitioning problem, to check the ALS DP (seed 003, §4.4).

* :func:`enumerate_paths`: every execution path (one device per op) of a small DCG, scored with
  the sequential model in numpy, in chunks: Fig. 13's "all possible execution paths" of 15-node
  windows (at most 3^15 = 14,348,907 paths).
* :func:`milp`: the exact integer program for a whole graph: binary x[v, d] (op v on device d),
  minimising sum a(v, d) x + the copies, counted as :meth:`Dcg.latency` counts them:

  - ``copies="memory"`` (the executor): a binary c[u, a, M] per producer u, its device a and a
    destination memory M, with c >= x[u, a] + sum over d in M of x[v, d] - 1 for every consumer v,
    priced t(u, a, d) for the cheapest d of M a consumer can use (the PIM cost model prices every
    device of one memory alike, so this is exact there);
  - ``copies="edge"`` (the DP's model): per CG edge (u, v) the joint y[e, a, b] of its endpoints'
    devices (sum over b of y = x[u, a], sum over a = x[v, b]: the local marginal polytope).

  Solved by OR-Tools CP-SAT (times in integer nanoseconds) or by HiGHS (``scipy.optimize.milp``)
  as a cross-check.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from hetsim.errors import HetsimError
from hetsim_papers.pim.dcg import Dcg

#: Refuse to enumerate more paths than this unless told (Fig. 13's largest window is 3^15).
ENUMERATION_LIMIT = 3**15
SOLVERS = ("cp-sat", "highs")


@dataclass(frozen=True)
class Enumeration:
    """Every path of a DCG in mixed-radix order (op 0 the most significant digit)."""

    dcg: Dcg
    radix: tuple[int, ...]
    compute_s: np.ndarray
    transfer_s: np.ndarray
    seconds: float

    @property
    def total_s(self) -> np.ndarray:
        return self.compute_s + self.transfer_s

    @property
    def n_paths(self) -> int:
        return len(self.compute_s)

    def assignment(self, index: int) -> np.ndarray:
        """The devices of path ``index``."""
        out = np.empty(len(self.radix), dtype=np.int64)
        rest = int(index)
        for j in range(len(self.radix) - 1, -1, -1):
            rest, digit = divmod(rest, self.radix[j])
            out[j] = self.dcg.cap[j][digit]
        return out


def count_paths(dcg: Dcg) -> int:
    return math.prod(len(c) for c in dcg.cap)


def enumerate_paths(dcg: Dcg, limit: int = ENUMERATION_LIMIT, chunk: int = 1 << 20,
                    copies: str = "memory") -> Enumeration:
    """Score every path of ``dcg`` (counted first: more than ``limit`` is an error), copies counted
    as :meth:`Dcg.latency` counts them."""
    if copies not in ("memory", "edge"):
        raise HetsimError(f"enumeration: copies={copies!r}; allowed: 'memory', 'edge'")
    total = count_paths(dcg)
    if total > limit:
        raise HetsimError(f"{dcg.name}: {total:,} execution paths; allowed: at most {limit:,} "
                          "(pass a larger limit to enumerate them anyway)")
    t0 = time.perf_counter()
    radix = tuple(len(c) for c in dcg.cap)
    strides = np.ones(len(radix), dtype=np.int64)
    for j in range(len(radix) - 2, -1, -1):
        strides[j] = strides[j + 1] * radix[j + 1]
    caps = [np.array(c, dtype=np.int64) for c in dcg.cap]
    compute = np.empty(total)
    transfer = np.empty(total)
    for lo in range(0, total, chunk):
        idx = np.arange(lo, min(lo + chunk, total), dtype=np.int64)
        dev = [caps[j][(idx // strides[j]) % radix[j]] if radix[j] > 1 else
               np.full(len(idx), caps[j][0]) for j in range(len(radix))]
        c = np.zeros(len(idx))
        for j in range(len(radix)):
            c += dcg.node_s[j][dev[j]]
        t = np.zeros(len(idx))
        if copies == "edge":
            for k, j in dcg.edges:
                t += dcg.edge_s[k][dev[k], dev[j]]
        else:
            rows = np.arange(len(idx))
            mem = [dcg.mem_index[d] for d in dev]
            for k in range(len(radix)):
                if not dcg.succs[k]:
                    continue
                done = np.zeros((dcg.n_memories, len(idx)), dtype=bool)
                for j in dcg.succs[k]:       # consumers in order: the first in a memory pays
                    move = (mem[j] != mem[k]) & ~done[mem[j], rows]
                    t += np.where(move, dcg.edge_s[k][dev[k], dev[j]], 0.0)
                    done[mem[j], rows] |= mem[j] != mem[k]
        compute[lo:lo + len(idx)] = c
        transfer[lo:lo + len(idx)] = t
    return Enumeration(dcg, radix, compute, transfer, time.perf_counter() - t0)


@dataclass(frozen=True)
class MilpResult:
    assignment: np.ndarray
    objective_s: float       # the solver's objective (CP-SAT: its integer ns, back in s)
    optimal: bool            # proven optimal within the time limit
    compute_s: float         # exact sequential model of the assignment
    transfer_s: float
    seconds: float
    solver: str

    @property
    def latency_s(self) -> float:
        return self.compute_s + self.transfer_s


def milp(dcg: Dcg, solver: str = "cp-sat", time_limit_s: float = 60.0, workers: int = 1,
         copies: str = "memory", hint: np.ndarray | None = None) -> MilpResult:
    """The exact optimum of the sequential model (module docstring); ``hint`` an assignment to
    start from (CP-SAT)."""
    if solver not in SOLVERS:
        raise HetsimError(f"MILP: solver={solver!r}; allowed: {', '.join(SOLVERS)}")
    if copies not in ("memory", "edge"):
        raise HetsimError(f"MILP: copies={copies!r}; allowed: 'memory', 'edge'")
    t0 = time.perf_counter()
    program = _program(dcg, copies)
    solve = _cp_sat if solver == "cp-sat" else _highs
    assignment, objective, optimal = solve(dcg, program, time_limit_s, workers, hint)
    c, t = dcg.latency(assignment, copies)
    return MilpResult(assignment, objective, optimal, c, t, time.perf_counter() - t0, solver)


@dataclass
class _Program:
    """min cost . z subject to equality rows (== rhs) and inequality rows (<= rhs), z in [0, 1];
    x[(op, device)] are the assignment variables (integral), the rest follow them."""

    cost: list[float]
    x: dict[tuple[int, int], int]
    eq: list[tuple[dict[int, float], float]]
    le: list[tuple[dict[int, float], float]]


def _program(dcg: Dcg, copies: str) -> _Program:
    x: dict[tuple[int, int], int] = {}
    cost: list[float] = []
    eq: list[tuple[dict[int, float], float]] = []
    le: list[tuple[dict[int, float], float]] = []
    for j, c in enumerate(dcg.cap):
        for d in c:
            x[(j, d)] = len(cost)
            cost.append(float(dcg.node_s[j, d]))
        eq.append(({x[(j, d)]: 1.0 for d in c}, 1.0))
    if copies == "edge":
        for k, j in dcg.edges:
            y = {}
            for a in dcg.cap[k]:
                for b in dcg.cap[j]:
                    y[(a, b)] = len(cost)
                    cost.append(float(dcg.edge_s[k, a, b]) if a != b else 0.0)
            for a in dcg.cap[k]:
                row = {y[(a, b)]: 1.0 for b in dcg.cap[j]}
                row[x[(k, a)]] = -1.0
                eq.append((row, 0.0))
            for b in dcg.cap[j]:
                row = {y[(a, b)]: 1.0 for a in dcg.cap[k]}
                row[x[(j, b)]] = -1.0
                eq.append((row, 0.0))
        return _Program(cost, x, eq, le)
    mem = dcg.mem_index
    for k in range(dcg.n_ops):
        if not dcg.succs[k]:
            continue
        for a in dcg.cap[k]:
            for space in range(dcg.n_memories):
                if space == mem[a]:
                    continue
                devs = {d for j in dcg.succs[k] for d in dcg.cap[j] if mem[d] == space}
                if not devs:
                    continue
                price = min(float(dcg.edge_s[k, a, d]) for d in devs)
                if price <= 0:
                    continue
                ci = len(cost)
                cost.append(price)
                for j in dcg.succs[k]:
                    into = [d for d in dcg.cap[j] if mem[d] == space]
                    if into:   # x[k, a] + sum x[j, d in space] - c <= 1
                        row = {x[(k, a)]: 1.0, ci: -1.0}
                        for d in into:
                            row[x[(j, d)]] = 1.0
                        le.append((row, 1.0))
    return _Program(cost, x, eq, le)


def _decode(dcg: Dcg, x, values) -> np.ndarray:
    out = np.empty(dcg.n_ops, dtype=np.int64)
    for j, c in enumerate(dcg.cap):
        out[j] = max(c, key=lambda d: values[x[(j, d)]])
    return out


def _cp_sat(dcg: Dcg, prog: _Program, time_limit_s: float, workers: int, hint=None):
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    var = [model.new_bool_var(f"z{i}") for i in range(len(prog.cost))]
    for row, rhs in prog.eq:
        model.add(sum(int(c) * var[i] for i, c in row.items()) == int(rhs))
    for row, rhs in prog.le:
        model.add(sum(int(c) * var[i] for i, c in row.items()) <= int(rhs))
    scale = 1e9  # integer nanoseconds
    model.minimize(sum(round(c * scale) * var[i] for i, c in enumerate(prog.cost) if c))
    if hint is not None:   # a feasible start (the DP's assignment) for the search
        for (j, d), i in prog.x.items():
            model.add_hint(var[i], int(hint[j]) == d)
    solver = cp_model.CpSolver()
    # CP-SAT's deterministic time: the same proof on a loaded machine as on an idle one
    solver.parameters.max_deterministic_time = float(time_limit_s)
    solver.parameters.num_workers = int(workers)
    solver.parameters.random_seed = 0
    solver.parameters.linearization_level = 2   # the LP relaxation prunes this model well
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise HetsimError(f"{dcg.name}: CP-SAT found no assignment in {time_limit_s} deterministic s "
                          f"({solver.status_name(status)})")
    values = [solver.value(v) for v in var]
    return _decode(dcg, prog.x, values), solver.objective_value / scale, status == cp_model.OPTIMAL


def _highs(dcg: Dcg, prog: _Program, time_limit_s: float, workers: int, hint=None):
    from scipy.optimize import Bounds, LinearConstraint
    from scipy.optimize import milp as scipy_milp
    from scipy.sparse import coo_matrix

    constraints = []
    for rows, lo_inf in ((prog.eq, False), (prog.le, True)):
        if not rows:
            continue
        r, c, v, rhs = [], [], [], []
        for i, (row, b) in enumerate(rows):
            for col, coef in row.items():
                r.append(i)
                c.append(col)
                v.append(coef)
            rhs.append(b)
        a = coo_matrix((v, (r, c)), shape=(len(rows), len(prog.cost))).tocsr()
        constraints.append(LinearConstraint(a, -np.inf if lo_inf else rhs, rhs))
    # Only x must be integral: for integral x the other variables take 0/1 values at an optimum.
    integrality = np.zeros(len(prog.cost))
    integrality[list(prog.x.values())] = 1
    res = scipy_milp(np.array(prog.cost), constraints=constraints, integrality=integrality,
                     bounds=Bounds(0, 1), options={"time_limit": float(time_limit_s), "disp": False})
    if res.x is None:
        raise HetsimError(f"{dcg.name}: HiGHS found no assignment in {time_limit_s} s ({res.message})")
    return _decode(dcg, prog.x, res.x), float(res.fun), res.status == 0
