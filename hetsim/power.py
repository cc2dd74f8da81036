"""Energy from busy times: the platform's power model applied to what an evaluation measured."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hetsim.platform import ExecutionPlace, Platform


def energy_J(platform: Platform, units: Iterable[tuple[ExecutionPlace, float]], makespan_s: float,
             link_bytes: Mapping[str, float] | None = None,
             state: Mapping[str, str] | None = None, coherent_s: float = 0.0) -> float | None:
    """Energy over ``makespan_s``, or None when the platform has no power model.

    ``units`` are (EP, busy seconds) pairs, one per unit of work (a pipeline stage, an EP of a
    placement): two stages on EPs of the same name are two entries. Per cluster: busy
    core-seconds (busy x cores, summed over its units) at the DVFS level's active power per core,
    the rest of its core-seconds at idle power; accelerators likewise; plus the board's static
    power over the makespan, every link's bytes at its energy per byte, and ``power.coherence_W``
    over ``coherent_s``, the time two clusters were busy at once (see :func:`overlap_s`).
    """
    if not platform.has_power_model:
        return None
    state = state or {}
    core_busy: dict[str, float] = {}
    acc_busy: dict[str, float] = {}
    for ep, t in units:
        if ep.cluster:
            core_busy[ep.cluster] = core_busy.get(ep.cluster, 0.0) + t * ep.cores
        else:
            acc_busy[ep.place] = acc_busy.get(ep.place, 0.0) + t
    total = 0.0
    for c in platform.clusters:
        lvl = platform.core_type(c.core_type).level(state.get(c.name) or c.dvfs)
        busy = min(core_busy.get(c.name, 0.0), c.cores * makespan_s)
        total += busy * (lvl.active_W_per_core or 0.0) + (c.cores * makespan_s - busy) * (lvl.idle_W_per_core or 0.0)
    for a in platform.accelerators:
        busy = min(acc_busy.get(a.name, 0.0), makespan_s)
        total += busy * (a.active_W or 0.0) + (makespan_s - busy) * (a.idle_W or 0.0)
    if platform.power is not None:
        total += platform.power.static_W * makespan_s + platform.power.coherence_W * coherent_s
    links = {lk.name: lk for lk in platform.links}
    for name, nbytes in (link_bytes or {}).items():
        total += nbytes * links[name].energy_pJ_per_byte * 1e-12
    return total


def active_power_W(platform: Platform, units: Iterable[tuple[ExecutionPlace, float]], makespan_s: float,
                   state: Mapping[str, str] | None = None, coherent_s: float = 0.0) -> float | None:
    """Average *active* power over a run: what it draws above the board idling with the same
    clusters on (Pipe-it Table VIII's P_A = P − P_idle). Busy core-seconds at (active − idle) W per
    core, plus ``power.coherence_W`` over ``coherent_s``, over the makespan. None without a power model."""
    if not platform.has_power_model or makespan_s <= 0:
        return None
    state = state or {}
    total = 0.0
    for ep, t in units:
        if ep.cluster:
            c = platform.cluster(ep.cluster)
            lvl = platform.core_type(c.core_type).level(state.get(c.name) or c.dvfs)
            total += t * ep.cores * ((lvl.active_W_per_core or 0.0) - (lvl.idle_W_per_core or 0.0))
        else:
            a = platform.accelerator(ep.place)
            total += t * ((a.active_W or 0.0) - (a.idle_W or 0.0))
    if platform.power is not None:
        total += platform.power.coherence_W * coherent_s
    return total / makespan_s


def overlap_s(a: Iterable[tuple[float, float]], b: Iterable[tuple[float, float]]) -> float:
    """Total time during which some interval of ``a`` and some interval of ``b`` are both open (s).

    With ``a`` the busy intervals of one cluster's stages and ``b`` the other's, this is the time the
    clusters worked at once: what ``coherent_s`` of :func:`energy_J` and :func:`active_power_W` wants.
    """
    ua, ub = _union(a), _union(b)
    total, i, j = 0.0, 0, 0
    while i < len(ua) and j < len(ub):
        lo, hi = max(ua[i][0], ub[j][0]), min(ua[i][1], ub[j][1])
        if hi > lo:
            total += hi - lo
        if ua[i][1] < ub[j][1]:
            i += 1
        else:
            j += 1
    return total


def _union(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for s, e in sorted((float(s), float(e)) for s, e in intervals if e > s):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out
