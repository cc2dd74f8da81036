"""saga's schedulers (Coleman et al., "saga: a library of task graph scheduling algorithms"; the
``anrg-saga`` package, ``pip install 'hetsim[saga]'``) as explorers of a placement problem.

    explore(PlacementProblem("rk3588", "googlenet"), make_explorer("saga", scheduler="CPOP"), seed=0)
    hetsim explore -p rk3588 -w googlenet -a saga --param scheduler=CPOP

saga schedules *related machines*: a task of cost c takes c / s on a node of speed s, and a
dependency of size z takes z / b between two nodes joined at speed b (the same both ways; nothing on
one node). hetsim's tables (:class:`~hetsim.exploration.dag.tables.SchedView`) give any time per op
and EP, and any transfer time per tensor and EP pair, so :func:`saga_instance` fits saga's model to
them: log cl[i][d] = log c_i - log s_d and log C(i, a, d) = log z_i - log b_ad by least squares
(exact where the tables have that form, as saga's own random instances do; ``info`` reports the
largest relative error of either fit). saga cannot forbid a node to a task: only the EPs that can
run every op take part (``info["saga_eps"]``). Whatever saga predicts under its model, the plan it
returns (each op's EP, each EP's ops by start) is then measured by hetsim's engine with the
problem's own rules, as every other explorer's.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
from collections.abc import Iterator

import numpy as np

from hetsim.errors import HetsimError
from hetsim.exploration.dag.tables import Plan, SchedView

#: saga's schedulers usable here, by the name saga's README gives them: its class in saga.schedulers.
#: (Left out: BruteForce and SMT, exponential; Hybrid, which takes other schedulers.)
SCHEDULERS = {
    "BIL": "BILScheduler", "CPOP": "CpopScheduler", "DPS": "DPSScheduler", "Duplex": "DuplexScheduler",
    "ETF": "ETFScheduler", "FastestNode": "FastestNodeScheduler", "FCP": "FCPScheduler",
    "FLB": "FLBScheduler", "GDL": "GDLScheduler", "HBMCT": "HbmctScheduler", "HEFT": "HeftScheduler",
    "MaxMin": "MaxMinScheduler", "MCT": "MCTScheduler", "MET": "METScheduler", "MinMin": "MinMinScheduler",
    "MSBC": "MsbcScheduler", "MST": "MSTScheduler", "OLB": "OLBScheduler", "Sufferage": "SufferageScheduler",
    "WBA": "WBAScheduler",
}
INSTALL = "pip install 'hetsim[saga]'"


def _saga():
    try:
        import saga
        import saga.schedulers
    except ImportError:
        raise HetsimError(f"saga's schedulers need the saga package (anrg-saga): {INSTALL}") from None
    return saga


def _fit(log_t: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least squares of log_t[i, d] ~ a_i - b_d over ``mask`` (alternating means; one pass is exact
    on a full matrix), normalised so that the b's mean 0. Rows without an entry get a = -inf."""
    n, m = log_t.shape
    a, b = np.zeros(n), np.zeros(m)
    rows, cols = mask.sum(axis=1), mask.sum(axis=0)
    vals = np.where(mask, log_t, 0.0)
    for _ in range(200):
        a_new = np.where(rows > 0, (vals + b[None, :] * mask).sum(axis=1) / np.maximum(rows, 1), -np.inf)
        a_fin = np.where(rows > 0, a_new, 0.0)
        b_new = np.where(cols > 0, ((a_fin[:, None] - vals) * mask).sum(axis=0) / np.maximum(cols, 1), 0.0)
        shift = b_new[cols > 0].mean() if (cols > 0).any() else 0.0
        b_new = np.where(cols > 0, b_new - shift, 0.0)
        a_new = np.where(rows > 0, a_new - shift, -np.inf)
        done = np.allclose(a_new[rows > 0], a[rows > 0], rtol=0, atol=1e-13) and np.allclose(b_new, b, rtol=0, atol=1e-13)
        a, b = a_new, b_new
        if done:
            break
    return a, b


def saga_instance(view: SchedView):
    """saga's (Network, TaskGraph) for ``view`` (module docstring), the EPs it uses (indices) and
    the fits' largest relative errors ``(times, transfers)``."""
    saga = _saga()
    eps = [d for d in range(view.D) if all(d in caps for caps in view.capable)]
    if not eps:
        raise HetsimError(f"{view.name}: saga's schedulers run every op on every node, and no EP of "
                          f"{', '.join(view.eps)} can run every op; give EPs that can (--eps)")
    cl = view.cl[:, eps]
    pos = cl > 0
    a, b = _fit(np.log(np.where(pos, cl, 1.0)), pos)
    cost = np.where(np.isfinite(a), np.exp(a), 0.0)
    speed = np.exp(b)
    err_t = float(np.max(np.abs(cost[:, None] / speed[None, :] - cl) / np.where(pos, cl, 1.0), initial=0.0))
    # transfers: one size per tensor, one speed per unordered pair of EPs (log-mean of both ways)
    pairs = [(x, y) for x in range(len(eps)) for y in range(x + 1, len(eps))]
    senders = [i for i in range(view.n) if view.succs[i]]
    table = np.zeros((len(senders), len(pairs)))
    for r, i in enumerate(senders):
        for k, (x, y) in enumerate(pairs):
            there, back = view.C(i, eps[x], eps[y]), view.C(i, eps[y], eps[x])
            table[r, k] = math.sqrt(there * back) if there > 0 and back > 0 else max(there, back)
    tpos = table > 0
    za, zb = _fit(np.log(np.where(tpos, table, 1.0)), tpos)
    size = {i: (float(np.exp(za[r])) if np.isfinite(za[r]) else 0.0) for r, i in enumerate(senders)}
    link = [float(np.exp(zb[k])) if tpos[:, k].any() else math.inf for k in range(len(pairs))]
    err_c = 0.0
    for i in senders:
        for k, (x, y) in enumerate(pairs):
            for s, d in ((x, y), (y, x)):
                want = view.C(i, eps[s], eps[d])
                got = size[i] / link[k] if size[i] > 0 else 0.0
                if want > 0:
                    err_c = max(err_c, abs(got - want) / want)
                elif got > 0:
                    err_c = math.inf
    network = saga.Network.create(
        nodes=[(view.eps[d], float(speed[j])) for j, d in enumerate(eps)],
        edges=[(view.eps[eps[x]], view.eps[eps[y]], link[k]) for k, (x, y) in enumerate(pairs)]
        + [(view.eps[d], view.eps[d], math.inf) for d in eps])
    graph = saga.TaskGraph.create(
        tasks=[(view.names[i], float(cost[i])) for i in range(view.n)],
        dependencies=[(view.names[i], view.names[j], size.get(i, 0.0)) for i in range(view.n) for j in view.succs[i]])
    return network, graph, eps, (err_t, err_c)


@contextlib.contextmanager
def _quiet_and_seeded(seed: int) -> Iterator[None]:
    """saga logs a warning for every graph with several sources or sinks and some of its
    schedulers draw from the global random generators: silence the one, seed the others, and put
    both back."""
    logger = logging.getLogger()
    level = logger.level
    state, np_state = random.getstate(), np.random.get_state()
    logger.setLevel(logging.ERROR)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        yield
    finally:
        logger.setLevel(level)
        random.setstate(state)
        np.random.set_state(np_state)


def saga_schedule(view: SchedView, scheduler: str = "HEFT", seed: int = 0) -> Plan:
    """The plan saga's ``scheduler`` (a key of :data:`SCHEDULERS`) makes of the problem under its
    related-machines model (module docstring). ``info``: ``saga_makespan_s`` (saga's own makespan),
    ``saga_eps``, ``saga_fit_time_error``, ``saga_fit_transfer_error``."""
    if scheduler not in SCHEDULERS:
        raise HetsimError(f"saga: scheduler={scheduler!r}; allowed: {', '.join(SCHEDULERS)}")
    saga = _saga()
    network, graph, eps, (err_t, err_c) = saga_instance(view)
    with _quiet_and_seeded(seed):
        schedule = getattr(saga.schedulers, SCHEDULERS[scheduler])().schedule(network, graph)
    where: dict[str, tuple[float, float, str]] = {}
    for node, tasks in schedule.items():
        for t in tasks:
            if t.name in view.index and (t.name not in where or t.end < where[t.name][1]):
                where[t.name] = (t.start, t.end, node)      # a duplicated task: its first copy to end
    missing = [n for n in view.names if n not in where]
    if missing:
        raise HetsimError(f"saga's {scheduler} left op {missing[0]} unscheduled")
    ep_of = {view.eps[d]: d for d in eps}
    dev = [ep_of[where[n][2]] for n in view.names]
    order: list[list[int]] = [[] for _ in range(view.D)]
    for i in sorted(range(view.n), key=lambda i: (where[view.names[i]][0], where[view.names[i]][1], i)):
        order[dev[i]].append(i)
    return Plan(dev, order, False, None, {
        "saga_scheduler": scheduler, "saga_makespan_s": float(schedule.makespan),
        "saga_eps": [view.eps[d] for d in eps], "saga_fit_time_error": err_t, "saga_fit_transfer_error": err_c})
