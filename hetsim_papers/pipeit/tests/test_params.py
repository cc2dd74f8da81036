"""Pipe-it's parameter block ``core_types[].pipeit`` in the platform schema: its defaults, the ground
truth that reads it, where a misplaced field is sent, and the schema-1 fields it takes over. Moved
from tests/test_costparams.py, which tests hetsim's own blocks."""

from __future__ import annotations

import pytest
import yaml

from hetsim.cost import RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.platform import load_platform, migrate, platform_from_dict
from hetsim.workload import load_workload
from hetsim_papers.pipeit.cost import PipeitGroundTruth


def test_a_missing_pipeit_block_gets_the_defaults():
    p = platform_from_dict({
        "schema": 2, "name": "bare", "memories": [{"name": "m", "bandwidth_GBps": 10}],
        "core_types": [{"name": "c", "macs_per_cycle": 8, "dvfs": [{"name": "f", "freq_MHz": 1000}]}],
        "clusters": [{"name": "k", "symbol": "K", "core_type": "c", "cores": 4, "memory": "m"}],
    })
    t = p.core_type("c")
    assert (t.pipeit.gemm_tile_cols, t.pipeit.gemv_GBps_per_core) == (None, None)


def test_the_pipeit_block_is_data_to_the_roofline():
    """The roofline ignores the pipeit block: changing it moves no roofline time."""
    wl = load_workload("alexnet")
    base = load_platform("hikey970")
    other = load_platform("hikey970", ["core_types.cortex-a73.pipeit.gemv_GBps_per_core=5.0",
                                       "core_types.cortex-a73.pipeit.gemm_tile_cols=4"])
    for ep in ("B1", "B4"):
        assert (RooflineCostModel(base).layer_times(wl, base.ep(ep))
                == RooflineCostModel(other).layer_times(wl, other.ep(ep))).all()
    # ... while the Pipe-it ground truth, which reads it, moves.
    t0 = PipeitGroundTruth(base).layer_times(wl, base.ep("B4")).sum()
    t1 = PipeitGroundTruth(other).layer_times(wl, other.ep("B4")).sum()
    assert t1 != t0


def test_a_pipeit_parameter_at_the_top_names_its_block():
    with pytest.raises(HetsimError, match=r"core_types\.cortex-a73\.pipeit\.gemv_GBps_per_core"):
        load_platform("hikey970", ["core_types.cortex-a73.gemv_GBps_per_core=0.4"])


def test_schema_1_fields_move_into_the_pipeit_block():
    v1 = {"schema": 1, "name": "old", "memories": [{"name": "m", "bandwidth_GBps": 20}],
          "core_types": [{"name": "c", "macs_per_cycle": 4, "gemm_efficiency": 0.5, "gemm_tile_cols": 12,
                          "gemv_GBps_per_core": 0.5, "dvfs": [{"name": "f", "freq_MHz": 1000}]}],
          "clusters": [{"name": "k", "symbol": "K", "core_type": "c", "cores": 2, "memory": "m"}]}
    data = yaml.safe_load(yaml.safe_dump(v1))
    note = migrate(data)
    assert data["core_types"][0]["pipeit"] == {"gemm_tile_cols": 12, "gemv_GBps_per_core": 0.5}
    assert data["core_types"][0]["roofline"] == {"gemm_efficiency": 0.5}
    assert note == "schema 1, migrated to 2 on load: 3 cost-model parameters moved into their blocks (pipeit, roofline)"
    assert platform_from_dict(v1).core_type("c").pipeit.gemm_tile_cols == 12
