"""Seed 004 (Savva's hybrid CNN partitioning, NSGA-II): the platform's switched network, the hybrid
mapping form (AutoDiCE's Concat rule, the Table 1 formalism, AutoDiCE's JSON), the three
chromosomes on the thesis's worked examples (Figs. 8-11, Table 4), the analytical model against
the one DAG engine, the tuning procedure, and the pymoo operators."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import simpy

from hetsim.errors import HetsimError
from hetsim.mapping import (
    autodice_names,
    from_autodice,
    hybrid_placement,
    partition_of,
    placement_from_partition,
    to_autodice,
)
from hetsim.options import RunOptions
from hetsim.platform import load_platform
from hetsim.sim.bandwidth import BandwidthResource
from hetsim.sim.dag import run_dag
from hetsim.tasks import build_tasks, list_schedule
from hetsim.workload import load_workload, workload_from_dict
from hetsim_papers.nsga2.cost import (
    Coefficients,
    MiB,
    NcnnCostModel,
    ThesisCostModel,
    UnitCoefficients,
    expected_memory_bytes,
)
from hetsim_papers.nsga2.explorers import (
    Advanced,
    HybridProblem,
    HybridSpace,
    Naive,
    SplitPoint,
    ThesisModel,
    device_view,
)
from hetsim_papers.nsga2.search import IntPM05, IntSBX05, run_nsga2

ROOT = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def xavier():
    return load_platform("xavier-nx-x8")


@pytest.fixture(scope="module")
def alexnet():
    return load_workload("alexnet-onnx")


def toy(n_layers: int = 6):
    """Fig. 8a's network: Conv, ReLU, MaxPool, Flatten, FC, Softmax (the first ``n_layers``)."""
    ops = [{"name": "l1", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8, "inputs": []},
           {"name": "l2", "kind": "relu", "inputs": ["l1"]},
           {"name": "l3", "kind": "maxpool", "kernel": 2, "stride": 2, "inputs": ["l2"]},
           {"name": "l4", "kind": "flatten", "inputs": ["l3"]},
           {"name": "l5", "kind": "fc", "out_c": 10, "inputs": ["l4"]},
           {"name": "l6", "kind": "softmax", "inputs": ["l5"]}][:n_layers]
    return workload_from_dict({"schema": 1, "name": f"fig8-{n_layers}", "input": {"h": 8, "w": 8, "c": 4},
                               "layer_kinds": ["conv", "fc"], "ops": ops}, "fig8")


def coefficients(penalty: float = 0.0) -> Coefficients:
    lat = {"conv_im2col": 4.0, "conv_winograd": 15.0, "fc": 0.5, "relu": 2.0, "lrn": 1.0, "maxpool": 1.0,
           "softmax": 1.0}
    cpu = UnitCoefficients(frequency_Hz=1.4e9, latency=lat, memory_coefficient=0.8, memory_bias_MiB=30,
                           energy_W=12)
    gpu = UnitCoefficients(frequency_Hz=1e9, latency={k: 3 * v for k, v in lat.items()}, memory_coefficient=0.9,
                           memory_bias_MiB=250, energy_W=8)
    return Coefficients(network="test", platform="xavier-nx-x8", units={"cpu": cpu, "gpu": gpu},
                        links_Bps={"same_device": 1e10, "cpu_gpu": 4e9, "network": 1.17e8},
                        sync_penalty_s=penalty, winograd={"cpu": (6, 16), "gpu": (4, 16)})


# -- platform: the switched Ethernet, the CPU-GPU link, the views ------------------------------------
def test_xavier_file_is_what_its_generator_writes():
    r = subprocess.run([sys.executable, str(ROOT / "platforms" / "make_xavier.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_routes_between_devices(xavier):
    cpu1, gpu1, gpu3 = xavier.ep("nx01-cpu"), xavier.ep("nx01-gpu"), xavier.ep("nx03-gpu")
    same_board = xavier.route(cpu1, gpu1)
    assert same_board.links == ("nx01-cg",) and same_board.servers == (("nx01-cg", 4e9),)
    across = xavier.route(cpu1, gpu3)
    assert across.links == ("eth",)
    assert [name for name, _ in across.servers] == ["eth:nx01>", "eth:>nx03"]
    assert [name for name, _ in xavier.route(gpu3, cpu1).servers] == ["eth:nx03>", "eth:>nx01"]


def test_device_views(xavier):
    assert device_view(xavier, "cpu") == [f"nx{b:02d}-cpu" for b in range(1, 9)]
    both = device_view(xavier, "cpu+gpu")
    assert len(both) == 16 and both[:3] == ["nx01-cpu", "nx01-gpu", "nx02-cpu"]
    with pytest.raises(HetsimError, match="'nx09-cpu' is not a device of platform xavier-nx-x8"):
        device_view(xavier, ["nx01-cpu", "nx09-cpu"])
    with pytest.raises(HetsimError, match="lists a device twice"):
        device_view(xavier, ["nx01-cpu", "nx01-cpu"])


def test_flow_network_shares_ports_max_min():
    env = simpy.Environment()
    net = BandwidthResource(env)
    for name in ("a>", ">b", ">c", "d>"):
        net.add(name, 100.0)
    done = {}

    def go(key, servers):
        yield net.transfer(100.0, via=servers)
        done[key] = env.now

    # a sends to b and to c at once: they share a's send port; d -> c shares c's receive port.
    env.process(go("ab", ["a>", ">b"]))
    env.process(go("ac", ["a>", ">c"]))
    env.process(go("dc", ["d>", ">c"]))
    env.run()
    # Progressive filling: every flow gets 50 (a's port and c's port both split in two).
    assert done == pytest.approx({"ab": 2.0, "ac": 2.0, "dc": 2.0})
    # One server named in every flow: the same as a one-server resource's water-filling.
    env2 = simpy.Environment()
    one = BandwidthResource(env2)
    one.add("x", 10.0)
    one.add("y", 10.0)
    ends = []

    def flow(obj, nbytes, cap, servers):
        yield obj.transfer(nbytes, cap, via=servers)
        ends.append(env2.now)

    env2.process(flow(one, 30.0, 4.0, ["x"]))
    env2.process(flow(one, 30.0, np.inf, ["x"]))
    env2.run()
    env3 = simpy.Environment()
    ref = BandwidthResource(env3, 10.0)
    ref_ends = []

    def rflow(nbytes, cap):
        yield ref.transfer(nbytes, cap)
        ref_ends.append(env3.now)

    env3.process(rflow(30.0, 4.0))
    env3.process(rflow(30.0, np.inf))
    env3.run()
    assert sorted(ends) == pytest.approx(sorted(ref_ends))


def test_switch_contention_in_the_des(xavier, alexnet):
    """conv1 split over three boards: the input broadcast leaves board 1 once per receiver, through
    board 1's one send port, so two receivers take twice as long as one; with contention off each
    transfer takes its uncontended time."""
    devices = {op.name: ["nx01-cpu"] for op in alexnet.ops}
    cost = NcnnCostModel(xavier)
    times = {}
    for k in (2, 3):
        devices["conv1_1"] = [f"nx0{i}-cpu" for i in range(1, k + 1)]
        placement = hybrid_placement(xavier, alexnet, devices)
        tg = build_tasks(xavier, alexnet, placement, cost, comm="free")
        broadcast = [t for t in tg.tasks if t.kind == "transfer" and t.name.startswith("input->")]
        assert len(broadcast) == k - 1 and all(t.src.name == "nx01-cpu" for t in broadcast)
        run = run_dag(xavier, tg, RunOptions.make(frames=1).resolve(placement))
        times[k] = max(run.end[0, t.index] - run.start[0, t.index] for t in broadcast)
    one = broadcast[0].transfer_s
    assert times[2] == pytest.approx(one, rel=1e-9)
    assert times[3] - broadcast[0].fixed_s == pytest.approx(2 * (one - broadcast[0].fixed_s), rel=1e-9)


# -- the hybrid mapping form -----------------------------------------------------------------------
def test_hybrid_placement_shares_and_autodice_concat_rule(xavier):
    w = toy()
    dev = lambda i: f"nx0{i}-cpu"  # noqa: E731
    p = hybrid_placement(xavier, w, {"l1": [dev(3), dev(1), dev(2)], "l2": [dev(2)], "l3": [dev(5)],
                                     "l4": [dev(3)], "l5": [dev(4), dev(2), dev(5), dev(1)], "l6": [dev(1)]})
    # 8 channels over 3 devices: 2 each, the remainder (2) to split 1; 10 over 4: 2 each + 2.
    assert [round(s.fraction * 8) for s in p.splits["l1"]] == [4, 2, 2]
    assert [round(s.fraction * 10) for s in p.splits["l5"]] == [4, 2, 2, 2]
    assert p.ep_of["l1"].name == dev(2)        # the Concat goes with the next layer (l2)
    assert p.ep_of["l5"].name == dev(1)        # ... l6's device
    assert p.inputs["input"].name == dev(3)    # the input lives on split 1 of the first layer
    last = hybrid_placement(xavier, toy(5), {"l1": [dev(1)], "l2": [dev(1)], "l3": [dev(1)], "l4": [dev(2)],
                                             "l5": [dev(3), dev(4)]})
    assert last.ep_of["l5"].name == dev(2)     # the last layer's Concat: the previous layer's device
    with pytest.raises(HetsimError, match="layer l2 .* is on 2 devices, but only Conv and FC"):
        hybrid_placement(xavier, w, {**{n: [dev(1)] for n in ("l1", "l3", "l4", "l5", "l6")}, "l2": [dev(1), dev(2)]})
    with pytest.raises(HetsimError, match="layer l6 is not mapped to any device"):
        hybrid_placement(xavier, w, {n: [dev(1)] for n in ("l1", "l2", "l3", "l4", "l5")})


def test_table1_partition(xavier):
    """Table 1: ^3L_1 = {l1, l2, l3}, ^3L_2 = {l1, l4, l5}, ^3L_3 = {l5}, Device_4 unused."""
    w = toy(5)
    partition = {"nx01-cpu": ["l1", "l2", "l3"], "nx02-cpu": ["l1", "l4", "l5"], "nx03-cpu": ["l5"]}
    p = placement_from_partition(partition, xavier, w)
    assert [s.ep.name for s in p.splits["l1"]] == ["nx01-cpu", "nx02-cpu"]
    assert [s.ep.name for s in p.splits["l5"]] == ["nx02-cpu", "nx03-cpu"]
    assert "nx04-cpu" not in {ep.name for ep in p.eps}
    assert partition_of(p, w) == partition
    with pytest.raises(HetsimError, match="layer l2 is in the subsets of nx01-cpu and nx02-cpu"):
        placement_from_partition({"nx01-cpu": ["l1", "l2", "l3"], "nx02-cpu": ["l2", "l4", "l5"]}, xavier, w)


def test_autodice_files_round_trip(xavier, alexnet, tmp_path):
    devices = {op.name: ["nx08-cpu"] for op in alexnet.ops}
    devices.update({"conv1_1": ["nx08-cpu", "nx02-cpu"], "fc6_1": ["nx06-cpu", "nx04-cpu"]})
    for name in ("fc6_2", "fc6_3", "fc7_1", "fc7_2", "fc7_3", "fc8_1", "prob_1"):
        devices[name] = ["nx06-cpu"]
    p = hybrid_placement(xavier, alexnet, devices)
    mapping, horizontal = to_autodice(p, xavier, alexnet)
    assert autodice_names(xavier)["nx08-cpu"] == "nx08_arm012345"
    assert horizontal["conv1_1"] == ["lop", [48, 48], ["nx08_arm012345", "nx02_arm012345"]]
    assert mapping["nx02_arm012345"] == ["conv1_1"]
    assert sorted(n for names in mapping.values() for n in names) == sorted(
        [op.name for op in alexnet.ops] + ["conv1_1", "fc6_1"])
    back = from_autodice(mapping, horizontal, xavier, alexnet)
    assert back.ep_of == p.ep_of and back.splits == p.splits and back.inputs == p.inputs
    # The files load as a mapping (horizontal.json beside mapping.json).
    (tmp_path / "mapping.json").write_text(json.dumps(mapping))
    (tmp_path / "horizontal.json").write_text(json.dumps(horizontal))
    from hetsim.mapping import load_mapping
    assert load_mapping(str(tmp_path / "mapping.json"), xavier, alexnet).splits == p.splits
    short = {k: [n for n in v if n != "prob_1"] for k, v in mapping.items()}
    with pytest.raises(HetsimError, match="layer prob_1 is not mapped to any device"):
        from_autodice(short, horizontal, xavier, alexnet)
    with pytest.raises(HetsimError, match="device 'nx09_arm012345' is not on platform xavier-nx-x8"):
        from_autodice({"nx09_arm012345": ["conv1_1"]}, {}, xavier, alexnet)
    with pytest.raises(HetsimError, match="listed under 2 devices but horizontal.json does not split it"):
        from_autodice(mapping, {}, xavier, alexnet)


def test_split_tasks_broadcast_the_input_and_return_the_slices(xavier, alexnet):
    devices = {op.name: ["nx01-cpu"] for op in alexnet.ops}
    devices["conv1_1"] = ["nx01-cpu", "nx02-cpu"]
    devices["conv3_1"] = ["nx03-cpu", "nx01-cpu"]
    p = hybrid_placement(xavier, alexnet, devices)
    tg = build_tasks(xavier, alexnet, p, NcnnCostModel(xavier), comm="mpi")
    names = [t.name for t in tg.tasks]
    assert "input->nx02-cpu" in names                               # eq. 4.3's IS x N
    assert "pool2_1->nx03-cpu" in names                             # conv3's input to its other device
    assert "conv1_1@nx02-cpu->nx01-cpu" in names                    # the slices come home
    assert "conv3_1@nx03-cpu->nx01-cpu" in names
    mpi = next(t for t in tg.tasks if t.name == "input->nx02-cpu")
    assert mpi.lanes == ("nx02-cpu", "nx01-cpu")                    # blocks receiver and sender
    # The home device computes its own share before it receives the slices.
    home = tg.lanes["nx01-cpu"]
    assert home.index(names.index("conv3_1@nx01-cpu")) < home.index(names.index("conv3_1@nx03-cpu->nx01-cpu"))


# -- the chromosomes on the thesis's worked examples ------------------------------------------------
def test_naive_fig8(xavier):
    space = HybridSpace(xavier, toy(), device_view(xavier, "cpu")[:5])
    naive = Naive(space)
    assert naive.n_var == Naive.length(2, 6, 5) == 14                 # eq. 4.5
    genome = [3, 1, 2, 1, 2] + [2, 5, 3] + [4, 2, 5, 1, 4] + [1]
    p = naive.placement(genome)
    got = {op: [int(ep.name[3]) for ep in p.devices_of(op)] for op in space.op_names}
    assert got == {"l1": [3, 1, 2], "l2": [2], "l3": [5], "l4": [3], "l5": [4, 2, 5, 1], "l6": [1]}
    with pytest.raises(HetsimError, match=r"gene 2 is 6, outside 1..5 \(layer l1"):
        naive.check(np.array([3, 1, 6] + genome[3:]))


def test_advanced_fig10_and_fig11(xavier):
    space = HybridSpace(xavier, toy(), device_view(xavier, "cpu")[:5])
    dev = lambda p, op: [int(ep.name[3]) for ep in p.devices_of(op)]  # noqa: E731
    one = Advanced(space, p=1)
    fig10 = one.placement([0, 1, 0, 2, 0])
    assert [dev(fig10, op) for op in space.op_names] == [[2], [2], [2], [2], [4], [4]]
    alone = one.placement([0, 0, 0, 2, 0])
    assert {d for op in space.op_names for d in dev(alone, op)} == {4}
    fig11 = Advanced(space, p=5)
    assert fig11.n_var == Advanced.length(5, 5) == 25                 # eq. 4.6
    genome = [0, 0, 1, 2, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 2, 2, 1, 0, 0, 0, 2, 0, 0, 0, 0]
    fig9 = fig11.placement(genome)
    assert dev(fig9, "l1") == [3, 1, 2] and dev(fig9, "l5") == [4, 2, 5, 1]
    assert [dev(fig9, op) for op in ("l2", "l3", "l4", "l6")] == [[3], [3], [3], [4]]


def test_advanced_repair_and_ties(xavier):
    space = HybridSpace(xavier, toy(), device_view(xavier, "cpu")[:5])
    adv = Advanced(space, p=1)
    # Row 1 stops at 1 of 2: the device with the largest point takes the rest.
    assert adv.repair(np.array([[0, 1, 0, 0, 0]])).tolist() == [[0, 2, 0, 0, 0]]
    assert adv.repair(np.array([[0, 0, 0, 0, 0]])).tolist() == [[2, 0, 0, 0, 0]]
    # Equal split points: the first device owns the range, the second gets nothing.
    tie = adv.placement([0, 2, 0, 2, 0])
    assert {ep.name for op in space.op_names for ep in tie.devices_of(op)} == {"nx02-cpu"}
    with pytest.raises(HetsimError, match="p=9 must be an integer in 1..5"):
        Advanced(space, p=9)


def test_split_point_vertical(xavier):
    space = HybridSpace(xavier, toy(), device_view(xavier, "cpu")[:5])
    sp = SplitPoint(space)
    p = sp.placement([0, 2, 0, 6, 4])
    assert [p.devices_of(op)[0].name for op in space.op_names] == ["nx02-cpu"] * 2 + ["nx05-cpu"] * 2 + \
        ["nx04-cpu"] * 2
    assert not p.splits


def test_table4_genome(xavier, alexnet):
    from hetsim_papers.nsga2.experiments.table4 import TABLE4_CONCAT, TABLE4_DEVICES, TABLE4_GENOME

    space = HybridSpace(xavier, alexnet, "cpu")
    p = Advanced(space, p=4).placement(np.array(TABLE4_GENOME))
    assert {op: [int(e.name[2:4]) for e in p.devices_of(op)] for op in TABLE4_DEVICES} == TABLE4_DEVICES
    assert {op: int(p.ep_of[op].name[2:4]) for op in TABLE4_CONCAT} == TABLE4_CONCAT


# -- the analytical model ---------------------------------------------------------------------------
@pytest.mark.parametrize("view", ["cpu", "cpu+gpu"])
def test_vectorised_model_equals_the_dag_engine(xavier, alexnet, view):
    space = HybridSpace(xavier, alexnet, view)
    co = coefficients()
    model, cost = ThesisModel(space, co), ThesisCostModel(xavier, co)
    rng = np.random.default_rng(4)
    for chrom in (Naive(space), Advanced(space, 2), Advanced(space, 4), SplitPoint(space)):
        X = chrom.repair(rng.integers(chrom.xl, chrom.xu + 1, size=(6, chrom.n_var)))
        f = model.evaluate(chrom.decode(X))
        for i in range(len(X)):
            p = space.placement(chrom.decode(X), i)
            _, finish = list_schedule(build_tasks(xavier, alexnet, p, cost, comm="mpi"))
            assert f.latency_s[i] == pytest.approx(finish.max(), rel=1e-9)
            expected = expected_memory_bytes(p, alexnet, xavier)
            memory = max(b / MiB * co.unit(xavier.ep(d)).memory_coefficient + co.unit(xavier.ep(d)).memory_bias_MiB
                         for d, b in expected.items())
            assert f.memory_MiB[i] == pytest.approx(memory, rel=1e-9)
            units = {d: co.unit(xavier.ep(d)).energy_W for d in expected}
            assert f.energy_J[i] == pytest.approx(max(units[d] * f.device_time_s[i, space.device_names.index(d)]
                                                      for d in units), rel=1e-9)


def test_sync_penalty_only_delays_late_slices(xavier, alexnet):
    space = HybridSpace(xavier, alexnet, "cpu")
    chrom = Advanced(space, 2)
    X = chrom.repair(np.random.default_rng(1).integers(chrom.xl, chrom.xu + 1, size=(30, chrom.n_var)))
    d = chrom.decode(X)
    plain, penalised = ThesisModel(space, coefficients(0.0)).evaluate(d), ThesisModel(space, coefficients(1e-3)).evaluate(d)
    assert np.all(penalised.latency_s >= plain.latency_s)
    split = (d.slots[:, :, 1] >= 0).any(axis=1)
    assert np.all(penalised.latency_s[~split] == plain.latency_s[~split])
    assert np.any(penalised.latency_s[split] > plain.latency_s[split])


def test_tuning_reproduces_the_single_device_run(xavier, alexnet):
    problem = HybridProblem(xavier, alexnet, devices="cpu", frames=4, warmup=1)
    from hetsim_papers.nsga2.explorers import tune

    co = tune(problem)
    single = co.tuning["single_device"]["cpu"]
    model = ThesisModel(problem.space, co)
    pred = model.predict(problem.single_device("nx01-cpu"))
    # eq. 4.10's coefficient is E / T_pred of this very run; eq. 4.7's per-type means stay close.
    assert pred["energy_J"] == pytest.approx(single["energy_J"], rel=1e-9)
    assert pred["latency_s"] == pytest.approx(single["latency_s"], rel=0.15)
    assert co.links_Bps["network"] == pytest.approx(0.117e9, rel=0.02)
    assert co.sync_penalty_s == pytest.approx(200e-6, rel=0.05)
    assert set(co.units) == {"cpu"} and co.units["cpu"].memory_coefficient > 0


# -- NSGA-II ----------------------------------------------------------------------------------------
def test_pymoo_05_operators_stay_integer_and_in_bounds():
    from pymoo.core.problem import Problem

    problem = Problem(n_var=40, n_obj=1, xl=np.zeros(40), xu=np.full(40, 8.0))
    rng = np.random.default_rng(0)
    X = rng.integers(0, 9, size=(2, 500, 40)).astype(float)
    Q = IntSBX05()._do(problem, X, random_state=rng)
    assert np.all(Q == np.rint(Q)) and Q.min() >= 0 and Q.max() <= 8
    M = IntPM05()._do(problem, X[0], random_state=rng)
    assert np.all(M == np.rint(M)) and M.min() >= 0 and M.max() <= 8
    # Each gene is picked with probability 1/n (0.5's int_pm); eta 20 makes many round back.
    assert float(IntPM05().get_prob_var(problem)) == pytest.approx(1 / 40)
    assert 0 < (M != X[0]).mean() <= 1.0 / 40


def test_nsga2_is_seeded_and_elitist(xavier, alexnet):
    space = HybridSpace(xavier, alexnet, "cpu")
    model = ThesisModel(space, coefficients(2e-4))
    a = run_nsga2(Advanced(space, 2), model, pop_size=24, n_gen=6, seed=3)
    b = run_nsga2(Advanced(space, 2), model, pop_size=24, n_gen=6, seed=3)
    assert a.generations.drop(columns="seconds").equals(b.generations.drop(columns="seconds"))
    assert list(a.generations["generation"]) == list(range(7))
    for col in ("min_energy_J", "min_memory_MiB", "min_latency_s"):   # extremes survive (crowding = inf)
        assert np.all(np.diff(a.generations[col]) <= 1e-12)
    c = run_nsga2(Naive(space), model, pop_size=24, n_gen=3, operator_set="pymoo-0.6", seed=3)
    assert c.evaluations >= 24 * 4 and np.all(c.F > 0)
    with pytest.raises(HetsimError, match="operators='pymoo-0.7'; allowed"):
        run_nsga2(Naive(space), model, pop_size=4, n_gen=1, operator_set="pymoo-0.7")


@pytest.mark.parametrize("make,seed,dedup,ops", [(lambda s: Naive(s), 0, True, "pymoo-0.5"),
                                                  (lambda s: Advanced(s, 2), 1, True, "pymoo-0.5"),
                                                  (lambda s: Advanced(s, 4), 2, False, "pymoo-0.5"),
                                                  (lambda s: SplitPoint(s), 3, True, "pymoo-0.5"),
                                                  (lambda s: Advanced(s, 3), 4, True, "pymoo-0.6"),
                                                  (lambda s: Naive(s), 5, False, "pymoo-0.6")])
def test_fast_pieces_are_pymoo_defaults_draw_for_draw(xavier, alexnet, make, seed, dedup, ops):
    """The hashed duplicates, the array mating, tournament, evaluator and survival and the fitness
    cache change nothing: the same log, front and evaluations as pymoo's defaults for a seed (a
    small population converges, so duplicates, ties, cache hits and truncated rounds all occur)."""
    space = HybridSpace(xavier, alexnet, "cpu")
    model = ThesisModel(space, coefficients(2e-4))
    a, b = (run_nsga2(make(space), model, pop_size=30, n_gen=12, seed=seed, eliminate_duplicates=dedup,
                      operator_set=ops, plain=plain) for plain in (True, False))
    assert a.generations.drop(columns="seconds").equals(b.generations.drop(columns="seconds"))
    assert np.array_equal(a.X, b.X) and np.array_equal(a.F, b.F) and a.evaluations == b.evaluations


def test_array_tournament_is_pymoos_draw_for_draw():
    """The array tournament picks what pymoo's binary_tournament picks, ties of crowding distance
    (infinite at the extremes) drawn from the generator in the same order: the generators end in
    the same state."""
    from pymoo.algorithms.moo.nsga2 import binary_tournament as pymoo_binary_tournament
    from pymoo.core.population import Population

    from hetsim_papers.nsga2.search import binary_tournament

    class Algorithm:
        tournament_type = "comp_by_dom_and_crowding"

        def __init__(self, seed):
            self.random_state = np.random.default_rng(seed)

    rng = np.random.default_rng(9)
    drawn = 0
    for seed in range(10):
        F = rng.integers(0, 3, size=(40, 3)).astype(float)          # many equal and non-dominated pairs
        pop = Population.new("X", rng.integers(0, 5, size=(40, 4)), "F", F)
        crowding = rng.choice([0.5, 1.0, np.inf], size=40)
        for ind, cd in zip(pop, crowding, strict=True):
            ind.set("crowding", cd)
        P = rng.integers(0, 40, size=(60, 2))
        ours, theirs = Algorithm(seed), Algorithm(seed)
        assert np.array_equal(binary_tournament(pop, P, ours), pymoo_binary_tournament(pop, P, theirs))
        assert ours.random_state.bit_generator.state == theirs.random_state.bit_generator.state
        drawn += ours.random_state.bit_generator.state != np.random.default_rng(seed).bit_generator.state
    assert drawn == 10     # every round had ties to draw


def test_genome_duplicates_are_pymoo_default_duplicates():
    """GenomeDuplicates keeps what DefaultDuplicateElimination keeps, in the same order: the first
    of equal genomes, none equal to another population's (floats and ints of the same genes)."""
    from pymoo.core.duplicate import DefaultDuplicateElimination
    from pymoo.core.population import Population

    from hetsim_papers.nsga2.search import GenomeDuplicates

    rng = np.random.default_rng(5)
    for _ in range(20):
        X = rng.integers(0, 3, size=(40, 4))
        other = rng.integers(0, 3, size=(25, 4)).astype(float)
        pop, oth = Population.new("X", X), Population.new("X", other)
        for args in ((), (oth,), (oth, Population.new("X", X[:3]))):
            want = DefaultDuplicateElimination().do(pop, *args, return_indices=True)[1]
            got = GenomeDuplicates().do(pop, *args, return_indices=True)[1]
            assert got == want


def test_fitness_rows_do_not_depend_on_their_population(xavier, alexnet):
    """The cache may hand out a genome's objectives computed in another population: the model's
    row for a genome is the same bits alone, in any batch and after a cache hit."""
    from hetsim_papers.nsga2.search import FitnessProblem

    space = HybridSpace(xavier, alexnet, "cpu")
    model = ThesisModel(space, coefficients(2e-4))
    for chromosome in (Naive(space), Advanced(space, 3), SplitPoint(space)):
        rng = np.random.default_rng(1)
        X = chromosome.repair(rng.integers(chromosome.xl, chromosome.xu + 1, size=(60, chromosome.n_var)))
        whole = model.evaluate(chromosome.decode(X)).F
        alone = np.vstack([model.evaluate(chromosome.decode(X[i:i + 1])).F for i in range(len(X))])
        assert np.array_equal(whole, alone)
        cached = FitnessProblem(chromosome, model)
        F1 = cached.evaluate(X[:30].astype(float))
        F2 = cached.evaluate(np.vstack([X[20:], X[:5]]).astype(float))
        assert np.array_equal(F1, whole[:30]) and np.array_equal(F2, np.vstack([whole[20:], whole[:5]]))
        assert cached.evaluations == 75 and cached.model_evaluations == len(np.unique(X, axis=0))


@pytest.mark.parametrize("view", ["cpu", "cpu+gpu"])
def test_columns_are_the_decoded_arrays_layer_major(xavier, alexnet, view):
    """The fitness's direct decoding (``Chromosome.columns``, no (P, L, k) arrays) gives the
    arrays of ``Columns.of(decode(X))`` exactly, and the model the same objectives from both: for
    every chromosome and shares rule, random and converged populations, one individual, and a
    population that splits nothing (Advanced-1)."""
    from hetsim_papers.nsga2.encoding import _distinct_slots
    from hetsim_papers.nsga2.space import Columns

    space = HybridSpace(xavier, alexnet, view)
    model = ThesisModel(space, coefficients(2e-4))
    rng = np.random.default_rng(4)
    for chromosome in (Naive(space), Naive(space, "multiplicity"), Advanced(space, 1), Advanced(space, 3),
                       Advanced(space, 3, "multiplicity"), SplitPoint(space)):
        X = rng.integers(chromosome.xl, chromosome.xu + 1, size=(40, chromosome.n_var))
        few = np.minimum(chromosome.xu, chromosome.xl + rng.integers(0, 2, size=(20, chromosome.n_var)))
        for genomes in (X, few, X[:1]):
            genomes = chromosome.repair(genomes)
            want, got = Columns.of(chromosome.decode(genomes)), chromosome.columns(genomes)
            for name in ("slot0", "share0", "home", "widths", "wide", "slot_wide", "share_wide"):
                a, b = getattr(want, name), getattr(got, name)
                assert a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b), (chromosome.name, name)
            assert np.array_equal(model.evaluate(got).F, model.evaluate(chromosome.decode(genomes)).F)
    # _distinct_slots by its definition (first appearances, left-aligned, counted)
    devices = rng.integers(-1, 4, size=(200, 6))
    slots, counts = _distinct_slots(devices)
    for row, s_row, c_row in zip(devices, slots, counts, strict=True):
        distinct = list(dict.fromkeys(int(d) for d in row if d >= 0))
        assert list(s_row) == distinct + [-1] * (6 - len(distinct))
        assert list(c_row[:len(distinct)]) == [float(np.sum(row == d)) for d in distinct]


def test_densenet_autodice_files_name_every_onnx_node(xavier):
    from hetsim.workload.onnx_import import folded_readers
    from hetsim_papers.nsga2.networks import densenet121

    w = load_workload("densenet121-onnx")
    readers = folded_readers(densenet121(), w)
    assert len(readers) == 242 and readers["conv1/scale_w_1"] == "conv1/bn_2"
    devices = {op.name: ["nx01-cpu"] for op in w.ops}
    devices["conv1/bn_2"] = ["nx02-cpu"]
    p = hybrid_placement(xavier, w, devices)
    mapping, horizontal = to_autodice(p, xavier, w, readers)
    assert sum(len(v) for v in mapping.values()) == 910
    assert "conv1/scale_w_1" in mapping["nx02_arm012345"]
    assert from_autodice(mapping, horizontal, xavier, w, constants=list(readers)).ep_of == p.ep_of


# -- moved from tests/test_robustness.py: algorithm parameters counted before they run ----------
def test_nsga2_counts_its_evaluations_before_it_runs():
    from hetsim_papers.nsga2.search import run_nsga2

    with pytest.raises(HetsimError, match="1,000,001,000 evaluations, past the limit of 100,000,000"):
        run_nsga2(None, None, pop_size=1000, n_gen=1_000_000)
