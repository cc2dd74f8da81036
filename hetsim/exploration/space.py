"""The default design space of a pipeline exploration: which EPs, in which order, which depths.

``hetsim explore -p P -w W`` with no ``--eps`` must work on every platform: on the chiplets every
EP is a whole cluster, but a big.LITTLE board's EPs (``B1..B4``, ``s1..s4``) share clusters, and
stages that own whole EPs (Shisha's space, "permutations") cannot take two of them at once.
:func:`default_eps` picks what works everywhere and says what it picked::

    >>> from hetsim.cost import make_cost_model
    >>> platform, workload = load_platform("rk3588"), load_workload("resnet50")
    >>> eps, note = default_eps(platform, workload, make_cost_model(platform))
    >>> eps
    ['npu', 'gpu', 'big', 'little']

* **Which**: each cluster whole and each accelerator: the largest EPs that never share cores, so
  every ordered choice of them is a valid pipeline. (Smaller core groups, Pipe-it's ``B2-B2-s4``,
  are a choice the user makes with ``--eps``.)
* **In which order**: [choice] fastest first, by the cost model's time of the whole workload on
  each EP. The algorithms that give stages EPs by position read this order: Pipe-search as a
  baseline puts stage i on the i-th EP (000 digest §5.5), and Shisha ranks EPs by memory
  bandwidth first, then by this order (§8 item 11), which on a one-memory SoC is the whole
  ranking. In platform order, both would give a phone SoC's CPU clusters the stages and leave its
  NPU idle.
* **Depths**: 1 .. the number of EPs: one EP alone is a candidate wherever it can run the workload
  (:func:`cap_depths` caps larger requests with a note).
"""

from __future__ import annotations

from collections.abc import Sequence

from hetsim.cost import CostModel, DvfsState


def ep_times(platform, workload, cost: CostModel, names: Sequence[str],
             state: DvfsState | None = None) -> dict[str, float]:
    """The cost model's time of the whole workload on each named EP, s (one frame, one EP)."""
    return {n: float(cost.layer_times(workload, platform.ep(n), state).sum()) for n in names}


def default_eps(platform, workload, cost: CostModel, state: DvfsState | None = None) -> tuple[list[str], str]:
    """The default candidate EPs (module docstring) and a one-line note saying what was chosen."""
    names = [c.name for c in platform.clusters] + [a.name for a in platform.accelerators]
    times = ep_times(platform, workload, cost, names, state)
    order = sorted(names, key=lambda n: (times[n], names.index(n)))
    incapable = [text for n in order if (text := incapable_layers(cost, workload, platform.ep(n))) is not None]
    kinds = []
    if platform.clusters:
        kinds.append("each cluster whole")
    if platform.accelerators:
        kinds.append("each accelerator")
    note = (f"candidate EPs {', '.join(order)} ({' and '.join(kinds)}, fastest first by the "
            f"{cost.name} time of one {workload.name} frame: "
            f"{', '.join(f'{n} {_ms(times[n])}' for n in order)})"
            + (f"; {'; '.join(incapable)}" if incapable else "")
            + f"; --eps chooses others{_example(platform)}")
    return order, note


def incapable_layers(cost: CostModel, workload, ep, shown: int = 3) -> str | None:
    """Which layers ``ep`` cannot run, each with its first op it cannot run and that op's kind, and
    why (``"npu cannot run layer 20 (op 'avgpool', kind reduce): kind reduce is not one of the kinds
    npu runs"``); None when it runs them all."""
    bad = []
    for layer in workload.layers:
        op = next((op for op in layer.ops if not cost.supports(op, ep)), None)
        if op is not None:
            bad.append((layer, op))
    if not bad:
        return None
    listed = ", ".join(f"layer {layer.index} (op {op.name!r}, kind {op.kind})" for layer, op in bad[:shown])
    more = f" and {len(bad) - shown} more" if len(bad) > shown else ""
    head = (f"{ep.name} cannot run {listed}" if len(bad) == 1 else
            f"{ep.name} cannot run {len(bad)} of the {workload.num_layers} layers: {listed}{more}")
    return f"{head}: {cost.why_not(bad[0][1], ep)}"


def _example(platform) -> str:
    """An example of smaller EPs for the note: half of each cluster that has a symbol."""
    halves = [f"{c.symbol}{c.cores // 2}" for c in platform.clusters if c.symbol and c.cores >= 2]
    return f" (e.g. core groups {','.join(halves)})" if halves else ""


def cap_depths(depths: Sequence[int], n_eps: int, n_layers: int,
               name: str = "--depth") -> tuple[list[int], str | None]:
    """Requested depths with those above the number of EPs (or layers) capped, and a note saying
    so (None when nothing was capped; ``name``: the setting's name in it); the cap serves a script
    that asks for "up to 8 stages" on a platform of 4 EPs."""
    top = min(n_eps, n_layers)
    capped = sorted({min(d, top) for d in depths})
    over = sorted(d for d in depths if d > top)
    if not over:
        return capped, None
    what = f"{n_eps} candidate EPs" if n_eps <= n_layers else f"{n_layers} layers"
    return capped, (f"{name} {', '.join(map(str, over))} is more than the {what} "
                    f"(a stage owns its EP): capped at {top}")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"
