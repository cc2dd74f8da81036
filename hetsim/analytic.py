"""Closed-form evaluation.

Pipelines (Pipe-it eqs. 9 and 11, Pipe-search/Shisha's T_s): the time of stage i is the sum of its
layers' times on its EP plus the transfer of every tensor that crosses the cut after it; throughput
is 1 / the slowest stage. A stage hands its output over before it takes the next frame (the sender
pays the transfer), so the transfer belongs to the stage time.

The stage costs and the task graph are :mod:`hetsim.tasks`'s, which the DES reads too.

DAG mappings: one inference by list scheduling of the mapping's task graph
(:mod:`hetsim.tasks`): every lane runs its tasks in order, each starting when its lane is free
and its inputs have arrived.

:class:`SplitScorer` scores every contiguous k-stage split x every EP assignment at once with prefix
sums over the layer-time matrix, for explorers that need millions of candidates.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetsim.contention import FluidScorer, fluid_bound
from hetsim.cost import CostModel, DvfsState
from hetsim.errors import HetsimError
from hetsim.mapping import Pipeline, Placement, pipeline_from_split
from hetsim.metrics import (
    Metrics,
    StageMetrics,
    add_bytes,
    busy_summary,
    coherent_time_of_stages,
    coherent_time_s,
    latency_stats,
    per_second,
)
from hetsim.options import RunOptions
from hetsim.platform import ExecutionPlace
from hetsim.power import energy_J
from hetsim.tasks import (
    TaskGraph,
    ep_peak_memory,
    ep_units,
    input_stage,
    lane_busy_s,
    pipeline_link_bytes,
    schedule_lists,
    stage_costs,
    stage_peak_memory,
    task_time_s,
)
from hetsim.workload.splits import count_compositions


# -- pipelines ----------------------------------------------------------------------------------
def periodic_schedule(times: Sequence[float], period_s: float, frames: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) arrays (stages, frames) of the closed-form schedule: frame f enters at f x
    period and never waits (every stage time <= the period), so stage i runs it from
    f x period + the time of the stages before i. Its latency is the sum of the stage times and
    its rate 1 / period: the schedule the analytic engine's figures describe."""
    offsets = np.concatenate(([0.0], np.cumsum(times)[:-1]))
    start = offsets[:, None] + period_s * np.arange(frames)[None, :]
    return start, start + np.asarray(times)[:, None]


def evaluate_pipeline(platform, workload, pipe: Pipeline, cost: CostModel,
                      options: RunOptions | None = None) -> Metrics:
    """Pipe-it eq. 11: throughput = 1 / max(slowest stage, arrival interval); latency = the sum
    of the stage times; the stream of ``frames`` frames ends after latency + (F - 1) periods.
    With ``options.contention`` the period is at least the fluid limit of the busiest shared
    memory or link (:func:`hetsim.contention.fluid_bound`; ``bound_by`` names it when it binds),
    which changes nothing while none saturates."""
    options = options or RunOptions(engine="analytic").resolve(pipe)
    frames = options.frames or 1
    compute, transfer = stage_costs(pipe, workload, cost, options.state)
    times = [c + x for c, x in zip(compute, transfer, strict=True)]
    interval = options.interval_s if options.source == "periodic" else None
    inp = input_stage(pipe, cost, options.state)
    own = inp.time_s if inp is not None and not inp.shared else 0.0   # a stage of its own before the first
    period = max(max(times), interval or 0.0, own)
    bound_by = None
    if options.contention:   # the fluid share of the shared memories and links (hetsim.contention)
        fluid = fluid_bound(platform, workload, pipe, cost, options.state)
        if fluid.fps > 0 and 1.0 / fluid.fps > period:
            period, bound_by = 1.0 / fluid.fps, fluid.resource
    latency = sum(times) + own
    makespan = latency + (frames - 1) * period
    mem = stage_peak_memory(pipe, workload, options.buffer_frames or 1)
    stages = [
        StageMetrics(ep=s.ep.name, layers=(s.first, s.last), time_s=t, compute_s=c, transfer_s=x,
                     utilization=t / period if period > 0 else 0.0, busy_s=t * frames,
                     peak_memory_bytes=m)
        for s, t, c, x, m in zip(pipe.stages, times, compute, transfer, mem, strict=True)
    ]
    units = [(s.ep, t * frames) for s, t in zip(pipe.stages, times, strict=True)]
    input_metrics = None
    if inp is not None:
        input_metrics = StageMetrics(ep=inp.ep.name, layers=(0, 0), time_s=inp.time_s, compute_s=inp.time_s,
                                     transfer_s=0.0, utilization=inp.time_s / period if period > 0 else 0.0,
                                     busy_s=inp.time_s * frames)
        if own:
            units.append((inp.ep, inp.time_s * frames))
    by_ep, by_place = busy_summary(units)
    start, end = periodic_schedule(times, period, frames)
    coherent = coherent_time_of_stages(pipe.eps, start, end)
    link_bytes = pipeline_link_bytes(platform, workload, pipe, frames)
    return Metrics(
        engine="analytic", platform=platform.name, workload=workload.name, mapping=str(pipe),
        throughput_fps=per_second(1.0, period), latency_s=latency_stats([latency]),
        stages=stages, ep_busy_s=by_ep, frames=frames, makespan_s=makespan,
        stream_throughput_fps=per_second(frames, makespan),
        energy_J=energy_J(platform, units, makespan, link_bytes, options.state, coherent),
        bottleneck=int(np.argmax(times)), core_busy_s=by_place, coherent_s=coherent,
        link_bytes=link_bytes, input_stage=input_metrics, contention=options.contention, bound_by=bound_by,
    )


def steady_energy_per_frame(platform, workload, pipe: Pipeline, cost: CostModel,
                            state: DvfsState | None = None,
                            times: Sequence[float] | None = None) -> float | None:
    """Energy of one frame in the steady state of the closed-form schedule, J (None without a
    power model): E(k + 1 frames) - E(k frames) for a k-stage pipeline, so the last frame overlaps
    every frame still in flight as in the steady state (energy is linear in frames from there on:
    one more frame adds one period of idle and static power, its stages' busy power, its link bytes
    and its coherent time). ``times``: stage times to use instead of the cost model's (noisy
    measurements)."""
    if not platform.has_power_model:
        return None
    if times is None:
        compute, transfer = stage_costs(pipe, workload, cost, state)
        times = [c + x for c, x in zip(compute, transfer, strict=True)]
    period = max(times)
    k = len(pipe.stages)

    def energy(frames: int) -> float:
        start, end = periodic_schedule(times, period, frames)
        coherent = coherent_time_of_stages(pipe.eps, start, end)
        units = [(s.ep, t * frames) for s, t in zip(pipe.stages, times, strict=True)]
        makespan = sum(times) + (frames - 1) * period
        link_bytes = pipeline_link_bytes(platform, workload, pipe, frames)
        e = energy_J(platform, units, makespan, link_bytes, state, coherent)
        assert e is not None
        return e

    return energy(k + 1) - energy(k)


# -- DAG mappings -------------------------------------------------------------------------------
def evaluate_placement(platform, workload, placement: Placement, tg: TaskGraph,
                       options: RunOptions) -> Metrics:
    """One inference by list scheduling of the task graph (:func:`~hetsim.tasks.list_schedule`);
    a stream of F frames ends after latency + (F - 1) x the busiest lane's time (the stream bound,
    reached only when the lanes overlap across frames)."""
    frames = options.frames or 1
    start, finish = schedule_lists(tg)
    latency = max(finish, default=0.0)
    period = max(lane_busy_s(tg).values(), default=0.0)
    makespan = latency + (frames - 1) * period
    units = ep_units(tg, [t.time_s * frames for t in tg.tasks])
    by_ep, by_place = busy_summary(units)
    link_bytes: dict[str, float] = {}
    for t in tg.tasks:
        if t.kind == "transfer" and t.route is not None:
            add_bytes(link_bytes, t.route.links, t.nbytes * frames)
    # Clusters busy at once in one inference, times the frames (the frames' overlap is not modelled).
    coherent = frames * coherent_time_s((t.ep, start[t.index], finish[t.index])
                                        for t in tg.tasks if t.ep is not None)
    return Metrics(
        engine="analytic", platform=platform.name, workload=workload.name, mapping=str(placement),
        throughput_fps=per_second(1.0, period), latency_s=latency_stats([latency]),
        ep_busy_s=by_ep, frames=frames, makespan_s=makespan,
        stream_throughput_fps=per_second(frames, makespan),
        energy_J=energy_J(platform, units, makespan, link_bytes, options.state, coherent),
        core_busy_s=by_place, coherent_s=coherent, link_bytes=link_bytes,
        ep_peak_memory_bytes=ep_peak_memory(tg, start, finish), task_time_s=task_time_s(tg),
    )


# -- vectorised scoring of all splits -----------------------------------------------------------
def split_boundaries(n_layers: int, k: int) -> np.ndarray:
    """Every k-stage split as boundaries [0, c1, ..., c_{k-1}, n] (rows in lexicographic order of
    the cut points). k = 1 is the one-stage pipeline [0, n]."""
    n = math.comb(n_layers - 1, k - 1) if k >= 1 else 0
    out = np.empty((n, k + 1), np.int64)
    out[:, 0] = 0
    out[:, k] = n_layers
    if k > 1 and n:
        cuts = out[:, 1:k]
        cuts[...] = _combinations(n_layers - 1, k - 1)
        cuts += 1                                        # the cut points are 1..n-1
    return out


def _combinations(m: int, r: int) -> np.ndarray:
    """Every r-subset of range(m), sorted, as rows in lexicographic order:
    ``itertools.combinations(range(m), r)`` as a (C(m, r), r) array, built column by column in numpy.

    The r-subsets of range(m) whose first element is a are a, then an (r-1)-subset of
    range(a + 1, m): the tail of the (r-1)-subsets of range(m) from the first that starts at
    a + 1 on (lexicographic order sorts them by their first element)."""
    small = np.int16 if m < 2**15 else np.int64          # built small, widened once at the end
    table = np.arange(m, dtype=small)[:, None]           # the 1-subsets
    for size in range(2, r + 1):
        rows = len(table)
        heads = np.arange(m - size + 1)
        # (size-1)-subsets starting below s: C(m, size-1) - C(m - s, size-1)
        before = np.array([math.comb(m, size - 1) - math.comb(m - s, size - 1) for s in range(m + 1)])
        lengths = rows - before[heads + 1]                   # each head's tail
        tail = (np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths - before[heads + 1], lengths))
        grown = np.empty((len(tail), size), dtype=small)
        grown[:, 0] = np.repeat(heads, lengths)
        grown[:, 1:] = table[tail]
        table = grown
    return table.astype(np.int64)


@dataclass
class ScoredSplits:
    boundaries: np.ndarray        # (n_splits, k+1)
    orders: list[tuple[int, ...]]  # EP indices per stage, one tuple per assignment
    eps: list[ExecutionPlace]
    throughput: np.ndarray        # (n_splits, n_orders), frames/s

    @property
    def count(self) -> int:
        return self.throughput.size

    def best(self) -> tuple[Pipeline, float]:
        i, j = np.unravel_index(int(np.argmax(self.throughput)), self.throughput.shape)
        b = self.boundaries[i]
        split = [int(b[s + 1] - b[s]) for s in range(len(b) - 1)]
        return pipeline_from_split(split, [self.eps[e] for e in self.orders[j]]), float(self.throughput[i, j])


class SplitScorer:
    """Scores pipelines of ``workload`` over the candidate ``eps`` in closed form, vectorised.

    Stage time = P[last, e] - P[first-1, e] + transfer(cut bytes after last, e -> next EP), with P
    the prefix sums of the layer-time matrix: exactly :func:`evaluate_pipeline`'s bottleneck.
    """

    def __init__(self, platform, workload, cost: CostModel, eps: Sequence[ExecutionPlace],
                 state: DvfsState | None = None, contention: bool = False):
        self.platform, self.workload, self.cost = platform, workload, cost
        self.eps = list(eps)
        #: with contention, throughputs are capped at the fluid limit of the shared memories and links
        self.fluid = FluidScorer(platform, workload, cost, self.eps, state) if contention else None
        T = cost.time_matrix(workload, self.eps, state)
        # a layer an EP cannot run (a measured table has no time: inf) is masked infeasible by the
        # callers; 0 keeps the prefix sums of the other layers finite
        self.T = T if np.isfinite(T).all() else np.where(np.isfinite(T), T, 0.0)
        self.prefix = np.vstack([np.zeros((1, len(self.eps))), np.cumsum(self.T, axis=0)])
        self.cut_bytes = np.asarray(workload.cut_bytes_array(), dtype=float)
        # the first stage's EP pays the feeder share and, when it runs there, the input stage; an
        # input stage of its own (runtime.input_ep) bounds the period whatever the split
        self.feeder = np.array([cost.feeder_factor(ep) for ep in self.eps])
        self.first_input = np.zeros(len(self.eps))
        self.own_input = 0.0
        for i, ep in enumerate(self.eps):
            where = cost.input_ep(ep)
            if where is not None:
                if where == ep:
                    self.first_input[i] = cost.input_time(ep, state)
                else:
                    self.own_input = cost.input_time(where, state)
        self._first_stage_plain = bool(np.all(self.feeder == 1.0) and not self.first_input.any())
        e = len(self.eps)
        self.latency = np.zeros((e, e))
        self.inv_bw = np.zeros((e, e))
        for a, b in itertools.product(range(e), range(e)):
            r = platform.route(self.eps[a], self.eps[b])
            if r.links:
                self.latency[a, b], self.inv_bw[a, b] = r.latency_s, 1.0 / r.bandwidth_Bps

    def default_orders(self, k: int) -> list[tuple[int, ...]]:
        """All ordered choices of k distinct EPs (the 24 orders of chiplet-c2's 4 EPs for k = 4)."""
        return list(itertools.permutations(range(len(self.eps)), k))

    def count(self, k: int, orders: Sequence[tuple[int, ...]] | None = None) -> int:
        n_orders = len(orders) if orders is not None else math.perm(len(self.eps), k)
        return count_compositions(self.workload.num_layers, k) * n_orders

    def score(self, k: int, orders: Sequence[tuple[int, ...]] | None = None,
              limit: int | None = 50_000_000, force: bool = False) -> ScoredSplits:
        total = self.count(k, orders)
        if limit is not None and total > limit and not force:
            raise HetsimError(f"design space of {total:,} pipelines ({self.workload.name}, {k} stages, "
                              f"{len(self.eps)} EPs) exceeds the limit of {limit:,}; narrow it or force it")
        orders = list(orders) if orders is not None else self.default_orders(k)
        bounds = split_boundaries(self.workload.num_layers, k)
        out = np.empty((bounds.shape[0], len(orders)))
        for j, order in enumerate(orders):
            out[:, j] = self.throughput(bounds, order)
        return ScoredSplits(bounds, orders, self.eps, out)

    def throughput(self, bounds: np.ndarray, order: Sequence[int], times: np.ndarray | None = None) -> np.ndarray:
        """(splits,) throughput of every split in ``bounds`` with stage i on EP ``order[i]``: 1 / the
        slowest stage or the input stage of its own (``times``: :meth:`stage_times`, if computed already), with contention capped
        at the fluid limit of the shared memories and links (:mod:`hetsim.contention`)."""
        times = self.stage_times(bounds, order) if times is None else times
        slowest = times.max(axis=1)
        if self.own_input:   # an input stage of its own bounds the period whatever the split
            slowest = np.maximum(slowest, self.own_input)
        with np.errstate(divide="ignore"):
            fps = 1.0 / slowest
        if self.fluid is not None:
            bound = self.fluid.fps(bounds, order)
            if bound is not None:
                fps = np.minimum(fps, bound)
        return fps

    def best_split(self, order: Sequence[int],
                   incapable: Sequence[np.ndarray | None] | None = None) -> tuple[tuple[int, ...], float]:
        """The best split of the layers over stages on EPs ``order`` (indices into ``eps``) and its
        throughput, without listing the C(M-1, k-1) splits: the min-max contiguous partition by
        dynamic programming, f_s(b) = min_a max(f_(s-1)(a), t_s(a, b)), O(k M^2).

        t_s(a, b) is :meth:`stage_times`'s expression for layers a+1..b (the same float
        operations), so the throughput equals the largest of :meth:`score` exactly (without
        contention: the fluid limit of a shared memory sums over stages, which no min-max
        recurrence follows; a scorer with contention refuses).
        ``incapable[s]``: prefix counts of the layers stage s's EP cannot run (None: it runs all);
        a stage holding one is excluded. Throughput 0 when no split is feasible."""
        if self.fluid is not None:
            raise HetsimError("best_split: the min-max recurrence has no contention; score the splits "
                              "(SplitScorer.score) instead")
        o = [int(e) for e in order]
        k, M = len(o), self.workload.num_layers
        if not 1 <= k <= M:
            raise HetsimError(f"best_split: {k} stages for {M} layers")
        a_idx, b_idx = np.arange(M + 1)[:, None], np.arange(M + 1)[None, :]
        valid = a_idx < b_idx
        f = np.full(M + 1, math.inf)
        f[0] = 0.0
        choice = []
        for s, e in enumerate(o):
            t = self.prefix[:, e][None, :] - self.prefix[:, e][:, None]     # t[a, b] = P[b] - P[a]
            if s == 0 and not self._first_stage_plain:
                t = t * self.feeder[e] + self.first_input[e]
            bad = incapable[s] if incapable is not None else None
            if bad is not None:
                t = np.where(bad[None, :] - bad[:, None] > 0, math.inf, t)
            if s + 1 < k:
                nxt = o[s + 1]
                cut = self.cut_bytes                                           # bytes leaving at b
                move = np.where(cut > 0, self.latency[e, nxt] + cut * self.inv_bw[e, nxt], 0.0)
                t = t + move[None, :]
            cand = np.where(valid, np.maximum(f[:, None], t), math.inf)
            best_a = np.argmin(cand, axis=0)
            f = cand[best_a, np.arange(M + 1)]
            choice.append(best_a)
        bounds = [M]
        for s in range(k - 1, 0, -1):
            bounds.append(int(choice[s][bounds[-1]]))
        bounds.append(0)
        bounds.reverse()
        split = tuple(bounds[i + 1] - bounds[i] for i in range(k))
        period = max(float(f[M]), self.own_input)
        return split, (1.0 / period if math.isfinite(period) else 0.0)

    def stage_times(self, bounds: np.ndarray, order: Sequence[int]) -> np.ndarray:
        """(splits, k) stage times of every split in ``bounds`` (rows of :func:`split_boundaries`)
        with stage i on EP ``order[i]``: the prefix-sum difference of its layers plus, for every
        stage but the last, the transfer of the cut after it (latency + bytes / bandwidth, nothing
        when the cut carries no bytes or the EPs share a memory)."""
        o = np.asarray(order)
        firsts, lasts = bounds[:, :-1], bounds[:, 1:]
        stage = self.prefix[lasts, o] - self.prefix[firsts, o]
        if not self._first_stage_plain:   # the feeder share and the input stage (stage_costs)
            stage[:, 0] = stage[:, 0] * self.feeder[o[0]] + self.first_input[o[0]]
        if len(o) > 1:
            cut = self.cut_bytes[lasts[:, :-1]]             # bytes leaving stages 1..k-1
            stage[:, :-1] += np.where(cut > 0, self.latency[o[:-1], o[1:]] + cut * self.inv_bw[o[:-1], o[1:]],
                                      0.0)
        return stage
