"""Dask as users run it: a sweep and an exploration's seeds on an address, a distributed.Client
(left open) or a LocalCluster, the same results as in process, Dask tasks named after their cells."""

from __future__ import annotations

import pytest

from hetsim.errors import HetsimError
from hetsim.exploration import explore_seeds
from hetsim.exploration.baselines import RandomWalk
from hetsim.exploration.problem import PipelineProblem
from hetsim.exploration.termination import MaxTrials
from hetsim.sweep import run_sweep, spec_from_dict
from hetsim.sweep.engine import batch_key

distributed = pytest.importorskip("distributed")

SPEC = {"schema": 1, "name": "dask-small",
        "base": {"platform": "hikey970", "workload": "alexnet", "engine": "des", "frames": 20},
        "axes": {"mapping": ["B4:1-11", "B2:1-5|s4:6-11"], "seed": [0, 1]}}


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as c:
        yield c


def test_sweep_on_a_cluster_a_client_and_an_address(cluster):
    spec = spec_from_dict(SPEC)
    ref = run_sweep(spec, workers=1, plots=False).table
    assert run_sweep(spec, scheduler=cluster, plots=False).table.equals(ref)
    with distributed.Client(cluster) as client:
        assert run_sweep(spec, scheduler=client, plots=False).table.equals(ref)
        assert client.status == "running"                      # the caller's client stays open
        keys = client.run_on_scheduler(lambda dask_scheduler: [k for k in dask_scheduler.tasks])
    assert run_sweep(spec, scheduler=cluster.scheduler_address, plots=False).table.equals(ref)
    assert all(isinstance(k, tuple) and k[0] == "mapping cells" for k in keys), keys


def test_batch_keys_name_their_cells():
    mapping = ("abc", {"kind": "mapping", "platform": "jetson-tx2", "workload": "vgg16", "seed": 3})
    explorer = ("def", {"kind": "explorer", "algorithm": "Shisha", "label": "Shisha(heuristic=H3)",
                        "platform": "chiplet-c2", "workload": "alexnet", "seed": 0})
    assert batch_key([mapping, explorer]) == ("mapping cells", "jetson-tx2 vgg16 seed 3", "abc", 2)
    assert batch_key([explorer]) == ("Shisha(heuristic=H3) cells", "chiplet-c2 alexnet seed 0", "def", 1)
    from dask.utils import key_split

    assert key_split(batch_key([explorer])) == "Shisha(heuristic=H3) cells"   # the dashboard's group


def test_explore_seeds_wherever_they_run(cluster):
    problem = PipelineProblem("hikey970", "alexnet", depths=[2])
    args = (problem, RandomWalk(), [0, 1, 2], MaxTrials(5))
    here = [e.best_value for e in explore_seeds(*args)]
    assert [e.best_value for e in explore_seeds(*args, scheduler=cluster)] == here
    with distributed.Client(cluster) as client:
        runs = explore_seeds(*args, scheduler=client)
        assert client.status == "running"
    assert [e.seed for e in runs] == [0, 1, 2] and [e.best_value for e in runs] == here


def test_something_else_as_a_scheduler_is_one_line():
    with pytest.raises(HetsimError, match="give a Dask scheduler's address .*, a distributed.Client or a cluster"):
        run_sweep(spec_from_dict(SPEC), scheduler=42, plots=False)
