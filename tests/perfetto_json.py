"""A model of Perfetto's JSON trace importer (trace processor, src/trace_processor/importers/json and
importers/common/{slice,flow}_tracker.cc), to check hetsim's traces where trace_processor itself
cannot run (the `perfetto` package downloads its binary on first use; this machine is offline).

What it reproduces, rule by rule:

* timestamps: the tokenizer reads ``ts`` (and in some versions ``dur``) from the raw JSON text, as
  microseconds, shifting the decimal point three places and *truncating* further digits; the parser
  reads ``dur`` as a double and takes ``static_cast<int64_t>(us * 1000.0)`` (truncation again). A
  value is accepted only if both readings give the same integer nanosecond.
* events are processed in timestamp order, ties in file order (the sorter is stable).
* ``X`` slices on a thread track (pid, tid): before a slice starts, open slices that ended before
  it, or at its start (unless both are instants), are closed; a slice that starts inside an open
  one and ends after it is *dropped* (``slice_drop_overlapping_complete_event``).
* v1 flows: ``s`` binds to the topmost open slice of its track (none: ``flow_no_enclosing_slice``;
  an id seen twice: ``flow_duplicate_id``); ``f`` with ``"bp": "e"`` binds to the topmost open slice
  of its track and links it to the start's slice (no start: ``flow_end_without_start``). Flow ids
  are keyed by (id, cat, name).
* ``C`` counters: each numeric arg is one sample of the process counter track ``"<name> <arg>"``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field


class _Raw(str):
    """A JSON number kept as written."""


def ts_from_text(text: str) -> int | None:
    """Perfetto's ``CoerceToTs(std::string)``: microseconds as written -> integer ns, truncated."""
    exp = 0
    s = text
    for mark in "eE":
        if mark in s:
            s, e = s.split(mark)
            exp = int(e)
    int_size = len(s)
    if "." in s:
        int_size = s.index(".")
        s = s.replace(".", "", 1)
    size = max(1, int_size + exp + 3)
    s = (s + "0" * size)[:size]
    try:
        return int(s)
    except ValueError:
        return None


def ts_from_double(text: str, rounding: bool = False) -> int:
    """Perfetto's ``CoerceToTs(Json::Value)`` on a number: ``static_cast<int64_t>(us * 1000.0)``
    (``rounding=True``: a reader that rounds to the nearest ns instead, as other versions and
    consumers may)."""
    if "." not in text and "e" not in text.lower():
        return int(text) * 1000
    ns = float(text) * 1000.0
    return int(math.floor(ns + 0.5)) if rounding else int(ns)   # int() truncates, as the C++ cast


def readings(text: str) -> set[int | None]:
    """Every reading of a JSON time: the tokenizer's text path, a double truncated, a double rounded.
    A trace whose times give one reading each imports alike in every version."""
    return {ts_from_text(text), ts_from_double(text), ts_from_double(text, rounding=True)}


@dataclass
class ImportedSlice:
    track: tuple[int, int]
    ts: int
    dur: int
    name: str
    cat: str
    args: dict
    depth: int


@dataclass
class Import:
    """What trace processor would hold after importing the trace."""

    slices: list[ImportedSlice] = field(default_factory=list)
    flows: list[tuple[int, int, int]] = field(default_factory=list)   # (id, slice out, slice in)
    counters: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    stats: dict[str, int] = field(default_factory=dict)
    thread_names: dict[tuple[int, int], str] = field(default_factory=dict)
    process_names: dict[int, str] = field(default_factory=dict)

    def stat(self, name: str) -> None:
        self.stats[name] = self.stats.get(name, 0) + 1


def import_trace(text: str, rounding: bool = False) -> Import:
    """Import the JSON ``text`` as Perfetto's JSON importer does (see the module docstring);
    ``rounding=True`` reads ``dur`` rounded to the nearest ns instead of truncated. Times whose
    readings differ are counted in ``stats["time_readings_disagree"]``."""
    raw = json.loads(text, parse_float=_Raw, parse_int=_Raw)   # times as written
    data = json.loads(text)
    raw_events = raw["traceEvents"] if isinstance(raw, dict) else raw
    events = data["traceEvents"] if isinstance(data, dict) else data
    out = Import()
    timed = []
    for n, (e, r) in enumerate(zip(events, raw_events, strict=True)):
        e = dict(e, ts=r.get("ts"), dur=r.get("dur"))
        raw_ts = e.get("ts")
        ts = 0
        if raw_ts is not None:
            from_text = ts_from_text(str(raw_ts))
            if len(readings(str(raw_ts))) > 1:
                out.stat("time_readings_disagree")
            ts = from_text or 0
        elif e.get("ph") != "M":
            out.stat("json_tokenizer_failure")
            continue
        timed.append((ts, n, e))
    timed.sort(key=lambda x: (x[0], x[1]))      # a stable sort by timestamp
    stacks: dict[tuple[int, int], list[int]] = {}
    flow_begin: dict[tuple, int] = {}
    for ts, _, e in timed:
        ph = e.get("ph")
        track = (int(e.get("pid", 0)), int(e.get("tid", e.get("pid", 0))))
        if ph == "M":
            if e.get("name") == "thread_name":
                out.thread_names[track] = e["args"]["name"]
            elif e.get("name") == "process_name":
                out.process_names[track[0]] = e["args"]["name"]
        elif ph == "X":
            raw = str(e.get("dur"))
            dur = ts_from_double(raw, rounding)
            if len(readings(raw)) > 1:
                out.stat("time_readings_disagree")
            stack = stacks.setdefault(track, [])
            dropped = False
            for i in range(len(stack) - 1, -1, -1):
                top = out.slices[stack[i]]
                end = top.ts + top.dur
                if end < ts or (end == ts and not (top.dur == 0 and dur == 0)):
                    stack.pop()
                    continue
                if ts < end < ts + dur:
                    out.stat("slice_drop_overlapping_complete_event")
                    dropped = True
                    break
            if dropped:
                continue
            out.slices.append(ImportedSlice(track, ts, dur, e.get("name", "[No name]"), e.get("cat", ""),
                                            e.get("args", {}), len(stack)))
            stack.append(len(out.slices) - 1)
        elif ph in ("s", "f"):
            key = (str(e.get("id")), e.get("cat", ""), e.get("name", ""))
            stack = stacks.get(track, [])
            if ph == "f" and e.get("bp") != "e":
                out.stat("flow_end_binds_next_slice_not_modelled")
                continue
            if not stack:
                out.stat("flow_no_enclosing_slice")
                continue
            if ph == "s":
                if key in flow_begin:
                    out.stat("flow_duplicate_id")
                    continue
                flow_begin[key] = stack[-1]
            else:
                if key not in flow_begin:
                    out.stat("flow_end_without_start")
                    continue
                out.flows.append((len(out.flows), flow_begin[key], stack[-1]))
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict):
                out.stat("json_parser_failure")
                continue
            for k, v in args.items():
                try:
                    value = float(v)
                except (TypeError, ValueError):
                    out.stat("json_parser_failure")
                    continue
                out.counters.setdefault(f"{e.get('name', '')} {k}", []).append((ts, value))
        else:
            out.stat(f"phase_{ph}_not_modelled")
    return out
