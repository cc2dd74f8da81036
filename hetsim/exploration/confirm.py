"""The answer of a pipeline exploration in the DES: the best few candidates of the search
re-simulated as ``hetsim simulate`` runs them, and the DES's own optimum of a space.

A search scores thousands of candidates with a cheap measurement (Paper I's stage trials, the
closed form with its fluid contention estimate); what a user runs next is ``hetsim simulate`` of the
answer, in the DES, where stages that share a memory or a link slow each other. :func:`confirm`
re-simulates the ``top_k`` best distinct candidates the search measured in that very run
(:func:`simulate_options`: the DES, 100 frames, contention, seed 0, the problem's DVFS state and
cost model) and answers with the best of them by the DES's value of the objective, so the printed
answer is the number ``hetsim simulate`` prints for it::

    result = setup.run()                    # build(spec) resolves spec.confirm_top (default 20)
    result.answer, result.answer_value      # the confirmed mapping and its DES value
    result.confirmation.table               # each re-simulated candidate: search vs DES value

:func:`des_optimum` is the DES's best of a whole space, exactly, without simulating all of it:
contention only slows stages down, so no configuration beats its contention-free closed form, and
configurations are simulated in decreasing order of that bound until the bound falls below the best
DES throughput found.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError

#: Candidates re-simulated by default (an exploration's; a sweep's cells confirm none unless asked).
#: [choice] 20: on rk3588, ResNet50's best DES mapping is the 21st by the fluid estimate, and the
#: best of the estimate's top 1 / 10 / 20 / 30 reaches 90.9 / 93.4 / 96.8 / 100 % of the DES
#: optimum (docs/model.md); a DES run of a 4-stage ResNet50 costs some 30 ms.
DEFAULT_TOP_K = 20
#: Front points re-simulated at most (a --pareto front).
MAX_FRONT = 50


def simulate_options(problem):
    """The run ``hetsim simulate`` makes of a pipeline (RunOptions' defaults: the DES, 100 frames,
    contention, saturated source, one-frame queues, seed 0) in the problem's DVFS state."""
    from hetsim.options import RunOptions

    return RunOptions(engine="des", state=dict(problem.state) if problem.state else None)


def engine_text(options) -> str:
    """How the confirming runs were made, for notes and tables."""
    return (f"{options.engine} ({options.frames or 100} frames"
            f"{', contention' if options.contention else ''})")


def des_value(problem, config, metrics, objective: str | None = None) -> float:
    """The problem's objective (or another ``objective``) of ``config`` from a DES run's metrics:
    the throughput, the mean latency, the energy per frame over the stream; memory as the search
    measures it (it does not depend on the engine)."""
    objective = objective or problem.objective
    if objective == "throughput":
        return float(metrics.throughput_fps)
    if objective == "latency":
        return float(metrics.latency_s["mean"])
    if objective == "energy":
        return metrics.energy_J / metrics.frames if metrics.energy_J is not None else math.inf
    return float(sum(_memory(problem, config)))


def _memory(problem, config) -> list[float]:
    from hetsim.analytic import stage_peak_memory

    return stage_peak_memory(problem.pipeline(config), problem.workload, 1)


@dataclass
class Confirmation:
    """The re-simulated candidates (``table``: rank by the search, mapping, the search's value and
    the DES's, throughput, latency and energy per frame in the DES), the best of them by the DES
    (``best``, ``value``, ``metrics``) and how they were run (``engine``)."""

    engine: str
    options: Any
    table: pd.DataFrame
    best: Any
    value: float
    metrics: Any


def simulate_config(problem, config, options=None):
    """The DES metrics of one configuration of ``problem`` (``hetsim simulate``'s run)."""
    from hetsim.evaluation import evaluate

    options = options or simulate_options(problem)
    return evaluate(problem.platform, problem.workload, problem.pipeline(config), options, cost=problem.cost)


def ranked(result, problem) -> list:
    """The distinct capable configurations the search measured, best first by its own value (ties:
    in the order of their trials)."""
    order = {key: i for i, key in enumerate(result.results)}
    rows = [(cfg, problem.value(r)) for cfg, r in result.results.items()
            if problem.capable(cfg) and math.isfinite(problem.value(r))]
    sign = -1.0 if problem.maximize else 1.0
    rows.sort(key=lambda cv: (sign * cv[1], order[cv[0]]))
    return rows


def confirm(result, top_k: int = DEFAULT_TOP_K, options=None) -> Confirmation | None:
    """Re-simulate the ``top_k`` best distinct candidates of a pipeline exploration in the DES and
    choose the best by the DES's value (ties: the search's order). None for other problems, or
    when the search measured no capable candidate."""
    problem = result.problem
    if getattr(problem, "kind", None) != "pipeline" or top_k <= 0:
        return None
    candidates = ranked(result, problem)[:top_k]
    if not candidates:
        return None
    options = options or simulate_options(problem)
    rows, runs = [], []
    for rank, (cfg, searched) in enumerate(candidates, 1):
        m = simulate_config(problem, cfg, options)
        value = des_value(problem, cfg, m)
        runs.append((cfg, value, m))
        rows.append({"rank": rank, "mapping": str(cfg), f"search_{problem.objective_column}": searched,
                     f"des_{problem.objective_column}": value, "des_throughput_fps": m.throughput_fps,
                     "des_latency_s": m.latency_s["mean"],
                     "des_energy_per_frame_J": (m.energy_J / m.frames) if m.energy_J is not None else None})
    sign = -1.0 if problem.maximize else 1.0
    best_cfg, best_value, best_m = min(runs, key=lambda r: sign * r[1])   # first of equals: the search's order
    return Confirmation(engine_text(options), options, pd.DataFrame(rows), best_cfg, best_value, best_m)


def confirm_front(result, front: pd.DataFrame, objectives, options=None) -> pd.DataFrame:
    """The points of a Pareto front (``front``'s ``mapping`` column, at most :data:`MAX_FRONT`)
    re-simulated in the DES: each objective's DES value and whether the point stays on the front
    of the re-simulated points (``on_des_front``)."""
    from hetsim.exploration.problem import PIPELINE_OBJECTIVES

    problem = result.problem
    options = options or simulate_options(problem)
    by_text = {str(cfg): cfg for cfg in result.results}
    rows = []
    for text in list(front["mapping"])[:MAX_FRONT]:
        cfg = by_text[text]
        m = simulate_config(problem, cfg, options)
        row: dict[str, Any] = {"mapping": text}
        for o in objectives:
            row[f"des_{PIPELINE_OBJECTIVES[o][0]}"] = des_value(problem, cfg, m, o)
        rows.append(row)
    out = pd.DataFrame(rows)
    signs = [(-1.0 if PIPELINE_OBJECTIVES[o][2] else 1.0) for o in objectives]
    values = np.array([[s * r[f"des_{PIPELINE_OBJECTIVES[o][0]}"] for o, s in zip(objectives, signs, strict=True)]
                       for r in rows], dtype=float)
    on = [not any(np.all(values[j] <= values[i]) and np.any(values[j] < values[i])
                  for j in range(len(values)) if j != i) for i in range(len(values))]
    out["on_des_front"] = on
    return out


def des_optimum(problem, options=None, max_runs: int = 100_000):
    """The best DES throughput of the whole space of ``problem`` (a throughput PipelineProblem),
    exactly: configurations in decreasing order of their contention-free closed form (an upper
    bound of their DES throughput) are simulated until the bound cannot beat the best found.
    Returns (configuration, DES throughput, runs made). Refuses past ``max_runs`` simulations."""
    from hetsim.analytic import SplitScorer, split_boundaries
    from hetsim.exploration.problem import Configuration

    if problem.objective != "throughput":
        raise HetsimError(f"des_optimum of {problem.name}: computed for the throughput objective")
    problem.check_enumerable(problem.distinct_space_size, "des_optimum")
    options = options or simulate_options(problem)
    scorer = SplitScorer(problem.platform, problem.workload, problem.cost,
                         [problem.platform.ep(e) for e in problem.eps], problem.state)
    index = {e: i for i, e in enumerate(problem.eps)}
    bounds_of, fps_parts, keys = {}, [], []
    for k in problem.depths:
        bounds = split_boundaries(problem.num_layers, k)
        bounds_of[k] = bounds
        for order in problem.orders(k):
            times = scorer.stage_times(bounds, [index[e] for e in order])
            mask = problem.incapable_mask(bounds, order)
            if mask is not None:
                times[mask] = math.inf
            fps_parts.append(1.0 / times.max(axis=1))
            keys.append((k, order))
    flat = np.concatenate(fps_parts)
    part = np.concatenate([np.full(len(p), i) for i, p in enumerate(fps_parts)])
    row = np.concatenate([np.arange(len(p)) for p in fps_parts])
    best, best_fps, runs = None, -math.inf, 0
    for i in np.argsort(-flat, kind="stable"):
        if flat[i] <= best_fps or flat[i] <= 0:
            break
        if runs >= max_runs:
            raise HetsimError(f"des_optimum of {problem.name}: more than {max_runs:,} DES runs needed")
        k, order = keys[part[i]]
        split = tuple(int(x) for x in np.diff(bounds_of[k][row[i]]))
        cfg = Configuration(split, order)
        fps = simulate_config(problem, cfg, options).throughput_fps
        runs += 1
        if fps > best_fps:
            best, best_fps = cfg, fps
    if best is None:
        raise HetsimError(f"des_optimum of {problem.name}: no configuration can run every layer")
    return best, best_fps, runs
