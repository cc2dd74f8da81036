"""The fidelity harness of hetsim_papers/pipeit/fidelity (docs/fidelity.md): its variants name real fields of the board's gemm2 blocks, and the summary
counts passes and flips from the scorecards the variants write. Nothing here runs a reproduction."""

from __future__ import annotations

from helpers import fidelity_claim, write_fidelity_variant

from hetsim.platform import load_platform
from hetsim_papers.pipeit.fidelity import scorecard


def test_the_summary_counts_passes_per_paper_and_every_flip(tmp_path):
    write_fidelity_variant(tmp_path, "after", "pipeit", [fidelity_claim("pipeit", "fig8", "a", True), fidelity_claim("pipeit", "fig8", "b", False),
                                         fidelity_claim("pipeit", "fig12", "c", True, "structural")])
    write_fidelity_variant(tmp_path, "after", "pipesearch", [fidelity_claim("pipesearch", "table6", "d", True)])
    write_fidelity_variant(tmp_path, "before", "pipeit", [fidelity_claim("pipeit", "fig8", "a", False), fidelity_claim("pipeit", "fig8", "b", False),
                                          fidelity_claim("pipeit", "fig12", "c", False, "structural")])
    write_fidelity_variant(tmp_path, "no-tiles", "pipeit", [fidelity_claim("pipeit", "fig8", "a", True), fidelity_claim("pipeit", "fig8", "b", True),
                                            fidelity_claim("pipeit", "fig12", "c", True, "structural")])
    lines = scorecard.summary(tmp_path).splitlines()
    # the variants in the harness's order, each paper's independent predictions, flips of every class
    assert "| before | 0/2 |  | +0 / -2 |" in lines
    assert "| after | 1/2 | 1/1 |  |" in lines
    assert "| no-tiles | 2/2 |  | +1 / -0 |" in lines
    assert "| pipeit:fig8 | 0/2 | 1/2 |" in lines
    assert "| pipeit:fig12 c | structural | 1 | 3 | 2 | pass |" in lines       # before -> after
    assert "| pipeit:fig8 b | prediction | 1 | 3 | 2 | pass |" in lines       # after -> no-tiles


def test_every_variant_overrides_fields_the_board_has():
    """A misspelt field would fail only hours into a full run: each variant's overrides load."""
    for name, v in scorecard.VARIANTS.items():
        assert v.get("model", "gemm2") in ("roofline", "gemm2"), name
        load_platform("hikey970", overrides=list(v.get("extra", ())))
