"""Running one cell of a sweep (in a worker process, a Dask worker, or in-process).

A cell's ``config`` (:func:`hetsim.sweep.spec.expand`) is plain JSON: the worker loads the platform
(with the cell's ``--set`` overrides and DVFS preset), the workload and the cost model, then either
evaluates one mapping (``kind="mapping"``: :func:`hetsim.evaluation.simulate` with the cell's
:class:`~hetsim.options.RunOptions`) or runs one exploration (``kind="explorer"``: the cell is an
:class:`~hetsim.exploration.spec.ExplorationSpec`, built by :func:`hetsim.exploration.spec.build` as
``hetsim explore`` builds its own, seeded by the cell). Platforms, workloads, cost models and
problems are cached per process, so the cells of a sweep that share them pay once.

A cell whose input is bad (a mapping that does not fit, an override of a missing field, an algorithm
that refuses the problem) gives ``status="error"`` and its one-line message; any other exception is
recorded the same way with its type, so one cell never stops a sweep.
"""

from __future__ import annotations

import math
import time
from typing import Any

from hetsim.errors import HetsimError

#: The metric columns of a mapping cell, in order.
MAPPING_METRICS = ("throughput_fps", "stream_throughput_fps", "latency_mean_s", "latency_p50_s",
                   "latency_p99_s", "makespan_s", "energy_J", "energy_per_frame_J", "bottleneck_stage")


def _overrides(config: dict) -> tuple[str, ...]:
    from hetsim.exploration.spec import overrides

    return overrides(dict(config["set"]))


def platform_of(config: dict):
    from hetsim.exploration.spec import cached_platform

    return cached_platform(config["platform"], _overrides(config), config["dvfs"])


def cost_of(config: dict):
    from hetsim.exploration.spec import cached_cost

    return cached_cost((config["platform"], _overrides(config), config["dvfs"]), config["workload"],
                       config.get("cost_model"), config.get("cost_table"), config.get("fallback"))


def workload_of(config: dict):
    from hetsim.exploration.spec import cached_workload

    return cached_workload(config["workload"])


# -- mapping cells -------------------------------------------------------------------------------------
def run_mapping(config: dict) -> dict[str, Any]:
    from hetsim.evaluation import simulate
    from hetsim.mapping import load_mapping
    from hetsim.options import RunOptions

    platform, workload, cost = platform_of(config), workload_of(config), cost_of(config)
    mapping = load_mapping(config["mapping"], platform, workload, cost)
    fields = {k: v for k, v in config["run"].items() if v is not None}
    options = RunOptions.make(**fields, seed=config["seed"])
    m = simulate(platform, workload, mapping, options, cost=cost, intervals=False).metrics
    energy = m.energy_J
    return {
        "throughput_fps": m.throughput_fps, "stream_throughput_fps": m.stream_throughput_fps,
        "latency_mean_s": m.latency_s["mean"], "latency_p50_s": m.latency_s["p50"],
        "latency_p99_s": m.latency_s["p99"], "makespan_s": m.makespan_s, "energy_J": energy,
        "energy_per_frame_J": (energy / m.frames) if energy is not None else None,
        "bottleneck_stage": (m.bottleneck + 1) if m.bottleneck is not None else None,
    }


# -- explorer cells ------------------------------------------------------------------------------------
def exploration_spec(config: dict):
    """The :class:`~hetsim.exploration.spec.ExplorationSpec` an explorer cell runs (its config
    without the cell's kind and label)."""
    from hetsim.exploration.spec import ExplorationSpec

    return ExplorationSpec.make(**{k: v for k, v in config.items() if k not in ("kind", "label")})


def _setup(config: dict, noise_free: bool = False):
    """The cell's exploration, built as ``hetsim explore`` builds its own (hetsim.exploration.spec):
    the base's settings that do not apply to the cell's algorithm left out, the inputs and
    problems shared with the process's other cells. A cell confirms no candidate in the DES unless
    its spec asks (``confirm_top``): its row reports the search's own best, not the answer."""
    from hetsim.exploration.spec import build

    return build(exploration_spec(config), strict=False, noise_free=noise_free, cache=True,
                 confirm_default=0)


def problem_kind(config: dict) -> str:
    from hetsim.exploration.registry import get_algorithm

    return get_algorithm(config["algorithm"]).problem


def make_problem(config: dict, noise_free: bool = False):
    """The problem an explorer cell explores (``noise_free``: the same with ``noise_sigma=0``, which
    answers what the chosen candidate is really worth)."""
    return _setup(config, noise_free).problem


def run_explorer(config: dict) -> dict[str, Any]:
    setup = _setup(config)
    problem = setup.problem
    t0 = time.perf_counter()
    r = setup.run()
    wall_s = time.perf_counter() - t0
    column = problem.objective_column
    true = r.best_value
    if r.best is not None and problem.measurement.noise_sigma > 0:
        twin = make_problem(config, noise_free=True)
        true = twin.value(twin.measure(r.best))
    return {
        "problem": problem.kind, "objective": problem.objective,
        f"best_{column}": r.best_value, f"true_{column}": true, "best_mapping": r.best_mapping,
        "trials": r.n_trials, "measured": r.n_measured, "distinct": r.n_distinct,
        "clock_s": r.clock_s, "database_s": r.database_s, "space_size": r.space_size,
        "stop_reason": r.stop_reason, "wall_s": wall_s, **_placement_extras(problem, r),
    }


def _placement_extras(problem, r) -> dict[str, Any]:
    """A placement's split ops, and the lower bound an exact explorer proved (its ``info``:
    ``lower_bound_s``, ``optimal``, ``rounding_s``): what a report needs to judge quality against
    a proven optimum."""
    if problem.kind != "placement":
        return {}
    out: dict[str, Any] = {"split_ops": len(r.best.splits) if r.best is not None else math.nan}
    if "lower_bound_s" in r.info and problem.objective == "latency":
        out.update(lower_bound_latency_s=float(r.info["lower_bound_s"]),
                   proven_optimal=bool(r.info.get("optimal", False)),
                   bound_rounding_s=float(r.info.get("rounding_s", 0.0)))
    return out


# -- the worker's entry point --------------------------------------------------------------------------
def run_cell(config: dict) -> tuple[str, str | None, dict[str, Any]]:
    """(status, error, metrics) of one cell: ``ok`` or ``error`` with one line."""
    try:
        metrics = run_mapping(config) if config["kind"] == "mapping" else run_explorer(config)
        return "ok", None, _finite(metrics)
    except HetsimError as e:
        return "error", str(e), {}
    except Exception as e:  # noqa: BLE001 - a bug in one cell must not stop an overnight sweep
        message = " ".join(str(e).split()) or "(no message)"
        return "error", f"internal error: {type(e).__name__}: {message}", {}


def _finite(metrics: dict[str, Any]) -> dict[str, Any]:
    """inf/nan become None (JSON has neither; the table reads them back as missing)."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in metrics.items()}


def run_batch(batch: list[tuple[str, dict]]) -> list[tuple[str, str, str | None, dict, float]]:
    """Run ``(id, config)`` cells one after another: ``(id, status, error, metrics, seconds)`` each.
    Sent to workers in batches because a task costs more than a millisecond cell."""
    out = []
    for cell_id, config in batch:
        t0 = time.perf_counter()
        status, error, metrics = run_cell(config)
        out.append((cell_id, status, error, metrics, time.perf_counter() - t0))
    return out


def init_worker() -> None:
    """Local pool workers: one BLAS thread each (the pool is the parallelism)."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except Exception:  # noqa: BLE001 - only a performance hint
        pass
