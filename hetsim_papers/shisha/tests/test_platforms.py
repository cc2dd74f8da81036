"""Shisha's chiplet platforms (hetsim_papers/shisha/platforms): Tables 1 and 3, their generator, routes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hetsim.platform import load_platform

PLATFORMS = Path(__file__).resolve().parents[1] / "platforms"


# -- chiplets (Shisha) ---------------------------------------------------------------------------

# Shisha Table 3 (FEPs, SEPs as count x cores) and Table 1 (FEP 40 GB/s, SEP 20 GB/s), written out
# here independently of hetsim_papers/shisha/platforms/make_chiplets.py.
TABLE_3 = {
    "chiplet-c1": ((1, 8), (1, 8)),
    "chiplet-c2": ((2, 8), (2, 8)),
    "chiplet-c3": ((4, 4), (2, 8)),
    "chiplet-c4": ((2, 8), (4, 4)),
    "chiplet-c5": ((4, 4), (4, 4)),
}


@pytest.mark.parametrize("name", sorted(TABLE_3))
def test_chiplet_configurations_follow_tables_1_and_3(name):
    (nf, cf), (ns, cs) = TABLE_3[name]
    p = load_platform(name)
    eps = p.eps()
    assert len(eps) == nf + ns == {"chiplet-c1": 2, "chiplet-c2": 4, "chiplet-c3": 6,
                                   "chiplet-c4": 6, "chiplet-c5": 8}[name]
    assert [e.name for e in eps] == [f"FEP{i}" for i in range(nf)] + [f"SEP{i}" for i in range(ns)]
    for e in eps:
        c = p.cluster(e.cluster)
        fast = e.name.startswith("FEP")
        assert e.cores == c.cores == (cf if fast else cs)
        assert c.core_type == ("big" if fast else "little")
        assert p.memory(e.memory).bandwidth_GBps == (40 if fast else 20)
    assert len({e.memory for e in eps}) == len(eps)  # every chiplet has its own memory
    (nop,) = p.links
    assert nop.name == "nop" and sorted(nop.connects) == sorted(e.name for e in eps)
    # FEP cores are 2x Little per cycle at 2x the clock (digest 2.2 / 8.15: a 3-4x per-core gap).
    big = p.core_type("big")
    little = p.core_type("little")
    ratio = (big.macs_per_cycle * big.level(None).freq_MHz * big.roofline.gemm_efficiency) / (
        little.macs_per_cycle * little.level(None).freq_MHz * little.roofline.gemm_efficiency)
    assert 3 <= ratio <= 4


def _make_chiplets():
    spec = importlib.util.spec_from_file_location("make_chiplets", PLATFORMS / "make_chiplets.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_chiplet_files_are_reproduced_byte_for_byte_by_the_generator(tmp_path):
    gen = _make_chiplets()
    assert gen.main(["--dir", str(tmp_path)]) == 0
    for conf in gen.CONFIGS:
        name = f"chiplet-{conf}.yaml"
        assert (tmp_path / name).read_bytes() == (PLATFORMS / name).read_bytes(), (
            f"{name} is stale: run .venv/bin/python hetsim_papers/shisha/platforms/make_chiplets.py")
    assert gen.main(["--check"]) == 0


def test_the_nop_joins_every_chiplet():
    c = load_platform("chiplet-c2")
    assert c.route(c.ep("FEP0"), c.ep("SEP1")).links == ("nop",)
    assert c.route(c.ep("FEP0"), c.ep("FEP0")).time_s(1e9) == 0
    c5 = load_platform("chiplet-c5", overrides=["links.nop.latency_ns=1e6"])
    assert c5.route(c5.ep("FEP0"), c5.ep("SEP1")).latency_s == pytest.approx(1e-3)


@pytest.mark.parametrize("name", ["chiplet-c1", "chiplet-c5"])
def test_chiplets_are_plausible(name):
    """(moved from tests/test_platform_ux.py) no value of the chiplets looks like a unit mistake."""
    from hetsim.platform.plausibility import plausibility_warnings

    assert plausibility_warnings(load_platform(name)) == []
