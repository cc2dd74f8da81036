"""Shisha's verification vectors of the scorecard as unit tests (moved from tests/test_vectors.py)."""

from __future__ import annotations

import pytest

from hetsim.workload import load_workload
from hetsim_papers.shisha.shisha import seed_split


def _weights(name: str) -> list[float]:
    return load_workload(name).layer_weights().tolist()


# -- Shisha (Paper II): Algorithm 1's seeds, the digest's worked examples (§5.3, §9) -------------------
@pytest.mark.parametrize("net, n, seed", [
    ("synth1", 2, (4, 3)), ("synth1", 3, (4, 1, 2)), ("synth1", 4, (2, 2, 1, 2)),
    ("synth2", 2, (7, 8)), ("synth2", 3, (7, 7, 1)), ("synth2", 4, (4, 3, 7, 1)),
    ("synth3", 3, (6, 4, 3)), ("synth3", 5, (4, 2, 1, 3, 3))])
def test_shisha_seeds(net, n, seed):
    assert seed_split(_weights(net), n) == seed
