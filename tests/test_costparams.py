"""Each cost model's parameter block (platform schema 2), the version-1 migration, the one
per-core-count helper, and the roofline model's typed view of an EP (issue 8).

Fast: small platforms in memory and the shipped YAMLs; no reproduction.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from helpers import chain_workload, missing_shipped_plugins, two_cluster_platform

from hetsim.cli import cli
from hetsim.cost import ZERO, CostModel, Demand, EpRates, Gemm2CostModel, RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.evaluation import simulate
from hetsim.mapping import make_placement
from hetsim.platform import by_cores, load_platform, migrate, platform_from_dict, validate_file
from hetsim.platform.loader import v1_moves
from hetsim.platform.params import OP_KINDS, CostParams, cost_blocks
from hetsim.platform.schema import Accelerator, CoreType
from hetsim.plugins import cost_model_specs, parameter_blocks, plugins, resolve
from hetsim.workload import load_workload

DOCS = Path(__file__).resolve().parents[1] / "docs" / "platforms.md"


# -- by_cores: the one helper for "a value or a per-core-count list" ----------------------------------
@pytest.mark.parametrize("value, n, scale, expected", [
    ([1.0, 0.9, 0.8], 1, False, 1.0),
    ([1.0, 0.9, 0.8], 3, False, 0.8),
    ([1.0, 0.9, 0.8], 7, False, 0.8),       # past the end: the last entry holds
    ([5.0, 9.0], 2, True, 9.0),
    ([5.0, 9.0], 4, True, 18.0),            # past the end: last x n / len
    (2.0, 1, True, 2.0),
    (2.0, 3, True, 6.0),                    # a single rate: n x it
    (30.0, 3, False, 30.0),                 # a single fixed cost: itself
    ((1.0, 0.5), 2, False, 0.5),            # any sequence
])
def test_by_cores_vectors(value, n, scale, expected):
    assert by_cores(value, n, scale_past_end=scale) == expected


def test_by_cores_rejects_no_cores_and_an_empty_list():
    with pytest.raises(HetsimError, match="core count 0: must be at least 1"):
        by_cores([1.0], 0, scale_past_end=False)
    with pytest.raises(HetsimError, match="at least one entry"):
        by_cores([], 2, scale_past_end=True)


# -- the blocks ---------------------------------------------------------------------------------------
def _cost_model_names(cls=CostModel) -> set[str]:
    return {cls.name} | {n for sub in cls.__subclasses__() for n in _cost_model_names(sub)}


def _import_cost_models() -> None:
    """Import every installed cost model: the plugins' registered ones, and the ``cost`` module next
    to each plugin block's (a paper folder's layout), where models that only read a block live."""
    for spec in cost_model_specs().values():
        resolve(spec.factory)
    for section in ("core_types", "accelerators"):
        for ref in parameter_blocks(section).values():
            sibling = ref.partition(":")[0].rpartition(".")[0] + ".cost"
            if importlib.util.find_spec(sibling) is not None:
                importlib.import_module(sibling)


def test_blocks_are_registered_as_fields_of_their_owner():
    """hetsim's own blocks and every installed plugin's, each a field of its owner."""
    assert set(cost_blocks(CoreType)) == {"roofline", "gemm2"} | set(parameter_blocks("core_types"))
    assert set(cost_blocks(Accelerator)) == {"roofline", "gemm2"} | set(parameter_blocks("accelerators"))
    _import_cost_models()
    names = _cost_model_names()
    for owner in (CoreType, Accelerator):
        for block in cost_blocks(owner).values():
            assert issubclass(block, CostParams)
            # real cost models: the block's own always; the other readers (a paper's model reading a
            # core block) when their plugin is installed
            assert block.readers and block.readers[0] in names
            assert set(block.readers) <= names or missing_shipped_plugins(), block.readers
            # a model given no block gets the defaults it had before: every block field has one
            assert all(not f.is_required() for f in block.model_fields.values())


def _documented_blocks(owner, section: str) -> dict:
    """The blocks docs/platforms.md covers: hetsim's own and its papers' (not a third party's)."""
    theirs = {k for p in plugins() if p.distribution != "hetsim" for k in p.parameter_blocks.get(section, {})}
    return {k: b for k, b in cost_blocks(owner).items() if k not in theirs}


def test_every_block_field_is_documented():
    text = DOCS.read_text()
    assert "hardware facts at the top, each cost model's fitted parameters in its own block" in text
    for owner, section in ((CoreType, "core_types[]"), (Accelerator, "accelerators[]")):
        for name, block in _documented_blocks(owner, section[:-2]).items():
            assert f"`{section}.{name}`" in text, f"docs/platforms.md has no section for {section}.{name}"
            for field in block.model_fields:
                assert re.search(rf"\| `{field}` \|", text), f"{section}.{name}.{field} is not documented"


def test_v1_moves_land_in_the_block_models():
    owners = {"core_types": CoreType, "accelerators": Accelerator}
    for section, blocks in v1_moves().items():
        registered = cost_blocks(owners[section])
        for block, fields in blocks.items():
            assert set(fields) <= set(registered[block].model_fields), (section, block)


def test_a_missing_block_gets_the_defaults():
    p = platform_from_dict({
        "schema": 2, "name": "bare", "memories": [{"name": "m", "bandwidth_GBps": 10}],
        "core_types": [{"name": "c", "macs_per_cycle": 8, "dvfs": [{"name": "f", "freq_MHz": 1000}]}],
        "clusters": [{"name": "k", "symbol": "K", "core_type": "c", "cores": 4, "memory": "m"}],
        "accelerators": [{"name": "npu", "kind": "npu", "peak_GMACps": 100, "memory": "m"}],
    })
    t = p.core_type("c")
    assert (t.roofline.gemm_efficiency, t.roofline.parallel_efficiency, t.roofline.op_overhead_us) == (1.0, [1.0], 0.0)
    for key, block in cost_blocks(CoreType).items():     # every block, hetsim's and the plugins'
        assert getattr(t, key) == block()
    for key, block in cost_blocks(Accelerator).items():
        assert getattr(p.accelerator("npu"), key) == block()
    cost = RooflineCostModel(p)
    r = cost.ep_rates(p.ep("K4"))
    assert r.gemm_MACps == 4 * 8 * 1000e6 and r.dw_MACps == r.gemm_MACps
    assert r.bandwidth_Bps == 10e9 and r.overhead_s == 0.0 and r.gemm_overhead_s == 0.0
    assert (r.tile_rows, r.kinds, r.im2col_Bps, r.gemm_pack_Bps, dict(r.kind_Bps)) == (None, None, None, None, {})
    a = cost.ep_rates(p.ep("npu"))
    # An accelerator runs every op kind unless it lists its kinds (docs/model.md).
    assert a.gemm_MACps == 100e9 and a.overhead_s == 0.0 and a.kinds == frozenset(OP_KINDS)


def test_a_block_no_model_in_use_reads_is_data():
    """The roofline ignores the gemm2 block: changing it moves no roofline time."""
    wl = load_workload("alexnet")
    base = load_platform("hikey970")
    other = load_platform("hikey970", ["core_types.cortex-a73.gemm2.kernel_efficiency=0.05",
                                       "core_types.cortex-a73.gemm2.tile_cols=4"])
    for ep in ("B1", "B4"):
        assert (RooflineCostModel(base).layer_times(wl, base.ep(ep))
                == RooflineCostModel(other).layer_times(wl, other.ep(ep))).all()
    # ... while the gemm2 model, which reads it, moves.
    t0 = Gemm2CostModel(base).layer_times(wl, base.ep("B4")).sum()
    t1 = Gemm2CostModel(other).layer_times(wl, other.ep("B4")).sum()
    assert t1 != t0


def test_a_parameter_at_the_top_names_its_block():
    with pytest.raises(HetsimError, match=r"core_types\.0: gemm_efficiency is a parameter of the roofline "
                                          r"cost model: since schema 2 it goes in the roofline block "
                                          r"\(core_types\.denver2\.roofline\.gemm_efficiency\)"):
        load_platform("jetson-tx2", ["core_types.denver2.gemm_efficiency=0.4"])
    with pytest.raises(HetsimError, match=r"core_types\.cortex-a73\.gemm2\.kernel_efficiency"):
        load_platform("hikey970", ["core_types.cortex-a73.kernel_efficiency=0.4"])


# -- schema 1 still loads -------------------------------------------------------------------------------
V1 = {
    "schema": 1, "name": "old", "memories": [{"name": "m", "bandwidth_GBps": 20}],
    "core_types": [{"name": "c", "macs_per_cycle": 4, "gemm_efficiency": 0.5, "dw_efficiency": 0.1,
                    "parallel_efficiency": [1.0, 0.9], "gemm_tile_rows": 8, "op_overhead_us": 3.0,
                    "gemm_overhead_us": [10.0, 20.0], "gemm_pack_GBps": 4.0, "im2col_GBps": [2.0, 3.0],
                    "kind_GBps": {"lrn": 1.0},
                    "bandwidth_GBps_per_core": 6.0, "dvfs": [{"name": "f", "freq_MHz": 1000}]}],
    "clusters": [{"name": "k", "symbol": "K", "core_type": "c", "cores": 2, "memory": "m"}],
    "accelerators": [{"name": "gpu", "kind": "gpu", "peak_GMACps": 50, "efficiency": 0.4,
                      "op_overhead_us": 7.0, "memory": "m"}],
}
V2 = {
    "schema": 2, "name": "old", "memories": [{"name": "m", "bandwidth_GBps": 20}],
    "core_types": [{"name": "c", "macs_per_cycle": 4, "bandwidth_GBps_per_core": 6.0,
                    "dvfs": [{"name": "f", "freq_MHz": 1000}],
                    "roofline": {"gemm_efficiency": 0.5, "dw_efficiency": 0.1, "parallel_efficiency": [1.0, 0.9],
                                 "gemm_tile_rows": 8, "op_overhead_us": 3.0, "gemm_overhead_us": [10.0, 20.0],
                                 "gemm_pack_GBps": 4.0, "im2col_GBps": [2.0, 3.0], "kind_GBps": {"lrn": 1.0}}}],
    "clusters": [{"name": "k", "symbol": "K", "core_type": "c", "cores": 2, "memory": "m"}],
    "accelerators": [{"name": "gpu", "kind": "gpu", "peak_GMACps": 50, "memory": "m",
                      "roofline": {"efficiency": 0.4, "op_overhead_us": 7.0}}],
}


def test_migrate_moves_every_v1_field_into_its_block():
    data = yaml.safe_load(yaml.safe_dump(V1))
    note = migrate(data)
    assert data == V2
    assert note == ("schema 1, migrated to 2 on load: 11 cost-model parameters moved into their blocks "
                    "(roofline)")
    assert migrate(data) is None                      # a current dict is left alone
    assert platform_from_dict(V1) == platform_from_dict(V2)
    assert V1["schema"] == 1 and "gemm_efficiency" in V1["core_types"][0]   # the caller's dict is not touched


def test_a_v1_file_validates_loads_and_takes_v2_overrides(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(V1))
    notes: list[str] = []
    assert validate_file(path, notes) == []
    assert notes == ["schema 1, migrated to 2 on load: 11 cost-model parameters moved into their blocks "
                     "(roofline)"]
    p = load_platform(str(path), ["core_types.c.roofline.gemm_efficiency=0.25"])
    assert p.core_type("c").roofline.gemm_efficiency == 0.25
    assert p.accelerator("gpu").roofline.efficiency == 0.4
    result = CliRunner().invoke(cli, ["platforms", "validate", str(path)])
    assert result.exit_code == 0
    assert result.output == f"{path}: ok (schema 1, migrated to 2 on load: 11 cost-model parameters moved " \
                            f"into their blocks (roofline))\n"
    # a version-2 file says ok and nothing more
    v2 = tmp_path / "new.yaml"
    v2.write_text(yaml.safe_dump(V2))
    assert CliRunner().invoke(cli, ["platforms", "validate", str(v2)]).output == f"{v2}: ok\n"


def test_a_v1_error_is_reported_at_its_v2_path(tmp_path):
    bad = yaml.safe_load(yaml.safe_dump(V1))
    bad["core_types"][0]["gemm_efficiency"] = 1.5
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    assert validate_file(path) == [f"{path}: core_types.0.roofline.gemm_efficiency: must be a number in "
                                   f"[1e-06, 1] (got 1.5)"]


# -- RooflineCostModel.ep_rates and gather_demand ------------------------------------------------------
def test_ep_rates_of_hikey970_b4_and_s1():
    p = load_platform("hikey970")
    cost = RooflineCostModel(p)
    b4 = cost.ep_rates(p.ep("B4"))
    assert isinstance(b4, EpRates)
    assert b4.gemm_MACps == pytest.approx(4 * 8 * 2.4e9 * 0.156, rel=1e-15)
    assert b4.gemm_MACps_per_core == pytest.approx(8 * 2.4e9 * 0.156, rel=1e-15)
    assert b4.dw_MACps == pytest.approx(4 * 8 * 2.4e9 * 0.04, rel=1e-15)
    assert b4.bandwidth_Bps == 24e9                    # 4 x 6 GB/s per core, under the DRAM's 29.9
    assert (b4.overhead_s, b4.gemm_overhead_s, b4.tile_rows, b4.kinds) == (0.0, 0.0, 8, None)
    s1_low = cost.ep_rates(p.ep("s1"), {"little": "low"})
    assert s1_low.gemm_MACps == pytest.approx(2 * 900e6 * 0.372, rel=1e-15)
    assert s1_low.bandwidth_Bps == 3e9
    with pytest.raises(AttributeError):
        b4.bandwidth_Bps = 1.0                          # frozen


def test_ep_rates_combine_the_per_core_count_fields():
    p = platform_from_dict(V2)
    cost = RooflineCostModel(p)
    for n in (1, 2):
        r = cost.ep_rates(p.ep(f"K{n}"))
        bw = min(n * 6.0, 20.0) * 1e9
        assert r.gemm_MACps == pytest.approx(n * 4 * 1e9 * 0.5 * (1.0, 0.9)[n - 1], rel=1e-15)
        assert r.bandwidth_Bps == bw
        assert r.overhead_s == pytest.approx(3e-6) and r.gemm_overhead_s == pytest.approx((10e-6, 20e-6)[n - 1])
        assert r.im2col_Bps == min((2e9, 3e9)[n - 1], bw)
        assert r.gemm_pack_Bps == min(n * 4e9, bw)
        assert r.kind_Bps["lrn"] == min(n * 1e9, bw)
    g = cost.ep_rates(p.ep("gpu"))
    assert (g.gemm_MACps, g.overhead_s, g.bandwidth_Bps) == (50e9 * 0.4, pytest.approx(7e-6), 20e9)


def test_gather_demand_reads_and_writes_the_output_once():
    p = two_cluster_platform()
    wl = chain_workload([16, 16])
    cost = RooflineCostModel(p)
    op = wl.op("conv1")
    for ep in (p.ep("B4"), p.ep("s2")):
        nbytes = 2.0 * op.output_bytes
        assert cost.gather_demand(op, ep) == Demand(0.0, nbytes / cost.ep_rates(ep).bandwidth_Bps, nbytes)
    assert CostModel.gather_demand(cost, op, p.ep("B4")) == ZERO        # the base class: free
    # In a split placement the gather sits on the critical path: latency grows by exactly its time.

    class FreeGather(RooflineCostModel):
        def gather_demand(self, op, ep, state=None):
            return ZERO

    placement = make_placement({}, p, wl, default="B4", splits={"conv1": {"B4": 0.5, "s4": 0.5}})
    charged = simulate(p, wl, placement, cost=RooflineCostModel(p), engine="analytic").metrics
    free = simulate(p, wl, placement, cost=FreeGather(p), engine="analytic").metrics
    gather = cost.gather_demand(op, p.ep("B4")).time_s
    assert gather > 0
    assert charged.latency_s["mean"] - free.latency_s["mean"] == pytest.approx(gather, rel=1e-9)


def test_platforms_show_prints_ep_rates():
    result = CliRunner().invoke(cli, ["platforms", "show", "hikey970"])
    assert result.exit_code == 0, result.output
    rows = {cells[0]: cells for line in result.output.splitlines()
            if len(cells := [c.strip() for c in line.strip("│ ").split("│")]) == 11}
    assert rows["B4"][7] == f"{4 * 8 * 2.4:.2f}" == "76.80"                 # peak
    assert rows["B4"][8] == f"{4 * 8 * 2.4 * 0.156:.2f}" == "11.98"   # effective: peak x gemm_efficiency
    assert rows["B4"][10] == "24" and rows["s1"][10] == "3"
    assert "effective = what the roofline cost model uses" in result.output   # rates labelled as such
