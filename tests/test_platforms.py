"""The shipped platform files (platforms/*.yaml) and the platform loader's error reporting.

Fast: loads YAML and checks numbers against the papers' tables; no simulation.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml

from hetsim.errors import HetsimError
from hetsim.platform import by_cores, json_schema, list_platforms, load_platform, validate_file

ROOT = Path(__file__).resolve().parents[1]
PLATFORMS = ROOT / "platforms"
MALFORMED = Path(__file__).resolve().parent / "malformed" / "platforms"

SHIPPED = sorted(p.stem for p in PLATFORMS.glob("*.yaml"))
EXPECTED = {"hikey970", "jetson-tx2", "knl", "rk3399", "rk3588"}


def _peak_gmacps(platform, ep_name: str, level: str | None = None) -> float:
    """Peak FP32 GEMM rate of an EP (no efficiency), GMAC/s."""
    ep = platform.ep(ep_name)
    c = platform.cluster(ep.cluster)
    t = platform.core_type(c.core_type)
    return ep.cores * t.macs_per_cycle * t.level(level or c.dvfs).freq_MHz / 1e3


def _effective_gmacps(platform, ep_name: str, level: str | None = None) -> float:
    ep = platform.ep(ep_name)
    t = platform.core_type(platform.cluster(ep.cluster).core_type)
    return (_peak_gmacps(platform, ep_name, level) * t.roofline.gemm_efficiency
            * by_cores(t.roofline.parallel_efficiency, ep.cores, scale_past_end=False))


# -- every shipped file ----------------------------------------------------------------------


def test_the_expected_platforms_ship():
    assert EXPECTED <= set(SHIPPED)
    assert EXPECTED <= set(list_platforms())


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_platform_loads_and_validates(name):
    p = load_platform(name)
    assert p.name == name  # the file name is the platform's name
    assert p.eps()
    assert validate_file(PLATFORMS / f"{name}.yaml") == []


_NUMERIC_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
_TEXT_KEYS = {"schema", "name", "description", "sources", "kind"}


def _number_lines(node, out: set[int]) -> set[int]:
    """0-based lines of every numeric scalar in a composed YAML node (prose keys skipped)."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value not in _TEXT_KEYS:
                _number_lines(value, out)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _number_lines(item, out)
    elif node.tag in _NUMERIC_TAGS:
        out.add(node.start_mark.line)
    return out


@pytest.mark.parametrize("name", SHIPPED)
def test_every_number_has_a_source_comment(name):
    """Each line that sets a number carries a comment, or sits right under a comment block that
    explains it (the derivations are several lines long)."""
    text = (PLATFORMS / f"{name}.yaml").read_text()
    lines = text.splitlines()
    bare = []
    for i in sorted(_number_lines(yaml.compose(text), set())):
        if "#" in lines[i]:
            continue
        prev = next((x for x in reversed(lines[:i]) if x.strip()), "")
        if not prev.lstrip().startswith("#"):
            bare.append(f"{name}.yaml:{i + 1}: {lines[i].strip()}")
    assert not bare, "numbers without a source comment:\n" + "\n".join(bare)


def test_json_schema_export_is_valid_json_with_dollar_schema():
    schema = json.loads(json_schema())
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert "schema" in schema["required"]  # the alias, as written in the YAML
    assert {"memories", "core_types", "clusters", "links", "dvfs_presets"} <= set(schema["properties"])


# -- hikey970 (Pipe-it) ------------------------------------------------------------------------


def test_hikey970_eps_and_numbers():
    p = load_platform("hikey970")
    assert [e.name for e in p.eps()] == ["B1", "B2", "B3", "B4", "s1", "s2", "s3", "s4"]
    big, little = p.cluster("big"), p.cluster("little")
    assert (big.cores, big.l2_KiB, little.cores, little.l2_KiB) == (4, 2048, 4, 1024)
    # Peak from digest B.1: A73 8 MAC/cycle at 2.4 GHz, A53 2 MAC/cycle at 1.8 GHz.
    assert _peak_gmacps(p, "B4") == pytest.approx(76.8)
    assert _peak_gmacps(p, "s4") == pytest.approx(14.4)
    # Effective rates land inside Table IV's whole-network range of the conv-dominated CNNs.
    assert 10.79 <= _effective_gmacps(p, "B4") <= 12.78
    assert 5.22 <= _effective_gmacps(p, "s4") <= 5.65
    # Pipe-it eq. 10: s2 ~ B1 and s4 ~ B2 (within 15%).
    assert _effective_gmacps(p, "s2") == pytest.approx(_effective_gmacps(p, "B1"), rel=0.15)
    assert _effective_gmacps(p, "s4") == pytest.approx(_effective_gmacps(p, "B2"), rel=0.15)
    for t in p.core_types:
        assert t.roofline.gemm_tile_rows == 8


def test_hikey970_power_matches_table_viii_ranges():
    p = load_platform("hikey970")
    assert p.has_power_model
    a73 = p.core_type("cortex-a73").level("max")
    a53 = p.core_type("cortex-a53").level("max")
    assert 3.8 <= 4 * a73.active_W_per_core <= 4.9  # Big-only active power, Table VIII
    assert 0.7 <= 4 * a53.active_W_per_core <= 1.3  # Small-only active power
    for t in p.core_types:  # lower levels draw less
        watts = [lv.active_W_per_core for lv in sorted(t.dvfs, key=lambda lv: lv.freq_MHz)]
        assert watts == sorted(watts)


# -- jetson-tx2 (Pipe-search) ---------------------------------------------------------------------


def test_jetson_tx2_has_the_four_governors_of_table_1():
    p = load_platform("jetson-tx2")
    assert [e.name for e in p.eps()] == ["D1", "D2", "A1", "A2", "A3", "A4"]
    assert p.dvfs_presets == {
        "governor1": {"a57": "performance", "denver": "performance"},
        "governor2": {"a57": "performance", "denver": "powersave"},
        "governor3": {"a57": "powersave", "denver": "performance"},
        "governor4": {"a57": "powersave", "denver": "powersave"},
    }
    for t in p.core_types:
        assert t.level("performance").freq_MHz == pytest.approx(2035.2)
        assert t.level("powersave").freq_MHz == pytest.approx(345.6)
    assert p.memory("lpddr4").bandwidth_GBps == pytest.approx(59.7)


def test_jetson_tx2_governor3_preset_sets_cluster_levels():
    p = load_platform("jetson-tx2", dvfs="governor3")
    assert p.cluster("denver").dvfs == "performance"
    assert p.cluster("a57").dvfs == "powersave"
    p = load_platform("jetson-tx2", dvfs="denver=powersave")
    assert p.cluster("denver").dvfs == "powersave"
    with pytest.raises(HetsimError, match="no such preset"):
        load_platform("jetson-tx2", dvfs="governor9")


# -- knl (Shisha's motivation) -------------------------------------------------------------------


def test_knl_covers_figure_2_thread_grid():
    p = load_platform("knl")
    for m in (16, 32, 64, 128):
        assert p.ep(f"M{m}").memory == "mcdram"
    for d in (2, 4, 8, 16):
        assert p.ep(f"D{d}").memory == "ddr"
    assert sum(c.cores for c in p.clusters) == 68 * 4  # hardware threads
    mcdram, ddr = p.memory("mcdram"), p.memory("ddr")
    assert mcdram.bandwidth_GBps == pytest.approx(4 * ddr.bandwidth_GBps)  # the paper's 4x
    assert (mcdram.capacity_GiB, ddr.capacity_GiB) == (16, 90)
    # The [15-16] split of Fig. 2 fits: 15 GB in MCDRAM, 16 GB in DDR.
    assert 15 <= mcdram.capacity_GiB and 16 <= ddr.capacity_GiB


# -- overrides -----------------------------------------------------------------------------------


def test_override_changes_the_cci_route_latency():
    base = load_platform("hikey970")
    assert base.route(base.ep("B4"), base.ep("s1")).latency_s == pytest.approx(200e-9)
    p = load_platform("hikey970", overrides=["links.cci.latency_ns=1e6"])
    r = p.route(p.ep("B4"), p.ep("s1"))
    assert r.latency_s == pytest.approx(1e-3)
    assert r.time_s(30e6) == pytest.approx(1e-3 + 30e6 / 15e9)
    # The cached file is not mutated by an override.
    assert load_platform("hikey970").links[0].latency_ns == 200


def test_override_of_a_memory_and_of_cores():
    p = load_platform("hikey970", overrides=["memories.dram.bandwidth_GBps=15", "clusters.big.cores=3"])
    assert p.memory("dram").bandwidth_GBps == 15
    assert [e.name for e in p.eps()][:3] == ["B1", "B2", "B3"] and len(p.eps()) == 7  # Table VII style


@pytest.mark.parametrize("override, fragment", [
    ("links.nope.latency_ns=1", "no entry named 'nope'"),
    ("links.cci.latency_ns", "expected key.path=value"),
    ("links.cci.latencyns=3", "links.cci.latencyns: unknown key (did you mean 'latency_ns'?)"),
    ("links.cci.latency_ns.x=1", "links.cci.latency_ns is a value, not a section"),
    ("links.cci=3", "cannot replace a whole list entry"),
    ("links.cci.latency_ns=-1", "must be a number in [0, 1e+12] ns (got -1)"),
])
def test_bad_override_is_one_line_hetsim_error(override, fragment):
    with pytest.raises(HetsimError) as info:
        load_platform("hikey970", overrides=[override])
    msg = str(info.value)
    assert fragment in msg
    assert "\n" not in msg


# -- routes --------------------------------------------------------------------------------------


def test_routes():
    h = load_platform("hikey970")
    r = h.route(h.ep("B4"), h.ep("s2"))
    assert r.links == ("cci",)
    assert r.latency_s > 0 and math.isfinite(r.bandwidth_Bps)
    assert h.route(h.ep("B3"), h.ep("B1")).links == ()  # same cluster: free
    assert h.route(h.ep("B3"), h.ep("B1")).time_s(1e9) == 0
    t = load_platform("jetson-tx2")
    assert t.route(t.ep("D2"), t.ep("A4")).links == ("ccplex",)
    k = load_platform("knl")
    assert k.route(k.ep("M64"), k.ep("D8")).links == ("mesh",)


def test_unknown_ep_is_one_line_error():
    p = load_platform("hikey970")
    with pytest.raises(HetsimError, match="cluster big has 4 cores, asked for 5"):
        p.ep("B5")
    with pytest.raises(HetsimError, match="allowed: big, B1..B4, little, s1..s4"):
        p.ep("X2")


# -- malformed corpus ------------------------------------------------------------------------------

MALFORMED_FILES = sorted(MALFORMED.glob("*.yaml"))


def _header(path: Path) -> tuple[str, str]:
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# expect: ") and lines[1].startswith("# path: "), path
    return lines[0][len("# expect: "):].strip(), lines[1][len("# path: "):].strip()


def test_malformed_corpus_is_big_enough():
    assert len(MALFORMED_FILES) >= 12
    assert all(re.match(r"^\d\d_[a-z0-9_]+\.yaml$", f.name) for f in MALFORMED_FILES)


@pytest.mark.parametrize("path", MALFORMED_FILES, ids=lambda p: p.stem)
def test_malformed_platform_gives_one_line_error_naming_file(path):
    expect, _ = _header(path)
    with pytest.raises(HetsimError) as info:
        load_platform(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert expect in msg
    assert str(path) in msg


@pytest.mark.parametrize("path", MALFORMED_FILES, ids=lambda p: p.stem)
def test_malformed_platform_validate_file_lists_errors_with_field_path(path):
    expect, field_path = _header(path)
    lines = validate_file(path)
    assert lines
    assert all(line.startswith(f"{path}: ") and "\n" not in line for line in lines)
    assert expect in lines[0]
    if field_path != "-":  # "-": a whole-file error (not a mapping, no places) has no field
        assert field_path in lines[0]
