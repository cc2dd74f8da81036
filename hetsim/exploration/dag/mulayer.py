"""μLayer (Kim et al., EuroSys 2019) as HOPE compares with it (HOPE §5.4): single-layer
acceleration, every layer in turn, its output channels divided between the CPU and the GPU.

The result is a *sequential split* mapping (:class:`~hetsim.mapping.Placement` with ``splits``
and ``sequential=True``): ops run one at a time in the workload's order; a split op computes a
share of its output channels on each of the two EPs, in parallel, and its slices are gathered on
its home EP (the one with the larger share), which pays the per-layer synchronisation (the cost
model's :meth:`~hetsim.cost.CostModel.gather_demand`; a share's time is its
:meth:`~hetsim.cost.CostModel.share_demand`).

Every op with multiply-accumulates (conv, depthwise, fully connected, matmul: μLayer's layers)
is split, the CPU's share r chosen so that both EPs finish together (channel-wise workload
distribution), in whole channels, at least one per EP; every other op runs whole on the EP where
it ends first. With ``always_split=False`` a compute op is split only when that is faster than
running it whole [an alternative reading: μLayer as its paper describes it distributes every
layer]. Times count the op's input transfers to the EPs that need them (each tensor moved to an EP
once) and, for a split, the slice moved to the home EP and the gather. FP32, no
processor-friendly quantization [paper]; no branch distribution ("single-layer acceleration"
[paper]).
"""

from __future__ import annotations

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice
from hetsim.exploration.dag.tables import Plan, SchedView

SPLIT_KINDS = frozenset({"conv", "dw", "fc", "matmul"})


def can_split(op) -> bool:
    """Whether μLayer may divide ``op``'s output channels over two EPs (both able to run it): a
    layer with multiply-accumulates and at least one output channel for each EP."""
    return str(op.kind) in SPLIT_KINDS and op.out_shape.c >= 2


def _fetch_s(view: SchedView, home: list[int], where: list[set[int]], i: int, d: int) -> float:
    """The time op i's inputs take to reach EP d: the inputs not on d yet (without caching, every
    input not made on d), moved one after another on d's lane or copy lane, or all at once
    without a lane (comm="free")."""
    times = [view.C(p, home[p], d) for p in view.preds[i]
             if d != home[p] and (not view.caching or d not in where[p])]
    return (max(times, default=0.0) if view.comm == "free" else sum(times))


def _split_options(view: SchedView, op, cpu: int, gpu: int, xc: float,
                   xg: float) -> list[tuple[float, int, tuple[int, int, float]]]:
    """The op split between the CPU and the GPU, its inputs there after ``xc`` and ``xg`` s: the
    CPU's share r so that both finish together, in whole channels, then one option per home EP
    (the end of the gather there, s; the home; (home, other, home's fraction))."""
    problem = view.problem
    cost, eps = problem.cost, problem.ep_objects
    dc = cost.op_demand(op, eps[cpu], problem.state)
    dg = cost.op_demand(op, eps[gpu], problem.state)
    # equal finish: xc + fixed_c + r busy_c = xg + fixed_g + (1 - r) busy_g
    denom = dc.busy_s + dg.busy_s
    r = (xg + dg.fixed_s + dg.busy_s - xc - dc.fixed_s) / denom if denom > 0 else 0.5
    channels = op.out_shape.c
    n_cpu = min(max(round(r * channels), 1), channels - 1)
    r = n_cpu / channels
    t_cpu = xc + cost.share_demand(op, eps[cpu], r, problem.state).time_s
    t_gpu = xg + cost.share_demand(op, eps[gpu], 1 - r, problem.state).time_s
    t_of = {cpu: (t_cpu, xc), gpu: (t_gpu, xg)}
    options = []
    for h, o, share_o in ((cpu, gpu, 1 - r), (gpu, cpu, r)):
        back = cost.transfer_time(op.output_bytes * share_o, eps[o], eps[h])
        gather = cost.gather_demand(op, eps[h], problem.state).time_s
        (t_h, x_h), (t_o, _) = t_of[h], t_of[o]
        if view.comm == "consumer":     # the slice lands on h's lane after h's share
            t = max(t_h, t_o) + back
        elif view.comm == "copy":       # on h's copy lane, after h's inputs
            t = max(t_h, max(t_o, x_h) + back)
        else:
            t = max(t_h, t_o + back)
        frac_h = r if h == cpu else 1 - r
        options.append((t + gather, h, (h, o, frac_h)))
    return options


def mulayer(view: SchedView, cpu: str = "cpu", gpu: str = "gpu", split: bool = True,
            always_split: bool = True) -> Plan:
    """The μLayer mapping over EPs ``cpu`` and ``gpu`` (``"cpu"``: the first CPU cluster, ``"gpu"``:
    the first accelerator, or EP names), as a sequential split plan (module docstring);
    ``split=False``: each op whole where it ends first. The prediction is μLayer's estimate of
    the latency; ``info['split_ops']`` counts the ops split."""
    check_choice("muLayer", "split", split, (True, False))
    check_choice("muLayer", "always_split", always_split, (True, False))
    c = view.ep_index(cpu, "muLayer", "cpu")
    g = view.ep_index(gpu, "muLayer", "gpu")
    home, splits, estimate = mulayer_mapping(view, c, g, split, always_split)
    return Plan([int(d) for d in home], None, True, estimate, {"split_ops": len(splits)}, splits=splits)


def mulayer_mapping(view: SchedView, cpu: int, gpu: int, split: bool = True, always_split: bool = True):
    """The μLayer mapping over EPs ``cpu`` and ``gpu`` (indices into the view's EPs): (home EP index
    per op, {op index: (home, other, home's fraction)}, the estimated latency, s)."""
    if view.problem is None:
        raise HetsimError(f"{view.name}: μLayer prices channel shares with a cost model: it needs a view "
                          f"of a PlacementProblem")
    w = view.problem.workload
    pair = (cpu, gpu)
    if cpu == gpu:
        raise HetsimError(f"μLayer needs two different EPs, got {view.eps[cpu]} twice")
    home = [-1] * view.n
    where: list[set[int]] = [set() for _ in range(view.n)]     # EPs each op's output is on
    splits: dict[int, tuple[int, int, float]] = {}
    total = 0.0
    for i in range(view.n):
        op = w.op(view.names[i])
        options: list[tuple[float, int, tuple[int, int, float] | None]] = []
        splittable = split and can_split(op) and all(d in view.capable[i] for d in pair)
        for d in pair:
            if d in view.capable[i] and not (splittable and always_split):
                options.append((_fetch_s(view, home, where, i, d) + view.cl_list[i][d], d, None))
        if splittable:
            options += _split_options(view, op, cpu, gpu, _fetch_s(view, home, where, i, cpu),
                                      _fetch_s(view, home, where, i, gpu))
        if not options:
            raise HetsimError(f"μLayer: op {op.name} (kind {op.kind}) runs on neither "
                              f"{view.eps[cpu]} nor {view.eps[gpu]}")
        t, h, spec = min(options, key=lambda o: (o[0], o[1]))
        total += t
        home[i] = h
        needs = pair if spec is not None else (h,)
        for d in needs:
            for p in view.preds[i]:
                where[p].add(d)
        where[i].add(h)
        if spec is not None:
            splits[i] = spec
    return home, splits, total
