"""Perfetto traces read whole: every simulated task one slice, no two slices of a track overlapping,
every flow bound at both ends, counters for bandwidth, queues and memory held. Checked with a model
of Perfetto's JSON importer (tests/perfetto_json.py: trace processor's binary cannot be fetched
here), under both of its ways of reading a duration (truncated, rounded)."""

from __future__ import annotations

import json

import pytest
from perfetto_json import import_trace, readings

from hetsim.cost import RooflineCostModel
from hetsim.evaluation import DagOptions, simulate
from hetsim.mapping import load_mapping, make_placement
from hetsim.platform import load_platform
from hetsim.sim.trace import EP_GROUP, LINK_GROUP, build_trace, trace_json
from hetsim.tasks import stage_costs
from hetsim.workload import load_workload

PIPELINES = [("hikey970", "resnet50", "B4:1-35|s2:36-44|s2:45-54", 20),     # two stages on alike-named EPs
             ("rk3588", "synthnet", "big:1-9|gpu:10-18", 12),                 # a transfer over a link
             ("jetson-tx2", "vgg16", "D2:1-9|A2:10-21", 8)]


def _check(text: str, data, expected_slices: int) -> None:
    for rounding in (False, True):
        imp = import_trace(text, rounding=rounding)
        assert imp.stats == {}, imp.stats          # nothing dropped, no flow unbound, one reading per time
        assert len(imp.slices) == len(data.slices) == expected_slices
        by_track: dict = {}
        for s in imp.slices:
            by_track.setdefault(s.track, []).append(s)
        for slices in by_track.values():
            slices.sort(key=lambda s: (s.ts, s.ts + s.dur))
            for a, b in zip(slices, slices[1:], strict=False):
                assert b.ts >= a.ts + a.dur, (a, b)          # no overlap, not even by a nanosecond
        # every flow binds the producer and the consumer it was written for
        want = {((data.slices[a].name, data.slices[a].start_ns), (data.slices[b].name, data.slices[b].start_ns))
                for a, b in data.flows}
        got = {((imp.slices[a].name, imp.slices[a].ts), (imp.slices[b].name, imp.slices[b].ts))
               for _, a, b in imp.flows}
        assert len(imp.flows) == len(data.flows) and got == want
        for _, a, b in imp.flows:
            assert imp.slices[a].ts + imp.slices[a].dur <= imp.slices[b].ts
            assert imp.slices[a].args["frame"] == imp.slices[b].args["frame"]
    # slices keep the run's nanoseconds
    imp = import_trace(text)
    assert sorted((s.ts, s.ts + s.dur) for s in imp.slices) == sorted((s.start_ns, s.end_ns) for s in data.slices)


@pytest.mark.parametrize(("platform", "workload", "spec", "frames"), PIPELINES)
def test_pipeline_trace_imports_whole(platform, workload, spec, frames):
    p, w = load_platform(platform), load_workload(workload)
    cost = RooflineCostModel(p)
    pipe = load_mapping(spec, p, w, cost)
    run = simulate(p, w, pipe, frames=frames, cost=cost).run
    data = build_trace(run, p, w, pipe, cost)
    transfers = sum(1 for t in stage_costs(pipe, w, cost)[1] if t > 0)
    _check(trace_json(data, "t"), data, frames * (len(pipe.stages) + transfers))
    # flows: stage i's compute -> its transfer -> stage i+1's compute, per frame
    assert len(data.flows) == frames * (len(pipe.stages) - 1 + transfers)
    imp = import_trace(trace_json(data, "t"))
    names = set(imp.counters)
    for i, s in enumerate(pipe.stages):
        lane = f"stage {i + 1} ({s.ep.name})"
        assert f"queue {lane} frames" in names and f"memory held {lane} MB" in names
        assert imp.counters[f"queue {lane} frames"][-1][1] == 0.0          # every frame started
        assert all(v >= 0 for _, v in imp.counters[f"memory held {lane} MB"])
    assert {f"bandwidth {s.ep.memory} GB/s" for s in pipe.stages} <= names
    for i, s in enumerate(pipe.stages[:-1]):
        for link in p.route(s.ep, pipe.stages[i + 1].ep).links:
            series = imp.counters[f"bandwidth {link} GB/s"]
            assert max(v for _, v in series) > 0 and series[-1][1] == 0.0
    compute = [s for s in imp.slices if s.cat == "compute"]
    assert {"frame", "stage", "layers", "ops", "bytes"} <= set(compute[0].args)


def _dag_case(comm: str, frames: int, in_flight: int, contention: bool):
    p, w = load_platform("rk3588"), load_workload("squeezenet")
    cost = RooflineCostModel(p)
    eps = ["big", "gpu", "little"]
    placement = make_placement({op.name: eps[(i // 3) % 3] for i, op in enumerate(w.ops)}, p, w)
    dag = DagOptions(comm=comm)
    res = simulate(p, w, placement, frames=frames, in_flight=in_flight, contention=contention, cost=cost, dag=dag)
    return p, w, placement, cost, res.run


@pytest.mark.parametrize(("comm", "frames", "in_flight", "contention"),
                         [("free", 3, 1, True), ("consumer", 4, 2, True), ("mpi", 2, 2, False)])
def test_dag_trace_imports_whole(comm, frames, in_flight, contention):
    p, w, placement, cost, run = _dag_case(comm, frames, in_flight, contention)
    data = build_trace(run, p, w, placement, cost)
    text = trace_json(data, "dag")
    _check(text, data, frames * len(run.tasks.tasks))
    transfers = [t for t in run.tasks.tasks if t.kind == "transfer"]
    assert transfers
    consumers = sum(1 for t in run.tasks.tasks for d in t.deps if run.tasks.tasks[d].kind == "transfer")
    assert len(data.flows) == frames * (sum(t.source is not None for t in transfers) + consumers)
    imp = import_trace(text)
    groups = {s.group for s in data.slices}
    assert EP_GROUP in groups and LINK_GROUP in groups
    for s in imp.slices:
        assert {"frame", "op", "layer", "bytes"} <= set(s.args)
        assert s.args["layer"] == w.op(s.args["op"]).layer
    for ep in {t.ep.name for t in run.tasks.compute}:
        queue = imp.counters[f"queue {ep} tasks"]
        assert queue[-1][1] == 0.0 and min(v for _, v in queue) >= 0
        held = imp.counters[f"memory held {ep} MB"]
        assert min(v for _, v in held) >= 0
        assert held[-1][1] == 0.0                          # weights are released at the run's end
        weights = sum(t.weight_bytes for t in run.tasks.compute if t.ep.name == ep) / 1e6
        assert max(v for _, v in held) >= weights - 1e-9


def test_trace_counters_conserve_bytes():
    """Each bandwidth counter integrates to the bytes its slices moved."""
    p, w, placement, cost, run = _dag_case("free", 2, 1, True)
    data = build_trace(run, p, w, placement, cost)
    links = {}
    for t in run.tasks.tasks:
        if t.kind == "transfer" and t.route is not None:
            for name in t.route.links:
                links[name] = links.get(name, 0.0) + t.nbytes * 2      # two frames
    imp = import_trace(trace_json(data, "t"))
    for name, nbytes in links.items():
        series = imp.counters[f"bandwidth {name} GB/s"]
        moved = sum(v * (b[0] - a[0]) for a, b in zip(series, series[1:], strict=False) for v in [a[1]])
        assert moved == pytest.approx(nbytes, rel=1e-6)


def test_times_have_one_reading_and_old_float_traces_do_not():
    """The trace's times read alike whether a reader truncates or rounds; the float microseconds
    written before did not, and a rounding reader then dropped the next slice of a track."""
    text = trace_json(build_trace(*_pipeline_run()), "t")
    events = json.loads(text, parse_float=str, parse_int=str)["traceEvents"]
    times = [e[k] for e in events for k in ("ts", "dur") if k in e]
    assert times and all(len(readings(t)) == 1 for t in times)
    # back-to-back slices as the float microseconds of the old writer (ts + dur of one not exactly the
    # next one's ts): a reader that rounds the duration ends the first past the second's start
    old = ('{"traceEvents": [{"name": "a", "ph": "X", "pid": 0, "tid": 0, "ts": 36900.0, "dur": 12299.999999999993},'
           '{"name": "b", "ph": "X", "pid": 0, "tid": 0, "ts": 49199.99999999999, "dur": 10.0}]}')
    assert len(import_trace(old).slices) == 2
    rounded = import_trace(old, rounding=True)
    assert len(rounded.slices) == 1
    assert rounded.stats == {"time_readings_disagree": 2, "slice_drop_overlapping_complete_event": 1}


def _pipeline_run():
    p, w = load_platform("hikey970"), load_workload("squeezenet")
    cost = RooflineCostModel(p)
    pipe = load_mapping("B4:1-16|s4:17-26", p, w, cost)
    return simulate(p, w, pipe, frames=5, cost=cost).run, p, w, pipe, cost


def test_overlapping_slices_are_what_the_model_drops():
    """The importer model can fail: a slice that starts inside another and ends after it is dropped."""
    bad = {"traceEvents": [
        {"name": "a", "ph": "X", "pid": 0, "tid": 0, "ts": "1.000", "dur": "2.000"},
        {"name": "b", "ph": "X", "pid": 0, "tid": 0, "ts": "2.999", "dur": "1.000"},
        {"name": "c", "ph": "s", "id": 1, "pid": 0, "tid": 1, "ts": "5.0"}]}
    imp = import_trace(json.dumps(bad))
    assert len(imp.slices) == 1
    assert imp.stats == {"slice_drop_overlapping_complete_event": 1, "flow_no_enclosing_slice": 1}


def test_cli_trace_of_a_placement(hetsim, tmp_path):
    out = tmp_path / "t.json"
    mapping = tmp_path / "m.yaml"
    w = load_workload("squeezenet")
    mapping.write_text("placement:\n" + "".join(f"  {op.name}: {'big' if i % 2 else 'gpu'}\n"
                                                for i, op in enumerate(w.ops)))
    r = hetsim("simulate", "-p", "rk3588", "-w", "squeezenet", "-m", str(mapping), "--frames", "2",
               "--trace", str(out))
    assert r.returncode == 0, r.stderr
    imp = import_trace(out.read_text())
    assert imp.stats == {} and imp.flows
    assert any(name.startswith("bandwidth ") for name in imp.counters)
    assert any(n.startswith("memories") for n in imp.process_names.values())


def test_trace_processor_needs_its_package(tmp_path, monkeypatch):
    """The real consumer, where it can run: without the perfetto package, one line naming the
    install command (trace processor's binary cannot be downloaded on this machine)."""
    import builtins

    from hetsim.errors import HetsimError
    from hetsim.sim.trace import trace_processor_summary

    real = builtins.__import__

    def no_perfetto(name, *a, **k):
        if name == "perfetto" or name.startswith("perfetto."):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_perfetto)
    with pytest.raises(HetsimError, match=r"pip install 'hetsim\[perfetto\]'"):
        trace_processor_summary(tmp_path / "t.json")
