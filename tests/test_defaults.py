"""The default explorer by platform class (hetsim/exploration/defaults.py): the classes of the
shipped platforms, the choice read from the measured table (with and without the papers' plugins),
the note that states it, and docs/explorers.md's table generated from the same file."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from hetsim.exploration.defaults import (
    CLASSES,
    CORE_ALGORITHMS,
    TABLE,
    class_default,
    defaults_markdown,
    platform_class,
    scores,
)
from hetsim.exploration.guide import section
from hetsim.exploration.registry import algorithms
from hetsim.exploration.spec import ExplorationSpec, build
from hetsim.platform import list_platforms, load_platform

PHONE = str(Path(__file__).resolve().parent / "data" / "phone-soc.yaml")
DOC = Path(__file__).resolve().parents[1] / "docs" / "explorers.md"


@pytest.mark.parametrize("name, cls", [
    ("hikey970", "big.LITTLE"), ("jetson-tx2", "big.LITTLE"), ("rk3399", "big.LITTLE"),
    ("rk3588", "accelerator SoC"), (PHONE, "accelerator SoC"), ("knl", "chiplets"),
    ("chiplet-c2", "chiplets"), ("pim-zynq", "PIM"), ("xavier-nx-x8", "multi-board"),
])
def test_platform_classes(name, cls):
    if not name.endswith(".yaml") and name not in list_platforms():
        pytest.skip(f"{name} comes with a plugin that is not installed")
    assert platform_class(load_platform(name))[0] == cls


def test_the_table_covers_every_class_it_names_with_answers():
    with TABLE.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["class"] for r in rows} <= set(CLASSES)
    for cls, table in scores().items():
        assert table == sorted(table, key=lambda s: (-s.quality, s.wall_s, s.algorithm, s.space))
        # the best of a class answers well (multi-board: NSGA-II's seeds spread, 0.88 on average)
        assert table[0].quality > 0.85, cls
        assert all(0 <= s.quality <= 1 + 1e-9 for s in table)


def test_hetsim_alone_has_a_default_for_every_class_of_pipelines():
    core = set(CORE_ALGORITHMS)
    for cls, table in scores().items():
        if not any(s.kind == "pipeline" and s.quality > 0 for s in table):
            continue                                          # PIM: placements only
        choice = class_default(_platform_of(cls), core)
        assert choice is not None and choice.algorithm in core, cls
        best = max(s.quality for s in table if s.algorithm in core and s.kind == "pipeline")
        assert choice.choice.quality >= best - 0.01


#: A shipped core platform of each class (a multi-board platform comes with a plugin: a stub of its
#: shape, two boards, stands in).
SAMPLE = {"big.LITTLE": "hikey970", "accelerator SoC": "rk3588", "chiplets": "knl"}


class _Boards:
    name, accelerators, clusters = "boards", [], []
    devices = [type("Device", (), {"name": n})() for n in ("a", "b")]


def _platform_of(cls: str):
    return load_platform(SAMPLE[cls]) if cls in SAMPLE else _Boards()


def test_explore_states_the_class_default_and_uses_it():
    setup = build(ExplorationSpec.make(platform="rk3588", workload="resnet18-onnx"))
    installed = {a.name for a in algorithms("pipeline")}
    choice = class_default(load_platform("rk3588"), installed)
    assert setup.algorithm == choice.algorithm
    note = next(n for n in setup.notes if "accelerator SoC" in n)
    assert choice.algorithm in note and "explorer_defaults.csv" in note
    assert "algorithm and problem.assignment choose others" in note       # the spec's names (CLI: flags)
    # a space given, or an algorithm given: the class does not choose
    assert build(ExplorationSpec.make(platform="rk3588", workload="resnet18-onnx", algorithm="ES")).algorithm == "ES"


def test_the_docs_table_is_the_measured_one():
    assert section(DOC.read_text(), "defaults") == defaults_markdown()
