"""Traces of a run: Chrome/Perfetto JSON (open in ui.perfetto.dev) and a Gantt chart PNG."""

from __future__ import annotations

import json
from dataclasses import dataclass

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
        own = run.input_stage == "own"
        for i in range(k):
            if own and i == 0:     # the input stage, a lane of its own before stage 1
                lane = f"input ({run.stage_names[0].partition('@')[2]})"
                out += [Interval(lane, f"frame {f} input", "input", f, float(run.start[0, f]),
                                 float(run.end[0, f])) for f in range(frames)]
                continue
            lane = f"stage {i + (0 if own else 1)} ({run.stage_names[i]})"
            for f in range(frames):
                begin = float(run.start[i, f])
                if i == 0 and run.input_stage == "shared":   # the frame's input, then its layers
                    begin = begin + (float(run.compute_end[i, f]) - begin) * run.input_share
                    out.append(Interval(lane, f"frame {f} input", "input", f, float(run.start[i, f]), begin))
                out.append(Interval(lane, f"frame {f}", "compute", f, begin,
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


def chrome_trace(intervals: list[Interval], title: str = "hetsim") -> dict:
    lanes = list(dict.fromkeys(iv.lane for iv in intervals))
    tid = {lane: i for i, lane in enumerate(lanes)}
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": title}}]
    for lane, i in tid.items():
        events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": i, "args": {"name": lane}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": i, "args": {"sort_index": i}})
    for iv in intervals:
        events.append({"name": iv.name, "cat": iv.category, "ph": "X", "pid": 0, "tid": tid[iv.lane],
                       "ts": iv.start_s * 1e6, "dur": (iv.end_s - iv.start_s) * 1e6,
                       "args": {"frame": iv.frame}})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_chrome_trace(intervals: list[Interval], path, title: str = "hetsim") -> None:
    with atomic_write(path) as f:
        json.dump(chrome_trace(intervals, title), f)


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
                                           "tab:orange" if iv.category == "transfer" else
                                           "tab:gray" if iv.category == "input" else "tab:blue")
        hatch = "//" if iv.category == "transfer" else "xx" if iv.category == "input" else None
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
              + (", cross-hatched = input stage" if any(iv.category == "input" for iv in shown) else "")
              + (", ticks = layers" if layers else ""))
    ax.set_title(f"{title}\n{what} ({legend})" if title else f"{what} ({legend})", fontsize=10)
    ax.grid(axis="x", alpha=0.3)


def plot_gantt(intervals: list[Interval], path=None, title: str = "", max_frames: int = 12,
               layers: dict[str, list[tuple[str, float]]] | None = None):
    """One row per lane, one bar per piece of work, coloured by frame; the first ``max_frames``
    frames are drawn and the title says how many of how many. ``layers`` (:func:`stage_layers`)
    divides each compute bar of a lane into its layers, in proportion to their cost-model times
    [choice: the DES times a stage as a whole; contention stretches its layers alike], with
    thin separators and, where a layer is wide enough, its number. Written as a PNG to ``path``
    when given (and the figure closed), else returned (a notebook shows it inline).
    :func:`draw_gantt` draws the same on given axes."""
    import matplotlib.pyplot as plt

    lanes = list(dict.fromkeys(iv.lane for iv in intervals))
    fig, ax = plt.subplots(figsize=(11, 0.6 * len(lanes) + 1.8))
    draw_gantt(ax, intervals, title, max_frames, layers)
    fig.tight_layout()
    if path is None:
        return fig
    with atomic_write(path, "wb") as f:
        fig.savefig(f, format="png", dpi=120)
    plt.close(fig)
    return None
