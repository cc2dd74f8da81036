"""hetsim's pages with every shipped paper installed: docs/explorers.md's parameter tables are exactly
the registry's regeneration (moved from tests/test_explorers_doc.py, which checks the rows of
whatever is installed)."""

from __future__ import annotations

from pathlib import Path

from hetsim.exploration.guide import PARAMETERS, parameters_markdown, section

DOC = Path(__file__).resolve().parents[2] / "docs" / "explorers.md"


def test_parameter_tables_are_generated_from_the_registry():
    assert section(DOC.read_text(), PARAMETERS) == parameters_markdown(), (
        "docs/explorers.md is stale: run python -m hetsim.exploration.guide docs/explorers.md")
