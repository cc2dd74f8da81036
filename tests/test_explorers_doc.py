"""docs/explorers.md cannot go stale: its parameter tables are the registry's, every registered
algorithm has a row in the guide, and the measured table covers every pipeline algorithm. The page
covers hetsim's own plugins (hetsim.exploration.guide.documented), not a third party's; with every
paper installed its tables are exactly the regeneration (hetsim_papers/tests/test_docs.py)."""

from __future__ import annotations

import re
from pathlib import Path

from hetsim.exploration.guide import MEASURED, PARAMETERS, documented, parameters_markdown, section

DOC = Path(__file__).parents[1] / "docs" / "explorers.md"


def test_parameter_tables_are_generated_from_the_registry():
    """Every installed algorithm's generated row is in the page, as it is generated today."""
    page = section(DOC.read_text(), PARAMETERS).splitlines()
    rows = [ln for ln in parameters_markdown().splitlines() if ln.startswith("| `")]
    stale = [ln.split("|")[1].strip() for ln in rows if ln not in page]
    assert rows and not stale, (f"docs/explorers.md is stale for {stale}: run python -m hetsim.exploration.guide "
                                "docs/explorers.md")


def test_every_registered_algorithm_is_in_the_guide():
    text = DOC.read_text()
    guide = text[text.index("## What each algorithm assumes"):text.index("## Parameters")]
    named = set(re.findall(r"`([^`]+)`", guide))
    missing = [a.name for a in documented() if a.name not in named]
    assert not missing, f"docs/explorers.md: add a row for {missing} to 'What each algorithm assumes'"


def test_the_measured_table_covers_every_pipeline_algorithm():
    table = section(DOC.read_text(), MEASURED)
    header = table.splitlines()[0]
    missing = [a.name for a in documented("pipeline") if f"`{a.name}`" not in header]
    assert not missing, f"rerun python benchmarks/explorer_guide.py (missing {missing})"
    rows = [ln for ln in table.splitlines()[2:] if ln.startswith("|")]
    # A cell per algorithm: a quality in %, or "–" where it refuses the space (Pipe-it on whole EPs).
    assert len(rows) >= 6 and all(ln.count("%") + ln.count("| –") == header.count("`") // 2 for ln in rows)
