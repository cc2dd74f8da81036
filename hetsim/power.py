"""Energy from busy times: the platform's power model applied to what an evaluation measured."""

from __future__ import annotations

from collections.abc import Mapping

from hetsim.platform import ExecutionPlace, Platform


def energy_J(platform: Platform, busy_s: Mapping[ExecutionPlace, float], makespan_s: float,
             link_bytes: Mapping[str, float] | None = None,
             state: Mapping[str, str] | None = None) -> float | None:
    """Energy over ``makespan_s``, or None when the platform has no power model.

    Per cluster: busy core-seconds at the DVFS level's active power per core, the rest of its
    core-seconds at idle power; accelerators likewise; plus the board's static power over the
    makespan and every link's bytes at its energy per byte.
    """
    if not platform.has_power_model:
        return None
    state = state or {}
    core_busy: dict[str, float] = {}
    acc_busy: dict[str, float] = {}
    for ep, t in busy_s.items():
        if ep.cluster:
            core_busy[ep.cluster] = core_busy.get(ep.cluster, 0.0) + t * ep.cores
        else:
            acc_busy[ep.accelerator] = acc_busy.get(ep.accelerator, 0.0) + t
    total = 0.0
    for c in platform.clusters:
        lvl = platform.core_type(c.core_type).level(state.get(c.name) or c.dvfs)
        busy = min(core_busy.get(c.name, 0.0), c.cores * makespan_s)
        total += busy * lvl.active_W_per_core + (c.cores * makespan_s - busy) * lvl.idle_W_per_core
    for a in platform.accelerators:
        busy = min(acc_busy.get(a.name, 0.0), makespan_s)
        total += busy * a.active_W + (makespan_s - busy) * a.idle_W
    if platform.power is not None:
        total += platform.power.static_W * makespan_s
    links = {lk.name: lk for lk in platform.links}
    for name, nbytes in (link_bytes or {}).items():
        total += nbytes * links[name].energy_pJ_per_byte * 1e-12
    return total
