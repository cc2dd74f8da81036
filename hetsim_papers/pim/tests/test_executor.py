"""The PIM paper's executor on the one DAG engine (serial lane, copies before the op that needs them,
residency per memory space, the compute/transfer breakdown of Fig. 11), the PIM cost model and
pim-zynq."""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.cost import make_cost_model
from hetsim.errors import HetsimError
from hetsim.evaluation import DagOptions, simulate
from hetsim.platform import load_platform
from hetsim.tasks import DMA_LANE, build_tasks, list_schedule, task_time_s
from hetsim_papers.pim.cost import PimCostModel
from hetsim_papers.pim.dcg import assignment_names
from hetsim_papers.pim.experiments import runs


@pytest.fixture(scope="module")
def bert8():
    problem = runs.problem("bert-small", 8)
    return problem, runs.dcg("bert-small", 8)


def _random_assignment(dcg, seed):
    rng = np.random.default_rng(seed)
    return np.array([c[rng.integers(len(c))] for c in dcg.cap])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_dcg_latency_is_the_serial_executors(bert8, seed):
    """Dcg.latency counts what the engine's serial executor runs: copies per memory space
    (caching, residency="memory", the platform's runtime) or per edge (caching=False)."""
    problem, dcg = bert8
    a = _random_assignment(dcg, seed)
    placement = problem.placement(assignment_names(dcg, a))
    for dag, copies in ((DagOptions.for_platform(problem.platform), "memory"),
                        (DagOptions(serial=True, caching=False), "edge")):
        m = simulate(problem.platform, problem.workload, placement, engine="analytic", cost=problem.cost,
                     dag=dag).metrics
        compute, transfer = dcg.latency(a, copies)
        assert m.task_time_s["compute"] == pytest.approx(compute, rel=1e-12)
        assert m.task_time_s["transfer"] == pytest.approx(transfer, rel=1e-12)
        assert m.latency_s["mean"] == pytest.approx(compute + transfer, rel=1e-12)   # nothing overlaps
        des = simulate(problem.platform, problem.workload, placement, engine="des", cost=problem.cost,
                       dag=dag, contention=False).metrics
        assert des.latency_s["mean"] == pytest.approx(m.latency_s["mean"], rel=1e-12)
        assert des.task_time_s == pytest.approx(m.task_time_s, rel=1e-12)


def test_residency_per_memory_space_copies_a_tensor_once_per_memory(bert8):
    problem, dcg = bert8
    a = _random_assignment(dcg, 5)
    placement = problem.placement(assignment_names(dcg, a))
    args = (problem.platform, problem.workload, placement, problem.cost)
    per_ep = build_tasks(*args, serial=True, residency="ep")
    per_memory = build_tasks(*args, serial=True, residency="memory")
    copies = [t for t in per_memory.tasks if t.kind == "transfer"]
    assert copies and len(copies) <= sum(t.kind == "transfer" for t in per_ep.tasks)
    assert len({(t.name.split("->")[0], t.dst.memory) for t in copies}) == len(copies)
    assert all(t.dst.memory != problem.platform.ep(placement.ep_of[t.name.split("->")[0]].name).memory
               for t in copies)
    with pytest.raises(HetsimError, match="residency='cache'"):
        build_tasks(*args, residency="cache")


def test_overlap_moves_copies_to_a_dma_lane(bert8):
    problem, dcg = bert8
    a = _random_assignment(dcg, 6)
    placement = problem.placement(assignment_names(dcg, a))
    args = (problem.platform, problem.workload, placement, problem.cost)
    serial = build_tasks(*args, serial=True, residency="memory")
    overlap = build_tasks(*args, serial=True, residency="memory", overlap=True)
    assert set(overlap.lanes) == {"serial", DMA_LANE}
    assert all(t.lane == (DMA_LANE if t.kind == "transfer" else "serial") for t in overlap.tasks)
    s_end, o_end = list_schedule(serial)[1].max(), list_schedule(overlap)[1].max()
    times = task_time_s(serial)
    assert times["compute"] - 1e-12 <= o_end <= s_end + 1e-12 == pytest.approx(sum(times.values()))
    with pytest.raises(HetsimError, match="overlap=True .* with serial=True only"):
        build_tasks(*args, overlap=True)


# -- the cost model and the platform ---------------------------------------------------------------------
def test_pim_zynq_has_two_cpu_places_a_pim_unit_and_the_papers_runtime():
    p = load_platform("pim-zynq")
    s, cpu_p, pim = p.ep("CPU_S"), p.ep("CPU_P"), p.ep("PIM")
    assert (s.cores, cpu_p.cores, s.memory == cpu_p.memory, pim.memory != s.memory) == (1, 4, True, True)
    assert p.accelerator("PIM").kind == "pim"
    assert p.runtime.cost_model == "pim" and p.runtime.serial and p.runtime.residency == "memory"
    assert DagOptions.for_platform(p) == DagOptions(serial=True, residency="memory")


def test_capability_is_nested_and_follows_table2(bert8):
    problem, dcg = bert8
    s, p, pim = (problem.platform.ep(d) for d in ("CPU_S", "CPU_P", "PIM"))
    cost = problem.cost
    for op in problem.workload.ops:
        on = (cost.supports(op, s), cost.supports(op, p), cost.supports(op, pim))
        assert on in ((True, False, False), (True, True, False), (True, True, True)), op.name
        assert on[1] == (op.op_type in {"MatMul", "Gemm", "Add", "Sub", "Mul", "Div"})
    mm = problem.workload.op("encoder.layer.0.attention.query.MatMul")
    scores = problem.workload.op("encoder.layer.0.attention.scores.MatMul")
    assert cost.supports(mm, pim) and not cost.supports(scores, pim)
    with pytest.raises(HetsimError, match="cannot run on PIM"):
        cost.op_time(scores, pim)


def test_fig8_ratios_and_the_copy_asymmetry_come_out_of_the_cost_model():
    from hetsim_papers.pim.experiments.calibration import COPY_RATIO_ELEMENTS, FIG8, fig8_table

    plat = load_platform("pim-zynq")
    t = fig8_table(plat, ps=(8, 64)).set_index(["operator", "versus", "p"])["speedup"]
    for (operator, versus), (at8, at64) in FIG8.items():
        assert t[(operator, versus, 8)] == pytest.approx(at8, rel=1e-4)
        assert t[(operator, versus, 64)] == pytest.approx(at64, rel=1e-4)
    cost = PimCostModel(plat)
    cpu, cpu_p, pim = plat.ep("CPU_S"), plat.ep("CPU_P"), plat.ep("PIM")
    nbytes = COPY_RATIO_ELEMENTS * 4
    assert cost.transfer_time(nbytes, pim, cpu) / cost.transfer_time(nbytes, cpu, pim) == pytest.approx(1.83, rel=1e-4)
    assert cost.transfer_time(nbytes, pim, cpu) == cost.transfer_time(nbytes, pim, cpu_p)
    assert cost.transfer_time(nbytes, cpu, cpu_p) == 0.0                 # one memory: no copy
    # time linear in size (Fig. 2(b)): no setup
    assert cost.transfer_time(2 * nbytes, cpu, pim) == pytest.approx(2 * cost.transfer_time(nbytes, cpu, pim))


def test_the_platform_names_its_cost_model():
    plat = load_platform("pim-zynq")
    cost = make_cost_model(plat, workload=runs.workload("gpt2", 8))
    assert isinstance(cost, PimCostModel) and len(cost.forms) == 245
    with pytest.raises(HetsimError, match="needs the workload"):
        make_cost_model(plat)
    with pytest.raises(HetsimError, match="workload .resnet50.: the PIM cost model .* needs the Table 2 form"):
        PimCostModel.for_workload(plat, "resnet50")
    gpu = load_platform("pim-zynq", ["accelerators.PIM.kind=gpu"])
    with pytest.raises(HetsimError, match="accelerator PIM is a gpu"):
        PimCostModel(gpu).supports(runs.workload("gpt2", 8).ops[0], gpu.ep("PIM"))


@pytest.mark.parametrize(("residency", "overlap", "seed"), [("memory", True, 0), ("ep", True, 1),
                                                            ("ep", False, 2), ("memory", False, 3)])
def test_the_des_replays_the_list_schedule_with_the_new_options(bert8, residency, overlap, seed):
    from hetsim.options import RunOptions
    from hetsim.sim.dag import run_dag

    problem, dcg = bert8
    placement = problem.placement(assignment_names(dcg, _random_assignment(dcg, seed)))
    tg = build_tasks(problem.platform, problem.workload, placement, problem.cost, serial=True,
                     residency=residency, overlap=overlap)
    start, finish = list_schedule(tg)
    run = run_dag(problem.platform, tg, RunOptions.make(frames=1, contention=False).resolve(placement))
    assert run.start[0] == pytest.approx(start, rel=1e-12, abs=1e-15)
    assert run.end[0] == pytest.approx(finish, rel=1e-12, abs=1e-15)


def test_an_accelerators_precision_is_set_by_its_dtype():
    from hetsim_papers.pim.cost import pim_rate_GMACps

    fast = load_platform("pim-zynq", ["accelerators.PIM.precisions.bfloat16.peak_GMACps=19.2"])
    assert pim_rate_GMACps(fast.accelerator("PIM")) == 19.2
    with pytest.raises(HetsimError, match="no entry named 'int8'"):
        load_platform("pim-zynq", ["accelerators.PIM.precisions.int8.peak_GMACps=1"])
