"""docs/explorers.md cannot go stale: its parameter tables are the registry's, every registered
algorithm has a row in the guide, and the measured table covers every pipeline algorithm."""

from __future__ import annotations

import re
from pathlib import Path

from hetsim.exploration.guide import MEASURED, PARAMETERS, parameters_markdown, section
from hetsim.exploration.registry import algorithms

DOC = Path(__file__).parents[1] / "docs" / "explorers.md"


def test_parameter_tables_are_generated_from_the_registry():
    assert section(DOC.read_text(), PARAMETERS) == parameters_markdown(), (
        "docs/explorers.md is stale: run python -m hetsim.exploration.guide docs/explorers.md")


def test_every_registered_algorithm_is_in_the_guide():
    text = DOC.read_text()
    guide = text[text.index("## What each algorithm assumes"):text.index("## Parameters")]
    named = set(re.findall(r"`([^`]+)`", guide))
    missing = [a.name for a in algorithms() if a.name not in named]
    assert not missing, f"docs/explorers.md: add a row for {missing} to 'What each algorithm assumes'"


def test_the_measured_table_covers_every_pipeline_algorithm():
    table = section(DOC.read_text(), MEASURED)
    header = table.splitlines()[0]
    missing = [a.name for a in algorithms("pipeline") if f"`{a.name}`" not in header]
    assert not missing, f"rerun python benchmarks/explorer_guide.py (missing {missing})"
    rows = [ln for ln in table.splitlines()[2:] if ln.startswith("|")]
    # A cell per algorithm: a quality in %, or "–" where it refuses the space (Pipe-it on whole EPs).
    assert len(rows) >= 6 and all(ln.count("%") + ln.count("| –") == header.count("`") // 2 for ln in rows)
