"""Exhaustive search over splits x EP assignments, vectorised over classes of interchangeable EPs.

Paper II's ES (§7.1) measures every configuration of the design space after the database
generation. On chiplet-c5 (8 EPs) that is 41,225 splits x up to 8! EP orders; grouping EPs that are
interchangeable (same layer times, same routes) leaves only their FEP/SEP patterns, scored at once
with :class:`~hetsim.analytic.SplitScorer`. Its optimum equals
:class:`~hetsim.exploration.baselines.ExhaustiveSearch` over every permutation (tests).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hetsim.analytic import SplitScorer
from hetsim.exploration import Configuration, PipelineProblem
from hetsim.exploration.database import generate_database


def ep_classes(scorer: SplitScorer) -> list[list[int]]:
    """Groups of interchangeable EPs (indices into ``scorer.eps``): the same time for every layer
    and the same route (latency, bandwidth) to and from every other EP. Chiplet-c5's four FEPs are
    one class and its four SEPs another, so an EP order matters only through its FEP/SEP pattern."""
    n = len(scorer.eps)
    T, lat, inv = scorer.T, scorer.latency, scorer.inv_bw

    def same(a: int, b: int) -> bool:
        if not np.array_equal(T[:, a], T[:, b]):
            return False
        others = [c for c in range(n) if c not in (a, b)]
        return (lat[a, b] == lat[b, a] and inv[a, b] == inv[b, a]
                and np.array_equal(lat[a, others], lat[b, others]) and np.array_equal(lat[others, a], lat[others, b])
                and np.array_equal(inv[a, others], inv[b, others]) and np.array_equal(inv[others, a], inv[others, b]))

    classes: list[list[int]] = []
    for e in range(n):
        for cls in classes:
            if all(same(cls[0], e) and same(m, e) for m in cls):
                cls.append(e)
                break
        else:
            classes.append([e])
    return classes


def class_orders(classes: list[list[int]], k: int) -> list[tuple[int, ...]]:
    """One representative EP order per class pattern of a k-stage pipeline: the j-th stage of a
    class gets the class's j-th EP. Exact when the classes are interchangeable (ep_classes)."""
    out = []
    for pattern in itertools.product(range(len(classes)), repeat=k):
        counts = [pattern.count(c) for c in range(len(classes))]
        if any(counts[c] > len(classes[c]) for c in range(len(classes))):
            continue
        used = [0] * len(classes)
        order = []
        for c in pattern:
            order.append(classes[c][used[c]])
            used[c] += 1
        out.append(tuple(order))
    return out


@dataclass
class ESResult:
    """Exhaustive search over splits x EP class patterns, in Pipe-search's CV-sorted database
    order (depths ascending), as if every configuration were measured on the tuning clock."""

    best: Configuration
    best_fps: float
    n_configs: int
    n_splits: int
    database_s: float
    clock_s: float
    time_to_best_s: float
    trace: pd.DataFrame | None     # clock_s, best_fps_so_far at every improvement (+ the end)


def exhaustive(problem: PipelineProblem, trace: bool = True) -> ESResult:
    """ES on ``problem`` (every depth of it, every EP assignment up to interchangeable EPs).

    The whole space is scored with :class:`~hetsim.analytic.SplitScorer`; with ``trace`` every
    configuration is charged its trial cost (the problem's Measurement, ``mode="stages"``) after
    the database generation (the same split database Pipe-search builds, §7.1), giving the
    convergence curve of Fig. 4 without a Python loop over millions of trials.
    """
    m = problem.measurement
    if not m.is_closed_form or m.mode != "stages":
        raise ValueError("exhaustive() needs a noise-free mode='stages' measurement")
    eps = [problem.platform.ep(e) for e in problem.eps]
    scorer = SplitScorer(problem.platform, problem.workload, problem.cost, eps, problem.state)
    classes = ep_classes(scorer)
    weights = problem.layer_weights(True)
    n_splits = sum(problem.count_splits(k, False) for k in problem.depths)
    database_s = m.database_cost(n_splits)
    fps_parts, cost_parts = [], []
    best: tuple[float, Configuration | None] = (-math.inf, None)
    for k in problem.depths:
        orders = class_orders(classes, k)
        scored = scorer.score(k, orders, limit=None)
        tp = scored.throughput
        i, j = np.unravel_index(int(np.argmax(tp)), tp.shape)
        if tp[i, j] > best[0]:
            split = tuple(int(x) for x in np.diff(scored.boundaries[i]))
            best = (float(tp[i, j]), Configuration(split, tuple(problem.eps[e] for e in orders[j])))
        if not trace:
            continue
        bounds = scored.boundaries
        total = np.empty_like(tp)
        for col, o in enumerate(orders):
            total[:, col] = scorer.stage_times(bounds, o).sum(axis=1)
        row_of = {tuple(int(x) for x in np.diff(b)): r for r, b in enumerate(bounds)}
        rows = np.array([row_of[s] for s in generate_database(weights, [k]).lists[k]])
        fps_parts.append(tp[rows].ravel())
        cost_parts.append((total[rows] * m.frames + m.trial_overhead_s).ravel())
    assert best[1] is not None
    n_configs = sum(problem.count_splits(k, False) * len(class_orders(classes, k)) for k in problem.depths)
    if not trace:
        return ESResult(best[1], best[0], n_configs, n_splits, database_s, math.nan, math.nan, None)
    fps = np.concatenate(fps_parts)
    clock = database_s + np.cumsum(np.concatenate(cost_parts))
    best_so_far = np.maximum.accumulate(fps)
    first_best = int(np.argmax(fps >= best[0]))
    keep = np.flatnonzero(np.diff(best_so_far, prepend=-np.inf) > 0)
    keep = np.unique(np.concatenate([keep, [len(fps) - 1]]))
    tr = pd.DataFrame({"trial": keep + 1, "clock_s": clock[keep], "best_fps_so_far": best_so_far[keep]})
    return ESResult(best[1], best[0], n_configs, n_splits, database_s, float(clock[-1]),
                    float(clock[first_best]), tr)
