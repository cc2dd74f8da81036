"""Pipe-it's verification vectors of the scorecard as unit tests (moved from tests/test_vectors.py)."""

from __future__ import annotations

from hetsim_papers.pipeit.pipeit import n_design_points, n_pipelines


# -- Pipe-it: eqs. 1-2 ----------------------------------------------------------------------------------
def test_pipeit_design_space_counts():
    counts = [n_pipelines(p, 4, 4) for p in range(2, 9)]
    assert sum(counts) == 64                                                     # paper §IV-B
    assert counts == [1, 6, 15, 20, 15, 6, 1]                                    # digest 5.4
    assert sum(n_pipelines(p, 3, 2) for p in range(2, 6)) == 8                   # digest-derived
    assert n_design_points(28, 4, 4) == 4_272_048                                # eq. 2 as printed, W = 28
    assert n_design_points(29, 4, 4) == 5_379_616                                # the paper's number is W = 29
