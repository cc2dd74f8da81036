"""Pipe-it in hetsim's spaces: its design space (Big stages first, every core used: eq. 1) lies
inside hetsim's space of core groups, and its Algorithm 3 as an explorer gives the reproduction's
designs (Tables V and VI)."""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.exploration import PipelineProblem, explore, make_explorer
from hetsim_papers.pipeit.pipeit import all_configurations, n_pipelines


def test_pipeits_space_lies_inside_the_core_groups():
    p = PipelineProblem("hikey970", "synthnet", assignment="cores", depths=[2, 3, 4])
    pipeit = [tuple(f"{c}{n}" for c, n in cfg) for cfg in all_configurations(4, 4)]
    assert len(pipeit) == sum(n_pipelines(k, 4, 4) for k in range(2, 9)) == 64
    assert all(p.fits(o) for o in pipeit)


@pytest.mark.slow
def test_pipeit_explorer_makes_the_reproductions_designs():
    """Algorithm 3 as an explorer gives the Pipe-it reproduction's designs (Tables V and VI) on the
    calibrated board, from the measured and the predicted T, in one trial each."""
    from hetsim_papers.pipeit.experiments.runs import setup

    s = setup()
    for n, w in s.workloads.items():
        p = PipelineProblem(s.platform, w, s.truth, assignment="cores", depths=range(1, 9))
        for kind, prediction in (("measured", "measured"), ("predicted", s.predictor)):
            r = explore(p, make_explorer("Pipe-it", prediction=prediction), seed=0)
            assert r.best_mapping == str(s.designs[(n, kind)].pipeline), (n, kind)
            assert r.n_trials == 1
            profiled = r.info.get("database_charges", [])
            assert bool(profiled) == (kind == "measured")   # a measured T is profiled on the clock
            if profiled:
                T = sum(float(np.sum(s.truth.layer_times(w, s.platform.ep(f"{c}{k}"))))
                        for c in "Bs" for k in range(1, 5))
                assert profiled[0]["cost_s"] == pytest.approx(T, rel=1e-12)
