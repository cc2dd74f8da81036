"""The fidelity harness of hetsim_papers/pipesearch/fidelity.py (docs/fidelity.md): its variants
name real fields of the TX2's gemm2 blocks, and the summary lists flips against 'after'. Nothing
here runs a reproduction."""

from __future__ import annotations

import sys

from helpers import fidelity_claim, write_fidelity_variant

from hetsim.platform import load_platform
from hetsim_papers.pipesearch import fidelity


def test_every_variant_overrides_fields_the_board_has():
    """A misspelt field would fail only hours into a full run: each variant's overrides load."""
    for name, v in fidelity.VARIANTS.items():
        assert v.get("model", "gemm2") in ("roofline", "gemm2"), name
        load_platform("jetson-tx2", overrides=list(v.get("extra", ())))


def test_the_pipesearch_harness_lists_flips_against_after(tmp_path, monkeypatch, capsys):
    write_fidelity_variant(tmp_path, "after", "pipesearch", [fidelity_claim("pipesearch", "table6", "d", True),
                                             fidelity_claim("pipesearch", "fig4", "e", False)])
    write_fidelity_variant(tmp_path, "before", "pipesearch", [fidelity_claim("pipesearch", "table6", "d", True),
                                              fidelity_claim("pipesearch", "fig4", "e", True)])
    monkeypatch.setattr(sys, "argv", ["fidelity", "--summary", str(tmp_path)])
    fidelity.main()
    out = capsys.readouterr().out.splitlines()
    assert "| before | 2/2 | fig4 e |" in out and "| after | 1/2 | none |" in out
