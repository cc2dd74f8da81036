"""Traces of a run: Perfetto JSON (open in ui.perfetto.dev; :func:`write_trace`) and Gantt charts
(:func:`plot_gantt`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from hetsim.errors import HetsimError
from hetsim.figures import save_figure
from hetsim.sim.runs import DagRun, PipelineRun
from hetsim.validation import atomic_write


@dataclass(frozen=True)
class Interval:
    lane: str      # the EP (or stage) the work ran on
    name: str      # what ran
    category: str  # compute | transfer
    frame: int
    start_s: float
    end_s: float


def intervals_of(run: PipelineRun | DagRun) -> list[Interval]:
    out: list[Interval] = []
    if isinstance(run, PipelineRun):
        k, frames = run.start.shape
        for i in range(k):
            lane = f"stage {i + 1} ({run.stage_names[i]})"
            for f in range(frames):
                out.append(Interval(lane, f"frame {f}", "compute", f, float(run.start[i, f]),
                                    float(run.compute_end[i, f])))
                if run.end[i, f] > run.compute_end[i, f]:
                    out.append(Interval(lane, f"frame {f} out", "transfer", f,
                                        float(run.compute_end[i, f]), float(run.end[i, f])))
    else:
        frames = run.start.shape[0]
        for t in run.tasks.tasks:
            lane = t.ep.name if t.ep is not None else (t.lane or "transfers")
            for f in range(frames):
                out.append(Interval(lane, t.name, t.kind, f, float(run.start[f, t.index]),
                                    float(run.end[f, t.index])))
    return out


# -- Perfetto / Chrome JSON traces ---------------------------------------------------------------
# Tracks are threads of three processes: one per EP, per link and per memory (a copy without links).
EP_GROUP, LINK_GROUP, MEMORY_GROUP = "execution places", "links", "memories"
_PIDS = {EP_GROUP: 1, LINK_GROUP: 2, MEMORY_GROUP: 3}


@dataclass
class TraceSlice:
    """One simulated task execution (a stage's compute or transfer of one frame; a DAG task of one
    frame), in whole nanoseconds, on the track of its EP, link or memory."""

    group: str        # EP_GROUP | LINK_GROUP | MEMORY_GROUP
    track: str        # the EP, link or memory
    name: str
    category: str     # compute | transfer
    start_ns: int
    end_ns: int
    args: dict


@dataclass
class TraceData:
    """A run as a trace: its slices (in data-flow order: a producer before its consumers), flows
    (producer slice, consumer slice) for every tensor handed from one task to another across EPs,
    and counter series ``(group, name, unit, [(t_ns, change), ...])`` as step changes."""

    slices: list[TraceSlice]
    flows: list[tuple[int, int]]
    counters: list[tuple[str, str, str, list[tuple[int, float]]]]


def _ns(seconds) -> np.ndarray:
    """Seconds -> whole nanoseconds, rounded (monotone: an order of times is kept, so slices that
    touch in the run touch in the trace; never overlap by a rounding error)."""
    return np.rint(np.asarray(seconds, dtype=float) * 1e9).astype(np.int64)


def _transfer_track(route, dst) -> tuple[str, str]:
    """A transfer's track: the link whose bandwidth it shares (its route's narrowest), or the
    destination's memory when the route has no link (a copy priced within a shared memory)."""
    if route is not None and route.links:
        return LINK_GROUP, route.bottleneck or route.links[0]
    return MEMORY_GROUP, dst.memory


class _Counters:
    """Step changes of counter series, keyed by (group, name, unit)."""

    def __init__(self) -> None:
        self.series: dict[tuple[str, str, str], list[tuple[int, float]]] = {}

    def track(self, group: str, name: str, unit: str) -> None:
        """A series that exists (at 0 from time 0) even if nothing ever changes it."""
        self.series.setdefault((group, name, unit), []).append((0, 0.0))

    def add(self, group: str, name: str, unit: str, start_ns: int, end_ns: int, value: float) -> None:
        if end_ns > start_ns and value:
            ev = self.series.setdefault((group, name, unit), [])
            ev += [(int(start_ns), value), (int(end_ns), -value)]

    def rate(self, group: str, name: str, start_ns: int, end_ns: int, nbytes: float) -> None:
        """``nbytes`` spread evenly over the slice [start, end): GB/s in use."""
        if end_ns > start_ns and nbytes > 0:
            self.add(group, name, "GB/s", start_ns, end_ns, nbytes / (end_ns - start_ns))   # B/ns = GB/s

    def out(self) -> list[tuple[str, str, str, list[tuple[int, float]]]]:
        return [(g, n, u, ev) for (g, n, u), ev in self.series.items()]


def build_trace(run: PipelineRun | DagRun, platform, workload, mapping, cost, state=None) -> TraceData:
    """The trace of a DES run of ``mapping`` (its record ``run``, e.g. ``simulate(...).run``): one
    slice per simulated task, flows from producer to consumer for every transfer (and every tensor
    a pipeline stage hands to the next), and counters:

    * ``bandwidth <memory or link>`` (GB/s): each slice's bytes spread evenly over it, summed (a
      compute slice's memory traffic, :class:`~hetsim.cost.Demand`'s bytes, on its EP's memory; a
      transfer's bytes on every link of its route, or on its destination's memory without links);
    A pipeline's EP tracks are its stages (``stage 2 (s2)``: two stages may use alike-named EPs).

    * ``queue <EP>`` (frames for a pipeline stage: done upstream, not yet started here; tasks for
      a DAG EP: inputs ready and frame arrived, not yet started);
    * ``memory held <EP>`` (MB): a DAG EP's buffers as :func:`~hetsim.tasks.ep_peak_memory` counts
      them, frame after frame; a pipeline stage's weights, its working set while it computes (as
      :func:`~hetsim.tasks.stage_peak_memory`), each frame's input tensor from its hand-over until
      the stage has computed it and its output tensor until the transfer is done.
    """
    if isinstance(run, PipelineRun):
        return _pipeline_trace(run, platform, workload, mapping, cost, state)
    return _dag_trace(run, platform, workload)


def _pipeline_trace(run: PipelineRun, platform, workload, pipe, cost, state) -> TraceData:
    from hetsim.tasks import stage_demands

    k, frames = run.start.shape
    s_ns, c_ns, e_ns, arrival_ns = _ns(run.start), _ns(run.compute_end), _ns(run.end), _ns(run.arrival)
    stages = pipe.stages
    mem_bytes = [float(sum(d.bytes_ for d in parts)) for parts in stage_demands(pipe, workload, cost, state)]
    routes = [platform.route(s.ep, stages[i + 1].ep) if i + 1 < k else None for i, s in enumerate(stages)]
    cut = [float(workload.cut_bytes(s.last)) if i + 1 < k else 0.0 for i, s in enumerate(stages)]
    slices: list[TraceSlice] = []
    flows: list[tuple[int, int]] = []
    counters = _Counters()
    compute_of = np.zeros((k, frames), dtype=np.int64)
    lane = [f"stage {i + 1} ({s.ep.name})" for i, s in enumerate(stages)]   # two stages may hold alike-named EPs (s2, s2)
    handoff: list[list[int]] = [[] for _ in range(k)]     # per stage and frame: the slice whose output stage i reads
    for f in range(frames):
        for i, st in enumerate(stages):
            ep = st.ep
            layers = workload.layers[st.first - 1:st.last]
            compute_of[i, f] = len(slices)
            slices.append(TraceSlice(EP_GROUP, lane[i], f"frame {f}", "compute", int(s_ns[i, f]), int(c_ns[i, f]), {
                "frame": f, "stage": i + 1, "layers": f"{st.first}-{st.last}",
                "ops": sum(len(layer.ops) for layer in layers), "bytes": mem_bytes[i]}))
            counters.rate(MEMORY_GROUP, f"bandwidth {ep.memory}", s_ns[i, f], c_ns[i, f], mem_bytes[i])
            if i > 0:
                flows.append((handoff[i][f], int(compute_of[i, f])))
            if i + 1 == k:
                continue
            route = routes[i]
            assert route is not None
            if run.end[i, f] > run.compute_end[i, f]:     # the cut's tensors took time to move
                group, track = _transfer_track(route, stages[i + 1].ep)
                t = len(slices)
                slices.append(TraceSlice(group, track, f"frame {f} to stage {i + 2}", "transfer",
                                         int(c_ns[i, f]), int(e_ns[i, f]), {
                                             "frame": f, "bytes": cut[i], "from": lane[i],
                                             "to": lane[i + 1], "links": ",".join(route.links)}))
                flows.append((int(compute_of[i, f]), t))
                handoff[i + 1].append(t)
                for name in route.links:
                    counters.rate(LINK_GROUP, f"bandwidth {name}", c_ns[i, f], e_ns[i, f], cut[i])
                if not route.links:
                    counters.rate(MEMORY_GROUP, f"bandwidth {stages[i + 1].ep.memory}", c_ns[i, f], e_ns[i, f], cut[i])
            else:
                handoff[i + 1].append(int(compute_of[i, f]))
    for i, st in enumerate(stages):
        ep, layers = lane[i], workload.layers[st.first - 1:st.last]
        entered = arrival_ns if i == 0 else e_ns[i - 1]
        weights = float(sum(layer.weight_bytes for layer in layers)) / 1e6
        work = max(op.input_bytes + op.output_bytes + op.im2col_bytes for layer in layers for op in layer.ops) / 1e6
        inbuf = workload.cut_bytes(st.first - 1) / 1e6 if st.first > 1 else 0.0   # as stage_peak_memory
        last = int(max(e_ns[i].max(), s_ns[i].max(), 0)) + 1
        counters.track(EP_GROUP, f"queue {ep}", "frames")
        counters.add(EP_GROUP, f"memory held {ep}", "MB", 0, last, weights)
        for f in range(frames):
            counters.add(EP_GROUP, f"queue {ep}", "frames", entered[f], s_ns[i, f], 1.0)
            counters.add(EP_GROUP, f"memory held {ep}", "MB", s_ns[i, f], c_ns[i, f], work)
            counters.add(EP_GROUP, f"memory held {ep}", "MB", entered[f], c_ns[i, f], inbuf)
            counters.add(EP_GROUP, f"memory held {ep}", "MB", c_ns[i, f], e_ns[i, f], cut[i] / 1e6)
    return TraceData(slices, flows, counters.out())


def _dag_trace(run: DagRun, platform, workload) -> TraceData:
    from hetsim.tasks import ep_memory_events

    tg = run.tasks
    frames = run.start.shape[0]
    s_ns, e_ns, arrival_ns = _ns(run.start), _ns(run.end), _ns(run.arrival)
    consumers: list[list[int]] = [[] for _ in tg.tasks]
    for t in tg.tasks:
        for d in t.deps:
            consumers[d].append(t.index)
    slices: list[TraceSlice] = []
    flows: list[tuple[int, int]] = []
    counters = _Counters()
    for ep in dict.fromkeys(t.ep.name for t in tg.compute if t.ep is not None):
        counters.track(EP_GROUP, f"queue {ep}", "tasks")
    for f in range(frames):
        base = len(slices)
        for t in tg.tasks:
            start, end = int(s_ns[f, t.index]), int(e_ns[f, t.index])
            op = workload.op(t.op) if t.op is not None else None
            args: dict = {"frame": f, "op": t.op, "layer": op.layer if op is not None else None}
            if t.kind == "compute":
                assert t.ep is not None
                group, track = EP_GROUP, t.ep.name
                nbytes = t.demand.bytes_ if t.demand is not None else 0.0
                args.update(kind=str(op.kind) if op is not None else None, bytes=t.out_bytes, memory_bytes=nbytes)
                counters.rate(MEMORY_GROUP, f"bandwidth {t.ep.memory}", start, end, nbytes)
            else:
                assert t.dst is not None and t.src is not None
                group, track = _transfer_track(t.route, t.dst)
                links = t.route.links if t.route is not None else ()
                args.update(bytes=t.nbytes, **{"from": t.src.name, "to": t.dst.name}, links=",".join(links),
                            measured=t.measured)
                for name in links:
                    counters.rate(LINK_GROUP, f"bandwidth {name}", start, end, t.nbytes)
                if not links:
                    counters.rate(MEMORY_GROUP, f"bandwidth {t.dst.memory}", start, end, t.nbytes)
            slices.append(TraceSlice(group, track, t.name, t.kind, start, end, args))
        for t in tg.tasks:
            if t.kind != "transfer":
                continue
            if t.source is not None:
                flows.append((base + t.source, base + t.index))
            flows += [(base + t.index, base + c) for c in consumers[t.index]]
        for t in tg.compute:
            assert t.ep is not None
            ready = max([int(arrival_ns[f])] + [int(e_ns[f, d]) for d in t.deps])
            counters.add(EP_GROUP, f"queue {t.ep.name}", "tasks", ready, int(s_ns[f, t.index]), 1.0)
        events, resident = ep_memory_events(tg, s_ns[f].tolist(), e_ns[f].tolist())
        for name, ev in events.items():
            series = counters.series.setdefault((EP_GROUP, f"memory held {name}", "MB"), [])
            series += [(int(t), delta / 1e6) for t, delta in ev]
    last = int(max(e_ns.max(initial=0), 0)) + 1
    for name, nbytes in ep_memory_events(tg, s_ns[0].tolist(), e_ns[0].tolist())[1].items() if frames else ():
        counters.add(EP_GROUP, f"memory held {name}", "MB", 0, last, nbytes / 1e6)
    return TraceData(slices, flows, counters.out())


def _lanes(slices: list[TraceSlice]) -> list[tuple[str, str]]:
    """Each slice's (group, thread name): its track, or ``"track #2"``... where slices on one track
    overlap in time (transfers sharing a link; frames in flight). Perfetto drops a slice that
    starts inside another of its thread and ends after it: every thread here holds disjoint slices."""
    out: list[tuple[str, str]] = [("", "")] * len(slices)
    ends: dict[tuple[str, str], list[int]] = {}
    for i in sorted(range(len(slices)), key=lambda i: (slices[i].start_ns, slices[i].end_ns, i)):
        s = slices[i]
        lanes = ends.setdefault((s.group, s.track), [])
        j = next((j for j, end in enumerate(lanes) if end <= s.start_ns), len(lanes))
        if j == len(lanes):
            lanes.append(s.end_ns)
        else:
            lanes[j] = s.end_ns
        out[i] = (s.group, s.track if j == 0 else f"{s.track} #{j + 1}")
    return out


def _us(ns: int) -> str:
    """Whole nanoseconds as the JSON format's microseconds, written so that every reader gets the
    same nanosecond: Perfetto's tokenizer shifts the decimal point and truncates; its parser takes
    ``(int64)(us * 1000.0)`` of a double; other readers round. The 0.01 ns added keeps the double
    above the integer (truncation exact) and far below the next half (rounding exact)."""
    return f"{ns // 1000}.{ns % 1000:03d}01"


def trace_json(data: TraceData, title: str = "hetsim") -> str:
    """The Chrome/Perfetto JSON of ``data``: ``X`` slices on one thread per track, v1 flow events
    (``s`` on the producer, ``f`` with ``bp: e`` on the consumer, each bound inside its slice),
    ``C`` counters, and names as metadata. Events are in timestamp order, each slice's flow events
    right after it where they share its timestamp (Perfetto binds a flow event to the slice open on
    its thread when it is read)."""
    lanes = _lanes(data.slices)
    groups = [g for g in (EP_GROUP, LINK_GROUP, MEMORY_GROUP)
              if any(s.group == g for s in data.slices) or any(c[0] == g for c in data.counters)]
    tids: dict[tuple[str, str], int] = {}
    for lane in lanes:
        if lane not in tids:
            # unique across processes (a counter event without a tid names thread ``pid``)
            tids[lane] = _PIDS[lane[0]] * 1000 + sum(1 for g, _ in tids if g == lane[0]) + 1
    meta = []
    for g in groups:
        meta.append({"name": "process_name", "ph": "M", "pid": _PIDS[g], "args": {"name": f"{g}: {title}"}})
        meta.append({"name": "process_sort_index", "ph": "M", "pid": _PIDS[g], "args": {"sort_index": _PIDS[g]}})
    for (g, name), tid in tids.items():
        meta.append({"name": "thread_name", "ph": "M", "pid": _PIDS[g], "tid": tid, "args": {"name": name}})
        meta.append({"name": "thread_sort_index", "ph": "M", "pid": _PIDS[g], "tid": tid, "args": {"sort_index": tid}})
    order = sorted(range(len(data.slices)), key=lambda i: (data.slices[i].start_ns, data.slices[i].end_ns, i))
    rank = {i: r for r, i in enumerate(order)}
    timed: list[tuple[tuple[int, int, int], dict, int, int | None]] = []   # (key, event, ts, dur)

    def where(i: int) -> tuple[int, int, int]:
        s = data.slices[i]
        return _PIDS[s.group], tids[lanes[i]], s.start_ns + (s.end_ns - s.start_ns) // 2

    for i, s in enumerate(data.slices):
        timed.append(((s.start_ns, rank[i], 0), {"name": s.name, "cat": s.category, "ph": "X", "pid": _PIDS[s.group],
                                                 "tid": tids[lanes[i]], "args": s.args}, s.start_ns, s.end_ns - s.start_ns))
    for n, (a, b) in enumerate(data.flows):
        for ph, i in (("s", a), ("f", b)):
            pid, tid, ts = where(i)
            ev = {"name": "tensor", "cat": "flow", "ph": ph, "id": n, "pid": pid, "tid": tid}
            if ph == "f":
                ev["bp"] = "e"
            timed.append(((ts, rank[i], 1), ev, ts, None))
    for g, name, unit, changes in data.counters:
        level = 0.0
        by_time: dict[int, float] = {}
        for t, delta in changes:
            by_time[t] = by_time.get(t, 0.0) + delta
        for t in sorted(by_time):
            level += by_time[t]
            if abs(level) < 1e-9:
                level = 0.0           # what float sums leave of a level back at zero
            timed.append(((t, len(order), 2), {"name": name, "ph": "C", "pid": _PIDS[g],
                                               "args": {unit: round(level, 9)}}, t, None))
    timed.sort(key=lambda e: e[0])
    lines = [json.dumps(e) for e in meta]
    for _, ev, ts, dur in timed:
        head = f'{{"ts":{_us(ts)},' + (f'"dur":{_us(dur)},' if dur is not None else "")
        lines.append(head + json.dumps(ev)[1:])
    return '{"traceEvents":[\n' + ",\n".join(lines) + "\n]}\n"


def write_trace(path, run: PipelineRun | DagRun, platform, workload, mapping, cost, state=None,
                title: str = "hetsim") -> TraceData:
    """Write the Perfetto trace of a DES run to ``path`` (:func:`build_trace`, :func:`trace_json`;
    open it in ui.perfetto.dev) and return its data."""
    data = build_trace(run, platform, workload, mapping, cost, state)
    text = trace_json(data, title)
    with atomic_write(path) as f:
        f.write(text)
    return data


def trace_processor_summary(path) -> dict[str, int]:
    """What Perfetto's trace processor imports from the trace at ``path``: ``slices``, ``flows``,
    ``counter_tracks`` and ``import_errors`` (its error stats). Needs the ``perfetto`` package
    (``pip install 'hetsim[perfetto]'``), which downloads trace processor's binary on first use."""
    try:
        from perfetto.trace_processor import TraceProcessor
    except ImportError:
        raise HetsimError("reading a trace with Perfetto's trace processor needs the perfetto package: "
                          "pip install 'hetsim[perfetto]'") from None
    try:
        tp = TraceProcessor(trace=str(path))
    except Exception as e:  # noqa: BLE001 - its binary is downloaded on first use; offline that fails
        raise HetsimError(f"{path}: Perfetto's trace processor did not start ({type(e).__name__}: "
                          f"{' '.join(str(e).split())[:200]}); it downloads its binary on first use") from None
    try:
        def one(sql: str) -> int:
            return int(next(iter(tp.query(sql))).n)

        return {"slices": one("select count(*) as n from slice"), "flows": one("select count(*) as n from flow"),
                "counter_tracks": one("select count(*) as n from counter_track"),
                "import_errors": one("select coalesce(sum(value), 0) as n from stats where severity = 'error' "
                                     "and source = 'trace'")}
    finally:
        tp.close()


def stage_layers(pipe, workload, cost, state=None) -> dict[str, list[tuple[str, float]]]:
    """For a pipeline's Gantt lanes, each stage's layers and their shares of its compute time
    (the cost model's layer times): ``{"stage 1 (B4)": [("L1", 0.02), ("L2", 0.05), ...]}``, for
    :func:`plot_gantt`'s ``layers``."""
    out = {}
    for i, s in enumerate(pipe.stages):
        times = cost.layer_times(workload, s.ep, state)[s.first - 1:s.last]
        total = float(times.sum())
        out[f"stage {i + 1} ({s.ep.name})"] = [
            (f"L{s.first + j}", float(t) / total if total > 0 else 1.0 / len(times))
            for j, t in enumerate(times)]
    return out


def draw_gantt(ax, intervals: list[Interval], title: str = "", max_frames: int = 12,
               layers: dict[str, list[tuple[str, float]]] | None = None, colour_by: str = "frame") -> None:
    """Draw the Gantt chart of :func:`plot_gantt` on matplotlib axes ``ax`` (several charts can share
    a figure). ``colour_by="category"`` colours compute blue and transfers orange instead of by
    frame (one inference of a DAG plan)."""
    import matplotlib.pyplot as plt

    total_frames = len({iv.frame for iv in intervals})
    shown = [iv for iv in intervals if iv.frame < max_frames]
    n_shown = len({iv.frame for iv in shown})
    lanes = list(dict.fromkeys(iv.lane for iv in intervals))
    cmap = plt.get_cmap("tab20")
    span = max((iv.end_s for iv in shown), default=0.0) * 1e3
    by_frame = colour_by != "category"
    for iv in shown:
        y = lanes.index(iv.lane)
        colour: str | tuple[float, ...] = (cmap(iv.frame % 20) if by_frame else
                                           "tab:orange" if iv.category == "transfer" else "tab:blue")
        hatch = "//" if iv.category == "transfer" else None
        start, width = iv.start_s * 1e3, (iv.end_s - iv.start_s) * 1e3
        ax.broken_barh([(start, width)], (y - 0.4, 0.8), facecolors=colour, edgecolor="black",
                       linewidth=0.3, hatch=hatch)
        parts = (layers or {}).get(iv.lane) if iv.category == "compute" else None
        if parts and width > 0:
            x = start
            for name, share in parts:
                w = width * share
                if x > start:
                    ax.plot([x, x], [y - 0.4, y + 0.4], color="black", linewidth=0.3)
                if span > 0 and w / span > 0.025:
                    ax.text(x + w / 2, y + 0.25, name, ha="center", va="center", fontsize=5)
                x += w
        if by_frame and iv.category == "compute" and len(shown) <= 80 and width > 0:
            ax.text(start + width / 2, y, str(iv.frame), ha="center", va="center", fontsize=7)
    ax.set_yticks(range(len(lanes)), lanes)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    what = (f"frames 0-{n_shown - 1} of {total_frames}" if n_shown < total_frames
            else f"all {total_frames} frames")
    legend = (("number = frame, hatched = transfer" if by_frame else "blue = compute, orange hatched = transfer")
              + (", ticks = layers" if layers else ""))
    ax.set_title(f"{title}\n{what} ({legend})" if title else f"{what} ({legend})", fontsize=10)
    ax.grid(axis="x", alpha=0.3)


def plot_gantt(intervals: list[Interval], path=None, title: str = "", max_frames: int = 12,
               layers: dict[str, list[tuple[str, float]]] | None = None):
    """One row per lane, one bar per piece of work, coloured by frame; the first ``max_frames``
    frames are drawn and the title says how many of how many. ``layers`` (:func:`stage_layers`)
    divides each compute bar of a lane into its layers, in proportion to their cost-model times
    [choice: the DES times a stage as a whole; contention stretches its layers alike], with
    thin separators and, where a layer is wide enough, its number. Written to ``path`` when given
    (PNG, PDF or SVG as its suffix says; the figure closed), else returned (a notebook shows it
    inline).
    :func:`draw_gantt` draws the same on given axes."""
    import matplotlib.pyplot as plt

    lanes = list(dict.fromkeys(iv.lane for iv in intervals))
    fig, ax = plt.subplots(figsize=(11, 0.6 * len(lanes) + 1.8))
    draw_gantt(ax, intervals, title, max_frames, layers)
    fig.tight_layout()
    if path is None:
        return fig
    save_figure(fig, path, "--gantt", dpi=120)
    return None
