"""The fluid bandwidth resource: its rates (:func:`max_min_rates`, a pure function) are max-min
fair, on one server and across several; and profile flows (issue 15, per-op flows), a stage
execution's per-op flows as ONE flow that the resource steps through itself, give the same fluid
max-min trajectory as the general path, a SimPy process doing a timeout or
``BandwidthResource.transfer`` per op."""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.cost import RooflineCostModel
from hetsim.cost.base import Demand
from hetsim.mapping import load_mapping
from hetsim.options import RunOptions
from hetsim.platform import load_platform
from hetsim.sim import pipeline as pipeline_module
from hetsim.sim.bandwidth import (
    BandwidthResource,
    FlowProfile,
    Server,
    max_min_rates,
    never_throttled,
)
from hetsim.sim.pipeline import run_pipeline
from hetsim.workload import load_workload

REL = 1e-12


# -- the rates: a pure function ---------------------------------------------------------------------

def _progressive_filling(caps, servers, routes):
    """The textbook definition: every rate rises at one pace until a server is full or the flow
    reaches its cap; those flows freeze, the rest rise on (exact rationals, no float residue)."""
    from fractions import Fraction

    n = len(caps)
    cap = [Fraction(c) if math.isfinite(c) else Fraction(10**30) for c in caps]    # inf: no cap
    users = [sum(1 for r in routes if s in r) for s in range(len(servers))]
    left = [Fraction(server.capacity_Bps(users[s])) for s, server in enumerate(servers)]
    rate = [Fraction(0)] * n
    active = set(range(n))
    while active:
        on = [sum(1 for i in active if s in routes[i]) for s in range(len(servers))]
        step = min([left[s] / on[s] for s in range(len(servers)) if on[s]]
                   + [cap[i] - rate[i] for i in active])
        for i in active:
            rate[i] += step
        for s in range(len(servers)):
            left[s] -= step * on[s]
        active = {i for i in active if rate[i] < cap[i] and all(left[s] > 0 for s in routes[i])}
    return [float(r) for r in rate]


_caps = st.lists(st.one_of(st.floats(0.1, 100.0), st.just(float("inf"))), min_size=1, max_size=7)


@settings(max_examples=300, deadline=None)
@given(caps=_caps, bandwidth=st.floats(1.0, 200.0))
def test_one_server_rates_are_water_filling_and_the_general_path_agrees_bit_for_bit(caps, bandwidth):
    server = [Server("dram", bandwidth)]
    rates = max_min_rates(caps, server)
    assert rates == max_min_rates(caps, server, [[0]] * len(caps))      # the same float operations
    assert rates == pytest.approx(_progressive_filling(caps, server, [[0]] * len(caps)), rel=1e-12)
    assert sum(rates) <= bandwidth * (1 + 1e-12)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), caps=_caps, bandwidths=st.lists(st.floats(1.0, 200.0), min_size=1, max_size=4))
def test_network_rates_are_max_min_fair(data, caps, bandwidths):
    servers = [Server(f"s{k}", b) for k, b in enumerate(bandwidths)]
    route = st.lists(st.integers(0, len(servers) - 1), min_size=1, max_size=len(servers), unique=True)
    routes = [data.draw(route) for _ in caps]
    rates = max_min_rates(caps, servers, routes)
    assert rates == pytest.approx(_progressive_filling(caps, servers, routes), rel=1e-12)
    # feasible, and every flow is at its cap or crosses a full server where nobody gets more
    load = [sum(r for r, route in zip(rates, routes, strict=True) if s in route) for s in range(len(servers))]
    assert all(x <= b * (1 + 1e-12) for x, b in zip(load, bandwidths, strict=True))
    for i, route in enumerate(routes):
        assert rates[i] == pytest.approx(caps[i], rel=1e-12) or any(
            load[s] == pytest.approx(bandwidths[s], rel=1e-12)
            and all(rates[k] <= rates[i] * (1 + 1e-12) for k, other in enumerate(routes) if s in other)
            for s in route)


def test_rates_past_a_knee_share_the_reduced_capacity():
    dram = Server("dram", 10.0, knee_flows=2, loss_per_flow=0.5)
    assert max_min_rates([9.0, 9.0], [dram]) == [5.0, 5.0]
    assert sum(max_min_rates([9.0] * 4, [dram])) == pytest.approx(10.0 / 2.0)
    with pytest.raises(ValueError, match="at least one server"):
        max_min_rates([1.0], [dram], [[]])
    with pytest.raises(ValueError, match="positive"):
        Server("x", 0.0)


def test_a_resource_of_several_servers_needs_each_flow_to_name_them():
    env = simpy.Environment()
    net = BandwidthResource(env)
    net.add("a>", 1.0)
    net.add(">b", 2.0)
    with pytest.raises(ValueError, match="2 servers"):
        net.transfer(1.0)
    with pytest.raises(KeyError, match="'c>'"):
        net.transfer(1.0, via=["c>"])
    done = net.transfer(4.0, via=["a>", ">b"])
    env.run(done)
    assert env.now == pytest.approx(4.0)
    assert net.bytes_moved == {"a>": 4.0, ">b": 4.0}


# -- profile flows against the general path -------------------------------------------------------

def _server(env, bandwidth_Bps, knee):
    if knee is None:
        return BandwidthResource(env, bandwidth_Bps)
    return BandwidthResource(env, bandwidth_Bps, knee_flows=knee[0], loss_per_flow=knee[1])


def _per_op(env, mem, demands, scale):
    """The per-op loop of ``_stage_proc`` before profile flows: a timeout or a transfer per op."""
    for d in demands:
        if d.fixed_s > 0:
            yield env.timeout(d.fixed_s * scale)
        if d.bytes_ > 0 and d.busy_s > 0:
            yield mem.transfer(d.bytes_, d.bytes_ / d.busy_s / scale)
        elif d.busy_s > 0:
            yield env.timeout(d.busy_s * scale)


def _reference(flows, bandwidth_Bps, knee) -> list[float]:
    """Today's primitive: a SimPy process per flow, a timeout or a transfer per op (the per-op
    loop of ``_stage_proc`` before profile flows)."""
    env = simpy.Environment()
    mem = _server(env, bandwidth_Bps, knee)
    finish = [0.0] * len(flows)

    def proc(k, arrival_s, demands, scale):
        yield env.timeout(arrival_s)
        yield from _per_op(env, mem, demands, scale)
        finish[k] = env.now

    for k, flow in enumerate(flows):
        env.process(proc(k, *flow))
    env.run()
    return finish


def _profiled(flows, bandwidth_Bps, knee) -> tuple[list[float], BandwidthResource]:
    env = simpy.Environment()
    mem = _server(env, bandwidth_Bps, knee)
    finish = [0.0] * len(flows)

    def proc(k, arrival_s, demands, scale):
        yield env.timeout(arrival_s)
        yield mem.run(FlowProfile.from_demands(demands), scale)
        finish[k] = env.now

    for k, flow in enumerate(flows):
        env.process(proc(k, *flow))
    env.run()
    return finish, mem


_time = st.one_of(st.just(0.0), st.floats(1e-4, 1.0))
_demand = st.builds(Demand, _time, _time, st.one_of(st.just(0.0), st.floats(1e3, 1e9)))
_flow = st.tuples(st.floats(0.0, 2.0), st.lists(_demand, min_size=0, max_size=6),
                  st.floats(0.5, 2.0))
_knee = st.one_of(st.none(), st.tuples(st.integers(1, 3), st.floats(0.1, 1.0)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flows=st.lists(_flow, min_size=1, max_size=4), bandwidth_GBps=st.floats(0.05, 20.0),
       knee=_knee)
def test_profile_flows_complete_when_per_op_flows_do(flows, bandwidth_GBps, knee):
    """Random profiles (fixed delays, byte phases, plain delays, caps), arrivals, noise scales,
    1-4 flows, with and without a saturation knee: the same completion times to 1e-9."""
    want = _reference(flows, bandwidth_GBps * 1e9, knee)
    got, _ = _profiled(flows, bandwidth_GBps * 1e9, knee)
    assert got == pytest.approx(want, rel=REL, abs=1e-12)


def test_flows_entering_byte_phases_at_one_instant_do_not_stall_the_server():
    """Found by hypothesis: two flows whose byte phases start at the same instant (one position
    an ulp short of its boundary) made the bound restart there forever."""
    flows = [(0.0, [Demand(0.09741241129548409, 0.03125, 287307268.0)], 1.4609375),
             (0.0, [Demand(0.09741241129548409, 0.03125, 32272811.0)], 1.4609375)]
    got, _ = _profiled(flows, 7e9, None)
    assert got == pytest.approx(_reference(flows, 7e9, None), rel=REL)


def test_a_long_throttled_stretch_of_a_short_segment_keeps_its_precision():
    """Found by hypothesis: a 0.1 ms byte phase stretched to 1.25 s by a 0.25 GB/s server after
    0.6 s of delays: a position counted from the profile's start resolves it to ~2e-12 s only; the
    work left in the segment resolves it to the general path's 1e-12."""
    flows = [(1.625, [Demand(0.0, 1.0, 0.0)], 1.0),
             (0.28125, [Demand(0.1640625, 0.5, 1000.0)], 1.5642986108645303),
             (0.0, [Demand(0.0, 0.5, 0.0), Demand(0.0, 0.125, 0.0), Demand(0.0, 0.0001, 312769634.5)], 0.75)]
    got, _ = _profiled(flows, 0.25e9, None)
    assert got == pytest.approx(_reference(flows, 0.25e9, None), rel=REL)
    assert got[2] == pytest.approx(0.46875 + (312769634.5 + 1000.0) / 0.25e9, rel=1e-15)


def test_a_throttled_profile_flow_recomputes_rates_and_an_unthrottled_one_does_not():
    # two flows of two 1 GB/s byte phases on a 1.5 GB/s server: they must share
    demands = [Demand(0.0, 1.0, 1e9), Demand(0.0, 1.0, 1e9)]
    flows = [(0.0, demands, 1.0), (0.25, demands, 1.0)]
    want = _reference(flows, 1.5e9, None)
    got, mem = _profiled(flows, 1.5e9, None)
    assert got == pytest.approx(want, rel=REL)
    assert want[0] > 2.0 and mem.solver.throttled_steps > 0
    # on a 2 GB/s server nobody is throttled: each finishes 2 s after it starts
    got, mem = _profiled(flows, 2e9, None)
    assert got == pytest.approx([2.0, 2.25], rel=REL)
    assert mem.solver.throttled_steps == 0 and mem.timers == 3
    # past a knee the bound is the capacity of all the flows present: 0.9 + 0.9 GB/s fit 2 GB/s,
    # but two active flows get 2 / (1 + 1 x (2 - 1)) = 1 GB/s in all
    flows = [(0.0, [Demand(0.0, 1.0, 0.9e9)], 1.0), (0.0, [Demand(0.0, 1.0, 0.9e9)], 1.0)]
    got, mem = _profiled(flows, 2e9, (1, 1.0))
    assert got == pytest.approx(_reference(flows, 2e9, (1, 1.0)), rel=REL)
    assert got == pytest.approx([1.8, 1.8], rel=REL)


def test_two_profile_servers_on_one_environment_each_equal_the_per_op_primitive():
    """Each server waits for the end of the instant before computing its way forward: two of them
    (two memories) must not wait on each other, and each must match its reference."""
    demands = [Demand(0.0, 0.5, 1e9), Demand(0.1, 0.2, 0.0), Demand(0.0, 0.5, 1e9)]
    flows = [(0.0, demands, 1.0), (0.3, demands, 1.2), (0.3, demands[::-1], 0.9)]
    env = simpy.Environment()
    servers = [BandwidthResource(env, 2.5e9), BandwidthResource(env, 1.5e9)]
    finish: dict = {}

    def proc(s, k, arrival_s, demands, scale):
        yield env.timeout(arrival_s)
        yield servers[s].run(FlowProfile.from_demands(demands), scale)
        finish[s, k] = env.now

    for s in (0, 1):
        for k, flow in enumerate(flows):
            env.process(proc(s, k, *flow))
    env.run()
    for s, bandwidth_Bps in enumerate((2.5e9, 1.5e9)):
        want = _reference(flows, bandwidth_Bps, None)
        assert [finish[s, k] for k in range(3)] == pytest.approx(want, rel=REL)


def test_profile_of_demands_walks_ops_as_the_per_op_des_does():
    p = FlowProfile.from_demands([Demand(0.001, 0.0, 5.0),     # bytes but no busy time: free
                                  Demand(0.002, 0.003, 0.0),   # fixed + plain delay: merged
                                  Demand(0.0, 0.004, 4e6),
                                  Demand(0.0, 0.001, 1e6),     # the same cap: merged
                                  Demand(0.0, 0.001, 2e6)])
    assert p.segments == 3
    assert p.ends == pytest.approx([0.006, 0.011, 0.012])
    assert p.caps_Bps == pytest.approx([0.0, 1e9, 2e9])
    assert FlowProfile.from_demands([]).total_s == 0.0
    with pytest.raises(ValueError, match="positive"):
        FlowProfile([0.0], [1.0])


def test_one_server_carries_one_kind_of_flow_at_a_time():
    env = simpy.Environment()
    mem = BandwidthResource(env, 1e9)
    mem.transfer(1e9)
    with pytest.raises(RuntimeError, match="one kind"):
        mem.run(FlowProfile([1.0], [1e8]))


# -- pipeline level --------------------------------------------------------------------------------

MAPPING = "B2:1-13|B2:14-30|s2:31-44|s2:45-54"


def _old_stage_proc(env, i, frames, queues, compute_s, parts, profile, mem, xfer_s, route, link,
                    nbytes, noise, record, progress):
    """The reference: ``_stage_proc`` as it was before profile flows (a timeout or a transfer per
    op on the shared memory), kept here only; it ignores ``profile``."""
    start, compute_end, end = record
    q_in, q_out = queues[i], (queues[i + 1] if i + 1 < len(queues) else None)
    for f in range(frames):
        frame = yield q_in.get()
        start[i, f] = env.now
        scale = noise[i, f] if noise is not None else 1.0
        if mem is None:
            yield env.timeout(compute_s * scale)
        else:
            yield from _per_op(env, mem, parts, scale)
        compute_end[i, f] = env.now
        if xfer_s > 0:
            if link is None:
                yield env.timeout(xfer_s)
            else:
                yield env.timeout(route.latency_s)
                yield link.transfer(nbytes, route.bandwidth_Bps)
        end[i, f] = env.now
        if q_out is not None:
            yield q_out.put(frame)


def _runs(monkeypatch, dram_GBps, frames=40, noise_sigma=0.05, saturation=None, fast=True):
    """(the run, the old per-op engine's, the resources the run made, the setup)."""
    overrides = [f"memories.dram.bandwidth_GBps={dram_GBps}"]
    if saturation:
        overrides += [f"memories.dram.saturation.{k}={v}" for k, v in saturation.items()]
    platform = load_platform("hikey970", overrides=overrides)
    workload = load_workload("resnet50")
    cost = RooflineCostModel(platform)
    pipe = load_mapping(MAPPING, platform, workload, cost)
    options = RunOptions.make(engine="des", frames=frames, flows="op", noise_sigma=noise_sigma,
                              seed=4, fast=fast).resolve(pipe)
    servers = []
    made = BandwidthResource.for_memory

    def keep(env, memory):
        servers.append(made(env, memory))
        return servers[-1]

    with monkeypatch.context() as m:
        m.setattr(BandwidthResource, "for_memory", keep)
        new = run_pipeline(platform, workload, pipe, cost, options)
    with monkeypatch.context() as m:
        m.setattr(pipeline_module, "_stage_proc", _old_stage_proc)
        old = run_pipeline(platform, workload, pipe, cost, options.model_copy(update={"fast": False}))
    return new, old, servers, (platform, workload, pipe, cost)


def _assert_same_run(new, old):
    for a in ("start", "compute_end", "end", "arrival"):
        np.testing.assert_allclose(getattr(new, a), getattr(old, a), rtol=REL, atol=1e-12)


@pytest.mark.parametrize("saturation", [None, {"knee_flows": 2, "loss_per_flow": 0.3}])
@pytest.mark.parametrize("fast", [True, False])
def test_contended_per_op_pipeline_equals_the_old_per_op_engine(monkeypatch, saturation, fast):
    """hikey970 with its DRAM at 1.5 GB/s (the four stages' per-op flows saturate it): the run
    (the pipeline's event loop, or SimPy with profile flows with ``fast=False``) gives the old
    per-op engine's to 1e-12, frame by frame."""
    new, old, servers, _ = _runs(monkeypatch, 1.5, saturation=saturation, fast=fast)
    _assert_same_run(new, old)
    if not fast:
        assert servers[0].solver.throttled_steps > 0          # really contended


def test_uncontended_per_op_pipeline_is_the_closed_form(monkeypatch):
    """With the DRAM wide enough that no set of ops can throttle each other, per-op flows give the
    closed-form service times: the max-plus recurrence's run, without a server (the check that
    no instant asks the memory for more than it has is enough); SimPy's profile flows agree."""
    new, old, servers, (platform, workload, pipe, cost) = _runs(monkeypatch, 100.0)
    _assert_same_run(new, old)
    assert servers == []
    options = RunOptions.make(engine="des", frames=40, noise_sigma=0.05, seed=4,
                              contention=False).resolve(pipe)
    closed = run_pipeline(platform, workload, pipe, cost, options)    # the recurrence (fast path)
    _assert_same_run(new, closed)
    simpy_run, _, servers, _ = _runs(monkeypatch, 100.0, fast=False)
    _assert_same_run(simpy_run, closed)
    assert servers[0].solver.throttled_steps == 0


def test_shipped_dram_per_op_pipeline_is_never_throttled_but_a_slower_one_is(monkeypatch):
    """hikey970's own DRAM (29.9 GB/s) is below the sum of the stages' peak op rates (36 GB/s)
    but the ops that would overflow it never run at once: the check over every instant of the
    closed-form schedule answers it (no server made); at 12 GB/s they do run at once."""
    new, old, servers, _ = _runs(monkeypatch, 29.9, noise_sigma=0.0)
    _assert_same_run(new, old)
    assert servers == []
    assert not never_throttled(Server("dram", 12e9), *_schedule_on(12.0))
    assert never_throttled(Server("dram", 29.9e9), *_schedule_on(29.9))


def _schedule_on(dram_GBps):
    """(profiles, starts, scales) of the closed-form schedule of the pipeline on this DRAM."""
    from hetsim.sim.recurrence import run_pipeline_recurrence
    from hetsim.tasks import stage_costs, stage_demands

    platform = load_platform("hikey970", overrides=[f"memories.dram.bandwidth_GBps={dram_GBps}"])
    workload = load_workload("resnet50")
    cost = RooflineCostModel(platform)
    pipe = load_mapping(MAPPING, platform, workload, cost)
    run = run_pipeline_recurrence(*stage_costs(pipe, workload, cost), frames=40)
    profiles = [FlowProfile.from_demands(d) for d in stage_demands(pipe, workload, cost, per_op=True)]
    return profiles, list(run.start), [None] * len(profiles)


def test_per_op_work_estimate_counts_the_event_loop_only_where_the_memory_can_overflow():
    from hetsim.sim.budget import LOOP_BOUNDARY_EVENTS, estimate_pipeline

    workload = load_workload("resnet50")
    est = {}
    for dram_GBps in (100.0, 12.0):
        platform = load_platform("hikey970", overrides=[f"memories.dram.bandwidth_GBps={dram_GBps}"])
        cost = RooflineCostModel(platform)
        pipe = load_mapping(MAPPING, platform, workload, cost)
        for flows in ("stage", "op"):
            options = RunOptions.make(engine="des", frames=1000, flows=flows).resolve(pipe)
            est[dram_GBps, flows] = estimate_pipeline(platform, workload, pipe, cost, options)
    # 100 GB/s fits the stages' peak op rates (12 + 12 + 6 + 6 GB/s): the recurrence and the check
    assert est[100.0, "op"].path == "max-plus recurrence"
    assert est[100.0, "op"].events < est[100.0, "stage"].events / 5
    # 12 GB/s does not: the event loop over every segment boundary (26 + 34 + 28 + 18 a frame)
    assert est[12.0, "op"].path == "per-op event loop"
    loop = est[12.0, "op"].events - est[100.0, "op"].events
    assert loop == pytest.approx(1000 * 106 * LOOP_BOUNDARY_EVENTS, rel=0.2)
